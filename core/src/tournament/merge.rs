//! `arbiter merge`: the shard folders of a split run (each possibly partial, resumed, or present
//! twice after a requeued task) become one run folder with the files a single machine would have
//! written. Game numbers are the schedule's, so the shards' journals are joined by number: one
//! entry per game, a game recorded twice with the same result kept once, with different results
//! refused.

use super::claims;
use super::journal::{self, JOURNAL_FILE};
use super::openings::Opening;
use super::run::{CountInOrder, RunOptions, RunOutcome};
use super::runner::Schedule;
use super::spec::{RunSpec, Shard, SPEC_FILE};
use super::verify::RunCheck;
use super::RunFolder;
use crate::game::{find_game, GameEntry};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum MergeError {
    #[error("{0}")]
    Input(String),
    #[error(
        "game {game} has different results in {first} and {second}: the shards did not play \
        the same run (or an engine is not deterministic); remove the wrong folder and merge again"
    )]
    Conflict {
        /// The game's number (its index plus one; wide enough for any index a file holds).
        game: u128,
        first: String,
        second: String,
    },
    #[error("cannot write {path}: {reason}")]
    Output { path: String, reason: String },
}

/// What a merge found and wrote.
pub struct Merged {
    pub spec: RunSpec,
    pub folders: Vec<PathBuf>,
    pub shards: BTreeSet<u64>,
    pub games: u64,
    /// Entries left out because another shard folder held the same game with the same result.
    pub duplicates: u64,
    /// Games of the schedule in no folder (0-based numbers).
    pub missing: Vec<u64>,
    pub outcome: RunOutcome,
}

/// The shard folders named: a folder holding `shard-*` folders stands for them; any other for
/// itself.
pub fn shard_folders(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, MergeError> {
    let mut folders = Vec::new();
    for dir in dirs {
        let read = std::fs::read_dir(dir)
            .map_err(|e| MergeError::Input(format!("cannot read {}: {e}", dir.display())))?;
        let mut shards: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("shard-"))
            .map(|e| e.path())
            .filter(|p| p.join(SPEC_FILE).is_file())
            .collect();
        shards.sort();
        if shards.is_empty() {
            if !dir.join(SPEC_FILE).is_file() {
                return Err(MergeError::Input(format!(
                    "{} is not a run folder (no {SPEC_FILE}) and holds no shard-* folders",
                    dir.display()
                )));
            }
            shards.push(dir.clone());
        }
        folders.extend(shards);
    }
    // A folder named twice (or found through its run's folder too) is read once.
    folders.sort();
    folders.dedup();
    Ok(folders)
}

/// The run the folders are shards of, and each folder's shard; folders of different runs are
/// refused, naming the first two that differ.
fn common_run(folders: &[PathBuf]) -> Result<(RunSpec, Vec<Option<Shard>>), MergeError> {
    let mut run: Option<(RunSpec, &PathBuf)> = None;
    let mut shards = Vec::new();
    for folder in folders {
        let spec = RunSpec::load(folder).map_err(MergeError::Input)?;
        shards.push(spec.shard);
        let this = spec.unsplit();
        match &run {
            None => run = Some((this, folder)),
            Some((first, at)) if *first != this => {
                return Err(MergeError::Input(format!(
                    "{} and {} are not shards of the same run (their settings differ)",
                    at.join(SPEC_FILE).display(),
                    folder.join(SPEC_FILE).display()
                )))
            }
            Some(_) => {}
        }
    }
    let (spec, _) =
        run.ok_or_else(|| MergeError::Input("no shard folders to merge".to_string()))?;
    Ok((spec, shards))
}

/// Where each game of the schedule is read from: its journal line's folder (from 1; 0 for a
/// game in no folder) in the top 16 bits, the line's byte offset in the rest. Eight bytes a
/// game is all a merge holds of the games, however many there are.
struct Chosen {
    slots: Vec<u64>,
}

const OFFSET_BITS: u32 = 48;

impl Chosen {
    fn at(&self, index: u64) -> Option<Line> {
        let slot = *self.slots.get(usize::try_from(index).ok()?)?;
        (slot != 0).then(|| Line {
            folder: (slot >> OFFSET_BITS) as usize - 1,
            offset: slot & ((1 << OFFSET_BITS) - 1),
        })
    }

    fn set(&mut self, index: u64, line: Line) {
        self.slots[index as usize] = ((line.folder as u64 + 1) << OFFSET_BITS) | line.offset;
    }

    fn games(&self) -> u64 {
        self.slots.iter().filter(|&&s| s != 0).count() as u64
    }
}

/// A journal line: the folder it is in (by its number in the merge's list) and its offset.
#[derive(Clone, Copy)]
struct Line {
    folder: usize,
    offset: u64,
}

/// Every game's entry once, with the folder it is read from. Two entries for one game with
/// different results: the one from the task holding the game's claim stands (the other was
/// played by a task that looked dead and was taken over); with no claim to decide, the merge is
/// refused. Of two lines for a game, the one in the folder named first (in one folder, the
/// earlier) is kept. Returns the entries kept, the lines left out (a copy of a kept game with
/// the same result, or a line past the schedule: proved like the kept ones, a copy is a line
/// like any other), and how many copies were left out.
fn choose_entries(folders: &[PathBuf], games: u64) -> Result<(Chosen, Vec<Line>, u64), MergeError> {
    let mut chosen = Chosen {
        slots: vec![
            0;
            usize::try_from(games)
                .map_err(|_| MergeError::Input("too many games".into()))?
        ],
    };
    let mut files: Vec<Option<File>> = folders.iter().map(|_| None).collect();
    let mut dropped = Vec::new();
    let mut left_out = 0;
    let mut conflict = None;
    for (f, folder) in folders.iter().enumerate() {
        let path = folder.join(JOURNAL_FILE);
        if (path.metadata().map_or(0, |m| m.len()) >> OFFSET_BITS) > 0 {
            return Err(MergeError::Input(format!(
                "{} is too long to merge",
                path.display()
            )));
        }
        journal::numbers(&path, |index, offset, _| {
            let line = Line { folder: f, offset };
            let Some(first) = chosen.at(index) else {
                if index < games {
                    chosen.set(index, line);
                } else {
                    dropped.push(line);
                }
                return Ok(());
            };
            left_out += 1;
            let result = |at: Line, files: &mut [Option<File>]| {
                entry_at(files, folders, at)
                    .map(|e| e.map(|e| (e.record.outcome, e.record.termination)))
                    .map_err(|e| e.to_string())
            };
            if result(first, &mut files)? == result(line, &mut files)? {
                dropped.push(line);
                return Ok(());
            }
            let claim_holder = |f: usize| -> Option<bool> {
                let folder = &folders[f];
                let owner = claims::owner_in(folder.parent()?, index / 2)?;
                Some(folder.file_name()?.to_string_lossy() == owner)
            };
            match (claim_holder(first.folder), claim_holder(f)) {
                (Some(true), Some(false)) => Ok(()),
                (Some(false), Some(true)) => {
                    chosen.set(index, line);
                    Ok(())
                }
                _ => {
                    conflict = Some(MergeError::Conflict {
                        game: u128::from(index) + 1,
                        first: folders[first.folder]
                            .join(JOURNAL_FILE)
                            .display()
                            .to_string(),
                        second: path.display().to_string(),
                    });
                    Err(String::new())
                }
            }
        })
        .map_err(|e| conflict.take().unwrap_or(MergeError::Input(e)))?;
    }
    Ok((chosen, dropped, left_out))
}

/// Proves the entries a merge leaves out as duplicates like the ones it keeps: a line that is
/// no game of the run is refused with its file and line, whether or not it would count.
fn prove_dropped(
    folders: &[PathBuf],
    dropped: &[Line],
    check: &mut RunCheck,
) -> Result<(), MergeError> {
    let mut files: Vec<Option<File>> = folders.iter().map(|_| None).collect();
    let keys = run_keys(folders)?;
    let mut batch = Batch::default();
    for line in dropped {
        batch.push(text_at(&mut files, folders, *line)?, *line);
        if batch.len() == BATCH {
            batch.prove_and_write(folders, &keys, check, |_, _| Ok(()))?;
        }
    }
    batch.prove_and_write(folders, &keys, check, |_, _| Ok(()))
}

/// The key that proves each folder's journal: its run's own (see `proof::Key::for_journal`).
fn run_keys(folders: &[PathBuf]) -> Result<Vec<crate::proof::Key>, MergeError> {
    folders
        .iter()
        .map(|f| crate::proof::Key::for_journal(&f.join(JOURNAL_FILE)).map_err(MergeError::Input))
        .collect()
}

/// The folder a merge writes: locked against a run playing there and a second merge; empty, or
/// the merged run of these very shards (whose own journal then counts too: games played into it
/// with `--resume`). Any other run's folder is refused.
fn target(out: &Path, spec: &RunSpec) -> Result<(Option<PathBuf>, RunFolder), MergeError> {
    let existed = out.exists();
    let folder = RunFolder::written(out).map_err(|e| MergeError::Input(e.to_string()))?;
    let refuse = |why: String| {
        if !existed {
            let _ = std::fs::remove_dir(out);
        }
        Err(MergeError::Input(why))
    };
    let journal = out.join(JOURNAL_FILE);
    if out.join(SPEC_FILE).exists() {
        match RunSpec::load(out) {
            Ok(theirs) if theirs.identity() == spec.identity() => {}
            _ => {
                return refuse(format!(
                    "{} holds another run ({}): merge into the run's own folder or a new one",
                    out.display(),
                    out.join(SPEC_FILE).display()
                ))
            }
        }
    } else if journal.exists() {
        return refuse(format!(
            "{} holds a journal of games that is no run's merge: merge into another folder",
            out.display()
        ));
    }
    Ok((journal.exists().then(|| out.to_path_buf()), folder))
}

/// Merges the shard folders `dirs` into the run folder `out`. Everything is checked before
/// anything is written, and the journal and spec are written beside and renamed into place: a
/// refused merge leaves `out` as it was.
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let existed = out.exists();
    let merged = merge_into(out, dirs);
    if merged.is_err() && !existed {
        // Made for this merge, and refused: gone again (only if empty: reports of a merge that
        // failed late stay to be looked at).
        let _ = std::fs::remove_dir(out);
    }
    merged
}

/// The run's book when it is at hand (`None` where it is not): the openings are checked, and
/// the schedule is the run's. Another book at the run's path would prove other games: refused,
/// named.
fn book_of(spec: &RunSpec, entry: &'static GameEntry) -> Result<Option<Vec<Opening>>, MergeError> {
    if spec.openings.as_deref().is_some_and(Path::is_file) {
        super::contents::check(
            spec,
            spec.contents.as_ref(),
            super::contents::Compare::BookOnly,
        )
        .map_err(MergeError::Input)?;
    }
    let book = match spec.openings.as_deref() {
        Some(path) => super::openings::load_book_as(
            path,
            super::launch::book_format(spec, path),
            entry,
            spec.book_plies,
        )
        .ok(),
        None => Some(Vec::new()),
    };
    Ok(book)
}

fn merge_into(out: &Path, dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let mut folders = shard_folders(dirs)?;
    if folders.iter().any(|f| same_folder(f, out)) {
        return Err(MergeError::Input(format!(
            "{} is one of the shards: merge into another folder (the run's folder above the \
             shards is the usual one)",
            out.display()
        )));
    }
    let (mut spec, shards) = common_run(&folders)?;
    // The copies every shard was asked for, written once here from all of their games.
    if let Ok(first) = RunSpec::load(&folders[0]) {
        spec.pgnout = first.pgnout;
        spec.epdout = first.epdout;
        spec.replace_copies = first.replace_copies;
    }
    let entry = find_game(&spec.game)
        .ok_or_else(|| MergeError::Input(format!("unknown game '{}'", spec.game)))?;
    let (resumed, folder) = target(out, &spec)?;
    // The copies go after what their files held at the first merge of this run, every time.
    spec.copy_base = match RunSpec::load(out) {
        Ok(merged) if merged.copy_base.is_some() => merged.copy_base,
        _ => Some(super::spec::CopyBase::now(&spec)),
    };
    folders.extend(resumed);
    let output = |path: &Path, e: &dyn std::fmt::Display| MergeError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    spec.out = Some(out.to_path_buf());
    let book = book_of(&spec, entry)?;
    let opts = RunOptions::of(
        spec.clone(),
        entry,
        book.clone().unwrap_or_default(),
        folder,
    );
    let schedule = opts.schedule();
    let (kept, copies, duplicates) = choose_entries(&folders, schedule.len())?;
    let names = spec.engines.iter().map(|e| e.name.clone()).collect();
    let mut check = RunCheck::new(entry, names, schedule.clone(), spec.rules.clone(), book);
    prove_dropped(&folders, &copies, &mut check)?;
    let mut count = CountInOrder::new(&opts);
    // The merged run's id: its own where the merge goes on in its folder, else a new one; its
    // lines are sealed again under it.
    let id = crate::proof::run_id(out, SPEC_FILE);
    let journal_tmp = write_journal(out, &folders, &kept, &mut check, &mut count, id.as_deref())?;
    let spec_tmp = out.join(format!(".{SPEC_FILE}.merging"));
    let saved = spec.save_as(&spec_tmp).and_then(|()| {
        let text = std::fs::read(&spec_tmp)?;
        crate::proof::seal_spec_as(out, SPEC_FILE, &text, id.as_deref())?;
        std::fs::rename(&spec_tmp, out.join(SPEC_FILE))?;
        std::fs::rename(&journal_tmp, out.join(JOURNAL_FILE))
    });
    if let Err(e) = saved {
        let _ = std::fs::remove_file(&journal_tmp);
        let _ = std::fs::remove_file(&spec_tmp);
        return Err(output(out, &e));
    }
    let outcome = count
        .finish(&opts)
        .map_err(|e| MergeError::Input(e.to_string()))?;
    let missing = (0..schedule.len())
        .filter(|&i| kept.at(i).is_none())
        .collect();
    Ok(Merged {
        spec,
        shards: shards.iter().flatten().map(|s| s.index).collect(),
        folders,
        games: kept.games(),
        duplicates,
        missing,
        outcome,
    })
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The merged journal, in number order, written beside `out`'s (returned, for the caller to
/// rename into place); every entry is checked as a game of the run (players, opening, moves and
/// result by the rules), and the first that is not refuses the merge with its file and line.
fn write_journal(
    out: &Path,
    folders: &[PathBuf],
    kept: &Chosen,
    check: &mut RunCheck,
    count: &mut CountInOrder,
    id: Option<&str>,
) -> Result<PathBuf, MergeError> {
    let (tmp, file) =
        crate::output::create_beside(&out.join(JOURNAL_FILE), 0o644).map_err(|e| {
            MergeError::Output {
                path: out.display().to_string(),
                reason: e.to_string(),
            }
        })?;
    let written = write_entries(&tmp, file, folders, kept, check, count, id);
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| tmp)
}

/// Games read and proved at a time: enough to keep every core replaying, few enough to hold.
const BATCH: usize = 1024;

/// The entry of `line` (files opened once, kept in `files`); `None` for a line that no longer
/// reads whole.
fn entry_at(
    files: &mut [Option<File>],
    folders: &[PathBuf],
    line: Line,
) -> Result<Option<journal::Entry>, MergeError> {
    let text = text_at(files, folders, line)?;
    Ok(journal::parse_line(&text).map(|(entry, _)| entry))
}

/// The text of `line` without its newline (files opened once, kept in `files`).
fn text_at(
    files: &mut [Option<File>],
    folders: &[PathBuf],
    line: Line,
) -> Result<String, MergeError> {
    let source = folders[line.folder].join(JOURNAL_FILE);
    let unreadable =
        |e: std::io::Error| MergeError::Input(format!("cannot read {}: {e}", source.display()));
    if files[line.folder].is_none() {
        files[line.folder] = Some(File::open(&source).map_err(unreadable)?);
    }
    let file = files[line.folder].as_ref().expect("opened above");
    journal::line_from(file, line.offset).map_err(unreadable)
}

/// Journal lines read for proving, with where each was read.
#[derive(Default)]
struct Batch {
    lines: Vec<String>,
    origins: Vec<Line>,
}

impl Batch {
    fn push(&mut self, text: String, line: Line) {
        self.lines.push(text);
        self.origins.push(line);
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    /// Proves the lines games of the run (each sealed with the owner's key, each entry where
    /// the schedule puts it, its moves and result by the rules; on every core), then hands each
    /// entry with its line from the entry's start (the line as arbiter sealed it) to `write`,
    /// in order, and empties the batch. The first that is not a game of the run
    /// refuses the merge with its file and line; a line that does not read whole is left out.
    fn prove_and_write(
        &mut self,
        folders: &[PathBuf],
        keys: &[crate::proof::Key],
        check: &mut RunCheck,
        mut write: impl FnMut(&journal::Entry, &str) -> Result<(), MergeError>,
    ) -> Result<(), MergeError> {
        let lines: Vec<(&String, &Line)> = self.lines.iter().zip(&self.origins).collect();
        let read = crate::parallel::par_map(&lines, |(text, origin)| {
            let key = &keys[origin.folder];
            let (entry, glued) = journal::parse_line(text)?;
            let text = match glued {
                true => text
                    .rfind("{\"index\":")
                    .map_or(text.as_str(), |at| &text[at..]),
                false => text.as_str(),
            };
            Some((entry, key.proves(text).then(|| text.to_string())))
        });
        drop(lines);
        let mut entries = Vec::with_capacity(read.len());
        let mut texts = Vec::with_capacity(read.len());
        let mut origins = Vec::with_capacity(read.len());
        for (i, (read, origin)) in read.into_iter().zip(&self.origins).enumerate() {
            let Some((entry, sealed)) = read else {
                continue;
            };
            let Some(text) = sealed else {
                // Changed since it was first read and checked: refused as any unproven line.
                let path = folders[origin.folder].join(JOURNAL_FILE);
                let at = journal::line_number(&path, origin.offset);
                return Err(MergeError::Input(
                    crate::proof::check_line(Some(&keys[origin.folder]), &self.lines[i], &path, at)
                        .err()
                        .unwrap_or_else(|| {
                            format!("{}:{at}: changed while merged", path.display())
                        }),
                ));
            };
            entries.push(entry);
            texts.push(text);
            origins.push(*origin);
        }
        if let Err((i, why)) = check.check_batch(&entries) {
            let line = origins[i];
            let path = folders[line.folder].join(JOURNAL_FILE);
            return Err(MergeError::Input(format!(
                "{}:{}: game {} is not a game of this run: {why}",
                path.display(),
                journal::line_number(&path, line.offset),
                u128::from(entries[i].index) + 1
            )));
        }
        for (entry, text) in entries.iter().zip(&texts) {
            write(entry, text)?;
        }
        self.lines.clear();
        self.origins.clear();
        Ok(())
    }
}

fn write_entries(
    tmp: &Path,
    file: File,
    folders: &[PathBuf],
    kept: &Chosen,
    check: &mut RunCheck,
    count: &mut CountInOrder,
    id: Option<&str>,
) -> Result<(), MergeError> {
    let output = |e: std::io::Error| MergeError::Output {
        path: tmp.display().to_string(),
        reason: e.to_string(),
    };
    let mut files: Vec<Option<File>> = folders.iter().map(|_| None).collect();
    let folder = tmp.parent().unwrap_or(Path::new("."));
    let key = crate::proof::Key::load_or_make(folder)
        .map_err(output)?
        .of_run(id);
    let keys = run_keys(folders)?;
    let mut writer = std::io::BufWriter::new(file);
    let mut written = 0;
    let mut write = |entry: &journal::Entry, text: &str| {
        count.count(entry);
        let mut line = crate::proof::unsealed(text).into_bytes();
        key.seal_at(&mut line, written);
        written += 1;
        line.push(b'\n');
        writer.write_all(&line).map_err(output)
    };
    let mut batch = Batch::default();
    for index in 0..kept.slots.len() as u64 {
        let Some(line) = kept.at(index) else {
            continue;
        };
        batch.push(text_at(&mut files, folders, line)?, line);
        if batch.len() == BATCH {
            batch.prove_and_write(folders, &keys, check, &mut write)?;
        }
    }
    batch.prove_and_write(folders, &keys, check, &mut write)?;
    let file = writer.into_inner().map_err(|e| output(e.into_error()))?;
    file.sync_all().map_err(output)
}
