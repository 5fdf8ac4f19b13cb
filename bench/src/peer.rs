//! `arbiter bench --peer fastchess=PATH`: the same stockfish match (one command line, in
//! fastchess/cutechess syntax, which arbiter also reads) played under arbiter and under the peer
//! harness, one after the other in this run; each harness's own CPU per ply is compared.
//!
//! A harness's own CPU is read from `/proc/<pid>/stat` while it is a zombie (`waitid` with
//! `WNOWAIT`): its own user and system time, all threads, without the engines it ran, in clock
//! ticks. arbiter also reports its own time as `getrusage` gives it (microseconds), which is
//! used for it, and what its keepers, start-up check and sandboxes cost, which the kernel
//! counts with the engines' and the bench moves to arbiter's side.

use super::latency::{self, Latency};
use super::relay_floor::{Limit, Relayed};
use super::BenchError as Failure;
use arbiter::clock::TimeControl;
use arbiter::engine::overhead::HARNESS_CPU_FILE;
use arbiter::engine::procfs;
use arbiter::game::find_game;
use arbiter::pgn::read_games;
use arbiter::tournament::bookgen::{generate, BookSpec};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What `--peer NAME=PATH` names.
pub struct Peer {
    pub name: String,
    pub program: PathBuf,
}

impl Peer {
    /// cutechess-cli names its PGN file without `file=`.
    fn is_cutechess(&self) -> bool {
        self.name.starts_with("cutechess")
            || self
                .program
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("cutechess"))
    }

    pub fn parse(text: &str) -> Result<Peer, Failure> {
        let (name, path) = text.split_once('=').ok_or_else(|| {
            Failure::bad_input(format!(
                "--peer {text}: expected NAME=PATH, e.g. --peer fastchess=/opt/fastchess/fastchess"
            ))
        })?;
        // Absolute: the harness runs in a folder of its own.
        let program = std::fs::canonicalize(path)
            .ok()
            .filter(|p| p.is_file() && !name.is_empty())
            .ok_or_else(|| Failure::bad_input(format!("--peer {text}: '{path}' is not a file")))?;
        Ok(Peer {
            name: name.to_string(),
            program,
        })
    }
}

/// What an arbiter run reported of its own CPU time (see `HARNESS_CPU_FILE`).
struct HarnessCpu {
    own: Duration,
    keepers: Duration,
    check: Duration,
    sandboxes: Duration,
}

fn read_harness_cpu(path: &Path) -> Result<HarnessCpu, Failure> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let numbers: Vec<u64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    match numbers[..] {
        [own, keepers, check, sandboxes] => Ok(HarnessCpu {
            own: Duration::from_micros(own),
            keepers: Duration::from_micros(keepers),
            check: Duration::from_micros(check),
            sandboxes: Duration::from_micros(sandboxes),
        }),
        _ => Err(Failure::bad_input(format!(
            "{}: arbiter did not report its own CPU time",
            path.display()
        ))),
    }
}

/// One harness's run of the match, as measured from outside.
struct Measured {
    /// The harness's own processes: for arbiter with its keepers and its start-up check.
    own_cpu: Duration,
    engines_cpu: Duration,
    wall: Duration,
    played: Tally,
    /// arbiter's keepers, start-up check and sandboxes, included in `own_cpu`.
    counted_apart: Option<HarnessCpu>,
    /// arbiter's turnaround per move as its summary gave it (median, p99, max).
    turnaround: Option<String>,
    /// The delay its engines did not see, where their moves say it.
    latency: Option<Latency>,
    /// The 1-minute load average while it played, least and most.
    load: String,
}

/// What a harness's PGN says was played.
struct Tally {
    games: usize,
    plies: usize,
    /// Wins of the first engine, its losses, draws.
    score: (usize, usize, usize),
    /// Games lost on time (either side).
    forfeits: usize,
}

/// CPU times of a finished (zombie) process: (own, waited-for children), from /proc.
fn zombie_cpu(pid: u32) -> Option<(Duration, Duration)> {
    let (own, children) = procfs::process_ticks(pid)?;
    let ticks = procfs::ticks_per_second() as f64;
    let secs = |t: u64| Duration::from_secs_f64(t as f64 / ticks);
    Some((secs(own), secs(children)))
}

/// Runs `program args` in `dir`, its output to files there; its own CPU and its engines'.
fn run_measured(
    program: &Path,
    args: &[String],
    dir: &Path,
    env: Option<(&str, &Path)>,
) -> Result<(Duration, Duration, Duration), Failure> {
    let io = |e: std::io::Error| Failure::bad_input(format!("{}: {e}", program.display()));
    let out = std::fs::File::create(dir.join("stdout.txt")).map_err(io)?;
    let err = std::fs::File::create(dir.join("stderr.txt")).map_err(io)?;
    let started = Instant::now();
    let mut command = Command::new(program);
    if let Some((name, value)) = env {
        command.env(name, value);
    }
    let mut child = command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(io)?;
    // SAFETY: waitid only writes the siginfo it is given; WNOWAIT leaves the child a zombie so
    // that its times can still be read.
    let waited = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            child.id() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    let wall = started.elapsed();
    let times = (waited == 0).then(|| zombie_cpu(child.id())).flatten();
    let status = child.wait().map_err(io)?;
    let (own, engines) = times.ok_or_else(|| {
        Failure::bad_input(format!(
            "{}: its CPU time could not be read",
            program.display()
        ))
    })?;
    if !status.success() {
        return Err(Failure::bad_input(format!(
            "{} failed ({status}); see {}",
            program.display(),
            dir.join("stderr.txt").display()
        )));
    }
    Ok((own, engines, wall))
}

/// Games, plies and the first engine's score from the PGN a harness wrote.
fn tally(pgn: &Path, first: &str) -> Result<Tally, Failure> {
    let text = std::fs::read_to_string(pgn)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", pgn.display())))?;
    let games =
        read_games(&text).map_err(|e| Failure::bad_input(format!("{}:{}", pgn.display(), e)))?;
    let mut score = (0, 0, 0);
    for g in &games {
        let first_is_white = g.tag("White") == Some(first);
        match (g.tag("Result"), first_is_white) {
            (Some("1-0"), true) | (Some("0-1"), false) => score.0 += 1,
            (Some("0-1"), true) | (Some("1-0"), false) => score.1 += 1,
            _ => score.2 += 1,
        }
    }
    // Every harness names it so: arbiter's and fastchess's `Termination` tag, cutechess-cli's.
    let forfeits = games
        .iter()
        .filter(|g| {
            g.tag("Termination")
                .is_some_and(|t| t.eq_ignore_ascii_case("time forfeit"))
        })
        .count();
    Ok(Tally {
        games: games.len(),
        plies: games.iter().map(|g| g.moves.len()).sum(),
        score,
        forfeits,
    })
}

/// The book both harnesses play: arbiter's own chess openings as EPD, which both read.
fn write_book(path: &Path, count: usize) -> Result<(), Failure> {
    let entry = find_game("chess").expect("chess is registered");
    let spec = BookSpec {
        count,
        plies: 6,
        seed: 1,
        max_imbalance: 0,
    };
    let mut epd = String::new();
    for line in generate(entry, &spec).map_err(Failure::bad_input)? {
        let mut game = entry
            .new_game(None)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        for mv in line.split_whitespace() {
            game.play(mv)
                .map_err(|e| Failure::bad_input(e.to_string()))?;
        }
        // EPD is the FEN without its two move counters.
        let fen = game.fen();
        let fields: Vec<&str> = fen.split_whitespace().take(4).collect();
        epd.push_str(&fields.join(" "));
        epd.push('\n');
    }
    std::fs::write(path, epd).map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))
}

/// The match both harnesses play.
pub struct Work {
    pub games: u64,
    pub nodes: u64,
    /// Each game and its engines pinned to a CPU (fastchess's `-use-affinity`).
    pub affinity: bool,
    /// arbiter runs with `--affinity off` rather than its default `auto`.
    pub unpinned: bool,
    /// Times the whole comparison is made, one after the other: the ratio follows the
    /// machine's load, which one run cannot tell apart from the harnesses.
    pub runs: u32,
    /// Processes of other work kept running through every match (see `Load`).
    pub load: u32,
    /// How long that work runs before the first match.
    pub settle: Duration,
    /// A clock for the match instead of the node limit (`1+0.01`): games can then be lost on
    /// time, which a loaded machine decides.
    pub tc: Option<String>,
    /// Games at once (the CPUs, as most users run).
    pub concurrency: u32,
}

/// The command line a harness runs: the same for both, but for how the PGN file is named
/// (`-pgnout file=F` in fastchess, `-pgnout F` in cutechess-cli; arbiter reads both).
fn match_line(stockfish: &Path, book: &Path, work: &Work, cutechess: bool) -> Vec<String> {
    let sf = stockfish.display();
    // fastchess's comments then carry each move's latency; arbiter's journal has it anyway.
    let pgnout = if cutechess {
        "games.pgn"
    } else {
        "file=games.pgn latency=true"
    };
    let (pairs, nodes) = (work.games.div_ceil(2).max(1), work.nodes);
    let affinity = if work.affinity { "-use-affinity" } else { "" };
    let limit = match &work.tc {
        Some(tc) => format!("tc={tc}"),
        None => format!("tc=inf nodes={nodes}"),
    };
    let concurrency = work.concurrency.max(1);
    format!(
        "-engine cmd={sf} name=sf-a -engine cmd={sf} name=sf-b \
         -each proto=uci {limit} option.Threads=1 option.Hash=16 \
         -games 2 -rounds {pairs} -repeat -concurrency {concurrency} {affinity} \
         -openings file={} format=epd order=sequential -pgnout {pgnout}",
        book.display()
    )
    .split_whitespace()
    .map(String::from)
    .collect()
}

/// Plays the match under `program`; `arbiter` says it is this program, which reports the CPU
/// time of its keepers and start-up check so that they count as its own.
fn measure(
    program: &Path,
    args: &[String],
    dir: &Path,
    arbiter: bool,
) -> Result<Measured, Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::bad_input(e.to_string()))?;
    let report = dir.join("harness-cpu.txt");
    let env = arbiter.then_some((HARNESS_CPU_FILE, report.as_path()));
    let sampler = super::load::LoadSampler::start();
    let (mut own_cpu, mut engines_cpu, wall) = run_measured(program, args, dir, env)?;
    let load = sampler.finish();
    let counted_apart = if arbiter {
        // Its own time as getrusage gives it, where /proc rounds down to clock ticks.
        let cpu = read_harness_cpu(&report)?;
        let elsewhere = cpu.keepers + cpu.check + cpu.sandboxes;
        own_cpu = cpu.own + elsewhere;
        engines_cpu = engines_cpu.saturating_sub(elsewhere);
        Some(cpu)
    } else {
        None
    };
    let pgn = dir.join("games.pgn");
    let played = tally(&pgn, "sf-a")?;
    let turnaround = arbiter
        .then(|| turnaround(&dir.join("stdout.txt")))
        .flatten();
    let latency = match arbiter {
        true => latency::from_arbiter_run(dir),
        false => std::fs::read_to_string(&pgn)
            .ok()
            .and_then(|text| latency::from_pgn(&text)),
    };
    Ok(Measured {
        turnaround,
        latency,
        own_cpu,
        engines_cpu,
        wall,
        played,
        counted_apart,
        load,
    })
}

/// What arbiter's summary said of the turnaround: `median 6 us, p99 19 us, max 40 us`.
fn turnaround(stdout: &Path) -> Option<String> {
    let text = std::fs::read_to_string(stdout).ok()?;
    let line = text
        .lines()
        .find(|l| l.starts_with("Referee turnaround per move"))?;
    Some(line.split_once("moves): ")?.1.to_string())
}

/// The line arbiter printed when `--affinity auto` pinned its games.
fn pinned_line(stdout: &Path) -> Option<String> {
    let text = std::fs::read_to_string(stdout).ok()?;
    text.lines()
        .find(|l| l.starts_with("pinned: "))
        .map(String::from)
}

/// The line arbiter printed when `--affinity auto` did not pin its games, with the reason.
fn not_pinned_line(stdout: &Path) -> Option<String> {
    let text = std::fs::read_to_string(stdout).ok()?;
    text.lines()
        .find(|l| l.starts_with("not pinned: "))
        .map(String::from)
}

/// The program `stockfish` on PATH, or Debian's.
pub fn default_stockfish() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join("stockfish"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("stockfish"))
}

pub fn peer_bench(peer: &Peer, stockfish: &Path, work: &Work) -> Result<(), Failure> {
    // The floor's engines search as the match's do: to the same clock or node count.
    let limit = match &work.tc {
        Some(tc) => Limit::Clock(
            TimeControl::parse(tc).map_err(|e| Failure::bad_input(format!("--peer-tc: {e}")))?,
        ),
        None => Limit::Nodes(work.nodes),
    };
    if work.affinity && peer.is_cutechess() {
        return Err(Failure::bad_input(
            "--peer-affinity: cutechess-cli has no option to pin engines to CPUs".to_string(),
        ));
    }
    let stockfish = &absolute_stockfish(stockfish)?;
    let pairs = work.games.div_ceil(2).max(1);
    let root = std::env::temp_dir().join(format!("arbiter-peer-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).map_err(|e| Failure::bad_input(e.to_string()))?;
    let book = root.join("book.epd");
    write_book(&book, pairs as usize)?;
    let mut args = match_line(stockfish, &book, work, false);
    if work.unpinned {
        args.extend(["-use-affinity".to_string(), "off".to_string()]);
    }
    let peer_args = match_line(stockfish, &book, work, peer.is_cutechess());
    say!("both harnesses run: <harness> {}", peer_args.join(" "));
    // Started once, before the first match, and ended (killed) when the bench returns.
    let _load = settled_load(work, stockfish, &root);
    let me = std::env::current_exe().map_err(|e| Failure::bad_input(e.to_string()))?;
    let runs = work.runs.max(1);
    let mut ratios = Vec::new();
    for run in 1..=runs {
        if runs > 1 {
            say!("run {run} of {runs}:");
        }
        // A folder per run and harness: fastchess appends to its PGN file.
        let dir = |who: &str| root.join(format!("{who}-{run}"));
        eprintln!("playing {games} games under arbiter ...", games = 2 * pairs);
        let ours = measure(&me, &args, &dir("arbiter"), true)?;
        let auto_pinned = pinned_line(&dir("arbiter").join("stdout.txt"));
        if let Some(pinned) = &auto_pinned {
            say!("under arbiter, {pinned}");
        } else if let Some(why) = not_pinned_line(&dir("arbiter").join("stdout.txt")) {
            // The rows of this run are then unpinned ones: said, not mixed in silently.
            say!("under arbiter, {why}");
        }
        eprintln!("playing them again under {} ...", peer.name);
        let theirs = measure(&peer.program, &peer_args, &dir("peer"), false)?;
        eprintln!("and relayed by the least a referee can do ...");
        // The floor is context, not the comparison: a relay that fails leaves the rows above.
        // Each harness is set against a floor played as it played, pinned or not: a pinned
        // relay's wake-ups cost a tenth of an unpinned one's.
        let modes = Modes {
            arbiter_pinned: work.affinity || auto_pinned.is_some(),
            peer_pinned: work.affinity,
        };
        let relay = |pinned| super::relay_floor::relay(stockfish, &book, 2 * pairs, limit, pinned);
        let ours_floor = relay(modes.arbiter_pinned);
        let theirs_floor = match modes.peer_pinned == modes.arbiter_pinned {
            true => None,
            false => Some(relay(modes.peer_pinned)),
        };
        let floors = Floors {
            ours: &ours_floor,
            theirs: theirs_floor.as_ref().unwrap_or(&ours_floor),
        };
        ratios.push(show_run(peer, 2 * pairs, &ours, &theirs, floors, modes));
    }
    if runs > 1 {
        let shown: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        say!(
            "own CPU per ply, {} / arbiter, run by run: {} (median {:.2})",
            peer.name,
            shown.join(", "),
            median(&ratios)
        );
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

/// The stockfish program by its absolute path: each harness runs in a folder of its own.
fn absolute_stockfish(stockfish: &Path) -> Result<std::path::PathBuf, Failure> {
    std::fs::canonicalize(stockfish)
        .ok()
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            Failure::bad_input(format!(
                "--stockfish {}: not a file (Debian: apt-get install stockfish)",
                stockfish.display()
            ))
        })
}

/// The bench's own load (`--peer-load`), started and given time to settle: the load average
/// follows new work over a minute, and the first harness would otherwise play on a machine
/// less busy than the second.
fn settled_load(work: &Work, stockfish: &Path, root: &Path) -> super::load::Load {
    let load = super::load::Load::start(work.load, stockfish, root);
    if work.load > 0 {
        say!("load: {}", load.describe());
        eprintln!(
            "letting the load settle for {} s ...",
            work.settle.as_secs()
        );
        std::thread::sleep(work.settle);
    }
    load
}

/// Whether each harness's games ran pinned to a CPU.
#[derive(Clone, Copy)]
struct Modes {
    arbiter_pinned: bool,
    peer_pinned: bool,
}

fn mode(pinned: bool) -> &'static str {
    match pinned {
        true => "pinned",
        false => "unpinned",
    }
}

/// The bare relay's floor in each harness's mode (the same one where both ran alike).
#[derive(Clone, Copy)]
struct Floors<'a> {
    ours: &'a Result<Relayed, Failure>,
    theirs: &'a Result<Relayed, Failure>,
}

/// The two harnesses' rows: games, plies, their own CPU, the engines', wall time, results,
/// games on time and the load they played under.
fn show_table(peer: &Peer, ours: &Measured, theirs: &Measured) {
    say!(
        "{:<12} {:>6} {:>7} {:>10} {:>14} {:>12} {:>9} {:>10} {:>8} {:>10}",
        "harness",
        "games",
        "plies",
        "own CPU s",
        "own CPU/ply us",
        "engines CPU",
        "wall s",
        "sf-a W-L-D",
        "on time",
        "load avg"
    );
    for (name, m) in [("arbiter", ours), (peer.name.as_str(), theirs)] {
        say!(
            "{:<12} {:>6} {:>7} {:>10.2} {:>14.1} {:>12.2} {:>9.2} {:>10} {:>8} {:>10}",
            name,
            m.played.games,
            m.played.plies,
            m.own_cpu.as_secs_f64(),
            per_ply_us(m),
            m.engines_cpu.as_secs_f64(),
            m.wall.as_secs_f64(),
            format!(
                "{}-{}-{}",
                m.played.score.0, m.played.score.1, m.played.score.2
            ),
            m.played.forfeits,
            m.load
        );
    }
}

/// Prints one run's table and notes; its ratio of the peer's CPU per ply to arbiter's.
fn show_run(
    peer: &Peer,
    games: u64,
    ours: &Measured,
    theirs: &Measured,
    floors: Floors<'_>,
    modes: Modes,
) -> f64 {
    show_table(peer, ours, theirs);
    let mut floor_rows = vec![(modes.arbiter_pinned, floors.ours)];
    if modes.peer_pinned != modes.arbiter_pinned {
        floor_rows.push((modes.peer_pinned, floors.theirs));
    }
    for (pinned, floor) in floor_rows {
        if let Ok(floor) = floor {
            say!(
                "{:<12} {:>6} {:>7} {:>10.2} {:>14.1}   ({}: a blocking read and a write alone: no \
                    rules, checks or records)",
                "bare relay",
                games,
                floor.plies,
                floor.cpu.as_secs_f64(),
                floor.per_ply_us(),
                mode(pinned),
            );
        }
    }
    say!(
        "modes: arbiter {}, {} {}",
        mode(modes.arbiter_pinned),
        peer.name,
        mode(modes.peer_pinned)
    );
    if let Some(cpu) = &ours.counted_apart {
        say!(
            "arbiter's own CPU includes its keeper processes ({:.3} s), what its start-up check \
                ran and ended ({:.3} s) and its engines' sandboxes ({:.3} s), which the kernel \
                counts with the engines'",
            cpu.keepers.as_secs_f64(),
            cpu.check.as_secs_f64(),
            cpu.sandboxes.as_secs_f64()
        );
    }
    for (name, m) in [("arbiter", ours), (peer.name.as_str(), theirs)] {
        if let Some(l) = &m.latency {
            say!(
                "delay {name}'s engines did not see (time charged less time reported, per move): \
                    {}",
                l.describe()
            );
        }
    }
    if let Some(t) = &ours.turnaround {
        say!(
            "arbiter's turnaround per move (from reading a move to writing the request to the \
                other engine): {t}; {} reports none",
            peer.name
        );
    }
    let ratio = per_ply_us(theirs) / per_ply_us(ours).max(1e-9);
    let tick_ms = 1000 / procfs::ticks_per_second();
    say!(
        "own CPU per ply, {} / arbiter: {ratio:.2} (arbiter's time as getrusage gives it, in \
            microseconds; the peer's from /proc, in clock ticks of {tick_ms} ms)",
        peer.name,
    );
    match (floors.ours, floors.theirs) {
        (Ok(own), Ok(their)) => say!(
            "over the bare relay's floor in its own mode: arbiter {:.1} us per ply, {} {:.1}",
            per_ply_us(ours) - own.per_ply_us(),
            peer.name,
            per_ply_us(theirs) - their.per_ply_us()
        ),
        (Err(e), _) | (_, Err(e)) => say!("the bare relay could not be measured: {}", e),
    }
    ratio
}

/// The middle value, or the mean of the middle two of an even count.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn per_ply_us(m: &Measured) -> f64 {
    m.own_cpu.as_secs_f64() / m.played.plies.max(1) as f64 * 1e6
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_of_an_even_count_is_between_its_middle_two() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[3.06, 2.89]), (3.06 + 2.89) / 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
