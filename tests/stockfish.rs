//! arbiter against a real chess engine: Debian's stockfish package (`/usr/games/stockfish`),
//! which `.ci/run` installs and runs these tests for with `--ignored`. Without stockfish they
//! fail, saying so; they never pass unrun.

use crate::common;

use common::{arbiter_in, scratch, stderr, stdout};

fn stockfish() -> String {
    let path = std::env::var("STOCKFISH").unwrap_or_else(|_| "/usr/games/stockfish".into());
    assert!(
        std::path::Path::new(&path).is_file(),
        "no stockfish at {path}: install Debian's stockfish package (as .ci/run does) or set \
            STOCKFISH"
    );
    path
}

fn book() -> String {
    format!("{}/openings/chess.txt", env!("CARGO_MANIFEST_DIR"))
}

/// The run in `dir/run` played `games` games, each ended by the rules: no illegal move, crash or
/// stall the referee had to rule on.
fn assert_every_game_ended_by_the_rules(dir: &std::path::Path, games: usize) {
    let mut reader = csv::Reader::from_path(dir.join("run/games.csv")).unwrap();
    let endings: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[8].to_string())
        .collect();
    let by_rules = [
        "checkmate",
        "stalemate",
        "repetition",
        "move rule",
        "insufficient material",
        "max plies",
    ];
    assert!(
        endings.len() == games && endings.iter().all(|e| by_rules.contains(&e.as_str())),
        "{endings:?}"
    );
}

#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn stockfish_against_itself_ends_every_game_by_the_rules() {
    let sf = stockfish();
    let dir = scratch("stockfish", "self");
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--game",
            "chess",
            "--games",
            "20",
            "--concurrency",
            "2",
            "--openings",
            &book(),
            "--random-openings",
            "--engine",
            &format!("cmd={sf}"),
            "name=sf-a",
            "nodes=300",
            "--engine",
            &format!("cmd={sf}"),
            "name=sf-b",
            "nodes=300",
            "--out",
            "run",
            "--quiet",
        ],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    // No dispute: the referee never had to step in for an illegal move, a crash or a stall.
    assert_every_game_ended_by_the_rules(&dir, 20);
    // Played in their sandboxes (bubblewrap, which .ci/run installs), with their limits.
    let report = std::fs::read_to_string(dir.join("run/report.md")).unwrap();
    assert!(
        report.contains("sandbox: every engine in its own namespaces")
            && report.contains("limits by cgroup"),
        "{report}"
    );
}

/// Chess960 with stockfish, told `UCI_Chess960`: games from Chess960 starts (Shredder-FEN
/// castling rights) end by the rules, every move the engine sent legal by the Chess960 rules
/// (castling written as the king taking its rook), and some games castle.
#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn stockfish_plays_chess960_by_its_rules() {
    let sf = stockfish();
    let dir = scratch("stockfish", "chess960");
    std::fs::write(
        dir.join("frc.epd"),
        "nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w GBgb -\n\
         rkrbbqnn/pppppppp/8/8/8/8/PPPPPPPP/RKRBBQNN w CAca -\n\
         bbrnkrqn/pppppppp/8/8/8/8/PPPPPPPP/BBRNKRQN w FCfc -\n\
         qnrbkrbn/pppppppp/8/8/8/8/PPPPPPPP/QNRBKRBN w FCfc -\n",
    )
    .unwrap();
    let engine = |name: &str| {
        [
            format!("cmd={sf}"),
            format!("name={name}"),
            "nodes=400".into(),
        ]
    };
    let mut args: Vec<String> = [
        "match",
        "--game",
        "chess960",
        "--games",
        "8",
        "--concurrency",
        "2",
        "--openings",
        "frc.epd",
        "--out",
        "run",
        "--quiet",
        "--engine",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(engine("sf-a"));
    args.push("--engine".into());
    args.extend(engine("sf-b"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = arbiter_in(&dir, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_every_game_ended_by_the_rules(&dir, 8);
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    assert!(pgn.contains(" O-O"), "no game castled: {pgn}");
}

#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn an_sprt_tells_more_nodes_from_fewer() {
    let sf = stockfish();
    let dir = scratch("stockfish", "sprt");
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--game",
            "chess",
            "--games",
            "600",
            "--concurrency",
            "2",
            "--openings",
            &book(),
            "--random-openings",
            "--engine",
            &format!("cmd={sf}"),
            "name=n400",
            "nodes=400",
            "--engine",
            &format!("cmd={sf}"),
            "name=n100",
            "nodes=100",
            "--sprt",
            "elo0=0",
            "elo1=50",
            "--out",
            "run",
            "--quiet",
        ],
    );
    let text = stdout(&out);
    assert!(text.contains("H1 accepted"), "{text}{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0));
    eprintln!(
        "{}",
        text.lines().find(|l| l.starts_with("SPRT")).unwrap_or("")
    );
}

/// `bench --peer` with arbiter itself as the peer (it reads the fastchess command line the bench
/// plays): both runs must play the same games to the same end, and each harness's own CPU per ply
/// must be measured (a zero would mean the zombie's times were not read).
#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn the_peer_bench_plays_one_match_under_both_harnesses() {
    let sf = stockfish();
    let dir = scratch("stockfish", "peer");
    let me = env!("CARGO_BIN_EXE_arbiter");
    // The bench against `twin`, its stdout once it has exited cleanly.
    let bench = |twin: &str, games: &str, runs: &str| -> String {
        let peer = format!("{twin}={me}");
        let args = [
            "bench",
            "--peer",
            &peer,
            "--peer-games",
            games,
            "--peer-runs",
            runs,
            "--stockfish",
            &sf,
        ];
        let out = arbiter_in(&dir, &args);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
        text
    };
    // As fastchess (`-pgnout file=F`) and as cutechess-cli (`-pgnout F`).
    for twin in ["twin", "cutechess-twin"] {
        let text = bench(twin, "6", "1");
        let row = |name: &str| -> Vec<String> {
            text.lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no row {name}: {text}"))
                .split_whitespace()
                .map(String::from)
                .collect()
        };
        let (ours, theirs) = (row("arbiter"), row(twin));
        assert_eq!(ours[1], "6", "{text}");
        // Games, plies and the score: one match, played twice.
        assert_eq!(ours[1..3], theirs[1..3], "{text}");
        assert_eq!(ours[7], theirs[7], "{text}");
        for r in [&ours, &theirs] {
            let cpu: f64 = r[3].parse().unwrap();
            let engines: f64 = r[5].parse().unwrap();
            assert!(cpu > 0.0 && engines > 0.0, "{text}");
        }
        assert!(
            text.contains(&format!("own CPU per ply, {twin} / arbiter:")),
            "{text}"
        );
        // The floor: the same games relayed with nothing checked, its CPU and plies measured.
        let relay: Vec<String> = text
            .lines()
            .find(|l| l.starts_with("bare relay "))
            .unwrap_or_else(|| panic!("no bare relay row: {text}"))
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(relay[2], "6", "{text}");
        let (plies, per_ply): (u64, f64) = (relay[3].parse().unwrap(), relay[5].parse().unwrap());
        assert!(plies >= 6 && per_ply > 0.0, "{text}");
        assert!(
            text.contains("over the bare relay's floor in its own mode: arbiter "),
            "{text}"
        );
        // Each harness is set against a floor played in its own mode, and the modes are named.
        let modes = text
            .lines()
            .find(|l| l.starts_with("modes: arbiter "))
            .unwrap_or_else(|| panic!("no modes line: {text}"));
        let floors = text.matches("\nbare relay ").count();
        let alike = modes == format!("modes: arbiter pinned, {twin} pinned")
            || modes == format!("modes: arbiter unpinned, {twin} unpinned");
        assert_eq!(floors, if alike { 1 } else { 2 }, "{text}");
        // The first floor is arbiter's, in arbiter's mode.
        let ours_mode = match modes.starts_with("modes: arbiter pinned") {
            true => "(pinned: ",
            false => "(unpinned: ",
        };
        let first_floor = text
            .lines()
            .find(|l| l.starts_with("bare relay "))
            .unwrap_or_default();
        assert!(
            first_floor.contains(ours_mode),
            "arbiter's floor is in its mode: {text}"
        );
        // The harness processes the kernel counts with the engines are named, the sandboxes'
        // start among them, and arbiter's turnaround per move is given.
        assert!(text.contains("its engines' sandboxes ("), "{text}");
        let turnaround = text
            .lines()
            .find(|l| l.starts_with("arbiter's turnaround per move"))
            .unwrap_or_else(|| panic!("no turnaround: {text}"));
        assert!(
            turnaround.contains("median ") && turnaround.contains(" p99 "),
            "{turnaround}"
        );
    }
    // Repeated: every run's table, then the ratios run by run with their median.
    let text = bench("twin", "2", "2");
    assert!(
        text.contains("run 1 of 2:") && text.contains("run 2 of 2:"),
        "{text}"
    );
    // Each run decides its own mode (`auto` pins where the machine is quiet at its start): a
    // floor per mode among its harnesses.
    let floors: usize = text
        .lines()
        .filter(|l| l.starts_with("modes: "))
        .map(|m| {
            match m == "modes: arbiter unpinned, twin unpinned"
                || m == "modes: arbiter pinned, twin pinned"
            {
                true => 1,
                false => 2,
            }
        })
        .sum();
    assert_eq!(text.matches("\nbare relay ").count(), floors, "{text}");
    assert_eq!(text.matches("\nmodes: ").count(), 2, "{text}");
    let summary = text
        .lines()
        .find(|l| l.starts_with("own CPU per ply, twin / arbiter, run by run: "))
        .unwrap_or_else(|| panic!("no summary: {text}"));
    let (by_run, median) = summary
        .split_once("run by run: ")
        .and_then(|(_, rest)| rest.split_once(" (median "))
        .unwrap_or_else(|| panic!("{summary}"));
    let ratios: Vec<f64> = by_run.split(", ").map(|r| r.parse().unwrap()).collect();
    assert_eq!(ratios.len(), 2, "{summary}");
    // Of two runs, the mean of both (each shown rounded to 0.01).
    let median: f64 = median.trim_end_matches(')').parse().unwrap();
    assert!(
        (median - (ratios[0] + ratios[1]) / 2.0).abs() <= 0.011,
        "{summary}"
    );
}

/// `bench --peer` under load, as users run it: with other work running (a loop of compiles,
/// another sandboxed arbiter match, a busy loop), a clock, and every CPU in use. The
/// table says how many games each harness lost on time, the load is named, and nothing of it
/// outlives the bench.
#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn the_peer_bench_under_load_counts_games_lost_on_time_and_ends_its_load() {
    let sf = stockfish();
    let dir = scratch("stockfish", "peer-load");
    let me = env!("CARGO_BIN_EXE_arbiter");
    let peer = format!("twin={me}");
    let args = [
        "bench",
        "--peer",
        &peer,
        "--peer-games",
        "4",
        "--peer-load",
        "3",
        "--peer-settle",
        "0",
        "--peer-tc",
        "5+0.05",
        "--peer-concurrency",
        "2",
        "--stockfish",
        &sf,
    ];
    let out = arbiter_in(&dir, &args);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "load: 3 processes of other work: 1 loops of `cc -O2` compiles, 1 sandboxed \
            arbiter matches, 1 busy loops"
        ),
        "{text}"
    );
    assert!(
        text.contains("-concurrency 2") && text.contains("tc=5+0.05"),
        "{text}"
    );
    let header = text.lines().find(|l| l.starts_with("harness ")).unwrap();
    assert!(header.ends_with("on time   load avg"), "{header}");
    for name in ["arbiter", "twin"] {
        let row: Vec<&str> = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(row[1], "4", "{text}");
        // A count of games, as the tools' PGN Termination tags say them.
        assert!(row[8].parse::<usize>().is_ok(), "{text}");
        // The least and the most load average read while that harness played.
        let (least, most) = row[9].split_once('-').unwrap_or_else(|| panic!("{text}"));
        let (least, most): (f64, f64) = (least.parse().unwrap(), most.parse().unwrap());
        assert!(least <= most, "{text}");
    }
    // The delay arbiter's engines did not see, read from its journal: every engine move of
    // stockfish reports a time, so the count is the plies less the book's.
    let delay = text
        .lines()
        .find(|l| l.starts_with("delay arbiter's engines did not see "))
        .unwrap_or_else(|| panic!("no delay line: {text}"));
    let counted: usize = delay
        .rsplit_once(" of ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{delay}"));
    assert!(counted > 0, "{delay}");
    // The load's processes are gone: no other arbiter match or compile is left running.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| {
            let line = String::from_utf8_lossy(c);
            line.contains("load-match-") || line.contains("load.c")
        })
        .count();
    assert_eq!(left, 0, "the load outlived the bench");
}

#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn stockfish_passes_the_compliance_check_as_fastchess_runs_it() {
    let sf = stockfish();
    let dir = scratch("stockfish", "compliance");
    let out = arbiter_in(&dir, &["--compliance", &sf]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("Engine passed all compliance checks."),
        "{text}"
    );
    assert_eq!(text.matches("Passed step").count(), 17, "{text}");
}

/// fastchess's closing block names each engine's threads and hash, from the line where it sets
/// them and otherwise from the defaults the engine offered (stockfish: `Threads` 1, `Hash` 16),
/// as fishtest's and OpenBench's readers of it expect; only an engine without such an option
/// is `NULL`.
#[test]
#[ignore = "needs stockfish: .ci/run installs it and runs this with --ignored"]
fn a_fastchess_line_shows_the_threads_and_hash_stockfish_offers() {
    let sf = stockfish();
    let dir = scratch("stockfish", "offered");
    let cmd = format!("cmd={sf}");
    let out = arbiter_in(
        &dir,
        &[
            "-engine",
            &cmd,
            "name=a",
            "-engine",
            &cmd,
            "name=b",
            "option.Hash=8",
            "-each",
            "nodes=2000",
            "-rounds",
            "1",
            "-games",
            "2",
        ],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("Results of a vs b (2000 nodes, 1t, 16MB - 8MB):"),
        "{text}"
    );
}
