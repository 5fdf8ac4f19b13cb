//! A run: its output directory, its journal, resume, SPRT stopping and the final reports.

use super::journal::{self, Entry, Journal};
use super::openings::Opening;
use super::report::{write_reports, RunInfo};
use super::results::Totals;
use super::runner::{self, start_workers, RunSettings, Schedule};
use super::schedule::{Format, PairSchedule};
use super::RunError;
use crate::engine::log::IoLog;
use crate::engine::EngineConfig;
use crate::game::GameEntry;
use crate::referee::{Adjudication, GameError, GameRecord};
use crate::stats::{Decision, RatingOptions, Sprt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

pub struct RunOptions {
    pub entry: &'static GameEntry,
    pub engines: Vec<EngineConfig>,
    pub format: Format,
    pub rounds: u64,
    /// Cap on the number of games (for matches of `--games N`).
    pub limit: Option<u64>,
    pub concurrency: usize,
    pub openings: Vec<Opening>,
    pub random_order: bool,
    pub seed: u64,
    pub adjudication: Adjudication,
    pub out_dir: PathBuf,
    pub event: String,
    pub sprt: Option<Sprt>,
    pub rating: RatingOptions,
    /// Also write all engine I/O to this file.
    pub log: Option<PathBuf>,
    /// Continue the run already in `out_dir`.
    pub resume: bool,
    /// Pin each concurrent game (its referee thread and both engines) to one CPU.
    pub affinity: bool,
}

/// Sent to the caller after each finished game.
pub struct Progress<'a> {
    /// The game's number in the run's schedule (1-based), as games.csv's id.
    pub game: u64,
    pub done: u64,
    pub total: u64,
    pub record: &'a GameRecord,
    pub totals: &'a Totals,
    pub llr: Option<f64>,
}

pub struct RunOutcome {
    pub totals: Totals,
    pub decision: Option<Decision>,
    pub llr: Vec<f64>,
    /// Measured minus engine-reported thinking time per move, in µs (the first 200,000 moves).
    pub latency_us: Vec<i64>,
    pub time_forfeits: u64,
    /// Games of the schedule not played (a decided SPRT, or an interruption).
    pub unplayed: u64,
    /// Stopped by SIGINT or SIGTERM: the finished games are kept, `--resume` plays the rest.
    pub interrupted: bool,
}

const LATENCY_SAMPLES: usize = 200_000;

/// Waits for the signal, or forever if it could not be installed.
async fn next_signal(sig: &mut Option<Signal>) {
    match sig {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// A fixed-size set of finished game indices.
struct Bitset(Vec<u64>);

impl Bitset {
    fn new(len: u64) -> Bitset {
        Bitset(vec![0; (len as usize).div_ceil(64)])
    }
    fn insert(&mut self, i: u64) -> bool {
        let (w, b) = ((i / 64) as usize, i % 64);
        match self.0.get_mut(w) {
            Some(word) => {
                let fresh = *word & (1 << b) == 0;
                *word |= 1 << b;
                fresh
            }
            None => false,
        }
    }
    fn contains(&self, i: u64) -> bool {
        self.0
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

fn output_error(path: &std::path::Path, e: impl std::fmt::Display) -> RunError {
    RunError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Counts a game and updates the SPRT; returns the new LLR when a pair was completed.
fn count(
    totals: &mut Totals,
    llr: &mut Vec<f64>,
    sprt: &Option<Sprt>,
    index: u64,
    record: &GameRecord,
) -> Option<f64> {
    let before = totals.head_to_head().pairs();
    totals.add(record, Some(PairSchedule::pair_of(index)));
    let sprt = sprt.as_ref()?;
    let pairs = totals.head_to_head();
    if pairs.pairs() == before {
        return None;
    }
    let value = sprt.llr(&pairs);
    llr.push(value);
    Some(value)
}

fn run_info<'a>(
    opts: &'a RunOptions,
    llr: &'a [f64],
    interrupted: bool,
    decision: Option<Decision>,
) -> RunInfo<'a> {
    let tags: Vec<String> = opts.engines.iter().map(|e| e.limits_summary()).collect();
    let time_controls = if tags.iter().all(|t| *t == tags[0]) {
        tags[0].clone()
    } else {
        tags.join(", ")
    };
    RunInfo {
        event: &opts.event,
        game: opts.entry.id,
        format: if opts.engines.len() == 2 {
            "match"
        } else {
            opts.format.as_str()
        },
        time_controls,
        sprt: opts.sprt.map(|s| (s, llr)),
        rating: &opts.rating,
        interrupted,
        decision,
        engines: &opts.engines,
    }
}

pub async fn run(
    opts: RunOptions,
    mut on_game: impl FnMut(Progress),
) -> Result<RunOutcome, RunError> {
    for cfg in &opts.engines {
        super::check_engine_command(cfg).map_err(RunError::Setup)?;
    }
    let names: Vec<String> = opts.engines.iter().map(|e| e.name.clone()).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(RunError::Setup(format!(
                "two engines are named '{n}': give each a different name="
            )));
        }
    }
    if opts.engines.len() < 2 {
        return Err(RunError::Setup("a run needs at least two engines".into()));
    }
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| output_error(&opts.out_dir, e))?;
    let journal_path = opts.out_dir.join(journal::JOURNAL_FILE);
    if !opts.resume && journal_path.exists() {
        return Err(RunError::Setup(format!(
            "{} already holds a run: continue it with --resume {}, or choose another --name/--out",
            opts.out_dir.display(),
            opts.out_dir.display()
        )));
    }
    let schedule = Arc::new(PairSchedule {
        engines: opts.engines.len(),
        format: opts.format,
        rounds: opts.rounds,
        limit: opts.limit,
        openings: opts.openings.len(),
        seed: opts.seed,
        random_order: opts.random_order,
    });
    let total = schedule.len();
    let mut totals = Totals::new(names.clone());
    let mut llr = Vec::new();
    let mut done = Bitset::new(total);
    let mut played = 0u64;
    let mut bad_resume = None;
    journal::repair(&journal_path).map_err(|e| output_error(&journal_path, e))?;
    journal::read(&journal_path, |entry| {
        if entry.index < total && done.insert(entry.index) {
            // Only games this run's schedule knows count; a duplicate line counts once.
            if entry.record.white != names[schedule.pairing(entry.index).white] {
                bad_resume.get_or_insert(format!(
                    "game {} in the journal does not match this run's schedule",
                    entry.index + 1
                ));
            }
            count(
                &mut totals,
                &mut llr,
                &opts.sprt,
                entry.index,
                &entry.record,
            );
            played += 1;
        }
    })
    .map_err(RunError::Setup)?;
    if let Some(e) = bad_resume {
        return Err(RunError::Setup(e));
    }
    let mut decision = opts
        .sprt
        .as_ref()
        .and_then(|s| llr.last().map(|&v| s.decide(v)))
        .filter(|d| *d != Decision::Continue);
    let mut journal = Journal::open(&journal_path).map_err(|e| output_error(&journal_path, e))?;
    let log = match &opts.log {
        Some(p) => Some(IoLog::create(p).map_err(|e| output_error(p, e))?),
        None => None,
    };
    let settings = Arc::new(RunSettings {
        entry: opts.entry,
        engines: opts.engines.clone(),
        openings: opts.openings.clone(),
        concurrency: opts.concurrency,
        adjudication: opts.adjudication,
        log: log.clone(),
        affinity: opts.affinity,
    });
    let stop = Arc::new(AtomicBool::new(decision.is_some()));
    let done = Arc::new(done);
    let skip = {
        let done = done.clone();
        Arc::new(move |i: u64| done.contains(i))
    };
    let (tx, mut rx) = mpsc::channel(64);
    let workers = start_workers(settings, schedule.clone(), skip, stop.clone(), tx)
        .map_err(|e| RunError::Setup(format!("cannot start the game workers: {e}")))?;
    let mut latency_us = Vec::new();
    let mut time_forfeits = 0;
    let mut setup_error = None;
    let mut interrupted = false;
    let mut sigint = signal(SignalKind::interrupt()).ok();
    let mut sigterm = signal(SignalKind::terminate()).ok();
    loop {
        let next = tokio::select! {
            next = rx.recv() => next,
            _ = next_signal(&mut sigint) => { interrupted = true; None }
            _ = next_signal(&mut sigterm) => { interrupted = true; None }
        };
        let Some((index, result)) = next else { break };
        let record = match result {
            Ok(r) => r,
            Err(e) => {
                setup_error.get_or_insert(e);
                stop.store(true, Ordering::SeqCst);
                continue;
            }
        };
        // On disk first: a game counts only once it is in the journal.
        let entry = Entry { index, record };
        if let Err(e) = journal.append(&entry) {
            // A full disk or a lost folder: stop at once, end the games in progress and their
            // engines; the games already in the journal stay, and --resume plays the rest.
            stop.store(true, Ordering::SeqCst);
            workers.cancel();
            drop(rx);
            workers.join().await;
            return Err(output_error(&journal_path, e));
        }
        let record = entry.record;
        played += 1;
        if record.termination == crate::game::Termination::TimeForfeit {
            time_forfeits += 1;
        }
        for m in &record.moves {
            if let (Some(us), true) = (m.reported_us, latency_us.len() < LATENCY_SAMPLES) {
                latency_us.push(m.elapsed.as_micros() as i64 - us as i64);
            }
        }
        let value = count(&mut totals, &mut llr, &opts.sprt, index, &record);
        if let (Some(sprt), Some(v)) = (&opts.sprt, value) {
            let d = sprt.decide(v);
            if d != Decision::Continue && decision.is_none() {
                decision = Some(d);
                stop.store(true, Ordering::SeqCst);
            }
        }
        on_game(Progress {
            game: index + 1,
            done: played,
            total,
            record: &record,
            totals: &totals,
            llr: llr.last().copied(),
        });
    }
    if interrupted {
        // Games in progress are abandoned: their engines are dropped, which kills them.
        stop.store(true, Ordering::SeqCst);
        workers.cancel();
    }
    // A worker still sending a result sees the channel closed.
    drop(rx);
    workers.join().await;
    if let Some(log) = &log {
        log.flush();
    }
    match setup_error {
        Some(GameError::BadStart(e)) => return Err(RunError::Setup(e)),
        Some(e @ GameError::EngineStart { .. }) => {
            let info = run_info(&opts, &llr, interrupted, decision);
            write_reports(&opts.out_dir, &totals, &info)
                .map_err(|e| output_error(&opts.out_dir, e))?;
            return Err(RunError::EngineStart(format!(
                "{e} ({} times in a row); the run stopped after {played} finished games, \
                 and no result is reported from games an engine never played",
                runner::START_ATTEMPTS
            )));
        }
        None => {}
    }
    let info = run_info(&opts, &llr, interrupted, decision);
    write_reports(&opts.out_dir, &totals, &info).map_err(|e| output_error(&opts.out_dir, e))?;
    Ok(RunOutcome {
        totals,
        decision,
        llr,
        latency_us,
        time_forfeits,
        unplayed: total - played.min(total),
        interrupted,
    })
}
