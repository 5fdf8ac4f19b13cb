//! The harness's own CPU that the kernel counts with the engines': measured only when the peer
//! bench asks (`ARBITER_HARNESS_CPU`), so that arbiter's cost is compared whole.
//!
//! The keepers add their own time as they exit (`keeper::spent`). The sandbox's processes
//! (bubblewrap, between the keeper and the engine) do their work while the engine starts:
//! namespaces, mounts, then they wait. Their time is read once the engine has answered its
//! handshake, from `/proc/<pid>/schedstat` (nanoseconds; `/proc/<pid>/stat` counts in clock
//! ticks of 10 ms, longer than a whole bubblewrap start).

use super::procfs::{children, command_name};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

static MEASURING: AtomicBool = AtomicBool::new(false);
static SANDBOX_NS: AtomicU64 = AtomicU64::new(0);

/// From now on, each engine start measures what its sandbox cost.
pub fn measure_from_now() {
    MEASURING.store(true, Ordering::Relaxed);
}

/// The CPU time the sandboxes of the engines started so far used to start them.
pub fn sandbox_spent() -> Duration {
    Duration::from_nanos(SANDBOX_NS.load(Ordering::Relaxed))
}

/// Adds the CPU time of the sandbox processes under `keeper` (every `bwrap` down to the engine)
/// to `sandbox_spent`, when measuring.
pub fn count_sandbox(keeper: u32) {
    if !MEASURING.load(Ordering::Relaxed) {
        return;
    }
    let mut ns = 0;
    let mut below = children(keeper, keeper);
    // Bounded: the sandbox is two processes deep; the engine's own tree is not walked.
    for _ in 0..4 {
        let mut next = Vec::new();
        for pid in below {
            if command_name(pid).as_deref() == Some("bwrap") {
                ns += runtime_ns(pid).unwrap_or(0);
                next.extend(children(pid, pid));
            }
        }
        below = next;
    }
    SANDBOX_NS.fetch_add(ns, Ordering::Relaxed);
}

/// Time on the CPU of a single-threaded process, in nanoseconds.
fn runtime_ns(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_runtime_and_name_are_read_from_proc() {
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .unwrap();
        let me = std::process::id();
        // SAFETY: gettid has no arguments and cannot fail.
        let thread = unsafe { libc::gettid() } as u32;
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(300));
        assert!(children(me, thread).contains(&pid));
        assert_eq!(command_name(pid).as_deref(), Some("sh"));
        // The loop costs milliseconds; schedstat counts them in nanoseconds.
        assert!(runtime_ns(pid).unwrap() > 100_000, "{:?}", runtime_ns(pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
