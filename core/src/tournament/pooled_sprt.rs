//! Counting a split run's games in the schedule's order, and a run's own count beside the one
//! that decides its SPRT.

use super::ledger::Ledger;
use super::split::Split;
use crate::referee::GameRecord;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Games counted in the schedule's order, up to the first one not finished: the sequence of
/// pairs one machine playing the schedule in order would count, whatever order the games of
/// several tasks finish in.
pub(super) struct InOrder {
    /// Games finished ahead of the first unfinished one, waiting to be counted in order.
    waiting: BTreeMap<u64, GameRecord>,
    /// The first game of the schedule not counted yet.
    pub(super) next: u64,
    pub(super) ledger: Ledger,
}

impl InOrder {
    pub(super) fn new(ledger: Ledger) -> InOrder {
        InOrder {
            waiting: BTreeMap::new(),
            next: 0,
            ledger,
        }
    }

    /// Counts a game once, however many times it is read, in the schedule's order.
    pub(super) fn add(&mut self, index: u64, record: &GameRecord) {
        if index < self.next || self.waiting.contains_key(&index) {
            return;
        }
        if index > self.next {
            self.waiting.insert(index, record.clone());
            return;
        }
        self.ledger.count(index, record);
        self.next += 1;
        while let Some(record) = self.waiting.remove(&self.next) {
            self.ledger.count(self.next, &record);
            self.next += 1;
        }
    }
}

/// A run's own count and, for a task of a split run, the task's place in it, whose pooled SPRT
/// decides.
pub(super) struct Tally {
    pub(super) ledger: Ledger,
    pub(super) split: Option<Arc<Mutex<Split>>>,
}

impl Tally {
    fn split(&self) -> Option<std::sync::MutexGuard<'_, Split>> {
        self.split
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Counts a game this process played, and brings the pooled count up to date.
    pub(super) fn count_new(&mut self, index: u64, record: &GameRecord) {
        self.ledger.count_new(index, record);
        if let Some(mut split) = self.split() {
            split.record_own(index, record);
        }
    }

    /// Whether this process still holds the game's pair (always, unless split).
    pub(super) fn still_holds(&self, index: u64) -> bool {
        self.split().is_none_or(|mut s| s.still_holds(index))
    }

    pub(super) fn split_error(&self) -> Option<String> {
        self.split().and_then(|s| s.error.clone())
    }

    pub(super) fn decision(&self) -> Option<crate::stats::Decision> {
        match self.split() {
            Some(split) if split.pool.is_some() => split.pool.as_ref()?.ledger.decision,
            _ => self.ledger.decision,
        }
    }

    pub(super) fn last_llr(&self) -> Option<f64> {
        match self.split() {
            Some(split) if split.pool.is_some() => split.pool.as_ref()?.ledger.llr.last().copied(),
            _ => self.ledger.llr.last().copied(),
        }
    }

    /// The run's own count, with the SPRT it stopped on (all tasks', for a split run).
    pub(super) fn into_ledger(self) -> Ledger {
        let mut ledger = self.ledger;
        if let Some(split) = self.split {
            let mut split = split.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(pool) = split.pool.take() {
                ledger.llr = pool.ledger.llr;
                ledger.decision = pool.ledger.decision;
            }
        }
        ledger
    }
}
