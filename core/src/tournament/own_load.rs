//! What arbiter's own runs that have just ended still add to the load average.
//!
//! The 1-minute load average decays for minutes after the work that raised it has ended: a run
//! with every CPU in use leaves it above the CPU count for about a minute, and the next run (a
//! script's next match, a bisect's next step) took the machine for busy with other work, its
//! engines run unwatched as plain processes. So each run notes when it ended, how long it ran
//! and how many CPUs' worth of work it kept running, and a run judging the machine's load takes
//! out what those notes still account for, decayed as the kernel decays the average. A note is
//! trusted only from the same user (or root): the notes' folder is the CPU locks', which every
//! user shares, and a note from someone else could hide their real load.

use std::path::Path;

/// The load average's time constant: the kernel's 1-minute average.
const AVERAGE_SECS: f64 = 60.0;

/// A note older than this accounts for under 1% of what its run added; it is removed.
const FORGOTTEN_SECS: f64 = 300.0;

/// Seconds since boot: the same clock for every process, as the load average's.
fn uptime() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// A run's start, for its note.
pub fn started() -> Option<f64> {
    uptime()
}

/// Notes in `dir` that a run that started at `started` (seconds since boot) and kept `busy`
/// CPUs' worth of work running has ended now.
pub fn note_ended(dir: &Path, started: f64, busy: f64) {
    let Some(now) = uptime() else {
        return;
    };
    let path = dir.join(format!(
        "ended-{}-{}",
        std::process::id(),
        (now * 1e3) as u64
    ));
    // A new file, never one planted under the name (the folder is every user's).
    if let Ok(mut file) = crate::output::create_new(&path, 0o644) {
        use std::io::Write;
        let _ = writeln!(file, "{now:.3} {:.3} {busy:.3}", now - started);
    }
}

/// What the runs noted in `dir` still add to the load average now; notes past use are removed.
pub fn echo(dir: &Path) -> f64 {
    use std::os::unix::fs::MetadataExt;
    let Some(now) = uptime() else {
        return 0.0;
    };
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0.0;
    };
    let mut sum = 0.0;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("ended-") {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_file() || (meta.uid() != me && meta.uid() != 0) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        match left_by(&text, now) {
            Some(left) => sum += left,
            None if meta.uid() == me => {
                let _ = std::fs::remove_file(entry.path());
            }
            None => {}
        }
    }
    sum
}

/// What the run of one note (`ended lasted busy`) still adds at `now`: its work raised the
/// average towards `busy` while it lasted and has decayed since; `None` for a note past use or
/// unreadable.
fn left_by(note: &str, now: f64) -> Option<f64> {
    let mut fields = note.split_whitespace().map(str::parse::<f64>);
    let (ended, lasted, busy) = (
        fields.next()?.ok()?,
        fields.next()?.ok()?,
        fields.next()?.ok()?,
    );
    let since = now - ended;
    if !(0.0..FORGOTTEN_SECS).contains(&since) || lasted < 0.0 || !(0.0..=4096.0).contains(&busy) {
        return None;
    }
    let raised = busy * (1.0 - (-lasted / AVERAGE_SECS).exp());
    Some(raised * (-since / AVERAGE_SECS).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_kept_two_cpus_busy_for_minutes_adds_two_and_decays_by_the_minute() {
        let long = left_by("1000.0 600.0 2.0", 1000.0).unwrap();
        assert!((long - 2.0).abs() < 0.01, "{long}");
        let minute_later = left_by("1000.0 600.0 2.0", 1060.0).unwrap();
        assert!((minute_later - 2.0 / std::f64::consts::E).abs() < 0.01);
        // A short run raised the average only part of the way.
        let short = left_by("1000.0 30.0 2.0", 1000.0).unwrap();
        assert!((short - 2.0 * (1.0 - (-0.5f64).exp())).abs() < 1e-9);
        assert_eq!(left_by("1000.0 600.0 2.0", 1400.0), None);
        assert_eq!(left_by("1000.0 600.0 2.0", 999.0), None);
        assert_eq!(left_by("1000.0 600.0", 1000.0), None);
        assert_eq!(left_by("garbage", 1000.0), None);
    }

    #[test]
    fn notes_are_read_back_and_kept_while_they_count() {
        let dir = std::env::temp_dir().join(format!("arbiter-own-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let now = uptime().unwrap();
        note_ended(&dir, now - 600.0, 2.0);
        std::fs::write(dir.join("ended-1-1"), format!("{:.3} 60 2\n", now - 1000.0)).unwrap();
        std::fs::write(dir.join("cpu0"), "").unwrap();
        let echo = echo(&dir);
        assert!(echo > 1.9 && echo <= 2.0, "{echo}");
        // The stale note is gone, the fresh one and the lock left alone.
        assert!(!dir.join("ended-1-1").exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
