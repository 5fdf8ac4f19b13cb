//! The tune's journal: one JSON line per finished pair (the values both sides played, both games,
//! the result), synced before the pair counts, so that `--resume` plays exactly the pairs that
//! are missing and a split tune's tasks read each other's results.

use crate::proof::Key;
use crate::tournament::journal::{scan_lines, sealed_line, whole_lines};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The journal's file name in a tune's folder (or a task's).
pub const PAIRS_FILE: &str = "pairs.jsonl";

/// One game of a pair, as the plus side saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairGame {
    pub plus_white: bool,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    pub termination: String,
    pub plies: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairEntry {
    /// The pair's number (from 0).
    pub pair: u64,
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
    pub games: Vec<PairGame>,
    /// The plus side's wins minus its losses.
    pub result: i32,
}

impl PairEntry {
    /// Wins, losses and draws of the plus side.
    pub fn score(&self) -> [u64; 3] {
        let mut wld = [0; 3];
        for g in &self.games {
            let plus_won = match g.result.as_str() {
                "1-0" => Some(g.plus_white),
                "0-1" => Some(!g.plus_white),
                _ => None,
            };
            wld[match plus_won {
                Some(true) => 0,
                Some(false) => 1,
                None => 2,
            }] += 1;
        }
        wld
    }
}

pub struct PairJournal {
    file: File,
    /// The folder's key: every line is sealed with it, as a run's journal is.
    key: Key,
    /// The place of the next line (see `Journal`).
    next: u64,
}

impl PairJournal {
    /// Opens the journal to append, after ending a line a killed process left cut off.
    pub fn open(path: &Path) -> std::io::Result<PairJournal> {
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)?;
        let len = file.metadata()?.len();
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::Start(len - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        let key = Key::for_journal(path).map_err(std::io::Error::other)?;
        let next = whole_lines(path, parse)?;
        Ok(PairJournal { file, key, next })
    }

    /// Appends one pair; returns once it is on disk.
    pub fn append(&mut self, entry: &PairEntry) -> std::io::Result<()> {
        self.file
            .write_all(&sealed_line(entry, &self.key, self.next)?)?;
        self.next += 1;
        self.file.sync_data()
    }
}

/// A whole line's pair (never glued: a pair's line is rewritten whole by `open`).
fn parse(line: &str) -> Option<(PairEntry, bool)> {
    serde_json::from_str::<PairEntry>(line)
        .ok()
        .map(|e| (e, false))
}

/// The pairs in a journal (none if it is not there), and the lines (1-based) that held no whole
/// entry: a line cut off by a kill, whose pair is played again. A whole line its folder's key
/// does not prove is an error naming it: no engine's line counts. Read as a run's journal is.
pub fn read(path: &Path) -> Result<(Vec<PairEntry>, Vec<usize>), String> {
    let mut entries = Vec::new();
    let summary = scan_lines(path, parse, |entry, _| entries.push(entry))?;
    Ok((entries, summary.damaged))
}
