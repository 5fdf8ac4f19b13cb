//! Faults the bundled engine can be told to commit (`--fault <kind> [--fault-after <n>]`), so the
//! referee's handling of broken engines is tested against a real process.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    None,
    /// Exit with status 3 when asked for a move.
    Crash,
    /// Never send `uciok`.
    NoUciok,
    /// Never answer `go`.
    Stall,
    /// Answer with a move that is well-formed but illegal.
    Illegal,
    /// Print junk and answer with something that is not a move.
    Garbage,
    /// Think past the end of its clock.
    Overrun,
    /// Stay alive after `quit`.
    IgnoreQuit,
    /// Take `UCI_Variant` without confirming it, as Fairy-Stockfish does with an unknown name.
    NoVariant,
    /// Exit before reading anything.
    ExitAtStart,
    /// Take two seconds before answering anything.
    SlowStart,
    /// Print a line of several megabytes before answering.
    LongLine,
    /// Print a flood of `info` lines before answering.
    InfoFlood,
    /// Write megabytes to stderr while thinking.
    StderrFlood,
    /// Start a child process that would outlive the engine.
    Fork,
    /// Start a child in a session of its own (`setsid`): out of reach of a process-group kill.
    Escape,
    /// At the `after`-th `go`, start a child that holds the engine's stdout, and exit: the
    /// output never ends although the engine is gone.
    Orphan,
    /// At each `go`, with probability `rate`, commit one of the in-game faults, chosen by `seed`.
    Random,
    /// At start, try to start 10,000 processes at once; write how many started to
    /// `forkstorm.txt` in the working folder, end them, then play.
    ForkStorm,
    /// At the `after`-th `go`, take memory (and touch it) until stopped.
    Hog,
    /// At start, keep two threads busy for 1.5 s; write the CPU time this took and the wall
    /// time to `spin.txt` in the working folder, then play.
    Spin,
}

/// The faults `Random` chooses from: those that happen during a game.
const RANDOM_KINDS: [FaultKind; 8] = [
    FaultKind::Crash,
    FaultKind::Stall,
    FaultKind::Illegal,
    FaultKind::Garbage,
    FaultKind::Overrun,
    FaultKind::LongLine,
    FaultKind::InfoFlood,
    FaultKind::StderrFlood,
];

/// FNV-1a of a `position` command's words: the same position, the same number.
pub fn position_hash(words: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.bytes().chain(std::iter::once(b' ')) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    /// The fault starts at this `go` (0 = the first).
    pub after: u64,
    /// For `Random`: chance per `go`, and the seed that makes a soak run reproducible.
    pub rate: f64,
    pub seed: u64,
    /// A hash of the current `position` command, set before each `go`.
    pub position_key: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Fault {
    pub fn parse(kind: &str, after: u64, rate: f64, seed: u64) -> Option<Fault> {
        let kind = match kind {
            "none" => FaultKind::None,
            "crash" => FaultKind::Crash,
            "nouciok" => FaultKind::NoUciok,
            "stall" => FaultKind::Stall,
            "illegal" => FaultKind::Illegal,
            "garbage" => FaultKind::Garbage,
            "overrun" => FaultKind::Overrun,
            "ignorequit" => FaultKind::IgnoreQuit,
            "novariant" => FaultKind::NoVariant,
            "exitstart" => FaultKind::ExitAtStart,
            "slowstart" => FaultKind::SlowStart,
            "longline" => FaultKind::LongLine,
            "infoflood" => FaultKind::InfoFlood,
            "stderrflood" => FaultKind::StderrFlood,
            "fork" => FaultKind::Fork,
            "escape" => FaultKind::Escape,
            "orphan" => FaultKind::Orphan,
            "random" => FaultKind::Random,
            "forkstorm" => FaultKind::ForkStorm,
            "hog" => FaultKind::Hog,
            "spin" => FaultKind::Spin,
            _ => return None,
        };
        Some(Fault {
            kind,
            after,
            rate,
            seed,
            position_key: Default::default(),
        })
    }

    /// Remembers the position the next `go` is about (FNV-1a of its words).
    pub fn set_position(&self, words: &[String]) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for w in words {
            for b in w.bytes().chain(std::iter::once(b' ')) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        self.position_key
            .store(h, std::sync::atomic::Ordering::Relaxed);
    }

    /// Faults that act when the engine starts.
    pub fn at_start(&self) {
        match self.kind {
            FaultKind::ExitAtStart => std::process::exit(4),
            FaultKind::SlowStart => std::thread::sleep(Duration::from_secs(2)),
            FaultKind::Fork => {
                // A grandchild of the referee, in the engine's process group.
                let _ = std::process::Command::new("sleep").arg("600").spawn();
            }
            FaultKind::Escape => {
                // setsid(1) puts sleep in a new session and process group.
                let _ = std::process::Command::new("setsid")
                    .args(["sleep", "598"])
                    .stdin(std::process::Stdio::null())
                    .spawn();
            }
            FaultKind::ForkStorm => fork_storm(10_000),
            FaultKind::Spin => spin(2, Duration::from_millis(1500)),
            _ => {}
        }
    }

    /// The fault this `go` commits: the fixed one from the `after`-th `go` on, or for `Random` a
    /// draw from the seed and the position (`key`), so that a restarted engine does not repeat
    /// the faults of its first life and a soak run is still reproducible.
    fn kind_at(&self, index: u64) -> FaultKind {
        if self.kind != FaultKind::Random {
            return if index < self.after {
                FaultKind::None
            } else {
                self.kind
            };
        }
        let key = self.position_key.load(std::sync::atomic::Ordering::Relaxed);
        let mut z = self.seed ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if (z % 1_000_000) as f64 / 1_000_000.0 >= self.rate {
            return FaultKind::None;
        }
        RANDOM_KINDS[((z >> 20) % RANDOM_KINDS.len() as u64) as usize]
    }

    pub const KINDS: &'static str =
        "none, crash, nouciok, stall, illegal, garbage, overrun, ignorequit, novariant, exitstart, \
            slowstart, longline, infoflood, stderrflood, fork, escape, orphan, forkstorm, hog, \
            spin, random (with --fault-rate and --fault-seed)";

    pub fn confirms_variant(&self) -> bool {
        self.kind != FaultKind::NoVariant
    }

    pub fn withholds_uciok(&self) -> bool {
        self.kind == FaultKind::NoUciok
    }

    pub fn obeys_quit(&self) -> bool {
        if self.kind == FaultKind::IgnoreQuit {
            // Keep running until killed.
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        false
    }

    /// Called when `go` arrives; returns true when the fault takes the place of an answer.
    pub fn before_go(&self, index: u64, _go: &str) -> bool {
        match self.kind_at(index) {
            FaultKind::Crash => std::process::exit(3),
            FaultKind::Orphan => {
                // The child inherits stdout: the referee sees no end of output when we exit.
                let _ = std::process::Command::new("sleep")
                    .arg("597")
                    .stdin(std::process::Stdio::null())
                    .spawn();
                std::process::exit(5)
            }
            FaultKind::Stall => true,
            FaultKind::Hog => {
                let mut held: Vec<Vec<u8>> = Vec::new();
                loop {
                    // Filled with ones, so every page is really taken.
                    held.push(vec![1u8; 16 << 20]);
                }
            }
            FaultKind::LongLine => {
                crate::uci::say(&format!("info string {}", "x".repeat(5 << 20)));
                false
            }
            FaultKind::InfoFlood => {
                for i in 0..100_000 {
                    crate::uci::say(&format!("info depth 1 nodes {i} score cp 0"));
                }
                false
            }
            FaultKind::StderrFlood => {
                use std::io::Write;
                let chunk = vec![b'e'; 1 << 16];
                for _ in 0..64 {
                    let _ = std::io::stderr().write_all(&chunk);
                }
                false
            }
            _ => false,
        }
    }

    /// How long to wait before answering this `go` (past the clock, for `overrun`).
    pub fn delay(&self, index: u64, go: &[&str], white: bool) -> Duration {
        if self.kind_at(index) != FaultKind::Overrun {
            return Duration::ZERO;
        }
        let key = if white { "wtime" } else { "btime" };
        let left = go
            .iter()
            .position(|a| *a == key || *a == "movetime")
            .and_then(|i| go.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1000);
        Duration::from_millis(left + 500)
    }

    pub fn replace_bestmove(&self, index: u64, best: Option<String>) -> Option<String> {
        match self.kind_at(index) {
            FaultKind::Illegal => Some("a1a1".into()),
            FaultKind::Garbage => {
                crate::uci::say("#$%&! this is not a UCI line");
                crate::uci::say("info depth banana");
                Some("@@junk@@".into())
            }
            _ => best,
        }
    }
}

/// Starts up to `tries` sleeping processes, stopping at the first refusal; records the count in
/// `forkstorm.txt` and ends them all.
fn fork_storm(tries: usize) {
    let mut children = Vec::new();
    for _ in 0..tries {
        match std::process::Command::new("sleep")
            .arg("60")
            .stdin(std::process::Stdio::null())
            .spawn()
        {
            Ok(child) => children.push(child),
            Err(_) => break,
        }
    }
    let _ = std::fs::write(
        "forkstorm.txt",
        format!("started {} of {tries}\n", children.len()),
    );
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Keeps `threads` threads busy for `wall`; records in `spin.txt` the CPU seconds the process
/// used meanwhile and the wall seconds.
fn spin(threads: usize, wall: Duration) {
    let before = cpu_seconds();
    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                let mut x = 0u64;
                while started.elapsed() < wall {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let used = cpu_seconds() - before;
    let _ = std::fs::write(
        "spin.txt",
        format!(
            "cpu {used:.3} wall {:.3}\n",
            started.elapsed().as_secs_f64()
        ),
    );
}

/// User and system CPU seconds of this process so far, from `/proc/self/stat` (clock ticks of
/// 1/100 s, as on Linux).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    (ticks(11) + ticks(12)) / 100.0
}
