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

/// The environment variable naming the file where an arbiter run under the bench writes its
/// own CPU time as `getrusage` gives it (microseconds, where `/proc` counts clock ticks), and
/// the CPU time of its own processes that the kernel counts with its children's: the keepers,
/// what the start-up check ran and ended, and the sandboxes' start (four numbers on one line).
pub const HARNESS_CPU_FILE: &str = "ARBITER_HARNESS_CPU";

/// Under the peer bench, engine starts measure their sandbox's cost from the start.
pub fn measure_if_asked() {
    if std::env::var_os(HARNESS_CPU_FILE).is_some() {
        measure_from_now();
    }
}

/// This process's own CPU time, every thread, as `getrusage` gives it.
pub fn own_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given and nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

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
