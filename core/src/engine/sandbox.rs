//! Each engine in a sandbox of its own: the only way to win is to play.
//!
//! An engine is run inside bubblewrap (`bwrap`, Debian's `bubblewrap`) with its own PID, network,
//! IPC, UTS, cgroup and user namespaces: it sees and can signal only its own processes, its network
//! is a loopback of its own, and its file system is the system's programs and libraries read-only,
//! its program's folder read-only, its working folder (`dir=`, else arbiter's) writable, and the
//! files its options, arguments and `readable=` name read-only. The run's folder, its I/O log and
//! the other engines' folders are not there, even where they lie inside its own. When the sandbox's
//! first process dies (with its keeper, via `--die-with-parent`), the kernel ends everything in
//! its PID namespace: nothing an engine starts can outlive it.
//!
//! Memory, process count and CPU are limited per engine by a cgroup (see `cgroup`).

use super::cgroup::{self, Limits};
use super::config::EngineConfig;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Whether an engine runs in a sandbox: `auto` (where the machine can), `on` (refused where it
/// cannot), `off` (a plain child process, as cutechess-cli and fastchess run engines).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    #[default]
    Auto,
    On,
    Off,
}

/// An engine's confinement as asked for: the sandbox and its limits (`None`: the default).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Confinement {
    #[serde(default)]
    pub mode: SandboxMode,
    /// Bytes of memory for the engine's whole tree (`memory=512M`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Processes and threads at once (`processes=64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u32>,
    /// CPU cores' worth of time (`threads=2`); by default the engine's `Threads` option, else 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// More files or folders the engine may read (`readable=/opt/books`): what a wrapper script
    /// runs, a book outside the engine's folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readable: Vec<String>,
    /// Folders the engine may write for good (`writable=/data/learn`): its learning files or
    /// logs. Everything else it writes goes to its private working folder and is gone with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// Variables passed to the engine on purpose (`env.NAME=value`), over the clean list of
    /// `ENVIRONMENT`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    /// `freeze=off`: the engine keeps its CPU between its turns (an engine that ponders on its
    /// own, or a measurement of what freezing costs). Frozen by default where it can be.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfrozen: bool,
    /// `freeze=on`: frozen on every turn of its opponent's, even on a machine busy with other
    /// work, where by default freezing stops (a frozen engine is woken late there and loses on
    /// time). By default an engine is watched, and frozen once it is caught using CPU there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always_frozen: bool,
    /// `freeze=watch`: watched (and frozen once caught) even on a machine busy with other work.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always_watched: bool,
    /// Caught using CPU on its opponent's time earlier in the run: every process of the engine
    /// started from then on is frozen on each turn of its opponent's.
    #[serde(skip)]
    pub caught: bool,
    /// `locks=on`: the engine may take file locks (`flock`, `fcntl` record locks), which every
    /// other sandbox opening the same file would see: a channel between engines, refused unless
    /// an engine needs them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locks: bool,
    /// On a machine busy with other work: the engine is scheduled as a plain process, not in a
    /// CPU control group of its own (and so without the `threads=` quota). A group of its own
    /// is one scheduling entity, which the kernel wakes late under load: measured beside busy
    /// loops, a loop of short-lived processes and another sandboxed match (`tc=1+0.01`, 10
    /// games), 3 – 6 games lost on time in a group, 0 – 1 as plain processes.
    #[serde(skip)]
    pub plain_cpu: bool,
}

impl Confinement {
    pub fn is_default(&self) -> bool {
        *self == Confinement::default()
    }

    /// `freeze=on` or `freeze=watch`: what the engine's settings ask holds whatever the load.
    pub fn freezing_kept_under_load(&self) -> bool {
        self.always_frozen || self.always_watched
    }
}

/// Reads `512M`, `2G`, `1500K` or plain bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .filter(|&n| n >= 1 << 20)
}

/// `512 MiB`, `12 GiB`.
pub fn show_size(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// The bubblewrap program (`ARBITER_BWRAP` names another, for a machine where it is elsewhere),
/// or why there is none; found once.
fn program() -> &'static Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND.get_or_init(|| {
        std::env::var_os("ARBITER_BWRAP")
            .map(PathBuf::from)
            .or_else(|| find_in_path(Path::new("bwrap")))
            .ok_or_else(|| {
                "bubblewrap (bwrap) is not on this machine (Debian/Ubuntu package: bubblewrap)"
                    .to_string()
            })
    })
}

/// Whether bubblewrap can make an engine's namespaces here: its version, or why not. Not known
/// until asked. The first sandboxed engine is started without asking (its start shows that the
/// sandbox works, see `proven`); only a start that fails first asks, to learn whose fault it was.
/// The check costs a whole sandbox's start, which every run paid before its first engine.
static PROBED: OnceLock<Result<String, String>> = OnceLock::new();

/// Set once a sandboxed engine has started: the sandbox works here.
static PROVEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a sandboxed engine started and answered: the sandbox works here.
pub fn proven() {
    PROVEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a sandboxed start that failed may have failed for the sandbox's sake: nothing has
/// shown yet that it works.
pub fn unproven() -> bool {
    !PROVEN.load(std::sync::atomic::Ordering::Relaxed) && PROBED.get().is_none()
}

/// Tries the namespaces an engine gets (once), after a sandboxed start failed before any had
/// succeeded; `decide` then answers from the result.
pub fn probe() -> &'static Result<String, String> {
    PROBED.get_or_init(|| match program() {
        Ok(program) => try_bwrap(program),
        Err(why) => Err(why.clone()),
    })
}

/// The version bubblewrap reports, for the run's banner and report; asked once (the start-up
/// check asks, so that its process counts with the check's).
pub fn version() -> String {
    static VERSION: OnceLock<String> = OnceLock::new();
    if let Some(Ok(version)) = PROBED.get() {
        return version.clone();
    }
    VERSION
        .get_or_init(|| {
            if let Some(version) = program().as_ref().ok().and_then(|p| version_in_program(p)) {
                return version;
            }
            let asked = program().as_ref().ok().and_then(|program| {
                super::orphans::helper(|| {
                    std::process::Command::new(program)
                        .arg("--version")
                        .stdin(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .output()
                        .ok()
                })
            });
            let said = asked
                .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
                .unwrap_or_default();
            if said.is_empty() {
                "bubblewrap".into()
            } else {
                said
            }
        })
        .clone()
}

/// The version string `bwrap --version` prints (`bubblewrap 0.8.0`), read from the program
/// file, where it is stored as it is printed: running the program costs the run a millisecond
/// of CPU, reading it a few microseconds. `None` where it is not found (another build, a
/// wrapper script): the program is then asked.
fn version_in_program(program: &Path) -> Option<String> {
    const NAME: &[u8] = b"bubblewrap ";
    let bytes = std::fs::read(program).ok()?;
    let mut rest = &bytes[..];
    while let Some(at) = memchr::memmem::find(rest, NAME) {
        let after = &rest[at + NAME.len()..];
        let len = after
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .count();
        // A version is digits and dots ending the string: `0.8.0` and its NUL.
        if len > 0 && after[0].is_ascii_digit() && after.get(len) == Some(&0) {
            return Some(format!(
                "bubblewrap {}",
                String::from_utf8_lossy(&after[..len])
            ));
        }
        rest = after;
    }
    None
}

/// The bubblewrap program, where there is one here.
pub fn bubblewrap() -> Option<&'static Path> {
    program().as_ref().ok().map(PathBuf::as_path)
}

fn try_bwrap(program: &Path) -> Result<String, String> {
    // The namespaces are tried by asking bubblewrap, inside them, for its own version: one
    // process started where two were.
    let mut probe = std::process::Command::new(program);
    probe
        .args(["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"])
        .arg(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = super::orphans::helper(|| probe.output())
        .map_err(|e| format!("{} cannot be run: {e}", program.display()))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(format!(
            "{} cannot make namespaces here ({why}); user namespaces may be disabled",
            program.display()
        ));
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(if version.is_empty() {
        "bubblewrap".into()
    } else {
        version
    })
}

fn find_in_path(name: &Path) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Why engines cannot be sandboxed here, as far as is known: no program, or a probe that failed.
fn known_unavailable() -> Option<&'static String> {
    match (program(), PROBED.get()) {
        (Err(why), _) | (Ok(_), Some(Err(why))) => Some(why),
        _ => None,
    }
}

/// Whether an engine with `mode` runs sandboxed here; an error for `on` where it cannot. Until
/// the sandbox is known not to work, the answer is yes: a start that then fails asks `probe`.
pub fn decide(mode: SandboxMode) -> Result<bool, String> {
    match (mode, known_unavailable()) {
        (SandboxMode::Off, _) => Ok(false),
        (_, None) => Ok(true),
        (SandboxMode::Auto, Some(_)) => Ok(false),
        (SandboxMode::On, Some(why)) => Err(format!("sandbox=on cannot be kept here: {why}")),
    }
}

/// One line on how the engines of a run are confined, for the start of a run and its report.
pub fn describe(engines: &[EngineConfig]) -> String {
    // Said of engines that have not started here (a finished run's reports written again):
    // whether the sandbox works is then asked, not assumed.
    if unproven() && engines.iter().any(|e| e.sandbox.mode != SandboxMode::Off) {
        let _ = probe();
    }
    let sandboxed: Vec<&EngineConfig> = engines
        .iter()
        .filter(|e| decide(e.sandbox.mode).unwrap_or(false))
        .collect();
    let why_not = match known_unavailable() {
        Some(why) => format!(" ({why})"),
        None => String::new(),
    };
    if sandboxed.is_empty() {
        return format!("sandbox: off, engines run as plain processes{why_not}");
    }
    let version = version();
    let who = if sandboxed.len() == engines.len() {
        "every engine".to_string()
    } else {
        let names: Vec<&str> = sandboxed.iter().map(|e| e.name.as_str()).collect();
        names.join(", ")
    };
    let limits = describe_limits(&sandboxed);
    let user = match engine_user_name() {
        Some(name) => format!(" as {name}"),
        None => String::new(),
    };
    let filter = describe_filter(&sandboxed);
    format!("sandbox: {who} in its own namespaces{user}{filter} ({version}); {limits}{why_not}")
}

/// The limits the sandboxed engines run under, and by what: control groups where arbiter may
/// make them, else resource limits per process.
fn describe_limits(sandboxed: &[&EngineConfig]) -> String {
    let held = cgroup::holds();
    match cgroup::support() {
        Some(how) => {
            let of = |e: &EngineConfig| {
                let l = limits(e);
                let parts = [
                    (held.memory, format!("{} memory", show_size(l.memory))),
                    (held.processes, format!("{} processes", l.processes)),
                    (held.cpu, format!("{} CPU", l.cpus)),
                ];
                let kept: Vec<String> = parts.into_iter().filter(|p| p.0).map(|p| p.1).collect();
                kept.join(", ")
            };
            let each: Vec<String> = sandboxed.iter().map(|e| of(e)).collect();
            let mut said = if each.iter().all(String::is_empty) {
                format!("control groups by {how}")
            } else if each.iter().all(|l| *l == each[0]) {
                format!(
                    "limits by {how}: {} each (memory= processes= threads= change them)",
                    each[0]
                )
            } else {
                let named: Vec<String> = sandboxed
                    .iter()
                    .zip(&each)
                    .map(|(e, l)| format!("{} {l}", e.name))
                    .collect();
                format!("limits by {how}: {}", named.join("; "))
            };
            let missing: Vec<&str> = [
                (held.memory, "memory"),
                (held.processes, "processes"),
                (held.cpu, "CPU"),
            ]
            .into_iter()
            .filter_map(|(kept, name)| (!kept).then_some(name))
            .collect();
            if !missing.is_empty() {
                said += &format!(
                    "; no {} limit (its controller is not given to arbiter's group)",
                    missing.join(", ")
                );
            }
            if held.freezer {
                let watched = held.cpu_time && sandboxed.iter().any(|e| !e.sandbox.always_frozen);
                said += match watched {
                    true => "; frozen off its turn once caught computing there",
                    false => "; frozen off its turn",
                };
            }
            said
        }
        None => format!(
            "memory capped per process at each engine's memory= share (RLIMIT_DATA); {} (no \
             control group arbiter may make here: cgroup v1 as root, or a delegated cgroup v2 \
             group)",
            match processes_capped_by_rlimit() {
                Some(_) =>
                    "processes and threads capped per engine at processes= in its own \
                            user namespace (RLIMIT_NPROC); no CPU limit",
                None => "no process or CPU limits",
            }
        ),
    }
}

/// Whether the engines' system calls are filtered, and for whom file locks are let through.
fn describe_filter(sandboxed: &[&EngineConfig]) -> String {
    match super::seccomp::filters(false) {
        Some(_) => {
            let locking: Vec<&str> = sandboxed
                .iter()
                .filter(|e| e.sandbox.locks)
                .map(|e| e.name.as_str())
                .collect();
            match locking.is_empty() {
                true => ", system calls filtered".to_string(),
                false => format!(
                    ", system calls filtered (file locks let through for {})",
                    locking.join(", ")
                ),
            }
        }
        None => ", no system-call filter on this processor".to_string(),
    }
}

/// How many engine processes the run keeps at once (two per game played at the same time): the
/// default memory limit shares the machine among them all.
static AT_ONCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(2);

/// Says how many games the run plays at once, before its engines start.
pub fn games_at_once(games: usize) {
    AT_ONCE.store(
        2 * games.max(1) as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The limits an engine gets: what it asked for, else a share of the machine that fits every
/// engine of the run at once (and no more than one engine per core).
pub fn limits(config: &EngineConfig) -> Limits {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let cores = cores.max(AT_ONCE.load(std::sync::atomic::Ordering::Relaxed));
    // SAFETY: sysconf(3) has no preconditions.
    let ram = unsafe {
        (libc::sysconf(libc::_SC_PHYS_PAGES) as u64)
            .saturating_mul(libc::sysconf(libc::_SC_PAGESIZE) as u64)
    };
    // Engines share three quarters of the memory: the rest is the referee's and the host's.
    let shared = ram / 4 * 3;
    Limits {
        memory: config
            .sandbox
            .memory
            .unwrap_or((shared / cores.max(1)).max(256 << 20)),
        processes: config.sandbox.processes.unwrap_or(512),
        cpus: cpus_asked(config),
    }
}

/// The CPUs' worth of time an engine searches with: `threads=`, else its `Threads` option,
/// else one.
pub fn cpus_asked(config: &EngineConfig) -> u32 {
    cpus_searched(config, None)
}

/// As `cpus_asked`, with the `Threads` default the engine itself offered (`default`) where
/// the user set none: an engine that searches with two threads unless told otherwise.
pub fn cpus_searched(config: &EngineConfig, default: Option<&str>) -> u32 {
    let option = config
        .options
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Threads"))
        .map(|(_, v)| v.as_str())
        .or(default)
        .and_then(|v| v.trim().parse::<u32>().ok());
    config.sandbox.threads.or(option).unwrap_or(1).max(1)
}

/// How to start one sandboxed engine: bwrap's arguments up to the engine's program.
#[derive(Debug)]
pub struct Wrapped {
    pub bwrap: PathBuf,
    pub args: Vec<OsString>,
    /// The seccomp filters bubblewrap loads (`--add-seccomp-fd`), open until the engine starts.
    pub seccomp: Vec<std::os::fd::OwnedFd>,
    /// Its writable folders, watched for an engine that fills them.
    pub scratch: super::scratch::Scratch,
    /// What root stages for an engine that runs as nobody (see `stage`).
    pub stage: Option<super::stage::Stage>,
}

/// The user a sandboxed engine runs as when arbiter is run by root: never root itself, which
/// owns the host's kernel settings (`/proc/sys`) and every 0600 file, capabilities or not.
/// `None` for anyone else, whose engines run as themselves.
pub fn engine_user() -> Option<(libc::uid_t, libc::gid_t)> {
    static USER: OnceLock<Option<(libc::uid_t, libc::gid_t)>> = OnceLock::new();
    *USER.get_or_init(|| {
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        // SAFETY: getpwnam(3) is called once, before any engine starts, with a C string; its
        // result is read at once.
        let nobody = unsafe { libc::getpwnam(c"nobody".as_ptr()) };
        Some(match nobody.is_null() {
            true => (NOBODY, NOBODY),
            // SAFETY: a non-null passwd entry from getpwnam.
            false => unsafe { ((*nobody).pw_uid, (*nobody).pw_gid) },
        })
    })
}

/// The kernel's overflow id, `nobody` where the user database has no such name.
const NOBODY: u32 = 65534;

/// The name the banner gives the engines' user.
fn engine_user_name() -> Option<String> {
    let (uid, _) = engine_user()?;
    Some(match uid {
        NOBODY => "nobody".to_string(),
        other => format!("uid {other}"),
    })
}

/// Drops to `user` in the engine's process just before bubblewrap starts: groups, group, user,
/// then the death signal again (a change of user clears it). Only system calls, as `pre_exec`
/// requires.
///
/// # Safety
/// Only between `fork` and `exec`.
pub unsafe fn become_engine_user(
    user: (libc::uid_t, libc::gid_t),
    parent: libc::pid_t,
) -> std::io::Result<()> {
    let fail = || Err(std::io::Error::last_os_error());
    if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(user.1) != 0 {
        return fail();
    }
    if libc::setuid(user.0) != 0 {
        return fail();
    }
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != parent {
        libc::_exit(1);
    }
    Ok(())
}

/// Removes the scratch folders earlier builds made per engine process in the temporary folder
/// (`arbiter-engine-<pid>-<n>`) whose arbiter is gone (a `kill -9` left them): engines now work
/// in a memory file system that goes with them. Only this user's own folders are touched, and
/// never through a link.
pub fn sweep_old_scratch() {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("arbiter-engine-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if meta.is_dir() && meta.uid() == me && !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The size of an engine's private working folder and of its `/tmp`, each a memory file system:
/// an engine that fills one gets "no space" there, and the run's disk is never touched. Memory
/// written there counts against the engine's memory limit where a control group keeps one, so
/// each is a quarter of it: both full still leave the engine half its memory to search with.
pub fn scratch_size(config: &EngineConfig) -> u64 {
    (limits(config).memory / 4).clamp(1 << 20, SCRATCH_CAP)
}

/// The most an engine's scratch space may hold, whatever its memory limit.
const SCRATCH_CAP: u64 = 1 << 30;

/// The system's folders every program needs, read-only.
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// What of `/etc` a program may need (the dynamic loader, users, time zone, certificates);
/// the rest (keys, password hashes, the cluster's munge key) stays out.
const ETC: &[&str] = &[
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "ssl",
    "ca-certificates",
    "fonts",
    "os-release",
];

/// Absolute and free of symlinks where it exists, absolute otherwise.
fn real(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    absolute.canonicalize().unwrap_or(absolute)
}

/// Why `wrap` cannot wrap an engine where bubblewrap is not found.
const NO_BUBBLEWRAP: &str = "no bubblewrap";

/// Where the engine's starting content (`dir=`, else arbiter's working folder) is seen, read-only,
/// inside its sandbox: the entries of its private working folder point here.
const STARTING_CONTENT: &str = "/run/arbiter/start";

/// Builds bwrap's arguments for `config`; `hidden` are files and folders the engine must not see
/// (the run's, the other engines').
///
/// The engine works in a private folder of its own, made for this process alone and bound where
/// its working folder (`dir=`, else arbiter's) lies, so that its paths are the ones it was given.
/// That folder starts with one link per entry of the working folder, taken when the engine
/// starts, each to the entry read-only: it reads what it was given, and what it writes (even
/// over a link) stays its own and goes with it. No engine can write a program another engine
/// runs, and two processes of one engine share nothing writable. What appears in the working
/// folder later (a run's folder) is not among its links; what must stay hidden is covered in
/// the read-only view, and a start is refused where that cannot be done.
pub fn wrap(config: &EngineConfig, hidden: &[PathBuf]) -> Result<Wrapped, String> {
    let bwrap = program().clone().map_err(|_| NO_BUBBLEWRAP.to_string())?;
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_old_scratch);
    let base = real(Path::new(config.dir.as_deref().unwrap_or(".")));
    let program = program_in(config, &base)?;
    check_executable(&program)?;
    let program_dir = program.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut hidden = with_the_key(hidden);
    // A system folder (`/` for a service) or one every user shares (`/tmp`) gives no starting
    // content: the private folder alone. What others keep in `/tmp` comes and goes as the
    // engine starts, and none of it is the engine's.
    let start = (!is_system(&base) && !is_shared_temp(&base)).then_some(base.clone());
    if let Some(start) = &start {
        hidden.extend(run_folders_in(start));
    }
    let work = start.clone().unwrap_or_else(|| PathBuf::from(PRIVATE_WORK));
    let size = scratch_size(config).to_string();
    let filters = super::seccomp::filters(config.sandbox.locks);
    let mut args = system_view(&size, filters.is_none());
    let readable = readable_folders(config, &base, &program, start.as_deref(), &hidden)?;
    for folder in readable.iter().filter(|r| r.is_dir()) {
        hidden.extend(run_folders_in(folder));
    }
    check_given(&program, &readable)?;
    let writable = writable_folders(config, &base, &program_dir, &hidden)?;
    // Root's engine runs as nobody: what it is given is staged where nobody can reach it.
    let mut stage = engine_user().map(|_| super::stage::Stage::default());
    let entries_hidden: Vec<PathBuf> = hidden
        .iter()
        .filter(|h| !program_dir.starts_with(h))
        .cloned()
        .collect();
    let mut from = |path: &Path| match stage.as_mut() {
        Some(stage) => stage.add(path, &entries_hidden),
        None => path.to_path_buf(),
    };
    // A later mount covers what it lies over: a readable folder around the working folder goes
    // first, the rest after it, so that the working folder stays the private one.
    let (around, inside): (Vec<&PathBuf>, Vec<&PathBuf>) =
        readable.iter().partition(|r| work.starts_with(r));
    for r in around {
        args.mount("--ro-bind", &from(r), r);
    }
    if let Some(start) = &start {
        args.mount("--ro-bind", &from(start), Path::new(STARTING_CONTENT));
    }
    // The private working folder: a memory file system of its own size, holding a link per
    // entry of the starting content.
    args.words(&["--size", &size, "--perms", "0700"]);
    args.mount_one("--tmpfs", &work);
    if let Some(start) = &start {
        link_starting_content(&mut args, start, &work, &entries_hidden)?;
    }
    for r in inside {
        args.mount("--ro-bind", &from(r), r);
    }
    // One inside the working folder is reached through its link, so it is bound in the view the
    // link points to (a link cannot be mounted over: its target is resolved outside the sandbox).
    for w in &writable {
        args.mount("--bind", &from(w), &shown_at(w, start.as_deref()));
    }
    let seen = seen_folders(start.as_deref(), &readable);
    cover_hidden(&mut args, &hidden, &seen, &program_dir)?;
    let seccomp = hand_filters(&mut args, filters.unwrap_or_default())?;
    args.mount_one("--remount-ro", Path::new("/"));
    args.mount_one("--chdir", &work);
    cap_processes(&mut args, config);
    args.0.push(program.into_os_string());
    let writable_space = vec![work, PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    let scratch = super::scratch::Scratch::new(writable_space, scratch_size(config));
    Ok(Wrapped {
        bwrap,
        args: args.0,
        seccomp,
        scratch,
        stage: stage.filter(|s| !s.is_empty()),
    })
}

/// Refuses, for root's engine (run as `nobody`), a program or a given file `nobody` cannot
/// reach.
fn check_given(program: &Path, readable: &[PathBuf]) -> Result<(), String> {
    if let Some(user) = engine_user() {
        check_reachable(program, user, true)?;
        for r in readable.iter().filter(|r| r.is_file()) {
            check_reachable(r, user, false)?;
        }
    }
    Ok(())
}

/// Where no control group counts the engine's processes: `prlimit` before the program, set
/// inside the engine's own user namespace, where the kernel counts only its processes (the
/// same limit set outside would count every process of the user).
fn cap_processes(args: &mut Args, config: &EngineConfig) {
    if let Some(prlimit) = processes_capped_by_rlimit() {
        let cap = limits(config).processes;
        args.0.push(prlimit.into_os_string());
        args.0.push(format!("--nproc={cap}:{cap}").into());
        args.0.push("--".into());
    }
}

/// What the engine must not see, and the owner's key: made before any engine starts, so that
/// it is hidden where it lies.
fn with_the_key(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> = hidden.iter().map(|h| real(h)).collect();
    let _ = crate::proof::Key::owners();
    hidden.extend(
        crate::proof::key_path()
            .filter(|k| k.exists())
            .map(|k| real(&k)),
    );
    hidden
}

/// The folders `writable=` names (from the engine's folder `base`), each checked.
fn writable_folders(
    config: &EngineConfig,
    base: &Path,
    program_dir: &Path,
    hidden: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    let writable: Vec<PathBuf> = config
        .sandbox
        .writable
        .iter()
        .map(|w| real(&base.join(w)))
        .collect();
    for w in &writable {
        check_writable(w, program_dir, hidden)?;
    }
    Ok(writable)
}

/// Where the engine sees the writable folder `w`: one inside its starting content through the
/// view its link points to, any other where it lies.
fn shown_at(w: &Path, start: Option<&Path>) -> PathBuf {
    match start {
        Some(s) if w != s && w.starts_with(s) => {
            Path::new(STARTING_CONTENT).join(w.strip_prefix(s).unwrap_or(w))
        }
        _ => w.to_path_buf(),
    }
}

/// Each folder the engine sees, with where it sees it, for what must stay out of sight though
/// it lies inside them: the starting content, what it may read, and the system's folders,
/// bound whole (a key kept under `/opt` is covered there).
fn seen_folders(start: Option<&Path>, readable: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    let mut seen: Vec<(PathBuf, PathBuf)> = Vec::new();
    if let Some(start) = start {
        seen.push((start.to_path_buf(), PathBuf::from(STARTING_CONTENT)));
    }
    seen.extend(readable.iter().map(|r| (r.clone(), r.clone())));
    seen.extend(
        SYSTEM
            .iter()
            .map(Path::new)
            .filter(|d| d.is_dir() && std::fs::read_link(d).is_err())
            .map(|d| (d.to_path_buf(), d.to_path_buf())),
    );
    seen
}

/// The seccomp filters, each in a memory file bubblewrap is told to read; the files are kept
/// open until the engine has started.
fn hand_filters(
    args: &mut Args,
    filters: Vec<seccompiler::BpfProgram>,
) -> Result<Vec<std::os::fd::OwnedFd>, String> {
    use std::os::fd::AsRawFd;
    let mut files = Vec::new();
    for filter in filters {
        let file = super::seccomp::memory_file(&filter)
            .map_err(|e| format!("cannot hand bubblewrap its seccomp filter: {e}"))?;
        args.words(&["--add-seccomp-fd", &file.as_raw_fd().to_string()]);
        files.push(file);
    }
    Ok(files)
}

/// Where no control group counts an engine's processes (a normal user on cgroup v1): the
/// `prlimit` that caps them with RLIMIT_NPROC inside its sandbox, in a system folder the
/// sandbox shows. Each sandbox has a user namespace of its own, and the kernel counts
/// RLIMIT_NPROC per namespace, so the cap is the engine's alone.
pub fn processes_capped_by_rlimit() -> Option<PathBuf> {
    if super::cgroup::support().is_some() {
        return None;
    }
    ["/usr/bin/prlimit", "/bin/prlimit"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Where an engine whose working folder is a system folder works.
const PRIVATE_WORK: &str = "/run/arbiter/work";

/// Folders inside `start` (to two levels: `reports/<run>`) that hold a run's, a tune's or a
/// bisect's files: an engine started beside older runs must not read their journals.
fn run_folders_in(start: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(top) = std::fs::read_dir(start) else {
        return found;
    };
    for entry in top.flatten() {
        let path = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if let Some(records) = run_records(&path) {
            found.push(records);
            continue;
        }
        let Ok(inner) = std::fs::read_dir(&path) else {
            continue;
        };
        found.extend(
            inner
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| run_records(&e.path())),
        );
    }
    found
}

/// The folder of `folder`'s run records: itself for a run or a tune, the steps of a bisect
/// (whose built versions, in the same folder, are programs engines run).
fn run_records(folder: &Path) -> Option<PathBuf> {
    if holds_run(folder) {
        return Some(folder.to_path_buf());
    }
    folder
        .join(BISECT_SPEC_FILE)
        .exists()
        .then(|| folder.join("steps"))
}

/// A bisect's settings (the bisect's `SPEC_FILE`), which mark its folder.
const BISECT_SPEC_FILE: &str = "bisect-spec.json";

/// Whether `folder` holds a run's records (its journal, settings or their proofs).
pub fn holds_run(folder: &Path) -> bool {
    const RUN_FILES: &[&str] = &[
        "run.json",
        "journal.jsonl",
        "run.proof",
        "run.key",
        "tune.json",
        "tune.proof",
    ];
    RUN_FILES.iter().any(|f| folder.join(f).exists())
}

/// Refuses a file the engine's user (`nobody`, arbiter being root) may not read (or run, for
/// the program). The folders above it do not matter: what the engine is given is staged where
/// it can reach it (see `stage`). Said before the start, with the fix, rather than as the
/// engine's failure.
fn check_reachable(
    path: &Path,
    user: (libc::uid_t, libc::gid_t),
    program: bool,
) -> Result<(), String> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let bits = if program || meta.is_dir() { 0o5 } else { 0o4 };
    if user_may(&meta, user, bits) {
        return Ok(());
    }
    let need = if program { "run it" } else { "read it" };
    Err(format!(
        "the engine runs as {} (arbiter was started by root, and no engine runs as root), \
         and {} does not let others {need}: make it so (chmod o+rx), or run arbiter as a \
         normal user",
        engine_user_name().unwrap_or_default(),
        path.display(),
    ))
}

/// Whether `user` has the permission `bits` (`0o4` read, `0o2` write, `0o1` enter or run) on
/// a file with `meta`.
fn user_may(meta: &std::fs::Metadata, user: (libc::uid_t, libc::gid_t), bits: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode();
    match (meta.uid() == user.0, meta.gid() == user.1) {
        (true, _) => mode & (bits << 6) == bits << 6,
        (false, true) => mode & (bits << 3) == bits << 3,
        (false, false) => mode & bits == bits,
    }
}

/// Whether the engine can enter `folder` (its user being root's `nobody`, else arbiter's own).
fn engine_may_enter(folder: &Path) -> bool {
    match engine_user() {
        Some(user) => std::fs::metadata(folder).is_ok_and(|m| user_may(&m, user, 0o1)),
        None => {
            use std::os::unix::ffi::OsStrExt;
            let Ok(path) = std::ffi::CString::new(folder.as_os_str().as_bytes()) else {
                return false;
            };
            // SAFETY: access(2) reads the NUL-terminated path it is given.
            unsafe { libc::access(path.as_ptr(), libc::X_OK) == 0 }
        }
    }
}

/// The program `cmd=` names: a path from the working folder, or a name looked up in `PATH`.
fn program_in(config: &EngineConfig, base: &Path) -> Result<PathBuf, String> {
    if config.cmd.contains('/') {
        let cmd = Path::new(&config.cmd);
        Ok(match cmd.is_absolute() {
            false => real(&base.join(cmd)),
            true => real(cmd),
        })
    } else {
        find_in_path(Path::new(&config.cmd))
            .map(|p| real(&p))
            .ok_or_else(|| format!("no program '{}' in PATH", config.cmd))
    }
}

/// A sandbox with nothing shared, and the system's folders and `/etc` files read-only; its
/// `/tmp` a memory file system of `size` bytes. `new_session` where no seccomp filter keeps
/// the engine from typing into arbiter's terminal: a session of its own is also a scheduling
/// group of its own (an autogroup), which a machine busy with other work wakes late on its
/// turn, losing games on time.
fn system_view(size: &str, new_session: bool) -> Args {
    let mut args = Args::default();
    args.words(&["--unshare-all", "--die-with-parent"]);
    if new_session {
        args.words(&["--new-session"]);
    }
    args.words(&["--cap-drop", "ALL"]);
    for dir in SYSTEM {
        let path = Path::new(dir);
        match std::fs::read_link(path) {
            Ok(target) => args.mount("--symlink", &target, path),
            Err(_) if path.is_dir() => args.mount("--ro-bind", path, path),
            Err(_) => {}
        }
    }
    for name in ETC {
        let path = Path::new("/etc").join(name);
        if path.exists() {
            args.mount("--ro-bind", &path, &path);
        }
    }
    // Every writable file system has a size: `/dev/shm` as `/tmp`, and `/dev` itself (the
    // sandbox's root too, at the end of `wrap`) is made read-only. Memory written to a file
    // system without one belongs to no process, and the kernel's OOM killer would take the
    // referee for it.
    args.words(&[
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        size,
        "--tmpfs",
        "/tmp",
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
    ]);
    args
}

/// The folders (and single files) the engine may read, each where it lies: its program's (and,
/// for a script, its interpreter's and those of the programs it runs), then what its options,
/// arguments and `readable=` name. Within the starting content they are reached by its links.
fn readable_folders(
    config: &EngineConfig,
    base: &Path,
    program: &Path,
    start: Option<&Path>,
    hidden: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    let mut readable: Vec<PathBuf> = Vec::new();
    let within_start = |p: &Path| start.is_some_and(|s| p.starts_with(s));
    let program_dir = program.parent().unwrap_or(Path::new("/"));
    // A program kept directly in `/tmp` or a home is given alone, not with all that lies there.
    let own = match too_wide(program_dir, &[]) {
        true => program.to_path_buf(),
        false => program_dir.to_path_buf(),
    };
    let folders = std::iter::once(own).chain(script_targets(program, base, hidden));
    for folder in folders {
        let covered = readable.iter().any(|o| folder.starts_with(o));
        if !is_system(&folder) && !within_start(&folder) && !covered {
            readable.push(folder);
        }
    }
    let named = config
        .options
        .iter()
        .flat_map(|(_, value)| value.split(if value.contains(';') { ';' } else { ':' }));
    let asked = config.sandbox.readable.iter().map(String::as_str);
    for part in named
        .chain(config.args.iter().flat_map(|a| paths_in_arg(a)))
        .chain(asked)
    {
        let part = part.trim();
        if part.is_empty() || !part.contains('/') {
            continue;
        }
        let path = real(&base.join(part));
        if let Some(h) = hidden
            .iter()
            .find(|h| *h == &path || h.starts_with(&path) && path.is_file())
        {
            return Err(format!(
                "{part}: {} is the run's own, another engine's or arbiter's key, and no engine may \
                    read it",
                h.display()
            ));
        }
        let covered = readable.iter().any(|o| path.starts_with(o)) || within_start(&path);
        if path.exists() && !covered && !is_system(&path) {
            readable.push(path);
        }
    }
    Ok(readable)
}

/// The paths a program argument may name: itself, the value of `-Dkey=PATH` or `--flag=PATH`,
/// and each part of a list such as a Java class path (`a.jar:lib/b.jar`).
fn paths_in_arg(arg: &str) -> Vec<&str> {
    let value = arg.split_once('=').map(|(_, v)| v);
    let mut parts = vec![arg];
    parts.extend(value);
    for whole in [Some(arg), value].into_iter().flatten() {
        if whole.contains(':') {
            parts.extend(whole.split(':'));
        }
    }
    parts
}

/// The most of a script read for the programs it runs.
const SCRIPT_READ: u64 = 64 * 1024;

/// How scripts name their own folder, taken for it when reading the paths a script names.
const SCRIPT_FOLDER: &[&str] = &[
    "$(cd \"$(dirname \"$0\")\" && pwd)",
    "$(cd $(dirname $0) && pwd)",
    "$(dirname \"$(readlink -f \"$0\")\")",
    "$(dirname \"${BASH_SOURCE[0]}\")",
    "$(dirname \"$0\")",
    "$(dirname $0)",
    "`dirname $0`",
    "${0%/*}",
];

/// What a wrapper script needs of the world to start: its interpreter
/// (`#!/home/me/venv/bin/python`, with the virtual environment around it) and the programs it runs
/// (`exec /opt/sf/stockfish "$@"`, `"$(dirname "$0")/../bin/engine"`), found where they lie now.
/// Only executable files count: a folder or a data file a script merely names is not given (a
/// secret, another run's folder); the engine's error then says `readable=`. A program is given with
/// its folder, where its nets and books usually lie, except where that folder is a home, `/tmp` or
/// holds what no engine may see: then the program file alone.
fn script_targets(program: &Path, base: &Path, hidden: &[PathBuf]) -> Vec<PathBuf> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let mut text = String::new();
    let read =
        std::fs::File::open(program).and_then(|f| f.take(SCRIPT_READ).read_to_string(&mut text));
    if read.is_err() || !text.starts_with("#!") {
        return Vec::new();
    }
    let own = program.parent().unwrap_or(Path::new("/"));
    for idiom in SCRIPT_FOLDER {
        text = text.replace(idiom, &own.to_string_lossy());
    }
    let mut found = Vec::new();
    let interpreter = text.lines().next().unwrap_or("").trim_start_matches("#!");
    let body = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim_start().starts_with('#'));
    let words = interpreter.split_whitespace().take(2).chain(
        body.flat_map(|l| l.split(|c: char| c.is_whitespace() || ";|&<>()'\"`=".contains(c))),
    );
    for word in words.filter(|w| w.contains('/') && !w.contains(['$', '*', '?'])) {
        for from in [own, base] {
            // Where the script names it, links not followed: a virtual environment's
            // `bin/python3` is a link into the system, but is run (and reads its
            // environment's `pyvenv.cfg`) by the path the script gives.
            let path = lexically_absolute(&from.join(word));
            let executable = std::fs::metadata(&path)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if !executable || is_system(&path) {
                continue;
            }
            let folder = path.parent().unwrap_or(Path::new("/"));
            // A virtual environment's interpreter needs the environment around it.
            let venv = folder
                .parent()
                .filter(|root| root.join("pyvenv.cfg").is_file())
                .map(Path::to_path_buf);
            let given = match venv {
                Some(root) if !too_wide(&root, hidden) => root,
                _ if !too_wide(folder, hidden) => folder.to_path_buf(),
                _ => path.clone(),
            };
            if !found.contains(&given) {
                found.push(given);
            }
        }
    }
    found
}

/// `path` made absolute with `.` and `..` taken away by their names, no link followed.
fn lexically_absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut clean = PathBuf::from("/");
    let absolute = match path.is_absolute() {
        true => path.to_path_buf(),
        false => std::env::current_dir().unwrap_or_default().join(path),
    };
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::Normal(name) => clean.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    clean
}

/// The temporary folders every user shares.
fn is_shared_temp(folder: &Path) -> bool {
    ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .any(|t| folder == Path::new(t))
}

/// Whether giving `folder` to an engine would give it more than a program's own folder: a
/// home, a temporary folder, the root, or a folder holding what no engine may see.
fn too_wide(folder: &Path, hidden: &[PathBuf]) -> bool {
    const WIDE: &[&str] = &["/", "/tmp", "/var/tmp", "/dev/shm", "/home", "/root"];
    let home = std::env::var_os("HOME").map(|h| real(Path::new(&h)));
    WIDE.iter().any(|w| folder == Path::new(w))
        || home.is_some_and(|h| folder == h)
        || hidden.iter().any(|h| h.starts_with(folder))
        || holds_run(folder)
}

/// Covers each of `hidden` that lies inside a folder the engine sees (`seen`: where it lies,
/// where the engine sees it), or refuses when one cannot be covered.
fn cover_hidden(
    args: &mut Args,
    hidden: &[PathBuf],
    seen: &[(PathBuf, PathBuf)],
    program_dir: &Path,
) -> Result<(), String> {
    for hide in hidden {
        for (host, inner) in seen {
            let Ok(rest) = hide.strip_prefix(host) else {
                continue;
            };
            if rest.as_os_str().is_empty() {
                continue;
            }
            let target = cover(host, rest, program_dir).map_err(|why| {
                format!(
                    "{} cannot be hidden from the engine ({why}); make it before the engine \
                        starts, or run it elsewhere",
                    hide.display()
                )
            })?;
            let Some(target) = target else { continue };
            // Behind a folder the engine may not enter, it is out of its reach already; and
            // bubblewrap, as the engine's user, could not make the cover there.
            let below: Vec<&Path> = target
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(host) && *a != host)
                .collect();
            if !below.iter().all(|a| engine_may_enter(a)) {
                continue;
            }
            let shown = inner.join(target.strip_prefix(host).unwrap_or(Path::new("")));
            if target.is_dir() {
                args.mount_one("--tmpfs", &shown);
            } else {
                args.mount("--ro-bind", Path::new("/dev/null"), &shown);
            }
        }
    }
    Ok(())
}

/// The variables an engine gets from arbiter's environment, where they are set; nothing else
/// of it reaches the engine but what `env.NAME=value` passes on purpose.
pub const ENVIRONMENT: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
];

/// The engine's whole environment: `ENVIRONMENT` as arbiter has it (in a sandbox `HOME` is its
/// working folder and `TMPDIR` its own `/tmp`), then its `env.` settings.
pub fn environment(config: &EngineConfig, sandboxed: bool) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = ENVIRONMENT
        .iter()
        .filter_map(|name| Some((OsString::from(name), std::env::var_os(name)?)))
        .collect();
    if sandboxed {
        let work = real(Path::new(config.dir.as_deref().unwrap_or(".")));
        env.retain(|(name, _)| name != "HOME");
        env.push(("HOME".into(), work.into_os_string()));
        env.push(("TMPDIR".into(), "/tmp".into()));
    }
    for (name, value) in &config.sandbox.env {
        env.retain(|(n, _)| n != name.as_str());
        env.push((name.into(), value.into()));
    }
    env
}

/// Marks every file descriptor but the three standard ones close-on-exec, in the engine's
/// process just before it starts: a descriptor arbiter inherited without the flag (a shell's
/// redirection, a job system's socket) would otherwise reach the engine. Only system calls, as
/// `pre_exec` requires.
pub fn close_inherited_files() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range(2) and fcntl(2) change only descriptor flags of this process.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) != 0 {
            for fd in 3..4096 {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

/// bwrap's arguments, built up.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn words(&mut self, words: &[&str]) {
        self.0.extend(words.iter().map(OsString::from));
    }
    fn mount(&mut self, how: &str, from: &Path, to: &Path) {
        self.0
            .extend([how.into(), from.as_os_str().into(), to.as_os_str().into()]);
    }
    fn mount_one(&mut self, how: &str, at: &Path) {
        self.0.extend([how.into(), at.as_os_str().into()]);
    }
}

/// What to cover so that `host/rest` is out of sight: itself where it exists, else the nearest
/// folder on its way that exists, below `host` (the view of `host` is read-only: nothing new can
/// be made in it to cover). A folder that holds the engine's own program is not covered: it
/// is another engine's folder that this one shares.
fn cover(host: &Path, rest: &Path, program_dir: &Path) -> Result<Option<PathBuf>, String> {
    let mut target = host.join(rest);
    if target.exists() {
        return Ok((!program_dir.starts_with(&target)).then_some(target));
    }
    while !target.exists() {
        match target.parent() {
            Some(parent) if parent != host && parent.starts_with(host) => {
                target = parent.to_path_buf()
            }
            _ => return Err("it does not exist yet".into()),
        }
    }
    if program_dir.starts_with(&target) {
        return Err("it does not exist yet, and what holds it holds the engine's program".into());
    }
    Ok(Some(target))
}

/// One link in the private folder `into` for each entry of `start`, to its read-only view;
/// the entries that must stay hidden get none.
fn link_starting_content(
    args: &mut Args,
    start: &Path,
    into: &Path,
    hidden: &[PathBuf],
) -> Result<(), String> {
    let entries =
        std::fs::read_dir(start).map_err(|e| format!("cannot read {}: {e}", start.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if hidden.iter().any(|h| *h == start.join(&name)) {
            continue;
        }
        args.mount(
            "--symlink",
            &Path::new(STARTING_CONTENT).join(&name),
            &into.join(&name),
        );
    }
    Ok(())
}

/// `writable=` may not hold a program the engine runs (nor, through `hidden`, the run's folder
/// or another engine's): it could rewrite them between runs.
fn check_writable(path: &Path, program_dir: &Path, hidden: &[PathBuf]) -> Result<(), String> {
    if !path.is_dir() {
        return Err(format!("writable={}: no such folder", path.display()));
    }
    if is_system(path) || path == Path::new("/") {
        return Err(format!(
            "writable={}: a system folder cannot be given to an engine",
            path.display()
        ));
    }
    if program_dir.starts_with(path) {
        return Err(format!(
            "writable={}: it holds the engine's own program, which it could then rewrite",
            path.display()
        ));
    }
    if let Some(h) = hidden.iter().find(|h| h.starts_with(path)) {
        return Err(format!(
            "writable={}: it holds {}, which is the run's or another engine's",
            path.display(),
            h.display()
        ));
    }
    if let Some(user) = engine_user() {
        use std::os::unix::fs::MetadataExt;
        let meta =
            std::fs::metadata(path).map_err(|e| format!("writable={}: {e}", path.display()))?;
        let mode = meta.mode();
        let writes = (meta.uid() == user.0 && mode & 0o300 == 0o300)
            || (meta.gid() == user.1 && mode & 0o030 == 0o030)
            || mode & 0o003 == 0o003;
        if !writes {
            return Err(format!(
                "writable={}: the engine runs as {} (arbiter was started by root, and no engine \
                 runs as root), which may not write it: chown {} {}",
                path.display(),
                engine_user_name().unwrap_or_default(),
                user.0,
                path.display()
            ));
        }
        check_reachable(path, user, false)?;
    }
    Ok(())
}

/// The system's own folders and the kernel's, which no engine is given to write or hide in.
fn is_system(p: &Path) -> bool {
    const KERNEL: &[&str] = &["/etc", "/proc", "/sys", "/dev", "/boot", "/run"];
    p == Path::new("/") || SYSTEM.iter().chain(KERNEL).any(|s| p.starts_with(s))
}

/// The engines, each with what it must not see: the run's own files and folders (`run`: its
/// folder, the I/O log), the other engines' folders, and what it was set to hide already (a
/// bisect's step: every other version's folders).
pub fn hide_from_each_other(engines: &[EngineConfig], run: &[PathBuf]) -> Vec<EngineConfig> {
    let folders: Vec<Vec<PathBuf>> = engines.iter().map(engine_folders).collect();
    engines
        .iter()
        .enumerate()
        .map(|(i, engine)| {
            let mut hidden = run.to_vec();
            let theirs = folders
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, f)| f);
            for folder in engine.hidden.iter().chain(theirs) {
                if !hidden.contains(folder) {
                    hidden.push(folder.clone());
                }
            }
            EngineConfig {
                hidden,
                hidden_run: run.len(),
                ..engine.clone()
            }
        })
        .collect()
}

/// Sets each engine of a bisect's step to hide every other version's folders, so that an engine
/// started for one step is the very engine another step would start (see `tournament::shelf`).
pub fn hide_the_series(step: &mut [EngineConfig], series: &[EngineConfig]) {
    for engine in step {
        engine.hidden = series
            .iter()
            .filter(|v| v.name != engine.name)
            .flat_map(engine_folders)
            .collect();
    }
}

/// What of a run its engines must not see: its folder (all of a split run's, `out_dir` being one
/// task's; all of a bisect's steps, `out_dir` being one step's) and its I/O log.
pub fn run_files(out_dir: &Path, split: bool, log: Option<&Path>) -> Vec<PathBuf> {
    let folder = match split {
        true => out_dir.parent().unwrap_or(out_dir),
        false => out_dir,
    };
    let steps = folder.parent().filter(|steps| {
        steps
            .parent()
            .is_some_and(|b| b.join(BISECT_SPEC_FILE).exists())
    });
    let folder = match steps {
        Some(steps) if steps.file_name().is_some_and(|n| n == "steps") => steps,
        _ => folder,
    };
    std::iter::once(folder)
        .chain(log)
        .map(Path::to_path_buf)
        .collect()
}

/// An engine's own folders: its working folder and its program's.
fn engine_folders(engine: &EngineConfig) -> Vec<PathBuf> {
    let dir = engine.dir.as_ref().map(PathBuf::from);
    let mut folders: Vec<PathBuf> = dir.iter().cloned().collect();
    if engine.cmd.contains('/') {
        let program = match &dir {
            Some(d) => d.join(&engine.cmd),
            None => PathBuf::from(&engine.cmd),
        };
        folders.extend(program.parent().map(Path::to_path_buf));
    }
    folders
}

/// The error `exec` would give, found before the sandbox hides it in its own output.
fn check_executable(program: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(program.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: access(2) reads the NUL-terminated path it is given.
    if unsafe { libc::access(path.as_ptr(), libc::X_OK) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files that mark a folder of records to hide are the names runs, tunes and
    /// bisects write.
    #[test]
    fn the_records_hidden_are_those_runs_tunes_and_bisects_write() {
        assert_eq!(BISECT_SPEC_FILE, crate::bisect::drive::SPEC_FILE);
        for name in [
            crate::tournament::spec::SPEC_FILE,
            crate::tournament::journal::JOURNAL_FILE,
            crate::proof::SPEC_PROOF_FILE,
            crate::proof::KEY_FILE,
            crate::tune::spec::TUNE_FILE,
            crate::proof::TUNE_PROOF_FILE,
        ] {
            let dir = std::env::temp_dir().join(format!("arbiter-records-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(name), "").unwrap();
            assert!(holds_run(&dir), "{name}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// The ways course and engine scripts name the program they run: absolute, beside the
    /// script through its own folder, from the working folder. A data file, a folder or a
    /// word that is no file is not given, nor a home or a folder holding a run.
    #[test]
    fn a_scripts_programs_are_found_where_it_names_them() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("arbiter-script-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for folder in ["player", "bin", "lib", "work/build", "secrets", "old-run"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        for file in [
            "bin/engine",
            "lib/weights.nn",
            "work/build/other",
            "old-run/tool",
        ] {
            std::fs::write(root.join(file), "").unwrap();
        }
        for program in ["bin/engine", "work/build/other", "old-run/tool"] {
            let path = root.join(program);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::write(root.join("old-run/journal.jsonl"), "").unwrap();
        let script = root.join("player/run.sh");
        let text = format!(
            "#!/bin/bash\n# /not/a/program in a comment\nW={}/lib/weights.nn\ncat {}/secrets\n\
             {}/old-run/tool\n\
             exec \"$(dirname \"$0\")/../bin/engine\" --weights=$W build/other /no/such \"$@\"\n",
            root.display(),
            root.display(),
            root.display(),
        );
        std::fs::write(&script, text).unwrap();
        let found = script_targets(&script, &root.join("work"), &[]);
        let real = |p: &str| root.join(p).canonicalize().unwrap();
        assert_eq!(
            found,
            [real("old-run/tool"), real("bin"), real("work/build")],
            "programs only; a run's folder gives its program file alone"
        );
        std::fs::write(&script, "\x7fELF /bin/engine").unwrap();
        assert!(
            script_targets(&script, &root, &[]).is_empty(),
            "a binary is no script"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The version read from the program file is the one it prints, where bubblewrap is
    /// installed (CI installs it); a program without one is asked instead.
    #[test]
    #[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
    fn the_version_read_from_bubblewrap_is_the_one_it_prints() {
        let program = find_in_path(Path::new("bwrap")).expect("bubblewrap is installed");
        let out = std::process::Command::new(&program)
            .arg("--version")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(version_in_program(&program), Some(printed));
        assert_eq!(version_in_program(Path::new("/bin/sh")), None);
    }

    #[test]
    fn sizes_read_with_units_and_refuse_nonsense() {
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("12"), None, "under a MiB is a mistake");
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(show_size(512 << 20), "512 MiB");
        assert_eq!(show_size(12 << 30), "12 GiB");
        assert_eq!(show_size(12052 << 20), "11.8 GiB");
    }
}
