//! The tune's state: theta after each result applied in pair order, the results waiting for an
//! earlier pair, and which pair to hand out next.

use super::journal::PairEntry;
use super::spsa::{Probe, Spsa};
use std::collections::{BTreeMap, BTreeSet};

/// What a worker does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    Play(u64, Probe),
    /// The next pair's theta waits for an earlier pair's result.
    Wait,
    Finished,
}

pub struct Ledger {
    pub spsa: Spsa,
    /// `thetas[j]`: theta after the results of pairs `0..j`.
    pub thetas: Vec<Vec<f64>>,
    /// Results of pairs past the first missing one.
    waiting: BTreeMap<u64, i32>,
    /// Pairs finished (this process's or read back), handed out never again.
    finished: BTreeSet<u64>,
    /// Pairs being played by this process.
    playing: BTreeSet<u64>,
    /// The lowest pair that may still be handed out.
    next: u64,
    /// The plus side's wins, losses and draws.
    pub score: [u64; 3],
}

impl Ledger {
    pub fn new(spsa: Spsa) -> Ledger {
        Ledger {
            thetas: vec![spsa.start()],
            spsa,
            waiting: BTreeMap::new(),
            finished: BTreeSet::new(),
            playing: BTreeSet::new(),
            next: 0,
            score: [0; 3],
        }
    }

    pub fn applied(&self) -> u64 {
        self.thetas.len() as u64 - 1
    }

    pub fn theta(&self) -> &[f64] {
        self.thetas.last().expect("theta at the start")
    }

    pub fn finished(&self) -> u64 {
        self.finished.len() as u64
    }

    pub fn is_done(&self) -> bool {
        self.applied() >= self.spsa.pairs
    }

    /// The values pair `k` plays, once its theta is known.
    pub fn probe(&self, k: u64) -> Option<Probe> {
        let basis = self.spsa.basis(k) as usize;
        self.thetas.get(basis).map(|t| self.spsa.probe(k, t))
    }

    /// The next pair this process may play, if `may_take` lets it have it (a split tune's claim).
    pub fn hand_out(&mut self, mut may_take: impl FnMut(u64) -> bool) -> Next {
        let mut k = self.next;
        loop {
            if k >= self.spsa.pairs {
                return Next::Finished;
            }
            if self.finished.contains(&k) || self.playing.contains(&k) {
                if k == self.next {
                    self.next += 1;
                }
                k += 1;
                continue;
            }
            let Some(probe) = self.probe(k) else {
                return Next::Wait;
            };
            if may_take(k) {
                self.playing.insert(k);
                return Next::Play(k, probe);
            }
            k += 1;
        }
    }

    /// A pair handed out but not played (its game was abandoned): handed out again.
    pub fn give_back(&mut self, k: u64) {
        self.playing.remove(&k);
        self.next = self.next.min(k);
    }

    /// Counts a finished pair once, whoever played it; returns false if it was counted before.
    pub fn add(&mut self, entry: &PairEntry) -> bool {
        let k = entry.pair;
        self.playing.remove(&k);
        if k >= self.spsa.pairs || !self.finished.insert(k) {
            return false;
        }
        let wld = entry.score();
        for (s, n) in self.score.iter_mut().zip(wld) {
            *s += n;
        }
        self.waiting.insert(k, entry.result);
        while let Some(result) = self.waiting.remove(&self.applied()) {
            let mut theta = self.theta().to_vec();
            self.spsa.step(self.applied(), &mut theta, result);
            self.thetas.push(theta);
        }
        true
    }

    /// Whether an entry read back played the values this tune gives its pair (checked once its
    /// theta is known): a journal of another tune, or of other settings, is refused.
    pub fn played_as_scheduled(&self, entry: &PairEntry) -> Option<bool> {
        let probe = self.probe(entry.pair)?;
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
        };
        Some(same(&probe.plus, &entry.plus) && same(&probe.minus, &entry.minus))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::spsa::{Gains, Param};

    fn ledger(window: u64) -> Ledger {
        Ledger::new(Spsa {
            params: vec![Param::parse("X=50,0,100,4,0.05").unwrap()],
            pairs: 6,
            gains: Gains::default(),
            seed: 3,
            window,
        })
    }

    fn entry(l: &Ledger, k: u64, result: i32) -> PairEntry {
        let probe = l.probe(k).unwrap();
        PairEntry {
            pair: k,
            plus: probe.plus,
            minus: probe.minus,
            games: Vec::new(),
            result,
        }
    }

    #[test]
    fn results_count_in_pair_order_whatever_order_they_arrive_in() {
        let results = [2, -1, 0, 1, -2, 1];
        let mut in_order = ledger(3);
        for (k, r) in results.iter().enumerate() {
            let e = entry(&in_order, k as u64, *r);
            assert!(in_order.add(&e));
        }
        let mut shuffled = ledger(3);
        let mut handed = Vec::new();
        while let Next::Play(k, _) = shuffled.hand_out(|_| true) {
            handed.push(k);
        }
        assert_eq!(
            handed,
            [0, 1, 2],
            "three pairs in play before the first result"
        );
        for k in [2u64, 0, 1, 5, 4, 3] {
            loop {
                if let Some(probe) = shuffled.probe(k) {
                    let e = PairEntry {
                        pair: k,
                        plus: probe.plus,
                        minus: probe.minus,
                        games: Vec::new(),
                        result: results[k as usize],
                    };
                    assert_eq!(shuffled.played_as_scheduled(&e), Some(true));
                    shuffled.add(&e);
                    break;
                }
                // Pair k's theta waits for pair k-3: play it first.
                let earlier = k - 3;
                let e = entry(&shuffled, earlier, results[earlier as usize]);
                shuffled.add(&e);
            }
        }
        assert_eq!(shuffled.thetas, in_order.thetas);
        assert!(shuffled.is_done());
        assert!(!shuffled.add(&entry(&in_order, 1, 2)), "a pair counts once");
    }

    #[test]
    fn a_pair_waits_for_the_result_its_theta_needs() {
        let mut l = ledger(1);
        assert!(matches!(l.hand_out(|_| true), Next::Play(0, _)));
        assert_eq!(l.hand_out(|_| true), Next::Wait);
        l.give_back(0);
        assert!(matches!(l.hand_out(|_| true), Next::Play(0, _)));
        let e = entry(&l, 0, 1);
        l.add(&e);
        assert!(matches!(l.hand_out(|k| k != 1), Next::Wait));
    }
}
