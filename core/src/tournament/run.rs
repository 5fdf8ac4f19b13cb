//! A run: its output directory, its journal, resume, SPRT stopping and the final reports.

use super::folder::RunFolder;
use super::journal::{self, Entry, Journal};
use super::ledger::{Bitset, Ledger};
use super::live::Live;
use super::openings::Opening;
use super::pooled_sprt::Tally;
use super::runner::{self, start_workers, GameSource, InOrder, Results, RunSettings, Schedule};
use super::schedule::PairSchedule;
use super::spec::Shard;
use super::split::Split;
use super::totals::Totals;
use super::verify::RunCheck;
use super::RunError;
use super::RunSpec;
use crate::engine::log::IoLog;
use crate::engine::EngineConfig;
use crate::game::GameEntry;
use crate::referee::{GameError, GameRecord};
use crate::stats::Decision;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc::{self, error::TryRecvError};

pub struct RunOptions {
    /// The run's settings, as given (a new setting is a field there, read where it is used).
    pub spec: RunSpec,
    /// The game the spec names.
    pub entry: &'static GameEntry,
    /// The spec's book, loaded (empty: the start position).
    pub openings: Vec<Opening>,
    /// The folder this process writes, held for the run: the run's, or a split run's task
    /// folder.
    pub folder: RunFolder,
    /// The start-up check's engines, to play the first worker's first games.
    pub checked: Option<super::Checked>,
    /// Where the workers take engines an earlier run left running, and leave theirs.
    pub shelf: Option<Arc<super::shelf::Shelf>>,
}

/// One task of a run split over machines.
#[derive(Clone, Debug)]
pub struct SplitTask {
    pub shard: Shard,
    /// The run's identity (`RunSpec::identity`), the same for all its tasks.
    pub identity: String,
    /// Silence after which a task is taken for dead.
    pub lease: std::time::Duration,
    /// How many pairs past the first one a pooled SPRT waits for may be claimed: the tasks
    /// times the games each plays at once (every task taken to run as many as this one).
    pub window: u64,
}

impl RunOptions {
    /// The options a checked spec stands for, with its book loaded and its folder chosen.
    pub fn of(
        spec: RunSpec,
        entry: &'static GameEntry,
        openings: Vec<Opening>,
        folder: RunFolder,
    ) -> RunOptions {
        RunOptions {
            spec,
            entry,
            openings,
            folder,
            checked: None,
            shelf: None,
        }
    }

    /// This process's task, when the run is split over machines: game pairs are claimed from
    /// the other tasks, and an SPRT decides on every task's games.
    fn split(&self) -> Option<SplitTask> {
        self.spec.shard.map(|shard| SplitTask {
            shard,
            identity: self.spec.identity(),
            lease: std::time::Duration::from_secs(self.spec.lease),
            window: shard.count.saturating_mul(self.spec.concurrency as u64),
        })
    }
}

impl RunOptions {
    pub fn schedule(&self) -> PairSchedule {
        self.spec.schedule(self.openings.len())
    }

    /// The engines, each with what it must not see from its sandbox: the run's folder (all of a
    /// split run's), its I/O log and the other engines' folders.
    fn confined_engines(&self) -> Vec<EngineConfig> {
        let hidden = crate::engine::sandbox::run_files(
            &self.folder.dir,
            self.spec.shard.is_some(),
            self.spec.log.as_deref(),
        );
        crate::engine::sandbox::hide_from_each_other(&self.spec.engines_as_played(), &hidden)
    }

    /// What every worker needs to play, for `left` games still to play.
    fn settings(&self, log: Option<IoLog>, left: u64) -> RunSettings {
        RunSettings {
            entry: self.entry,
            engines: self.confined_engines(),
            openings: self.openings.clone(),
            // More workers than games left would only start engines that never play.
            concurrency: self.spec.concurrency.min(left.max(1) as usize),
            adjudication: self.spec.adjudication(),
            check_pvs: self.spec.check_pvs,
            rules: self.spec.rules.clone(),
            log,
            affinity: self.spec.affinity.clone(),
            live: Some(Arc::new(Live::new(&self.folder.dir))),
            strict: self.spec.strict,
            course_clock: self.spec.course_tester,
        }
    }
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
    /// Whether more games synced with this one are told next: a progress line can wait for
    /// them and go out with theirs in one write.
    pub more_follow: bool,
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
    /// The game (from 1) whose fault stopped a `strict` run, and what it said.
    pub fault: Option<(u64, String)>,
    /// Disk syncs of the journal: finished games share them (group commit).
    pub journal_syncs: u64,
    /// An engine could not start, again and again: the run stopped. Its reports are written
    /// all the same (`crate::run` writes them), then this is the run's error.
    pub stopped: Option<RunError>,
}

/// Whether SIGHUP is ignored, as `nohup` leaves it.
fn hangup_ignored() -> bool {
    // SAFETY: reading the signal's disposition only.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Waits for the signal, or forever if it could not be installed.
async fn next_signal(sig: &mut Option<Signal>) {
    match sig {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// The signals that stop a run (or a tune) cleanly, with what it finished kept: SIGINT,
/// SIGTERM, and a closed terminal's SIGHUP unless the user asked to survive it (`nohup`, which
/// leaves SIGHUP ignored).
pub(crate) struct StopSignals {
    int: Option<Signal>,
    term: Option<Signal>,
    hup: Option<Signal>,
}

impl StopSignals {
    pub(crate) fn install() -> StopSignals {
        StopSignals {
            int: signal(SignalKind::interrupt()).ok(),
            term: signal(SignalKind::terminate()).ok(),
            hup: (!hangup_ignored())
                .then(|| signal(SignalKind::hangup()).ok())
                .flatten(),
        }
    }

    /// Waits for any of them.
    pub(crate) async fn recv(&mut self) {
        tokio::select! {
            _ = next_signal(&mut self.int) => {}
            _ = next_signal(&mut self.term) => {}
            _ = next_signal(&mut self.hup) => {}
        }
    }
}

fn output_error(path: &std::path::Path, e: impl std::fmt::Display) -> RunError {
    RunError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// The engines' names, checked as a run spec's are (names that differ), and at least two: the
/// library refuses what the command line would.
fn checked_names(spec: &RunSpec) -> Result<Vec<String>, RunError> {
    super::spec::check_engine_names(&spec.engines).map_err(|e| RunError::Setup(e.to_string()))?;
    let names: Vec<String> = spec.engines.iter().map(|e| e.name.clone()).collect();
    if spec.engines.len() < 2 {
        return Err(RunError::Setup("a run needs at least two engines".into()));
    }
    Ok(names)
}

/// Whether resuming the run in `dir` plays nothing: every game of its schedule is in its
/// journal, or its SPRT has decided. Such a run only writes its reports again, and needs none of
/// its engines (they may be gone from this machine). Read without the folder's lock, to decide
/// whether to start the engines at all; the run itself checks every game it counts. A task of a
/// split run plays what the other tasks leave, so it is never taken as finished here.
pub fn nothing_left(spec: &RunSpec, dir: &std::path::Path) -> Result<bool, RunError> {
    if spec.shard.is_some() {
        return Ok(false);
    }
    let names = checked_names(spec)?;
    let total = spec.schedule_size();
    let mut ledger = Ledger::new(names, spec.sprt);
    let mut done = Bitset::new(total);
    journal::read(&dir.join(journal::JOURNAL_FILE), |entry| {
        if done.insert(entry.index) {
            ledger.count(entry.index, &entry.record);
        }
    })
    .map_err(RunError::Setup)?;
    Ok(ledger.played >= total || ledger.decision.is_some())
}

/// The check every game read back from a journal passes before it counts.
fn run_check(opts: &RunOptions, names: &[String]) -> RunCheck {
    RunCheck::new(
        opts.entry,
        names.to_vec(),
        opts.schedule(),
        opts.spec.rules.clone(),
        Some(opts.openings.clone()),
    )
}

/// Counts the games already in the journal (a resumed run) and returns which they are. Only games
/// of this run count (players, opening and moves checked), each once; any other is an error that
/// names the journal's line. A game recorded twice counts once when both records give the same
/// result, and is refused with both lines otherwise, as `merge` refuses it.
fn count_past_games(
    path: &std::path::Path,
    check: &mut RunCheck,
    ledger: &mut Ledger,
    mut split: Option<&mut Split>,
) -> Result<Bitset, RunError> {
    let total = check.games();
    let mut done = Bitset::new(total);
    let mut refused = None;
    let mut again = Vec::new();
    let mut line = 0usize;
    journal::read(path, |entry| {
        line += 1;
        if refused.is_some() {
            return;
        }
        if let Err(why) = check.check(&entry) {
            refused = Some(format!(
                "{}: entry {line} (game {}) is not a game of this run: {why}",
                path.display(),
                u128::from(entry.index) + 1
            ));
            return;
        }
        if done.insert(entry.index) {
            ledger.count(entry.index, &entry.record);
            if let Some(split) = split.as_deref_mut() {
                split.seen(entry.index, &entry.record);
            }
        } else {
            again.push((
                entry.index,
                line,
                entry.record.outcome,
                entry.record.termination,
            ));
        }
    })
    .map_err(RunError::Setup)?;
    if let Some(e) = refused {
        return Err(RunError::Setup(e));
    }
    if !again.is_empty() {
        check_records_agree(path, &again)?;
    }
    Ok(done)
}

/// Refuses a game whose second record gives another result than its first (`again`: the game,
/// the entry's number, its result), naming both entries.
fn check_records_agree(
    path: &std::path::Path,
    again: &[(u64, usize, crate::game::Outcome, crate::game::Termination)],
) -> Result<(), RunError> {
    let wanted: std::collections::HashSet<u64> = again.iter().map(|a| a.0).collect();
    let mut first = std::collections::HashMap::new();
    let mut line = 0usize;
    journal::read(path, |entry| {
        line += 1;
        if wanted.contains(&entry.index) {
            first.entry(entry.index).or_insert((
                line,
                entry.record.outcome,
                entry.record.termination,
            ));
        }
    })
    .map_err(RunError::Setup)?;
    for &(index, at, outcome, termination) in again {
        if let Some(&(line, o, t)) = first.get(&index) {
            if (o, t) != (outcome, termination) {
                return Err(RunError::Setup(format!(
                    "{}: entries {line} and {at} give game {} different results; a run records \
                        each game once: remove the wrong entry and resume again",
                    path.display(),
                    u128::from(index) + 1
                )));
            }
        }
    }
    Ok(())
}

/// This task's place in a split run: its claims, and for an SPRT the pooled count.
fn join_split(opts: &RunOptions, names: &[String], games: u64) -> Result<Option<Split>, RunError> {
    let Some(task) = opts.split() else {
        return Ok(None);
    };
    let root = opts
        .folder
        .dir
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let me = task.shard.folder();
    let pool = opts.spec.sprt.map(|s| Ledger::new(names.to_vec(), Some(s)));
    let check = run_check(opts, names);
    Split::join(root, &me, &task, games, pool, check)
        .map(Some)
        .map_err(RunError::Setup)
}

/// A task's place among the tasks of a split run, shared with its workers.
type SharedSplit = Option<Arc<Mutex<Split>>>;

/// The run's past: the games already in its journal counted (each proved a game of the run)
/// and which they are, and for a task of a split run its place among the tasks, started.
fn past_games(
    opts: &RunOptions,
    names: &[String],
    total: u64,
    journal_path: &std::path::Path,
) -> Result<(Ledger, SharedSplit, Bitset), RunError> {
    let mut ledger = Ledger::new(names.to_vec(), opts.spec.sprt);
    let mut split = join_split(opts, names, total)?;
    let mut check = run_check(opts, names);
    let done = count_past_games(journal_path, &mut check, &mut ledger, split.as_mut())?;
    let split = match split {
        Some(mut s) => {
            s.start().map_err(RunError::Setup)?;
            Some(Arc::new(Mutex::new(s)))
        }
        None => None,
    };
    Ok((ledger, split, done))
}

/// How many games are left to play; with any left, the engines' programs are checked first.
fn games_left(spec: &RunSpec, ledger: &Ledger, total: u64) -> Result<u64, RunError> {
    let left = total.saturating_sub(ledger.played);
    if left > 0 && ledger.decision.is_none() {
        super::spec::check_programs(&spec.engines).map_err(|e| RunError::Setup(e.to_string()))?;
    }
    Ok(left)
}

pub async fn run(
    mut opts: RunOptions,
    mut on_game: impl FnMut(Progress),
) -> Result<RunOutcome, RunError> {
    let checked = opts.checked.take();
    let names = checked_names(&opts.spec)?;
    let journal_path = opts.folder.journal();
    let schedule = Arc::new(opts.schedule());
    let total = schedule.len();
    let (ledger, split, done) = past_games(&opts, &names, total, &journal_path)?;
    let mut journal = Journal::open(&journal_path).map_err(|e| output_error(&journal_path, e))?;
    let log = (opts.spec.log.as_ref())
        .map(|p| IoLog::create(p).map_err(|e| output_error(p, e)))
        .transpose()?;
    let left = games_left(&opts.spec, &ledger, total)?;
    let settings = Arc::new(opts.settings(log.clone(), left));
    let live = settings.live.clone();
    let source: Arc<dyn GameSource> = match &split {
        Some(split) => split.clone(),
        None => Arc::new(InOrder::new(total, move |i| done.contains(i))),
    };
    let mut tally = Tally { ledger, split };
    let stop = Arc::new(AtomicBool::new(tally.decision().is_some()));
    let (tx, mut rx) = mpsc::channel(64);
    let wake = Arc::new(tokio::sync::Notify::new());
    let workers = start_workers(
        settings,
        schedule.clone(),
        source,
        stop.clone(),
        Results::new(tx, wake.clone()),
        runner::Kept {
            checked,
            shelf: opts.shelf.clone(),
        },
    )
    .map_err(|e| RunError::Setup(format!("cannot start the game workers: {e}")))?;
    let journaling = Journaling {
        rx: &mut rx,
        wake: &wake,
        stop: &stop,
        tally: &mut tally,
        workers: &workers,
        journal: &mut journal,
        spec: &opts.spec,
        total,
    };
    let collected = journaling.run(&mut on_game).await;
    if collected.as_ref().map_or(true, |c| c.interrupted) {
        // Games in progress are abandoned: their engines are dropped, which kills them. A
        // journal that cannot be written (a full disk, a lost folder) stops the run at once;
        // the games already in it stay, and --resume plays the rest.
        stop.store(true, Ordering::SeqCst);
        workers.cancel();
    }
    // A worker still sending a result sees the channel closed.
    drop(rx);
    workers.join().await;
    let Collected {
        interrupted,
        setup_error,
        fault,
        journal_syncs,
    } = collected.map_err(|e| output_error(&journal_path, e))?;
    if let Some(live) = live {
        live.clear_all();
    }
    if let Some(log) = &log {
        log.flush();
    }
    if let Some(e) = tally.split_error() {
        return Err(RunError::Output {
            path: opts.folder.dir.display().to_string(),
            reason: format!("cannot claim game pairs: {e}"),
        });
    }
    let mut outcome = finish(tally.into_ledger(), total, interrupted, setup_error)?;
    outcome.fault = fault;
    outcome.journal_syncs = journal_syncs;
    Ok(outcome)
}

/// The run's loop: the games received from the workers, journaled and synced, then counted.
struct Journaling<'a> {
    rx: &'a mut mpsc::Receiver<runner::Finished>,
    wake: &'a tokio::sync::Notify,
    stop: &'a AtomicBool,
    tally: &'a mut Tally,
    workers: &'a runner::Workers,
    journal: &'a mut Journal,
    spec: &'a RunSpec,
    total: u64,
}

/// What the run's loop learnt.
#[derive(Default)]
struct Collected {
    interrupted: bool,
    setup_error: Option<GameError>,
    fault: Option<(u64, String)>,
    journal_syncs: u64,
}

impl Journaling<'_> {
    /// Until every game is in (or the run is stopped); an error is the journal's.
    async fn run(self, on_game: &mut impl FnMut(Progress)) -> std::io::Result<Collected> {
        let mut c = Collected::default();
        let mut signals = StopSignals::install();
        // Group commit: the games share their syncs, one at most `GROUP_WINDOW` after the first
        // unsynced game, and are written together just before it; none counts before its sync. A
        // game that may end the run (an SPRT's, a split run's, a strict run's fault) is synced at
        // once, so the run stops as promptly as before.
        let waits_for_company = self.spec.sprt.is_none() && self.spec.shard.is_none();
        // While a window is open, the games finishing in it wait in the channel until its end
        // rather than waking this thread one by one; a worker wakes it for what cannot wait (see
        // `Results`). A strict run looks at each game at once, as a fault in it stops the run.
        let holds_games = waits_for_company && !self.spec.strict;
        let mut unsynced: Vec<Entry> = Vec::new();
        let mut sync_due: Option<tokio::time::Instant> = None;
        let mut open = true;
        while open || !unsynced.is_empty() {
            let mut finished = Vec::new();
            if open {
                let waits = Waits {
                    hold: holds_games && sync_due.is_some(),
                    sync_due,
                    wake: self.wake,
                };
                let (still_open, stopped) =
                    receive_games(self.rx, &mut signals, waits, &mut finished).await;
                open = still_open;
                c.interrupted |= stopped;
            }
            let staging = Staging {
                setup_error: &mut c.setup_error,
                stop: self.stop,
                tally: self.tally,
                strict: self.spec.strict,
                workers: self.workers,
                journal: self.journal,
                waits_for_company,
            };
            let (mut sync_now, mut journal_error) = staging.stage(finished, &mut unsynced);
            sync_now |= !open;
            let now = tokio::time::Instant::now();
            if !unsynced.is_empty() {
                let due = *sync_due.get_or_insert(now + GROUP_WINDOW);
                sync_now |= due <= now || unsynced.len() >= GROUP_MAX;
            }
            if journal_error.is_none() && sync_now && !unsynced.is_empty() {
                journal_error = self.journal.sync().err();
                c.journal_syncs += 1;
            }
            if let Some(e) = journal_error {
                return Err(e);
            }
            if !sync_now {
                continue;
            }
            sync_due = None;
            let counted = Counted {
                tally: self.tally,
                stop: self.stop,
                strict: self.spec.strict,
                fault: &mut c.fault,
                total: self.total,
            };
            counted.synced(unsynced.drain(..), on_game);
        }
        Ok(c)
    }
}

/// What writing finished games into the journal (before their sync) touches.
struct Staging<'a> {
    setup_error: &'a mut Option<GameError>,
    stop: &'a AtomicBool,
    tally: &'a Tally,
    strict: bool,
    workers: &'a runner::Workers,
    journal: &'a mut Journal,
    /// Games wait for others to share a sync (no SPRT, no split run).
    waits_for_company: bool,
}

impl Staging<'_> {
    /// Writes the finished games into the journal, unsynced, and adds them to `unsynced`.
    /// Returns whether they must be synced at once (an engine that could not start, a strict
    /// run's fault, a run whose every game may end it) and the journal's error, if any.
    fn stage(
        self,
        finished: Vec<runner::Finished>,
        unsynced: &mut Vec<Entry>,
    ) -> (bool, Option<std::io::Error>) {
        let mut sync_now = false;
        for (index, result) in finished {
            let record = match result {
                Ok(r) => r,
                Err(e) => {
                    self.setup_error.get_or_insert(e);
                    self.stop.store(true, Ordering::SeqCst);
                    sync_now = true;
                    continue;
                }
            };
            if !self.tally.still_holds(index) {
                notice!(
                    "game {} was taken over by another task while this one looked dead; its \
                     result here is left out",
                    index + 1
                );
                continue;
            }
            let strict_fault = self.strict && record.termination.is_fault();
            if strict_fault {
                // As fastchess stops at once: no game starts once a fault is known, and the
                // games in progress are abandoned (--resume plays them again). The fault
                // counts, and is reported, once it is synced.
                self.stop.store(true, Ordering::SeqCst);
                self.workers.cancel();
            }
            let entry = Entry { index, record };
            if let Err(e) = self.journal.stage(&entry) {
                return (sync_now, Some(e));
            }
            sync_now |= !self.waits_for_company || strict_fault;
            unsynced.push(entry);
        }
        (sync_now, None)
    }
}

/// What counting a synced game changes: the tally (and so the SPRT, which may stop the run),
/// and a strict run's first fault.
struct Counted<'a> {
    tally: &'a mut Tally,
    stop: &'a AtomicBool,
    strict: bool,
    fault: &'a mut Option<(u64, String)>,
    total: u64,
}

impl Counted<'_> {
    /// Counts games just synced, in the order they were staged, telling `on_game` of each.
    fn synced(
        self,
        entries: impl ExactSizeIterator<Item = Entry>,
        on_game: &mut impl FnMut(Progress),
    ) {
        let batch = entries.len();
        for (i, entry) in entries.enumerate() {
            self.tally.count_new(entry.index, &entry.record);
            if self.tally.decision().is_some() {
                self.stop.store(true, Ordering::SeqCst);
            }
            if self.strict && entry.record.termination.is_fault() && self.fault.is_none() {
                let r = &entry.record;
                let said = format!("{} - {}: {}", r.white, r.black, r.detail);
                *self.fault = Some((entry.index + 1, said));
            }
            on_game(Progress {
                game: entry.index + 1,
                done: self.tally.ledger.played,
                total: self.total,
                record: &entry.record,
                totals: &self.tally.ledger.totals,
                llr: self.tally.last_llr(),
                more_follow: i + 1 < batch,
            });
        }
    }
}

/// How the run's thread waits for finished games: holding them in the channel until the sync
/// window's end (`hold`), or taking the first that comes.
struct Waits<'a> {
    hold: bool,
    sync_due: Option<tokio::time::Instant>,
    wake: &'a tokio::sync::Notify,
}

/// Waits for finished games, a stop signal or the sync's time, and takes into `finished` every
/// game the channel holds by then. Returns whether the channel is still open (no worker left:
/// closed) and whether a signal asked the run to stop.
async fn receive_games(
    rx: &mut mpsc::Receiver<runner::Finished>,
    signals: &mut StopSignals,
    waits: Waits<'_>,
    finished: &mut Vec<runner::Finished>,
) -> (bool, bool) {
    let mut open = true;
    let mut interrupted = false;
    if waits.hold {
        tokio::select! {
            _ = signals.recv() => interrupted = true,
            _ = sleep_until_due(waits.sync_due) => {}
            _ = waits.wake.notified() => {}
        }
        loop {
            match rx.try_recv() {
                Ok(more) => finished.push(more),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        return (open && !interrupted, interrupted);
    }
    tokio::select! {
        next = rx.recv() => match next {
            Some(first) => finished.push(first),
            None => open = false,
        },
        _ = signals.recv() => { interrupted = true; open = false; }
        _ = sleep_until_due(waits.sync_due) => {}
    }
    // The games that finished meanwhile are written with this one.
    if open {
        while let Ok(more) = rx.try_recv() {
            finished.push(more);
        }
    }
    (open, interrupted)
}

/// The longest a finished game waits for others to share its journal sync: the progress shown
/// lags by at most this much, and a machine that loses power loses at most this much play.
const GROUP_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);
/// Games synced together at most.
const GROUP_MAX: usize = 256;

/// Waits until `due`, or forever when no sync is due.
async fn sleep_until_due(due: Option<tokio::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// A run's games counted in the schedule's order, each once, as its journal read in order gives
/// them. `merge` counts the games as it writes them, and reads nothing again.
pub struct CountInOrder {
    ledger: Ledger,
    next: u64,
}

impl CountInOrder {
    pub fn new(opts: &RunOptions) -> CountInOrder {
        // The engines need not be on this machine: nothing is played.
        let names = opts.spec.engines.iter().map(|e| e.name.clone()).collect();
        CountInOrder {
            ledger: Ledger::new(names, opts.spec.sprt),
            next: 0,
        }
    }

    pub fn count(&mut self, entry: &journal::Entry) {
        // The SPRT counts the schedule's games in order, as the run did: past a missing game
        // its course is unknown, so it stops there, and only a decision reached before stands.
        if entry.index != self.next {
            self.ledger.sprt = None;
        }
        self.next = entry.index + 1;
        self.ledger.count(entry.index, &entry.record)
    }

    /// How the games counted end the run.
    pub fn finish(self, opts: &RunOptions) -> Result<RunOutcome, RunError> {
        finish(self.ledger, opts.schedule().len(), false, None)
    }
}

/// Says how the run ended; its reports are the caller's to write (`crate::run`).
fn finish(
    ledger: Ledger,
    total: u64,
    interrupted: bool,
    setup_error: Option<GameError>,
) -> Result<RunOutcome, RunError> {
    if let Some(GameError::BadStart(e)) = setup_error {
        return Err(RunError::Setup(e));
    }
    let stopped = match setup_error {
        Some(e @ GameError::EngineStart { .. }) => Some(RunError::EngineStart(format!(
            "{e} ({} times in a row); the run stopped after {} finished games, \
             and no result is reported from games an engine never played",
            runner::START_ATTEMPTS,
            ledger.played
        ))),
        _ => None,
    };
    Ok(RunOutcome {
        unplayed: total - ledger.played.min(total),
        totals: ledger.totals,
        decision: ledger.decision,
        llr: ledger.llr,
        latency_us: ledger.latency_us,
        time_forfeits: ledger.time_forfeits,
        interrupted,
        fault: None,
        journal_syncs: 0,
        stopped,
    })
}
