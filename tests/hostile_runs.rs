//! Runs attacked as a hostile or careless user would: out-of-range settings, absurd concurrency,
//! huge schedules, two arbiters on one run folder. Real binaries, real files.

use crate::common;

use common::{arbiter_in, bundled_engine, scratch, script, stderr};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn nothing_written(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "written: {left:?}");
}

/// `arbiter match --game <game> --games 2 --engine <a> --engine <b> <rest>` in `dir`.
fn two_games(
    dir: &Path,
    game: &str,
    a: &[&str],
    b: &[&str],
    rest: &[&str],
) -> std::process::Output {
    let head = ["match", "--game", game, "--games", "2", "--engine"];
    let args = [&head[..], a, &["--engine"], b, rest].concat();
    arbiter_in(dir, &args)
}

#[test]
fn out_of_range_settings_are_refused_before_anything_is_written() {
    let dir = scratch("hostile", "ranges");
    let e = format!("cmd={}", bundled_engine());
    let base = [
        "match", "--engine", &e, "name=a", "depth=1", "--engine", &e, "name=b", "depth=1",
    ];
    for (extra, expected) in [
        (
            &["--resign", "movecount=1", "score=4294967295"][..],
            "out of range",
        ),
        (&["--resign", "movecount=0", "score=300"], "out of range"),
        (
            &["--draw", "movenumber=-4", "movecount=8", "score=10"],
            "out of range",
        ),
        (&["--concurrency", "100000"], "at most 256"),
        (
            &["--sprt", "elo0=0", "elo1=inf"],
            "elo1=inf is not a finite number",
        ),
        (
            &["--sprt", "elo0=nan", "elo1=5"],
            "elo0=nan is not a finite number",
        ),
        (
            &["--each", "timemargin=18446744073709551615"],
            "at most 3600000",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        let out = arbiter_in(&dir, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(expected), "{extra:?}: {err}");
        nothing_written(&dir);
    }
    // The autotester's adjudicate in moves, doubled to plies: no wrap to a tiny cap.
    let mit = dir.parent().unwrap().join("hostile-ranges.txt");
    std::fs::write(
        &mit,
        format!(
            "adjudicate = 9223372036854775809\nplayer = a\ninvoke = {0}\ndepth = 1\nplayer = \
            b\ninvoke = {0}\ndepth = 1\n",
            bundled_engine()
        ),
    )
    .unwrap();
    let out = arbiter_in(&dir, &["run", mit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(":1: adjudicate = 9223372036854775809 is too large"),
        "{}",
        stderr(&out)
    );
    nothing_written(&dir);
}

#[test]
fn concurrency_beyond_the_games_starts_no_idle_engines() {
    let dir = scratch("hostile", "cap");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--games",
            "2",
            "--concurrency",
            "200",
            "--engine",
            &e,
            "name=a",
            "depth=1",
            "--engine",
            &e,
            "name=b",
            "depth=1",
            "--out",
            "run",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("2 games, 2 at a time"), "{text}");
}

#[test]
fn a_huge_schedule_is_announced_before_it_starts() {
    let dir = scratch("hostile", "huge");
    let e = format!("cmd={}", bundled_engine());
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    child
        .args([
            "tournament",
            "--rounds",
            "600000",
            "--engine",
            &e,
            "name=a",
            "depth=1",
            "--engine",
            &e,
            "name=b",
            "depth=1",
            "--out",
            "run",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // Started as a shell starts a background job: SIGINT ignored, which arbiter inherits. The
    // signal below comes before the run's own handlers exist; it must still stop the run (it
    // once played on for 11 minutes).
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut child, || {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = child.spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("SIGINT did not stop the run within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        first.starts_with("warning: 1200000 games scheduled"),
        "{first}"
    );
    // Stopped before its games began (killed by the signal) or after (exit 130).
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.code() == Some(130) || status.signal() == Some(libc::SIGINT),
        "{status:?}"
    );
}

#[test]
fn a_second_arbiter_on_the_same_run_is_refused() {
    let dir = scratch("hostile", "lock");
    let e = format!("cmd={}", bundled_engine());
    // A run that takes a while: searching engines on a real clock.
    let mut first = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "tournament",
            "--rounds",
            "50",
            "--each",
            "tc=10+0.1",
            "--engine",
            &e,
            "name=a",
            "option.Style=search",
            "--engine",
            &e,
            "name=b",
            "option.Style=search",
            "--out",
            "run",
            "--quiet",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.join("run/journal.jsonl").exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = arbiter_in(&dir, &["tournament", "--resume", "run"]);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let _ = first.wait();
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("another arbiter is playing the run"), "{err}");
    // The lock ends with the process that held it.
    assert!(arbiter::tournament::lock_run_dir(&dir.join("run")).is_ok());
}

/// A newline in anything written to an engine (an option's name or value) would send it a
/// command of our choosing (`quit`, `uci`); in a name it would forge PGN tags. Refused, from the
/// command line and from a file, before anything is written.
#[test]
fn control_characters_never_reach_an_engine_or_the_pgn() {
    let dir = scratch("hostile", "newline");
    let e = format!("cmd={}", bundled_engine());
    for setting in [
        "name=evil\n[Result \"1-0\"]",
        "option.Style=search\nquit",
        "option.Style\nuci=1",
    ] {
        let out = arbiter_in(
            &dir,
            &[
                "match", "--games", "2", "--engine", &e, setting, "depth=1", "--engine", &e,
                "name=b", "depth=1", "--out", "run", "--quiet",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{setting:?}");
        assert!(
            stderr(&out).contains("control character"),
            "{}",
            stderr(&out)
        );
        nothing_written(&dir);
    }
    let file = dir.parent().unwrap().join("hostile-newline.toml");
    std::fs::write(
        &file,
        format!(
            "rounds = 1\n[[engine]]\ncmd = \"{}\"\ndepth = 1\noptions = {{ Style = \
            \"a\\nquit\" }}\n[[engine]]\ncmd = \"{}\"\ndepth = \
            1\n",
            bundled_engine(),
            bundled_engine()
        ),
    )
    .unwrap();
    let out = arbiter_in(&dir, &["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("control character"),
        "{}",
        stderr(&out)
    );
    nothing_written(&dir);
}

#[test]
fn ten_thousand_players_are_reported_in_memory_that_grows_with_the_games() {
    let dir = scratch("hostile", "many");
    // 10,000 players in a ring: 10,000 games, each player meets two others.
    let mut pgn = String::new();
    for i in 0..10_000 {
        pgn.push_str(&format!(
            "[White \"p{i}\"]\n[Black \"p{}\"]\n[Result \"1-0\"]\n\n1. g4g5 1-0\n\n",
            (i + 1) % 10_000
        ));
    }
    std::fs::write(dir.join("ring.pgn"), pgn).unwrap();
    let out = arbiter_in(&dir, &["rate", "ring.pgn", "--out", "rated"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("10000 players; no joint ratings"), "{text}");
    // One crosstable row per pairing that met, not 10,000 x 10,000 cells.
    let cross = std::fs::read_to_string(dir.join("rated/crosstable.csv")).unwrap();
    assert_eq!(cross.lines().count(), 10_001);
    let html = std::fs::metadata(dir.join("rated/report.html"))
        .unwrap()
        .len();
    assert!(html < 5_000_000, "report.html is {html} bytes");
}

/// `arbiter match ... | head -0`: the reader of stdout goes away before the first line. The run
/// plays every game and writes every file anyway (it used to abort with "failed printing to
/// stdout: Broken pipe" after one game); so does `merge`.
#[test]
fn a_closed_stdout_does_not_stop_the_run() {
    let dir = scratch("hostile", "closed-stdout");
    let e = format!("cmd={}", bundled_engine());
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the only reader at once, as `head -0` does.
        drop(child.stdout.take());
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
                return (status, err);
            }
            assert!(Instant::now() < deadline, "{args:?} did not finish");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let (status, err) = run(&[
        "match", "--game", "ultima", "--games", "8", "--engine", &e, "name=a", "--engine", &e,
        "name=b", "--each", "depth=1", "--out", "run",
    ]);
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 8);
    assert!(dir.join("run/report.html").is_file());
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 8);
    let (status, err) = run(&["rate", "run/games.pgn", "--out", "rated"]);
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(dir.join("rated/report.html").is_file());
}

/// A CECP engine that floods its handshake with `feature` lines and never says `done=1`: the
/// referee keeps each feature once (it used to keep and rescan every pair, 1.9 GB in 10 s) and
/// gives up at the handshake's time-out.
#[test]
fn an_endless_cecp_handshake_is_bounded() {
    let dir = scratch("hostile", "features");
    let flood = script(
        &dir,
        "flood.sh",
        "#!/bin/sh\nline='feature a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 a=1 \
            a=1'\nwhile :; do echo \"$line\"; done\n",
        0o755,
    );
    let e = format!("cmd={}", bundled_engine());
    let f = format!("cmd={flood}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            "--game",
            "chess",
            "--engine",
            &f,
            "proto=xboard",
            "name=flood",
            "handshake=8",
            "--engine",
            &e,
            "name=b",
            "--each",
            "depth=1",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak_kb = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the handshake never timed out");
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let rss = status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0);
            peak_kb = peak_kb.max(rss);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("within 8.0 s"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Bounded: about 6 MB here; keeping every pair reached 51 MB in these 8 s (1.9 GB in a
    // user's 10 s on a quiet machine).
    assert!(peak_kb < 25_000, "arbiter grew to {peak_kb} kB");
}

/// An engine named like a spreadsheet formula: the CSV cells holding its name start with `'`,
/// so a spreadsheet shows the text instead of running it; numbers stay numbers.
#[test]
fn csv_cells_cannot_be_spreadsheet_formulas() {
    let dir = scratch("hostile", "formula");
    let e = format!("cmd={}", bundled_engine());
    let out = two_games(
        &dir,
        "ultima",
        &[&e, "name==HYPERLINK(\"http://x\",\"y\")"],
        &[&e, "name=@b"],
        &["--each", "depth=1", "--out", "run", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for file in ["games.csv", "standings.csv", "crosstable.csv"] {
        let text = std::fs::read_to_string(dir.join("run").join(file)).unwrap();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes());
        for record in reader.records() {
            for cell in record.unwrap().iter() {
                assert!(
                    !cell.starts_with(['=', '@']),
                    "{file}: a cell a spreadsheet would run: {cell}"
                );
            }
        }
        assert!(text.contains("'=HYPERLINK"), "{file}: {text}");
    }
}

/// Engine names with `|` and `<script>`: report.md's tables keep their columns and carry no
/// HTML a Markdown renderer would run.
#[test]
fn names_cannot_break_the_markdown_report() {
    let dir = scratch("hostile", "markdown");
    let e = format!("cmd={}", bundled_engine());
    let out = two_games(
        &dir,
        "ultima",
        &[&e, "name=a|b"],
        &[&e, "name=<script>alert(1)</script>"],
        &["--each", "depth=1", "--out", "run", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = std::fs::read_to_string(dir.join("run/report.md")).unwrap();
    assert!(!md.contains("<script>"), "{md}");
    let cells = |line: &str| line.replace("\\|", "").matches('|').count();
    let header = md.lines().find(|l| l.starts_with("| rank |")).unwrap();
    for row in md
        .lines()
        .filter(|l| l.starts_with("| 1 |") || l.starts_with("| 2 |"))
    {
        assert_eq!(cells(row), cells(header), "{row}");
    }
}

/// An engine whose move holds NUL, escape and bell bytes: it loses for an unreadable move, and
/// the bytes appear in the PGN and the reports only as escapes.
#[test]
fn control_bytes_from_an_engine_stay_out_of_the_outputs() {
    let dir = scratch("hostile", "nul");
    let engine = script(
        dir.parent().unwrap(),
        "hostile-nul-engine.sh",
        "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    uci) echo 'id name nul'; \
            echo uciok ;;\n    isready) echo readyok ;;\n    go) printf 'bestmove \
            e2\\000\\033[2J\\007e4\\n' ;;\n    quit) exit 0 ;;\n  esac\ndone\n",
        0o755,
    );
    let e = format!("cmd={}", bundled_engine());
    let s = format!("cmd={engine}");
    let out = two_games(
        &dir,
        "chess",
        &[&s, "name=nul"],
        &[&e, "name=b"],
        &["--each", "depth=1", "--out", "run", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for file in ["games.pgn", "report.html", "report.md", "games.csv"] {
        let bytes = std::fs::read(dir.join("run").join(file)).unwrap();
        let bad: Vec<u8> = bytes
            .iter()
            .copied()
            .filter(|&b| b < 0x20 && b != b'\n')
            .collect();
        assert!(bad.is_empty(), "{file} holds control bytes {bad:?}");
    }
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    assert!(
        pgn.contains("\\u{1b"),
        "the escape byte is shown as an escape: {pgn}"
    );
}

/// A CECP engine that resigns loses by resignation, and the records say so (it used to be an
/// "illegal move: claimed to have no legal move").
#[test]
fn a_cecp_resignation_is_a_resignation() {
    let dir = scratch("hostile", "resign");
    let engine = script(
        dir.parent().unwrap(),
        "hostile-resign-engine.sh",
        "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    protover) echo 'feature \
            myname=\"quitter\" ping=1 usermove=1 setboard=1 variants=\"ultima\" done=1' \
            ;;\n    ping) echo \"pong $rest\" ;;\n    go|usermove) echo resign ;;\n    quit) exit \
            0 ;;\n  esac\ndone\n",
        0o755,
    );
    let e = format!("cmd={}", bundled_engine());
    let s = format!("cmd={engine}");
    let out = two_games(
        &dir,
        "ultima",
        &[&s, "proto=xboard", "name=quitter"],
        &[&e, "name=b"],
        &["--each", "depth=1", "--out", "run", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Termination \"resignation\"]").count(),
        2,
        "{pgn}"
    );
    assert!(
        pgn.contains("quitter resigned") || pgn.contains("resigned"),
        "{pgn}"
    );
    assert!(!pgn.contains("claimed to have no legal move"), "{pgn}");
}

/// A closed terminal (SIGHUP) stops a run as Ctrl-C does: reports written, exit 130, the
/// `--resume` command printed; it used to end the run without a report.
#[test]
fn a_hangup_ends_the_run_with_its_reports() {
    let dir = scratch("hostile", "hangup");
    let e = format!("cmd={}", bundled_engine());
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .args([
            "match",
            "--game",
            "ultima",
            "--games",
            "400",
            "--engine",
            &e,
            "name=a",
            "--engine",
            &e,
            "name=b",
            "--each",
            "tc=5+0.05",
            "--out",
            "run",
        ])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // A test run under `nohup` passes SIGHUP on ignored, and arbiter then keeps running as
    // `nohup` asks: the run under test must see a hangup as a terminal's closing.
    // SAFETY: signal(2) alone between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        })
    };
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The banner's last line: the run is set up and its handlers are in place soon after.
    for line in lines.by_ref() {
        if line.unwrap().contains("output:") {
            break;
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("--resume")), "{rest:?}");
    assert!(dir.join("run/report.html").is_file());
}

/// An engine's stderr reaches `--log` (marked `!`), as the README says; one that floods it
/// (4 MB at every move) is read to the end, never blocks, and fills at most about a megabyte of
/// the log.
#[test]
fn engine_stderr_reaches_the_log_bounded() {
    let dir = scratch("hostile", "stderr");
    let e = format!("cmd={}", bundled_engine());
    let out = two_games(
        &dir,
        "ultima",
        &[&e, "name=loud", "arg=--fault", "arg=stderrflood"],
        &[&e, "name=b"],
        &[
            "--each",
            "depth=1",
            "--max-plies",
            "20",
            "--log",
            "io.log",
            "--out",
            "run",
            "--quiet",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert!(
        log.lines().any(|l| l.contains(" loud ! eeee")),
        "no stderr in the log"
    );
    let size = std::fs::metadata(dir.join("io.log")).unwrap().len();
    assert!(size < 4_000_000, "the log grew to {size} bytes");
    let md = std::fs::read_to_string(dir.join("run/report.md")).unwrap();
    assert!(!md.contains("engine stall"), "{md}");
}

/// `--pgnout`, `--epdout` or `--log` onto one of the run's own files (its PGN, its journal) is
/// refused before anything is written; it used to leave a 0-byte PGN or a journal of PGN text.
#[test]
fn outputs_onto_the_runs_own_files_are_refused() {
    let dir = scratch("hostile", "own-files");
    let e = format!("cmd={}", bundled_engine());
    for (flag, path) in [
        ("--pgnout", "R/games.pgn"),
        ("--pgnout", "./R/../R/journal.jsonl"),
        ("--epdout", "R/run.json"),
        ("--log", "R/report.html"),
    ] {
        let out = two_games(
            &dir,
            "ultima",
            &[&e, "name=a"],
            &[&e, "name=b"],
            &["--each", "depth=1", "--out", "R", flag, path],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag} {path}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("a file of the run itself"),
            "{}",
            stderr(&out)
        );
        nothing_written(&dir);
    }
    // Beside the run, or under another name in it, is fine.
    let out = two_games(
        &dir,
        "ultima",
        &[&e, "name=a"],
        &[&e, "name=b"],
        &[
            "--each",
            "depth=1",
            "--out",
            "R",
            "--pgnout",
            "R/copy.pgn",
            "--quiet",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let copy = std::fs::read_to_string(dir.join("R/copy.pgn")).unwrap();
    assert_eq!(
        copy,
        std::fs::read_to_string(dir.join("R/games.pgn")).unwrap()
    );
}

/// A run folder another user made (on a shared scratch disk), or one every user may write: the
/// other user could plant links among the run's files or swap its journal, so arbiter refuses
/// to write a run there, and `adopt` refuses to seal it.
#[test]
fn a_run_folder_that_is_not_the_callers_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("hostile", "foreign-out");
    let open_to_all = dir.join("shared-out");
    std::fs::create_dir_all(&open_to_all).unwrap();
    std::fs::set_permissions(&open_to_all, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut folders = vec![(open_to_all, "every user may write in it")];
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = dir.join("their-out");
        std::fs::create_dir_all(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(12345), Some(12345)).unwrap();
        folders.push((theirs, "belongs to another user"));
    }
    let engine = bundled_engine();
    for (folder, why) in folders {
        let out = arbiter_in(
            &dir,
            &[
                "match",
                "--games",
                "2",
                "--each",
                "depth=1",
                "--out",
                folder.to_str().unwrap(),
                "--engine",
                &format!("cmd={engine}"),
                "name=a",
                "--engine",
                &format!("cmd={engine}"),
                "name=b",
            ],
        );
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains(why), "{said}");
        assert_eq!(
            std::fs::read_dir(&folder).unwrap().count(),
            0,
            "nothing written in {}",
            folder.display()
        );
        std::fs::write(folder.join("run.key"), [7u8; 32]).unwrap();
        let adopt = arbiter_in(&dir, &["adopt", folder.to_str().unwrap()]);
        assert_ne!(
            adopt.status.code(),
            Some(0),
            "adopt sealed {}",
            folder.display()
        );
        assert!(stderr(&adopt).contains(why), "{}", stderr(&adopt));
    }
}

/// Cause guarded: `--pgnout` and `--log` were opened by name, following whatever was there, so a
/// link another user planted under that name (on a shared scratch disk) made the run write into
/// the file it points to. A link there at the start is refused before anything is written; one
/// planted once the run's files exist, as a cheater waits to plant it, is not written through.
#[test]
fn a_planted_link_at_a_copy_or_a_log_is_never_written_through() {
    let dir = scratch("hostile", "planted-copy");
    let victim = dir.join("victim");
    std::fs::write(&victim, "the victim's\n").unwrap();
    let e = format!("cmd={}", bundled_engine());
    for flag in ["--pgnout", "--log"] {
        let planted = dir.join("copy");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let out = two_games(
            &dir,
            "ultima",
            &[&e, "name=a"],
            &[&e, "name=b"],
            &["--each", "depth=1", "--out", "R", flag, "copy"],
        );
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        assert!(stderr(&out).contains("is a link"), "{}", stderr(&out));
        assert!(!dir.join("R").exists(), "{flag}: the run started");
        std::fs::remove_file(&planted).unwrap();
    }
    // Planted once the run is under way: the copy is not written through it.
    let planter = {
        let (journal, planted, victim) = (
            dir.join("R/journal.jsonl"),
            dir.join("copy"),
            victim.clone(),
        );
        std::thread::spawn(move || {
            let start = Instant::now();
            while !journal.exists() && start.elapsed() < Duration::from_secs(120) {
                std::thread::sleep(Duration::from_millis(2));
            }
            let _ = std::fs::remove_file(&planted);
            std::os::unix::fs::symlink(&victim, &planted).unwrap();
        })
    };
    let out = arbiter_in(
        &dir,
        &[
            "match", "--game", "ultima", "--games", "6", "--each", "depth=2", "--out", "R",
            "--pgnout", "copy", "--engine", &e, "name=a", "--engine", &e, "name=b",
        ],
    );
    planter.join().unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the victim's\n");
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a link"), "{}", stderr(&out));
}
