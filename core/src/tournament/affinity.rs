//! CPU pinning for `--affinity`: which CPUs the run may use, and pinning the calling thread.

use crate::engine::procfs::{children, process_ticks, processes, threads, ticks_per_second};
use crate::engine::sched::MAX_TREE;
pub use crate::engine::sched::{
    allowed_cpus, bring_tree_here, pin_current_thread, unpin_current_thread,
};
use serde::{Deserialize, Serialize};

/// Whether each concurrent game (its referee thread and both engines) is pinned to a CPU, and
/// to which: the games take the CPUs in turn. Written to run.json as `"auto"`, `false`, `true`
/// (the CPUs arbiter may run on) or a list of CPU numbers, so runs saved before lists existed
/// read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Affinity {
    Pinned(bool),
    /// These CPUs, as fastchess's `-use-affinity 3,5,7-11` gives them.
    Cpus(Vec<usize>),
    /// Pinned where it costs nothing (see `claim_free_cpus`), else not (`--affinity auto`).
    Auto(AutoWord),
}

/// The word `auto` in run.json.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AutoWord {
    Auto,
}

/// `auto`: a game pinned to a CPU nobody else uses costs the referee a quarter to a half of the
/// CPU of one left to the scheduler, and `auto` pins only where that takes nothing from anyone.
impl Default for Affinity {
    fn default() -> Affinity {
        Affinity::Auto(AutoWord::Auto)
    }
}

impl Affinity {
    /// A list of CPUs as `taskset -c` and fastchess write it: `3,5,7-11`.
    /// `off` and `auto` are the words of the other two choices.
    pub fn parse(list: &str) -> Result<Affinity, String> {
        match list.trim() {
            "off" | "false" => return Ok(Affinity::Pinned(false)),
            "auto" => return Ok(Affinity::Auto(AutoWord::Auto)),
            _ => {}
        }
        let bad = || format!("'{list}': off, auto, or a list of CPU numbers such as 0,2,4-7");
        let mut cpus = Vec::new();
        for part in list.split(',').map(str::trim) {
            let number = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
            match part.split_once('-') {
                Some((from, to)) => {
                    let (from, to) = (number(from)?, number(to)?);
                    if from > to {
                        return Err(bad());
                    }
                    cpus.extend(from..=to);
                }
                None => cpus.push(number(part)?),
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Affinity::Cpus(cpus))
    }

    /// Whether the games are pinned whatever the machine: `auto` decides when the run starts.
    pub fn is_on(&self) -> bool {
        matches!(self, Affinity::Pinned(true) | Affinity::Cpus(_))
    }

    pub fn is_auto(&self) -> bool {
        matches!(self, Affinity::Auto(_))
    }

    /// The CPUs the games take in turn; none when nothing is pinned.
    pub fn cpus(&self) -> Vec<usize> {
        match self {
            Affinity::Pinned(false) | Affinity::Auto(_) => Vec::new(),
            Affinity::Pinned(true) => allowed_cpus(),
            Affinity::Cpus(list) => list.clone(),
        }
    }

    /// A list naming only CPUs this process may run on (a run started under `taskset`, or in
    /// a cluster job's share of a machine, may not use the others).
    pub fn check(&self) -> Result<(), String> {
        let Affinity::Cpus(list) = self else {
            return Ok(());
        };
        if list.is_empty() {
            // A TOML `affinity = []`: pinned to nothing is not pinned, and would not say so.
            return Err("an empty list of CPUs: give some, or true for all".into());
        }
        let allowed = allowed_cpus();
        match list.iter().find(|cpu| !allowed.contains(cpu)) {
            Some(cpu) => Err(format!(
                "CPU {cpu} is not one arbiter may run on here (it may use {})",
                allowed
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            None => Ok(()),
        }
    }
}

/// CPUs a run's games hold under `--affinity auto`, each by a lock every arbiter process on the
/// machine sees: runs started side by side take different CPUs, and one that finds too few
/// free plays unpinned. The locks end with the process.
#[derive(Debug)]
pub struct ClaimedCpus {
    pub cpus: Vec<usize>,
    _locks: Vec<std::fs::File>,
}

/// Under `auto` a run is pinned only where that takes nothing from anyone: each of its `games`
/// gets a CPU no other arbiter run holds, at least one more CPU it may use, held by no run, is
/// left to everything else (four tasks of a split run started at once on two CPUs: one is
/// pinned, not two), and no engine searches with more than one CPU (`one_cpu_each`). CPUs are taken
/// from the last, as CPU 0 usually serves the most interrupts.
pub fn claim_free_cpus(games: usize, one_cpu_each: bool) -> Result<ClaimedCpus, String> {
    let allowed = allowed_cpus();
    if !one_cpu_each {
        return Err("an engine searches with several threads".into());
    }
    if games == 0 || games >= allowed.len() {
        return Err(format!(
            "{games} games at once leave no CPU of the {} spare",
            allowed.len()
        ));
    }
    let dir = cpu_lock_dir()?;
    let mut claimed = ClaimedCpus {
        cpus: Vec::new(),
        _locks: Vec::new(),
    };
    let mut refused = Vec::new();
    let pinned_elsewhere = pinned_by_others();
    // One CPU more than the games is locked, to be sure one no run holds is left over; its
    // lock is let go at once.
    for &cpu in allowed.iter().rev() {
        if claimed.cpus.len() == games + 1 {
            break;
        }
        // Another program's thread pinned there (another arbiter run whose locks are in a
        // folder this one does not see, a `taskset` job): its CPU is not free, whatever the
        // locks say.
        if let Some((pid, name)) = pinned_elsewhere.get(&cpu) {
            refused.push(format!(
                "CPU {cpu} runs a thread of process {pid} ({name}) pinned to it"
            ));
            continue;
        }
        match lock_cpu(&dir, cpu) {
            Ok(lock) => {
                claimed.cpus.push(cpu);
                claimed._locks.push(lock);
            }
            Err(why) => refused.push(why),
        }
    }
    if claimed.cpus.len() <= games {
        return Err(refused.join("; "));
    }
    claimed.cpus.truncate(games);
    claimed._locks.truncate(games);
    Ok(claimed)
}

/// CPUs to which a thread of another process is pinned (allowed on that CPU alone), each with
/// one such process and its name. Kernel threads (one per CPU, by design) and this process's
/// own threads do not count.
fn pinned_by_others() -> std::collections::HashMap<usize, (u32, String)> {
    let me = std::process::id();
    let mut pinned = std::collections::HashMap::new();
    for pid in processes() {
        if pid == me {
            continue;
        }
        for tid in threads(pid) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status"))
                .unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::trim)
            };
            let kernel = match field("Kthread:") {
                Some(k) => k == "1",
                None => pid == 2 || field("PPid:") == Some("2"),
            };
            if kernel {
                break;
            }
            let only = field("Cpus_allowed_list:").and_then(|l| l.parse::<usize>().ok());
            if let Some(cpu) = only {
                let name = field("Name:").unwrap_or("?").to_string();
                pinned.entry(cpu).or_insert((pid, name));
            }
        }
    }
    pinned
}

/// The locks of the CPUs a run pinned by `--affinity` plays on (the first `games` of them),
/// those no other run holds: an `auto` run started beside it then keeps off them.
pub fn hold_listed(affinity: &Affinity, games: usize) -> Vec<std::fs::File> {
    let mut cpus = affinity.cpus();
    cpus.truncate(games);
    // An unpinned run leaves no lock folder behind.
    if cpus.is_empty() {
        return Vec::new();
    }
    let Ok(dir) = cpu_lock_dir() else {
        return Vec::new();
    };
    cpus.into_iter()
        .filter_map(|cpu| lock_cpu(&dir, cpu).ok())
        .collect()
}

/// The folder of the CPU locks, shared by every user of the machine (sticky, as /tmp is). It is
/// `/tmp/arbiter-cpus` whatever `TMPDIR` says: cluster jobs sharing a machine often get a
/// temporary folder each, and runs that did not see each other's locks would pin their games to
/// the same CPU. `ARBITER_CPU_LOCKS` names another folder (a machine whose `/tmp` is not shared).
///
/// Anyone may make `/tmp/arbiter-cpus` first, so what is found there is checked before it is
/// used: a link, something that is no folder, or a folder another user (not root) owns or may
/// empty (not sticky) is refused, with a reason that names it, and the run is not pinned.
pub(crate) fn cpu_lock_dir() -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let dir = match std::env::var_os("ARBITER_CPU_LOCKS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::PathBuf::from("/tmp/arbiter-cpus"),
    };
    if std::fs::DirBuilder::new().mode(0o755).create(&dir).is_ok() {
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777));
    }
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| format!("the CPU-lock folder {}: {e}", dir.display()))?;
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    let why = if meta.file_type().is_symlink() {
        Some("is a link")
    } else if !meta.is_dir() {
        Some("is no folder")
    } else if meta.uid() != 0 && meta.uid() != me {
        Some("belongs to another user")
    } else if meta.mode() & 0o002 != 0 && meta.mode() & 0o1000 == 0 {
        Some("lets anyone remove the locks (not sticky)")
    } else {
        None
    };
    match why {
        Some(why) => Err(format!(
            "the CPU-lock folder {} {why}: refused (remove it, or name another with \
                ARBITER_CPU_LOCKS)",
            dir.display()
        )),
        None => Ok(dir),
    }
}

/// The lock of one CPU, or why it cannot be had. Another user's lock file is opened to read,
/// which is all `flock` needs; a link in its place is never followed (root would write where it
/// points), and what is not a plain file is refused.
fn lock_cpu(dir: &std::path::Path, cpu: usize) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(format!("cpu{cpu}"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .or_else(|_| {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&path)
        })
        .map_err(|e| format!("CPU {cpu}'s lock {}: {e}", path.display()))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!(
            "CPU {cpu}'s lock {} is no plain file: refused",
            path.display()
        ));
    }
    file.try_lock()
        .map_err(|_| format!("CPU {cpu} is held by another run ({})", path.display()))?;
    Ok(file)
}

/// Time on a CPU and time waiting for one while runnable, in nanoseconds (the kernel's
/// `schedstat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub ran: u64,
    pub waited: u64,
    /// The processes' own CPU time, threads that ended included (an engine's search thread
    /// started for each move), tick-counted as `/proc/stat` counts a CPU's.
    pub spent: u64,
}

impl CpuTime {
    fn read(path: &str) -> CpuTime {
        let stat = std::fs::read_to_string(path).unwrap_or_default();
        let mut fields = stat
            .split_whitespace()
            .map(|f| f.parse::<u64>().unwrap_or(0));
        CpuTime {
            ran: fields.next().unwrap_or(0),
            waited: fields.next().unwrap_or(0),
            spent: 0,
        }
    }

    /// What was added since `before` (a process gone meanwhile reads as nothing added).
    pub fn since(self, before: CpuTime) -> CpuTime {
        CpuTime {
            ran: self.ran.saturating_sub(before.ran),
            waited: self.waited.saturating_sub(before.waited),
            spent: self.spent.saturating_sub(before.spent),
        }
    }

    pub fn add(self, other: CpuTime) -> CpuTime {
        CpuTime {
            ran: self.ran + other.ran,
            waited: self.waited + other.waited,
            spent: self.spent + other.spent,
        }
    }
}

/// The CPU time of every thread of a process tree, summed: a pinned engine that waits while
/// its game's CPU runs someone else's work.
pub fn tree_cpu_time(root: u32) -> CpuTime {
    let mut sum = CpuTime::default();
    let mut pending = vec![root];
    let mut seen = 0;
    while let Some(pid) = pending.pop() {
        seen += 1;
        if seen > MAX_TREE {
            break;
        }
        let own = process_ticks(pid).map_or(0, |(own, _)| own);
        sum.spent += own * (1_000_000_000 / ticks_per_second());
        for tid in threads(pid) {
            sum = sum.add(CpuTime::read(&format!("/proc/{pid}/task/{tid}/schedstat")));
            pending.extend(children(pid, tid));
        }
    }
    sum
}

/// How long a CPU has run anything since boot, in nanoseconds (the kernel's tick counts in
/// `/proc/stat`: user, nice, system, irq, softirq, and steal, time a hypervisor gave away).
pub fn cpu_busy_ns(cpu: usize) -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let label = format!("cpu{cpu} ");
    let line = stat.lines().find(|l| l.starts_with(&label))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let busy: u64 = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|&i| ticks.get(i))
        .sum();
    Some(busy * (1_000_000_000 / ticks_per_second()))
}

/// How long the threads of this process allowed on `cpu` alone have run, in nanoseconds.
pub fn own_threads_ran_on(cpu: usize) -> u64 {
    let me = std::process::id();
    let only = cpu.to_string();
    threads(me)
        .into_iter()
        .filter(|tid| {
            std::fs::read_to_string(format!("/proc/{me}/task/{tid}/status"))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .is_some_and(|l| l.trim() == only)
        })
        .map(|tid| CpuTime::read(&format!("/proc/{me}/task/{tid}/schedstat")).ran)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_taskset_and_fastchess_write_them() {
        assert_eq!(
            Affinity::parse("3,5,7-9").unwrap(),
            Affinity::Cpus(vec![3, 5, 7, 8, 9])
        );
        assert_eq!(
            Affinity::parse(" 1 , 0,1").unwrap(),
            Affinity::Cpus(vec![0, 1])
        );
        for bad in ["", "a", "3-1", "1,", "-2", "1-2-3"] {
            assert!(Affinity::parse(bad).is_err(), "{bad}");
        }
        let saved = |a: &Affinity| serde_json::to_string(a).unwrap();
        assert_eq!(saved(&Affinity::Pinned(true)), "true");
        assert_eq!(saved(&Affinity::Cpus(vec![0, 2])), "[0,2]");
        for text in ["false", "true", "[1,3]"] {
            let read: Affinity = serde_json::from_str(text).unwrap();
            assert_eq!(saved(&read), text);
        }
        let allowed = allowed_cpus();
        assert!(Affinity::Cpus(allowed.clone()).check().is_ok());
        let beyond = Affinity::Cpus(vec![allowed.last().unwrap() + 1]);
        assert!(beyond.check().unwrap_err().contains("may use"));
        assert!(Affinity::Cpus(Vec::new()).check().is_err());
    }

    #[test]
    fn a_pinned_thread_runs_only_on_its_cpu() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        let seen = std::thread::spawn(move || {
            assert!(pin_current_thread(last));
            allowed_cpus()
        })
        .join()
        .unwrap();
        assert_eq!(seen, vec![last]);
        assert_eq!(allowed_cpus(), cpus, "other threads keep their mask");
    }

    /// The mask of every thread of a process, from /proc.
    fn cpus_of(pid: u32) -> Vec<String> {
        threads(pid)
            .iter()
            .map(|tid| {
                let status =
                    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .unwrap()
                    .trim()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_running_tree_is_brought_onto_the_callers_cpu() {
        let cpus = allowed_cpus();
        let last = *cpus.last().unwrap();
        // A shell whose child sleeps: two processes, started on every CPU.
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        let root = shell.id();
        let started = std::time::Instant::now();
        let child = loop {
            let kids = children(root, root);
            if let Some(&kid) = kids.first() {
                break kid;
            }
            assert!(started.elapsed().as_secs() < 10, "the shell forked nothing");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let moved = std::thread::spawn(move || {
            assert!(pin_current_thread(last));
            bring_tree_here(root)
        })
        .join()
        .unwrap();
        assert_eq!(moved, 2);
        for pid in [root, child] {
            assert_eq!(cpus_of(pid), vec![last.to_string()]);
        }
        shell.kill().unwrap();
        shell.wait().unwrap();
        // SAFETY: signalling the sleep this test started.
        unsafe { libc::kill(child as i32, libc::SIGKILL) };
    }
}
