//! Matches between engines: schedules, opening books, concurrent play, results.

pub mod openings;
pub mod runner;

use crate::engine::log::IoLog;
use crate::engine::EngineConfig;
use crate::game::{Color, GameEntry, Termination};
use crate::pgn::write_game;
use crate::referee::{Adjudication, GameRecord};
use crate::stats::Wdl;
use openings::Opening;
use runner::{run_schedule, MatchSchedule, RunSettings};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use thiserror::Error;
use tokio::sync::mpsc;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("cannot write {path}: {reason}")]
    Output { path: String, reason: String },
    #[error("{0}")]
    Setup(String),
}

pub struct MatchOptions {
    pub entry: &'static GameEntry,
    /// Exactly two: the first is the one whose score is reported.
    pub engines: Vec<EngineConfig>,
    pub games: u64,
    pub concurrency: usize,
    /// Empty: every game from the start position.
    pub openings: Vec<Opening>,
    pub random_order: bool,
    pub seed: u64,
    pub adjudication: Adjudication,
    pub pgnout: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub event: String,
}

/// What a match produced, from the first engine's point of view.
#[derive(Clone, Debug, Default)]
pub struct MatchSummary {
    pub wdl: Wdl,
    pub terminations: BTreeMap<String, u64>,
    /// Per engine move: time the referee measured minus the time the engine reported, in µs.
    pub latency_us: Vec<i64>,
    pub time_forfeits: u64,
}

impl MatchSummary {
    fn add(&mut self, record: &GameRecord, first: &str) {
        let first_is_white = record.white == first;
        match (record.winner(), first_is_white) {
            (None, _) => self.wdl.draws += 1,
            (Some(Color::White), true) | (Some(Color::Black), false) => self.wdl.wins += 1,
            _ => self.wdl.losses += 1,
        }
        *self
            .terminations
            .entry(record.termination.to_string())
            .or_insert(0) += 1;
        if record.termination == Termination::TimeForfeit {
            self.time_forfeits += 1;
        }
        for m in &record.moves {
            if let Some(us) = m.reported_us {
                self.latency_us
                    .push(m.elapsed.as_micros() as i64 - us as i64);
            }
        }
    }
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

/// Plays the match, calling `on_game` after each game with the running result.
pub async fn run_match(
    opts: MatchOptions,
    mut on_game: impl FnMut(&GameRecord, &MatchSummary),
) -> Result<MatchSummary, RunError> {
    for cfg in &opts.engines {
        check_engine_command(cfg).map_err(RunError::Setup)?;
    }
    if opts.engines.len() != 2 || opts.engines[0].name == opts.engines[1].name {
        return Err(RunError::Setup(
            "a match needs two engines with different names (use name=)".into(),
        ));
    }
    let log = match &opts.log {
        Some(path) => Some(IoLog::create(path).map_err(|e| RunError::Output {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?),
        None => None,
    };
    let mut pgn = match &opts.pgnout {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| RunError::Output {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?,
        ),
        None => None,
    };
    let first = opts.engines[0].name.clone();
    let schedule = Arc::new(MatchSchedule {
        games: opts.games,
        openings: opts.openings.len(),
        seed: opts.seed,
        random_order: opts.random_order,
    });
    let settings = Arc::new(RunSettings {
        entry: opts.entry,
        engines: opts.engines,
        openings: opts.openings,
        concurrency: opts.concurrency,
        adjudication: opts.adjudication,
        log: log.clone(),
    });
    let (tx, mut rx) = mpsc::channel(64);
    let stop = Arc::new(AtomicBool::new(false));
    let runner = tokio::spawn(run_schedule(
        settings,
        schedule,
        Arc::new(|_| false),
        stop,
        tx,
    ));
    let mut summary = MatchSummary::default();
    let mut setup_error = None;
    while let Some((_, result)) = rx.recv().await {
        let record = match result {
            Ok(r) => r,
            Err(e) => {
                setup_error.get_or_insert(e);
                continue;
            }
        };
        summary.add(&record, &first);
        if let (Some(file), Some(path)) = (&mut pgn, &opts.pgnout) {
            file.write_all(write_game(&record, &opts.event).as_bytes())
                .and_then(|_| file.flush())
                .map_err(|e| RunError::Output {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?;
        }
        on_game(&record, &summary);
    }
    let _ = runner.await;
    if let Some(log) = &log {
        log.flush();
    }
    match setup_error {
        Some(e) => Err(RunError::Setup(e)),
        None => Ok(summary),
    }
}
