//! A running engine: spawned without a shell in its own process group, fed lines on stdin, its
//! stdout read on the referee's runtime (see `reader`).

use super::cgroup::{self, EngineGroup, Freezer};
use super::config::{EngineConfig, SyncBeforeGo};
use super::dialect::{Dialect, Proto, Speaker, Turn};
use super::freezer::WATCH_EVERY;
use super::log::IoLog;
use super::options::OfferedOption;
use super::protocol::{merge_info, EngineLine, Info};
use super::reader::{Line, LineReader, Waited};
use super::sandbox;
use super::watchdog::Alarm;
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout_at;

/// How long the last of a dead engine's stderr may take to be read.
const STDERR_READ_GRACE: Duration = Duration::from_millis(300);

/// How long an engine gets to exit after `quit` before it is killed.
pub const QUIT_GRACE: Duration = Duration::from_millis(500);

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot start engine '{name}' ({cmd}): {reason}")]
    Spawn {
        name: String,
        cmd: String,
        reason: String,
    },
    /// `stderr`: the last lines it wrote there, when it exited during its handshake.
    #[error("engine '{name}' exited")]
    Exited { name: String, stderr: Vec<String> },
    #[error("engine '{name}' exceeded its memory limit ({limit}) and was stopped")]
    OverMemory { name: String, limit: String },
    #[error("engine '{name}' stopped answering 'isready' between its moves")]
    Stalled { name: String },
    #[error("engine '{name}' did not answer '{what}' within {secs:.1} s")]
    Timeout {
        name: String,
        what: String,
        secs: f64,
    },
    #[error("engine '{name}': {reason}")]
    Option { name: String, reason: String },
    #[error("engine '{name}' cannot play {game}: {reason}")]
    Variant {
        name: String,
        game: String,
        reason: String,
    },
}

/// An engine's answer to a turn: its move (`None` when it claims to have none), how long it took
/// as the referee measured it, and what it reported about its search.
#[derive(Clone, Debug)]
pub struct Thought {
    pub text: Option<String>,
    pub elapsed: Duration,
    pub info: Info,
    /// The engine conceded instead of moving (CECP's `resign`).
    pub resigned: bool,
    /// When the request (`go`, or CECP's move) had been written, and when the reply was read:
    /// the referee's own clock, from which its own cost between two moves is measured.
    pub asked_at: Instant,
    pub read_at: Instant,
}

/// How long an engine may take to answer the `isready` before a clocked `go` without its clock
/// running: a machine busy with other work wakes a sleeping engine within tens of milliseconds.
const SYNC_GRACE: Duration = Duration::from_millis(100);

/// What a search's lines are read for, as `next_line` is told. Every other wait is a step of
/// the handshake or a sync, which `handshake=` bounds as a whole.
const SEARCH: &str = "go";

/// The most options (or CECP features) kept from one engine's handshake.
pub(super) const MAX_OFFERED_OPTIONS: usize = 4096;

/// A running engine: its process and the dialect it is spoken to in.
pub struct EngineProcess {
    io: EngineIo,
    dialect: Speaker,
    /// The thread that started it: its keeper dies with that thread (`PR_SET_PDEATHSIG`).
    started_on: std::thread::ThreadId,
}

/// An engine's process: spawned, written to and read from line by line. What the lines say is
/// its dialect's (`dialect/`).
pub struct EngineIo {
    pub config: EngineConfig,
    child: Child,
    stdin: ChildStdin,
    lines: LineReader<ChildStdout>,
    log: Option<IoLog>,
    /// `id name` from the handshake.
    pub id_name: Option<String>,
    /// The options the engine offered in its handshake.
    pub offered: Vec<OfferedOption>,
    /// Set once the process has been waited for: its pid may then belong to someone else.
    reaped: bool,
    /// The bytes of the last request written, kept for the next one's.
    out: Vec<u8>,
    /// The engine's pid, which is also its process group's id (`Child::id` forgets it once the
    /// process has been waited for, but its children may still be in the group).
    pgid: Option<u32>,
    /// The sandbox's control groups and scratch folder, removed when the engine is gone.
    confined: Confined,
    /// Whether its last reply took longer than `IDLE_GRACE`.
    slow: bool,
}

/// What a sandboxed engine holds besides its process.
#[derive(Debug, Default)]
struct Confined {
    group: Option<EngineGroup>,
    /// Its memory limit, when one is kept.
    memory: Option<u64>,
    /// The seccomp filters handed to bubblewrap, open only until the engine has started.
    seccomp: Vec<std::os::fd::OwnedFd>,
    /// `freeze=off`: never frozen.
    unfrozen: bool,
    /// The sandbox's writable folders.
    scratch: Option<super::scratch::Scratch>,
}

impl Confined {
    /// The freezer that takes the CPU from the engine while the referee is not waiting for it:
    /// what it computes between its turns it would compute on its opponent's time.
    fn idle_freezer(&self) -> Option<&Arc<Freezer>> {
        self.group
            .as_ref()
            .and_then(EngineGroup::freezer)
            .filter(|_| !self.unfrozen)
    }

    /// Freezes an engine that waits for its first game: started by the start-up check or a
    /// restart, it may wait a while, and none of that is its own time.
    fn rest(&self) {
        if let Some(freezer) = self.idle_freezer() {
            freezer.freeze();
        }
    }

    /// Lets the engine run: before anything is written to it, and before it is ended.
    fn wake(&self) {
        if let Some(freezer) = self.group.as_ref().and_then(EngineGroup::freezer) {
            freezer.on_turn();
        }
    }
}

/// How long an engine that has just moved keeps the CPU into its opponent's turn: an opponent
/// that replies sooner costs no freezing at all (a freeze and a thaw every ply were a quarter
/// of the referee's cost with quick engines), and one that thinks longer has the CPU to itself
/// from then on.
const IDLE_GRACE: Duration = Duration::from_millis(5);

impl Drop for EngineIo {
    /// An engine dropped without `quit`/`kill` (a run cancelled by Ctrl-C) takes its process
    /// tree with it: its keeper ends the tree at once, and the group is killed shortly after in
    /// case the keeper could not. After `quit`/`kill` the tree was already ended.
    fn drop(&mut self) {
        if !self.reaped {
            self.confined.wake();
            self.signal_keeper();
            if let Some(group) = self.pgid {
                super::cleanup::later("group kill", move || {
                    std::thread::sleep(KEEPER_GRACE);
                    // SAFETY: kill(2) on a process group; no memory is touched.
                    unsafe { libc::kill(-(group as i32), libc::SIGKILL) };
                });
            }
        }
    }
}

/// How long the lines an engine wrote before its keeper exited may take to be read.
const LAST_WORDS: Duration = Duration::from_millis(200);
/// How long a reply is waited for outside the runtime: long enough for the quick moves whose
/// wake-ups are most of the referee's cost, short enough that a cancelled run, or a keeper
/// gone with something still holding the engine's output, is seen promptly.
const QUICK_REPLY: Duration = Duration::from_millis(100);

/// Whether a quick wait that ends at `quick` may overrun it by the watchdog's tick: when the
/// engine's own deadline is further off than that, the overrun only delays the hand-over to
/// the runtime (and a cancellation) by at most a tick, and a plain blocking read can be used.
fn has_slack(quick: Instant, deadline: Instant) -> bool {
    quick + super::watchdog::TICK <= deadline
}

/// How long the keeper gets to end an engine's tree before its group is killed outright.
const KEEPER_GRACE: Duration = Duration::from_millis(500);

/// Writes what a non-blocking pipe takes of `bytes` now; returns how much (0 on any error, which
/// the runtime's write then meets and reports).
fn write_now(fd: std::os::fd::RawFd, bytes: &[u8]) -> usize {
    // SAFETY: writes from a live slice to a descriptor this process owns; no memory is written.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(n).unwrap_or(0)
}

fn ensure_non_blocking(fd: std::os::fd::RawFd) {
    // SAFETY: fcntl reads and sets the status flags of a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 && flags & libc::O_NONBLOCK == 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

impl Confined {
    /// The control groups an engine is started in. Where the machine allows, the engine's tree
    /// is in a control group of its own even without a sandbox (then with no limits unless some
    /// were asked for): whatever is left in it when the engine is done is killed, however its
    /// keeper ended.
    fn make(config: &EngineConfig, sandboxed: bool) -> Result<Confined, String> {
        let mut confined = Confined {
            unfrozen: config.sandbox.unfrozen,
            ..Confined::default()
        };
        let asked = &config.sandbox;
        let limits_asked =
            asked.memory.is_some() || asked.processes.is_some() || asked.threads.is_some();
        let limits = (sandboxed || limits_asked).then(|| sandbox::limits(config));
        // Without any control group, a sandboxed engine's memory= is kept per process by
        // RLIMIT_DATA (see spawn_command) and its processes= by RLIMIT_NPROC in its sandbox;
        // threads= needs a group.
        let memory_by_rlimit = sandboxed && cgroup::support().is_none();
        let processes_by_rlimit = sandboxed && sandbox::processes_capped_by_rlimit().is_some();
        if let Some(refused) = cgroup::refused(
            asked.memory.is_some() && !memory_by_rlimit,
            asked.processes.is_some() && !processes_by_rlimit,
            asked.threads.is_some(),
        ) {
            return Err(refused);
        }
        if (asked.always_frozen || asked.always_watched) && !cgroup::holds().freezer {
            return Err(format!(
                "freeze={} needs a freezer, and there is none here (cgroup v1 as root, or a \
                 cgroup v2 group delegated to you); leave the setting out",
                if asked.always_frozen { "on" } else { "watch" }
            ));
        }
        if cgroup::support().is_some() {
            let group = EngineGroup::create(limits.as_ref(), !config.sandbox.plain_cpu)
                .map_err(|e| format!("cannot make its control group: {e}"))?;
            if let (true, Some(freezer)) = (
                config.sandbox.always_frozen || config.sandbox.caught,
                group.freezer(),
            ) {
                freezer.insist();
            }
            confined.group = Some(group);
            confined.memory = limits.map(|l| l.memory);
        }
        Ok(confined)
    }
}

/// The file `stderr=` names, opened to add to, where the user named it (cutechess-cli writes
/// `stderr=sprterr.txt` beside the programs). The engine decides what is written there, so it
/// may not be one of the run's files (its folder, its log) nor a program (its own or another
/// engine's).
fn stderr_file(config: &EngineConfig, path: &std::path::Path) -> Result<Stdio, String> {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    let refused = |why: &str| format!("stderr={}: {why}", path.display());
    let parent = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let target = std::fs::canonicalize(parent)
        .map_err(|e| refused(&e.to_string()))?
        .join(path.file_name().ok_or_else(|| refused("not a file"))?);
    let reaches_run = config.hidden[..config.hidden_run.min(config.hidden.len())]
        .iter()
        .filter_map(|h| std::fs::canonicalize(h).ok())
        .any(|h| target.starts_with(h));
    let kind = std::fs::symlink_metadata(&target).ok();
    // `stderr=/dev/null` and a terminal are devices, no one's file to plant or overwrite.
    let device = kind.as_ref().is_some_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_char_device()
    });
    let program = kind
        .as_ref()
        .is_some_and(|m| m.is_dir() || (m.is_file() && m.permissions().mode() & 0o111 != 0));
    if reaches_run || program {
        return Err(refused(
            "the engine's output would be written into the run's files or over a program: \
             give another file",
        ));
    }
    // A file planted under that name (a link, another user's) is not written through.
    if let Some(why) = crate::output::not_the_callers(&target).filter(|_| !device) {
        return Err(refused(&format!("{why}: give a file of your own")));
    }
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        std::fs::OpenOptions::new().create(true).append(true),
        libc::O_NOFOLLOW,
    )
    .open(&target)
    .map(Stdio::from)
    .map_err(|e| refused(&e.to_string()))
}

/// Where no control group holds a sandboxed engine (a normal user on cgroup v1), its memory is
/// capped per process instead: RLIMIT_DATA fails a memory bomb's allocations.
fn data_cap(config: &EngineConfig, sandboxed: bool, confined: &Confined) -> Option<libc::rlimit> {
    (sandboxed && confined.group.is_none()).then(|| {
        let bytes = sandbox::limits(config).memory as libc::rlim_t;
        libc::rlimit {
            rlim_cur: bytes,
            rlim_max: bytes,
        }
    })
}

/// The engine's program: bubblewrap with its arguments, its filters and writable space kept
/// in `confined`, and what root's engine is given staged; else the program itself, in its
/// folder.
fn program_command(
    config: &EngineConfig,
    sandboxed: bool,
    confined: &mut Confined,
) -> Result<(Command, Option<super::stage::Stage>), String> {
    if !sandboxed {
        let mut cmd = Command::new(&config.cmd);
        if let Some(dir) = &config.dir {
            cmd.current_dir(dir);
        }
        return Ok((cmd, None));
    }
    let wrapped = sandbox::wrap(config, &config.hidden)?;
    let mut cmd = Command::new(&wrapped.bwrap);
    cmd.args(&wrapped.args);
    confined.seccomp = wrapped.seccomp;
    confined.scratch = Some(wrapped.scratch);
    Ok((cmd, wrapped.stage))
}

/// The engine's command: its program (inside bubblewrap when sandboxed), its clean environment,
/// its pipes, and what it does before exec: the scheduling
/// policy back, the keeper split off, its control groups joined.
fn spawn_command(
    config: &EngineConfig,
    sandboxed: bool,
    confined: &mut Confined,
) -> Result<Command, String> {
    let (mut cmd, stage) = program_command(config, sandboxed, confined)?;
    // stderr goes to its own file when given one, else it is read (into --log when there is
    // one, marked `!`; its last lines kept). The file is opened here, outside any sandbox.
    let stderr = match &config.stderr {
        Some(path) => stderr_file(config, path)?,
        None => Stdio::piped(),
    };
    cmd.env_clear()
        .envs(sandbox::environment(config, sandboxed))
        .args(&config.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .process_group(0);
    // A keeper process stands between us and the engine and holds its whole process tree:
    // nothing the engine starts outlives it, even when the referee is killed with SIGKILL.
    // The engine (the sandbox, when there is one) joins its control groups before exec.
    let groups = confined
        .group
        .as_ref()
        .map(EngineGroup::procs_files)
        .unwrap_or_default();
    let freezer = confined.group.as_ref().and_then(EngineGroup::freezer_state);
    super::keeper::prepare();
    let title = format!("arbiter-keeper {}", config.name).into_bytes();
    if cgroup::support().is_none() {
        super::orphans::adopt();
    }
    let policy = super::sched::engine_policy();
    let user = sandbox::engine_user().filter(|_| sandboxed);
    let filters: Vec<i32> = confined.seccomp.iter().map(|f| f.as_raw_fd()).collect();
    let data_cap = data_cap(config, sandboxed, confined);
    // SAFETY: keeper::split, cgroup::join, sched::restore and become_engine_user make only
    // async-signal-safe calls, as pre_exec requires; so is setrlimit(2).
    unsafe {
        let referee = libc::getpid();
        cmd.pre_exec(move || {
            if let Some(policy) = policy {
                super::sched::restore(policy)?;
            }
            super::keeper::split(referee, freezer.as_ref(), &title)?;
            if let Some(cap) = &data_cap {
                if libc::setrlimit(libc::RLIMIT_DATA, cap) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Where memory runs out, the kernel kills an engine before the referee.
            let fd = libc::open(c"/proc/self/oom_score_adj".as_ptr(), libc::O_WRONLY);
            if fd >= 0 {
                libc::write(fd, b"1000".as_ptr().cast(), 4);
                libc::close(fd);
            }
            cgroup::join(&groups)?;
            sandbox::close_inherited_files();
            // bubblewrap reads its filters from these, and closes them before the engine runs.
            for &fd in &filters {
                libc::fcntl(fd, libc::F_SETFD, 0);
            }
            // The keeper (this process's parent now) stays the referee's user: it must end
            // the tree; the sandbox and the engine run as the engine's user.
            if let Some(user) = user {
                if let Some(stage) = &stage {
                    stage.enter()?;
                }
                sandbox::become_engine_user(user, libc::getppid())?;
            }
            Ok(())
        });
    }
    Ok(cmd)
}

impl EngineProcess {
    /// The thread that started the engine, which it does not outlive.
    pub fn started_on(&self) -> std::thread::ThreadId {
        self.started_on
    }

    /// Starts the engine and completes the handshake for `game`: `uci`/`uciok`, options, the
    /// variant (confirmed by the engine when it offers `UCI_Variant`), `isready`/`readyok`.
    pub async fn start(
        config: &EngineConfig,
        game: &str,
        log: Option<IoLog>,
    ) -> Result<EngineProcess, EngineError> {
        let decide = || {
            sandbox::decide(config.sandbox.mode).map_err(|reason| EngineError::Spawn {
                name: config.name.clone(),
                cmd: config.cmd.clone(),
                reason,
            })
        };
        let sandboxed = decide()?;
        match Self::start_as(config, game, log.clone(), sandboxed).await {
            // Before any sandboxed engine has started, a failure may be the sandbox's: asked
            // now, a machine that cannot keep it runs the engine plainly (`auto`) or refuses
            // (`on`); where it can, the failure is the engine's, and no plain start follows.
            Err(e) if sandboxed && sandbox::unproven() => match sandbox::probe() {
                Ok(_) => Err(e),
                Err(_) => Self::start_as(config, game, log, decide()?).await,
            },
            started => started,
        }
    }

    /// Starts the engine, in a sandbox or not, and completes the handshake.
    async fn start_as(
        config: &EngineConfig,
        game: &str,
        log: Option<IoLog>,
        sandboxed: bool,
    ) -> Result<EngineProcess, EngineError> {
        let spawn_error = |reason: String| EngineError::Spawn {
            name: config.name.clone(),
            cmd: config.cmd.clone(),
            reason,
        };
        let mut confined = Confined::make(config, sandboxed).map_err(spawn_error)?;
        let mut cmd = spawn_command(config, sandboxed, &mut confined).map_err(spawn_error)?;
        let mut child = super::orphans::keeper(|| {
            let child = cmd.spawn()?;
            let pid = child.id();
            Ok((child, pid))
        })
        .map_err(|e| spawn_error(e.to_string()))?;
        confined.seccomp.clear();
        let tail = super::stderr::Tail::default();
        if let Some(err) = child.stderr.take() {
            tokio::spawn(super::stderr::read(
                err,
                config.name.clone(),
                log.clone(),
                tail.clone(),
            ));
        }
        let stdin = child.stdin.take().expect("stdin is piped");
        // `write_now` must never wait for an engine that stopped reading: the runtime keeps its
        // pipes non-blocking, and this makes sure of it.
        ensure_non_blocking(stdin.as_raw_fd());
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut lines = LineReader::new(stdout, config.name.clone(), log.clone());
        if config.recorded != super::Recorded::default() {
            let patterns = config.recorded.patterns().map_err(spawn_error)?;
            lines.keep(config.recorded.seldepth, patterns, config.recorded.pvs);
        }
        let mut io = EngineIo {
            config: config.clone(),
            child,
            stdin,
            lines,
            log,
            id_name: None,
            offered: Vec::new(),
            reaped: false,
            out: Vec::new(),
            pgid: None,
            confined,
            // Slow until seen to be quick: its first long think is frozen at the grace too.
            slow: true,
        };
        io.pgid = io.child.id();
        let mut engine = EngineProcess {
            io,
            dialect: config.proto.speaker(),
            started_on: std::thread::current().id(),
        };
        match engine.dialect.handshake(&mut engine.io, game).await {
            Ok(()) => {
                engine.started(sandboxed);
                Ok(engine)
            }
            Err(EngineError::Exited { name, .. }) => {
                engine.kill().await;
                let stderr = tail.last_lines(STDERR_READ_GRACE).await;
                Err(EngineError::Exited { name, stderr })
            }
            Err(e) => {
                engine.kill().await;
                Err(e)
            }
        }
    }

    /// Its handshake done: the engine rests between turns, its writable space is watched, a
    /// sandbox that started it is known to work, and its keeper's CPU is counted as the
    /// sandbox's.
    fn started(&mut self, sandboxed: bool) {
        self.io.confined.rest();
        if let (Some(scratch), Some(keeper)) = (self.io.confined.scratch.as_mut(), self.io.pgid) {
            scratch.watch(keeper);
        }
        if sandboxed {
            sandbox::proven();
        }
        if let Some(keeper) = self.io.pgid {
            super::overhead::count_sandbox(keeper);
        }
    }

    /// The engine's name (`id name`, CECP's `myname`), when it gave one.
    pub fn id_name(&self) -> Option<&str> {
        self.io.id_name.as_deref()
    }

    /// The options the engine offered in its handshake.
    pub fn offered(&self) -> &[OfferedOption] {
        &self.io.offered
    }

    pub fn config(&self) -> &EngineConfig {
        &self.io.config
    }

    /// Waits until the engine has read everything sent so far (`isready`, CECP's `ping`),
    /// within the handshake time.
    pub async fn sync(&mut self) -> Result<(), EngineError> {
        self.dialect.sync(&mut self.io).await
    }

    /// Prepares the engine for a new game, as its dialect does.
    pub async fn new_game(&mut self) -> Result<(), EngineError> {
        self.dialect.new_game(&mut self.io).await
    }

    /// The freezer the opponent's referee uses to stop this engine while it is not on move;
    /// `None` where there is none, or with `freeze=off`.
    pub fn idle_freezer(&self) -> Option<&Arc<Freezer>> {
        self.io.confined.idle_freezer()
    }

    /// The size of the sandbox's writable space when the engine has filled it: a limit spent,
    /// as memory is. Asked after each of its moves, looked at every eighth; a folder filled
    /// and emptied again between two looks harmed no one.
    pub fn filled_scratch(&mut self) -> Option<u64> {
        let scratch = self.io.confined.scratch.as_mut()?;
        scratch.filled().then(|| scratch.size())
    }

    /// Stops freezing the engine between its turns (it is thawed now): on a machine busy with
    /// other work, a frozen engine is woken late on its turn and loses on time.
    pub fn stop_freezing(&mut self) {
        self.io.confined.wake();
        self.io.confined.unfrozen = true;
    }

    /// Schedules the running engine as a plain process from now on, out of its CPU control
    /// group (see `Confinement::plain_cpu`).
    pub fn leave_cpu_group(&mut self) {
        if let Some(group) = self.io.confined.group.as_mut() {
            group.leave_cpu_group();
        }
    }

    /// The process at the root of the engine's tree (its keeper), while it runs.
    pub fn root_pid(&self) -> Option<u32> {
        self.io.pgid.filter(|_| !self.io.reaped)
    }

    /// Moves the running engine onto the CPUs of the calling thread, as if that thread had
    /// started it; its cpuset follows, so the engine cannot widen its mask again.
    pub fn move_here(&self) {
        if let Some(group) = &self.io.confined.group {
            let _ = group.pin_here();
        }
        if let Some(root) = self.io.pgid {
            super::sched::bring_tree_here(root);
        }
    }

    /// Asks for a move on this turn and waits for it until `allowed` has passed since the
    /// request was written. The reply's time is when its line was read, on this thread.
    /// `idle` is the opponent's freezer: frozen once this engine has thought for `IDLE_GRACE`.
    pub async fn think(
        &mut self,
        turn: &Turn<'_>,
        allowed: Duration,
        idle: Option<&Freezer>,
    ) -> Result<Thought, EngineError> {
        self.io.drain();
        // Woken before its clock starts: the thaw is the referee's time, not the engine's.
        self.io.confined.wake();
        // On the clock, a UCI engine is made to read its position and answer `isready` before
        // its `go`, as fastchess does: an engine the scheduler of a busy machine left asleep is
        // woken, and sets the position up, on the referee's time, not its own. Past
        // `SYNC_GRACE` the wait is charged: an engine that delays its `readyok` to think on
        // gains nothing by it. An engine that never answers is caught as stalled.
        let clocked = turn.own_clock().is_some() || self.io.config.limits.movetime.is_some();
        let speaks_uci = matches!(self.io.config.proto, Proto::Uci | Proto::Leiserchess);
        let synced = speaks_uci
            && match self.io.config.sync {
                SyncBeforeGo::Clocked => clocked,
                SyncBeforeGo::Never => false,
                SyncBeforeGo::Every => true,
            };
        let asked = Instant::now();
        let limit = self.io.config.ping.unwrap_or(self.io.config.handshake);
        let sent = self
            .dialect
            .ask_move(&mut self.io, turn, synced.then_some(limit))
            .await
            .map_err(|e| match e {
                EngineError::Timeout { name, .. } if synced => EngineError::Stalled { name },
                other => other,
            })?;
        let charged = match synced {
            true => sent
                .saturating_duration_since(asked)
                .saturating_sub(SYNC_GRACE),
            false => Duration::ZERO,
        };
        let dialect = &self.dialect;
        let allowed = allowed.saturating_sub(charged);
        let mut thought = self
            .io
            .await_move(sent, allowed, idle, |text| dialect.read_reply(text))
            .await?;
        thought.elapsed += charged;
        Ok(thought)
    }

    /// Drops lines already waiting (late `info` from a search that ended).
    pub fn drain(&mut self) {
        self.io.drain();
    }

    /// Kills the engine and everything it started, and reaps it.
    pub async fn kill(self) {
        let mut io = self.io;
        io.end_tree().await;
    }

    /// Asks the engine to quit; ends it and its tree if it has not exited after a short grace
    /// period. When the engine exits by itself, its keeper ends whatever it left behind.
    pub async fn quit(self) {
        let mut io = self.io;
        let _ = io.send("quit").await;
        match tokio::time::timeout(QUIT_GRACE, io.child.wait()).await {
            Ok(status) => {
                // The keeper has ended what the engine left; the group goes too, to be sure.
                io.kill_group();
                io.keeper_reaped(status.ok());
            }
            Err(_) => io.end_tree().await,
        }
    }
}

impl EngineIo {
    pub(super) async fn send(&mut self, line: &str) -> Result<(), EngineError> {
        self.send_lines(&[line]).await
    }

    /// Sends several lines in one write: one system call and one wake-up of the engine.
    pub(super) async fn send_lines(&mut self, lines: &[&str]) -> Result<(), EngineError> {
        self.confined.wake();
        // The buffer of the last write is reused: a request is written at every move.
        let mut bytes = std::mem::take(&mut self.out);
        bytes.clear();
        for line in lines {
            if let Some(log) = &self.log {
                log.write(&self.config.name, '>', line);
            }
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        let line = lines.first().copied().unwrap_or("");
        // A request fits in the pipe, which the engine has emptied by reading the last one: it
        // is written at once, without the runtime's write and timer. Whatever is left (a full
        // pipe, an error to report) goes through the runtime as before.
        let done = write_now(self.stdin.as_raw_fd(), &bytes);
        if done == bytes.len() {
            self.out = bytes;
            return Ok(());
        }
        let rest = &bytes[done..];
        let write = async {
            self.stdin.write_all(rest).await?;
            self.stdin.flush().await
        };
        // A full pipe means the engine stopped reading: treat it like silence.
        let limit = self.config.handshake;
        let written = tokio::time::timeout(limit, write).await;
        self.out = bytes;
        match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(self.exited()),
            Err(_) => Err(self.timeout_error(line, limit)),
        }
    }

    /// Why the engine is gone: over its memory limit when the kernel says so, else it exited.
    fn exited(&self) -> EngineError {
        match (&self.confined.group, self.confined.memory) {
            (Some(group), Some(limit)) if group.ran_out_of_memory() => EngineError::OverMemory {
                name: self.config.name.clone(),
                limit: sandbox::show_size(limit),
            },
            _ => EngineError::Exited {
                name: self.config.name.clone(),
                stderr: Vec::new(),
            },
        }
    }

    /// The next line, waited for on this thread alone for up to `QUICK_REPLY` (as a move is,
    /// see `think`), then on the runtime until `deadline`: a `readyok` before each game costs
    /// one plain wake-up rather than a pass of the runtime with its timer.
    pub(super) async fn next_line_soon(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
    ) -> Result<Line, EngineError> {
        if self.log.is_none() {
            self.lines.set_in_search(waiting_for == SEARCH);
            let quick = deadline.min(Instant::now() + QUICK_REPLY);
            match self.lines.next_blocking(quick, has_slack(quick, deadline)) {
                Waited::Line(line) => return Ok(line),
                Waited::Ended => return Err(self.exited()),
                Waited::NotYet => {}
            }
        }
        self.next_line(deadline, waiting_for).await
    }

    /// The next line, or an error at end of output or at `deadline`.
    pub(super) async fn next_line(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
    ) -> Result<Line, EngineError> {
        let waited = deadline.saturating_duration_since(Instant::now());
        self.lines.set_in_search(waiting_for == SEARCH);
        // The keeper's exit ends the engine even when something it left behind still holds
        // its output open: then what it wrote is read, but no one waits for more.
        let read = tokio::select! {
            biased;
            read = timeout_at(deadline.into(), self.lines.next()) => read,
            _ = self.child.wait() => {
                let rest = deadline.min(Instant::now() + LAST_WORDS);
                timeout_at(rest.into(), self.lines.next()).await.or(Ok(None))
            }
        };
        match read {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(self.exited()),
            // The handshake's steps share one allowance: name it whole, not what was left of
            // it when the last step began.
            Err(_) if waiting_for != SEARCH => {
                Err(self.timeout_error(waiting_for, self.config.handshake))
            }
            Err(_) => Err(self.timeout_error(waiting_for, waited)),
        }
    }

    fn timeout_error(&self, what: &str, waited: Duration) -> EngineError {
        EngineError::Timeout {
            name: self.config.name.clone(),
            what: what.split_whitespace().next().unwrap_or(what).to_string(),
            secs: waited.as_secs_f64(),
        }
    }

    /// Waits for the reply to a request written at `sent` until `allowed` has passed, each line
    /// read as `read` reads it. `idle` is the opponent's freezer: frozen once this engine has
    /// thought for `IDLE_GRACE`.
    async fn await_move(
        &mut self,
        sent: Instant,
        allowed: Duration,
        mut idle: Option<&Freezer>,
        read: impl Fn(String) -> EngineLine,
    ) -> Result<Thought, EngineError> {
        let deadline = sent + allowed;
        // A quick reply is waited for on this thread alone (see `next_blocking`); with --log
        // the runtime must also copy the engine's stderr meanwhile, so it waits there.
        let quick = deadline.min(sent + QUICK_REPLY);
        let mut info = Info::default();
        self.lines.set_in_search(true);
        // Only this search's lines count.
        self.lines.take_matched();
        self.lines.take_pv_lines();
        let grace = quick.min(sent + IDLE_GRACE);
        // The grace is kept exactly: the watchdog's tick alone could overrun it by a tenth of a
        // second of the opponent's time. Without a timer, `ppoll` keeps it.
        // Armed only for an engine whose last reply took longer than the grace (or none yet): a
        // timer costs two system calls (exits to the host of a virtual machine) a ply, the most
        // the referee spends with quick engines. The first long think after quick ones is
        // frozen at the watchdog's tick, every one after it at the grace.
        let mut alarm = idle
            .filter(|opponent| self.slow && self.log.is_none() && !opponent.watched())
            .and_then(|_| Alarm::at(grace));
        // A watched opponent is not frozen at the grace: its CPU time counts from the start of
        // this turn where this engine is expected to think past the grace (then nothing is
        // left to do at the grace, and the wait is the one of an opponent never frozen), else
        // from the grace on, at the watchdog's tick. It is read again at this engine's lines
        // from the grace on, at most every `WATCH_EVERY`, and at its move.
        let watched = idle.filter(|opponent| opponent.watched());
        if let (true, Some(opponent)) = (self.slow, watched) {
            opponent.count_from_here();
            idle = None;
        }
        let mut looked = grace;
        loop {
            let waited = match (&self.log, idle) {
                (None, Some(_)) => self
                    .lines
                    .next_blocking(grace, alarm.is_some() || has_slack(grace, deadline)),
                (None, None) => self.lines.next_blocking(quick, has_slack(quick, deadline)),
                (Some(_), _) => Waited::NotYet,
            };
            let line = match waited {
                Waited::Line(line) => line,
                Waited::Ended => return Err(self.exited()),
                Waited::NotYet => {
                    if let Some(opponent) = idle.take() {
                        alarm = None;
                        opponent.off_turn();
                        if self.log.is_none() {
                            continue;
                        }
                    }
                    self.next_line(deadline, SEARCH).await?
                }
            };
            merge_info(&mut info, line.info);
            let reply = read(line.text);
            if let Some(opponent) = watched.filter(|_| line.at >= grace) {
                let moved = matches!(reply, EngineLine::BestMove(_) | EngineLine::Resign);
                if moved || line.at.saturating_duration_since(looked) >= WATCH_EVERY {
                    looked = line.at;
                    opponent.look();
                }
            }
            let (text, resigned) = match reply {
                EngineLine::BestMove(text) => (text, false),
                EngineLine::Resign => (None, true),
                EngineLine::Info(i) => {
                    merge_info(&mut info, i);
                    continue;
                }
                _ => continue,
            };
            return Ok(self.thought(text, resigned, info, sent, line.at));
        }
    }

    /// The reply read at `at` to a request written at `sent`, with what the run keeps of the
    /// search's lines; the engine is slow from now on if it took longer than the grace.
    fn thought(
        &mut self,
        text: Option<String>,
        resigned: bool,
        mut info: Info,
        sent: Instant,
        at: Instant,
    ) -> Thought {
        self.slow = at.saturating_duration_since(sent) >= IDLE_GRACE;
        // What the run does not keep is not recorded (nothing else reads it).
        let recorded = &self.config.recorded;
        info.nodes = info.nodes.filter(|_| recorded.nodes);
        info.seldepth = info.seldepth.filter(|_| recorded.seldepth);
        info.lines = self.lines.take_matched();
        info.pv_lines = self.lines.take_pv_lines();
        Thought {
            text,
            elapsed: at.saturating_duration_since(sent),
            info,
            asked_at: sent,
            read_at: at,
            resigned,
        }
    }

    /// Drops lines already waiting (late `info` from a search that ended).
    pub fn drain(&mut self) {
        self.lines.discard_ready();
    }

    /// Asks the keeper to end the engine and everything it started.
    fn signal_keeper(&self) {
        // No id once the keeper is reaped: its number may be another process's by now.
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on our own child; no memory is touched.
            unsafe {
                libc::kill(pid as i32, libc::SIGTERM);
            }
        }
    }

    /// Has the keeper end the tree, then kills the group too, in case the keeper could not.
    async fn end_tree(&mut self) {
        self.confined.wake();
        self.signal_keeper();
        let status = match tokio::time::timeout(KEEPER_GRACE, self.child.wait()).await {
            Ok(status) => status.ok(),
            Err(_) => None,
        };
        self.kill_group();
        let status = match status {
            Some(status) => Some(status),
            None => {
                let _ = self.child.start_kill();
                self.child.wait().await.ok()
            }
        };
        self.keeper_reaped(status);
    }

    /// The keeper is gone: one that died by a signal (killed outright, by the engine itself
    /// with `sandbox=off`, or by the referee after its grace) may have left the engine's tree
    /// behind, which is swept where no control group holds it.
    fn keeper_reaped(&mut self, status: Option<std::process::ExitStatus>) {
        use std::os::unix::process::ExitStatusExt;
        self.reaped = true;
        if let Some(pid) = self.pgid {
            super::orphans::keeper_gone(pid);
        }
        let killed = status.is_none_or(|s| s.signal().is_some());
        if killed && self.confined.group.is_none() {
            super::orphans::sweep();
        }
    }

    fn kill_group(&self) {
        if let Some(pid) = self.pgid {
            // The engine leads its own process group: this reaches any children it started.
            // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
            unsafe {
                libc::kill(-(pid as i32), libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request is written at once only as far as the pipe takes it: an engine that stopped
    /// reading never holds up the referee's thread, and the rest is left to the runtime.
    #[test]
    fn writing_now_takes_what_the_pipe_holds_and_never_waits() {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills the two descriptors it is given.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let (read_end, write_end) = (fds[0], fds[1]);
        ensure_non_blocking(write_end);
        let request = vec![b'x'; 1 << 20];
        let taken = write_now(write_end, &request);
        assert!(taken > 0 && taken < request.len(), "{taken}");
        // Full now: nothing more, at once.
        assert_eq!(write_now(write_end, &request), 0);
        // SAFETY: closing the descriptors made above.
        unsafe { libc::close(read_end) };
        // No reader left: an error, reported as nothing written.
        assert_eq!(write_now(write_end, b"go\n"), 0);
        // SAFETY: as above.
        unsafe { libc::close(write_end) };
    }
}
