//! The unified hierarchy (cgroup v2), where every current distribution keeps its control groups:
//! one folder per engine holds its limits (`memory.max`, `pids.max`, `cpu.max`, `cpuset.cpus`)
//! and its freezer (`cgroup.freeze`), for whoever may make groups in arbiter's own group — root,
//! or a user to whom the system delegates it (`systemd-run --user --scope -p Delegate=yes`).
//!
//! A controller holds only where the group above has it enabled for its children, which the
//! kernel allows only in a group without processes of its own: when arbiter is alone in its
//! delegated group it steps into a leaf of its own (`arbiter-<pid>-referee`) to free the group
//! for its engines' controllers. What could not be enabled is said in the banner, never assumed.

use std::path::{Path, PathBuf};

/// What the unified hierarchy gives arbiter here.
#[derive(Debug)]
pub struct Unified {
    /// arbiter's own group, where the engines' groups are made.
    pub parent: PathBuf,
    pub memory: bool,
    pub pids: bool,
    pub cpu: bool,
    pub cpuset: bool,
}

/// The unified hierarchy arbiter may make groups in, with the controllers it could enable.
pub fn find(sweep: impl Fn(&Path), writable: impl Fn(&Path) -> bool) -> Option<Unified> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let parent = own_group(&mountinfo, &membership)?;
    sweep(&parent);
    if !writable(&parent) {
        return None;
    }
    let wanted = ["memory", "pids", "cpu", "cpuset"];
    if !enable(&parent, &wanted) && alone_in(&parent) {
        let leaf = parent.join(format!("arbiter-{}-referee", std::process::id()));
        let moved = std::fs::create_dir(&leaf).is_ok()
            && std::fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()).is_ok();
        if moved {
            enable(&parent, &wanted);
        } else {
            let _ = std::fs::remove_dir(&leaf);
        }
    }
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

/// Enables for the children of `group` each controller it has; whether all of them are.
fn enable(group: &Path, wanted: &[&str]) -> bool {
    let offered = std::fs::read_to_string(group.join("cgroup.controllers")).unwrap_or_default();
    let control = group.join("cgroup.subtree_control");
    let mut all = true;
    for c in wanted {
        if offered.split_whitespace().any(|o| o == *c) {
            all &= std::fs::write(&control, format!("+{c}")).is_ok();
        }
    }
    all
}

/// Whether arbiter's process is the only one in `group`.
fn alone_in(group: &Path) -> bool {
    let procs = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
    let me = std::process::id().to_string();
    procs.lines().all(|p| p.trim() == me)
}

/// The folder of this process's own group in the unified hierarchy.
fn own_group(mountinfo: &str, membership: &str) -> Option<PathBuf> {
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
        Some(Path::new(mountpoint).join(inside.trim_start_matches('/')))
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
            Some(PathBuf::from(
                "/sys/fs/cgroup/unified/user.slice/user-1000.slice/run.scope"
            ))
        );
        assert_eq!(own_group(mountinfo, "4:memory:/api/42\n"), None);
    }
}
