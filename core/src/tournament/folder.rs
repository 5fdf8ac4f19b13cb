//! A run's folder, opened to play in: locked for this process, its spec saved, its journal
//! mended, and for a task of a split run its place among the run's tasks checked. The command
//! line says what happened (the notes); the run itself (`run::run`) then plays into it.

use super::claims;
use super::contents::{self, Compare};
use super::journal::{self, JOURNAL_FILE};
use super::spec::RunSpec;
use super::{lock_run_dir, RunError, RunLock};
use std::path::{Path, PathBuf};

/// A run folder held open for a run: the one owner of the folder, locked while it lives.
pub struct RunFolder {
    pub dir: PathBuf,
    /// Continue the run already in it.
    pub resume: bool,
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
    let saved = RunSpec::load(dir).map_err(RunError::Setup)?;
    if saved.identity() == spec.identity() {
        return Ok(true);
    }
    let how = super::spec::same_identity(&saved.identity(), &spec.identity())
        .err()
        .map(|how| format!(" ({how})"))
        .unwrap_or_default();
    Err(RunError::Setup(
        differing_file(spec, &saved).unwrap_or_else(|| {
            format!(
                "{} holds a shard of a different run{how}: give another --out or --name",
                dir.display()
            )
        }),
    ))
}

/// Why a task's settings are not its run's when only a file's content differs (a node with
/// another build of an engine, another book at the same path): the file, named.
fn differing_file(spec: &RunSpec, run: &RunSpec) -> Option<String> {
    let mut same_files = spec.clone();
    same_files.contents = run.contents.clone();
    if same_files.identity() != run.identity() {
        return None;
    }
    contents::check(spec, run.contents.as_ref(), Compare::BookAndPrograms)
        .err()
        .map(|why| format!("this task cannot join its run: {why}"))
}

impl RunFolder {
    /// Opens `dir` to play `spec`: a new run (refused if the folder holds one) or a resumed
    /// one.
    pub fn open(spec: &RunSpec, dir: &Path, resume: bool) -> Result<RunFolder, RunError> {
        open(spec, dir, resume)
    }

    /// Holds a folder whose journal is already written (a merged run), to write its reports.
    pub fn written(dir: &Path) -> Result<RunFolder, RunError> {
        Ok(RunFolder {
            dir: dir.to_path_buf(),
            resume: true,
            games_before: 0,
            notes: Vec::new(),
            _lock: lock_run_dir(dir).map_err(RunError::Setup)?,
        })
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.join(JOURNAL_FILE)
    }
}

fn open(spec: &RunSpec, dir: &Path, resume: bool) -> Result<RunFolder, RunError> {
    if let (Some(shard), Some(root)) = (spec.shard, dir.parent()) {
        // Before this task's folder is written: a task of another run is refused untouched.
        claims::join_run(root, &shard.folder(), &spec.identity()).map_err(|why| {
            let run =
                std::fs::read_to_string(root.join(claims::CLAIMS_DIR).join(claims::IDENTITY_FILE))
                    .ok()
                    .and_then(|text| serde_json::from_str::<RunSpec>(&text).ok());
            RunError::Setup(
                run.and_then(|run| differing_file(spec, &run))
                    .unwrap_or(why),
            )
        })?;
    }
    // Held until the run ends: a second arbiter on the same folder would play the same games.
    let lock = lock_run_dir(dir).map_err(RunError::Setup)?;
    let journal = dir.join(JOURNAL_FILE);
    if !resume && journal.exists() {
        return Err(RunError::Setup(format!(
            "{} already holds a run: continue it with --resume {}, or choose another --name/--out",
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
        dir: dir.to_path_buf(),
        resume,
        games_before,
        notes,
        _lock: lock,
    })
}

/// The run's folder and its I/O log, made before any engine starts: a sandbox hides what is
/// there when its engine starts, and an engine sees nothing made later. What this made is removed
/// again when it is dropped before `keep` (a run refused before it plays leaves no trace).
pub struct MadeBeforeEngines {
    made: Vec<PathBuf>,
}

impl MadeBeforeEngines {
    /// Makes `folder` and the file `log` (empty) where they are missing.
    pub fn make(folder: &Path, log: Option<&Path>) -> Result<MadeBeforeEngines, String> {
        let mut this = MadeBeforeEngines { made: Vec::new() };
        this.folder(folder)?;
        if let Some(log) = log.filter(|l| !l.exists()) {
            if let Some(parent) = log.parent().filter(|p| !p.as_os_str().is_empty()) {
                this.folder(parent)?;
            }
            std::fs::OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(log)
                .map_err(|e| format!("cannot make {}: {e}", log.display()))?;
            this.made.push(log.to_path_buf());
        }
        Ok(this)
    }

    fn folder(&mut self, folder: &Path) -> Result<(), String> {
        let mut missing = folder;
        let mut top = None;
        while !missing.as_os_str().is_empty() && !missing.exists() {
            top = Some(missing.to_path_buf());
            missing = missing.parent().unwrap_or(Path::new(""));
        }
        std::fs::create_dir_all(folder)
            .map_err(|e| format!("cannot make the folder {}: {e}", folder.display()))?;
        self.made.extend(top);
        Ok(())
    }

    /// `path` stays when the rest goes (the log of a run refused at its engines' start), and so
    /// do the folders it lies in.
    pub fn keep_file(&mut self, path: &Path) {
        self.made.retain(|m| !path.starts_with(m));
    }

    /// The run plays: what was made is its own now.
    pub fn keep(mut self) {
        self.made.clear();
    }
}

impl Drop for MadeBeforeEngines {
    fn drop(&mut self) {
        for path in self.made.iter().rev() {
            let _ = match path.is_dir() {
                true => std::fs::remove_dir_all(path),
                false => std::fs::remove_file(path),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::RunKind;

    /// Every user of the library (the command line, bench, merge, the engine tests) goes
    /// through this type, so every one of them holds the folder alone.
    #[test]
    fn a_folder_is_held_by_one_run_at_a_time_and_a_new_run_never_overwrites_one() {
        let dir = std::env::temp_dir().join(format!("arbiter-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let spec = RunSpec::new(RunKind::Match, Vec::new());
        let held = RunFolder::open(&spec, &dir, false).unwrap();
        let second = RunFolder::open(&spec, &dir, true)
            .err()
            .unwrap()
            .to_string();
        assert!(second.contains("another arbiter is playing"), "{second}");
        assert!(
            RunFolder::written(&dir).is_err(),
            "merge waits its turn too"
        );
        std::fs::write(held.journal(), "").unwrap();
        drop(held);
        let over = RunFolder::open(&spec, &dir, false)
            .err()
            .unwrap()
            .to_string();
        assert!(over.contains("already holds a run"), "{over}");
        assert!(RunFolder::open(&spec, &dir, true).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
