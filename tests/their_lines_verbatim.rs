//! Command lines from cutechess-cli's and fastchess's own manuals and READMEs (and lines in the
//! shapes their users write from those manuals), run verbatim with real engines standing in for
//! theirs: Debian's stockfish under the names the lines use (`Engine1.exe`, `glaurung`, ...),
//! Debian's fairy-stockfish where the line wants a CECP engine (`sloppy`, `Atak32.exe`).
//! Each must play, counting games as the tool it was written for counts them, or be refused
//! with a sentence. Lines whose limits take hours (their `tc=300+5` SPRT) are checked from the
//! banner, left to start playing, then interrupted as a user would (Ctrl-C: exit 130, resumable).
//!
//! Needs stockfish and fairy-stockfish: `.ci/run` installs them and runs this with --ignored.

use crate::common;

use common::{scratch, stderr, stdout};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const STOCKFISH: &str = "/usr/games/stockfish";
const FAIRY: &str = "/usr/games/fairy-stockfish";

/// A book of a few chess openings, as EPD.
const EPD: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq -
rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pppp1ppp/4p3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
";

/// A folder laid out as the lines expect: the engines under their names in it (and in
/// `C:\atak`, a folder name Linux allows), `glaurung` and `stockfish` on PATH, the books, and
/// arbiter itself under the names of both tools.
fn workplace(name: &str) -> common::Scratch {
    for engine in [STOCKFISH, FAIRY] {
        assert!(
            Path::new(engine).is_file(),
            "{engine} is missing: .ci/run installs it (apt-get install stockfish fairy-stockfish)"
        );
    }
    let dir = scratch("verbatim", name);
    let link = |target: &str, at: PathBuf| std::os::unix::fs::symlink(target, at).unwrap();
    for n in ["Engine1.exe", "Engine2.exe", "Engine3.exe"] {
        link(STOCKFISH, dir.join(n));
    }
    link(FAIRY, dir.join("sloppy"));
    std::fs::create_dir(dir.join("C:\\atak")).unwrap();
    link(FAIRY, dir.join("C:\\atak").join("Atak32.exe"));
    std::fs::create_dir(dir.join("bin")).unwrap();
    link(STOCKFISH, dir.join("bin/glaurung"));
    link(STOCKFISH, dir.join("bin/stockfish"));
    let arbiter = env!("CARGO_BIN_EXE_arbiter");
    link(arbiter, dir.join("bin/fastchess"));
    link(arbiter, dir.join("bin/cutechess-cli"));
    link(arbiter, dir.join("bin/arbiter"));
    for book in ["book.epd", "UHO_Lichess_4852_v1.epd"] {
        std::fs::write(dir.join(book), EPD).unwrap();
    }
    dir
}

fn command(dir: &Path, program: &str, line: &str) -> Command {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(dir.join("bin").join(program));
    cmd.args(line.split_whitespace())
        .current_dir(dir)
        .env("PATH", path);
    cmd
}

fn run(dir: &Path, program: &str, line: &str) -> Output {
    command(dir, program, line).output().unwrap()
}

/// Games in the run's journal (the one folder under `reports/`).
fn journal_games(dir: &Path) -> usize {
    let Ok(runs) = std::fs::read_dir(dir.join("reports")) else {
        return 0;
    };
    runs.filter_map(Result::ok)
        .filter_map(|r| std::fs::read_to_string(r.path().join("journal.jsonl")).ok())
        .map(|j| j.lines().count())
        .sum()
}

/// A line that plays to its end: exit 0 (or 3, an SPRT undecided at its last game), `games`
/// games, counted by the tool's rule.
fn plays(program: &str, line: &str, games: usize, reading: &str) {
    let dir = workplace(&format!("{program}-{games}-{}", line.len()));
    let out = run(&dir, program, line);
    let text = stdout(&out);
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "{program} {line}\n{text}{}",
        stderr(&out)
    );
    assert!(text.contains(reading), "{program} {line}: {text}");
    assert!(
        text.contains(&format!(", {games} games")),
        "{program} {line}: {text}"
    );
    assert_eq!(journal_games(&dir), games, "{program} {line}");
}

/// A line too long to play here: its banner must announce `games` games under `reading`, the
/// engines must start and play (a game is under way), and Ctrl-C stops it resumably.
fn starts(program: &str, line: &str, games: u64, reading: &str) {
    let dir = workplace(&format!("{program}-long-{}", line.len()));
    let mut child = command(&dir, program, line)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reader = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in reader.lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut banner = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !banner.contains("output:") && Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_secs(1)) {
            banner.push_str(&l);
            banner.push('\n');
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
            panic!("{program} {line}: exited {status}\n{banner}{err}");
        }
    }
    assert!(
        banner.contains(&format!(", {games} games,")),
        "{program} {line}: {banner}"
    );
    assert!(banner.contains(reading), "{program} {line}: {banner}");
    // Playing: both engines answer for a few seconds without the run failing.
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        child.try_wait().unwrap().is_none(),
        "{program} {line}: stopped early"
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    // Everything printed up to the exit: the reader ends when the pipe closes.
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(status.code(), Some(130), "{program} {line}: {rest:?}");
    assert!(
        rest.iter().any(|l| l.contains("--resume")),
        "{program} {line}: {rest:?}"
    );
}

/// A line of theirs arbiter cannot mean: exit 2 and a sentence naming what is at fault.
fn refused(program: &str, line: &str, why: &str) {
    let dir = workplace(&format!("{program}-refused-{}", line.len()));
    let out = run(&dir, program, line);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{program} {line}: {}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains(why),
        "{program} {line}: {}",
        stderr(&out)
    );
    assert_eq!(journal_games(&dir), 0);
}

/// A fastchess line asking for `concurrency` games at once under a clock: fastchess refuses it
/// on a machine with fewer CPUs, and so does arbiter; with `-force-concurrency` it starts.
fn starts_where_the_cpus_allow(line: &str, concurrency: usize, games: u64) {
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    if cpus < concurrency {
        refused("fastchess", line, "add -force-concurrency");
        starts(
            "fastchess",
            &format!("{line} -force-concurrency"),
            games,
            FAST,
        );
    } else {
        starts("fastchess", line, games, FAST);
    }
}

const CUTE: &str = "read as a cutechess-cli command line";
const FAST: &str = "read as a fastchess command line";

/// cutechess-cli's manual (EXAMPLES) and README.
#[test]
#[ignore = "needs stockfish and fairy-stockfish: .ci/run installs them and runs this with \
    --ignored"]
fn the_cutechess_manual_examples() {
    // "Play ten games between two Sloppy engines": 10 games, the second renamed.
    starts(
        "cutechess-cli",
        "-engine cmd=sloppy -engine cmd=sloppy -each proto=xboard tc=40/60 -rounds 10",
        10,
        CUTE,
    );
    // The same, typed to arbiter: proto=xboard shows whose line it is.
    starts(
        "arbiter",
        "-engine cmd=sloppy -engine cmd=sloppy -each proto=xboard tc=40/60 -rounds 10",
        10,
        "it uses proto=xboard",
    );
    // "Play a single game between Atak and Glaurung ... 40 moves in 1:30 + 1".
    starts(
        "cutechess-cli",
        "-engine name=Atak cmd=Atak32.exe dir=C:\\atak proto=xboard -engine cmd=glaurung proto=uci \
            option.Threads=1 -each tc=40/1:30+1",
        1,
        CUTE,
    );
    // Four engines from cutechess's engines.json (conf=) with a Polyglot book: not readable
    // here, and said so.
    refused(
        "cutechess-cli",
        "-engine conf=Fruit -engine conf=Crafty -engine conf=Stockfish -engine conf=Sloppy -each \
            tc=4 book=book.bin -games 2 -rounds 10 -repeat",
        "conf=",
    );
}

/// fastchess's README and manual (EXAMPLES, -quick).
#[test]
#[ignore = "needs stockfish and fairy-stockfish: .ci/run installs them and runs this with \
    --ignored"]
fn the_fastchess_manual_examples() {
    let readme = "-engine cmd=Engine1.exe name=Engine1 -engine cmd=Engine2.exe name=Engine2 -each \
        tc=10+0.1 -rounds 200 -repeat -concurrency 4";
    starts_where_the_cpus_allow(readme, 4, 400);
    // Typed to arbiter, nothing in it is only cutechess's: fastchess's reading, said.
    starts(
        "arbiter",
        &format!("{readme} -force-concurrency"),
        400,
        FAST,
    );
    // ... and typed to cutechess-cli, whose -repeat reuses openings without adding games.
    starts("cutechess-cli", readme, 200, CUTE);
    starts_where_the_cpus_allow(
        "-engine cmd=Engine1.exe name=Engine1 -engine cmd=Engine2.exe name=Engine2 -openings \
            file=book.epd format=epd order=random -each tc=60+0.6 option.Hash=64 -rounds 200 \
            -repeat -concurrency 4",
        4,
        400,
    );
    // The SPRT example: up to 100000 rounds of 2 games, its PGN into a folder not there yet.
    starts_where_the_cpus_allow(
        "-engine cmd=Engine1.exe name=Engine1 option.Threads=1 nodes=2000000 -engine \
            cmd=Engine2.exe name=Engine2 option.Threads=2 nodes=1000000 -openings \
            file=UHO_Lichess_4852_v1.epd format=epd order=random -each tc=300+5 -resign \
            movecount=3 score=600 -draw movenumber=34 movecount=8 score=20 -sprt elo0=0 elo1=2 \
            alpha=0.05 beta=0.05 -rounds 100000 -concurrency 3 -pgnout notation=san nodes=true \
            file=./games/sprt.pgn",
        3,
        200_000,
    );
    starts(
        "fastchess",
        "-quick cmd=Engine1.exe cmd=Engine2.exe book=book.epd",
        50_000,
        FAST,
    );
}

/// Lines in the shapes users write from those manuals, short enough to play to the end here.
#[test]
#[ignore = "needs stockfish and fairy-stockfish: .ci/run installs them and runs this with \
    --ignored"]
fn lines_users_write_play_to_the_end() {
    // A cutechess-cli script from an engine's repository (quotes taken by the shell), its
    // result-table format, round policy, time margin and `min fi` PGN words; nodes for its 5+1.
    plays(
        "cutechess-cli",
        "-tournament gauntlet -concurrency 2 -engine name=New dir=. cmd=./Engine1.exe \
         timemargin=1000 proto=uci -engine name=Old dir=. cmd=./Engine2.exe timemargin=1000 \
         proto=uci -each tc=inf nodes=300 -recover -event Avalanche_testing -draw movenumber=30 \
         movecount=20 score=20 -resign movecount=10 score=800 -resultformat per-color \
         -openings order=random policy=round file=./book.epd format=epd -rounds 2 \
         -pgnout match.pgn min fi",
        2,
        CUTE,
    );
    // The same engine twice, names from the program (fastchess: stockfish, stockfish_2).
    plays(
        "arbiter",
        "-engine cmd=stockfish -engine cmd=stockfish -each tc=inf nodes=300 -rounds 1",
        2,
        FAST,
    );
    plays(
        "fastchess",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -each nodes=400 -rounds 2 -repeat",
        4,
        FAST,
    );
    // -rounds without -games: fastchess plays two games a round, cutechess-cli one.
    plays(
        "fastchess",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -each nodes=300 -rounds 3",
        6,
        FAST,
    );
    plays(
        "cutechess-cli",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -each proto=uci nodes=300 -rounds 3",
        3,
        CUTE,
    );
    plays(
        "arbiter",
        "-engine cmd=Engine1.exe name=new -engine cmd=Engine2.exe name=base -each proto=uci \
            st=0.05 -games 2 -rounds 2 -pgnout file=./games/x.pgn",
        4,
        "it uses -pgnout file=",
    );
    plays(
        "arbiter",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -each proto=uci depth=3 -games 2 -repeat \
            -pgnout out.pgn",
        2,
        "it uses -pgnout <file>",
    );
    plays(
        "cutechess-cli",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -engine cmd=Engine3.exe -each proto=uci \
            nodes=300 -tournament gauntlet -games 2 -pgnout g.pgn",
        4,
        CUTE,
    );
    plays(
        "fastchess",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -engine cmd=Engine3.exe -each nodes=300 \
            -tournament roundrobin -rounds 1",
        6,
        FAST,
    );
    plays(
        "cutechess-cli",
        "-engine cmd=Engine1.exe -engine cmd=Engine2.exe -each proto=uci nodes=400 -maxmoves 30 \
            -draw movenumber=20 movecount=4 score=10 -resign movecount=3 score=600 -rounds 4 \
            -epdout final.epd -variant standard",
        4,
        CUTE,
    );
    plays(
        "fastchess",
        "-engine cmd=Engine1.exe name=Engine1 -engine cmd=Engine2.exe name=Engine2 -openings \
            file=book.epd format=epd order=random -each tc=40/0:01+0.01 option.Hash=16 -rounds 2 -repeat -concurrency 2 -log file=fastchess.log",
        4,
        FAST,
    );
}
