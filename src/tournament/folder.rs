//! A run's folder, opened to play in: locked for this process, its spec saved, its journal
//! mended, and for a task of a split run its place among the run's tasks checked. The command
//! line says what happened (the notes); the run itself (`run::run`) then plays into it.

use super::claims;
use super::journal::{self, JOURNAL_FILE};
use super::spec::RunSpec;
use super::{lock_run_dir, RunError, RunLock};
use std::path::Path;

/// A run folder held open for a run.
pub struct RunFolder {
    /// Games already in the journal.
    pub games_before: u64,
    /// What was found and mended, for the user (a requeued task, a torn journal).
    pub notes: Vec<String>,
    _lock: RunLock,
}

/// Whether a task of a split run, started in a folder that already holds its journal (a
/// requeued cluster task), continues it: yes when it is the same run (its concurrency, or how
/// its folder was spelt, may differ); another run there is refused.
pub fn continues_task(spec: &RunSpec, dir: &Path) -> Result<bool, RunError> {
    if spec.shard.is_none() || !dir.join(JOURNAL_FILE).exists() {
        return Ok(false);
    }
    match RunSpec::load(dir).map_err(RunError::Setup)? {
        Some(saved) if saved.identity() == spec.identity() => Ok(true),
        _ => Err(RunError::Setup(format!(
            "{} holds a shard of a different run: give another --out or --name",
            dir.display()
        ))),
    }
}

/// Opens `dir` for `spec`: a new run (refused if the folder holds one) or a resumed one.
pub fn open(spec: &RunSpec, dir: &Path, resume: bool) -> Result<RunFolder, RunError> {
    if let (Some(shard), Some(root)) = (spec.shard, dir.parent()) {
        // Before this task's folder is written: a task of another run is refused untouched.
        claims::join_run(root, &shard.folder(), &spec.identity()).map_err(RunError::Setup)?;
    }
    // Held until the run ends: a second arbiter on the same folder would play the same games.
    let lock = lock_run_dir(dir).map_err(RunError::Setup)?;
    let journal = dir.join(JOURNAL_FILE);
    if !resume && journal.exists() {
        return Err(RunError::Setup(format!(
            "{} already holds a run: continue it with --resume {}",
            dir.display(),
            dir.display()
        )));
    }
    // A continued task of a split run keeps its settings of now (its concurrency may differ).
    if !resume || spec.shard.is_some() {
        spec.save(dir).map_err(|e| RunError::Output {
            path: dir.join(super::spec::SPEC_FILE).display().to_string(),
            reason: e.to_string(),
        })?;
    }
    let mut notes = Vec::new();
    let mut games_before = 0;
    if resume {
        if let Some(note) = journal::repair(&journal).map_err(|e| RunError::Output {
            path: journal.display().to_string(),
            reason: format!("cannot repair it: {e}"),
        })? {
            notes.push(note);
        }
        let summary = journal::read(&journal, |_| ()).map_err(RunError::Setup)?;
        notes.extend(summary.note(&journal));
        games_before = summary.entries;
    }
    Ok(RunFolder {
        games_before,
        notes,
        _lock: lock,
    })
}
