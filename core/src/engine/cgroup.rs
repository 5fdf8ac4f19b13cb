//! Resource limits per engine, kept by the kernel: a control group per engine process (cgroup v1,
//! or v2 through `cgroup2`) with its memory, process count and CPU share capped.
//!
//! An rlimit is per process (a forking engine multiplies it) or per user (shared with everything
//! else the user runs); a cgroup holds the engine's whole tree, and the kernel says afterwards
//! whether it killed a process for want of memory, which is how an engine over its limit is told
//! from one that crashed. The groups are made in the cgroup arbiter itself is in, named after
//! arbiter's pid, so that the next arbiter can sweep those of one that was killed.
//!
//! Where the machine has them, more groups keep play fair. The CPU time an engine's group counts
//! (v1 `cpuacct`, v2 `cpu.stat`) shows whether it computes on its opponent's time, and the
//! freezer then holds it while it is not on move (see `freezer`; frozen tasks ignore even
//! SIGKILL in cgroup v1, so every path that ends an engine thaws it first). The cpuset holds
//! the engine to the CPUs of the thread that started it (`--affinity` pins that thread), so
//! that no engine widens its own mask.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::freezer::CpuMeter;
pub use super::freezer::Freezer;

/// What one engine may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub memory: u64,
    pub processes: u32,
    pub cpus: u32,
}

/// The folders (one per controller) where arbiter may make groups: memory, pids, cpu.
#[derive(Debug)]
struct Hierarchies {
    memory: PathBuf,
    pids: PathBuf,
    cpu: PathBuf,
    /// The freezer and cpuset hierarchies, where there are writable ones.
    freezer: Option<PathBuf>,
    cpuset: Option<PathBuf>,
    /// Where the engines' CPU time is counted: the CPU hierarchy itself where `cpuacct` is
    /// mounted with it, else a hierarchy of its own (counting only, no scheduling).
    cpuacct: Option<PathBuf>,
}

/// Where arbiter keeps its engines' groups: the v1 hierarchies or the unified one.
#[derive(Debug)]
enum Backend {
    V1(Hierarchies),
    V2(super::cgroup2::Unified),
}

/// The control groups arbiter may make, found once. v1 first where both are writable (its
/// controllers are the ones the machine uses); `ARBITER_CGROUP=v1|v2|off` chooses.
fn backend() -> Option<&'static Backend> {
    static FOUND: OnceLock<Option<Backend>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let v2 = || super::cgroup2::find(sweep_stale, writable).map(Backend::V2);
            match std::env::var("ARBITER_CGROUP").as_deref() {
                Ok("off") => None,
                Ok("v1") => hierarchies().map(Backend::V1),
                Ok("v2") => v2(),
                _ => hierarchies().map(Backend::V1).or_else(v2),
            }
        })
        .as_ref()
}

/// The cgroup v1 folders arbiter may make groups in; `None` where the machine has no writable
/// v1 memory, pids and cpu hierarchies (cgroup v2 only, or no permission).
fn hierarchies() -> Option<Hierarchies> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let optional =
        |controller| own_group(&mountinfo, &membership, controller).filter(|dir| writable(dir));
    let found = Hierarchies {
        memory: own_group(&mountinfo, &membership, "memory")?,
        pids: own_group(&mountinfo, &membership, "pids")?,
        cpu: own_group(&mountinfo, &membership, "cpu")?,
        freezer: optional("freezer"),
        cpuset: optional("cpuset"),
        cpuacct: optional("cpuacct"),
    };
    for dir in [&found.memory, &found.pids, &found.cpu] {
        if !writable(dir) {
            return None;
        }
    }
    Some(found)
}

/// The folder of this process's own group in the v1 hierarchy of `controller`.
fn own_group(mountinfo: &str, membership: &str, controller: &str) -> Option<PathBuf> {
    let path = membership.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_string())
    })?;
    mountinfo.lines().find_map(|line| {
        // id parent major:minor root mountpoint options... - fstype source superoptions
        let (left, right) = line.split_once(" - ")?;
        let mut right = right.split(' ');
        let (fstype, _, options) = (right.next()?, right.next()?, right.next()?);
        if fstype != "cgroup" || !options.split(',').any(|o| o == controller) {
            return None;
        }
        let fields: Vec<&str> = left.split(' ').collect();
        let (root, mountpoint) = (fields.get(3)?, fields.get(4)?);
        let inside = path.strip_prefix(root.trim_end_matches('/'))?;
        Some(Path::new(mountpoint).join(inside.trim_start_matches('/')))
    })
}

/// Whether groups can be made in `dir`, tried once; the stale groups of a killed arbiter are
/// swept from it first.
fn writable(dir: &Path) -> bool {
    sweep_stale(dir);
    let probe = dir.join(format!("arbiter-{}-probe", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    let _ = std::fs::remove_dir(&probe);
    made
}

/// Removes the empty groups left by an arbiter that was killed (its pid no longer alive).
fn sweep_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("arbiter-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill(2) with signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) == 0 }
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            // What an arbiter killed together with its keepers left running goes now.
            kill_members(&entry.path());
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Whether per-engine limits can be kept on this machine, and how, in a few words.
pub fn support() -> Option<&'static str> {
    backend().map(|b| match b {
        Backend::V1(_) => "cgroup v1",
        Backend::V2(_) => "cgroup v2",
    })
}

/// Which protections the control groups here keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Holds {
    pub memory: bool,
    pub processes: bool,
    pub cpu: bool,
    /// An engine off its turn is frozen.
    pub freezer: bool,
    /// An engine cannot widen its CPU mask.
    pub cpuset: bool,
    /// An engine's CPU time can be read, so that it is watched rather than frozen off its turn.
    pub cpu_time: bool,
}

pub fn holds() -> Holds {
    match backend() {
        None => Holds::default(),
        Some(Backend::V1(h)) => Holds {
            memory: true,
            processes: true,
            cpu: true,
            freezer: h.freezer.is_some(),
            cpuset: h.cpuset.is_some(),
            cpu_time: h.cpuacct.is_some(),
        },
        Some(Backend::V2(u)) => Holds {
            memory: u.memory,
            processes: u.pids,
            cpu: u.cpu,
            // `cgroup.freeze` is the hierarchy's own, in every group.
            freezer: true,
            cpuset: u.cpuset,
            // `cpu.stat` is in every group, whatever its controllers.
            cpu_time: true,
        },
    }
}

/// What of the limits asked for cannot be kept here, as a reason to refuse the engine.
pub fn refused(memory: bool, processes: bool, threads: bool) -> Option<String> {
    let held = holds();
    let missing: Vec<(&str, &str)> = [
        (memory && !held.memory, "memory=", "memory"),
        (processes && !held.processes, "processes=", "pids"),
        (threads && !held.cpu, "threads=", "cpu"),
    ]
    .into_iter()
    .filter_map(|(missing, setting, controller)| missing.then_some((setting, controller)))
    .collect();
    if missing.is_empty() {
        return None;
    }
    let settings: Vec<&str> = missing.iter().map(|m| m.0).collect();
    let controllers: Vec<&str> = missing.iter().map(|m| m.1).collect();
    Some(match support() {
        None => format!(
            "{} need a control group arbiter may make, and there is none here (cgroup v1 as \
             root, or a cgroup v2 group delegated to you: systemd-run --user --scope -p \
             Delegate=yes arbiter ...)",
            settings.join(", ")
        ),
        Some(how) => format!(
            "{}: the {how} group arbiter runs in does not give its engines the {} controller \
             (enable it in the cgroup.subtree_control above, or leave the setting out)",
            settings.join(", "),
            controllers.join(", ")
        ),
    })
}

/// One engine process's groups, removed when dropped (once the tree in them is gone).
#[derive(Debug)]
pub struct EngineGroup {
    dirs: Vec<PathBuf>,
    memory: PathBuf,
    unified: bool,
    freezer: Option<Arc<Freezer>>,
    freezer_state: Option<CString>,
    cpuset: Option<PathBuf>,
    /// The `cgroup.procs` files the engine joins between fork and exec.
    procs: Vec<CString>,
    /// Under v1, the engine's group in the CPU hierarchy and the group above it.
    cpu: Option<(PathBuf, PathBuf)>,
    /// Under v1, whether its CPU time is counted by its CPU group (`cpuacct` mounted with `cpu`).
    counted_by_cpu_group: bool,
}

/// Each hierarchy that holds limits, with the files that set them (none without `limits`; a
/// name ending in `?` may be missing).
fn limit_files<'a>(
    h: &'a Hierarchies,
    limits: Option<&Limits>,
) -> [(&'a PathBuf, Vec<(&'static str, String)>); 3] {
    let period = 100_000u64;
    let Some(limits) = limits else {
        return [&h.memory, &h.pids, &h.cpu].map(|parent| (parent, Vec::new()));
    };
    [
        (
            &h.memory,
            vec![
                ("memory.limit_in_bytes", limits.memory.to_string()),
                // Where the kernel counts swap, swap counts too ("-try": it may not).
                ("memory.memsw.limit_in_bytes?", limits.memory.to_string()),
            ],
        ),
        (&h.pids, vec![("pids.max", limits.processes.to_string())]),
        (
            &h.cpu,
            vec![
                ("cpu.cfs_period_us", period.to_string()),
                (
                    "cpu.cfs_quota_us",
                    (period * u64::from(limits.cpus.max(1))).to_string(),
                ),
            ],
        ),
    ]
}

impl EngineGroup {
    /// Makes the groups for one engine process, with `limits` or none; under v1, none in the
    /// CPU hierarchy unless `cpu_group` (see `Confinement::plain_cpu`).
    pub fn create(limits: Option<&Limits>, cpu_group: bool) -> std::io::Result<EngineGroup> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let name = format!(
            "arbiter-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        match backend() {
            Some(Backend::V1(h)) => Self::create_v1(h, &name, limits, cpu_group),
            Some(Backend::V2(u)) => Self::create_v2(u, &name, limits),
            None => Err(std::io::Error::other("no writable control group")),
        }
    }

    /// One folder in the unified hierarchy holds it all.
    fn create_v2(
        u: &super::cgroup2::Unified,
        name: &str,
        limits: Option<&Limits>,
    ) -> std::io::Result<EngineGroup> {
        let dir = u.parent.join(name);
        std::fs::create_dir(&dir)?;
        let mut group = EngineGroup {
            dirs: vec![dir.clone()],
            memory: dir.clone(),
            unified: true,
            freezer: None,
            freezer_state: None,
            cpuset: u.cpuset.then(|| dir.clone()),
            procs: vec![c_path(&dir.join("cgroup.procs"))?],
            cpu: None,
            counted_by_cpu_group: false,
        };
        if let Some(l) = limits {
            let period = 100_000u64;
            let files = [
                (u.memory, "memory.max", l.memory.to_string()),
                // Swap would stretch the limit: none, where the kernel counts it.
                (
                    u.memory && dir.join("memory.swap.max").exists(),
                    "memory.swap.max",
                    "0".into(),
                ),
                (u.pids, "pids.max", l.processes.to_string()),
                (
                    u.cpu,
                    "cpu.max",
                    format!("{} {period}", period * u64::from(l.cpus.max(1))),
                ),
            ];
            for (file, value) in files.iter().filter(|f| f.0).map(|f| (f.1, &f.2)) {
                std::fs::write(dir.join(file), value)?;
            }
        }
        group.pin_here()?;
        // Frozen v2 tasks die of SIGKILL: the keeper need not thaw them first.
        group.freezer = Some(Arc::new(Freezer::new(
            std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.freeze"))?,
            [b"1", b"0"],
            None,
            CpuMeter::open_v2(&dir),
        )));
        Ok(group)
    }

    fn create_v1(
        h: &Hierarchies,
        name: &str,
        limits: Option<&Limits>,
        cpu_group: bool,
    ) -> std::io::Result<EngineGroup> {
        let mut group = EngineGroup {
            dirs: Vec::new(),
            memory: h.memory.join(name),
            unified: false,
            freezer: None,
            freezer_state: None,
            cpuset: None,
            procs: Vec::new(),
            cpu: None,
            counted_by_cpu_group: false,
        };
        for (parent, files) in limit_files(h, limits) {
            if parent == &h.cpu && !cpu_group {
                continue;
            }
            let dir = parent.join(name);
            if parent == &h.cpu {
                group.cpu = Some((dir.clone(), parent.clone()));
            }
            std::fs::create_dir(&dir)?;
            group.dirs.push(dir.clone());
            write_limits(&dir, files)?;
            group.procs.push(c_path(&dir.join("cgroup.procs"))?);
        }
        // Where the engine's CPU time is counted, for watching it on its opponent's time. A
        // plain process (see `Confinement::plain_cpu`) is counted where `cpuacct` has a
        // hierarchy of its own, not where it shares the CPU one.
        let counted = match &h.cpuacct {
            Some(acct) if *acct == h.cpu => {
                group.counted_by_cpu_group = true;
                group.cpu.as_ref().map(|(dir, _)| dir.clone())
            }
            Some(acct) if h.freezer.is_some() => {
                let dir = acct.join(name);
                std::fs::create_dir(&dir)?;
                group.dirs.push(dir.clone());
                group.procs.push(c_path(&dir.join("cgroup.procs"))?);
                Some(dir)
            }
            _ => None,
        };
        if let Some(parent) = &h.freezer {
            let dir = parent.join(name);
            std::fs::create_dir(&dir)?;
            group.dirs.push(dir.clone());
            let state = dir.join("freezer.state");
            group.freezer = Some(Arc::new(Freezer::new(
                std::fs::OpenOptions::new().write(true).open(&state)?,
                [b"FROZEN", b"THAWED"],
                Some(parent.clone()),
                counted.as_deref().and_then(CpuMeter::open_v1),
            )));
            group.freezer_state = Some(c_path(&state)?);
            group.procs.push(c_path(&dir.join("cgroup.procs"))?);
        }
        if let Some(parent) = &h.cpuset {
            let dir = parent.join(name);
            std::fs::create_dir(&dir)?;
            group.dirs.push(dir.clone());
            // A cpuset takes no process before it has CPUs and memory nodes: the parent's
            // memory nodes, and the CPUs of the thread starting the engine.
            std::fs::write(
                dir.join("cpuset.mems"),
                std::fs::read_to_string(parent.join("cpuset.mems"))?.trim(),
            )?;
            group.cpuset = Some(dir.clone());
            group.pin_here()?;
            group.procs.push(c_path(&dir.join("cgroup.procs"))?);
        }
        Ok(group)
    }

    /// Moves the engine's processes out of their v1 CPU group into the one above it, where they
    /// are scheduled as plain processes (see `Confinement::plain_cpu`); the empty group is
    /// removed with the others. Nothing to do under v2, where one group holds every
    /// controller.
    pub fn leave_cpu_group(&mut self) {
        let Some((dir, parent)) = self.cpu.take() else {
            return;
        };
        // Out of the group that counted its CPU time, it can no longer be watched.
        if let (true, Some(freezer)) = (self.counted_by_cpu_group, &self.freezer) {
            freezer.insist();
        }
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            // A process that has just exited cannot be moved, nor needs to be.
            let _ = std::fs::write(parent.join("cgroup.procs"), pid);
        }
        if let Ok(path) = c_path(&dir.join("cgroup.procs")) {
            self.procs.retain(|p| *p != path);
        }
    }

    /// Holds the engine to the CPUs the calling thread may run on: its mask inside can only
    /// narrow them. Called when the group is made, and when a running engine is moved to the
    /// CPU of the thread that will play it.
    pub fn pin_here(&self) -> std::io::Result<()> {
        let Some(dir) = &self.cpuset else {
            return Ok(());
        };
        let cpus = super::sched::allowed_cpus()
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        std::fs::write(dir.join("cpuset.cpus"), cpus)
    }

    /// The engine's freezer, where the machine has one.
    pub fn freezer(&self) -> Option<&Arc<Freezer>> {
        self.freezer.as_ref()
    }

    /// The `freezer.state` file the keeper thaws before it ends the tree.
    pub fn freezer_state(&self) -> Option<CString> {
        self.freezer_state.clone()
    }

    /// The files to write `0` to (moving the writer into the group), for [`join`].
    pub fn procs_files(&self) -> Vec<CString> {
        self.procs.clone()
    }

    /// Whether the kernel killed a process of this group for exceeding its memory limit.
    pub fn ran_out_of_memory(&self) -> bool {
        // The same `oom_kill N` line, in v1's `memory.oom_control` and v2's `memory.events`.
        let file = match self.unified {
            true => "memory.events",
            false => "memory.oom_control",
        };
        std::fs::read_to_string(self.memory.join(file))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("oom_kill "))
                    .and_then(|n| n.trim().parse::<u64>().ok())
            })
            .is_some_and(|kills| kills > 0)
    }
}

impl Drop for EngineGroup {
    /// The engine is done: whatever is still in its groups (a process its killed keeper left
    /// behind) is killed at once, and the groups removed once empty, by a clean-up thread that
    /// tries for a while when they are not empty yet.
    fn drop(&mut self) {
        let mut left = std::mem::take(&mut self.dirs);
        if empty_and_remove(&mut left) {
            return;
        }
        super::cleanup::later("cgroup cleanup", move || {
            for _ in 0..100 {
                std::thread::sleep(std::time::Duration::from_millis(50));
                if empty_and_remove(&mut left) {
                    return;
                }
            }
        });
    }
}

/// Kills the members of the groups `dirs` and removes those that are empty; whether none is left.
fn empty_and_remove(dirs: &mut Vec<PathBuf>) -> bool {
    dirs.iter().for_each(|d| kill_members(d));
    dirs.retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
    dirs.is_empty()
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)
}

/// Kills every process in the group `dir`, thawed first when it is a freezer's (a frozen process
/// would wait for the thaw to die).
fn kill_members(dir: &Path) {
    let _ = std::fs::write(dir.join("freezer.state"), "THAWED");
    // v2 kills a whole group in one write, where the kernel has it.
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        // SAFETY: kill(2) of a process in a group arbiter made for an engine that is done.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Thaws the freezer whose `freezer.state` is given.
///
/// # Safety
/// Async-signal-safe (open/write/close only), for the keeper.
pub unsafe fn thaw_at(state: &CString) {
    let fd = libc::open(state.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd >= 0 {
        libc::write(fd, b"THAWED".as_ptr().cast(), 6);
        libc::close(fd);
    }
}

/// Moves the calling process into the groups whose `cgroup.procs` files are given.
///
/// # Safety
/// Async-signal-safe (open/write/close only), for use between `fork` and `exec`.
pub unsafe fn join(procs: &[CString]) -> std::io::Result<()> {
    for file in procs {
        let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, b"0".as_ptr().cast(), 1);
        libc::close(fd);
        if written != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Writes a v1 group's limit files; a name ending in `?` is a file some kernels lack, skipped
/// where it cannot be written.
fn write_limits(
    dir: &std::path::Path,
    files: impl IntoIterator<Item = (&'static str, String)>,
) -> std::io::Result<()> {
    for (file, value) in files {
        let (file, optional) = match file.strip_suffix('?') {
            Some(f) => (f, true),
            None => (file, false),
        };
        match std::fs::write(dir.join(file), &value) {
            Err(e) if !optional => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_group_is_found_under_the_controllers_mount() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                         35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                         36 31 0:33 /outer /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
        let membership = "8:pids:/outer/job\n4:memory:/api/42\n0::/\n";
        assert_eq!(
            own_group(mountinfo, membership, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/api/42"))
        );
        assert_eq!(
            own_group(mountinfo, membership, "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/job"))
        );
        assert_eq!(own_group(mountinfo, membership, "cpu"), None);
    }
}
