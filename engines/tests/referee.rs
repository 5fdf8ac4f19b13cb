//! The referee against real processes: the bundled engine in every game, in the MIT dialect, and
//! committing each fault a real engine commits. After every run no child process may remain.

use arbiter::engine::EngineConfig;
use arbiter::game::{find_game, Outcome, Status, Termination};
use arbiter::pgn::{read_games, write_game};
use arbiter::referee::GameRecord;
use arbiter::run::run_reported as run;
use arbiter::stats::Wdl;
use arbiter::tournament::{RunFolder, RunKind, RunOptions, RunSpec};
use std::sync::Mutex;

/// Tests here count this process's children, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const ENGINE: &str = env!("CARGO_BIN_EXE_arbiter-engine");

fn engine(name: &str, settings: &[&str]) -> EngineConfig {
    let mut all = vec![format!("cmd={ENGINE}"), format!("name={name}")];
    all.extend(settings.iter().map(|s| s.to_string()));
    EngineConfig::parse(&all, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// Children of this process that still exist (zombies included), as (pid, state).
fn children() -> Vec<(u32, char)> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may contain spaces.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(me) {
            found.push((pid, fields[0].chars().next().unwrap_or('?')));
        }
    }
    found
}

/// A round robin of `games` games at concurrency 2, without pinning.
fn options(
    entry: &'static arbiter::game::GameEntry,
    engines: Vec<EngineConfig>,
    games: u64,
    max_plies: usize,
    out_dir: &std::path::Path,
) -> RunOptions {
    let mut spec = RunSpec::new(RunKind::Tournament, engines);
    spec.game = entry.id.into();
    spec.rounds = games.div_ceil(2);
    spec.games = Some(games);
    spec.concurrency = 2;
    spec.max_plies = max_plies;
    spec.event = Some("test".into());
    spec.viewer_games = 0;
    let folder = RunFolder::open(&spec, out_dir, false).unwrap_or_else(|e| panic!("{e}"));
    RunOptions::of(spec, entry, Vec::new(), folder)
}

/// Plays `games` games between the engines; returns the records and the first engine's result.
fn play(
    game: &str,
    engines: Vec<EngineConfig>,
    games: u64,
    max_plies: usize,
) -> (Vec<GameRecord>, Wdl) {
    let entry = find_game(game).unwrap();
    let out_dir = std::env::temp_dir().join(format!(
        "arbiter-referee-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let opts = options(entry, engines, games, max_plies, &out_dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut records = Vec::new();
    let outcome = runtime
        .block_on(run(opts, |p| records.push((p.game, p.record.clone()))))
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&out_dir);
    // In the schedule's order: both games of a pair share a round.
    records.sort_by_key(|(game, _)| *game);
    let records: Vec<GameRecord> = records.into_iter().map(|(_, r)| r).collect();
    assert_eq!(records.len() as u64, games, "every game is played");
    assert!(
        children().is_empty(),
        "engine processes left behind: {:?}",
        children()
    );
    (records, outcome.totals.per_engine[0])
}

/// A game between working engines ends by the rules or the referee's limits, never by a fault.
fn ended_by_the_rules(game: &str, r: &GameRecord) {
    assert!(
        !matches!(
            r.termination,
            Termination::IllegalMove
                | Termination::EngineCrash
                | Termination::EngineStall
                | Termination::TimeForfeit
        ),
        "{game}: {}",
        r.detail
    );
}

/// The PGN of a record, read back and replayed through the rules, ends as the record says.
fn replays_to_its_result(record: &GameRecord) {
    let text = write_game(record, "test", "arbiter");
    let games = read_games(&text).unwrap();
    assert_eq!(games.len(), 1);
    let pgn = &games[0];
    let entry = find_game(pgn.tag("Variant").unwrap()).unwrap();
    let mut game = entry.new_game(pgn.tag("FEN")).unwrap();
    for mv in &pgn.moves {
        game.play(mv)
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", entry.id));
    }
    assert_eq!(pgn.outcome(), Some(record.outcome));
    assert_eq!(pgn.tag("Termination"), Some(record.termination.as_str()));
    match record.termination {
        Termination::MaxPlies | Termination::Adjudication => {
            assert_eq!(game.status(), Status::Ongoing)
        }
        t if t.as_str().starts_with("engine")
            || t == Termination::IllegalMove
            || t == Termination::TimeForfeit => {}
        t => assert_eq!(game.status(), Status::Over(record.outcome, t), "{text}"),
    }
}

#[test]
fn all_five_games_are_played_to_a_valid_end() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for game in arbiter::game::game_ids() {
        let (records, _) = play(
            game,
            vec![
                engine(
                    "searcher",
                    &["depth=2", "option.Style=search", "option.Seed=3"],
                ),
                engine(
                    "random",
                    &["depth=1", "option.Style=random", "option.Seed=4"],
                ),
            ],
            2,
            160,
        );
        for r in &records {
            ended_by_the_rules(game, r);
            assert_eq!(r.game, game);
            replays_to_its_result(r);
        }
        assert_eq!(
            (records[0].white.as_str(), records[1].white.as_str()),
            ("searcher", "random")
        );
    }
}

/// Two games against a faulty engine: it loses both, the same way, and the run goes on.
fn faulty_loses_both(settings: &[&str], fault: &[&str], expected: Termination, detail: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut faulty: Vec<&str> = settings.to_vec();
    faulty.extend(fault);
    let (records, summary) = play(
        "leiserchess",
        vec![
            engine("good", &["depth=1", "option.Style=greedy"]),
            engine("faulty", &faulty),
        ],
        2,
        200,
    );
    for r in &records {
        assert_eq!(r.termination, expected, "{}", r.detail);
        let faulty_won = (r.white == "faulty") == (r.outcome == Outcome::WhiteWins);
        assert!(!faulty_won && r.outcome != Outcome::Draw, "{}", r.detail);
        assert!(r.detail.contains(detail), "{}", r.detail);
    }
    assert_eq!(summary.wins, 2);
}

/// The bundled engine speaking CECP (xboard protocol 2).
const XBOARD: [&str; 3] = ["proto=xboard", "arg=--protocol", "arg=xboard"];

#[test]
fn cecp_engines_play_full_games_of_all_five_games() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for game in arbiter::game::game_ids() {
        let mut xboard = XBOARD.to_vec();
        xboard.extend(["depth=2", "option.Style=search"]);
        let (records, _) = play(
            game,
            vec![
                engine("xboard", &xboard),
                engine("uci", &["depth=1", "option.Style=random"]),
            ],
            2,
            160,
        );
        for r in &records {
            ended_by_the_rules(game, r);
            replays_to_its_result(r);
            // Its own moves carry the depth it reported in its thinking output.
            let own = if r.white == "xboard" { 0 } else { 1 };
            assert!(
                r.moves
                    .iter()
                    .skip(own)
                    .step_by(2)
                    .all(|m| m.depth.is_some()),
                "{game}: depth missing"
            );
        }
    }
}

#[test]
fn a_cecp_engine_on_a_clock_plays_in_time() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut xboard = XBOARD.to_vec();
    xboard.push("tc=2+0.05");
    let (records, _) = play(
        "leiserchess",
        vec![
            engine("xboard", &xboard),
            engine("uci", &["tc=2+0.05", "option.Style=greedy"]),
        ],
        2,
        120,
    );
    for r in &records {
        assert_ne!(r.termination, Termination::TimeForfeit, "{}", r.detail);
    }
}

#[test]
fn cecp_engines_that_crash_or_cheat_lose() {
    let mut xboard = XBOARD.to_vec();
    xboard.push("depth=1");
    faulty_loses_both(
        &xboard,
        &["arg=--fault", "arg=crash", "arg=--fault-after", "arg=2"],
        Termination::EngineCrash,
        "exited",
    );
    faulty_loses_both(
        &xboard,
        &["arg=--fault", "arg=illegal", "arg=--fault-after", "arg=1"],
        Termination::IllegalMove,
        "illegal move 'a1a1'",
    );
    xboard.push("stall=0.5");
    faulty_loses_both(
        &xboard,
        &["arg=--fault", "arg=stall", "arg=--fault-after", "arg=1"],
        Termination::EngineStall,
        "sent no move",
    );
}

#[test]
fn an_engine_that_crashes_mid_game_loses_and_is_restarted() {
    faulty_loses_both(
        &["depth=1"],
        &["arg=--fault", "arg=crash", "arg=--fault-after", "arg=2"],
        Termination::EngineCrash,
        "exited",
    );
}

/// A run where `faulty` cannot get ready for `game`: it stops with no game scored and no
/// process left; returns the error's text.
fn run_that_cannot_start(game: &str, faulty: &[&str]) -> String {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out_dir = std::env::temp_dir().join(format!("arbiter-nostart-{}", std::process::id()));
    let engines = vec![
        engine("good", &["depth=1", "option.Style=random"]),
        engine("faulty", faulty),
    ];
    let opts = options(find_game(game).unwrap(), engines, 2, 200, &out_dir);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut played = 0;
    let err = runtime
        .block_on(run(opts, |_| played += 1))
        .err()
        .expect("a run whose engine cannot start has no result");
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(
        matches!(err, arbiter::tournament::RunError::EngineStart(_)),
        "{err}"
    );
    assert!(
        err.to_string().contains("'faulty' could not start"),
        "{err}"
    );
    assert_eq!(played, 0, "no game is scored");
    assert!(children().is_empty(), "left behind: {:?}", children());
    err.to_string()
}

#[test]
fn an_engine_that_never_sends_uciok_stops_the_run_without_a_result() {
    let err = run_that_cannot_start(
        "leiserchess",
        &["depth=1", "handshake=0.5", "arg=--fault", "arg=nouciok"],
    );
    assert!(err.contains("did not answer 'uci'"), "{err}");
}

#[test]
fn an_engine_that_stalls_under_a_depth_limit_loses_by_stall() {
    faulty_loses_both(
        &["depth=3", "stall=0.5"],
        &["arg=--fault", "arg=stall", "arg=--fault-after", "arg=1"],
        Termination::EngineStall,
        "no move within 0.5 s",
    );
}

#[test]
fn an_illegal_move_loses() {
    faulty_loses_both(
        &["depth=1"],
        &["arg=--fault", "arg=illegal", "arg=--fault-after", "arg=1"],
        Termination::IllegalMove,
        "illegal move 'a1a1'",
    );
}

#[test]
fn garbage_instead_of_a_move_loses() {
    faulty_loses_both(
        &["depth=1"],
        &["arg=--fault", "arg=garbage"],
        Termination::IllegalMove,
        "unreadable move: malformed move '@@junk@@'",
    );
}

#[test]
fn overrunning_the_clock_loses_on_time() {
    faulty_loses_both(
        &["tc=0.4+0"],
        &["arg=--fault", "arg=overrun", "arg=--fault-after", "arg=1"],
        Termination::TimeForfeit,
        "ran out of time",
    );
}

#[test]
fn an_engine_that_ignores_the_variant_is_refused() {
    let err = run_that_cannot_start("ultima", &["depth=1", "arg=--fault", "arg=novariant"]);
    assert!(err.contains("did not confirm the variant"), "{err}");
}

#[test]
fn an_engine_that_ignores_quit_is_killed() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // `play` checks that no process is left.
    play(
        "leiserchess",
        vec![
            engine("good", &["depth=1", "option.Style=random"]),
            engine(
                "stubborn",
                &[
                    "depth=1",
                    "option.Style=random",
                    "arg=--fault",
                    "arg=ignorequit",
                ],
            ),
        ],
        2,
        30,
    );
}

#[test]
fn the_mit_dialect_plays_a_match_against_standard_uci() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (records, _) = play(
        "leiserchess",
        vec![
            engine(
                "mit",
                &[
                    "proto=leiserchess",
                    "arg=--dialect",
                    "arg=leiserchess",
                    "tc=4+0.05",
                    "option.style=2",
                ],
            ),
            engine("uci", &["tc=4+0.05", "option.Style=greedy"]),
        ],
        4,
        120,
    );
    for r in &records {
        assert!(
            matches!(
                r.termination,
                Termination::KingZapped
                    | Termination::Repetition
                    | Termination::MoveRule
                    | Termination::MaxPlies
            ),
            "{}",
            r.detail
        );
        replays_to_its_result(r);
        // The MIT player's microsecond times were understood.
        let mit_moves = r
            .moves
            .iter()
            .enumerate()
            .filter(|(i, _)| (i % 2 == 0) == (r.white == "mit"));
        assert!(mit_moves
            .clone()
            .skip(1)
            .any(|(_, m)| m.reported_us.is_some()));
    }
}

/// The CPUs a process may run on, as /proc writes them ("3", "0-1").
fn cpus_allowed(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

#[test]
fn with_affinity_each_game_and_its_engines_share_one_cpu() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let allowed = cpus_allowed(std::process::id()).unwrap();
    let ncpus: usize = allowed
        .split(',')
        .map(|range| match range.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum();
    let out_dir = std::env::temp_dir().join(format!("arbiter-affinity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let engines = vec![
        engine("a", &["option.Style=random", "depth=1"]),
        engine("b", &["option.Style=random", "depth=1"]),
    ];
    let mut opts = options(find_game("leiserchess").unwrap(), engines, 8, 40, &out_dir);
    opts.spec.affinity = arbiter::tournament::Affinity::Pinned(true);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The engines are watched while the run plays, from a thread of their own: results may
    // reach the run's callback only after the last game (a loaded machine), when the engines
    // have already quit.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut masks: Vec<String> = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                for (pid, state) in children() {
                    if state != 'Z' {
                        masks.extend(cpus_allowed(pid));
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            masks
        })
    };
    runtime
        .block_on(run(opts, |_| {}))
        .unwrap_or_else(|e| panic!("{e}"));
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut masks = watcher.join().unwrap();
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(!masks.is_empty(), "engines were seen");
    for m in &masks {
        assert!(
            m.parse::<usize>().is_ok(),
            "an engine may run on '{m}', not on one CPU (the run may use {allowed})"
        );
    }
    masks.sort();
    masks.dedup();
    assert_eq!(
        masks.len(),
        ncpus.min(2),
        "the two workers' engines are on distinct CPUs: {masks:?}"
    );
    assert_eq!(
        cpus_allowed(std::process::id()).unwrap(),
        allowed,
        "the referee's own main thread is not pinned"
    );
    assert!(children().is_empty(), "no engine left: {:?}", children());
}
