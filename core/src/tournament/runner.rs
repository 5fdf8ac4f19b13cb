//! Plays a schedule of games concurrently. Each worker owns its engine processes and keeps them
//! for game after game; games are handed out by index, so no schedule is held in memory.

use super::affinity;
use super::contention::{Contention, Crowding};
use super::live::{Live, LiveHeader};
use super::openings::Opening;
use super::overload;
use super::shelf::{Place, Shelf};
use crate::engine::log::IoLog;
use crate::engine::{EngineConfig, EngineProcess};
use crate::game::GameEntry;
use crate::referee::{play_game, Adjudication, GameError, GameRecord, GameSpec, Player, Sight};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// One game of a schedule: which engines, which colours, which opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    pub white: usize,
    pub black: usize,
    /// Index into the opening list.
    pub opening: usize,
    /// The round (1-based): in each round every pairing plays one game pair.
    pub round: u64,
}

/// A deterministic schedule that can say what game `index` is without listing the others.
pub trait Schedule: Send + Sync {
    fn len(&self) -> u64;
    fn pairing(&self, index: u64) -> Pairing;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct RunSettings {
    pub entry: &'static GameEntry,
    pub engines: Vec<EngineConfig>,
    pub openings: Vec<Opening>,
    pub concurrency: usize,
    pub adjudication: Adjudication,
    pub check_pvs: Option<crate::referee::pv_check::PvChecks>,
    /// The game's rule options, `name=value`.
    pub rules: Vec<(String, String)>,
    pub log: Option<IoLog>,
    /// Pin each worker, and so the engines it starts, to one CPU.
    pub affinity: super::Affinity,
    /// Where the games in progress are shown to a watcher.
    pub live: Option<Arc<Live>>,
    /// fastchess's `-strict`: no game starts once one has ended by an engine's fault.
    pub strict: bool,
    /// Clocks as the MIT course's tester keeps them (see `GameSpec::course_clock`).
    pub course_clock: bool,
}

/// What a worker does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Play(u64),
    /// Nothing to play now; ask again soon (a split run's task waiting for the others).
    Wait,
    Finished,
}

/// Hands out the games a run plays, each once.
pub trait GameSource: Send + Sync {
    fn next_game(&self) -> Next;
}

/// Every game of a schedule in order, but those already played.
pub struct InOrder {
    next: AtomicU64,
    len: u64,
    played: Box<dyn Fn(u64) -> bool + Send + Sync>,
}

impl InOrder {
    pub fn new(len: u64, played: impl Fn(u64) -> bool + Send + Sync + 'static) -> InOrder {
        InOrder {
            next: AtomicU64::new(0),
            len,
            played: Box::new(played),
        }
    }
}

impl GameSource for InOrder {
    fn next_game(&self) -> Next {
        loop {
            let index = self.next.fetch_add(1, Ordering::SeqCst);
            if index >= self.len {
                return Next::Finished;
            }
            if !(self.played)(index) {
                return Next::Play(index);
            }
        }
    }
}

/// How long a waiting worker sleeps before it asks again.
const WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// What every worker shares.
struct Shared {
    settings: Arc<RunSettings>,
    schedule: Arc<dyn Schedule>,
    source: Arc<dyn GameSource>,
    stop: Arc<AtomicBool>,
    /// The machine was busy with other work when the run started, and its games have clocks:
    /// no engine is frozen between its turns.
    unfrozen: bool,
    /// Some engine plays with a clock, which a late wake-up can run out.
    clocked: bool,
    /// The workers leave their engines running on a shelf for a later run.
    shelved: bool,
}

/// The threads playing a schedule. Each worker is an OS thread with a runtime of its own, so one
/// game's replies are read and timestamped the moment they arrive, whatever the other games or
/// the journal are doing.
pub struct Workers {
    threads: Vec<std::thread::JoinHandle<()>>,
    cancel: watch::Sender<bool>,
}

impl Workers {
    /// Abandons the games in progress: their engines are killed.
    pub fn cancel(&self) {
        let _ = self.cancel.send(true);
    }

    /// Waits until every worker has ended (after the results channel closed, or a `cancel`).
    pub async fn join(self) {
        let threads = self.threads;
        let _ = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
    }
}

/// How many times in a row an engine may fail to start for one game before the run stops.
pub const START_ATTEMPTS: u32 = 3;

/// A finished game as the workers hand it to the run: its index in the schedule and its record.
pub type Finished = (u64, Result<GameRecord, GameError>);

/// Where the workers send their finished games. The run may leave them waiting in the channel
/// while its journal's sync window is open (it writes them all at the window's end), so each
/// send that cannot wait also wakes it: a game that failed to start, a channel filling up, and a
/// worker leaving (the last one closes the channel, and the run ends without waiting for the
/// window).
#[derive(Clone)]
pub struct Results {
    /// Taken when dropped, so that the channel is closed before the run is woken to see it.
    tx: Option<mpsc::Sender<Finished>>,
    wake: Arc<tokio::sync::Notify>,
}

impl Results {
    /// Results sent to `tx`; `wake` is told when one cannot wait.
    pub fn new(tx: mpsc::Sender<Finished>, wake: Arc<tokio::sync::Notify>) -> Results {
        Results { tx: Some(tx), wake }
    }

    async fn send(
        &self,
        index: u64,
        record: Result<GameRecord, GameError>,
    ) -> Result<(), mpsc::error::SendError<Finished>> {
        let Some(tx) = &self.tx else {
            return Err(mpsc::error::SendError((index, record)));
        };
        let urgent = record.is_err();
        tx.send((index, record)).await?;
        if urgent || tx.capacity() < tx.max_capacity() / 4 {
            self.wake.notify_one();
        }
        Ok(())
    }
}

impl Drop for Results {
    fn drop(&mut self) {
        drop(self.tx.take());
        self.wake.notify_one();
    }
}

/// Starts `settings.concurrency` workers playing the games of `schedule` that `source` hands
/// out, each finished game's index and record sent to `results`. They stop taking games once
/// `stop` is set.
pub fn start_workers(
    settings: Arc<RunSettings>,
    schedule: Arc<dyn Schedule>,
    source: Arc<dyn GameSource>,
    stop: Arc<AtomicBool>,
    results: Results,
    kept: Kept,
) -> std::io::Result<Workers> {
    let cpus = settings.affinity.cpus();
    // Where a worker goes when its CPU turns out to be shared with other work.
    let wide = affinity::allowed_cpus();
    let (clocked, unfrozen) = clocked_and_unfrozen(&settings, wide.len());
    let shared = Arc::new(Shared {
        settings,
        schedule,
        source,
        stop,
        unfrozen,
        clocked,
        shelved: kept.shelf.is_some(),
    });
    let (cancel, cancelled) = watch::channel(false);
    let mut workers = Workers {
        threads: Vec::new(),
        cancel,
    };
    // The start-up check's engines go to the first worker, with the runtime that reads them;
    // the other workers take a place on the shelf, if there is one.
    let Kept { mut checked, shelf } = kept;
    for slot in 0..shared.settings.concurrency.max(1) {
        let begun = match checked.take() {
            Some(c) => Some(c.take()),
            None => shelf
                .as_ref()
                .and_then(|s| s.take())
                .map(|place| (place.runtime, place.engines)),
        };
        let (runtime, kept) = match begun {
            Some(begun) => begun,
            None => match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => (r, Vec::new()),
                Err(e) => {
                    workers.cancel();
                    return Err(e);
                }
            },
        };
        let cpu = (!cpus.is_empty()).then(|| cpus[slot % cpus.len()]);
        let (shared, results, cancelled) = (shared.clone(), results.clone(), cancelled.clone());
        let wide = wide.clone();
        let shelf = shelf.clone();
        let thread = std::thread::Builder::new()
            .name(format!("game worker {}", slot + 1))
            .spawn(move || {
                let mut pinned = None;
                if let Some(cpu) = cpu {
                    // Engines inherit the mask of the thread that starts them: a game's referee
                    // and both engines share a CPU, and every wake-up stays on it. There the
                    // referee lets the engine finish its reply before reading it.
                    if affinity::pin_current_thread(cpu) {
                        crate::engine::sched::referee_yields_to_engines();
                        pinned = Some(Pinned { cpu, wide });
                    }
                }
                let kept =
                    runtime.block_on(worker(slot, &shared, results, cancelled, kept, pinned));
                if let Some(shelf) = shelf.filter(|_| !kept.is_empty()) {
                    shelf.put(Place {
                        runtime,
                        engines: kept,
                    });
                }
            });
        match thread {
            Ok(t) => workers.threads.push(t),
            Err(e) => {
                workers.cancel();
                return Err(e);
            }
        }
    }
    Ok(workers)
}

/// Whether the run's games are on a clock, and whether its engines go unfrozen between turns
/// because the machine (its `cpus`, before any worker is pinned) is busy with other work.
fn clocked_and_unfrozen(settings: &RunSettings, cpus: usize) -> (bool, bool) {
    let clocked = settings
        .engines
        .iter()
        .any(|e| e.limits.tc.is_some() || e.limits.movetime.is_some());
    // Pinned games' CPUs were judged their own: their engines stay frozen until a CPU turns out
    // crowded (see `worker`).
    let frozen_anyway = settings
        .engines
        .iter()
        .any(|e| e.sandbox.freezing_kept_under_load());
    let unfrozen =
        clocked && !settings.affinity.is_on() && busy_machine(cpus, frozen_anyway).is_some();
    (clocked, unfrozen)
}

/// Engines a run's workers begin with: the start-up check's, and those earlier runs left.
pub struct Kept {
    pub checked: Option<super::Checked>,
    pub shelf: Option<Arc<Shelf>>,
}

/// Plays games one after another with engine processes of its own, kept from game to game.
/// Returns the engines to keep on the run's shelf (none without one, or when cancelled).
async fn worker(
    slot: usize,
    shared: &Shared,
    results: Results,
    mut cancelled: watch::Receiver<bool>,
    kept: Vec<EngineProcess>,
    mut pinned: Option<Pinned>,
) -> Vec<EngineProcess> {
    let settings = &shared.settings;
    let (mut players, mut spare) = players_with(settings, kept).await;
    if !shared.shelved {
        for engine in spare.drain(..) {
            engine.quit().await;
        }
    }
    // Engines not started yet (not adopted from the start-up check) are told too: the setting
    // holds for every process a player starts.
    if shared.unfrozen {
        for player in &mut players {
            player.share_a_busy_machine();
        }
    }
    loop {
        let index = match next_index(shared, &mut cancelled).await {
            Take::Play(index) => index,
            Take::Done => break,
            Take::Cancelled => return Vec::new(),
        };
        let pairing = shared.schedule.pairing(index);
        let spec = game_spec(settings, &pairing);
        let (white, black) = two_mut(&mut players, pairing.white, pairing.black);
        // Measured where something can be given up for it: the pinning, or the freezing.
        // A pinned game is judged only where its engines were already running: engines the
        // game starts share its CPU with their sandboxes starting, which says nothing of other
        // work.
        let watched = match pinned {
            Some(_) => running(white) && running(black),
            None => shared.clocked && (white.freezes() || black.freezes()),
        };
        let began = watched
            .then(|| Contention::start(cpu_time(white, black), pinned.as_ref().map(|p| p.cpu)));
        let header = LiveHeader {
            index,
            round: pairing.round,
            white: white.config.name.clone(),
            black: black.config.name.clone(),
        };
        crate::out::say_started(
            index + 1,
            shared.schedule.len(),
            &header.white,
            &header.black,
        );
        // The game's live file outlives the game: the journal takes its result up to a group
        // commit later, and until then the page must still show it. The watcher hides it once it
        // is counted; the worker's next game or the run's end replaces it.
        let mut spectator = |sight: &Sight<'_>| {
            if let Some(live) = &settings.live {
                live.show(slot, &header, sight);
            }
        };
        let played = play_with_retries(&spec, white, black, &settings.log, &mut spectator);
        let record = tokio::select! {
            record = played => record,
            // Returning drops the players, which kills their engines.
            _ = cancelled.wait_for(|c| *c) => return Vec::new(),
        };
        // Said by the worker that saw it, not left to the run's thread, which may read the
        // result only after this worker has played more games (a faulty engine kept from game
        // to game can lose each in a few plies).
        if settings.strict && matches!(&record, Ok(r) if r.termination.is_fault()) {
            shared.stop.store(true, Ordering::SeqCst);
        }
        let crowding = began.and_then(|c| c.end(cpu_time(white, black)));
        react_to_crowding(crowding, &mut pinned, &mut players, index, slot);
        let (white, black) = two_mut(&mut players, pairing.white, pairing.black);
        let record = after_game(white, black, record).await;
        if results.send(index, record).await.is_err() {
            return Vec::new();
        }
    }
    if shared.shelved {
        return players
            .iter_mut()
            .filter_map(Player::take_process)
            .chain(spare)
            .collect();
    }
    for p in &mut players {
        p.shutdown().await;
    }
    Vec::new()
}

/// What a worker takes from the run next.
enum Take {
    Play(u64),
    /// The run stopped, or every game is handed out: the worker's engines are shut down.
    Done,
    /// The run was cancelled while the worker waited: returning drops its players, which kills
    /// their engines.
    Cancelled,
}

/// The next game this worker plays, waiting while the source has none to give yet.
async fn next_index(shared: &Shared, cancelled: &mut watch::Receiver<bool>) -> Take {
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return Take::Done;
        }
        match shared.source.next_game() {
            Next::Play(index) => return Take::Play(index),
            Next::Finished => return Take::Done,
            Next::Wait => tokio::select! {
                _ = tokio::time::sleep(WAIT) => {}
                _ = cancelled.wait_for(|c| *c) => return Take::Cancelled,
            },
        }
    }
}

/// Plays the game; an engine that failed to start gets a fresh process and the same game
/// again, and only a failure that repeats reaches the run, which then stops.
async fn play_with_retries(
    spec: &GameSpec,
    white: &mut Player,
    black: &mut Player,
    log: &Option<IoLog>,
    spectator: &mut (impl FnMut(&Sight<'_>) + Send),
) -> Result<GameRecord, GameError> {
    let mut attempt = 1;
    loop {
        match play_game(spec, white, black, log, &mut *spectator).await {
            Err(GameError::EngineStart { .. }) if attempt < START_ATTEMPTS => attempt += 1,
            other => return other,
        }
    }
}

/// A game played: its record marked where the machine was too slow for its clock, and the
/// engines set `restart=on` ended (their next game is played by new processes).
async fn after_game(
    white: &mut Player,
    black: &mut Player,
    mut record: Result<GameRecord, GameError>,
) -> Result<GameRecord, GameError> {
    if let Ok(r) = &mut record {
        let slice = overload::slice([&white.config, &black.config]);
        r.overloaded = overload::game_overloaded(&r.turnaround_us, slice);
    }
    for player in [white, black] {
        if player.config.restart {
            player.shutdown().await;
        }
    }
    record
}

/// What a game's contention says of the machine: a pinned worker whose CPU ran other work
/// goes to every CPU; a worker whose engines waited for a CPU stops freezing them between their
/// turns (where an engine frozen then is woken late on its turn and loses on time). Either is
/// said once, as it happens.
fn react_to_crowding(
    crowding: Option<Crowding>,
    pinned: &mut Option<Pinned>,
    players: &mut [Player],
    index: u64,
    slot: usize,
) {
    if let (Some(at), Some(Crowding::PinnedCpu(share))) = (&*pinned, &crowding) {
        notice!(
            "unpinned: CPU {} is busy with other work (it ran other programs {:.0}% of game \
             {}); game worker {}'s games go to every CPU from now on",
            at.cpu,
            share * 100.0,
            index + 1,
            slot + 1
        );
        at.widen(players);
        *pinned = None;
    } else if let Some(Crowding::EnginesWaited(share)) = crowding.filter(|_| {
        // `freeze=on` and `freeze=watch` hold whatever the load: nothing to give up, nothing
        // to say.
        players
            .iter()
            .any(|p| p.freezes() && !p.config.sandbox.freezing_kept_under_load())
    }) {
        // Unpinned and still waiting: the machine is busy with other work, where an engine
        // frozen between its turns is woken late on its turn and loses on time (measured
        // beside two busy loops and a loop of short-lived processes, `tc=1+0.01`, 20 games:
        // 5 – 11 lost frozen, 0 – 3 unfrozen).
        notice!(
            "not frozen: the machine is busy with other work (the engines of game {} waited \
             for a CPU {:.0}% of the game); game worker {}'s engines are no longer frozen \
             between their turns, and compete for the CPUs as plain processes",
            index + 1,
            share * 100.0,
            slot + 1
        );
        for player in players.iter_mut() {
            player.share_a_busy_machine();
        }
    }
}

/// A worker pinned to one CPU by `--affinity auto`, and the CPUs it may widen to.
struct Pinned {
    cpu: usize,
    wide: Vec<usize>,
}

impl Pinned {
    /// Lets the worker and every engine it keeps run on every CPU again.
    fn widen(&self, players: &[Player]) {
        affinity::unpin_current_thread(&self.wide);
        crate::engine::sched::referee_preempts_again();
        for engine in players.iter().filter_map(Player::process) {
            engine.move_here();
        }
    }
}

/// How busy the machine is before the run's first game, when busier than the `cpus` the run
/// may use, said: the 1-minute load average, or the tasks waiting to run right now where other
/// work has only just started (the average takes a minute to follow it). There an engine
/// frozen between its turns is woken late on its turn and loses on time, so none is frozen but
/// those set `freeze=on` or `freeze=watch` (`frozen_anyway`: there are some).
fn busy_machine(cpus: usize, frozen_anyway: bool) -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let average: f64 = text.split_whitespace().next()?.parse().ok()?;
    let now = runnable_now().unwrap_or(0);
    let load = average.max(now as f64);
    let busy = load > cpus.max(1) as f64;
    if busy {
        let what = if now as f64 > average {
            format!("{now} other tasks running on {cpus} CPUs")
        } else {
            format!("load average {average:.1} on {cpus} CPUs")
        };
        let but = match frozen_anyway {
            true => " (but those set freeze=on or freeze=watch)",
            false => "",
        };
        notice!(
            "not frozen: the machine is busy with other work ({what}); engines \
             are not frozen between their turns in this run{but}, and compete for the CPUs as \
             plain processes (no CPU group of their own, no threads= quota)"
        );
    }
    busy.then_some(load)
}

/// The tasks other than this thread that are running or waiting for a CPU: the least of a few
/// looks 10 ms apart, so that a moment's burst does not count as load.
fn runnable_now() -> Option<usize> {
    let mut least = usize::MAX;
    for look in 0..5 {
        if look > 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // The fourth field is "running/total"; the running count includes this thread.
        let text = std::fs::read_to_string("/proc/loadavg").ok()?;
        let running: usize = text
            .split_whitespace()
            .nth(3)?
            .split('/')
            .next()?
            .parse()
            .ok()?;
        least = least.min(running.saturating_sub(1));
    }
    Some(least)
}

fn running(player: &Player) -> bool {
    player.process().and_then(|p| p.root_pid()).is_some()
}

/// The CPU time of a game's engines, summed over their trees.
fn cpu_time(white: &Player, black: &Player) -> affinity::CpuTime {
    [white, black]
        .iter()
        .filter_map(|p| p.process()?.root_pid())
        .map(affinity::tree_cpu_time)
        .fold(affinity::CpuTime::default(), affinity::CpuTime::add)
}

/// The worker's players, and the engines it was given that none of them plays. The start-up
/// check's engines, and those an earlier run left on the shelf, play when they are the very
/// processes this worker would start: not when they must log their input and output (they were
/// started without the log). Started unpinned, they are moved onto this worker's CPU when it
/// has one.
async fn players_with(
    settings: &RunSettings,
    kept: Vec<EngineProcess>,
) -> (Vec<Player>, Vec<EngineProcess>) {
    let mut players: Vec<Player> = settings.engines.iter().cloned().map(Player::new).collect();
    let adoptable = settings.log.is_none();
    let mut spare = Vec::new();
    for engine in kept {
        let player = players
            .iter_mut()
            .find(|p| p.process().is_none() && p.config == *engine.config());
        match player {
            Some(player) if adoptable => {
                if settings.affinity.is_on() {
                    engine.move_here();
                }
                player.adopt(engine)
            }
            _ => spare.push(engine),
        }
    }
    (players, spare)
}

/// The game a pairing plays: its opening from the book, its round, the run's rules.
fn game_spec(settings: &RunSettings, pairing: &Pairing) -> GameSpec {
    let opening = settings.openings.get(pairing.opening);
    GameSpec {
        entry: settings.entry,
        start_fen: opening.and_then(|o| o.fen.clone()),
        opening: opening.map(|o| o.moves.clone()).unwrap_or_default(),
        opening_number: if opening.is_some() {
            pairing.opening + 1
        } else {
            0
        },
        round: pairing.round,
        adjudication: settings.adjudication.clone(),
        check_pvs: settings.check_pvs,
        rules: settings.rules.clone(),
        course_clock: settings.course_clock,
    }
}

/// Two distinct elements of a slice, mutably.
fn two_mut<T>(items: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b, "an engine cannot play itself in one seat pair");
    if a < b {
        let (left, right) = items.split_at_mut(b);
        (&mut left[a], &mut right[0])
    } else {
        let (left, right) = items.split_at_mut(a);
        (&mut right[0], &mut left[b])
    }
}
