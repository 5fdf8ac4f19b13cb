//! The one migration between on-disk formats: `arbiter adopt` makes a folder the build before
//! wrote (folder format 1, or older still with its key kept inside it) a folder of this build's
//! format, in place. Nothing else in arbiter reads an earlier format; it names this command.
//!
//! What changes: each settings file (`run.json`, a tune's `tune.json`, a bisect's
//! `bisect-spec.json`, a split run's `claims/run.json`) is written as this build writes it,
//! stating its format, with the opening order the run began with (`legacy`, the only one of
//! format 1) recorded; each is sealed again under its run's id, so the journals' seals still
//! hold. A folder sealed with a key inside it is first taken over by the owner's key
//! (`proof::adopt`).

use crate::bisect::drive::SPEC_FILE as BISECT_FILE;
use crate::bisect::BisectSpec;
use crate::proof;
use crate::tournament::claims::{CLAIMS_DIR, IDENTITY_FILE};
use crate::tournament::shuffle::Shuffle;
use crate::tournament::spec::{RunSpec, FOLDER_FORMAT, SPEC_FILE};
use crate::tune::spec::{TuneSpec, TUNE_FILE};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One settings file to write in this build's format.
struct Rewrite {
    path: PathBuf,
    text: String,
    /// Sealed under its run's id (a run's or a tune's settings); a split run's identity is not.
    sealed: bool,
}

/// Upgrades the folders under `root` (itself and two levels down) to this build's format:
/// everything is read and checked before anything is written. Returns what was done, a line
/// per folder.
pub fn adopt(root: &Path) -> Result<Vec<String>, String> {
    let folders = proof::folders_within(root);
    let mut rewrites = Vec::new();
    for dir in &folders {
        rewrites.extend(rewrites_in(dir)?);
    }
    let legacy_keys = folders.iter().any(|d| d.join(proof::KEY_FILE).is_file());
    if rewrites.is_empty() && !legacy_keys {
        return Err(format!(
            "{}: nothing to upgrade: its folders are in this build's format ({FOLDER_FORMAT})",
            root.display()
        ));
    }
    for r in &rewrites {
        let dir = r.path.parent().unwrap_or(Path::new("."));
        if let Some(why) = crate::output::not_the_callers(dir) {
            return Err(format!(
                "cannot upgrade {}: {why}, and only its owner may",
                dir.display()
            ));
        }
        // A folder with its key inside is checked with that key by `proof::adopt`.
        if r.sealed && !dir.join(proof::KEY_FILE).exists() {
            let before =
                std::fs::read(&r.path).map_err(|e| format!("{}: {e}", r.path.display()))?;
            proof::check_spec(dir, &file_name(&r.path), &before)
                .map_err(|why| format!("{why}; nothing was upgraded"))?;
        }
    }
    let mut done: Vec<String> = proof::adopt(root)?
        .into_iter()
        .map(|a| {
            format!(
                "adopted {}: {} records sealed again with your key",
                a.folder.display(),
                a.lines
            )
        })
        .collect();
    for r in &rewrites {
        write(r).map_err(|e| format!("{}: {e}", r.path.display()))?;
        done.push(format!(
            "upgraded {} to folder format {FOLDER_FORMAT}",
            r.path.display()
        ));
    }
    Ok(done)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The settings files of `dir` that are not in this build's format, as this build writes them.
fn rewrites_in(dir: &Path) -> Result<Vec<Rewrite>, String> {
    let mut found = Vec::new();
    let is_claims = dir.file_name().is_some_and(|n| n == CLAIMS_DIR);
    for name in [SPEC_FILE, TUNE_FILE, BISECT_FILE] {
        let path = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let value: Value = serde_json::from_str(&text).map_err(|e| at(&e))?;
        let text = match (name, is_claims) {
            (IDENTITY_FILE, true) => match upgraded_identity(value).map_err(|e| at(&e))? {
                Some(identity) => identity,
                None => continue,
            },
            (SPEC_FILE, false) => match upgraded_run(value).map_err(|e| at(&e))? {
                Some(run) => pretty(&run),
                None => continue,
            },
            (TUNE_FILE, _) => match upgraded_tune(value).map_err(|e| at(&e))? {
                Some(tune) => pretty(&tune),
                None => continue,
            },
            _ => match upgraded_bisect(value).map_err(|e| at(&e))? {
                Some(bisect) => pretty(&bisect),
                None => continue,
            },
        };
        found.push(Rewrite {
            path,
            text,
            sealed: !is_claims,
        });
    }
    Ok(found)
}

fn pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("settings are plain data") + "\n"
}

/// A run's settings of folder format 1 in this build's format; `None` where they already are.
fn upgraded_run(mut value: Value) -> Result<Option<RunSpec>, String> {
    match value.get("folder_format").and_then(Value::as_u64) {
        Some(n) if n == u64::from(FOLDER_FORMAT) => return Ok(None),
        Some(n) => return Err(format!("folder format {n}, which this build cannot read")),
        None => {}
    }
    let Some(fields) = value.as_object_mut() else {
        return Err("not a run's settings".into());
    };
    if fields.contains_key("args") && !fields.contains_key("engines") {
        return Err(
            "a run from before settings were saved typed, which cannot be upgraded: \
                    start it again"
                .into(),
        );
    }
    fields.insert("folder_format".into(), FOLDER_FORMAT.into());
    // Format 1 shuffled a random-order book one way only.
    fields
        .entry("shuffle")
        .or_insert(serde_json::to_value(Shuffle::Legacy).expect("plain"));
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// A split run's identity upgraded: a run's, or a tune's or a bisect's with its run's inside.
fn upgraded_identity(mut value: Value) -> Result<Option<String>, String> {
    if value.get("kind").is_some() {
        return Ok(upgraded_run(value)?.map(|run| run.identity()));
    }
    let run = value
        .get("run")
        .cloned()
        .ok_or("not a split run's settings")?;
    let Some(run) = upgraded_run(run)? else {
        return Ok(None);
    };
    value["run"] = serde_json::to_value(run.unsplit()).expect("plain");
    // Every bisect of this build may play a version against the one before it; which ones a
    // bisect played, its steps' folders say.
    if let Some(bisect) = value.get_mut("bisect").and_then(Value::as_object_mut) {
        bisect.remove("probes");
    }
    Ok(Some(value.to_string()))
}

/// A tune's settings with its run's upgraded; `None` where they already are current.
fn upgraded_tune(mut value: Value) -> Result<Option<TuneSpec>, String> {
    let run = value.get("run").cloned().ok_or("not a tune's settings")?;
    let Some(run) = upgraded_run(run)? else {
        return Ok(None);
    };
    value["run"] = serde_json::to_value(run).expect("plain");
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// A bisect's settings with its games' upgraded; `None` where they already are current.
fn upgraded_bisect(mut value: Value) -> Result<Option<BisectSpec>, String> {
    let games = value
        .get("games")
        .cloned()
        .ok_or("not a bisect's settings")?;
    let Some(games) = upgraded_run(games)? else {
        return Ok(None);
    };
    value["games"] = serde_json::to_value(games).expect("plain");
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Writes a settings file whole (under a random name, renamed into place), sealed first under
/// the id its run had, so that its journals' seals hold.
fn write(r: &Rewrite) -> std::io::Result<()> {
    if r.sealed {
        let dir = r.path.parent().unwrap_or(Path::new("."));
        let name = file_name(&r.path);
        let id = proof::run_id(dir, &name);
        proof::seal_spec_as(dir, &name, r.text.as_bytes(), id.as_deref())?;
    }
    crate::output::replace(&r.path, r.text.as_bytes())
}
