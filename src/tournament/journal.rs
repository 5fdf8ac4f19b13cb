//! The results journal: one JSON line per finished game, flushed and synced before the game
//! counts, so that a killed run loses at most the games in progress and `--resume` plays exactly
//! the games that are missing.

use crate::referee::GameRecord;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The game's index in the schedule.
    pub index: u64,
    pub record: GameRecord,
}

pub struct Journal {
    file: File,
}

impl Journal {
    pub fn open(path: &Path) -> std::io::Result<Journal> {
        Ok(Journal {
            file: OpenOptions::new().create(true).append(true).open(path)?,
        })
    }

    /// Appends one game; returns once it is on disk.
    pub fn append(&mut self, entry: &Entry) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.sync_data()
    }
}

/// Reads every entry in order. A cut-off last line (the run was killed while writing it) is
/// ignored; a bad line anywhere else is an error naming it.
pub fn read(path: &Path, mut each: impl FnMut(Entry)) -> Result<u64, String> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut lines = BufReader::new(file).lines().enumerate().peekable();
    let mut count = 0;
    while let Some((i, line)) = lines.next() {
        let line = line.map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(&line) {
            Ok(entry) => {
                each(entry);
                count += 1;
            }
            Err(_) if lines.peek().is_none() => break,
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a journal entry: {e}",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(count)
}

/// How many games the journal at `path` holds (0 when it is missing or unreadable).
pub fn count_entries(path: &Path) -> u64 {
    read(path, |_| ()).unwrap_or(0)
}
