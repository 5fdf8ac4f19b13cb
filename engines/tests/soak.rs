//! A soak run: a round robin where some engines crash, stall, send garbage, flood their output
//! or leave children behind, chosen at random with fixed seeds. Everything must finish, every
//! game must end properly, the records must agree, no process may remain, memory must stay flat.
//! `SOAK_GAMES` sets the size (default 200, the CI size).

use arbiter::engine::EngineConfig;
use arbiter::game::{find_game, Termination};
use arbiter::pgn::read_games;
use arbiter::run::run_reported as run;
use arbiter::tournament::{journal, RunFolder, RunKind, RunOptions, RunSpec};
use std::path::Path;

const ENGINE: &str = env!("CARGO_BIN_EXE_arbiter-engine");

/// Processes whose working folder is `dir`: every engine of this test runs there.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).ok().as_deref() == Some(dir) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(String::from_utf8_lossy(&cmd).replace('\0', " "));
        }
    }
    found
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_faulty_round_robin_finishes_cleanly() {
    let games: u64 = std::env::var("SOAK_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let root = std::env::temp_dir().join(format!("arbiter-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let engines_dir = root.join("engines");
    std::fs::create_dir_all(&engines_dir).unwrap();
    let engines_dir = engines_dir.canonicalize().unwrap();
    let engine = |name: &str, extra: &[&str]| {
        let mut s = vec![
            format!("cmd={ENGINE}"),
            format!("name={name}"),
            format!("dir={}", engines_dir.display()),
            "depth=1".into(),
            "stall=0.5".into(),
            "handshake=2".into(),
        ];
        s.extend(extra.iter().map(|x| x.to_string()));
        EngineConfig::parse(&s, &[]).unwrap()
    };
    let engines = vec![
        engine("greedy", &["option.Style=greedy"]),
        engine("random", &["option.Style=random"]),
        engine(
            "chaos-a",
            &[
                "option.Style=greedy",
                "arg=--fault",
                "arg=random",
                "arg=--fault-rate",
                "arg=0.03",
                "arg=--fault-seed",
                "arg=7",
            ],
        ),
        engine(
            "chaos-b",
            &[
                "option.Style=random",
                "arg=--fault",
                "arg=random",
                "arg=--fault-rate",
                "arg=0.03",
                "arg=--fault-seed",
                "arg=11",
            ],
        ),
        engine(
            "forker",
            &["option.Style=random", "arg=--fault", "arg=fork"],
        ),
    ];
    let out = root.join("run");
    let mut spec = RunSpec::new(RunKind::Tournament, engines);
    spec.rounds = games.div_ceil(20);
    spec.games = Some(games);
    spec.concurrency = 2;
    spec.seed = 3;
    spec.max_plies = 120;
    spec.event = Some("soak".into());
    spec.viewer_games = 0;
    let folder = RunFolder::open(&spec, &out, false).unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions::of(spec, find_game("leiserchess").unwrap(), Vec::new(), folder);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut rss = Vec::new();
    let outcome = runtime
        .block_on(run(opts, |p| {
            if p.done == games / 4 || p.done == games {
                rss.push(rss_kib());
            }
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    drop(runtime);
    assert_eq!(outcome.totals.games, games, "every game finished");

    // Faults happened, and every game ended for a stated reason.
    let t = &outcome.totals.terminations;
    let faults: u64 = ["engine crash", "engine stall", "illegal move"]
        .iter()
        .filter_map(|k| t.get(*k))
        .sum();
    assert!(faults > 0, "no fault was injected: {t:?}");
    assert!(t.keys().all(|k| Termination::parse(k).is_some()), "{t:?}");
    eprintln!("soak: {games} games, terminations {t:?}, RSS {rss:?} KiB");

    // Journal, CSV and PGN agree game for game.
    let mut entries = Vec::new();
    // Files list games by number, whatever order they finished in.
    journal::read_in_order(&out.join("journal.jsonl"), |e| entries.push(e)).unwrap();
    let mut reader = csv::Reader::from_path(out.join("games.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let csv: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let pgn = read_games(&std::fs::read_to_string(out.join("games.pgn")).unwrap()).unwrap();
    assert_eq!(
        (entries.len(), csv.len(), pgn.len()),
        (games as usize, games as usize, games as usize)
    );
    for ((e, row), g) in entries.iter().zip(&csv).zip(&pgn) {
        let r = &e.record;
        assert_eq!(row[col("id")].parse::<u64>().unwrap(), e.index + 1);
        assert_eq!(
            (&row[col("white")], &row[col("black")]),
            (r.white.as_str(), r.black.as_str())
        );
        assert_eq!(
            (&row[col("result")], &row[col("termination")]),
            (r.outcome.as_str(), r.termination.as_str())
        );
        assert_eq!(row[col("plies")].parse::<usize>().unwrap(), r.plies());
        assert_eq!(g.tag("White"), Some(r.white.as_str()));
        assert_eq!(g.outcome(), Some(r.outcome));
        assert_eq!(g.moves.len(), r.plies());
    }

    // No engine, and no child an engine started, outlives the run.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        processes_in(&engines_dir).is_empty(),
        "left behind: {:?}",
        processes_in(&engines_dir)
    );
    // The referee's memory does not grow with the games played.
    assert!(
        rss[1] < rss[0] + 30_000,
        "RSS grew from {} to {} KiB",
        rss[0],
        rss[1]
    );
    let _ = std::fs::remove_dir_all(&root);
}
