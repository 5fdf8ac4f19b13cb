//! What a run has counted so far: totals, the SPRT's course and decision, and which games are
//! done.

use super::schedule::PairSchedule;
use super::totals::Totals;
use crate::referee::GameRecord;
use crate::stats::{Decision, Sprt};

const LATENCY_SAMPLES: usize = 200_000;

/// A fixed-size set of finished game indices.
pub(crate) struct Bitset(Vec<u64>);

impl Bitset {
    pub(crate) fn new(len: u64) -> Bitset {
        Bitset(vec![0; (len as usize).div_ceil(64)])
    }
    pub(crate) fn insert(&mut self, i: u64) -> bool {
        let (w, b) = ((i / 64) as usize, i % 64);
        match self.0.get_mut(w) {
            Some(word) => {
                let fresh = *word & (1 << b) == 0;
                *word |= 1 << b;
                fresh
            }
            None => false,
        }
    }
    pub(crate) fn contains(&self, i: u64) -> bool {
        self.0
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

/// What the run has counted: the totals, the LLR after each completed pair and the SPRT's
/// decision, and the figures the summary reports.
pub(crate) struct Ledger {
    pub(crate) totals: Totals,
    pub(crate) sprt: Option<Sprt>,
    pub(crate) llr: Vec<f64>,
    pub(crate) decision: Option<Decision>,
    pub(crate) played: u64,
    pub(crate) latency_us: Vec<i64>,
    pub(crate) time_forfeits: u64,
}

impl Ledger {
    pub(crate) fn new(names: Vec<String>, sprt: Option<Sprt>) -> Ledger {
        Ledger {
            totals: Totals::new(names),
            sprt,
            llr: Vec::new(),
            decision: None,
            played: 0,
            latency_us: Vec::new(),
            time_forfeits: 0,
        }
    }

    /// Counts a game and updates the SPRT; a decision, once reached, stands.
    pub(crate) fn count(&mut self, index: u64, record: &GameRecord) {
        self.played += 1;
        let before = self.totals.head_to_head().pairs();
        self.totals.add(record, Some(PairSchedule::pair_of(index)));
        let Some(sprt) = &self.sprt else { return };
        let pairs = self.totals.head_to_head();
        if pairs.pairs() == before {
            return;
        }
        let value = sprt.llr_of_results(&pairs, self.totals.head_to_head_games());
        self.llr.push(value);
        let d = sprt.decide(value);
        if d != Decision::Continue && self.decision.is_none() {
            self.decision = Some(d);
        }
    }

    /// Counts a game played in this run, with its time forfeits and latencies.
    pub(crate) fn count_new(&mut self, index: u64, record: &GameRecord) {
        if record.termination == crate::game::Termination::TimeForfeit {
            self.time_forfeits += 1;
        }
        // The referee's own turnaround, from its own clock: an engine's reported search time
        // is rounded (stockfish), early (the MIT player) or in centiseconds (CECP), so the
        // difference with it says nothing about the referee.
        let room = LATENCY_SAMPLES.saturating_sub(self.latency_us.len());
        self.latency_us.extend(
            record
                .turnaround_us
                .iter()
                .take(room)
                .map(|&us| i64::from(us)),
        );
        self.count(index, record);
    }
}
