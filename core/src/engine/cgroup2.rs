//! The unified hierarchy (cgroup v2), where every current distribution keeps its control groups:
//! one folder per engine holds its limits (`memory.max`, `pids.max`, `cpu.max`, `cpuset.cpus`)
//! and its freezer (`cgroup.freeze`), for whoever may make groups — root, or a user to whom the
//! system delegates a group (`systemd-run --user --scope -p Delegate=yes`).
//!
//! The kernel gives a group's children controllers only while the group holds no process of
//! its own, and a group that holds processes and enables even one controller (`pids`, `cpu`)
//! turns its children into groups no process may join (EOPNOTSUPP). So controllers are enabled
//! only in a group emptied first:
//! - arbiter alone in a group it may write (a delegated scope started for it) steps into a leaf
//!   of that group, `arbiter-leaf`, and the group holds its engines;
//! - root elsewhere (a login shell's session, a service) keeps its engines in the top-level
//!   group `arbiter`, beside the system's slices, and leaves the processes around it alone;
//! - a user whose delegated group holds other processes too (a shell in the scope) moves them
//!   all into the leaf: the group is theirs, and the delegation asks for just that.
//!
//! What could not be enabled is said in the banner, never assumed.

use std::path::{Path, PathBuf};

/// What the unified hierarchy gives arbiter here.
#[derive(Debug)]
pub struct Unified {
    /// Where the engines' groups are made.
    pub parent: PathBuf,
    pub memory: bool,
    pub pids: bool,
    pub cpu: bool,
    pub cpuset: bool,
}

/// The leaf that holds the processes of a group arbiter keeps its engines in.
const LEAF: &str = "arbiter-leaf";
/// The controllers arbiter's limits use.
const WANTED: [&str; 4] = ["memory", "pids", "cpu", "cpuset"];

/// The unified hierarchy arbiter may make groups in, with the controllers it could enable.
pub fn find(sweep: impl Fn(&Path), writable: impl Fn(&Path) -> bool) -> Option<Unified> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let (mount, own) = own_group(&mountinfo, &membership)?;
    let parent = choose(&mount, &own, &writable)?;
    sweep(&parent);
    let on = std::fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap_or_default();
    let has = |c: &str| on.split_whitespace().any(|w| w == c);
    Some(Unified {
        memory: has("memory"),
        pids: has("pids"),
        cpu: has("cpu"),
        cpuset: has("cpuset"),
        parent,
    })
}

/// The group to keep the engines' groups in, emptied of processes and with the controllers it
/// is offered enabled for its children; `None` where arbiter may make no group.
fn choose(mount: &Path, own: &Path, writable: &impl Fn(&Path) -> bool) -> Option<PathBuf> {
    // An arbiter started from a leaf an earlier one made: the group above is already freed.
    if own.file_name().is_some_and(|n| n == LEAF) {
        let group = own.parent()?;
        if writable(group) {
            enable(group);
            return Some(group.to_path_buf());
        }
    }
    let mine = writable(own);
    if mine && alone_in(own) && empty_into_leaf(own) {
        return Some(own.to_path_buf());
    }
    // The true top of the hierarchy (it alone has no `cgroup.type`) may hold processes and
    // still give its children controllers.
    let top = mount.join("arbiter");
    let true_top = !mount.join("cgroup.type").exists();
    if true_top && (top.is_dir() || std::fs::create_dir(&top).is_ok()) && writable(&top) {
        enable(&top);
        return Some(top);
    }
    if mine && empty_into_leaf(own) {
        return Some(own.to_path_buf());
    }
    None
}

/// Moves every process of `group` into its leaf, then enables the controllers for its
/// children; whether the group was emptied.
fn empty_into_leaf(group: &Path) -> bool {
    let leaf = group.join(LEAF);
    if !leaf.is_dir() && std::fs::create_dir(&leaf).is_err() {
        return false;
    }
    // A process forked while the others move lands in the group: a few passes catch it.
    for _ in 0..10 {
        let procs = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
        if procs.trim().is_empty() {
            enable(group);
            return true;
        }
        for pid in procs.split_whitespace() {
            // One that has just exited cannot be moved, nor needs to be.
            let _ = std::fs::write(leaf.join("cgroup.procs"), pid);
        }
    }
    false
}

/// Enables for the children of `group` (which holds no process) each wanted controller it is
/// offered; what could not be is read back from `cgroup.subtree_control` by the caller.
fn enable(group: &Path) {
    let offered = std::fs::read_to_string(group.join("cgroup.controllers")).unwrap_or_default();
    let control = group.join("cgroup.subtree_control");
    for c in WANTED {
        if offered.split_whitespace().any(|o| o == c) {
            let _ = std::fs::write(&control, format!("+{c}"));
        }
    }
}

/// Whether arbiter's process is the only one in `group`.
fn alone_in(group: &Path) -> bool {
    let procs = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
    let me = std::process::id().to_string();
    procs.lines().all(|p| p.trim() == me)
}

/// The unified hierarchy's mount point, and the folder of this process's own group in it.
fn own_group(mountinfo: &str, membership: &str) -> Option<(PathBuf, PathBuf)> {
    let path = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?;
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split(' ').next()? != "cgroup2" {
            return None;
        }
        let fields: Vec<&str> = left.split(' ').collect();
        let (root, mountpoint) = (fields.get(3)?, fields.get(4)?);
        let inside = path.strip_prefix(root.trim_end_matches('/'))?;
        let mount = Path::new(mountpoint);
        Some((
            mount.to_path_buf(),
            mount.join(inside.trim_start_matches('/')),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_group_is_found_under_the_unified_mount() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                         40 31 0:40 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let membership = "4:memory:/api/42\n0::/user.slice/user-1000.slice/run.scope\n";
        assert_eq!(
            own_group(mountinfo, membership),
            Some((
                PathBuf::from("/sys/fs/cgroup/unified"),
                PathBuf::from("/sys/fs/cgroup/unified/user.slice/user-1000.slice/run.scope")
            ))
        );
        assert_eq!(own_group(mountinfo, "4:memory:/api/42\n"), None);
    }
}
