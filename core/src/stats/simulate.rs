//! Simulated SPRTs: the measured error rates and average sample number of a test's bounds,
//! so that the promise "accepts H1 with probability at most alpha when H0 holds" is checked,
//! not assumed (`arbiter bench --sprt-sim`, and a test).
//!
//! Pair results are drawn from pentanomial distributions whose Elo is exactly the hypothesis's:
//! a base shape (no draws, many draws, a strong opening bias that makes the two games of a pair
//! anti-correlated) is exponentially tilted, `p_i ∝ q_i e^(θ a_i)`, with θ chosen so that the
//! expected score (logistic model) or the t-value (normalized model) is the asked one.

use super::mle::{mean_var, PAIR_SCORES};
use super::pentanomial::{Pentanomial, NELO_PER_T};
use super::sprt::{logistic_score, Decision, Sprt, SprtModel};
use crate::zobrist::SplitMix;

/// A named base shape of pair results, symmetric around an even score.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub name: &'static str,
    pub probs: [f64; 5],
}

/// Pair results of two independent games with win/draw/loss `w, d, l` as White and the mirror
/// as Black, shifted by an opening bias that favours White.
const fn pair_shape(name: &'static str, white: [f64; 3]) -> Shape {
    // white = [win, draw, loss] of the player's game as White; as Black it is mirrored.
    let [w, d, l] = white;
    let (bw, bd, bl) = (l, d, w);
    Shape {
        name,
        probs: [
            l * bl,
            l * bd + d * bl,
            w * bl + d * bd + l * bw,
            w * bd + d * bw,
            w * bw,
        ],
    }
}

pub const SHAPES: [Shape; 4] = [
    pair_shape("no draws", [0.5, 0.0, 0.5]),
    pair_shape("60% draws", [0.2, 0.6, 0.2]),
    pair_shape("opening bias, no draws", [0.8, 0.0, 0.2]),
    pair_shape("opening bias, 35% draws", [0.45, 0.35, 0.2]),
];

fn tilted(base: &[f64; 5], theta: f64) -> [f64; 5] {
    let mut p = [0.0; 5];
    for i in 0..5 {
        p[i] = base[i] * (theta * PAIR_SCORES[i]).exp();
    }
    let total: f64 = p.iter().sum();
    p.map(|x| x / total)
}

/// The statistic a model constrains: expected score, or pair t-value around 1/2.
fn statistic(model: SprtModel, p: &[f64; 5]) -> f64 {
    let (mean, var) = mean_var(&PAIR_SCORES, p);
    match model {
        // The Bayesian model reads single games, which are not simulated (`bench --sprt-sim`
        // refuses it); its bounds are expected scores, as the logistic model's.
        SprtModel::Logistic | SprtModel::Bayesian => mean,
        SprtModel::Normalized => (mean - 0.5) / var.sqrt(),
    }
}

/// The pair distribution of `shape` tilted to Elo `elo` in the model's sense.
pub fn at_elo(shape: &Shape, model: SprtModel, elo: f64) -> [f64; 5] {
    let target = match model {
        SprtModel::Logistic | SprtModel::Bayesian => logistic_score(elo),
        SprtModel::Normalized => elo / NELO_PER_T * std::f64::consts::SQRT_2,
    };
    let (mut lo, mut hi) = (-50.0, 50.0);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if statistic(model, &tilted(&shape.probs, mid)) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    tilted(&shape.probs, (lo + hi) / 2.0)
}

/// What a batch of simulated SPRTs decided.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcomes {
    pub runs: u64,
    pub h1: u64,
    pub h0: u64,
    pub undecided: u64,
    /// Pairs played per run, averaged over all runs (undecided ones count their cap).
    pub mean_pairs: f64,
}

impl Outcomes {
    pub fn rate_h1(&self) -> f64 {
        self.h1 as f64 / self.runs.max(1) as f64
    }
    pub fn rate_h0(&self) -> f64 {
        self.h0 as f64 / self.runs.max(1) as f64
    }
}

/// Runs `runs` SPRTs on pairs drawn from `probs`, each stopped at a bound or after `max_pairs`.
/// The LLR is looked at after every pair, as arbiter does during a run.
pub fn simulate(sprt: &Sprt, probs: &[f64; 5], runs: u64, max_pairs: u64, seed: u64) -> Outcomes {
    let mut rng = SplitMix(seed);
    let mut out = Outcomes {
        runs,
        ..Outcomes::default()
    };
    let mut total_pairs = 0u64;
    for _ in 0..runs {
        let mut counts = Pentanomial::default();
        let mut decision = Decision::Continue;
        while decision == Decision::Continue && counts.pairs() < max_pairs {
            counts.0[draw_pair(probs, &mut rng)] += 1;
            decision = sprt.decide(sprt.llr(&counts));
        }
        total_pairs += counts.pairs();
        match decision {
            Decision::H1 => out.h1 += 1,
            Decision::H0 => out.h0 += 1,
            Decision::Continue => out.undecided += 1,
        }
    }
    out.mean_pairs = total_pairs as f64 / runs.max(1) as f64;
    out
}

/// One game pair drawn from `probs`: the cell of its result (0: both lost .. 4: both won).
pub fn draw_pair(probs: &[f64; 5], rng: &mut SplitMix) -> usize {
    let mut u = rng.next_unit();
    probs
        .iter()
        .position(|&p| {
            u -= p;
            u < 0.0
        })
        .unwrap_or(4)
}

/// Binomial standard error of a rate `p` measured over `runs`.
pub fn standard_error(p: f64, runs: u64) -> f64 {
    (p * (1.0 - p) / runs.max(1) as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_distributions_centred_on_an_even_score() {
        for shape in SHAPES {
            let (mean, _) = mean_var(&PAIR_SCORES, &shape.probs);
            assert!((shape.probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!((mean - 0.5).abs() < 1e-12, "{}", shape.name);
        }
    }

    #[test]
    fn tilting_hits_the_asked_elo() {
        for shape in SHAPES {
            let p = at_elo(&shape, SprtModel::Logistic, 10.0);
            let (mean, _) = mean_var(&PAIR_SCORES, &p);
            assert!((mean - logistic_score(10.0)).abs() < 1e-9);
            let p = at_elo(&shape, SprtModel::Normalized, 10.0);
            assert!(
                (statistic(SprtModel::Normalized, &p) - 10.0 / NELO_PER_T * 2f64.sqrt()).abs()
                    < 1e-9
            );
        }
    }
}
