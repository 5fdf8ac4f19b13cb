//! Where in a series of versions the strength dropped, as a probability over the places.
//!
//! Versions `0..n` are ordered; version 0 is the good one. Hypothesis `k` (`1 <= k < n`) says
//! versions `k..n` are `elo` weaker than version 0 and versions before `k` are as strong: `k` is
//! the first worse. Hypothesis "none" says no version is weaker. A step plays game pairs of one
//! version (the player) against an earlier one (the opponent); each such matchup's pairs give
//! one log-likelihood ratio, "the player weaker by `elo`" against "as strong" (the generalized
//! SPRT's, as fishtest computes it, on game pairs). Under hypothesis `k` the player is weaker
//! than its opponent exactly when the drop lies between them, `opponent < k <= player`, so
//!
//! ```text
//! log P(k | games) = log prior(k) + sum over matchups with opponent < k <= player of LLR
//! log P(none | games) = log prior(none)
//! ```
//!
//! Every game played moves the whole posterior, not only the question of one midpoint.
//!
//! Two kinds of matchup are played. A version against the first asks "is the drop at or before
//! it?": the question of a bisection, splitting the places in two. A version against the one
//! before it asks "is the drop exactly here?": the question that ends a bisection. Against the
//! first only, telling the first worse `k` from its neighbours takes two tests at the full
//! error rate (`k - 1` as strong, `k` weaker: no game tells `k` from `k - 1` but games of
//! `k - 1`); a matchup of `k` against `k - 1` tells `k` from the places after it and, as far as
//! a second drop is unlikely, from those before it too. For that, where both versions of a
//! matchup are past the first drop, the player is taken as weaker again with a small prior
//! chance (that of the first drop at any one place), not never: a series with two drops then
//! cannot be read as one drop at the second (in `bench --bisect-sim`, taking "never" made two
//! drops of 5 Elo answered wrongly 0.077 of the time).
//!
//! The next matchup is the one whose answer tells most (probabilistic bisection, after Horstein
//! and Waeber, Frazier and Henderson): with small effects a game pair's expected information is
//! proportional to the variance, over the posterior, of the chance that the player is weaker —
//! `p (1 - p)` for a version against the first, `p` the probability that the drop is at or
//! before it. While the drop is unknown that is a version against the first at the posterior's
//! median; once one place holds much of the probability, mostly that place against the one
//! before it, until its games have said what they can.

use crate::stats::pentanomial::Pentanomial;
use crate::stats::sprt::{Sprt, SprtModel};

/// The prior probability of "no drop", the rest shared evenly by the places. Half: the user who
/// asks believes there is a drop, but a series without one must be answered as fast as the
/// hand method answers it, whose first test is of the last version; with half the mass on
/// "none", the posterior's median is the last version too, and its first games decide between
/// "none" and every place at once (`bench --bisect-sim`: at a sixteenth, "none" cost twice the
/// hand method's games).
pub const PRIOR_NONE: f64 = 0.5;

/// One matchup: `player` against `opponent`, an earlier version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Matchup {
    pub player: usize,
    pub opponent: usize,
}

impl Matchup {
    pub fn against_first(player: usize) -> Matchup {
        Matchup {
            player,
            opponent: 0,
        }
    }
}

/// The games of one matchup and what they say.
#[derive(Clone, Debug)]
struct Evidence {
    matchup: Matchup,
    /// From the player's side.
    pairs: Pentanomial,
    /// "Player weaker by `elo`" against "as strong".
    llr: f64,
}

/// The posterior over the first worse version.
#[derive(Clone, Debug)]
pub struct Posterior {
    versions: usize,
    evidence: Vec<Evidence>,
    test: Sprt,
    /// Each hypothesis's log prior plus the LLRs of the matchups it splits: `[none, 1, ...]`,
    /// kept as games come so that no matchup is summed again.
    log_weight: Vec<f64>,
    /// The prior chance that a version past the first drop dropped again.
    further_drop: f64,
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
            versions,
            evidence: Vec::new(),
            test: Sprt {
                elo0: -elo,
                elo1: 0.0,
                alpha: 0.05,
                beta: 0.05,
                model: SprtModel::Logistic,
            },
            log_weight: std::iter::once(PRIOR_NONE.ln())
                .chain(std::iter::repeat_n(
                    ((1.0 - PRIOR_NONE) / (versions - 1) as f64).ln(),
                    versions - 1,
                ))
                .collect(),
            // As likely at each later version as the first drop is at any one place (at most
            // even, with three versions).
            further_drop: (1.0 / (versions - 1) as f64).min(0.5),
        }
    }

    /// What a matchup whose LLR is `llr` adds to the hypotheses where both its versions are
    /// already past the drop: the player as strong, or (at `further_drop`) weaker again.
    fn both_past(&self, llr: f64) -> f64 {
        let q = self.further_drop;
        let (a, b) = ((1.0 - q).ln(), q.ln() + llr);
        a.max(b) + (-(a - b).abs()).exp().ln_1p()
    }

    /// Every matchup played, with its pairs from the player's side, in the order first played.
    pub fn matchups(&self) -> impl Iterator<Item = (Matchup, &Pentanomial)> {
        self.evidence.iter().map(|e| (e.matchup, &e.pairs))
    }

    /// Adds game pairs of a matchup, from its player's side.
    pub fn add(&mut self, matchup: Matchup, pairs: &Pentanomial) {
        assert!(matchup.opponent < matchup.player && matchup.player < self.versions);
        let at = match self.evidence.iter().position(|e| e.matchup == matchup) {
            Some(at) => at,
            None => {
                self.evidence.push(Evidence {
                    matchup,
                    pairs: Pentanomial::default(),
                    llr: 0.0,
                });
                self.evidence.len() - 1
            }
        };
        let e = &mut self.evidence[at];
        for (cell, n) in pairs.0.iter().enumerate() {
            e.pairs.0[cell] += n;
        }
        // The test's H1 is "as strong": weaker is its H0, so the sign turns.
        let llr = -self.test.llr(&e.pairs);
        let old = e.llr;
        e.llr = llr;
        let change = llr - old;
        for w in &mut self.log_weight[matchup.opponent + 1..=matchup.player] {
            *w += change;
        }
        let change = self.both_past(llr) - self.both_past(old);
        for w in &mut self.log_weight[1..=matchup.opponent] {
            *w += change;
        }
    }

    /// The probability of each hypothesis: `[none, 1, 2, ..., n-1]` (index 0 is "none").
    pub fn probabilities(&self) -> Vec<f64> {
        let log = &self.log_weight;
        let top = log.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = log.iter().map(|l| (l - top).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().map(|w| w / total).collect()
    }

    /// Whether the leader is sure enough for error rate `alpha`: its probability at least
    /// `1 - alpha / 2`. Half the prior is on "no drop", so a threshold of `1 - alpha` on the
    /// posterior allows up to `2 alpha` of wrong answers among the series that have a drop (it
    /// let a drop of exactly `elo` be answered wrongly 0.10 of the time); the halved threshold
    /// keeps every kind of simulated series under `alpha` (`bench --bisect-sim`).
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

    /// The matchup to play next: the one whose question ("is the player weaker than its
    /// opponent?") splits the probability most evenly; against the first on a tie.
    pub fn next_probe(&self) -> Matchup {
        let p = self.probabilities();
        // before[k]: the probability of the places 1..k.
        let mut before = vec![0.0; p.len()];
        for k in 1..p.len() {
            before[k] = before[k - 1] + p[k];
        }
        let mut best = (f64::NEG_INFINITY, Matchup::against_first(1));
        let mut consider = |matchup: Matchup| {
            let (a, b) = (matchup.player, matchup.opponent);
            // The chance that the player is weaker, under the places past both versions, given
            // this matchup's games so far.
            let past = self.further_weaker(matchup);
            let between = before[a] - before[b];
            let both_past = before[b];
            let mean = between + past * both_past;
            let square = between + past * past * both_past;
            let spread = square - mean * mean;
            if spread > best.0 + 1e-12 {
                best = (spread, matchup);
            }
        };
        for j in 1..p.len() {
            consider(Matchup::against_first(j));
        }
        for j in 2..p.len() {
            consider(Matchup {
                player: j,
                opponent: j - 1,
            });
        }
        best.1
    }

    /// Where both versions of a matchup are past the first drop: the chance, given its games so
    /// far, that the player dropped again.
    fn further_weaker(&self, matchup: Matchup) -> f64 {
        let q = self.further_drop;
        if matchup.opponent == 0 || q <= 0.0 {
            return 0.0;
        }
        let llr = self
            .evidence
            .iter()
            .find(|e| e.matchup == matchup)
            .map_or(0.0, |e| e.llr);
        let odds = (q / (1.0 - q)).ln() + llr;
        1.0 / (1.0 + (-odds).exp())
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
        assert_eq!(p.next_probe(), Matchup::against_first(8));
    }

    #[test]
    fn losses_of_a_version_move_the_drop_to_it_or_before_and_wins_after_it() {
        let mut p = Posterior::new(9, 50.0);
        // Version 4 loses clearly: the drop is at 4 or before.
        p.add(Matchup::against_first(4), &pairs([300, 200, 100, 0, 0]));
        let probs = p.probabilities();
        let before: f64 = probs[1..=4].iter().sum();
        assert!(before > 0.95, "{probs:?}");
        assert!(p.next_probe().player < 4);
        // Version 2 holds its own: the drop is at 3 or 4.
        p.add(Matchup::against_first(2), &pairs([0, 100, 400, 100, 0]));
        let leader = p.leader();
        assert!(matches!(leader.version, Some(3) | Some(4)), "{leader:?}");
        let played: Vec<_> = p
            .matchups()
            .map(|(m, pairs)| (m.player, pairs.pairs()))
            .collect();
        assert_eq!(played, [(4, 600), (2, 600)]);
    }

    /// Once the drop is known to be at 3 or 4, a matchup of 4 against 3 tells them apart: a
    /// loss there puts the drop at 4, as strong puts it at 3.
    #[test]
    fn a_version_against_its_neighbour_tells_its_place_from_every_other() {
        let start = || {
            let mut p = Posterior::new(9, 50.0);
            p.add(Matchup::against_first(4), &pairs([300, 200, 100, 0, 0]));
            p.add(Matchup::against_first(2), &pairs([0, 100, 400, 100, 0]));
            p
        };
        // Either question splits 3 from 4.
        let next = start().next_probe();
        assert!(
            next == Matchup::against_first(3)
                || next
                    == Matchup {
                        player: 4,
                        opponent: 3
                    },
            "{next:?}"
        );
        let neighbours = Matchup {
            player: 4,
            opponent: 3,
        };
        let mut lost = start();
        lost.add(neighbours, &pairs([300, 200, 100, 0, 0]));
        assert_eq!(lost.leader().version, Some(4), "{:?}", lost.probabilities());
        let mut held = start();
        held.add(neighbours, &pairs([0, 100, 400, 100, 0]));
        assert_eq!(held.leader().version, Some(3), "{:?}", held.probabilities());
    }

    #[test]
    fn a_last_version_as_strong_as_the_first_leaves_no_drop_leading() {
        let mut p = Posterior::new(5, 10.0);
        p.add(Matchup::against_first(4), &pairs([5, 30, 90, 30, 5]));
        assert_eq!(p.leader().version, None);
    }
}
