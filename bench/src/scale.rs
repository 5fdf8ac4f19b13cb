//! `arbiter bench --scale`: what a split run of a million games costs its last task, `merge` and
//! `--resume`, in wall time, CPU and peak memory, without playing a million games.
//!
//! Two real tasks of an N-game split run start and are interrupted once each has a few hundred
//! games; their journals are then filled to N games from those real games (each copied to the
//! schedule's places of its colours, sealed with the owner's key) and every block of pairs but
//! the last is claimed as the tasks would have claimed it. Task 1 is then started again with its
//! own command line: it finds its journal, claims the last block, plays it and writes its
//! reports, as the last task of a long run does. Then the two folders are merged, and the merged
//! run is resumed. Each of the three is a process of its own, measured by `wait4`.

use super::Failure;
use arbiter::proof::Key;
use arbiter::tournament::claims::{Blocks, Claims, CLAIMS_DIR, CLAIM_LOG, IDENTITY_FILE};
use arbiter::tournament::journal::{self, Entry, JOURNAL_FILE};
use arbiter::tournament::runner::Schedule;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Games each of the two real tasks plays before it is interrupted: the games copied.
const REAL_GAMES: usize = 300;

/// One process's cost.
struct Cost {
    wall: Duration,
    cpu: Duration,
    peak_kb: i64,
}

impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>8.2} s wall {:>8.2} s CPU {:>7.1} MB",
            self.wall.as_secs_f64(),
            self.cpu.as_secs_f64(),
            self.peak_kb as f64 / 1024.0
        )
    }
}

/// Measures every size in `sizes` (games of the split run) and prints one table.
pub fn scale_bench(sizes: &[u64]) -> Result<(), Failure> {
    let me = std::env::current_exe().map_err(|e| Failure::bad_input(e.to_string()))?;
    let engine = me
        .parent()
        .map(|d| d.join("arbiter-engine"))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            Failure::bad_input("bench needs arbiter-engine next to arbiter: build the workspace")
        })?;
    println!(
        "{:>9}  {:<40} {:<40} {:<40}",
        "games", "last task (plays the last block)", "merge", "--resume of the merged run"
    );
    for &games in sizes {
        if games < 4 * REAL_GAMES as u64 || games % 2 != 0 {
            return Err(Failure::bad_input(format!(
                "--scale {games}: give an even number of games, at least {}",
                4 * REAL_GAMES
            )));
        }
        let dir =
            std::env::temp_dir().join(format!("arbiter-scale-{}-{games}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| Failure::bad_input(e.to_string()))?;
        let measured = measure(&me, &engine, &dir, games);
        let _ = std::fs::remove_dir_all(&dir);
        let (task, merge, resume) = measured?;
        println!("{games:>9}  {task:<40} {merge:<40} {resume:<40}");
    }
    println!(
        "(a measured process's peak memory counts the bench's own at its start: {:.1} MB here)",
        own_peak_kb() as f64 / 1024.0
    );
    Ok(())
}

fn measure(
    me: &Path,
    engine: &Path,
    dir: &Path,
    games: u64,
) -> Result<(Cost, Cost, Cost), Failure> {
    let split = dir.join("split");
    let line = |shard: &str| -> Vec<String> {
        let mut args: Vec<String> = ["match", "--game", "leiserchess", "--quiet", "--games"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(games.to_string());
        for (name, style) in [("a", "search"), ("b", "greedy")] {
            args.push("--engine".into());
            args.push(format!("cmd={}", engine.display()));
            args.push(format!("name={name}"));
            args.push("depth=1".into());
            args.push(format!("option.Style={style}"));
        }
        args.extend(["--out".into(), split.display().to_string()]);
        args.extend(["--shard".into(), shard.to_string()]);
        args
    };
    let tasks = ["shard-1-of-2", "shard-2-of-2"];
    let mut started = Vec::new();
    for shard in ["1/2", "2/2"] {
        let child = Command::new(me)
            .args(line(shard))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Failure::bad_input(format!("cannot start {}: {e}", me.display())))?;
        started.push(child);
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while tasks
        .iter()
        .any(|t| count_lines(&split.join(t).join(JOURNAL_FILE)) < REAL_GAMES)
    {
        if Instant::now() > deadline {
            for c in &mut started {
                let _ = c.kill();
            }
            return Err(Failure::bad_input(
                "the two real tasks played too few games in 300 s",
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for child in &mut started {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    for mut child in started {
        let _ = child.wait();
    }
    fill(&split, &tasks, games)?;
    let task = measured(Command::new(me).args(line("1/2")))?;
    let merged = dir.join("merged");
    let merge = measured(Command::new(me).arg("merge").arg(&merged).arg(&split))?;
    let resume = measured(
        Command::new(me)
            .args(["match", "--quiet", "--resume"])
            .arg(&merged),
    )?;
    let kept = count_lines(&merged.join(JOURNAL_FILE));
    if kept as u64 != games {
        return Err(Failure::bad_input(format!(
            "the merged run holds {kept} games of {games}"
        )));
    }
    Ok((task, merge, resume))
}

/// The run's identity, its claims forgotten (every pair's and the next one's), so that the
/// filled journals' blocks can be claimed again.
fn forget_claims(claims_dir: &Path) -> Result<String, Failure> {
    let io = |what: &Path, e: &dyn std::fmt::Display| {
        Failure::bad_input(format!("{}: {e}", what.display()))
    };
    let identity =
        std::fs::read_to_string(claims_dir.join(IDENTITY_FILE)).map_err(|e| io(claims_dir, &e))?;
    for entry in std::fs::read_dir(claims_dir).map_err(|e| io(claims_dir, &e))? {
        let path = entry.map_err(|e| io(claims_dir, &e))?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if name.starts_with('p') || name == "next" {
            std::fs::remove_file(&path).map_err(|e| io(&path, &e))?;
        }
    }
    Ok(identity)
}

/// The number of openings the run's book holds (0: the start position).
fn book_len(spec: &arbiter::tournament::RunSpec) -> Result<usize, Failure> {
    let Some(path) = spec.openings.as_deref() else {
        return Ok(0);
    };
    let entry = arbiter::game::find_game(&spec.game)
        .ok_or_else(|| Failure::bad_input("the run's game is unknown"))?;
    let format = arbiter::tournament::launch::book_format(spec, path);
    arbiter::tournament::openings::load_book_as(path, format, entry, spec.book_plies)
        .map(|book| book.len())
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))
}

/// Fills the two tasks' journals to `games` from the games they played, and claims every block
/// of pairs but the last, alternately for each task.
fn fill(split: &Path, tasks: &[&str; 2], games: u64) -> Result<(), Failure> {
    let io = |what: &Path, e: &dyn std::fmt::Display| {
        Failure::bad_input(format!("{}: {e}", what.display()))
    };
    let identity = forget_claims(&split.join(CLAIMS_DIR))?;
    let spec = arbiter::tournament::RunSpec::load(&split.join(tasks[0]))
        .ok()
        .ok_or_else(|| Failure::bad_input("the real tasks left no run.json"))?;
    let schedule = spec.schedule(book_len(&spec)?);
    // Real games by their opening and the colours they were played with (an even game and an
    // odd one of a pair have the engines the other way round).
    let mut played: HashMap<(usize, u64), Vec<Entry>> = HashMap::new();
    for task in tasks {
        let path = split.join(task).join(JOURNAL_FILE);
        journal::read(&path, |e| {
            let opening = schedule.pairing(e.index).opening;
            played.entry((opening, e.index % 2)).or_default().push(e)
        })
        .map_err(|e| io(&path, &e))?;
    }
    let pairs = games / 2;
    let blocks = Blocks::of_run(pairs, false);
    let mut keys = Vec::new();
    let mut writers = Vec::new();
    let mut claims = Vec::new();
    for task in tasks {
        let folder = split.join(task);
        for name in [JOURNAL_FILE, CLAIM_LOG] {
            let _ = std::fs::remove_file(folder.join(name));
        }
        let file = std::fs::File::create(folder.join(JOURNAL_FILE)).map_err(|e| io(&folder, &e))?;
        keys.push(Key::for_journal(&folder.join(JOURNAL_FILE)).map_err(Failure::bad_input)?);
        writers.push(std::io::BufWriter::new(file));
        claims.push(
            Claims::open(split, task, &identity, Duration::from_secs(60), blocks)
                .map_err(Failure::bad_input)?,
        );
    }
    let last = blocks.around(pairs - 1).start;
    let mut start = 0;
    let mut copied = 0usize;
    let mut which = 0;
    let mut written = [0u64; 2];
    while start < last {
        let block = claims[which]
            .claim(start)
            .map_err(|e| io(split, &e))?
            .ok_or_else(|| Failure::bad_input(format!("pair {start} was claimed already")))?;
        for game in block.start * 2..block.end * 2 {
            let pairing = schedule.pairing(game);
            let kind = played.get(&(pairing.opening, game % 2)).ok_or_else(|| {
                Failure::bad_input(format!(
                    "the real tasks played no game of opening {} with these colours",
                    pairing.opening + 1
                ))
            })?;
            let mut entry = kind[copied % kind.len()].clone();
            copied += 1;
            entry.index = game;
            entry.record.round = pairing.round;
            let line = journal::sealed_line(&entry, &keys[which], written[which])
                .map_err(|e| io(split, &e))?;
            written[which] += 1;
            writers[which].write_all(&line).map_err(|e| io(split, &e))?;
        }
        start = block.end;
        which = 1 - which;
    }
    for w in writers {
        w.into_inner()
            .map_err(|e| io(split, &e.error().to_string()))?
            .sync_all()
            .map_err(|e| io(split, &e))?;
    }
    Ok(())
}

/// The lines of a file, read a piece at a time: this process's own peak memory is the floor of
/// every child's it measures (Linux counts the parent's peak in a child's `ru_maxrss`), so it
/// never holds a journal.
fn count_lines(path: &PathBuf) -> usize {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return 0;
    };
    let mut buffer = vec![0u8; 1 << 16];
    let mut lines = 0;
    while let Ok(n) = file.read(&mut buffer) {
        if n == 0 {
            break;
        }
        lines += memchr::memchr_iter(b'\n', &buffer[..n]).count();
    }
    lines
}

/// This process's peak resident memory, in KB.
fn own_peak_kb() -> i64 {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss
}

/// Runs `command` to its end and measures it: wall time, CPU (user and system) and peak
/// resident memory of the process itself.
fn measured(command: &mut Command) -> Result<Cost, Failure> {
    let start = Instant::now();
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Failure::bad_input(format!("cannot start: {e}")))?;
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr;
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = std::io::Read::read_to_string(s, &mut text);
        }
        text
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 on our own child, which std has not reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    let said = said.join().unwrap_or_default();
    if waited != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(Failure::bad_input(format!(
            "{command:?} failed (status {status}): {}",
            said.trim()
        )));
    }
    let time =
        |t: libc::timeval| Duration::from_micros(t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64);
    Ok(Cost {
        wall,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        peak_kb: usage.ru_maxrss,
    })
}
