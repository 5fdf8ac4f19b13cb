//! Keeping an engine off the CPU on its opponent's time: its freezer, and the watch that decides
//! whether the freezer is needed.
//!
//! Freezing costs every thread of the frozen engine two wake-ups a ply, one to stop and one to go
//! on, and on a virtual machine each wake-up of an idle CPU is an exit to the host: with engines
//! that think (stockfish at `tc=1+0.01`, on an idle machine) it was most of the referee's CPU.
//! An engine that uses no CPU off its turn gains nothing from being frozen, so by default an
//! engine is watched instead: its CPU time, as its control group counts it (every process and
//! thread of its tree), is read as its opponent's turn starts and again as the opponent's lines
//! arrive. One found to have used more than `ALLOWANCE` of CPU on a turn of its opponent's is
//! frozen at once, and frozen on every turn of its opponent's from then on: it is caught.
//! `freeze=on` freezes from the first turn, as does an engine whose CPU time cannot be read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The CPU a watched engine may use on one turn of its opponent's: what a search that has just
/// ended takes to wind down, and what a runtime's own threads (a JIT compiler, a collector)
/// spend now and then. An engine that ponders uses all of its opponent's turn.
pub const ALLOWANCE: Duration = Duration::from_millis(5);

/// How often, at most, a watched engine's CPU time is read while its opponent thinks: at each
/// line of the opponent's that comes this long after the last reading, and at its move.
pub const WATCH_EVERY: Duration = Duration::from_millis(5);

/// No reading of the CPU time this turn.
const UNREAD: u64 = u64::MAX;

/// An engine's CPU time as its control group counts it, its file kept open (one `pread` a
/// reading).
#[derive(Debug)]
pub enum CpuMeter {
    /// cgroup v1 `cpuacct.usage`: nanoseconds.
    Nanoseconds(std::fs::File),
    /// cgroup v2 `cpu.stat`, whose first line is `usage_usec N` (in every group, whatever its
    /// controllers).
    CpuStat(std::fs::File),
}

impl CpuMeter {
    pub fn open_v1(group: &Path) -> Option<CpuMeter> {
        let file = std::fs::File::open(group.join("cpuacct.usage")).ok()?;
        Some(CpuMeter::Nanoseconds(file))
    }

    pub fn open_v2(group: &Path) -> Option<CpuMeter> {
        let file = std::fs::File::open(group.join("cpu.stat")).ok()?;
        Some(CpuMeter::CpuStat(file))
    }

    /// The group's CPU time so far, in nanoseconds.
    pub fn read(&self) -> Option<u64> {
        let mut buf = [0u8; 64];
        let (file, scale) = match self {
            CpuMeter::Nanoseconds(f) => (f, 1),
            CpuMeter::CpuStat(f) => (f, 1_000),
        };
        let n = std::os::unix::fs::FileExt::read_at(file, &mut buf, 0).ok()?;
        parse_usage(&buf[..n]).map(|v| v.saturating_mul(scale))
    }
}

/// The first number in `text`: `cpuacct.usage`'s only one, `cpu.stat`'s `usage_usec`.
fn parse_usage(text: &[u8]) -> Option<u64> {
    let start = text.iter().position(u8::is_ascii_digit)?;
    let mut digits = text[start..].iter().take_while(|b| b.is_ascii_digit());
    digits.try_fold(0u64, |n, b| {
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// An engine's freezer: its state file kept open (one system call a change), whether it is
/// frozen now, and the watch over its CPU time. Shared, so that the referee waiting for the
/// opponent can watch and freeze it.
#[derive(Debug)]
pub struct Freezer {
    state: std::fs::File,
    frozen: AtomicBool,
    /// What the state file is written: v1's `FROZEN`/`THAWED`, v2's `1`/`0`.
    values: [&'static [u8]; 2],
    /// v1: the freezer hierarchy's folder where the run holds the kernel's switch on (see
    /// `hold_freezing_on`) from its first freeze; v2 has no such switch.
    hold_in: Option<PathBuf>,
    meter: Option<CpuMeter>,
    /// Frozen on every turn of its opponent's: `freeze=on`, or caught.
    strict: AtomicBool,
    /// Its CPU time when this turn of its opponent's started to count, or `UNREAD`.
    since: AtomicU64,
    /// The CPU it was caught using on one turn of its opponent's, in nanoseconds; 0 if never.
    caught: AtomicU64,
}

impl Freezer {
    pub fn new(
        state: std::fs::File,
        values: [&'static [u8]; 2],
        hold_in: Option<PathBuf>,
        meter: Option<CpuMeter>,
    ) -> Freezer {
        Freezer {
            state,
            frozen: AtomicBool::new(false),
            values,
            hold_in,
            meter,
            strict: AtomicBool::new(false),
            since: AtomicU64::new(UNREAD),
            caught: AtomicU64::new(0),
        }
    }

    /// Stops every process of the engine where it is, until [`thaw`](Self::thaw). The kernel
    /// finishes the freezing on its own: the write does not wait for it.
    pub fn freeze(&self) {
        if !self.frozen.swap(true, Ordering::Relaxed) {
            if let Some(parent) = &self.hold_in {
                hold_freezing_on(parent);
            }
            self.set(self.values[0]);
        }
    }

    /// Lets the engine run again.
    pub fn thaw(&self) {
        if self.frozen.swap(false, Ordering::Relaxed) {
            self.set(self.values[1]);
        }
    }

    fn set(&self, state: &[u8]) {
        // An error leaves the engine as it was: the freezer only ever takes CPU away.
        let _ = std::os::unix::fs::FileExt::write_at(&self.state, state, 0);
    }

    /// Frozen on every turn of its opponent's from now on (`freeze=on`, or caught before, in
    /// an earlier process of the same engine).
    pub fn insist(&self) {
        self.strict.store(true, Ordering::Relaxed);
    }

    /// Whether the engine is watched rather than frozen on its opponent's turns.
    pub fn watched(&self) -> bool {
        self.meter.is_some() && !self.strict.load(Ordering::Relaxed)
    }

    /// Its own turn: thawed, and nothing it does now counts against it.
    pub fn on_turn(&self) {
        self.since.store(UNREAD, Ordering::Relaxed);
        self.thaw();
    }

    /// Its opponent's turn starts to count: its CPU time is read now, if it is watched.
    pub fn count_from_here(&self) {
        if let (true, Some(now)) = (self.watched(), self.meter.as_ref().and_then(CpuMeter::read)) {
            self.since.store(now, Ordering::Relaxed);
        }
    }

    /// Its opponent has thought past the grace: frozen, unless it is watched, in which case its
    /// CPU time counts from here if it did not already.
    pub fn off_turn(&self) {
        if !self.watched() {
            self.freeze();
        } else if self.since.load(Ordering::Relaxed) == UNREAD {
            self.count_from_here();
        }
    }

    /// Whether it is watched on this turn of its opponent's (its CPU time counts).
    pub fn watching(&self) -> bool {
        self.since.load(Ordering::Relaxed) != UNREAD && self.watched()
    }

    /// Reads its CPU time: one that has used more than `ALLOWANCE` on this turn of its
    /// opponent's is caught, frozen now and on every such turn from now on.
    pub fn look(&self) {
        if !self.watching() {
            return;
        }
        let since = self.since.load(Ordering::Relaxed);
        let Some(now) = self.meter.as_ref().and_then(CpuMeter::read) else {
            return;
        };
        let used = now.saturating_sub(since);
        if used > ALLOWANCE.as_nanos() as u64 {
            self.caught.store(used, Ordering::Relaxed);
            self.insist();
            self.freeze();
        }
    }

    /// The CPU it was caught using on one turn of its opponent's, if it was.
    pub fn caught(&self) -> Option<Duration> {
        let used = self.caught.load(Ordering::Relaxed);
        (used > 0).then(|| Duration::from_nanos(used))
    }
}

/// cgroup v1 turns a kernel-wide switch on when a group starts freezing and off when the last
/// frozen group thaws, and the switch is patched into the kernel's code while every CPU waits
/// (on a virtual machine, an exit to the host per CPU). An engine frozen and thawed every ply
/// would flip it twice a ply: measured at a clock of 1+0.01, a fifth of the referee's CPU. One
/// empty group kept frozen from the run's first freeze holds the switch on (a run that never
/// freezes, `freeze=off` or a busy machine, leaves it alone); it is thawed and removed at
/// exit, and swept by the next arbiter if this one was killed (it is named after its pid).
fn hold_freezing_on(parent: &Path) {
    static HELD: OnceLock<Option<(u32, PathBuf)>> = OnceLock::new();
    extern "C" fn release() {
        if let Some(Some((pid, dir))) = HELD.get() {
            // Forked children (keepers) exit through here too: only the holder lets go.
            if *pid == std::process::id() {
                let _ = std::fs::write(dir.join("freezer.state"), "THAWED");
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
    HELD.get_or_init(|| {
        let pid = std::process::id();
        let dir = parent.join(format!("arbiter-{pid}-hold"));
        std::fs::create_dir(&dir).ok()?;
        if std::fs::write(dir.join("freezer.state"), "FROZEN").is_err() {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        // SAFETY: registers a function with no arguments, run by exit(3).
        unsafe { libc::atexit(release) };
        Some((pid, dir))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_usage_files_are_read() {
        assert_eq!(parse_usage(b"123456789\n"), Some(123_456_789));
        let stat = b"usage_usec 2045\nuser_usec 2000\nsystem_usec 45\n";
        assert_eq!(parse_usage(stat), Some(2045));
        assert_eq!(parse_usage(b"usage_usec \n"), None);
        assert_eq!(parse_usage(b"99999999999999999999999\n"), None);
    }
}
