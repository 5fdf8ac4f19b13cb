//! Matches between engines: schedules, opening books, concurrent play, results.

mod affinity;
pub mod bookgen;
pub mod import;
pub mod journal;
pub mod openings;
pub mod report;
pub mod results;
pub mod run;
pub mod runner;
pub mod schedule;

use crate::engine::EngineConfig;
use std::path::PathBuf;
use thiserror::Error;

pub use run::{run, Progress, RunOptions, RunOutcome};
pub use schedule::Format;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("cannot write {path}: {reason}")]
    Output { path: String, reason: String },
    #[error("{0}")]
    Setup(String),
}

/// A command given to the engine that is a plain file path must exist; a bare name is looked up
/// on PATH when the engine starts.
pub fn check_engine_command(cfg: &EngineConfig) -> Result<(), String> {
    if cfg.cmd.contains('/') {
        let path = match &cfg.dir {
            Some(dir) if !cfg.cmd.starts_with('/') => std::path::Path::new(dir).join(&cfg.cmd),
            _ => PathBuf::from(&cfg.cmd),
        };
        if !path.is_file() {
            return Err(format!(
                "engine '{}': no such program {}",
                cfg.name,
                path.display()
            ));
        }
    }
    Ok(())
}
