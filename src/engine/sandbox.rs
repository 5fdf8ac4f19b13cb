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
}

impl Confinement {
    pub fn is_default(&self) -> bool {
        *self == Confinement::default()
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
                "bubblewrap (bwrap) is not installed; Debian/Ubuntu: apt-get install bubblewrap"
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
                std::process::Command::new(program)
                    .arg("--version")
                    .stdin(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .output()
                    .ok()
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
    let out = probe
        .output()
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
    let limits = match cgroup::support() {
        Some(how) => {
            let of = |e: &EngineConfig| {
                let l = limits(e);
                format!(
                    "{} memory, {} processes, {} CPU",
                    show_size(l.memory),
                    l.processes,
                    l.cpus
                )
            };
            let each: Vec<String> = sandboxed.iter().map(|e| of(e)).collect();
            if each.iter().all(|l| *l == each[0]) {
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
            }
        }
        None => "no memory, process or CPU limits (no writable cgroup v1 here)".to_string(),
    };
    format!("sandbox: {who} in its own namespaces ({version}); {limits}{why_not}")
}

/// The limits an engine gets: what it asked for, else a share of the machine that fits one
/// engine per core.
pub fn limits(config: &EngineConfig) -> Limits {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    // SAFETY: sysconf(3) has no preconditions.
    let ram = unsafe {
        (libc::sysconf(libc::_SC_PHYS_PAGES) as u64)
            .saturating_mul(libc::sysconf(libc::_SC_PAGESIZE) as u64)
    };
    let asked_threads = config
        .options
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Threads"))
        .and_then(|(_, v)| v.trim().parse::<u32>().ok());
    Limits {
        memory: config
            .sandbox
            .memory
            .unwrap_or((ram / cores.max(1)).max(256 << 20)),
        processes: config.sandbox.processes.unwrap_or(512),
        cpus: config.sandbox.threads.or(asked_threads).unwrap_or(1).max(1),
    }
}

/// How to start one sandboxed engine: bwrap's arguments up to the engine's program.
#[derive(Debug)]
pub struct Wrapped {
    pub bwrap: PathBuf,
    pub args: Vec<OsString>,
    /// A working folder made for this engine (none was given), removed when the engine is gone.
    pub scratch: Option<Scratch>,
}

/// A folder removed when dropped.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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

/// Builds bwrap's arguments for `config`; `hidden` are folders the engine must not see (the
/// run's, the other engines').
pub fn wrap(config: &EngineConfig, hidden: &[PathBuf]) -> Result<Wrapped, String> {
    let Ok(bwrap) = program() else {
        return Err("no bubblewrap".into());
    };
    let base = config.dir.as_deref().map(|d| real(Path::new(d)));
    let program = if config.cmd.contains('/') {
        let cmd = Path::new(&config.cmd);
        match (&base, cmd.is_absolute()) {
            (Some(dir), false) => real(&dir.join(cmd)),
            _ => real(cmd),
        }
    } else {
        find_in_path(Path::new(&config.cmd))
            .map(|p| real(&p))
            .ok_or_else(|| format!("no program '{}' in PATH", config.cmd))?
    };
    check_executable(&program)?;
    let program_dir = program.parent().map(Path::to_path_buf).unwrap_or_default();
    let kernel = ["/etc", "/proc", "/sys", "/dev", "/boot", "/run"];
    let system =
        |p: &Path| p == Path::new("/") || SYSTEM.iter().chain(&kernel).any(|s| p.starts_with(s));
    // Its working folder, as without a sandbox: dir= when given, else arbiter's own; a scratch
    // folder of its own where that is a system folder (`/` for a service).
    let mut scratch = None;
    let work = base.unwrap_or_else(|| real(Path::new(".")));
    let work = if system(&work) {
        let dir = std::env::temp_dir().join(format!(
            "arbiter-engine-{}-{}",
            std::process::id(),
            SCRATCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        scratch = Some(Scratch(dir.clone()));
        real(&dir)
    } else {
        work
    };
    let mut args: Vec<OsString> = Vec::new();
    let mut add = |words: &[&std::ffi::OsStr]| args.extend(words.iter().map(|w| w.to_os_string()));
    add(&[
        "--unshare-all".as_ref(),
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
    ]);
    for dir in SYSTEM {
        let path = Path::new(dir);
        match std::fs::read_link(path) {
            Ok(target) => add(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()]),
            Err(_) if path.is_dir() => {
                add(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()])
            }
            Err(_) => {}
        }
    }
    for name in ETC {
        let path = Path::new("/etc").join(name);
        if path.exists() {
            add(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
        }
    }
    add(&[
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
        "--tmpfs".as_ref(),
        "/tmp".as_ref(),
    ]);
    // Its own folders, then the files its options, arguments and `readable=` name. A later
    // mount covers what it lies over: the program's folder goes before a working folder inside
    // it, after one around it (so that the program stays read-only there).
    let mut own: Vec<PathBuf> = vec![work.clone()];
    let program_bind = !system(&program_dir) && program_dir != work;
    let program_around = work.starts_with(&program_dir);
    let bind_program = |add: &mut dyn FnMut(&[&std::ffi::OsStr])| {
        add(&[
            "--ro-bind".as_ref(),
            program_dir.as_os_str(),
            program_dir.as_os_str(),
        ])
    };
    if program_bind && program_around {
        bind_program(&mut add);
    }
    add(&["--bind".as_ref(), work.as_os_str(), work.as_os_str()]);
    if program_bind && !program_around {
        bind_program(&mut add);
    }
    if program_bind {
        own.push(program_dir.clone());
    }
    let named = config
        .options
        .iter()
        .flat_map(|(_, value)| value.split(if value.contains(';') { ';' } else { ':' }));
    let asked = config.sandbox.readable.iter().map(String::as_str);
    for part in named
        .chain(config.args.iter().map(String::as_str))
        .chain(asked)
    {
        let part = part.trim();
        if part.is_empty() || !part.contains('/') {
            continue;
        }
        let path = real(&work.join(part));
        if path.exists() && !own.iter().any(|o| path.starts_with(o)) && !system(&path) {
            add(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
            own.push(path);
        }
    }
    // What must stay out of sight though it lies inside the folders above: an empty folder
    // over a folder, an empty file over a file. A folder that holds one of the engine's own
    // cannot be hidden from it.
    for hide in hidden {
        let hide = real(hide);
        let inside = own.iter().any(|o| hide.starts_with(o) && hide != *o);
        let holds_own = own.iter().any(|o| o.starts_with(&hide));
        if inside && !holds_own && hide.is_dir() {
            add(&["--tmpfs".as_ref(), hide.as_os_str()]);
        } else if inside && hide.is_file() {
            add(&["--ro-bind".as_ref(), "/dev/null".as_ref(), hide.as_os_str()]);
        }
    }
    add(&["--chdir".as_ref(), work.as_os_str(), program.as_os_str()]);
    Ok(Wrapped {
        bwrap: bwrap.clone(),
        args,
        scratch,
    })
}

/// The engines, each with what it must not see: the run's own files and folders (`run`: its
/// folder, the I/O log) and the other engines' folders.
pub fn hide_from_each_other(engines: &[EngineConfig], run: &[PathBuf]) -> Vec<EngineConfig> {
    let folders: Vec<Vec<PathBuf>> = engines.iter().map(engine_folders).collect();
    engines
        .iter()
        .enumerate()
        .map(|(i, engine)| {
            let mut hidden = run.to_vec();
            for (j, theirs) in folders.iter().enumerate() {
                if j != i {
                    hidden.extend(theirs.iter().cloned());
                }
            }
            EngineConfig {
                hidden,
                ..engine.clone()
            }
        })
        .collect()
}

/// What of a run its engines must not see: its folder (all of a split run's, `out_dir` being one
/// task's) and its I/O log.
pub fn run_files(out_dir: &Path, split: bool, log: Option<&Path>) -> Vec<PathBuf> {
    let folder = match split {
        true => out_dir.parent().unwrap_or(out_dir),
        false => out_dir,
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

static SCRATCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

#[cfg(test)]
mod tests {
    use super::*;

    /// The version read from the program file is the one it prints, where bubblewrap is
    /// installed (CI installs it); a program without one is asked instead.
    #[test]
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
