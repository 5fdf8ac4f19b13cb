//! An SPRT over the shards of one run: each shard, between its games, reads what the other
//! shards have added to their journals in the shared run folder and decides on all the pairs.
//! Games count in the schedule's order, up to the first one not finished yet: the test sees the
//! same sequence of pairs as one machine playing the schedule in order, so it decides at the
//! same pair, whatever the shards' speeds (the shards play on a little while the slowest catches
//! up). A shard that never finishes holds the decision back; it never makes a wrong one.
//! Journals are append-only, so reading from where the last read stopped sees only new games; a
//! line still being written (no newline yet) is left for the next read, and a line that is not
//! an entry is skipped. No server and no locks: the journals are the whole protocol.

use super::journal::{parse_line, JOURNAL_FILE};
use super::ledger::Ledger;
use super::spec::Shard;
use crate::referee::GameRecord;
use crate::stats::Sprt;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub(super) struct Pool {
    /// The run's folder, holding one folder per shard.
    root: PathBuf,
    own: String,
    count: u64,
    /// Bytes of each other shard's journal already read.
    read: HashMap<PathBuf, u64>,
    /// Games finished ahead of the first unfinished one, waiting to be counted in order.
    waiting: BTreeMap<u64, GameRecord>,
    /// The first game of the schedule not counted yet.
    next: u64,
    pub(super) ledger: Ledger,
}

impl Pool {
    /// A pool for `shard`, whose folder is `shard_dir`.
    pub(super) fn new(shard_dir: &Path, shard: Shard, names: Vec<String>, sprt: Sprt) -> Pool {
        Pool {
            root: shard_dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            own: shard.folder(),
            count: shard.count,
            read: HashMap::new(),
            waiting: BTreeMap::new(),
            next: 0,
            ledger: Ledger::new(names, Some(sprt)),
        }
    }

    /// Counts a game once, whichever shard's journal it was read from, in the schedule's order.
    pub(super) fn add(&mut self, index: u64, record: &GameRecord) {
        // Counted already, or waiting: a game read a second time.
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

    /// Reads the games the other shards have finished since the last call.
    pub(super) fn refresh(&mut self) {
        let suffix = format!("-of-{}", self.count);
        let Ok(folders) = std::fs::read_dir(&self.root) else {
            return;
        };
        let mut journals: Vec<PathBuf> = folders
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("shard-") && name.ends_with(&suffix))
            .filter(|name| *name != self.own)
            .map(|name| self.root.join(name).join(JOURNAL_FILE))
            .collect();
        // The same order every time, so the pooled LLR's course does not depend on the folder's.
        journals.sort();
        for path in journals {
            self.read_new(&path);
        }
    }

    fn read_new(&mut self, path: &Path) {
        let done = self.read.get(path).copied().unwrap_or(0);
        let Ok(mut file) = std::fs::File::open(path) else {
            return;
        };
        let mut fresh = Vec::new();
        if file.seek(SeekFrom::Start(done)).is_err() || file.read_to_end(&mut fresh).is_err() {
            return;
        }
        let Some(whole) = fresh.iter().rposition(|&b| b == b'\n').map(|i| i + 1) else {
            return;
        };
        for line in fresh[..whole].split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            if let Some((entry, _)) = parse_line(line.trim()) {
                self.add(entry.index, &entry.record);
            }
        }
        self.read.insert(path.to_path_buf(), done + whole as u64);
    }
}

/// A run's own count and, for a shard of a split SPRT, the pooled one that decides.
pub(super) struct Tally {
    pub(super) ledger: Ledger,
    pub(super) pool: Option<Pool>,
}

impl Tally {
    /// Counts a game this process played, then reads what the other shards added.
    pub(super) fn count_new(&mut self, index: u64, record: &GameRecord) {
        self.ledger.count_new(index, record);
        if let Some(pool) = &mut self.pool {
            pool.add(index, record);
            pool.refresh();
        }
    }

    fn deciding(&self) -> &Ledger {
        self.pool.as_ref().map_or(&self.ledger, |p| &p.ledger)
    }

    pub(super) fn decision(&self) -> Option<crate::stats::Decision> {
        self.deciding().decision
    }

    pub(super) fn last_llr(&self) -> Option<f64> {
        self.deciding().llr.last().copied()
    }

    /// The run's own count, with the SPRT it stopped on (all shards', for a shard).
    pub(super) fn into_ledger(self) -> Ledger {
        let mut ledger = self.ledger;
        if let Some(pool) = self.pool {
            ledger.llr = pool.ledger.llr;
            ledger.decision = pool.ledger.decision;
        }
        ledger
    }
}
