//! Games read from PGN files replayed by their rules on every core while the files are read
//! (`arbiter rate --check`): memory holds a few batches of games, not the file.

use super::import::ImportedGame;
use super::verify::{replay, Decided};
use crate::game::{find_game, GameEntry};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Games handed to a worker at a time: enough to make the hand-over cheap beside the replays.
const BATCH: usize = 64;
/// Failures kept to be shown; the rest are counted.
const SHOWN: usize = 20;

/// One game to replay, with where it came from.
struct Job {
    file: Arc<str>,
    /// The file's place among those read.
    file_order: usize,
    game: ImportedGame,
}

/// A game that fails its replay: `file:line: game N: reason`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Failure {
    /// The file's place among those read: failures print in reading order.
    pub file_order: usize,
    pub line: usize,
    pub text: String,
}

/// What the replays found.
#[derive(Debug, Default)]
pub struct Tally {
    pub games: u64,
    /// Games whose moves end them with the result they are scored.
    pub by_rules: u64,
    /// Games whose result was given outside the rules; their moves are legal.
    pub outside: u64,
    pub failed: u64,
    /// Failed games that name no game of their own (read as the `unnamed` game).
    pub failed_unnamed: u64,
    /// The first failures in reading order (at most 20).
    pub failures: Vec<Failure>,
    /// The games replayed, by name, with how many of each.
    pub kinds: Vec<(&'static str, u64)>,
    pub threads: usize,
}

impl Tally {
    fn absorb(&mut self, other: Tally) {
        self.games += other.games;
        self.by_rules += other.by_rules;
        self.outside += other.outside;
        self.failed += other.failed;
        self.failed_unnamed += other.failed_unnamed;
        self.failures.extend(other.failures);
        self.failures.sort();
        self.failures.truncate(SHOWN);
        for (id, n) in other.kinds {
            self.count_kind(id, n);
        }
    }

    fn count_kind(&mut self, id: &'static str, n: u64) {
        match self.kinds.iter_mut().find(|(k, _)| *k == id) {
            Some((_, total)) => *total += n,
            None => self.kinds.push((id, n)),
        }
    }
}

/// Workers replaying games as they are pushed.
pub struct RulesCheck {
    sender: Option<SyncSender<Vec<Job>>>,
    workers: Vec<JoinHandle<Tally>>,
    batch: Vec<Job>,
    files: Vec<Arc<str>>,
}

impl RulesCheck {
    /// Starts one worker per core. `unnamed` is the game of files that name none (a PGN of
    /// chess written by cutechess-cli carries no `Variant` tag).
    pub fn start(unnamed: &'static GameEntry) -> RulesCheck {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (sender, receiver) = sync_channel::<Vec<Job>>(threads * 2);
        let receiver = Arc::new(std::sync::Mutex::new(receiver));
        let workers = (0..threads)
            .map(|_| {
                let receiver = Arc::clone(&receiver);
                std::thread::spawn(move || {
                    let mut tally = Tally::default();
                    loop {
                        // The lock is held while waiting, never while replaying.
                        let next = receiver.lock().map(|r| r.recv());
                        let Ok(Ok(batch)) = next else { break };
                        for job in batch {
                            check_one(&job, unnamed, &mut tally);
                        }
                    }
                    tally
                })
            })
            .collect();
        RulesCheck {
            sender: Some(sender),
            workers,
            batch: Vec::with_capacity(BATCH),
            files: Vec::new(),
        }
    }

    /// Queues a game of `file` for replay; blocks while every worker is busy.
    pub fn push(&mut self, file: &str, game: ImportedGame) {
        if self.files.last().is_none_or(|f| &**f != file) {
            self.files.push(Arc::from(file));
        }
        let file = Arc::clone(self.files.last().expect("pushed above"));
        let file_order = self.files.len() - 1;
        self.batch.push(Job {
            file,
            file_order,
            game,
        });
        if self.batch.len() == BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        if let Some(sender) = &self.sender {
            // A worker that died took its panic with it; `finish` reports it.
            let _ = sender.send(batch);
        }
    }

    /// Waits for every replay and adds up what they found.
    pub fn finish(mut self) -> Tally {
        self.send();
        self.sender = None;
        let threads = self.workers.len();
        let mut total = Tally::default();
        for worker in self.workers.drain(..) {
            match worker.join() {
                Ok(tally) => total.absorb(tally),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        total.threads = threads;
        total
    }
}

/// Replays one game into `tally`.
fn check_one(job: &Job, unnamed: &'static GameEntry, tally: &mut Tally) {
    let record = &job.game.record;
    tally.games += 1;
    let entry = match record.game.to_ascii_lowercase().as_str() {
        "unknown" => Some(unnamed),
        // cutechess-cli and fastchess write chess as "standard" when they write it at all.
        "standard" => find_game("chess"),
        id => find_game(id),
    };
    let rules: Vec<(String, String)> = record
        .rules
        .iter()
        .filter_map(|r| r.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let verdict = match entry {
        Some(entry) => {
            tally.count_kind(entry.id, 1);
            replay(entry, &rules, record)
        }
        None => Err(format!(
            "a game of {}, which arbiter has no rules for",
            record.game
        )),
    };
    match verdict {
        Ok(Decided::ByRules) => tally.by_rules += 1,
        Ok(Decided::Outside) => tally.outside += 1,
        Err(reason) => {
            tally.failed += 1;
            tally.failed_unnamed += u64::from(record.game.eq_ignore_ascii_case("unknown"));
            if tally.failures.len() < SHOWN {
                tally.failures.push(Failure {
                    file_order: job.file_order,
                    line: job.game.line,
                    text: format!(
                        "{}:{}: game {} ({} - {}): {reason}",
                        job.file, job.game.line, job.game.number, record.white, record.black
                    ),
                });
            }
        }
    }
}
