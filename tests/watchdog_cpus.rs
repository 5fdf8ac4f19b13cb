//! The read watchdog, one thread per process, must not keep the CPU mask of the thread that
//! happened to start it. Alone in its own test binary so that this test starts the watchdog.

use arbiter::engine::watchdog::{read_until, Read};
use arbiter::tournament::{allowed_cpus, pin_current_thread};
use std::time::{Duration, Instant};

fn allowed_list(status: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Cause guarded: the first pinned referee thread to read started the watchdog, which kept that
/// game's one CPU for the life of the process; `auto` in the next run (the peer bench's second
/// run) then saw a foreign thread pinned there and played unpinned.
#[test]
fn the_watchdog_started_by_a_pinned_thread_runs_on_every_cpu_of_the_process() {
    let cpus = allowed_cpus();
    assert!(!cpus.is_empty(), "no CPU allowed to this process");
    let last = *cpus.last().unwrap();
    std::thread::spawn(move || {
        assert!(pin_current_thread(last), "could not pin to CPU {last}");
        let (reader, _writer) = std::io::pipe().expect("pipe");
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 8];
        let until = Instant::now() + Duration::from_millis(50);
        assert_eq!(
            read_until(reader.as_raw_fd(), &mut buf, until),
            Read::TimedOut
        );
    })
    .join()
    .expect("the pinned reader");

    let process = allowed_list(&std::fs::read_to_string("/proc/self/status").unwrap());
    let watchdog = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| t.ok())
        .find(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim() == "read watchdog")
        })
        .expect("no read watchdog thread");
    let mask = allowed_list(&std::fs::read_to_string(watchdog.path().join("status")).unwrap());
    assert_eq!(
        mask, process,
        "the watchdog kept the CPU of the thread that started it (CPU {last})"
    );
}
