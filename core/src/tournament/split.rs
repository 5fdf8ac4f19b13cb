//! One task of a run split over machines: which game it plays next, and, for an SPRT, the
//! decision on every task's games.
//!
//! Tasks claim game pairs in the schedule's order (`claims`), each result going to the task's
//! own journal. An SPRT counts the run's games in the schedule's order up to the first one not
//! finished (`InOrder`), reading the journal of the task holding that game, so it decides at the
//! pair one machine playing in order would, and tasks stop within about a pair each of it,
//! however many run at once and whenever the queued ones start. A task whose heartbeat stops
//! has its unfinished pairs taken over: by a task that the SPRT waits on it, else by the tasks
//! left at the end of the schedule, which wait for the others until every pair is finished.

use super::claims::{Blocks, Claim, Claims, Heartbeat, Liveness, CLAIM_LOG};
use super::journal::{parse_line, JOURNAL_FILE};
use super::ledger::{Bitset, Ledger};
use super::pooled_sprt::InOrder;
use super::runner::{GameSource, Next};
use super::spec::RunSpec;
use super::verify::RunCheck;
use crate::referee::GameRecord;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the tasks left at the end look at the others.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// Bytes of another task's files already read.
#[derive(Default)]
struct Reading {
    journal: u64,
    log: u64,
    /// Pairs it listed and has not been seen to finish.
    listed: BTreeSet<u64>,
    /// Its folder holds a shard of this run (checked once).
    same_run: Option<bool>,
}

pub(super) struct Split {
    root: PathBuf,
    identity: String,
    claims: Claims,
    games: u64,
    pairs: u64,
    /// The lowest pair this task has not tried to claim.
    cursor: u64,
    /// For a pooled SPRT: how many pairs past the first one it waits for any task may claim
    /// (the tasks times their concurrency), so that a stalled task holding that pair cannot
    /// let the others run on far past where the decision falls.
    window: u64,
    /// Games of pairs this task holds, not handed to a worker yet.
    queue: VecDeque<u64>,
    /// Pairs this task holds unfinished, with the claim's generation.
    held: HashMap<u64, u32>,
    /// Games finished by any task, as far as read.
    done: Bitset,
    others: HashMap<String, Reading>,
    /// The pooled SPRT, counting in the schedule's order.
    pub(super) pool: Option<InOrder>,
    /// When this task last looked for a dead task holding the game the SPRT waits for, and for
    /// dead tasks at the end of the schedule: each at most every `LOOK_EVERY`.
    last_blocker_look: Option<Instant>,
    last_end_look: Option<Instant>,
    /// What another task's game must pass to count.
    check: RunCheck,
    /// A claim that could not be written: the task stops, and says why.
    pub(super) error: Option<String>,
    open: Arc<AtomicU64>,
    _heartbeat: Heartbeat,
}

fn io_text(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

impl Split {
    /// Task `me` of the run in `root`, with, for an SPRT, a ledger to pool every task's games
    /// in. The games it finished before (a requeued task) are given to `seen`, then `start`.
    pub(super) fn join(
        root: &Path,
        me: &str,
        task: &super::run::SplitTask,
        games: u64,
        pool: Option<Ledger>,
        check: RunCheck,
    ) -> Result<Split, String> {
        let pairs = games.div_ceil(2);
        let blocks = Blocks::of_run(pairs, pool.is_some());
        let claims = Claims::open(root, me, &task.identity, task.lease, blocks)?;
        let open = Arc::new(AtomicU64::new(0));
        let heartbeat = claims.start_heartbeat(open.clone());
        Ok(Split {
            root: root.to_path_buf(),
            identity: task.identity.clone(),
            claims,
            games,
            pairs,
            cursor: 0,
            window: task.window.max(1),
            queue: VecDeque::new(),
            held: HashMap::new(),
            done: Bitset::new(games),
            others: HashMap::new(),
            pool: pool.map(InOrder::new),
            last_blocker_look: None,
            last_end_look: None,
            check,
            error: None,
            open,
            _heartbeat: heartbeat,
        })
    }

    /// Picks up this task's own unfinished claims, and for an SPRT the games every task has
    /// played so far: a task started late sees a decision already made.
    pub(super) fn start(&mut self) -> Result<(), String> {
        self.resume_own_claims()?;
        if self.pool.is_some() {
            for task in self.other_tasks() {
                self.read_journal(&task);
            }
            self.catch_up();
        }
        Ok(())
    }

    /// The pairs this task claimed before it was stopped and did not finish: still its own
    /// unless taken over meanwhile.
    fn resume_own_claims(&mut self) -> Result<(), String> {
        let path = self.root.join(self.claims.me()).join(CLAIM_LOG);
        std::fs::metadata(&path).map_err(|e| io_text(&path, e))?;
        let me = self.claims.me().to_string();
        // Only the pairs not finished: a long task lists hundreds of thousands.
        let (games, done, all) = (self.games, &self.done, self.pairs);
        let mut pairs = BTreeSet::new();
        for_new_lines(&path, 0, |line| {
            let pair = std::str::from_utf8(line)
                .ok()
                .and_then(|l| l.trim().parse::<u64>().ok());
            if let Some(p) = pair.filter(|&p| p < all && !pair_finished(done, games, p)) {
                pairs.insert(p);
            }
        });
        for pair in pairs {
            if pair >= self.pairs || self.pair_done(pair) {
                continue;
            }
            match self.claims.owner(pair).map_err(|e| io_text(&path, e))? {
                Some(claim) if claim.owner == me => self.hold(pair, claim.generation),
                // Made but never named (killed in between, on a file system without hard
                // links): it listed the pair, so the claim was its own. Taken over rather than
                // held, so that were it another task's after all, one result stands.
                Some(claim) if claim.owner.is_empty() => {
                    let taken = self.claims.take_over(pair, &claim);
                    if taken.map_err(|e| io_text(&path, e))? {
                        self.hold(pair, claim.generation + 1);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn pair_games(&self, pair: u64) -> impl Iterator<Item = u64> {
        games_of_pair(pair, self.games)
    }

    fn pair_done(&self, pair: u64) -> bool {
        pair_finished(&self.done, self.games, pair)
    }

    fn hold(&mut self, pair: u64, generation: u32) {
        if self.held.insert(pair, generation).is_none() {
            let games: Vec<u64> = self
                .pair_games(pair)
                .filter(|&g| !self.done.contains(g))
                .collect();
            self.queue.extend(games);
            self.open.store(self.held.len() as u64, Ordering::SeqCst);
        }
    }

    /// The pairs of a block this task has just claimed, those not finished yet.
    fn hold_block(&mut self, block: std::ops::Range<u64>) {
        for pair in block {
            if !self.pair_done(pair) {
                self.hold(pair, 1);
            }
        }
    }

    /// A finished game, from any task's journal.
    pub(super) fn seen(&mut self, index: u64, record: &GameRecord) {
        if index >= self.games {
            return;
        }
        self.done.insert(index);
        if let Some(pool) = &mut self.pool {
            pool.add(index, record);
        }
        let pair = index / 2;
        if self.held.contains_key(&pair) && self.pair_done(pair) {
            self.held.remove(&pair);
            self.open.store(self.held.len() as u64, Ordering::SeqCst);
        }
    }

    /// Whether this task still holds the pair of game `index` (no task took it over while this
    /// one looked dead): only then is its result recorded.
    pub(super) fn still_holds(&mut self, index: u64) -> bool {
        match self.held.get(&(index / 2)) {
            Some(&generation) => self.claims.still_mine(index / 2, generation),
            None => false,
        }
    }

    /// A game this task finished and journalled.
    pub(super) fn record_own(&mut self, index: u64, record: &GameRecord) {
        self.seen(index, record);
        self.catch_up();
    }

    pub(super) fn decided(&self) -> bool {
        self.pool
            .as_ref()
            .is_some_and(|p| p.ledger.decision.is_some())
    }

    /// Reads, for the pooled SPRT, the journals of the tasks holding the games it waits for,
    /// for as long as they bring it forward.
    fn catch_up(&mut self) {
        loop {
            let Some(next) = self.pool.as_ref().map(|p| p.next) else {
                return;
            };
            if next >= self.games || self.decided() {
                return;
            }
            let Ok(Some(claim)) = self.claims.owner(next / 2) else {
                return;
            };
            if claim.owner == self.claims.me() {
                return;
            }
            self.read_journal(&claim.owner);
            if self.pool.as_ref().map(|p| p.next) == Some(next) {
                return;
            }
        }
    }

    /// The next game for a worker of this task.
    fn next(&mut self) -> Result<Next, String> {
        if self.decided() {
            return Ok(Next::Finished);
        }
        if let Some(game) = self.queue.pop_front() {
            return Ok(Next::Play(game));
        }
        self.take_over_what_the_sprt_waits_for();
        if let Some(game) = self.queue.pop_front() {
            return Ok(Next::Play(game));
        }
        let end = self.claim_end();
        if let Some(game) = self.claim_next(end)? {
            return Ok(Next::Play(game));
        }
        if end < self.pairs {
            // Held back by the window: the pair the SPRT waits for is under way (or its task
            // has stalled, and is taken over once silent for a lease). Its result is read as
            // soon as its task writes it.
            self.catch_up();
            return Ok(Next::Wait);
        }
        self.finish_what_others_left()
    }

    /// The pairs below this one may be claimed now: all of them, or for a pooled SPRT those
    /// within the window past the first pair it waits for.
    fn claim_end(&self) -> u64 {
        match &self.pool {
            Some(pool) => (pool.next / 2).saturating_add(self.window).min(self.pairs),
            None => self.pairs,
        }
    }

    /// Claims the lowest pair below `end` no task has claimed, and returns its first game.
    fn claim_next(&mut self, end: u64) -> Result<Option<u64>, String> {
        let path = self.root.join(super::claims::CLAIMS_DIR);
        let (done, games) = (&self.done, self.games);
        let finished = |pair: u64| pair_finished(done, games, pair);
        let claimed = self
            .claims
            .claim_lowest(&mut self.cursor, end, finished)
            .map_err(|e| io_text(&path, e))?;
        Ok(claimed.and_then(|block| {
            self.hold_block(block);
            self.queue.pop_front()
        }))
    }

    /// The pooled SPRT waits for a game whose task has died: this task plays it.
    fn take_over_what_the_sprt_waits_for(&mut self) {
        let Some(next) = self.pool.as_ref().map(|p| p.next) else {
            return;
        };
        if next >= self.games || !due(&mut self.last_blocker_look) {
            return;
        }
        let pair = next / 2;
        if self.held.contains_key(&pair) {
            return;
        }
        if let Ok(Some(claim)) = self.claims.owner(pair) {
            self.take_if_left(pair, &claim);
        }
    }

    /// Takes `pair` over when its claim is this task's own from before a restart, or its
    /// owner is dead. True if this task now holds it.
    fn take_if_left(&mut self, pair: u64, claim: &Claim) -> bool {
        if claim.owner == self.claims.me() {
            self.hold(pair, claim.generation);
            return true;
        }
        let liveness = self.claims.look(&claim.owner);
        if !matches!(liveness, Liveness::Dead | Liveness::Quit | Liveness::Ended) {
            return false;
        }
        // Finished after all: its last games may be in its journal.
        self.read_journal(&claim.owner.clone());
        if self.pair_done(pair) {
            return false;
        }
        match self.claims.take_over(pair, claim) {
            Ok(true) => {
                let why = match liveness {
                    Liveness::Dead => "silent for a whole lease",
                    _ => "which ended without finishing it",
                };
                notice!(
                    "{}: took over game pair {} from {}, {why}",
                    self.claims.me(),
                    pair + 1,
                    claim.owner
                );
                self.hold(pair, claim.generation + 1);
                true
            }
            _ => false,
        }
    }

    /// Every pair is claimed: take over the unfinished pairs of dead tasks; wait while live
    /// ones still hold some, which they may yet leave.
    fn finish_what_others_left(&mut self) -> Result<Next, String> {
        if !due(&mut self.last_end_look) {
            return Ok(Next::Wait);
        }
        // The others' latest games may decide the pooled SPRT meanwhile.
        self.catch_up();
        if self.decided() {
            return Ok(Next::Finished);
        }
        let mut waiting = false;
        for task in self.other_tasks() {
            if !self.same_run(&task) {
                continue;
            }
            match self.claims.look(&task) {
                Liveness::Ended => continue,
                // Holding nothing now, and every pair is claimed: it can only take pairs over,
                // and it is alive to play them. A beat written before it claimed its last
                // pair says 0 too, and stays so if it was killed before the next: its list of
                // claims tells.
                Liveness::Alive { open: 0 } if !self.may_hold_unfinished(&task) => continue,
                // Its pairs are under way, or it may die and leave them.
                Liveness::Alive { .. } => {
                    waiting = true;
                    continue;
                }
                Liveness::Dead | Liveness::Quit => {}
            }
            self.take_over_from(&task);
        }
        if let Some(game) = self.queue.pop_front() {
            return Ok(Next::Play(game));
        }
        if waiting {
            return Ok(Next::Wait);
        }
        if self.pool.is_some() {
            // Ending: the pooled count takes in every task's games, so this task states what
            // the run as a whole has come to.
            for task in self.other_tasks() {
                self.read_journal(&task);
            }
        }
        Ok(Next::Finished)
    }

    /// Whether `task` listed a pair that is not finished and no other task has taken over: it
    /// may hold it, whatever its last beat said.
    fn may_hold_unfinished(&mut self, task: &str) -> bool {
        self.read_journal(task);
        self.read_claim_log(task);
        let (done, games) = (&self.done, self.games);
        let Some(reading) = self.others.get_mut(task) else {
            return false;
        };
        // Finished pairs are dropped for good: a long task lists thousands, looked at each time.
        reading
            .listed
            .retain(|&pair| !pair_finished(done, games, pair));
        let left: Vec<u64> = reading.listed.iter().copied().collect();
        left.into_iter().any(|pair| match self.claims.owner(pair) {
            // Another task's now: its own heartbeat speaks for it.
            Ok(Some(claim)) => claim.owner == task || claim.owner.is_empty(),
            // Listed and not claimed yet, or unreadable: it may claim it still.
            Ok(None) | Err(_) => true,
        })
    }

    /// Takes over the pairs a dead task listed and did not finish.
    fn take_over_from(&mut self, task: &str) {
        self.read_journal(task);
        self.read_claim_log(task);
        let listed: Vec<u64> = self.others[task].listed.iter().copied().collect();
        for pair in listed {
            if self.pair_done(pair) {
                if let Some(r) = self.others.get_mut(task) {
                    r.listed.remove(&pair);
                }
                continue;
            }
            if self.held.contains_key(&pair) {
                continue;
            }
            match self.claims.owner(pair) {
                // Listed but never held (it died between listing and claiming).
                Ok(None) => {
                    if let Ok(Some(block)) = self.claims.claim(pair) {
                        self.hold_block(block);
                    }
                }
                Ok(Some(claim)) if claim.owner == task => {
                    self.take_if_left(pair, &claim);
                }
                // Made but never named: the task died between creating its claim and
                // writing its name in it. It listed the pair, so the claim was its own.
                Ok(Some(claim)) if claim.owner.is_empty() => {
                    let claim = Claim {
                        owner: task.to_string(),
                        ..claim
                    };
                    self.take_if_left(pair, &claim);
                }
                // Another task's now: its own heartbeat speaks for it.
                _ => {
                    if let Some(r) = self.others.get_mut(task) {
                        r.listed.remove(&pair);
                    }
                }
            }
        }
    }

    /// The other tasks' folders in the run's folder, in name order.
    fn other_tasks(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut tasks: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("shard-") && n != self.claims.me())
            .collect();
        tasks.sort();
        tasks
    }

    /// Whether `task`'s folder holds a shard of this run; a folder of another run given the
    /// same --out is never read.
    fn same_run(&mut self, task: &str) -> bool {
        let reading = self.others.entry(task.to_string()).or_default();
        if let Some(same) = reading.same_run {
            return same;
        }
        let folder = self.root.join(task);
        // Not written yet (a task starting), or being written: looked at again next time.
        let same = match RunSpec::load(&folder) {
            Ok(spec) => spec.identity() == self.identity,
            Err(_) => return false,
        };
        if !same {
            notice!(
                "warning: {} is not a shard of this run (its settings differ); it is left out",
                folder.display()
            );
        }
        self.others.get_mut(task).expect("inserted above").same_run = Some(same);
        same
    }

    /// Reads what `task` has added to its journal since the last read.
    fn read_journal(&mut self, task: &str) {
        if !self.same_run(task) {
            return;
        }
        let path = self.root.join(task).join(JOURNAL_FILE);
        let from = self.others[task].journal;
        let read = for_new_lines(&path, from, |line| {
            let Some((entry, _)) = parse_line(String::from_utf8_lossy(line).trim()) else {
                return;
            };
            match self.check.check(&entry) {
                Ok(()) => self.seen(entry.index, &entry.record),
                Err(why) => notice!(
                    "warning: {}: game {} is not a game of this run ({why}); not counted",
                    path.display(),
                    u128::from(entry.index) + 1
                ),
            }
        });
        let Some(read) = read else {
            return;
        };
        if let Some(r) = self.others.get_mut(task) {
            r.journal = from + read;
        }
    }

    /// Reads the pairs `task` has listed since the last read.
    fn read_claim_log(&mut self, task: &str) {
        let path = self.root.join(task).join(CLAIM_LOG);
        let from = self.others[task].log;
        let (pairs, games, done) = (self.pairs, self.games, &self.done);
        let r = self.others.get_mut(task).expect("read above");
        // Pairs seen finished (their journal is read first) are never kept: a long task lists
        // hundreds of thousands.
        let read = for_new_lines(&path, from, |line| {
            let pair = std::str::from_utf8(line)
                .ok()
                .and_then(|l| l.trim().parse::<u64>().ok());
            if let Some(p) = pair.filter(|&p| p < pairs && !pair_finished(done, games, p)) {
                r.listed.insert(p);
            }
        });
        if let Some(read) = read {
            r.log = from + read;
        }
    }
}

impl GameSource for Mutex<Split> {
    fn next_game(&self) -> Next {
        let mut split = self.lock().unwrap_or_else(|e| e.into_inner());
        if split.error.is_some() {
            return Next::Finished;
        }
        split.next().unwrap_or_else(|e| {
            split.error = Some(e);
            Next::Finished
        })
    }
}

/// The games of a pair: two, or one for the last pair of an odd schedule.
fn games_of_pair(pair: u64, games: u64) -> impl Iterator<Item = u64> {
    (2 * pair..2 * pair + 2).filter(move |&g| g < games)
}

fn pair_finished(done: &Bitset, games: u64, pair: u64) -> bool {
    games_of_pair(pair, games).all(|g| done.contains(g))
}

/// Whether a rate-limited look at the shared disk is due (and marks it done).
fn due(last: &mut Option<Instant>) -> bool {
    let now = Instant::now();
    if last.is_some_and(|t| now.duration_since(t) < LOOK_EVERY) {
        return false;
    }
    *last = Some(now);
    true
}

/// Hands each whole line of `path` from byte `from` on (without its newline) to `each`, one at
/// a time, and returns how many bytes they take; a line still being written (no newline yet) is
/// left for the next read. A task's journal grows to hundreds of megabytes: it is never held.
fn for_new_lines(path: &Path, from: u64, mut each: impl FnMut(&[u8])) -> Option<u64> {
    use std::io::BufRead;
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut read = 0u64;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(n) if n > 0 && line.last() == Some(&b'\n') => {
                read += n as u64;
                each(&line[..n - 1]);
            }
            _ => return Some(read),
        }
    }
}
