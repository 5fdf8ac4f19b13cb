//! Who plays which game pair of a split run: claims on the shared file system.
//!
//! A task claims a block of pairs from `p` on by linking a file holding its own name to
//! `claims/p<p>`, which fails if the name is taken: atomic on local file systems and on NFS (unlike
//! `flock`), and the claim is never seen, nor left by a kill, without its owner's name (see
//! `create_new`). Tasks walk the pairs in the schedule's order, so any number of them, started in
//! any order, play the lowest pairs first and an SPRT counting pairs in order is never held back by
//! a task still in the queue. A pooled SPRT claims pair by pair, so that the tasks stop near the
//! pair where one machine would; any other run claims blocks of pairs, as many pairs to a block as
//! keep its claim files under `MAX_CLAIM_FILES` however many games it has (a million games: 123
//! pairs a block), which is what a shared file system's metadata server is spared. The block's size
//! is in `claims/block`.
//!
//! A claim lasts while its task is alive: every task rewrites its heartbeat file
//! (`claims/alive-<task>`) several times per lease. A task whose heartbeat has not changed for a
//! whole lease, by the observer's own clock (so clocks of different nodes never meet), is dead
//! to the others: its unfinished pair is taken over by creating the claim's next generation,
//! `claims/p<p>.2`, `.3`, ..., made the same way, one pair at a time. The highest generation
//! names the owner; the first generation is the claim on the pair's block.
//! A task requeued under its own name picks its own claims up at once.
//!
//! Each task also lists the pairs it claims in its own folder (`claimed`, written before the
//! claim is made), so that the pairs a dead task left unfinished are found by reading its list
//! and its journal, never by scanning every claim. The heartbeat says how many pairs its task
//! holds unfinished, so a task at the end of the schedule knows whether to wait for the others.
//!
//! The folder also holds `run.json`, the identity of the run, so that tasks of another run
//! given the same folder are refused before they claim anything, and `next`, a hint of the
//! lowest pair that may be unclaimed (every pair below it is claimed), so that a task joining
//! late, or one of many, does not try every claimed pair in turn.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The claims folder's name in a split run's folder.
pub const CLAIMS_DIR: &str = "claims";

/// The file in the claims folder naming the run the claims are of.
pub const IDENTITY_FILE: &str = "run.json";

/// The file in the claims folder with the hint of the first pair that may be unclaimed.
const HINT_FILE: &str = "next";

/// The hint's width in bytes: any pair number, padded.
const HINT_WIDTH: usize = 20;

/// A task's list of the pairs it claimed, in its own folder.
pub const CLAIM_LOG: &str = "claimed";

/// The file in the claims folder with the number of pairs a claim holds.
const BLOCK_FILE: &str = "block";

/// At most this many claims on the pairs of a run that claims blocks (takeovers aside).
pub const MAX_CLAIM_FILES: u64 = 4096;

/// How a run's pairs are claimed: `size` pairs at a time, of `pairs` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    pub size: u64,
    pub pairs: u64,
}

impl Blocks {
    /// Pair by pair, however many there are (a tune's iterations, played in order).
    pub const SINGLE: Blocks = Blocks {
        size: 1,
        pairs: u64::MAX,
    };

    /// The blocks of a run of `pairs` game pairs: single pairs when it is counted in order (a
    /// pooled SPRT), else the fewest pairs a block that keep the claims under `MAX_CLAIM_FILES`.
    pub fn of_run(pairs: u64, in_order: bool) -> Blocks {
        let size = if in_order {
            1
        } else {
            pairs.div_ceil(MAX_CLAIM_FILES).max(1)
        };
        Blocks { size, pairs }
    }

    /// The pairs of the block holding `pair`.
    pub fn around(&self, pair: u64) -> std::ops::Range<u64> {
        let start = pair - pair % self.size;
        start..(start + self.size).min(self.pairs.max(pair + 1))
    }
}

/// What a task's heartbeat says of it, as this task has watched it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Beating, with this many pairs claimed and not finished at its last beat.
    Alive { open: u64 },
    /// Ended, holding no unfinished pair: nothing of it to wait for.
    Ended,
    /// Ended holding unfinished pairs (interrupted, cancelled, out of time): they are left for
    /// the others at once.
    Quit,
    /// No beat for a whole lease.
    Dead,
}

/// The claim on one pair: its owner and generation (1 for the first claim).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub owner: String,
    pub generation: u32,
}

pub struct Claims {
    dir: PathBuf,
    me: String,
    blocks: Blocks,
    log: std::fs::File,
    hint: std::fs::File,
    lease: Duration,
    /// Each other task's heartbeat as last read, and when this task first saw it so.
    seen: HashMap<String, (Vec<u8>, Instant)>,
    /// Files opened, created or read: the claim protocol's cost, for the bench.
    pub touched: u64,
}

/// The file of a claim on `pair`: for the first generation, the claim on the pair's block,
/// named by its first pair; for a takeover, the pair's own.
fn pair_file(dir: &Path, size: u64, pair: u64, generation: u32) -> PathBuf {
    match generation {
        1 => dir.join(format!("p{}", pair - pair % size)),
        g => dir.join(format!("p{pair}.{g}")),
    }
}

/// Creates `path` only if it is not there, with `content`; false if it was there.
///
/// The content is written to a file of its own first and linked to `path`, so that a claim
/// is never seen, nor left by a kill, without its owner's name. Whether the link was made is
/// read from the new file's link count, as open(2) advises for NFS, whose link may answer
/// "exists" to its own retried request. A file system without hard links creates `path`
/// exclusively and writes the name after, the one case where a kill can leave a claim unnamed.
fn create_new(path: &Path, content: &[u8]) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // Unique across nodes (the time), processes and this process's threads (the count).
    static STAGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = STAGED.fetch_add(1, Ordering::Relaxed);
    let staged = dir.join(format!(".new-{}-{count}-{nonce}", std::process::id()));
    std::fs::write(&staged, content)?;
    let linked = std::fs::hard_link(&staged, path);
    // Made whatever the call answered, when the staged file has gained the link.
    let made = std::fs::metadata(&staged).is_ok_and(|m| m.nlink() == 2);
    let _ = std::fs::remove_file(&staged);
    match linked {
        _ if made => Ok(true),
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(_) => create_then_name(path, content),
    }
}

fn create_then_name(path: &Path, content: &[u8]) -> std::io::Result<bool> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => {
            file.write_all(content)?;
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

impl Claims {
    /// The claims of the run `identity` in `run_dir`, for the task `me`. The first task writes
    /// the identity; a task of another run is refused.
    pub fn open(
        run_dir: &Path,
        me: &str,
        identity: &str,
        lease: Duration,
        blocks: Blocks,
    ) -> Result<Claims, String> {
        let blocks = settle_blocks(&run_dir.join(CLAIMS_DIR), me, blocks)?;
        let dir = join_run(run_dir, me, identity)?;
        let log_path = run_dir.join(me).join(CLAIM_LOG);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
        let hint_path = dir.join(HINT_FILE);
        let hint = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&hint_path)
            .map_err(|e| format!("cannot write {}: {e}", hint_path.display()))?;
        Ok(Claims {
            dir,
            me: me.to_string(),
            blocks,
            log,
            hint,
            lease,
            seen: HashMap::new(),
            touched: 0,
        })
    }

    pub fn me(&self) -> &str {
        &self.me
    }

    /// Claims the block holding `pair` for this task if no task has; its pairs if it is now
    /// this task's.
    pub fn claim(&mut self, pair: u64) -> std::io::Result<Option<std::ops::Range<u64>>> {
        let block = self.blocks.around(pair);
        // Listed first: a task killed in between lists pairs it does not hold, which readers
        // check, and never holds a pair it does not list. (The list is not synced: a killed
        // process's writes stand; only a node that loses its power may lose the list's last
        // lines, and an SPRT still takes those pairs over when it waits on them.)
        let listed: String = block.clone().map(|p| format!("{p}\n")).collect();
        self.log.write_all(listed.as_bytes())?;
        self.touched += 2;
        let file = pair_file(&self.dir, self.blocks.size, pair, 1);
        if !create_new(&file, self.me.as_bytes())? {
            return Ok(None);
        }
        self.set_hint(block.end);
        Ok(Some(block))
    }

    /// Claims the lowest block from `cursor` on (starting below `pairs`) that no task has
    /// claimed and whose pairs `finished` does not all rule out; moves `cursor` past what it
    /// tried. Returns the block's pairs.
    pub fn claim_lowest(
        &mut self,
        cursor: &mut u64,
        pairs: u64,
        finished: impl Fn(u64) -> bool,
    ) -> std::io::Result<Option<std::ops::Range<u64>>> {
        *cursor = (*cursor).max(self.hint());
        while *cursor < pairs {
            let block = self.blocks.around(*cursor);
            *cursor = block.end;
            if block.clone().all(&finished) {
                continue;
            }
            // Looked at before it is listed and tried: a claim seen taken costs one look, not
            // a synced write; the hint then jumps past the pairs the others took meanwhile.
            self.touched += 1;
            let file = pair_file(&self.dir, self.blocks.size, block.start, 1);
            if !file.exists() {
                if let Some(block) = self.claim(block.start)? {
                    return Ok(Some(block));
                }
            }
            *cursor = (*cursor).max(self.hint());
        }
        Ok(None)
    }

    /// The lowest pair that may be unclaimed, as the tasks have last said.
    pub fn hint(&mut self) -> u64 {
        use std::os::unix::fs::FileExt;
        self.touched += 1;
        let mut text = [0u8; HINT_WIDTH];
        match self.hint.read_at(&mut text, 0) {
            Ok(HINT_WIDTH) => String::from_utf8_lossy(&text).trim().parse().unwrap_or(0),
            _ => 0,
        }
    }

    fn set_hint(&mut self, next: u64) {
        use std::os::unix::fs::FileExt;
        // A hint only, written in place at a fixed width (one small write, no new file): two
        // tasks writing at once may leave the lower one, which costs a few refused claims,
        // never a pair skipped, as every pair below any hint written is claimed.
        self.touched += 1;
        let text = format!("{next:>width$}", width = HINT_WIDTH);
        let _ = self.hint.write_at(text.as_bytes(), 0);
    }

    /// The current claim on `pair`, if any.
    pub fn owner(&mut self, pair: u64) -> std::io::Result<Option<Claim>> {
        let claim = current_claim(&self.dir, self.blocks.size, pair)?;
        self.touched += 1 + claim.as_ref().map_or(0, |c| u64::from(c.generation));
        Ok(claim)
    }

    /// Whether this task still holds `pair` at `generation`: no other task has taken it over.
    pub fn still_mine(&mut self, pair: u64, generation: u32) -> bool {
        self.touched += 1;
        !pair_file(&self.dir, self.blocks.size, pair, generation + 1).exists()
    }

    /// Takes `claim` over for this task; false if another task did first.
    pub fn take_over(&mut self, pair: u64, claim: &Claim) -> std::io::Result<bool> {
        self.touched += 1;
        create_new(
            &pair_file(&self.dir, self.blocks.size, pair, claim.generation + 1),
            self.me.as_bytes(),
        )
    }

    /// Whether `task` is alive: dead once its heartbeat has not changed for a whole lease, as
    /// this task has watched it. A task never seen before is given a lease from now.
    pub fn look(&mut self, task: &str) -> Liveness {
        self.touched += 1;
        let beat = std::fs::read(heartbeat_file(&self.dir, task)).unwrap_or_default();
        let text = String::from_utf8_lossy(&beat);
        let words: Vec<&str> = text.split_whitespace().collect();
        let open = words
            .get(3)
            .and_then(|n| n.parse().ok())
            // A task that never beat: assume it holds pairs.
            .unwrap_or(1);
        if words.get(4) == Some(&"ended") {
            // Stopped (interrupted, or its time limit): what it holds is left for the others now.
            return if open == 0 {
                Liveness::Ended
            } else {
                Liveness::Quit
            };
        }
        let now = Instant::now();
        match self.seen.get(task) {
            Some((last, since)) if *last == beat => {
                if now.duration_since(*since) >= self.lease {
                    Liveness::Dead
                } else {
                    Liveness::Alive { open }
                }
            }
            _ => {
                self.seen.insert(task.to_string(), (beat, now));
                Liveness::Alive { open }
            }
        }
    }

    /// Starts this task's heartbeat, beating until the returned guard is dropped; each beat
    /// says how many pairs the task holds unfinished (`open`).
    pub fn start_heartbeat(&self, open: Arc<std::sync::atomic::AtomicU64>) -> Heartbeat {
        let stop = Arc::new(AtomicBool::new(false));
        let (dir, me, stop_flag) = (self.dir.clone(), self.me.clone(), stop.clone());
        // Several beats per lease, so one slow write does not make a live task look dead.
        let every = (self.lease / 6).max(Duration::from_millis(100));
        let thread = std::thread::Builder::new()
            .name("heartbeat".into())
            .spawn(move || {
                let path = heartbeat_file(&dir, &me);
                let tmp = dir.join(format!(".alive-{me}.tmp"));
                let started = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                let mut beat = 0u64;
                // Renamed into place: a reader sees one beat or the next, never half.
                let write = |beat: u64, last: &str| {
                    let text = format!(
                        "{} {started} {beat} {}{last}\n",
                        std::process::id(),
                        open.load(Ordering::SeqCst)
                    );
                    if std::fs::write(&tmp, text).is_ok() {
                        let _ = std::fs::rename(&tmp, &path);
                    }
                };
                loop {
                    beat += 1;
                    if stop_flag.load(Ordering::SeqCst) {
                        // The last beat says the task ended, and what it left unfinished.
                        write(beat, " ended");
                        break;
                    }
                    let said = open.load(Ordering::SeqCst);
                    write(beat, "");
                    // Beats again early when the task's open pairs change: a task killed
                    // just after claiming must not look as if it held nothing.
                    let mut slept = Duration::ZERO;
                    while slept < every
                        && !stop_flag.load(Ordering::SeqCst)
                        && open.load(Ordering::SeqCst) == said
                    {
                        let step = Duration::from_millis(20).min(every - slept);
                        std::thread::sleep(step);
                        slept += step;
                    }
                }
            })
            .ok();
        Heartbeat { stop, thread }
    }
}

/// The blocks the run in the claims folder `dir` claims by; `arbiter merge` reads the size
/// from `claims/block`. Every task writes it before it claims anything, so a folder holding
/// claims and no block file is a run begun before blocks, which claims pair by pair: its
/// `p<n>` files are single pairs, and reading them as blocks would play pairs twice.
fn settle_blocks(dir: &Path, me: &str, blocks: Blocks) -> Result<Blocks, String> {
    let block_path = dir.join(BLOCK_FILE);
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", block_path.display());
    std::fs::create_dir_all(dir).map_err(fail)?;
    if !block_path.exists() {
        let claimed = std::fs::read_dir(dir)
            .map_err(fail)?
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with('p'));
        let size = if claimed { 1 } else { blocks.size };
        let tmp = dir.join(format!(".{BLOCK_FILE}.{me}.{}", std::process::id()));
        std::fs::write(&tmp, size.to_string()).map_err(fail)?;
        // Linked, not renamed: the first task's size stands.
        let linked = std::fs::hard_link(&tmp, &block_path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fail(e)),
        }
    }
    let size = std::fs::read_to_string(&block_path)
        .map_err(fail)?
        .trim()
        .parse()
        .ok()
        .filter(|&size| size > 0)
        .ok_or_else(|| format!("{} does not hold a block size", block_path.display()))?;
    Ok(Blocks { size, ..blocks })
}

/// Makes `run_dir` the folder of the split run `identity`, or checks that it is; a folder
/// holding another run's claims is refused. Returns the claims folder.
pub fn join_run(run_dir: &Path, me: &str, identity: &str) -> Result<PathBuf, String> {
    let dir = run_dir.join(CLAIMS_DIR);
    let fail = |e: std::io::Error| format!("cannot use {}: {e}", dir.display());
    std::fs::create_dir_all(&dir).map_err(fail)?;
    let path = dir.join(IDENTITY_FILE);
    // Written whole under a name of its own, then linked into place: a link is refused if the
    // name exists (atomic on NFS too), and a reader never sees half of it.
    let tmp = dir.join(format!(".{IDENTITY_FILE}.{me}.{}", std::process::id()));
    std::fs::write(&tmp, identity).map_err(fail)?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(dir),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            let theirs = std::fs::read_to_string(&path).map_err(fail)?;
            if let Ok(value) = serde_json::from_str(&theirs) {
                super::spec::check_folder_format(&value, &path)?;
            }
            match super::spec::same_identity(&theirs, identity) {
                Ok(()) => Ok(dir),
                Err(how) => Err(format!(
                    "{} holds a split run with other settings ({how}; see {}): give this run \
                     another --out or --name",
                    run_dir.display(),
                    path.display()
                )),
            }
        }
        Err(e) => Err(fail(e)),
    }
}

fn heartbeat_file(dir: &Path, task: &str) -> PathBuf {
    dir.join(format!("alive-{task}"))
}

/// A running heartbeat; dropping it stops the beats (the task then looks dead after a lease).
pub struct Heartbeat {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The claim on `pair` as it stands: the highest generation's.
fn current_claim(dir: &Path, size: u64, pair: u64) -> std::io::Result<Option<Claim>> {
    let mut current = None;
    for generation in 1.. {
        match std::fs::read(pair_file(dir, size, pair, generation)) {
            Ok(owner) => {
                current = Some(Claim {
                    owner: String::from_utf8_lossy(&owner).into_owned(),
                    generation,
                })
            }
            Err(e) if e.kind() == ErrorKind::NotFound => break,
            Err(e) => return Err(e),
        }
    }
    Ok(current)
}

/// The current owner of `pair` in the run folder `run_dir`, as `arbiter merge` asks when two
/// tasks recorded the same game: the one holding the claim is the one whose result stands.
pub fn owner_in(run_dir: &Path, pair: u64) -> Option<String> {
    let dir = run_dir.join(CLAIMS_DIR);
    let size = std::fs::read_to_string(dir.join(BLOCK_FILE))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .filter(|&size| size > 0)
        // Written by every task that claimed anything: a run without it claimed pair by pair.
        .unwrap_or(1);
    current_claim(&dir, size, pair)
        .ok()
        .flatten()
        .map(|c| c.owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("arbiter-claims-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_pair_is_claimed_once_and_taken_over_from_a_dead_task_only() {
        let dir = scratch("once");
        let lease = Duration::from_millis(300);
        for task in ["shard-1-of-2", "shard-2-of-2"] {
            std::fs::create_dir_all(dir.join(task)).unwrap();
        }
        let blocks = Blocks::of_run(10, true);
        let mut a = Claims::open(&dir, "shard-1-of-2", "{run}", lease, blocks).unwrap();
        let mut b = Claims::open(&dir, "shard-2-of-2", "{run}", lease, blocks).unwrap();
        assert_eq!(a.claim(0).unwrap(), Some(0..1));
        assert_eq!(b.claim(0).unwrap(), None);
        assert_eq!(b.hint(), 1);
        assert_eq!(b.claim(1).unwrap(), Some(1..2));
        assert_eq!(a.hint(), 2);
        let claim = b.owner(0).unwrap().unwrap();
        assert_eq!(claim.owner, "shard-1-of-2");
        let open = Arc::new(std::sync::atomic::AtomicU64::new(3));
        let beat = a.start_heartbeat(open);
        std::thread::sleep(Duration::from_millis(100));
        // Alive: first sight starts the lease, and the beats keep it from running out.
        assert_eq!(b.look("shard-1-of-2"), Liveness::Alive { open: 3 });
        std::thread::sleep(lease * 2);
        assert_eq!(b.look("shard-1-of-2"), Liveness::Alive { open: 3 });
        drop(beat);
        // Ended holding three pairs: left to the others at once.
        assert_eq!(b.look("shard-1-of-2"), Liveness::Quit);
        // Silent without a word (killed): dead once a lease has passed.
        std::fs::write(dir.join("claims/alive-shard-1-of-2"), "1 2 3 3\n").unwrap();
        assert!(matches!(b.look("shard-1-of-2"), Liveness::Alive { .. }));
        std::thread::sleep(lease + Duration::from_millis(100));
        assert_eq!(b.look("shard-1-of-2"), Liveness::Dead);
        // Ended holding none: nothing to wait for.
        let beat = a.start_heartbeat(Arc::new(std::sync::atomic::AtomicU64::new(0)));
        drop(beat);
        assert_eq!(b.look("shard-1-of-2"), Liveness::Ended);
        let listed = std::fs::read_to_string(dir.join("shard-2-of-2").join(CLAIM_LOG)).unwrap();
        assert_eq!(listed, "0\n1\n", "tried claims are listed, held or not");
        assert!(b.take_over(0, &claim).unwrap());
        assert!(!a.take_over(0, &claim).unwrap(), "one taker only");
        assert_eq!(b.owner(0).unwrap().unwrap().owner, "shard-2-of-2");
        assert!(!a.still_mine(0, 1));
        assert!(b.still_mine(0, 2));
        assert_eq!(owner_in(&dir, 0).as_deref(), Some("shard-2-of-2"));
        let other = Claims::open(&dir, "shard-3-of-3", "{another run}", lease, blocks);
        assert!(other.err().unwrap().contains("other settings"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_block_is_claimed_whole_and_taken_over_pair_by_pair() {
        let dir = scratch("blocks");
        for task in ["shard-1-of-2", "shard-2-of-2"] {
            std::fs::create_dir_all(dir.join(task)).unwrap();
        }
        // 10,000 pairs: three to a claim keep the files under the cap.
        let blocks = Blocks::of_run(10_000, false);
        assert_eq!(blocks.size, 3);
        assert!(10_000u64.div_ceil(blocks.size) <= MAX_CLAIM_FILES);
        assert_eq!(Blocks::of_run(500_000, false).size, 123);
        assert_eq!(
            Blocks::of_run(500_000, true).size,
            1,
            "a pooled SPRT claims pairs"
        );
        let small = Blocks { size: 3, pairs: 7 };
        let lease = Duration::from_secs(60);
        let mut a = Claims::open(&dir, "shard-1-of-2", "{run}", lease, small).unwrap();
        let mut b = Claims::open(&dir, "shard-2-of-2", "{run}", lease, small).unwrap();
        let (mut cursor_a, mut cursor_b) = (0, 0);
        let none_finished = |_| false;
        assert_eq!(
            a.claim_lowest(&mut cursor_a, 7, none_finished).unwrap(),
            Some(0..3)
        );
        assert_eq!(
            b.claim_lowest(&mut cursor_b, 7, none_finished).unwrap(),
            Some(3..6)
        );
        // The last block is cut at the run's end; a block all finished is passed over.
        let mut cursor = 0;
        assert_eq!(
            a.claim_lowest(&mut cursor, 7, |p| p < 6).unwrap(),
            Some(6..7)
        );
        assert_eq!(
            a.claim_lowest(&mut cursor_a, 7, none_finished).unwrap(),
            None
        );
        let listed = std::fs::read_to_string(dir.join("shard-2-of-2").join(CLAIM_LOG)).unwrap();
        assert_eq!(listed, "3\n4\n5\n", "every pair of a block is listed");
        for (pair, owner) in [
            (0, "shard-1-of-2"),
            (2, "shard-1-of-2"),
            (4, "shard-2-of-2"),
        ] {
            assert_eq!(b.owner(pair).unwrap().unwrap().owner, owner, "pair {pair}");
        }
        // One pair of a's block taken over: the others stay a's.
        let claim = b.owner(1).unwrap().unwrap();
        assert!(b.take_over(1, &claim).unwrap());
        assert!(!a.still_mine(1, 1));
        assert!(a.still_mine(0, 1) && a.still_mine(2, 1));
        assert_eq!(owner_in(&dir, 1).as_deref(), Some("shard-2-of-2"));
        assert_eq!(owner_in(&dir, 2).as_deref(), Some("shard-1-of-2"));
        let files = std::fs::read_dir(dir.join(CLAIMS_DIR))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('p')
            })
            .count();
        assert_eq!(files, 4, "three blocks and one takeover");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_run_begun_before_blocks_goes_on_claiming_pair_by_pair() {
        let dir = scratch("before-blocks");
        std::fs::create_dir_all(dir.join("shard-2-of-2")).unwrap();
        // As an older version left it: the identity and single-pair claims, no block file.
        std::fs::create_dir_all(dir.join(CLAIMS_DIR)).unwrap();
        std::fs::write(dir.join(CLAIMS_DIR).join(IDENTITY_FILE), "{run}").unwrap();
        std::fs::write(dir.join(CLAIMS_DIR).join("p0"), "shard-1-of-2").unwrap();
        let lease = Duration::from_secs(60);
        let blocks = Blocks::of_run(10_000, false);
        assert_eq!(blocks.size, 3);
        let mut b = Claims::open(&dir, "shard-2-of-2", "{run}", lease, blocks).unwrap();
        assert_eq!(
            b.claim(1).unwrap(),
            Some(1..2),
            "pair 1 was not in p0's claim"
        );
        assert_eq!(owner_in(&dir, 0).as_deref(), Some("shard-1-of-2"));
        assert_eq!(owner_in(&dir, 1).as_deref(), Some("shard-2-of-2"));
        let _ = std::fs::remove_dir_all(&dir);
        // A new run whose identity a task wrote before its claims (as the run folder does)
        // claims blocks.
        let fresh = scratch("identity-first");
        std::fs::create_dir_all(fresh.join("shard-1-of-2")).unwrap();
        join_run(&fresh, "shard-1-of-2", "{run}").unwrap();
        let mut a = Claims::open(&fresh, "shard-1-of-2", "{run}", lease, blocks).unwrap();
        assert_eq!(a.claim(1).unwrap(), Some(0..3));
        let _ = std::fs::remove_dir_all(&fresh);
    }

    #[test]
    fn a_claim_appears_with_its_owner_named_and_leaves_nothing_else() {
        let dir = scratch("named");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p0");
        // Many takers at once: one wins, and the claim is never seen empty.
        let winners: Vec<bool> = std::thread::scope(|s| {
            let takers: Vec<_> = (0..8)
                .map(|i| {
                    let path = path.clone();
                    s.spawn(move || create_new(&path, format!("task-{i}").as_bytes()).unwrap())
                })
                .collect();
            let watcher = s.spawn(|| {
                for _ in 0..10_000 {
                    if let Ok(text) = std::fs::read(&path) {
                        assert!(!text.is_empty(), "a claim seen without its owner");
                    }
                }
            });
            watcher.join().unwrap();
            takers.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(winners.iter().filter(|&&w| w).count(), 1, "{winners:?}");
        let winner = winners.iter().position(|&w| w).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("task-{winner}")
        );
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("p0")],
            "staged files are removed"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
