//! The games in progress, for `arbiter watch`: while a watcher says it is looking (a fresh
//! `live/watching` file in the run's folder), each worker keeps `live/game-<worker>.json` up
//! to date after every move. Unwatched, a run writes nothing here and reads no clock of its
//! own (the referee's time of the move serves), so a run nobody watches is as fast as before.
//! Watched, the referee only leaves the game as it stands for a writer thread, which writes
//! the files at most every `WRITE_EVERY`: a file written and renamed in the move's path took
//! 1-2 ms a move, forty times the referee's own turnaround.

use crate::referee::Sight;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The folder of the live files, inside a run's (or a task's) folder.
pub const LIVE_DIR: &str = "live";
/// Touched by a watcher every `WATCH_TOUCH`; the run writes while it is fresher than `FRESH`.
pub const WATCHING_FILE: &str = "watching";
pub const WATCH_TOUCH: Duration = Duration::from_secs(2);
const FRESH: Duration = Duration::from_secs(10);
/// How often a run looks for the watcher's file.
const LOOK_EVERY: Duration = Duration::from_millis(500);
/// How often the writer thread writes the games left for it (the page refreshes every 250 ms).
const WRITE_EVERY: Duration = Duration::from_millis(100);

/// A game in progress, as its live file holds it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LiveGame {
    /// The game's index in the schedule.
    pub index: u64,
    pub round: u64,
    pub white: String,
    pub black: String,
    pub start_fen: Option<String>,
    /// The moves so far as the referee recorded them, book moves first.
    pub moves: Vec<String>,
    pub book_plies: usize,
    /// White's and Black's time left in milliseconds, when they play with clocks.
    pub clocks_ms: [Option<u64>; 2],
    /// When the file was written (milliseconds since the epoch).
    pub written_ms: u64,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A run's side of the live files: whether somebody watches, and the writing.
pub struct Live {
    dir: PathBuf,
    started: Instant,
    /// Milliseconds after `started` of the last look for the watcher's file.
    looked_ms: AtomicU64,
    watched: AtomicBool,
    shared: Arc<Shared>,
    writer: std::sync::OnceLock<()>,
}

/// What the referee and the writer thread share.
#[derive(Default)]
struct Shared {
    /// What each worker's game gained since the writer last looked.
    pending: Mutex<Pending>,
    /// Held while files are written or removed: the run's end waits for a write under way.
    files: Mutex<()>,
    /// The run is over (or gone): nothing more is written.
    ended: AtomicBool,
}

impl Live {
    pub fn new(run_dir: &Path) -> Live {
        Live {
            dir: run_dir.join(LIVE_DIR),
            started: Instant::now(),
            looked_ms: AtomicU64::new(0),
            watched: AtomicBool::new(false),
            shared: Arc::new(Shared::default()),
            writer: std::sync::OnceLock::new(),
        }
    }

    /// Starts the writer thread the first time a game is left for it; it ends with the run.
    fn start_writer(&self) {
        self.writer.get_or_init(|| {
            let (shared, dir) = (self.shared.clone(), self.dir.clone());
            let _ = std::thread::Builder::new()
                .name("live-writer".into())
                .spawn(move || {
                    // Each worker's game as the writer last wrote it.
                    let mut shown = BTreeMap::new();
                    while !shared.ended.load(Ordering::Relaxed) {
                        std::thread::sleep(WRITE_EVERY);
                        write_pending(&shared, &dir, &mut shown);
                    }
                });
        });
    }

    /// Whether a watcher looks at `at`, from its file's age, read at most every `LOOK_EVERY`.
    fn watched(&self, at: Instant) -> bool {
        let now = at.saturating_duration_since(self.started).as_millis() as u64;
        let looked = self.looked_ms.load(Ordering::Relaxed);
        if now == 0 || now.saturating_sub(looked) >= LOOK_EVERY.as_millis() as u64 {
            self.looked_ms.store(now.max(1), Ordering::Relaxed);
            let fresh = std::fs::metadata(self.dir.join(WATCHING_FILE))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age < FRESH);
            self.watched.store(fresh, Ordering::Relaxed);
        }
        self.watched.load(Ordering::Relaxed)
    }

    /// Leaves worker `worker`'s game as it stands for the writer thread, if somebody watches.
    /// Returns whether it did.
    pub fn show(&self, worker: usize, who: &LiveHeader, sight: &Sight<'_>) -> bool {
        if !self.watched(sight.at) {
            return false;
        }
        self.start_writer();
        let clocks_ms = sight.clocks.map(|c| c.map(|d| d.as_millis() as u64));
        let written_ms = now_ms();
        let mut pending = lock(&self.shared.pending);
        // Only the moves the writer has not been given yet are copied: a copy of the whole game
        // at every move cost the referee microseconds a move by the end of a long game.
        let from = match pending.sent.get(&worker) {
            Some(&(index, plies)) if index == who.index && plies <= sight.moves.len() => plies,
            _ => 0,
        };
        pending.sent.insert(worker, (who.index, sight.moves.len()));
        let more = &sight.moves[from..];
        match pending.updates.get_mut(&worker) {
            Some(update) if from > 0 && update.index == who.index => {
                update.more.extend(more.iter().cloned());
                update.clocks_ms = clocks_ms;
                update.written_ms = written_ms;
            }
            _ => {
                let base = (from == 0).then(|| LiveGame {
                    index: who.index,
                    round: who.round,
                    white: who.white.clone(),
                    black: who.black.clone(),
                    start_fen: sight.start_fen.map(str::to_string),
                    moves: Vec::new(),
                    book_plies: sight.book_plies,
                    clocks_ms,
                    written_ms,
                });
                let update = Update {
                    index: who.index,
                    base,
                    more: more.to_vec(),
                    clocks_ms,
                    written_ms,
                };
                pending.updates.insert(worker, update);
            }
        }
        true
    }

    /// The run is over: no game of it is in progress any more.
    pub fn clear_all(&self) {
        self.shared.ended.store(true, Ordering::Relaxed);
        let _writing = lock(&self.shared.files);
        lock(&self.shared.pending).updates.clear();
        let Ok(list) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in list.flatten() {
            if e.file_name().to_string_lossy().starts_with("game-") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[derive(Default)]
struct Pending {
    updates: BTreeMap<usize, Update>,
    /// Per worker, the game and how many of its moves the writer has been given.
    sent: BTreeMap<usize, (u64, usize)>,
}

/// A game's moves since the last update, or the game from its start (`base`).
struct Update {
    index: u64,
    base: Option<LiveGame>,
    more: Vec<String>,
    clocks_ms: [Option<u64>; 2],
    written_ms: u64,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.shared.ended.store(true, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes each game left for the writer, whole or not at all (renamed into place). A failure
/// to write is no concern of the game's: the page just lags.
fn write_pending(shared: &Shared, dir: &Path, shown: &mut BTreeMap<usize, LiveGame>) {
    let _writing = lock(&shared.files);
    let updates = std::mem::take(&mut lock(&shared.pending).updates);
    if updates.is_empty() || shared.ended.load(Ordering::Relaxed) {
        return;
    }
    let _ = std::fs::create_dir_all(dir);
    for (worker, update) in updates {
        if let Some(base) = update.base {
            shown.insert(worker, base);
        }
        let Some(game) = shown.get_mut(&worker).filter(|g| g.index == update.index) else {
            continue;
        };
        game.moves.extend(update.more);
        game.clocks_ms = update.clocks_ms;
        game.written_ms = update.written_ms;
        let Ok(text) = serde_json::to_vec(&*game) else {
            continue;
        };
        let _ = crate::output::replace(&dir.join(format!("game-{worker}.json")), &text);
    }
}

/// Who plays the game a live file shows.
pub struct LiveHeader {
    pub index: u64,
    pub round: u64,
    pub white: String,
    pub black: String,
}

/// The games in progress in `run_dir` (a run's or a task's folder), in schedule order.
pub fn read_live(run_dir: &Path) -> Vec<LiveGame> {
    let Ok(list) = std::fs::read_dir(run_dir.join(LIVE_DIR)) else {
        return Vec::new();
    };
    let mut games: Vec<LiveGame> = list
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("game-") && name.ends_with(".json")
        })
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
        .collect();
    games.sort_by_key(|g| g.index);
    games
}

/// Says a watcher looks at `run_dir` (creating its live folder if need be).
pub fn touch_watching(run_dir: &Path) -> std::io::Result<()> {
    let dir = run_dir.join(LIVE_DIR);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(WATCHING_FILE), now_ms().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_writes_its_games_only_while_watched() {
        let dir = std::env::temp_dir().join(format!("arbiter-live-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let who = LiveHeader {
            index: 4,
            round: 3,
            white: "a".into(),
            black: "b".into(),
        };
        let moves = vec!["e2e4".to_string()];
        let sight = Sight {
            at: Instant::now(),
            start_fen: None,
            moves: &moves,
            book_plies: 1,
            clocks: [Some(Duration::from_millis(1500)), None],
        };
        let live = Live::new(&dir);
        assert!(!live.show(0, &who, &sight), "nobody watches");
        assert!(read_live(&dir).is_empty());
        touch_watching(&dir).unwrap();
        let live = Live::new(&dir);
        assert!(live.show(1, &who, &sight));
        // Written by the writer thread within its period, not in the referee's path.
        let began = Instant::now();
        while read_live(&dir).is_empty() {
            assert!(began.elapsed() < Duration::from_secs(10), "never written");
            std::thread::sleep(Duration::from_millis(10));
        }
        let games = read_live(&dir);
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].moves, vec!["e2e4".to_string()]);
        assert_eq!(games[0].book_plies, 1);
        assert_eq!(games[0].clocks_ms, [Some(1500), None]);
        // The game goes on, move by move, some moves before the writer looks and some after:
        // the file holds every move once, in order. Then the worker's next game replaces it.
        let mut moves = moves.clone();
        let shown_until = |moves: &[String], index: u64| {
            let began = Instant::now();
            loop {
                let games = read_live(&dir);
                if games
                    .first()
                    .is_some_and(|g| g.index == index && g.moves == moves)
                {
                    break;
                }
                assert!(began.elapsed() < Duration::from_secs(10), "{games:?}");
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        for (i, mv) in ["e7e5", "g1f3", "b8c6", "f1b5"].iter().enumerate() {
            moves.push(mv.to_string());
            let sight = Sight {
                moves: &moves,
                ..sight
            };
            assert!(live.show(1, &who, &sight));
            if i % 2 == 1 {
                shown_until(&moves, 4);
            }
        }
        let next = LiveHeader { index: 6, ..who };
        let first = vec!["d2d4".to_string()];
        let sight = Sight {
            moves: &first,
            ..sight
        };
        assert!(live.show(1, &next, &sight));
        shown_until(&first, 6);
        live.clear_all();
        assert!(read_live(&dir).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
