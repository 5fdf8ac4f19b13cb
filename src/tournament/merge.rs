//! `arbiter merge`: the shard folders of a split run (each possibly partial, resumed, or present
//! twice after a requeued task) become one run folder with the files a single machine would have
//! written. Game numbers are the schedule's, so the shards' journals are joined by number: one
//! entry per game, a game recorded twice with the same result kept once, with different results
//! refused.

use super::journal::{self, Place, JOURNAL_FILE};
use super::run::{report_journal, RunOptions, RunOutcome};
use super::runner::Schedule;
use super::spec::{RunSpec, Shard, SPEC_FILE};
use crate::game::find_game;
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

/// Every game's entry once, in number order, with the folder it is read from.
fn choose_entries(folders: &[PathBuf]) -> Result<(Vec<(Place, usize)>, u64), MergeError> {
    let mut all: Vec<(Place, usize)> = Vec::new();
    for (f, folder) in folders.iter().enumerate() {
        let (places, _) = journal::places(&folder.join(JOURNAL_FILE)).map_err(MergeError::Input)?;
        all.extend(places.into_iter().map(|p| (p, f)));
    }
    all.sort_by_key(|(p, f)| (p.index, *f));
    let mut kept: Vec<(Place, usize)> = Vec::with_capacity(all.len());
    let mut duplicates = 0;
    for (place, f) in all {
        match kept.last() {
            Some((first, g)) if first.index == place.index => {
                if (first.outcome, first.termination) != (place.outcome, place.termination) {
                    return Err(MergeError::Conflict {
                        game: u128::from(place.index) + 1,
                        first: folders[*g].join(JOURNAL_FILE).display().to_string(),
                        second: folders[f].join(JOURNAL_FILE).display().to_string(),
                    });
                }
                duplicates += 1;
            }
            _ => kept.push((place, f)),
        }
    }
    Ok((kept, duplicates))
}

/// Merges the shard folders `dirs` into the run folder `out`.
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let folders = shard_folders(dirs)?;
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
    }
    let entry = find_game(&spec.game)
        .ok_or_else(|| MergeError::Input(format!("unknown game '{}'", spec.game)))?;
    let (kept, duplicates) = choose_entries(&folders)?;
    let output = |path: &Path, e: &dyn std::fmt::Display| MergeError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(out).map_err(|e| output(out, &e))?;
    spec.out = Some(out.to_path_buf());
    spec.save(out)
        .map_err(|e| output(&out.join(SPEC_FILE), &e))?;
    let opts = RunOptions::of(&spec, entry, Vec::new(), out.to_path_buf(), false);
    let schedule = opts.schedule();
    write_journal(out, &folders, &kept, &opts)?;
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

/// The merged journal, in number order, written beside and renamed into place; each entry is
/// checked against the schedule (the right players) on the way.
fn write_journal(
    out: &Path,
    folders: &[PathBuf],
    kept: &[(Place, usize)],
    opts: &RunOptions,
) -> Result<(), MergeError> {
    let path = out.join(JOURNAL_FILE);
    let tmp = out.join(format!("{JOURNAL_FILE}.merging"));
    let output = |e: std::io::Error| MergeError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let schedule = opts.schedule();
    let mut files: Vec<Option<File>> = folders.iter().map(|_| None).collect();
    let mut writer = std::io::BufWriter::new(File::create(&tmp).map_err(output)?);
    for (place, f) in kept {
        let source = folders[*f].join(JOURNAL_FILE);
        let unreadable = |e: &dyn std::fmt::Display| {
            MergeError::Input(format!("cannot read {}: {e}", source.display()))
        };
        if files[*f].is_none() {
            files[*f] = Some(File::open(&source).map_err(|e| unreadable(&e))?);
        }
        let file = files[*f].as_mut().expect("opened above");
        let Some(entry) = journal::read_at(file, place).map_err(|e| unreadable(&e))? else {
            continue;
        };
        let fits = entry.index < schedule.len()
            && entry.record.white == opts.engines[schedule.pairing(entry.index).white].name;
        if !fits {
            return Err(MergeError::Input(format!(
                "{}: game {} does not belong to this run's schedule",
                source.display(),
                u128::from(entry.index) + 1
            )));
        }
        let mut line = serde_json::to_vec(&entry)
            .map_err(std::io::Error::other)
            .map_err(output)?;
        line.push(b'\n');
        writer.write_all(&line).map_err(output)?;
    }
    let file = writer.into_inner().map_err(|e| output(e.into_error()))?;
    file.sync_all().map_err(output)?;
    std::fs::rename(&tmp, &path).map_err(output)
}
