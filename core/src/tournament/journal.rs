//! The results journal: one JSON line per finished game, written and synced before the game
//! counts, so that a killed run loses at most the games in progress and those not yet synced
//! (none of them counted), and `--resume` plays exactly the games that are missing.

use crate::proof::Key;
use crate::referee::GameRecord;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// The journal's file name in a run folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The game's index in the schedule.
    pub index: u64,
    pub record: GameRecord,
}

pub struct Journal {
    file: File,
    /// The run folder's key: every line is sealed with it (see `proof`).
    key: Key,
    /// Games staged for the next sync, as journal lines.
    staged: Vec<u8>,
    /// The place of the next line: how many whole lines the journal holds before it.
    next: u64,
}

impl Journal {
    pub fn open(path: &Path) -> std::io::Result<Journal> {
        Ok(Journal {
            next: whole_lines(path, parse_game_number)?,
            key: Key::for_journal(path).map_err(std::io::Error::other)?,
            // Never through a link; the folder is the caller's own (checked when it is opened),
            // so a second name of the journal (a snapshot made with hard links) is no plant.
            file: std::os::unix::fs::OpenOptionsExt::custom_flags(
                OpenOptions::new().create(true).append(true),
                libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
            .open(path)?,
            staged: Vec::new(),
        })
    }

    /// Keeps one game to be written with the others at the next [`Journal::sync`]: one write
    /// for all the games that share a sync. A game counts only once synced; a run killed before
    /// then plays it again when resumed.
    pub fn stage(&mut self, entry: &Entry) -> std::io::Result<()> {
        let line = sealed_line(entry, &self.key, self.next)?;
        self.next += 1;
        self.staged.extend_from_slice(&line);
        Ok(())
    }

    /// Appends one game; returns once it is on disk.
    pub fn append(&mut self, entry: &Entry) -> std::io::Result<()> {
        self.write(entry)?;
        self.sync()
    }

    /// Appends one game without waiting for the disk: it counts only after a [`Journal::sync`]
    /// (several games written together share one sync).
    pub fn write(&mut self, entry: &Entry) -> std::io::Result<()> {
        let line = sealed_line(entry, &self.key, self.next)?;
        self.next += 1;
        self.file.write_all(&line)
    }

    /// Writes the staged games; returns once every game written so far is on disk.
    pub fn sync(&mut self) -> std::io::Result<()> {
        if !self.staged.is_empty() {
            let written = self.file.write_all(&self.staged);
            self.staged.clear();
            written?;
        }
        self.file.sync_data()
    }
}

/// An entry's journal line, sealed with `key` at place `at` (the whole lines before it), with
/// its newline (a run's games and a tune's pairs are journalled alike).
pub fn sealed_line(entry: &impl Serialize, key: &Key, at: u64) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    key.seal_at(&mut line, at);
    line.push(b'\n');
    Ok(line)
}

/// How many whole lines (lines `parse` reads) the journal at `path` holds: the place of the
/// next line written.
pub(crate) fn whole_lines<T>(
    path: &Path,
    parse: impl Fn(&str) -> Option<(T, bool)>,
) -> std::io::Result<u64> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(file);
    let (mut buffer, mut whole) = (Vec::new(), 0);
    while reader.read_until(b'\n', &mut buffer)? > 0 {
        if parse(text_of(&buffer).trim()).is_some() {
            whole += 1;
        }
        buffer.clear();
    }
    Ok(whole)
}

/// What reading a journal found besides its entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSummary {
    pub entries: u64,
    /// Lines (1-based) that held no whole entry: cut off, or garbage. Their games, if they were
    /// games, are missing and will be played again by `--resume`.
    pub damaged: Vec<usize>,
    /// Lines where a cut-off entry was followed, on the same line, by a whole one (a resume by
    /// an older arbiter appended to a torn journal): the whole one was recovered.
    pub glued: Vec<usize>,
}

impl ReadSummary {
    /// A sentence for the user when the journal was not clean, naming its lines.
    pub fn note(&self, path: &Path) -> Option<String> {
        if self.damaged.is_empty() && self.glued.is_empty() {
            return None;
        }
        let lines = |v: &[usize]| {
            let shown: Vec<String> = v.iter().take(10).map(|l| l.to_string()).collect();
            let more = if v.len() > 10 { ", ..." } else { "" };
            format!("{}{more}", shown.join(", "))
        };
        let mut parts = Vec::new();
        if !self.damaged.is_empty() {
            parts.push(format!(
                "line(s) {} hold no whole game and were skipped (their games are played again)",
                lines(&self.damaged)
            ));
        }
        if !self.glued.is_empty() {
            parts.push(format!(
                "line(s) {} held a cut-off game glued to a whole one, which was kept",
                lines(&self.glued)
            ));
        }
        Some(format!("note: {}: {}", path.display(), parts.join("; ")))
    }
}

/// The entry on a line, or, when the line starts with the cut-off remains of another, the whole
/// entry that follows them.
pub fn parse_line(line: &str) -> Option<(Entry, bool)> {
    if let Ok(entry) = serde_json::from_str::<Entry>(line) {
        return Some((entry, false));
    }
    let start = line.rfind("{\"index\":").filter(|&i| i > 0)?;
    serde_json::from_str::<Entry>(&line[start..])
        .ok()
        .map(|e| (e, true))
}

/// Reads every whole entry in order. Lines without one (cut off by a crash or a full disk, or
/// garbage) are skipped and listed in the summary, never fatal: the games they held are missing
/// and are played again. Only failing to read the file is an error.
pub fn read(path: &Path, mut each: impl FnMut(Entry)) -> Result<ReadSummary, String> {
    scan(path, |entry, _| each(entry))
}

/// Reads every whole entry as `read` does, with the byte range of its line.
fn scan(path: &Path, each: impl FnMut(Entry, (u64, usize, usize))) -> Result<ReadSummary, String> {
    scan_lines(path, parse_line, each)
}

/// The game a line's entry is of, read without its record: the parse `parse_line` makes, but
/// the record's fields are only stepped over (their moves are most of a line, and decoding
/// them is most of reading one). It accepts every line `parse_line` accepts, with the same
/// game; a line it accepts and `parse_line` refuses (a record with a field gone bad) is found
/// out when its entry is read whole.
fn parse_game_number(line: &str) -> Option<(u64, bool)> {
    #[derive(Deserialize)]
    struct Number {
        index: u64,
        // Never read, but required: a line without a record is not an entry.
        #[allow(dead_code)]
        record: serde::de::IgnoredAny,
    }
    if let Ok(n) = serde_json::from_str::<Number>(line) {
        return Some((n.index, false));
    }
    let start = line.rfind("{\"index\":").filter(|&i| i > 0)?;
    serde_json::from_str::<Number>(&line[start..])
        .ok()
        .map(|n| (n.index, true))
}

/// Reads every line a parser accepts, with the byte range of its line; the others are listed as
/// damaged. Every accepted line must be proven by its folder's key.
pub(crate) fn scan_lines<T>(
    path: &Path,
    parse: impl Fn(&str) -> Option<(T, bool)>,
    mut each: impl FnMut(T, (u64, usize, usize)),
) -> Result<ReadSummary, String> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ReadSummary::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let key = Some(Key::for_journal(path)?);
    let mut summary = ReadSummary::default();
    let mut reader = BufReader::new(file);
    let mut buffer = Vec::new();
    let (mut number, mut offset) = (0, 0u64);
    loop {
        buffer.clear();
        let n = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|e| format!("{}:{}: {e}", path.display(), number + 1))?;
        if n == 0 {
            break;
        }
        number += 1;
        let at = (offset, n, number);
        offset += n as u64;
        // Invalid UTF-8 (a torn multi-byte character) is damage like any other.
        let line = text_of(&buffer);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match parse(line) {
            Some((entry, glued)) => {
                let read = match glued {
                    true => line.rfind("{\"index\":").map_or(line, |at| &line[at..]),
                    false => line,
                };
                crate::proof::check_line(key.as_ref(), read, path, number)?;
                let place = crate::proof::place(read);
                crate::proof::check_place(place, summary.entries, path, number)?;
                if glued {
                    summary.glued.push(number);
                }
                each(entry, at);
                summary.entries += 1;
            }
            None => summary.damaged.push(number),
        }
    }
    Ok(summary)
}

/// Every whole entry's game number and the byte offset of its line, in file order, with the
/// line's number; damaged lines are left out, as `read` leaves them. Only the numbers are
/// decoded (see `parse_game_number`); every line's seal is checked.
pub fn numbers(
    path: &Path,
    mut each: impl FnMut(u64, u64, usize) -> Result<(), String>,
) -> Result<ReadSummary, String> {
    let mut failed = None;
    let summary = scan_lines(path, parse_game_number, |index, (offset, _, line)| {
        if failed.is_none() {
            failed = each(index, offset, line).err();
        }
    })?;
    failed.map_or(Ok(summary), Err)
}

/// The text of the line that starts at `offset`, without its newline or surrounding blanks
/// (invalid UTF-8 replaced).
pub fn line_from(file: &File, offset: u64) -> std::io::Result<String> {
    use std::os::unix::fs::FileExt;
    // Most lines fit the first read; a longer one is read on until its newline.
    let mut line = vec![0; 4096];
    let mut filled = 0;
    loop {
        let n = file.read_at(&mut line[filled..], offset + filled as u64)?;
        let end = memchr::memchr(b'\n', &line[filled..filled + n]).map(|i| filled + i);
        filled += n;
        if let Some(end) = end {
            line.truncate(end);
            break;
        }
        if n == 0 {
            line.truncate(filled);
            break;
        }
        if filled == line.len() {
            line.resize(line.len() * 2, 0);
        }
    }
    Ok(match String::from_utf8(line) {
        Ok(text) if text.trim().len() == text.len() => text,
        Ok(text) => text.trim().to_string(),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).trim().to_string(),
    })
}

/// The number (1-based) of the line that starts at `offset`, for a message.
pub fn line_number(path: &Path, offset: u64) -> usize {
    use std::io::Read;
    let Ok(file) = File::open(path) else {
        return 0;
    };
    let mut before = Vec::new();
    let _ = file.take(offset).read_to_end(&mut before);
    memchr::memchr_iter(b'\n', &before).count() + 1
}

/// The entry on the line of `len` bytes at `offset`.
fn read_line_at(file: &File, offset: u64, len: usize) -> std::io::Result<Option<Entry>> {
    use std::os::unix::fs::FileExt;
    let mut line = vec![0; len];
    // One `pread` per game, rather than a seek and a read.
    file.read_exact_at(&mut line, offset)?;
    Ok(parse_line(text_of(&line).trim()).map(|(entry, _)| entry))
}

/// A line's text, invalid UTF-8 replaced: checked by the standard library's fast test first,
/// as journals are read whole on every report and resume (the replacing reader walks every
/// line in small pieces, valid or not).
fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Reads every whole entry in the order of the games' numbers, each number once (the first
/// whole entry for it), whatever order they finished in: what the files of a run list, so that
/// a run and the same run split over machines and merged write the same bytes. The first pass
/// reads only the games' numbers; a journal already in order (a merged run's, one played at
/// concurrency 1) is then read straight through, holding nothing, and any other sorted by
/// where each line is (24 bytes a game), not by its entries. Each entry is decoded once. Lines
/// with no whole entry are skipped, as `read` skips them.
pub fn read_in_order(path: &Path, mut each: impl FnMut(Entry)) -> Result<(), String> {
    let unreadable = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    if in_order(path).map_err(unreadable)? {
        return read_batched(path, each);
    }
    let mut lines: Vec<(u64, u64, usize)> = Vec::new();
    scan_lines(path, parse_game_number, |index, (offset, len, _)| {
        lines.push((index, offset, len))
    })?;
    // Stable: of two entries for one game, the first in the file comes first.
    lines.sort_by_key(|&(index, _, _)| index);
    let file = File::open(path).map_err(unreadable)?;
    let mut given: Option<u64> = None;
    for &(index, offset, len) in &lines {
        if given == Some(index) {
            continue;
        }
        let entry = read_line_at(&file, offset, len).map_err(unreadable)?;
        // A line whose record does not read whole (or a file changed in between) gives no
        // entry, and the next line for the same game is tried.
        if let Some(entry) = entry.filter(|e| e.index == index) {
            given = Some(index);
            each(entry);
        }
    }
    Ok(())
}

/// Reads every whole entry as `read` does, the lines proved and decoded a batch at a time on
/// every core, and handed to `each` in the file's order.
fn read_batched(path: &Path, mut each: impl FnMut(Entry)) -> Result<(), String> {
    const BATCH: usize = 512;
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let key = Some(Key::for_journal(path)?);
    let mut reader = BufReader::new(file);
    let (mut number, mut whole) = (0, 0u64);
    let mut lines: Vec<(Vec<u8>, usize)> = Vec::with_capacity(BATCH);
    loop {
        lines.clear();
        while lines.len() < BATCH {
            let mut buffer = Vec::new();
            let n = reader
                .read_until(b'\n', &mut buffer)
                .map_err(|e| format!("{}:{}: {e}", path.display(), number + 1))?;
            if n == 0 {
                break;
            }
            number += 1;
            lines.push((buffer, number));
        }
        if lines.is_empty() {
            return Ok(());
        }
        let read = crate::parallel::par_map(&lines, |(bytes, number)| {
            let line = text_of(bytes);
            let line = line.trim();
            let (entry, glued) = parse_line(line)?;
            let sealed = match glued {
                true => line.rfind("{\"index\":").map_or(line, |at| &line[at..]),
                false => line,
            };
            let checked = crate::proof::check_line(key.as_ref(), sealed, path, *number);
            Some(checked.map(|()| (entry, crate::proof::place(sealed), *number)))
        });
        for read in read.into_iter().flatten() {
            let (entry, at, number) = read?;
            crate::proof::check_place(at, whole, path, number)?;
            whole += 1;
            each(entry);
        }
    }
}

/// Whether every line of a journal holds the next higher game number than the line before,
/// as arbiter writes them (`{"index":N,...`): then reading it straight through gives its games
/// in order, each once. Only the numbers are looked at, nothing is decoded or checked (the read
/// that follows checks every line); a line not so written says no.
fn in_order(path: &Path) -> std::io::Result<bool> {
    const START: &[u8] = b"{\"index\":";
    let mut reader = match File::open(path) {
        Ok(f) => BufReader::with_capacity(1 << 16, f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    let mut buffer = Vec::new();
    let mut last: Option<u64> = None;
    loop {
        buffer.clear();
        if reader.read_until(b'\n', &mut buffer)? == 0 {
            return Ok(true);
        }
        let Some(digits) = buffer.strip_prefix(START) else {
            return Ok(false);
        };
        let end = digits.iter().position(|b| !b.is_ascii_digit()).unwrap_or(0);
        let number = std::str::from_utf8(&digits[..end])
            .ok()
            .and_then(|d| d.parse::<u64>().ok());
        match number {
            Some(n) if last.is_none_or(|l| l < n) => last = Some(n),
            _ => return Ok(false),
        }
    }
}

/// Cuts a journal's torn last line (no newline at the end: the writer died mid-line, or the disk
/// filled) before anything is appended, so the next game does not glue onto it. The file as it
/// was is kept beside it. Returns what was done, for the user.
pub fn repair(path: &Path) -> std::io::Result<Option<String>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(None);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(None);
    }
    // Back to the last newline, a block at a time: a journal may be large.
    let mut keep = 0u64;
    let mut end = len;
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            keep = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut copy_name = path.file_name().unwrap_or_default().to_os_string();
    copy_name.push(format!(".torn-{secs}"));
    let copy = path.with_file_name(copy_name);
    std::fs::copy(path, &copy)?;
    file.set_len(keep)?;
    file.sync_all()?;
    Ok(Some(format!(
        "note: {}: its last line was cut off ({} bytes, from a crash or a full disk while it was \
         written); removed before appending, the journal as it was is kept in {}",
        path.display(),
        len - keep,
        copy.display()
    )))
}

/// The run's games as PGN, written beside its journal (`report::write_reports`).
pub const GAMES_PGN: &str = "games.pgn";

/// The final position of every game in `dir`'s journal, in the order of the games' numbers, a
/// line each: chess as EPD with fastchess's `hmvc`/`fmvn` opcodes, the other games as their FEN.
pub fn final_positions(dir: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    read_in_order(&dir.join(JOURNAL_FILE), |entry| {
        let Some(fen) = entry.record.final_fen() else {
            return;
        };
        match crate::game::find_game(&entry.record.game) {
            Some(game) => text.push_str(&(game.position_line)(&fen)),
            None => text.push_str(&fen),
        }
        text.push('\n');
    })
    .map_err(std::io::Error::other)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Outcome, Termination};
    use proptest::prelude::*;

    fn entry(index: u64) -> Entry {
        Entry {
            index,
            record: GameRecord {
                turnaround_us: Vec::new(),
                overloaded: false,
                pv_warnings: Vec::new(),
                rules: Vec::new(),
                game: "leiserchess".into(),
                white: format!("w{index}"),
                black: "b".into(),
                start_fen: None,
                moves: Vec::new(),
                outcome: Outcome::Draw,
                termination: Termination::MaxPlies,
                detail: "drawn".into(),
                time_control: "-".into(),
                duration: std::time::Duration::from_micros(index),
                opening: 0,
                round: 1,
                date: "2026.11.23".into(),
            },
        }
    }

    /// An entry's line as arbiter writes it, sealed with the owner's key.
    fn line(index: u64) -> String {
        sealed(&entry(index))
    }

    fn sealed(e: &Entry) -> String {
        let key = Key::owners().unwrap();
        let mut line = serde_json::to_vec(e).unwrap();
        key.seal(&mut line);
        line.push(b'\n');
        String::from_utf8(line).unwrap()
    }

    /// A journal's path in a folder of the test's own, removed with it.
    fn scratch(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("arbiter-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir.join("journal.jsonl"))
    }

    struct Scratch(std::path::PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever is cut, glued or thrown in, every entry whose line survived whole is read,
        /// once, in order; nothing else is; and the read never fails.
        #[test]
        fn damaged_journals_give_every_whole_entry(
            n in 1u64..12,
            cut in proptest::option::of((0usize..12, 1usize..200)),
            glue in proptest::option::of((0usize..12, 1usize..200)),
            garbage in proptest::option::of((0usize..12, "[^\n]{0,80}")),
            torn_tail in proptest::option::of(1usize..200),
        ) {
            let mut lines: Vec<String> = (0..n).map(line).collect();
            let mut lost = std::collections::BTreeSet::new();
            // A line cut short in the middle of the file (its newline kept).
            if let Some((k, at)) = cut {
                let k = k % lines.len();
                let at = at.min(lines[k].len() - 2);
                lines[k] = format!("{}\n", &lines[k][..at]);
                lost.insert(k as u64);
            }
            // A torn line with the next entry glued onto it (an old resume appending to it).
            if let Some((k, at)) = glue {
                let k = k % lines.len();
                if k + 1 < lines.len() && !lost.contains(&(k as u64)) {
                    let head = lines[k][..at.min(lines[k].len() - 2)].to_string();
                    lines[k] = head + &lines[k + 1];
                    lines.remove(k + 1);
                    // The cut entry is lost; the glued one is still read once.
                    lost.insert(k as u64);
                }
            }
            if let Some((k, junk)) = garbage {
                let k = k % (lines.len() + 1);
                lines.insert(k, format!("{junk}\n"));
            }
            let mut text = lines.concat();
            // A last line torn mid-write (no newline).
            if let Some(at) = torn_tail {
                let extra = line(n);
                text.push_str(&extra[..at.min(extra.len() - 2)]);
            }
            let path = scratch("prop");
            std::fs::write(&path, &text).unwrap();
            let mut read = Vec::new();
            let summary = read_entries(&path, &mut read);
            let expected: Vec<u64> = (0..n).filter(|i| !lost.contains(i)).collect();
            let got: Vec<u64> = read.iter().map(|e| e.index).collect();
            let mut sorted = got.clone();
            sorted.dedup();
            prop_assert_eq!(&sorted, &got, "no entry twice");
            for i in &expected {
                prop_assert!(got.contains(i), "entry {} lost: {:?}", i, got);
            }
            for e in &read {
                prop_assert_eq!(e, &entry(e.index));
            }
            prop_assert!(summary.entries as usize == read.len());
            // Repair cuts exactly the torn tail, and then the file ends with a newline.
            let note = repair(&path).unwrap();
            prop_assert_eq!(note.is_some(), torn_tail.is_some());
            let after = std::fs::read(&path).unwrap();
            prop_assert!(after.is_empty() || after.ends_with(b"\n"));
            let mut again = Vec::new();
            read_entries(&path, &mut again);
            prop_assert_eq!(again, read);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        /// In number order, each game once: the first entry for it in the file that reads whole,
        /// as sorting what `read` gives would have it, whatever the order of the lines, games
        /// written twice, lines cut, and records gone bad behind a good game number.
        #[test]
        fn in_order_is_every_whole_entry_sorted_first_one_kept(
            order in proptest::collection::vec((0u64..10, 0u8..4), 1..24),
        ) {
            let mut text = String::new();
            for (k, &(index, kind)) in order.iter().enumerate() {
                let mut e = entry(index);
                e.record.detail = format!("line {k}");
                let whole = sealed(&e).trim_end().to_string();
                let written = match kind {
                    // The game number reads, the record does not: a field of the wrong type.
                    1 => {
                        let mut bad = serde_json::to_string(&e)
                            .unwrap()
                            .replacen("\"round\":1", "\"round\":\"one\"", 1)
                            .into_bytes();
                        Key::owners().unwrap().seal(&mut bad);
                        String::from_utf8(bad).unwrap()
                    }
                    // Cut in the middle.
                    2 => whole[..whole.len() / 2].to_string(),
                    _ => whole,
                };
                text.push_str(&written);
                text.push('\n');
            }
            let path = scratch("in-order");
            std::fs::write(&path, &text).unwrap();
            let mut expected = Vec::new();
            read(&path, |e| expected.push(e)).unwrap();
            expected.sort_by_key(|e| e.index);
            expected.dedup_by_key(|e| e.index);
            let mut got = Vec::new();
            read_in_order(&path, |e| got.push(e)).unwrap();
            prop_assert_eq!(got, expected);
        }
    }

    fn read_entries(path: &Path, out: &mut Vec<Entry>) -> ReadSummary {
        read(path, |e| out.push(e)).unwrap()
    }

    #[test]
    fn a_glued_line_keeps_its_whole_entry_and_says_so() {
        let path = scratch("glued");
        let torn = &line(0)[..30];
        std::fs::write(&path, format!("{torn}{}garbage\n{}", line(1), line(2))).unwrap();
        let mut read = Vec::new();
        let summary = read_entries(&path, &mut read);
        assert_eq!(read.iter().map(|e| e.index).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            (summary.glued.clone(), summary.damaged.clone()),
            (vec![1], vec![2])
        );
        let note = summary.note(&path).unwrap();
        assert!(
            note.contains("line(s) 2 hold no whole game") && note.contains("line(s) 1 held"),
            "{note}"
        );
    }
}
