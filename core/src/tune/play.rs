//! Playing a tune: workers play game pairs between the engine's plus and minus settings, each
//! pair's result is journalled and then moves theta (see `ledger`), until every pair is played.

use super::journal::{self, PairEntry, PairGame, PairJournal, PAIRS_FILE};
use super::ledger::{Ledger, Next};
use super::split::TuneSplit;
use super::spsa::Probe;
use super::{TuneError, TuneSpec};
use crate::engine::log::IoLog;
use crate::game::GameEntry;
use crate::referee::{play_game, GameError, GameRecord, GameSpec, Player};
use crate::tournament::openings::Opening;
use crate::tournament::run::StopSignals;
use crate::tournament::schedule::opening_of_round;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};

pub struct TuneOptions {
    pub spec: TuneSpec,
    pub entry: &'static GameEntry,
    pub openings: Vec<Opening>,
    /// The folder this process writes: the tune's, or a split tune's task folder.
    pub dir: PathBuf,
}

/// Sent to the caller after each pair this process finished (or read back, for a split tune).
pub struct TuneProgress<'a> {
    pub done: u64,
    pub total: u64,
    pub theta: &'a [f64],
    pub score: [u64; 3],
}

pub struct TuneOutcome {
    /// `thetas[j]`: theta after `j` results.
    pub thetas: Vec<Vec<f64>>,
    pub score: [u64; 3],
    pub done: u64,
    /// Stopped by a signal: `--resume` plays the rest.
    pub interrupted: bool,
    /// Pairs read back from the journal when the tune started.
    pub resumed: u64,
    /// Lines of the journal that held no whole pair (their pairs were played again).
    pub damaged: Vec<usize>,
}

/// How long a worker waiting for a result sleeps before it asks again.
const WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// How many times in a row an engine may fail to start for one game before the tune stops.
const START_ATTEMPTS: u32 = 3;

struct Shared {
    opts: TuneOptions,
    ledger: Mutex<Ledger>,
    split: Option<Mutex<TuneSplit>>,
    stop: AtomicBool,
    log: Option<IoLog>,
}

impl Shared {
    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next pair this process plays: claimed from the other tasks of a split tune.
    fn next(&self) -> Next {
        let mut ledger = self.ledger();
        match &self.split {
            None => ledger.hand_out(|_| true),
            Some(split) => {
                let mut split = split.lock().unwrap_or_else(|e| e.into_inner());
                split.catch_up(&mut ledger);
                if ledger.is_done() {
                    return Next::Finished;
                }
                match ledger.hand_out(|k| split.claim(k)) {
                    // Pairs claimed by others still to finish: their results are awaited.
                    Next::Finished => Next::Wait,
                    other => other,
                }
            }
        }
    }
}

/// The opening pair `k` plays, by number in the book (1-based; 0 for the start position).
fn opening_of(opts: &TuneOptions, k: u64) -> usize {
    let n = opts.openings.len() as u64;
    if n == 0 {
        return 0;
    }
    let run = &opts.spec.run;
    opening_of_round(k, n, run.opening_order(), run.seed, run.book_start) as usize + 1
}

fn summary(record: &GameRecord, plus_white: bool) -> PairGame {
    PairGame {
        plus_white,
        result: record.outcome.as_str().to_string(),
        termination: record.termination.to_string(),
        plies: record.moves.len(),
    }
}

/// Plays pair `k` at `probe`: the plus side white in the first game, black in the second.
async fn play_pair(shared: &Shared, k: u64, probe: Probe) -> Result<PairEntry, GameError> {
    let opts = &shared.opts;
    let hidden = crate::engine::sandbox::run_files(
        &opts.dir,
        opts.spec.run.shard.is_some(),
        opts.spec.run.log.as_deref(),
    );
    let seats = crate::engine::sandbox::hide_from_each_other(
        &[
            opts.spec.seat(true, &probe.plus),
            opts.spec.seat(false, &probe.minus),
        ],
        &hidden,
    );
    let mut plus = Player::new(seats[0].clone());
    let mut minus = Player::new(seats[1].clone());
    let number = opening_of(opts, k);
    let opening = number.checked_sub(1).map(|i| &opts.openings[i]);
    let spec = GameSpec {
        entry: opts.entry,
        start_fen: opening.and_then(|o| o.fen.clone()),
        opening: opening.map(|o| o.moves.clone()).unwrap_or_default(),
        opening_number: number,
        round: k + 1,
        adjudication: opts.spec.run.adjudication(),
        check_pvs: opts.spec.run.check_pvs,
        rules: opts.spec.run.rules.clone(),
        course_clock: opts.spec.run.course_tester,
    };
    let mut games = Vec::new();
    let mut result = 0;
    for plus_white in [true, false] {
        let mut attempt = 1;
        let record = loop {
            let record = if plus_white {
                play_game(&spec, &mut plus, &mut minus, &shared.log, &mut |_| {}).await
            } else {
                play_game(&spec, &mut minus, &mut plus, &shared.log, &mut |_| {}).await
            };
            match record {
                Err(GameError::EngineStart { .. }) if attempt < START_ATTEMPTS => attempt += 1,
                other => break other,
            }
        };
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                plus.discard().await;
                minus.discard().await;
                return Err(e);
            }
        };
        let game = summary(&record, plus_white);
        result += match game.result.as_str() {
            "1-0" if plus_white => 1,
            "0-1" if !plus_white => 1,
            "1-0" | "0-1" => -1,
            _ => 0,
        };
        games.push(game);
    }
    plus.shutdown().await;
    minus.shutdown().await;
    Ok(PairEntry {
        pair: k,
        plus: probe.plus,
        minus: probe.minus,
        games,
        result,
    })
}

type Finished = (u64, Result<PairEntry, GameError>);

async fn worker(
    shared: Arc<Shared>,
    results: mpsc::Sender<Finished>,
    mut cancelled: watch::Receiver<bool>,
) {
    while !shared.stop.load(Ordering::SeqCst) {
        let (k, probe) = match shared.next() {
            Next::Play(k, probe) => (k, probe),
            Next::Finished => return,
            Next::Wait => {
                tokio::select! {
                    _ = tokio::time::sleep(WAIT) => {}
                    _ = cancelled.wait_for(|c| *c) => return,
                }
                continue;
            }
        };
        let entry = tokio::select! {
            entry = play_pair(&shared, k, probe) => entry,
            // Returning drops the players, which kills their engines.
            _ = cancelled.wait_for(|c| *c) => return,
        };
        if results.send((k, entry)).await.is_err() {
            return;
        }
    }
}

fn output_error(path: &Path, e: impl std::fmt::Display) -> TuneError {
    TuneError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Reads the pairs already in the journal (a resumed tune, a requeued task) into the ledger,
/// each checked to be a pair of this tune.
fn read_back(path: &Path, ledger: &mut Ledger) -> Result<(u64, Vec<usize>), TuneError> {
    let (entries, damaged) = journal::read(path).map_err(TuneError::Setup)?;
    let mut count = 0;
    for e in &entries {
        if e.pair >= ledger.spsa.pairs || e.plus.len() != ledger.spsa.params.len() {
            return Err(TuneError::Setup(format!(
                "{}: pair {} is not a pair of this tune",
                path.display(),
                e.pair + 1
            )));
        }
        count += u64::from(ledger.add(e));
    }
    if let Some(e) = entries
        .iter()
        .find(|e| ledger.played_as_scheduled(e) == Some(false))
    {
        return Err(TuneError::Setup(format!(
            "{}: pair {} was played at other values than this tune gives it: the journal is of \
             another tune",
            path.display(),
            e.pair + 1
        )));
    }
    Ok((count, damaged))
}

/// Whether the pairs journal in `dir` already holds every pair of this (unsplit) tune: then
/// resuming it plays nothing and needs no engine. A journal that cannot be read says no, and
/// the tune itself then reports why.
pub fn nothing_left(spec: &TuneSpec, dir: &Path) -> bool {
    let mut ledger = Ledger::new(spec.spsa());
    spec.run.shard.is_none()
        && read_back(&dir.join(PAIRS_FILE), &mut ledger).is_ok_and(|(done, _)| done >= spec.pairs)
}

/// Plays the tune into `opts.dir` (already locked and holding its spec), calling `on_pair` as
/// pairs finish.
pub async fn tune(
    opts: TuneOptions,
    mut on_pair: impl FnMut(TuneProgress),
) -> Result<TuneOutcome, TuneError> {
    let spec = &opts.spec;
    let journal_path = opts.dir.join(PAIRS_FILE);
    let mut ledger = Ledger::new(spec.spsa());
    let (resumed, damaged) = read_back(&journal_path, &mut ledger)?;
    let split = (spec.run.shard.is_some())
        .then(|| TuneSplit::join(&opts.dir, spec).map(Mutex::new))
        .transpose()
        .map_err(TuneError::Setup)?;
    let mut journal =
        PairJournal::open(&journal_path).map_err(|e| output_error(&journal_path, e))?;
    let log = (spec.run.log.as_ref())
        .map(|p| IoLog::create(p).map_err(|e| output_error(p, e)))
        .transpose()?;
    let concurrency = spec.run.concurrency.max(1);
    let total = spec.pairs;
    let shared = Arc::new(Shared {
        opts,
        ledger: Mutex::new(ledger),
        split,
        stop: AtomicBool::new(false),
        log: log.clone(),
    });
    let (tx, mut rx) = mpsc::channel::<Finished>(64);
    let (cancel, cancelled) = watch::channel(false);
    let threads = start_workers(&shared, concurrency, tx, cancelled)?;
    let mut interrupted = false;
    let mut failure = None;
    let mut signals = StopSignals::install();
    loop {
        let next = tokio::select! {
            next = rx.recv() => next,
            _ = signals.recv() => { interrupted = true; None }
        };
        let Some((k, entry)) = next else { break };
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                shared.ledger().give_back(k);
                failure.get_or_insert(TuneError::EngineStart(e.to_string()));
                shared.stop.store(true, Ordering::SeqCst);
                continue;
            }
        };
        // On disk first: a pair counts only once it is in the journal.
        if let Err(e) = journal.append(&entry) {
            failure.get_or_insert(output_error(&journal_path, e));
            shared.stop.store(true, Ordering::SeqCst);
            let _ = cancel.send(true);
            break;
        }
        if let Some(split) = &shared.split {
            split.lock().unwrap_or_else(|e| e.into_inner()).finished(k);
        }
        let ledger = shared.ledger();
        ledger_add(ledger, &entry, total, &mut on_pair);
    }
    if interrupted || failure.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
        let _ = cancel.send(true);
    }
    drop(rx);
    let _ = tokio::task::spawn_blocking(move || {
        for t in threads {
            let _ = t.join();
        }
    })
    .await;
    if let Some(log) = &log {
        log.flush();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    end_of(&shared, interrupted, resumed, damaged)
}

/// The tune's outcome once its workers are done: a split tune's pairs played elsewhere caught
/// up, and its claim ended.
fn end_of(
    shared: &Shared,
    interrupted: bool,
    resumed: u64,
    damaged: Vec<usize>,
) -> Result<TuneOutcome, TuneError> {
    let mut ledger = shared.ledger();
    if let Some(split) = &shared.split {
        let mut split = split.lock().unwrap_or_else(|e| e.into_inner());
        split.catch_up(&mut ledger);
        split.end();
        if let Some(e) = split.error.take() {
            return Err(TuneError::Setup(e));
        }
    }
    Ok(TuneOutcome {
        thetas: ledger.thetas.clone(),
        score: ledger.score,
        done: ledger.applied(),
        interrupted: interrupted || !ledger.is_done(),
        resumed,
        damaged,
    })
}

/// `concurrency` threads, each with its own runtime, playing pairs until there are none left.
fn start_workers(
    shared: &Arc<Shared>,
    concurrency: usize,
    tx: mpsc::Sender<Finished>,
    cancelled: watch::Receiver<bool>,
) -> Result<Vec<std::thread::JoinHandle<()>>, TuneError> {
    let mut threads = Vec::new();
    for slot in 0..concurrency {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TuneError::Setup(format!("cannot start the pair workers: {e}")))?;
        let (shared, tx, cancelled) = (shared.clone(), tx.clone(), cancelled.clone());
        let thread = std::thread::Builder::new()
            .name(format!("tune worker {}", slot + 1))
            .spawn(move || runtime.block_on(worker(shared, tx, cancelled)))
            .map_err(|e| TuneError::Setup(format!("cannot start the pair workers: {e}")))?;
        threads.push(thread);
    }
    Ok(threads)
}

fn ledger_add(
    mut ledger: std::sync::MutexGuard<'_, Ledger>,
    entry: &PairEntry,
    total: u64,
    on_pair: &mut impl FnMut(TuneProgress),
) {
    ledger.add(entry);
    on_pair(TuneProgress {
        done: ledger.finished(),
        total,
        theta: ledger.theta(),
        score: ledger.score,
    });
}
