#!/usr/bin/env python3
"""Independent check of arbiter's GSPRT log-likelihood ratios (src/stats/sprt.rs).

A stdlib-only transcription of the formulas published in fishtest's
server/fishtest/stats/stat_util.py (secular, MLE_expected, MLE_t_value, regularize,
results_to_pdf, LLR_logistic, LLR_normalized; theory by Michel Van den Bergh,
hardy.uhasselt.be/Fishtest/support_MLE_multinomial.pdf and normalized_elo_practical.pdf).
fishtest solves the secular equation with scipy's brentq; here it is plain bisection to
machine precision, and MLE_t_value iterates to convergence instead of stopping after 10 steps.

Run: python3 tests/reference/fishtest_llr.py   (its output is pasted into src/stats/sprt.rs)
"""
import math

NELO_DIVIDED_BY_NT = 800 / math.log(10)


def secular(pdf):
    values = [a for a, _ in pdf]
    lo, hi = -1 / max(values), -1 / min(values)
    f = lambda x: sum(p * a / (1 + x * a) for a, p in pdf)
    for _ in range(2000):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def stats(pdf):
    s = sum(p * a for a, p in pdf)
    return s, sum(p * (a - s) ** 2 for a, p in pdf)


def mle_expected(pdfhat, s):
    x = secular([(a - s, p) for a, p in pdfhat])
    return [(a, p / (1 + x * (a - s))) for a, p in pdfhat]


def mle_t_value(pdfhat, ref, t):
    fit = [(a, 1 / len(pdfhat)) for a, _ in pdfhat]
    for _ in range(1000):
        mu, var = stats(fit)
        sigma = var ** 0.5
        shifted = [(a - ref - t * sigma * (1 + ((mu - a) / sigma) ** 2) / 2, p) for a, p in pdfhat]
        x = secular(shifted)
        new = [(pdfhat[i][0], pdfhat[i][1] / (1 + x * shifted[i][0])) for i in range(len(pdfhat))]
        done = max(abs(new[i][1] - fit[i][1]) for i in range(len(fit))) < 1e-15
        fit = new
        if done:
            break
    return fit


def results_to_pdf(results):
    results = [1e-3 if c == 0 else c for c in results]
    n = sum(results)
    return n, [(i / (len(results) - 1), c / n) for i, c in enumerate(results)]


def llr(pdf, fit0, fit1):
    return sum(p * (math.log(fit1[i][1]) - math.log(fit0[i][1])) for i, (_, p) in enumerate(pdf))


def llr_logistic(elo0, elo1, results):
    s0, s1 = [1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1)]
    n, pdf = results_to_pdf(results)
    return n * llr(pdf, mle_expected(pdf, s0), mle_expected(pdf, s1))


def llr_normalized(nelo0, nelo1, results):
    scale = 2 ** 0.5 if len(results) == 5 else 1
    t0, t1 = [nelo / NELO_DIVIDED_BY_NT * scale for nelo in (nelo0, nelo1)]
    n, pdf = results_to_pdf(results)
    return n * llr(pdf, mle_t_value(pdf, 0.5, t0), mle_t_value(pdf, 0.5, t1))


CASES = [
    ("logistic", 0, 5, [10, 50, 200, 80, 20]),
    ("logistic", 0, 100, [2, 0, 0, 0, 0]),
    ("logistic", -3, 1, [412, 3120, 7801, 3240, 427]),
    ("logistic", 0, 10, [30, 40, 50]),
    ("normalized", 0, 5, [10, 50, 200, 80, 20]),
    ("normalized", 0, 100, [2, 0, 0, 0, 0]),
    ("normalized", 0, 2, [412, 3120, 7801, 3240, 427]),
    ("normalized", 0, 10, [30, 40, 50]),
]

if __name__ == "__main__":
    for model, e0, e1, results in CASES:
        f = llr_logistic if model == "logistic" else llr_normalized
        print(f'("{model}", {e0}.0, {e1}.0, &{results}, {f(e0, e1, results):.10f}),')
