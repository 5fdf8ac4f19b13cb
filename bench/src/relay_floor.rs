//! `arbiter bench --peer`'s floor: the same stockfish match relayed by the least a referee can
//! do, to show how much of a harness's CPU per ply any harness pays on this machine.
//!
//! The relay starts both engines, then for each ply writes `position` and `go` in one write
//! and waits with a blocking `read` for `bestmove` (as arbiter's referee waits for a quick
//! reply, see `engine::watchdog`), pinned and yielding to the engines as
//! arbiter's `--affinity` does. It checks nothing, writes no record and stops a game after
//! `MAX_PLIES` or when the engine has no move. With a clock (`--peer-tc`) it keeps one only to
//! tell each engine its time, as a harness does (a search told its time reports as often as in
//! the match), and ends no game on it. What is left is the kernel's part of
//! a ply (one wait and switch back, one read, one write that wakes the engine) and the caches
//! the engine emptied: the floor under arbiter's figure and the peer's.

use super::BenchError as Failure;
use arbiter::clock::{Clock, TimeControl};
use arbiter::engine::watchdog::{poll_then_read, read_until, Read};
use std::fmt::Write as _;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Plies a relayed game lasts at most: about what the rules let these games last.
const MAX_PLIES: usize = 100;
/// How long the relay waits for any line before it gives up on the engine.
const PATIENCE: Duration = Duration::from_secs(30);

/// What the relay measured: its thread's CPU over the games (start-up excluded) and the plies.
pub struct Relayed {
    pub cpu: Duration,
    pub plies: u64,
}

impl Relayed {
    pub fn per_ply_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.plies.max(1) as f64
    }
}

struct Engine {
    child: Child,
    input: ChildStdin,
    output: ChildStdout,
    /// Read but not yet cut into lines.
    pending: Vec<u8>,
}

impl Engine {
    fn start(stockfish: &Path) -> Result<Engine, Failure> {
        let mut child = Command::new(stockfish)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Failure::bad_input(format!("{}: {e}", stockfish.display())))?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Failure::bad_input("the relay's engine has no pipes"));
        };
        Ok(Engine {
            child,
            input,
            output,
            pending: Vec::with_capacity(1 << 16),
        })
    }

    fn send(&mut self, text: &str) -> Result<(), Failure> {
        self.input
            .write_all(text.as_bytes())
            .map_err(|e| Failure::bad_input(format!("the relay's engine: {e}")))
    }

    /// Reads until a line starts with `prefix`; that line's second word.
    fn await_line(&mut self, prefix: &[u8], chunk: &mut [u8]) -> Result<String, Failure> {
        let gone = || Failure::bad_input("the relay's engine stopped answering");
        let mut from = 0;
        loop {
            while let Some(i) = memchr::memchr(b'\n', &self.pending[from..]) {
                let line = &self.pending[from..from + i];
                from += i + 1;
                if line.starts_with(prefix) {
                    let word = line
                        .split(|b| b.is_ascii_whitespace())
                        .filter(|w| !w.is_empty())
                        .nth(1)
                        .map(|w| String::from_utf8_lossy(w).into_owned())
                        .unwrap_or_default();
                    self.pending.drain(..from);
                    return Ok(word);
                }
            }
            self.pending.drain(..from);
            from = 0;
            // The pipe is in blocking mode (std leaves it so): the read alone waits, as
            // arbiter's own quick wait does.
            let until = Instant::now() + PATIENCE;
            let fd = self.output.as_raw_fd();
            let n = match read_until(fd, chunk, until) {
                Read::Bytes(n) => n,
                // No watchdog: the referee's other wait.
                Read::Failed => poll_then_read(fd, chunk, until).unwrap_or(0),
                Read::TimedOut => 0,
            };
            if n == 0 {
                return Err(gone());
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.input.write_all(b"quit\n");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn thread_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// What each move is searched to: a node count, or a clock (`[moves/]base[+inc]`).
#[derive(Clone, Copy)]
pub enum Limit {
    Nodes(u64),
    Clock(TimeControl),
}

/// Relays `games` games (two per line of the EPD `book`, in turn) between two stockfish
/// processes searching to `limit`, on a thread of its own, pinned to the first CPU this
/// process may use when `pinned`.
pub fn relay(
    stockfish: &Path,
    book: &Path,
    games: u64,
    limit: Limit,
    pinned: bool,
) -> Result<Relayed, Failure> {
    let book = std::fs::read_to_string(book)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", book.display())))?;
    let starts: Vec<String> = book.lines().map(str::to_string).collect();
    let stockfish = stockfish.to_path_buf();
    std::thread::spawn(move || relay_here(&stockfish, &starts, games, limit, pinned))
        .join()
        .map_err(|_| Failure::bad_input("the relay's thread panicked"))?
}

/// The game's start, as a `position` line that moves are added to.
fn push_start(request: &mut String, fen: Option<&String>) {
    match fen {
        Some(fen) => {
            request.push_str("position fen ");
            request.push_str(fen);
        }
        None => request.push_str("position startpos"),
    }
    request.push_str(" moves");
}

/// The `go` after the position: the mover's clock as both sides' (which colour it plays the
/// relay does not know, and the engine reads only its own), else the node count.
fn push_go(request: &mut String, clock: Option<&Clock>, go_nodes: &str) {
    match clock {
        Some(c) => {
            let (time, inc) = (c.remaining().as_millis().max(1), c.increment().as_millis());
            let _ = write!(
                request,
                "\ngo wtime {time} btime {time} winc {inc} binc {inc}\n"
            );
        }
        None => request.push_str(go_nodes),
    }
}

fn relay_here(
    stockfish: &Path,
    starts: &[String],
    games: u64,
    limit: Limit,
    pinned: bool,
) -> Result<Relayed, Failure> {
    if pinned {
        if let Some(&cpu) = arbiter::tournament::allowed_cpus().first() {
            arbiter::tournament::pin_current_thread(cpu);
        }
    }
    // Started before the thread yields, so that the engines keep the normal policy.
    let mut engines = [Engine::start(stockfish)?, Engine::start(stockfish)?];
    if pinned {
        arbiter::engine::sched::referee_yields_to_engines();
    }
    let mut chunk = vec![0u8; 1 << 16];
    for engine in &mut engines {
        engine
            .send("uci\nsetoption name Threads value 1\nsetoption name Hash value 16\nisready\n")?;
        engine.await_line(b"readyok", &mut chunk)?;
    }
    let before = thread_cpu();
    let mut plies = 0u64;
    let mut request = String::with_capacity(4096);
    let go_nodes = match limit {
        Limit::Nodes(nodes) => format!("\ngo nodes {nodes}\n"),
        Limit::Clock(_) => String::new(),
    };
    for game in 0..games {
        let mut clocks = match limit {
            Limit::Clock(tc) => Some([Clock::new(tc), Clock::new(tc)]),
            Limit::Nodes(_) => None,
        };
        for engine in &mut engines {
            engine.send("ucinewgame\nisready\n")?;
            engine.await_line(b"readyok", &mut chunk)?;
        }
        request.clear();
        push_start(
            &mut request,
            starts.get(game as usize / 2 % starts.len().max(1)),
        );
        let mut side = (game % 2) as usize;
        for _ in 0..MAX_PLIES {
            let asked = request.len();
            push_go(&mut request, clocks.as_ref().map(|c| &c[side]), &go_nodes);
            let sent = Instant::now();
            engines[side].send(&request)?;
            request.truncate(asked);
            let mv = engines[side].await_line(b"bestmove", &mut chunk)?;
            if let Some(clocks) = &mut clocks {
                // No game is lost on it: a late move is charged what was left.
                let c = &mut clocks[side];
                let charged = sent.elapsed().min(c.remaining());
                c.charge(charged, Duration::ZERO);
            }
            if mv.is_empty() || mv == "(none)" {
                break;
            }
            request.push(' ');
            request.push_str(&mv);
            plies += 1;
            side ^= 1;
        }
    }
    Ok(Relayed {
        cpu: thread_cpu().saturating_sub(before),
        plies,
    })
}
