//! What a run's files hold, by content: the book and each engine's program. A run's record
//! names files by path, and a path on another node (or the same path after a rebuild) can hold
//! something else; the content hash in `run.json` lets a resumed run, a task of a split run and a
//! merge see that before they play or prove a game.

use super::spec::RunSpec;
use crate::engine::EngineConfig;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The SHA-256 of the run's book and programs, as lowercase hex.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contents {
    /// The book's, when the run plays from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub book: Option<String>,
    /// Each engine's program, in the order of the run's engines; `None` for a program not found
    /// (a bare name not on PATH: the engine's start will say so).
    #[serde(default)]
    pub programs: Vec<Option<String>>,
}

/// The hash of a file's content. An engine's program may be tens of megabytes, and its hash was
/// most of a short match's own CPU time: a file hashed before is looked up in the hash cache
/// (by its identity and times, see `hash_cache`) instead of being read again.
pub fn file_hash(path: &Path) -> std::io::Result<String> {
    if let Some(hash) = super::hash_cache::lookup(path) {
        return Ok(hash);
    }
    let hash = hash_content(path)?;
    super::hash_cache::remember(path, &hash);
    Ok(hash)
}

/// The SHA-256 of a file, read in large pieces (each read a system call).
pub fn hash_content(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = crate::input::open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The file an engine's command runs: a path (from the engine's `dir` when relative), else the
/// name looked up on PATH as the start will.
pub fn program_of(cfg: &EngineConfig) -> Option<PathBuf> {
    if cfg.cmd.contains('/') {
        return Some(match &cfg.dir {
            Some(dir) if !cfg.cmd.starts_with('/') => Path::new(dir).join(&cfg.cmd),
            _ => PathBuf::from(&cfg.cmd),
        });
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&cfg.cmd))
        .find(|p| p.is_file())
}

/// The contents of `spec`'s files as they are now. A book that cannot be read is an error
/// naming it; a program that is not found is left unhashed.
pub fn of(spec: &RunSpec) -> Result<Contents, String> {
    let book = match &spec.openings {
        Some(path) => Some(file_hash(path).map_err(|e| format!("{}: {e}", path.display()))?),
        None => None,
    };
    // Engines of a run often share one program (versions by options, self-play): each file is
    // hashed once.
    let mut hashed: Vec<(PathBuf, Option<String>)> = Vec::new();
    let programs = spec
        .engines
        .iter()
        .map(|cfg| {
            let path = program_of(cfg)?;
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            if let Some((_, hash)) = hashed.iter().find(|(p, _)| *p == path) {
                return hash.clone();
            }
            let hash = file_hash(&path).ok();
            hashed.push((path, hash.clone()));
            hash
        })
        .collect();
    Ok(Contents { book, programs })
}

/// Which of a run's files to compare: a finished run resumed, or a merge, needs its book only
/// (its engines play no more games and may be gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    BookOnly,
    BookAndPrograms,
}

/// Refuses `spec`'s files where they differ from what the run recorded (`recorded`), naming the
/// file and both hashes. A run recorded without contents (before they were recorded) is taken
/// as it is.
pub fn check(spec: &RunSpec, recorded: Option<&Contents>, what: Compare) -> Result<(), String> {
    let Some(recorded) = recorded else {
        return Ok(());
    };
    if let (Some(path), Some(was)) = (&spec.openings, &recorded.book) {
        let now = file_hash(path).map_err(|e| format!("the run's book {}: {e}", path.display()))?;
        if &now != was {
            return Err(differs("book", path, was, &now));
        }
    }
    if what == Compare::BookOnly {
        return Ok(());
    }
    for (i, cfg) in spec.engines.iter().enumerate() {
        let Some(Some(was)) = recorded.programs.get(i) else {
            continue;
        };
        let Some(path) = program_of(cfg) else {
            return Err(format!(
                "engine '{}': its program {} is not here (the run was played with it)",
                cfg.name, cfg.cmd
            ));
        };
        let now = file_hash(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if &now != was {
            return Err(differs(
                &format!("engine '{}': its program", cfg.name),
                &path,
                was,
                &now,
            ));
        }
    }
    Ok(())
}

fn differs(what: &str, path: &Path, was: &str, now: &str) -> String {
    format!(
        "{what} {} is not the one the run was played with (its SHA-256 was {}…, is now {}…): \
         put the run's file back, or start a new run",
        path.display(),
        &was[..12.min(was.len())],
        &now[..12.min(now.len())]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_hash_is_its_sha256() {
        let dir = std::env::temp_dir().join(format!("arbiter-contents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("abc");
        std::fs::write(&path, "abc").unwrap();
        assert_eq!(
            file_hash(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
