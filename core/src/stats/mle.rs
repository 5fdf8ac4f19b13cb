//! Maximum-likelihood fits of a discrete score distribution under a constraint, the engine of the
//! generalized SPRT and of the profile-likelihood intervals.
//!
//! Source: Michel Van den Bergh, "Maximum likelihood estimation for multinomial distributions
//! with a constraint on the expectation value"
//! (hardy.uhasselt.be/Fishtest/support_MLE_multinomial.pdf, Proposition 1.1) and "Normalized Elo,
//! practical" (…/normalized_elo_practical.pdf, section 4.1), as implemented in fishtest's
//! `server/fishtest/stats/stat_util.py` (`secular`, `MLE_expected`, `MLE_t_value`, `regularize`,
//! `results_to_pdf`).
//!
//! The results of a test are counts over known score values: three for single games (loss,
//! draw, win = 0, 1/2, 1) or five for game pairs (0, 1/4, 1/2, 3/4, 1 per game). Empty cells are
//! regularized to 1e-3 pseudo-counts, as fishtest does, so that every fitted distribution has
//! full support and no sample, however small or one-sided, has a degenerate variance.

/// Per-game score values of single games: loss, draw, win.
pub const GAME_SCORES: [f64; 3] = [0.0, 0.5, 1.0];
/// Per-game score values of game pairs: 0, 1/2, 1, 3/2, 2 points over two games.
pub const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Score values up to which a fit is computed without allocating (games 3, pairs 5).
const MAX_VALUES: usize = 8;

/// Pseudo-count given to an empty cell (fishtest's `regularize`).
pub const EMPTY_CELL: f64 = 1e-3;

/// An observed distribution: score values, their empirical probabilities after regularization,
/// and the regularized number of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub values: Vec<f64>,
    pub probs: Vec<f64>,
    pub n: f64,
}

impl Sample {
    /// `None` when nothing was observed.
    pub fn regularized(values: &[f64], counts: &[u64]) -> Option<Sample> {
        if counts.iter().all(|&c| c == 0) || values.len() != counts.len() {
            return None;
        }
        let cells: Vec<f64> = counts
            .iter()
            .map(|&c| if c == 0 { EMPTY_CELL } else { c as f64 })
            .collect();
        let n: f64 = cells.iter().sum();
        Some(Sample {
            values: values.to_vec(),
            probs: cells.iter().map(|c| c / n).collect(),
            n,
        })
    }

    pub fn mean_var(&self) -> (f64, f64) {
        mean_var(&self.values, &self.probs)
    }

    /// Log-likelihood of the observations under the distribution `probs` on the same values.
    pub fn log_likelihood(&self, probs: &[f64]) -> f64 {
        self.n
            * self
                .probs
                .iter()
                .zip(probs)
                .map(|(p, q)| p * q.ln())
                .sum::<f64>()
    }

    /// The most likely distribution whose expectation is `s` (Proposition 1.1:
    /// `p_i = phat_i / (1 + x (a_i - s))` with `x` the root of the secular equation).
    /// `None` when `s` is not strictly inside the range of values.
    pub fn fit_mean(&self, s: f64) -> Option<Vec<f64>> {
        let shifted: Vec<f64> = self.values.iter().map(|a| a - s).collect();
        let x = secular(&shifted, &self.probs)?;
        Some(tilt(&self.probs, &shifted, x))
    }

    /// The log-likelihood of `fit_mean(s)` (minus infinity without a fit), computed as it is
    /// but on the stack: the interval's bisection asks for it a hundred times and more.
    fn fit_mean_log_likelihood(&self, s: f64) -> f64 {
        let k = self.values.len();
        if k > MAX_VALUES {
            return self
                .fit_mean(s)
                .map_or(f64::NEG_INFINITY, |p| self.log_likelihood(&p));
        }
        let mut shifted = [0.0; MAX_VALUES];
        for (d, a) in shifted.iter_mut().zip(&self.values) {
            *d = a - s;
        }
        let Some(x) = secular(&shifted[..k], &self.probs) else {
            return f64::NEG_INFINITY;
        };
        let mut fit = [0.0; MAX_VALUES];
        for ((q, p), a) in fit.iter_mut().zip(&self.probs).zip(&shifted[..k]) {
            *q = p / (1.0 + x * a);
        }
        self.log_likelihood(&fit[..k])
    }

    /// The most likely distribution whose t-value `(mu - reference) / sigma` is `t`, by the
    /// fixed-point iteration of fishtest's `MLE_t_value`, started from the uniform distribution.
    /// `None` if it does not converge.
    pub fn fit_t_value(&self, reference: f64, t: f64) -> Option<Vec<f64>> {
        let uniform = 1.0 / self.values.len() as f64;
        self.fit_t_value_from(vec![uniform; self.values.len()], reference, t)
    }

    /// The same iteration from a given start: far from the sample's own t-value the uniform start
    /// may leave the secular equation without a root, a nearby fit does not.
    pub fn fit_t_value_from(&self, start: Vec<f64>, reference: f64, t: f64) -> Option<Vec<f64>> {
        let mut fit = start;
        // Two buffers for every iteration: an interval's search runs this thousands of times.
        let mut shifted = Vec::with_capacity(self.values.len());
        let mut next = Vec::with_capacity(self.values.len());
        for _ in 0..200 {
            let (mu, var) = mean_var(&self.values, &fit);
            let sigma = var.sqrt();
            if sigma <= 0.0 || !sigma.is_finite() {
                return None;
            }
            shifted.clear();
            shifted.extend(
                self.values
                    .iter()
                    .map(|a| a - reference - t * sigma * (1.0 + ((mu - a) / sigma).powi(2)) / 2.0),
            );
            let x = secular(&shifted, &self.probs)?;
            next.clear();
            next.extend(tilted(&self.probs, &shifted, x));
            let change = next
                .iter()
                .zip(&fit)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            std::mem::swap(&mut fit, &mut next);
            if change < 1e-13 {
                break;
            }
        }
        let (mu, var) = mean_var(&self.values, &fit);
        let converged = ((mu - reference) / var.sqrt() - t).abs() < 1e-7 * (1.0 + t.abs());
        converged.then_some(fit)
    }

    /// The 95%-style interval of the expectation by profile likelihood: every `s` whose best
    /// fit loses at most `z^2 / 2` of log-likelihood against the unconstrained fit (Wilks).
    /// An end that reaches the range of values (a one-sided sample) is returned as that value
    /// itself, so that a perfect score has a one-sided interval.
    pub fn mean_interval(&self, z: f64) -> (f64, f64) {
        let (mean, _) = self.mean_var();
        let best = self.log_likelihood(&self.probs);
        let deficit = |s: f64| best - self.fit_mean_log_likelihood(s);
        let lowest = self.values[0];
        let highest = self.values[self.values.len() - 1];
        let limit = z * z / 2.0;
        (
            interval_end(mean, lowest, limit, &deficit),
            interval_end(mean, highest, limit, &deficit),
        )
    }
}

impl Sample {
    /// The profile-likelihood interval of the t-value `(mu - reference) / sigma`, walking out from
    /// the sample's own t-value with each fit started from the previous one. An end farther than
    /// `reach` from the estimate is infinite.
    pub fn t_value_interval(&self, reference: f64, z: f64, reach: f64) -> (f64, f64) {
        let (mean, var) = self.mean_var();
        let t_hat = (mean - reference) / var.sqrt();
        let end =
            |direction: f64| self.t_value_end(reference, t_hat, direction, z * z / 2.0, reach);
        (end(-1.0), end(1.0))
    }

    fn t_value_end(
        &self,
        reference: f64,
        t_hat: f64,
        direction: f64,
        limit: f64,
        reach: f64,
    ) -> f64 {
        let best = self.log_likelihood(&self.probs);
        let (mut t, mut fit) = (t_hat, self.probs.clone());
        let mut step = 0.02 * (1.0 + t_hat.abs());
        while (t - t_hat).abs() < reach {
            if step < 1e-9 {
                return t;
            }
            let next = t + direction * step;
            match self.fit_t_value_from(fit.clone(), reference, next) {
                None => step /= 2.0,
                Some(f) if best - self.log_likelihood(&f) <= limit => {
                    (t, fit) = (next, f);
                    step *= 1.5;
                }
                Some(_) => {
                    // The end lies between t (inside) and next (outside).
                    let (mut inside, mut outside) = (t, next);
                    for _ in 0..60 {
                        let mid = (inside + outside) / 2.0;
                        match self.fit_t_value_from(fit.clone(), reference, mid) {
                            Some(f) if best - self.log_likelihood(&f) <= limit => {
                                (inside, fit) = (mid, f)
                            }
                            _ => outside = mid,
                        }
                    }
                    return inside;
                }
            }
        }
        direction * f64::INFINITY
    }
}

/// Where `deficit` (zero at `start`, growing towards `edge`) reaches `limit`; `edge` itself when
/// it never does within 1e-9 of the edge.
///
/// Found by regula falsi with the Illinois step (the end kept twice running has its value
/// halved), inside a bracket that only shrinks, and by halving where the values give no
/// secant: sixteen evaluations on average where halving to neighbouring numbers took fifty-two.
/// Every game's progress line and the report's Elo over the run ask for an interval.
fn interval_end(start: f64, edge: f64, limit: f64, deficit: &dyn Fn(f64) -> f64) -> f64 {
    let near_edge = edge + (start - edge) * 1e-9;
    let outside_value = deficit(near_edge) - limit;
    if outside_value <= 0.0 {
        return edge;
    }
    let (mut inside, mut fi) = (start, deficit(start) - limit);
    let (mut outside, mut fo) = (near_edge, outside_value);
    if fi >= 0.0 {
        // No room inside (a degenerate sample): the estimate is the end.
        return start;
    }
    // Which end moved last: -1 inside, 1 outside.
    let mut last = 0;
    for _ in 0..200 {
        let width = (outside - inside).abs();
        if width <= 1e-13 * (1.0 + inside.abs()) {
            break;
        }
        let secant = inside - fi * (outside - inside) / (fo - fi);
        let lo = inside.min(outside);
        let hi = inside.max(outside);
        let x = if fi.is_finite() && fo.is_finite() && secant > lo && secant < hi {
            secant
        } else {
            (inside + outside) / 2.0
        };
        let fx = deficit(x) - limit;
        if fx == 0.0 {
            return x;
        }
        if fx < 0.0 {
            (inside, fi) = (x, fx);
            if last == -1 {
                fo /= 2.0;
            }
            last = -1;
        } else {
            (outside, fo) = (x, fx);
            if last == 1 {
                fi /= 2.0;
            }
            last = 1;
        }
        // Converged when the step no longer moves the root by a meaningful amount.
        if fx.abs() <= 1e-13 * limit {
            return x;
        }
    }
    (inside + outside) / 2.0
}

pub fn mean_var(values: &[f64], probs: &[f64]) -> (f64, f64) {
    let mean: f64 = values.iter().zip(probs).map(|(a, p)| a * p).sum();
    let var = values
        .iter()
        .zip(probs)
        .map(|(a, p)| p * (a - mean).powi(2))
        .sum();
    (mean, var)
}

fn tilt(probs: &[f64], shifted: &[f64], x: f64) -> Vec<f64> {
    tilted(probs, shifted, x).collect()
}

fn tilted<'a>(probs: &'a [f64], shifted: &'a [f64], x: f64) -> impl Iterator<Item = f64> + 'a {
    probs
        .iter()
        .zip(shifted)
        .map(move |(p, a)| p / (1.0 + x * a))
}

/// The root of `sum_i p_i a_i / (1 + x a_i) = 0` for which every `1 + x a_i` is positive; the
/// function decreases strictly there, so safeguarded Newton steps inside a shrinking bracket
/// always converge. `None` unless some `a_i` is negative and some positive.
pub fn secular(values: &[f64], probs: &[f64]) -> Option<f64> {
    let lowest = values.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lowest < 0.0 && highest > 0.0) {
        return None;
    }
    let (mut lo, mut hi) = (-1.0 / highest, -1.0 / lowest);
    let mut x = 0.0;
    for _ in 0..200 {
        let (mut f, mut slope) = (0.0, 0.0);
        for (a, p) in values.iter().zip(probs) {
            let d = 1.0 + x * a;
            f += p * a / d;
            slope -= p * a * a / (d * d);
        }
        if f == 0.0 {
            return Some(x);
        }
        if f > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - f / slope;
        let next = if newton > lo && newton < hi {
            newton
        } else {
            (lo + hi) / 2.0
        };
        if (next - x).abs() <= 1e-15 * (1.0 + x.abs()) {
            return Some(next);
        }
        x = next;
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interval's ends as halving to neighbouring numbers finds them, the way they were
    /// found before regula falsi: the new search must land on the same ends.
    fn halved_end(start: f64, edge: f64, limit: f64, deficit: &dyn Fn(f64) -> f64) -> f64 {
        let near_edge = edge + (start - edge) * 1e-9;
        if deficit(near_edge) <= limit {
            return edge;
        }
        let (mut inside, mut outside) = (start, near_edge);
        for _ in 0..100 {
            let mid = (inside + outside) / 2.0;
            if mid == inside || mid == outside {
                break;
            }
            if deficit(mid) <= limit {
                inside = mid;
            } else {
                outside = mid;
            }
        }
        (inside + outside) / 2.0
    }

    #[test]
    fn regula_falsi_finds_the_ends_halving_finds_in_fewer_steps() {
        let mut samples: Vec<(&[f64], Vec<u64>)> = Vec::new();
        for w in [0u64, 1, 3, 10, 48, 300, 5000] {
            for d in [0u64, 1, 4, 60, 2000] {
                for l in [0u64, 2, 9, 48, 700] {
                    samples.push((&GAME_SCORES, vec![l, d, w]));
                }
            }
        }
        samples.push((&PAIR_SCORES, vec![3, 10, 40, 12, 2]));
        samples.push((&PAIR_SCORES, vec![0, 1, 30, 2, 0]));
        let mut checked = 0;
        for (values, counts) in &samples {
            let Some(sample) = Sample::regularized(values, counts) else {
                continue;
            };
            let (mean, _) = sample.mean_var();
            let best = sample.log_likelihood(&sample.probs);
            let calls = std::cell::Cell::new(0);
            let deficit = |s: f64| {
                calls.set(calls.get() + 1);
                best - sample.fit_mean_log_likelihood(s)
            };
            for z in [1.0, 1.959_964, 3.0] {
                let limit = z * z / 2.0;
                for edge in [values[0], values[values.len() - 1]] {
                    calls.set(0);
                    let fast = interval_end(mean, edge, limit, &deficit);
                    let fast_calls = calls.get();
                    calls.set(0);
                    let slow = halved_end(mean, edge, limit, &deficit);
                    assert!(
                        (fast - slow).abs() <= 1e-11,
                        "{counts:?} z={z} edge={edge}: {fast} vs {slow}"
                    );
                    assert!(fast_calls <= calls.get(), "{counts:?}: {fast_calls} calls");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn the_stack_fit_gives_the_very_likelihood_of_the_allocating_one() {
        for (values, counts) in [
            (&GAME_SCORES[..], &[5u64, 3, 9][..]),
            (&GAME_SCORES[..], &[0, 0, 4][..]),
            (&PAIR_SCORES[..], &[3, 10, 40, 12, 2][..]),
        ] {
            let sample = Sample::regularized(values, counts).unwrap();
            for s in [-0.1, 0.0, 0.01, 0.3, 0.5, 0.52, 0.9, 0.999, 1.0] {
                let slow = sample
                    .fit_mean(s)
                    .map_or(f64::NEG_INFINITY, |p| sample.log_likelihood(&p));
                assert_eq!(
                    sample.fit_mean_log_likelihood(s).to_bits(),
                    slow.to_bits(),
                    "{counts:?} at {s}"
                );
            }
        }
    }

    #[test]
    fn the_fit_has_the_asked_expectation_and_sums_to_one() {
        let sample = Sample::regularized(&PAIR_SCORES, &[3, 10, 40, 12, 2]).unwrap();
        for s in [0.3, 0.5, 0.52, 0.9] {
            let fit = sample.fit_mean(s).unwrap();
            let (mean, _) = mean_var(&PAIR_SCORES, &fit);
            assert!((mean - s).abs() < 1e-12, "{s}: {mean}");
            assert!((fit.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(fit.iter().all(|&p| p > 0.0));
        }
        assert!(sample.fit_mean(1.0).is_none());
    }

    #[test]
    fn the_t_value_fit_has_the_asked_t_value() {
        let sample = Sample::regularized(&PAIR_SCORES, &[3, 10, 40, 12, 2]).unwrap();
        for t in [-0.2, 0.0, 0.05, 0.3] {
            let fit = sample.fit_t_value(0.5, t).unwrap();
            let (mean, var) = mean_var(&PAIR_SCORES, &fit);
            assert!(((mean - 0.5) / var.sqrt() - t).abs() < 1e-7);
        }
    }

    #[test]
    fn the_unconstrained_fit_is_the_most_likely() {
        let sample = Sample::regularized(&GAME_SCORES, &[5, 3, 9]).unwrap();
        let (mean, _) = sample.mean_var();
        let fit = sample.fit_mean(mean).unwrap();
        for (a, b) in fit.iter().zip(&sample.probs) {
            assert!((a - b).abs() < 1e-12);
        }
        let best = sample.log_likelihood(&sample.probs);
        assert!(sample.log_likelihood(&sample.fit_mean(mean + 0.05).unwrap()) < best);
    }

    #[test]
    fn ten_draws_give_an_interval_of_honest_width() {
        // Exact for the two-point limit: 10 ln(1 - 2d) = -z^2/2 gives d = 0.0874 around 1/2.
        let sample = Sample::regularized(&GAME_SCORES, &[0, 10, 0]).unwrap();
        let (lo, hi) = sample.mean_interval(1.959_964);
        assert!((hi - 0.5 - 0.0874).abs() < 2e-3, "{hi}");
        assert!((0.5 - lo - 0.0874).abs() < 2e-3, "{lo}");
    }

    #[test]
    fn a_one_sided_sample_has_a_one_sided_interval() {
        let sample = Sample::regularized(&GAME_SCORES, &[0, 0, 7]).unwrap();
        let (lo, hi) = sample.mean_interval(1.959_964);
        assert_eq!(hi, 1.0);
        // 7 ln(s) = -z^2/2 at the lower end: s = exp(-1.9207/7) = 0.760.
        assert!((lo - 0.760).abs() < 3e-3, "{lo}");
    }
}
