//! Where in a series of versions the strength dropped, as a probability over the places.
//!
//! Versions `0..n` are ordered; version 0 is the good one. Hypothesis `k` (`1 <= k < n`) says
//! versions `k..n` are at least `elo` weaker than version 0 and versions before `k` are not
//! weaker: `k` is the first worse. Hypothesis "none" says no version is weaker. Every version
//! plays game pairs against version 0, and each version's pairs give one log-likelihood ratio,
//! "weaker by `elo`" against "as strong" (the generalized SPRT's, as fishtest computes it, on
//! game pairs). Under hypothesis `k` the versions from `k` on are weaker, so
//!
//! ```text
//! log P(k | games) = log prior(k) + sum over j >= k of LLR_j   (+ a constant)
//! log P(none | games) = log prior(none)
//! ```
//!
//! Every game played moves the whole posterior, not only the question of one midpoint, which is
//! why this needs far fewer games than an SPRT per midpoint (`bench --bisect-sim` measures it).
//! The next version to play is the posterior's median (probabilistic bisection, after Horstein
//! and Waeber, Frazier and Henderson): the version whose answer splits the remaining probability
//! most evenly. Playing every version against version 0 rather than against its neighbour keeps
//! each version's evidence independent of the others' and the drop measured from where the user
//! knows the strength.

use crate::stats::pentanomial::Pentanomial;
use crate::stats::sprt::{Sprt, SprtModel};

/// The prior probability of "no drop", the rest shared evenly by the places. Half: the user who
/// asks believes there is a drop, but a series without one must be answered as fast as the
/// hand method answers it, whose first test is of the last version; with half the mass on
/// "none", the posterior's median is the last version too, and its first games decide between
/// "none" and every place at once (`bench --bisect-sim`: at a sixteenth, "none" cost twice the
/// hand method's games).
pub const PRIOR_NONE: f64 = 0.5;

/// The posterior over the first worse version.
#[derive(Clone, Debug)]
pub struct Posterior {
    /// Each version's pairs against version 0 (index 0 unused).
    pub pairs: Vec<Pentanomial>,
    /// Each version's LLR, weaker by `elo` against as strong (index 0 unused, 0).
    llr: Vec<f64>,
    test: Sprt,
    /// The prior probability of "no drop"; the rest is shared evenly by the versions.
    prior_none: f64,
}

/// What the posterior says now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leader {
    /// The first worse version, or `None` for no drop.
    pub version: Option<usize>,
    pub probability: f64,
}

impl Posterior {
    /// `versions` in the series (at least two), a drop of at least `elo` (logistic Elo) sought.
    pub fn new(versions: usize, elo: f64) -> Posterior {
        assert!(versions >= 2 && elo > 0.0);
        Posterior {
            pairs: vec![Pentanomial::default(); versions],
            llr: vec![0.0; versions],
            test: Sprt {
                elo0: -elo,
                elo1: 0.0,
                alpha: 0.05,
                beta: 0.05,
                model: SprtModel::Logistic,
            },
            prior_none: PRIOR_NONE,
        }
    }

    pub fn versions(&self) -> usize {
        self.pairs.len()
    }

    /// Adds game pairs of `version` against version 0, as the version's results.
    pub fn add(&mut self, version: usize, pairs: &Pentanomial) {
        assert!(version >= 1);
        for (cell, n) in pairs.0.iter().enumerate() {
            self.pairs[version].0[cell] += n;
        }
        // The test's H1 is "as strong": weaker is its H0, so the sign turns.
        self.llr[version] = -self.test.llr(&self.pairs[version]);
    }

    /// The probability of each hypothesis: `[none, 1, 2, ..., n-1]` (index 0 is "none"), with
    /// every hypothesis equally likely before any game.
    pub fn probabilities(&self) -> Vec<f64> {
        let n = self.versions();
        let mut log = vec![0.0; n];
        log[0] = self.prior_none.ln();
        let each = ((1.0 - self.prior_none) / (n - 1) as f64).ln();
        // Suffix sums: the LLRs of versions k..n.
        let mut tail = 0.0;
        for k in (1..n).rev() {
            tail += self.llr[k];
            log[k] = each + tail;
        }
        let top = log.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = log.iter().map(|l| (l - top).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().map(|w| w / total).collect()
    }

    /// Whether the leader is sure enough for error rate `alpha`: its probability at least
    /// `1 - alpha / 2`. The posterior is exact only under its model (each version as strong as
    /// the first or exactly `elo` weaker); the halved threshold keeps the realised error rate
    /// under `alpha` in every simulated series (drops of `elo` and `2 elo`, none, two), where
    /// `1 - alpha` let it reach 0.10 for a drop of exactly `elo`.
    pub fn decided(&self, alpha: f64) -> Option<Leader> {
        let leader = self.leader();
        (leader.probability >= 1.0 - alpha / 2.0).then_some(leader)
    }

    /// The most probable answer.
    pub fn leader(&self) -> Leader {
        let p = self.probabilities();
        let (at, &probability) = p
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .expect("at least one hypothesis");
        Leader {
            version: (at > 0).then_some(at),
            probability,
        }
    }

    /// The version to play next: the one whose "weaker or not" splits the probability most
    /// evenly. Version `j` weaker means the first worse is at or before `j`.
    pub fn next_probe(&self) -> usize {
        let p = self.probabilities();
        let mut at_or_before = 0.0;
        let mut best = (f64::INFINITY, 1);
        for (j, pj) in p.iter().enumerate().skip(1) {
            at_or_before += pj;
            let off = (at_or_before - 0.5).abs();
            if off < best.0 {
                best = (off, j);
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(cells: [u64; 5]) -> Pentanomial {
        Pentanomial(cells)
    }

    #[test]
    fn before_any_game_no_drop_holds_half_and_the_last_version_is_played_first() {
        let p = Posterior::new(9, 10.0);
        let probs = p.probabilities();
        assert!((probs[0] - 0.5).abs() < 1e-12, "{probs:?}");
        assert!(
            probs[1..].iter().all(|&x| (x - 0.5 / 8.0).abs() < 1e-12),
            "{probs:?}"
        );
        // Only the last version splits "a drop somewhere" from "none".
        assert_eq!(p.next_probe(), 8);
    }

    #[test]
    fn losses_of_a_version_move_the_drop_to_it_or_before_and_wins_after_it() {
        let mut p = Posterior::new(9, 50.0);
        // Version 4 loses clearly: the drop is at 4 or before.
        p.add(4, &pairs([300, 200, 100, 0, 0]));
        let probs = p.probabilities();
        let before: f64 = probs[1..=4].iter().sum();
        assert!(before > 0.95, "{probs:?}");
        assert!(p.next_probe() < 4);
        // Version 2 holds its own: the drop is at 3 or 4.
        p.add(2, &pairs([0, 100, 400, 100, 0]));
        let leader = p.leader();
        assert!(matches!(leader.version, Some(3) | Some(4)), "{leader:?}");
    }

    #[test]
    fn a_last_version_as_strong_as_the_first_leaves_no_drop_leading() {
        let mut p = Posterior::new(5, 10.0);
        p.add(4, &pairs([5, 30, 90, 30, 5]));
        assert_eq!(p.leader().version, None);
    }
}
