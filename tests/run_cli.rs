//! `arbiter match` and `arbiter tournament` from the command line, with the bundled engine as a
//! real process: results, reports, SPRT exit codes, resume after `kill -9`, bad input.

use crate::common;

use common::{arbiter, arbiter_in, assert_exit, bundled_engine as engine, stderr, stdout};
use std::path::Path;
use std::process::Command;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("test", name)
}

fn engine_args<'a>(cmd: &'a str, name: &'a str, style: &'a str) -> Vec<String> {
    vec![
        "--engine".into(),
        format!("cmd={cmd}"),
        format!("name={name}"),
        format!("option.Style={style}"),
    ]
}

/// A command line: `head`, the engine `cmd` once for each (name, style), then `tail`.
fn line(head: &[&str], cmd: &str, engines: &[(&str, &str)], tail: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = head.iter().map(|a| a.to_string()).collect();
    for (name, style) in engines {
        args.extend(engine_args(cmd, name, style));
    }
    args.extend(tail.iter().map(|a| a.to_string()));
    args
}

fn run(args: Vec<String>) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    arbiter(&refs)
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn a_match_prints_results_and_writes_every_report() {
    let dir = scratch("match");
    let book = dir.join("book.txt");
    std::fs::write(&book, "# two openings\ng4g5 e6e7\ng3h4\n").unwrap();
    let pgn = dir.join("copy.pgn");
    let args = line(
        &[
            "match",
            "--game",
            "leiserchess",
            "--games",
            "4",
            "--concurrency",
            "2",
        ],
        &engine(),
        &[("searcher", "search"), ("random", "random")],
        &[
            "--each",
            "depth=2",
            "--openings",
            book.to_str().unwrap(),
            "--out",
            dir.join("run").to_str().unwrap(),
            "--pgnout",
            pgn.to_str().unwrap(),
        ],
    );
    let out = run(args);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("Result of searcher vs random:"), "{text}");
    assert_eq!(text.matches("Finished game").count(), 4);
    for file in [
        "games.csv",
        "games.pgn",
        "standings.csv",
        "crosstable.csv",
        "report.md",
        "report.html",
        "journal.jsonl",
    ] {
        assert!(dir.join("run").join(file).is_file(), "{file}");
    }
    let games = arbiter::pgn::read_games(&std::fs::read_to_string(&pgn).unwrap()).unwrap();
    assert_eq!(games.len(), 4);
    assert_eq!(
        games
            .iter()
            .filter(|g| g.moves.starts_with(&["g4g5".into(), "e6e7".into()]))
            .count(),
        2
    );
    assert_eq!(
        games
            .iter()
            .filter(|g| g.moves.first().map(String::as_str) == Some("g3h4"))
            .count(),
        2
    );
    let rows = csv_rows(&dir.join("run/games.csv"));
    assert_eq!(rows.len(), 4);
}

#[test]
fn a_round_robin_ranks_engines_by_strength_and_its_reports_agree() {
    let dir = scratch("rr");
    let e = engine();
    let args = line(
        &[
            "tournament",
            "--game",
            "leiserchess",
            "--rounds",
            "3",
            "--concurrency",
            "2",
        ],
        &e,
        &[
            ("random", "random"),
            ("search", "search"),
            ("greedy", "greedy"),
        ],
        &[
            "--each",
            "depth=2",
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ],
    );
    let out = run(args);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let standings = csv_rows(&dir.join("standings.csv"));
    let order: Vec<&str> = standings.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(order, ["search", "greedy", "random"]);
    let games: u64 = standings.iter().map(|r| r[5].parse::<u64>().unwrap()).sum();
    assert_eq!(games, 2 * 18, "each of the 18 games counts for two engines");
    // The HTML shows the same standings, in the same order, with the same numbers.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let table = &html[html.find("id=\"standings\"").unwrap()..];
    let mut at = 0;
    for row in &standings {
        let found = table[at..].find(&format!(
            "<td>{}</td><td>{}</td><td>{}</td>",
            row[0], row[1], row[2]
        ));
        at += found.unwrap_or_else(|| panic!("{row:?} not in the HTML in order"));
    }
    assert!(html.contains("<svg"), "the ratings chart");
    let cross = csv_rows(&dir.join("crosstable.csv"));
    assert_eq!(cross.len(), 3);
    // What a reader looks for, all in the one file.
    for expected in [
        "id=\"engines\"",
        &format!("<code>{e}</code>"),
        "Style=search",
        "depth=2",
        "by arbiter ",
        "href=\"games.pgn\"",
        "href=\"games.csv\"",
        "id=\"los\"",
        "id=\"crosstable\"",
        "centred so the field averages 0",
        "Elo against the field over the run",
        ">games played<",
        "id=\"endings\"",
        "It differs from the difference of their standings ratings",
    ] {
        assert!(
            html.contains(expected),
            "{expected} missing from report.html"
        );
    }
    assert!(
        !html.contains("src=\"http") && !html.contains("<script src"),
        "self-contained: the viewer's script is in the page"
    );
}

#[test]
fn games_csv_and_pgn_name_the_round_and_the_opening_of_the_schedule() {
    let dir = scratch("columns");
    let book = dir.join("book.txt");
    // A comment and a blank line first: opening numbers count openings, not file lines.
    std::fs::write(&book, "# book\n\ng4g5 e6e7\ng3h4\n").unwrap();
    let args = line(
        &["tournament", "--rounds", "3", "--concurrency", "2"],
        &engine(),
        &[("a", "random"), ("b", "random"), ("c", "random")],
        &[
            "--each",
            "depth=1",
            "--openings",
            book.to_str().unwrap(),
            "--out",
            dir.join("run").to_str().unwrap(),
            "--quiet",
        ],
    );
    let out = run(args);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut reader = csv::Reader::from_path(dir.join("run/games.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows = csv_rows(&dir.join("run/games.csv"));
    assert_eq!(rows.len(), 18);
    let openings = ["g4g5 e6e7", "g3h4"];
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    let mut rounds_in_pgn: Vec<u64> = pgn
        .lines()
        .filter_map(|l| l.strip_prefix("[Round \""))
        .map(|r| r.trim_end_matches("\"]").parse().unwrap())
        .collect();
    for row in &rows {
        let id: u64 = row[column("id")].parse().unwrap();
        let pair = (id - 1) / 2;
        // Three pairings per round, one game pair each; openings taken in book order.
        let round = pair / 3 + 1;
        assert_eq!(row[column("pair")], (pair + 1).to_string(), "{row:?}");
        assert_eq!(row[column("round")], round.to_string(), "{row:?}");
        let opening = ((round - 1) % 2) as usize;
        assert_eq!(row[column("opening")], (opening + 1).to_string(), "{row:?}");
        assert_eq!(row[column("opening_text")], openings[opening], "{row:?}");
    }
    let mut rounds_in_csv: Vec<u64> = rows
        .iter()
        .map(|r| r[column("round")].parse().unwrap())
        .collect();
    rounds_in_pgn.sort();
    rounds_in_csv.sort();
    assert_eq!(
        rounds_in_pgn, rounds_in_csv,
        "PGN Round tags are rounds, not game ids"
    );
}

fn sprt_exit(first: &str, second: &str, games: u32, elo1: u32) -> (Option<i32>, String) {
    let dir = scratch(&format!("sprt-{first}-{games}"));
    let args = line(
        &[
            "match",
            "--game",
            "leiserchess",
            "--games",
            &games.to_string(),
            "--concurrency",
            "2",
        ],
        &engine(),
        &[(first, first), (second, second)],
        &[
            "--each",
            "depth=2",
            "--sprt",
            "elo0=0",
            &format!("elo1={elo1}"),
            "alpha=0.05",
            "beta=0.05",
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ],
    );
    let out = run(args);
    if games > 4 {
        // The report shows the LLR over the run on numbered, named axes.
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        for expected in [">game pairs<", ">log-likelihood ratio<", ">H1 2.94<", ">0<"] {
            assert!(
                html.contains(expected),
                "{expected} missing from the SPRT chart"
            );
        }
    }
    (out.status.code(), stdout(&out))
}

#[test]
fn sprt_accepts_h1_for_the_stronger_engine_and_h0_for_the_weaker() {
    let (code, text) = sprt_exit("search", "random", 200, 50);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("H1 accepted"), "{text}");
    let (code, text) = sprt_exit("random", "search", 200, 50);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("H0 accepted"), "{text}");
    // It stopped early rather than playing all 200 games.
    let played: usize = text
        .split("Result of")
        .nth(1)
        .and_then(|t| t.split(", ").nth(1))
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(999);
    assert!(played < 200, "{text}");
}

#[test]
fn two_game_pairs_never_decide_an_sprt() {
    // Two pairs, even both lost, are weak evidence: the old normal approximation gave LLR -13.5
    // here and accepted H0; the exact likelihood ratio stays within the bounds (exit 3).
    for (first, second) in [("random", "search"), ("search", "random")] {
        let (code, text) = sprt_exit(first, second, 4, 100);
        assert_eq!(code, Some(3), "{text}");
        assert!(!text.contains("accepted"), "{text}");
    }
}

#[test]
fn a_killed_run_resumes_to_exactly_the_missing_games() {
    let dir = scratch("resume");
    let args = line(
        &[
            "tournament",
            "--game",
            "leiserchess",
            "--rounds",
            "30",
            "--concurrency",
            "2",
        ],
        &engine(),
        &[("a", "greedy"), ("b", "random"), ("c", "search")],
        &[
            "--each",
            "depth=1",
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
            "--max-plies",
            "300",
        ],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .spawn()
        .unwrap();
    let journal = dir.join("journal.jsonl");
    // Wait for a few games, then kill -9. Games reach the journal a sync window (half a second)
    // at a time: the run is long enough for several windows.
    let started = std::time::Instant::now();
    loop {
        let lines = std::fs::read_to_string(&journal)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if lines >= 5 || started.elapsed().as_secs() > 60 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = std::fs::read_to_string(&journal).unwrap().lines().count();
    assert!(before < 180, "the run was cut short ({before} games)");
    let out = arbiter(&["tournament", "--resume", dir.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let mut indices: Vec<u64> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["index"].as_u64().unwrap())
        .collect();
    let total = indices.len();
    indices.sort_unstable();
    indices.dedup();
    assert_eq!(indices.len(), total, "no game was played twice");
    assert_eq!(
        indices,
        (0..180).collect::<Vec<u64>>(),
        "exactly the schedule's games"
    );
    assert_eq!(csv_rows(&dir.join("games.csv")).len(), 180);
    // The same tournament played without interruption ends with the same standings (the
    // bundled engines' play depends only on the position and the seed).
    let whole = scratch("whole");
    let mut uninterrupted = args.clone();
    let at = uninterrupted.iter().position(|a| a == "--out").unwrap();
    uninterrupted[at + 1] = whole.to_str().unwrap().to_string();
    let out = run(uninterrupted);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("standings.csv")).unwrap(),
        std::fs::read_to_string(whole.join("standings.csv")).unwrap()
    );
    // Starting the same run again without --resume is refused.
    let again = run(args);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("--resume"));
}

/// Resuming a run with nothing left to play (every game played, or its SPRT decided) writes its
/// reports again and starts no engine: the engines may be gone by then (a run copied off the
/// cluster, an engine rebuilt). One with games left still refuses a missing program.
#[test]
fn a_finished_run_resumes_to_its_reports_with_its_engines_gone() {
    let dir = scratch("finished");
    let copy = dir.join("engine-copy");
    std::fs::copy(engine(), &copy).unwrap();
    let e = copy.to_str().unwrap().to_string();
    let played = |name: &str, extra: &[&str]| {
        let out_dir = dir.join(name);
        let mut tail = vec![
            "--each",
            "depth=2",
            "--quiet",
            "--out",
            out_dir.to_str().unwrap(),
        ];
        tail.extend(extra);
        let out = run(line(
            &["match", "--game", "leiserchess", "--concurrency", "2"],
            &e,
            &[("search", "search"), ("random", "random")],
            &tail,
        ));
        (out_dir, out)
    };
    let (whole, out) = played("whole", &["--games", "4"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (decided, out) = played(
        "decided",
        &[
            "--games",
            "200",
            "--sprt",
            "elo0=0",
            "elo1=50",
            "alpha=0.05",
            "beta=0.05",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "H1 accepted: {}", stdout(&out));
    let games = |d: &Path| csv_rows(&d.join("games.csv")).len();
    assert!(games(&decided) < 200, "the SPRT stopped early");
    let (unfinished, out) = played("unfinished", &["--games", "4"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = unfinished.join("journal.jsonl");
    let first = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(&journal, first.lines().next().unwrap().to_string() + "\n").unwrap();

    std::fs::remove_file(&copy).unwrap();
    for (folder, code) in [(&whole, 0), (&decided, 0)] {
        let reports = ["report.md", "report.html", "standings.csv", "games.pgn"];
        let before: Vec<Vec<u8>> = reports
            .iter()
            .map(|r| std::fs::read(folder.join(r)).unwrap())
            .collect();
        for r in reports {
            std::fs::remove_file(folder.join(r)).unwrap();
        }
        let out = arbiter(&["match", "--resume", folder.to_str().unwrap()]);
        assert_exit(&out, code);
        for (r, before) in reports.iter().zip(&before) {
            let after = std::fs::read(folder.join(r)).unwrap();
            assert!(
                &after == before,
                "{r} of {} written again as it was",
                folder.display()
            );
        }
    }
    let out = arbiter(&["match", "--resume", unfinished.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("no such program"), "{said}");
    assert!(
        said.contains(&format!("{}: ", unfinished.join("run.json").display())),
        "the saved settings are named: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap().lines().count(),
        1,
        "nothing was played"
    );
}

#[test]
fn bad_run_input_is_refused_with_exit_code_2() {
    let e = engine();
    let cmd = format!("cmd={e}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["match", "--engine", &cmd, "depth=1"],
            "a match takes exactly two engines",
        ),
        (
            vec![
                "match", "--engine", &cmd, "depth=x", "--engine", &cmd, "depth=1", "name=b",
            ],
            "depth=x",
        ),
        (
            vec![
                "match",
                "--engine",
                "cmd=/no/such/engine",
                "depth=1",
                "--engine",
                &cmd,
                "depth=1",
            ],
            "no such program",
        ),
        (
            // Named alike on purpose (two unnamed engines of one program are renamed).
            vec![
                "match", "--engine", &cmd, "name=a", "depth=1", "--engine", &cmd, "name=a",
                "depth=1",
            ],
            "two engines are named",
        ),
        (
            vec![
                "match",
                "--engine",
                &cmd,
                "depth=1",
                "name=a",
                "--engine",
                &cmd,
                "depth=1",
                "--draw",
                "movecount=3",
            ],
            "--draw",
        ),
        (
            vec![
                "match", "--engine", &cmd, "depth=1", "name=a", "--engine", &cmd, "depth=1",
                "--sprt", "elo0=5", "elo1=1",
            ],
            "--sprt",
        ),
        (
            vec![
                "tournament",
                "--engine",
                &cmd,
                "depth=1",
                "name=a",
                "--engine",
                &cmd,
                "depth=1",
                "--name",
                "../escape",
            ],
            "run name",
        ),
        (
            vec![
                "tournament",
                "--engine",
                &cmd,
                "depth=1",
                "name=a",
                "--engine",
                &cmd,
                "depth=1",
                "--format",
                "swiss",
            ],
            "--format",
        ),
        (
            vec!["tournament", "--resume", "/no/such/run"],
            "cannot resume",
        ),
    ];
    let dir = scratch("refused");
    for (args, expected) in cases {
        let out = arbiter_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A refused run writes nothing.
    assert!(
        !dir.join("reports").exists(),
        "a refused run left files behind"
    );
}

#[test]
fn an_illegal_book_line_names_file_and_line() {
    let dir = scratch("book");
    let book = dir.join("bad.txt");
    std::fs::write(&book, "g4g5 e6e7\ng4g5 g4g5\n").unwrap();
    let e = engine();
    let out = arbiter(&[
        "match",
        "--game",
        "leiserchess",
        "--openings",
        book.to_str().unwrap(),
        "--out",
        dir.join("run").to_str().unwrap(),
        "--engine",
        &format!("cmd={e}"),
        "depth=1",
        "name=a",
        "--engine",
        &format!("cmd={e}"),
        "depth=1",
        "name=b",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("bad.txt:2: ply 2: illegal move 'g4g5'"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
    assert!(
        !dir.join("run").exists(),
        "nothing written for a refused run"
    );
}

#[test]
fn ctrl_c_keeps_finished_games_kills_engines_and_prints_the_resume_command() {
    let dir = scratch("sigint");
    let engines_dir = dir.join("engines");
    std::fs::create_dir_all(&engines_dir).unwrap();
    let engines_dir = engines_dir.canonicalize().unwrap();
    let e = engine();
    let mut args: Vec<String> = [
        "tournament",
        "--game",
        "leiserchess",
        "--rounds",
        "50",
        "--concurrency",
        "2",
    ]
    .map(String::from)
    .to_vec();
    for (name, style) in [("a", "greedy"), ("b", "random")] {
        args.extend(engine_args(&e, name, style));
        args.push(format!("dir={}", engines_dir.display()));
    }
    args.extend(
        [
            "--each",
            "tc=5+0.05",
            "--out",
            dir.join("run").to_str().unwrap(),
            "--quiet",
        ]
        .map(String::from),
    );
    let child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let journal = dir.join("run/journal.jsonl");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&journal)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 3
        && started.elapsed().as_secs() < 60
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let text = stdout(&out);
    assert!(
        text.contains(" tournament --resume ") && text.contains("Continue with: "),
        "{text}"
    );
    let kept = std::fs::read_to_string(&journal).unwrap().lines().count();
    assert!((3..100).contains(&kept), "{kept} games kept");
    assert!(std::fs::read_to_string(dir.join("run/report.md"))
        .unwrap()
        .contains("interrupted"));
    // No engine survives the interruption.
    std::thread::sleep(std::time::Duration::from_millis(200));
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if std::fs::read_link(entry.path().join("cwd")).ok().as_deref()
            == Some(engines_dir.as_path())
        {
            panic!("engine left running: {:?}", entry.path());
        }
    }
}

/// One game is no game pair: the pentanomial figure says so, not that no game was played.
#[test]
fn a_single_game_says_no_pair_is_complete() {
    let dir = scratch("one-game");
    let e = engine();
    let args = line(
        &["match", "--games", "1", "--each", "depth=1", "--no-book"],
        &e,
        &[("a", "search"), ("b", "greedy")],
        &["--out", dir.join("run").to_str().unwrap()],
    );
    let out = run(args);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains("(pentanomial none: no game pair complete yet)"),
        "{said}"
    );
    assert!(!said.contains("no games played yet"), "{said}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Engines at a fixed depth from a small book replay the same games: a 3-opening book over 12
/// games gives 6 distinct ones (3 openings, 2 colours). The summary, the report and `rate`
/// say so and warn that the intervals count the repeats as independent evidence.
#[test]
fn repeated_games_are_counted_and_warned_of() {
    let dir = scratch("repeats");
    let text = std::fs::read_to_string(common::book("leiserchess")).unwrap();
    let book: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(3)
        .collect();
    std::fs::write(dir.join("book3.txt"), book.join("\n") + "\n").unwrap();
    let e = engine();
    let args = line(
        &[
            "match",
            "--games",
            "12",
            "--openings",
            "book3.txt",
            "--out",
            "r",
        ],
        &e,
        &[("deep", "search"), ("shallow", "greedy")],
        &["--each", "depth=1"],
    );
    let out = common::succeed_in(&dir, &args);
    let said = stdout(&out);
    assert!(
        said.contains("Repeated games: 6 of 12 games distinct; 6 repeat an earlier game")
            && said.contains("too narrow"),
        "{said}"
    );
    let report = std::fs::read_to_string(dir.join("r/report.md")).unwrap();
    assert!(report.contains("Distinct games: 6 of 12."), "{report}");
    let rated = arbiter_in(&dir, &["rate", "--check", "r/games.pgn"]);
    assert_exit(&rated, 0);
    assert!(
        stderr(&rated).contains("Repeated games: 6 of 12 games distinct"),
        "{}",
        stderr(&rated)
    );
    // From the whole book every game is its own, and nothing is said.
    let whole = common::book("leiserchess");
    let args = line(
        &[
            "match",
            "--games",
            "4",
            "--openings",
            &whole,
            "--out",
            "whole",
        ],
        &e,
        &[("deep", "search"), ("shallow", "greedy")],
        &["--each", "depth=1"],
    );
    let out = common::succeed_in(&dir, &args);
    assert!(!stdout(&out).contains("Repeated"), "{}", stdout(&out));
    let report = std::fs::read_to_string(dir.join("whole/report.md")).unwrap();
    assert!(report.contains("Distinct games: 4 of 4."), "{report}");
}
