//! What an engine leaves behind when its keeper is killed outright, found without a control
//! group (a user who may make none, with `sandbox=off`).
//!
//! The keeper holds the engine's tree, but an engine running as the same user can kill it with
//! SIGKILL; a child the engine had moved to a session of its own then lived on under init. So
//! arbiter is a child subreaper itself: such orphans become its own children, and once a keeper
//! is seen to die by a signal, every child of arbiter that is not a keeper is killed and reaped.
//! arbiter's other children (the sandbox's probes) are started under [`helper`], which a sweep
//! waits for, so that none is taken for an orphan.

use std::collections::HashSet;
use std::sync::{Mutex, Once, RwLock};

static HELPERS: RwLock<()> = RwLock::new(());
static KEEPERS: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

/// Makes arbiter the parent of whatever an engine's tree leaves behind; once per process.
pub fn adopt() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl(2) with an integer argument; no memory is touched.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    });
}

/// Runs `start`, which starts a child of arbiter, with no sweep at the same time.
pub fn helper<T>(start: impl FnOnce() -> T) -> T {
    let _starting = HELPERS.read().unwrap_or_else(|e| e.into_inner());
    start()
}

/// Starts a keeper with `spawn` (which returns its pid) and counts it as one, with no sweep at
/// the same time.
pub fn keeper<T>(spawn: impl FnOnce() -> std::io::Result<(T, Option<u32>)>) -> std::io::Result<T> {
    helper(|| {
        let (child, pid) = spawn()?;
        if let Some(pid) = pid {
            keepers().get_or_insert_with(HashSet::new).insert(pid);
        }
        Ok(child)
    })
}

/// The keeper `pid` has been reaped.
pub fn keeper_gone(pid: u32) {
    if let Some(set) = keepers().as_mut() {
        set.remove(&pid);
    }
}

fn keepers() -> std::sync::MutexGuard<'static, Option<HashSet<u32>>> {
    KEEPERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills and reaps every child of arbiter that is not a live keeper: what a killed keeper's
/// tree left behind.
pub fn sweep() {
    let _alone = HELPERS.write().unwrap_or_else(|e| e.into_inner());
    let me = std::process::id();
    let kept = keepers().clone().unwrap_or_default();
    for pid in super::procfs::processes() {
        if pid == me || kept.contains(&pid) || parent(pid) != Some(me) {
            continue;
        }
        // SAFETY: kill(2) and waitpid(2) on a child of this process that no one else waits
        // for (keepers and helpers excluded above).
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
            libc::waitpid(pid as i32, std::ptr::null_mut(), 0);
        }
    }
}

/// The parent of `pid`, from `/proc/<pid>/stat` (fields after the command name's `)`).
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_its_parent() {
        // SAFETY: getppid(2) has no preconditions.
        let ppid = unsafe { libc::getppid() } as u32;
        assert_eq!(parent(std::process::id()), Some(ppid));
    }
}
