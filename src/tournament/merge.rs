//! `arbiter merge`: the shard folders of a split run (each possibly partial, resumed, or present
//! twice after a requeued task) become one run folder with the files a single machine would have
//! written. Game numbers are the schedule's, so the shards' journals are joined by number: one
//! entry per game, a game recorded twice with the same result kept once, with different results
//! refused.

use super::claims;
use super::journal::{self, Place, JOURNAL_FILE};
use super::openings::Opening;
use super::run::{report_journal, RunOptions, RunOutcome};
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
    #[error("game {game} has different results in {first} and {second}: the shards did not play the same run (or an engine is not deterministic); remove the wrong folder and merge again")]
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
        let spec = RunSpec::load(folder)
            .map_err(MergeError::Input)?
            .ok_or_else(|| {
                MergeError::Input(format!(
                    "{}: a run from an older arbiter cannot be merged",
                    folder.join(SPEC_FILE).display()
                ))
            })?;
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

/// Journal entries by their place and the index of the folder holding them.
type Entries = Vec<(Place, usize)>;

/// Every game's entry once, in number order, with the folder it is read from. Two entries for
/// one game with different results: the one from the task holding the game's claim stands (the
/// other was played by a task that looked dead and was taken over); with no claim to decide,
/// the merge is refused. Returns the entries kept, the copies of kept games left out (same
/// result: to be proved like the kept ones, a copy is a line like any other), and how many
/// entries were left out in all.
fn choose_entries(folders: &[PathBuf]) -> Result<(Entries, Entries, u64), MergeError> {
    let mut all: Vec<(Place, usize)> = Vec::new();
    for (f, folder) in folders.iter().enumerate() {
        let (places, _) = journal::places(&folder.join(JOURNAL_FILE)).map_err(MergeError::Input)?;
        all.extend(places.into_iter().map(|p| (p, f)));
    }
    all.sort_by_key(|(p, f)| (p.index, *f));
    let claim_holder = |index: u64, f: usize| -> Option<bool> {
        let folder = &folders[f];
        let owner = claims::owner_in(folder.parent()?, index / 2)?;
        Some(folder.file_name()?.to_string_lossy() == owner)
    };
    let mut kept: Vec<(Place, usize)> = Vec::with_capacity(all.len());
    let mut copies = Vec::new();
    let mut left_out = 0;
    for (place, f) in all {
        match kept.last_mut() {
            Some((first, g)) if first.index == place.index => {
                left_out += 1;
                if (first.outcome, first.termination) == (place.outcome, place.termination) {
                    copies.push((place, f));
                    continue;
                }
                match (claim_holder(place.index, *g), claim_holder(place.index, f)) {
                    (Some(true), Some(false)) => {}
                    (Some(false), Some(true)) => (*first, *g) = (place, f),
                    _ => {
                        return Err(MergeError::Conflict {
                            game: u128::from(place.index) + 1,
                            first: folders[*g].join(JOURNAL_FILE).display().to_string(),
                            second: folders[f].join(JOURNAL_FILE).display().to_string(),
                        })
                    }
                }
            }
            _ => kept.push((place, f)),
        }
    }
    Ok((kept, copies, left_out))
}

/// Proves the entries a merge leaves out as duplicates like the ones it keeps: a line that is
/// no game of the run is refused with its file and line, whether or not it would count.
fn prove_dropped(
    folders: &[PathBuf],
    dropped: &[(Place, usize)],
    check: &mut RunCheck,
) -> Result<(), MergeError> {
    let mut files: Vec<Option<File>> = folders.iter().map(|_| None).collect();
    let mut batch = Batch::default();
    for (place, f) in dropped {
        if let Some(entry) = entry_at(&mut files, folders, place, *f)? {
            batch.push(entry, place, *f);
        }
        if batch.entries.len() == BATCH {
            batch.prove_and_write(folders, check, |_| Ok(()))?;
        }
    }
    batch.prove_and_write(folders, check, |_| Ok(()))
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
            Ok(Some(theirs)) if theirs.identity() == spec.identity() => {}
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
    if let Ok(Some(first)) = RunSpec::load(&folders[0]) {
        spec.pgnout = first.pgnout;
        spec.epdout = first.epdout;
        spec.replace_copies = first.replace_copies;
    }
    let entry = find_game(&spec.game)
        .ok_or_else(|| MergeError::Input(format!("unknown game '{}'", spec.game)))?;
    let (resumed, folder) = target(out, &spec)?;
    // The copies go after what their files held at the first merge of this run, every time.
    spec.copy_base = match RunSpec::load(out) {
        Ok(Some(merged)) if merged.copy_base.is_some() => merged.copy_base,
        _ => Some(super::spec::CopyBase::now(&spec)),
    };
    folders.extend(resumed);
    let (kept, copies, duplicates) = choose_entries(&folders)?;
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
    let names = spec.engines.iter().map(|e| e.name.clone()).collect();
    let mut check = RunCheck::new(entry, names, schedule.clone(), spec.rules.clone(), book);
    prove_dropped(&folders, &copies, &mut check)?;
    let journal_tmp = write_journal(out, &folders, &kept, &mut check)?;
    let spec_tmp = out.join(format!(".{SPEC_FILE}.merging"));
    let saved = spec.save_as(&spec_tmp).and_then(|()| {
        super::proof::seal_spec(out, super::spec::SPEC_FILE, &std::fs::read(&spec_tmp)?)?;
        std::fs::rename(&spec_tmp, out.join(SPEC_FILE))?;
        std::fs::rename(&journal_tmp, out.join(JOURNAL_FILE))
    });
    if let Err(e) = saved {
        let _ = std::fs::remove_file(&journal_tmp);
        let _ = std::fs::remove_file(&spec_tmp);
        return Err(output(out, &e));
    }
    let outcome = report_journal(&opts).map_err(|e| MergeError::Input(e.to_string()))?;
    let present: BTreeSet<u64> = kept.iter().map(|(p, _)| p.index).collect();
    let missing = (0..schedule.len())
        .filter(|i| !present.contains(i))
        .collect();
    Ok(Merged {
        spec,
        shards: shards.iter().flatten().map(|s| s.index).collect(),
        folders,
        games: kept.len() as u64,
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
    kept: &[(Place, usize)],
    check: &mut RunCheck,
) -> Result<PathBuf, MergeError> {
    let tmp = out.join(format!(".{JOURNAL_FILE}.merging"));
    let written = write_entries(&tmp, folders, kept, check);
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| tmp)
}

/// Games read and proved at a time: enough to keep every core replaying, few enough to hold.
const BATCH: usize = 1024;

/// The entry at `place` in folder `f`'s journal (files opened once, kept in `files`); `None`
/// for a line that no longer reads whole.
fn entry_at(
    files: &mut [Option<File>],
    folders: &[PathBuf],
    place: &Place,
    f: usize,
) -> Result<Option<journal::Entry>, MergeError> {
    let source = folders[f].join(JOURNAL_FILE);
    let unreadable =
        |e: std::io::Error| MergeError::Input(format!("cannot read {}: {e}", source.display()));
    if files[f].is_none() {
        files[f] = Some(File::open(&source).map_err(unreadable)?);
    }
    let file = files[f].as_mut().expect("opened above");
    journal::read_at(file, place).map_err(unreadable)
}

/// Entries read for proving, with where each was read: a folder's journal and its place there.
#[derive(Default)]
struct Batch {
    entries: Vec<journal::Entry>,
    origins: Vec<(Place, usize)>,
}

impl Batch {
    fn push(&mut self, entry: journal::Entry, place: &Place, f: usize) {
        self.entries.push(entry);
        self.origins.push((*place, f));
    }

    /// Proves the entries games of the run, then hands each to `write` and empties the batch;
    /// the first that is not a game of the run refuses the merge with its file and line.
    fn prove_and_write(
        &mut self,
        folders: &[PathBuf],
        check: &mut RunCheck,
        mut write: impl FnMut(&journal::Entry) -> Result<(), MergeError>,
    ) -> Result<(), MergeError> {
        if let Err((i, why)) = check.check_batch(&self.entries) {
            let (place, f) = &self.origins[i];
            return Err(MergeError::Input(format!(
                "{}:{}: game {} is not a game of this run: {why}",
                folders[*f].join(JOURNAL_FILE).display(),
                place.line,
                u128::from(self.entries[i].index) + 1
            )));
        }
        for entry in &self.entries {
            write(entry)?;
        }
        self.entries.clear();
        self.origins.clear();
        Ok(())
    }
}

fn write_entries(
    tmp: &Path,
    folders: &[PathBuf],
    kept: &[(Place, usize)],
    check: &mut RunCheck,
) -> Result<(), MergeError> {
    let output = |e: std::io::Error| MergeError::Output {
        path: tmp.display().to_string(),
        reason: e.to_string(),
    };
    let mut files: Vec<Option<File>> = folders.iter().map(|_| None).collect();
    let folder = tmp.parent().unwrap_or(Path::new("."));
    let key = super::proof::Key::load_or_make(folder).map_err(output)?;
    let mut writer = std::io::BufWriter::new(File::create(tmp).map_err(output)?);
    let mut write = |entry: &journal::Entry| {
        let line = journal::sealed_line(entry, &key).map_err(output)?;
        writer.write_all(&line).map_err(output)
    };
    let mut batch = Batch::default();
    for (place, f) in kept {
        if let Some(entry) = entry_at(&mut files, folders, place, *f)? {
            batch.push(entry, place, *f);
        }
        if batch.entries.len() == BATCH {
            batch.prove_and_write(folders, check, &mut write)?;
        }
    }
    batch.prove_and_write(folders, check, &mut write)?;
    let file = writer.into_inner().map_err(|e| output(e.into_error()))?;
    file.sync_all().map_err(output)
}
