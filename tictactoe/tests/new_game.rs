//! A game added from outside arbiter, through the public registry only, goes through every
//! path a built-in game does: perft, replay, show --svg, a match with real engine processes,
//! its own endings in the journal, PGN, CSV and report, and `rate` reading them back.

use std::path::PathBuf;
use std::process::{Command, Output};

fn arbiter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tictactoe-arbiter"))
        .args(args)
        .output()
        .expect("tictactoe-arbiter starts")
}

fn stdout_of(args: &[&str]) -> String {
    let out = arbiter(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arbiter-tictactoe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The number of games of every length is known (255,168 in all): the leaves at depth 9 are
/// the games that fill the board, and depth 6 counts 54,720 positions because no game ends
/// before X's third mark.
#[test]
fn perft_counts_the_known_tree() {
    let out = stdout_of(&["perft", "tictactoe", "9"]);
    let counts: Vec<&str> = out.lines().collect();
    assert_eq!(
        counts,
        [
            "perft 1 9",
            "perft 2 72",
            "perft 3 504",
            "perft 4 3024",
            "perft 5 15120",
            "perft 6 54720",
            "perft 7 148176",
            "perft 8 200448",
            "perft 9 127872"
        ]
    );
}

#[test]
fn replay_ends_games_by_the_games_own_endings_and_refuses_moves_after() {
    let won = stdout_of(&["replay", "tictactoe", "a1", "a2", "b1", "b2", "c1"]);
    assert!(
        won.ends_with("fen 3/OO1/XXX b\nresult 1-0 three in a row\n"),
        "{won}"
    );
    let full = stdout_of(&[
        "replay",
        "tictactoe",
        "b2",
        "a1",
        "a2",
        "c2",
        "c1",
        "a3",
        "b1",
        "b3",
        "c3",
    ]);
    assert!(full.ends_with("result 1/2-1/2 full board\n"), "{full}");
    let late = arbiter(&["replay", "tictactoe", "a1", "a2", "b1", "b2", "c1", "c2"]);
    assert_eq!(late.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&late.stderr).contains("ply 6: illegal move 'c2'"));
}

#[test]
fn show_draws_the_board_from_the_games_own_drawing() {
    let dir = scratch("show");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("board.svg");
    let text = stdout_of(&[
        "show",
        "tictactoe",
        "--svg",
        svg.to_str().unwrap(),
        "b2",
        "a1",
    ]);
    assert!(text.starts_with("...\n.X.\nO..\n"), "{text}");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        picture.matches("<rect x=").count(),
        9,
        "one square per cell"
    );
    assert!(picture.contains(r#"data-square="b2""#) && picture.contains(r#"data-square="a1""#));
    // The game's own figures: X is White's, O Black's, each once on the board and in the legend.
    assert_eq!(picture.matches(r#"data-side="white""#).count(), 2);
    assert_eq!(picture.matches(r#"data-side="black""#).count(), 2);
    assert!(picture.contains(r#"class="last" data-square="a1""#));
    let listed = stdout_of(&["games"]);
    assert!(listed.contains("tictactoe") && listed.contains("start: 3/3/3 w"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two engine processes that learnt the game the same way play it under arbiter's clock; the
/// games end by the board, never by a fault, and every output file names the game's endings.
#[test]
fn a_match_between_engines_that_registered_the_game() {
    let dir = scratch("match");
    let engine = format!("cmd={}", env!("CARGO_BIN_EXE_tictactoe-engine"));
    let out = arbiter(&[
        "match",
        "--game",
        "tictactoe",
        "--games",
        "2",
        "--quiet",
        "--each",
        "tc=5+0.05",
        "--engine",
        &engine,
        "name=searcher",
        "--engine",
        &engine,
        "name=greedy",
        "option.Style=greedy",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("games.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for row in &rows {
        assert!(
            row.contains(",three in a row,") || row.contains(",full board,"),
            "ended by the board: {row}"
        );
    }
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Variant \"tictactoe\"]").count(), 2);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("tictactoe"), "{report}");
    // The journal's endings read back: `rate` parses the PGN, `--resume` the journal.
    let rated_dir = dir.join("rated");
    let rated = stdout_of(&[
        "rate",
        dir.join("games.pgn").to_str().unwrap(),
        "--out",
        rated_dir.to_str().unwrap(),
    ]);
    assert!(rated_dir.join("report.md").is_file());
    assert!(
        rated.contains("searcher") && rated.contains("greedy"),
        "{rated}"
    );
    let resumed = arbiter(&["match", "--resume", dir.to_str().unwrap(), "--quiet"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(std::fs::read_to_string(dir.join("games.csv")).unwrap(), csv);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Cause guarded: a game's own endings were not checked against its moves, so a journal line
/// with its last move dropped and its result kept (sealed with the run's key, as only arbiter
/// could) was merged as a win. Now `merge` and `--resume` refuse it as they refuse a built-in
/// game's.
#[test]
fn a_result_its_moves_do_not_reach_is_refused_for_a_games_own_ending() {
    use arbiter::proof::{unsealed, Key};
    let dir = scratch("forged-ending");
    let engine = format!("cmd={}", env!("CARGO_BIN_EXE_tictactoe-engine"));
    let run = dir.join("run");
    let out = arbiter(&[
        "match",
        "--game",
        "tictactoe",
        "--games",
        "2",
        "--quiet",
        "--each",
        "depth=2",
        "--engine",
        &engine,
        "name=searcher",
        "--engine",
        &engine,
        "name=greedy",
        "option.Style=greedy",
        "--shard",
        "1/1",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shard = run.join("shard-1-of-1");
    let journal = shard.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let first = unsealed(&lines[0]);
    let moves = first.find("\"moves\":\"").unwrap() + 9;
    let end = moves + first[moves..].find('"').unwrap();
    let cut = moves + first[moves..end].rfind(' ').unwrap();
    let mut forged = format!("{}{}", &first[..cut], &first[end..]).into_bytes();
    Key::for_journal(&shard.join("journal.jsonl"))
        .unwrap()
        .seal(&mut forged);
    lines[0] = String::from_utf8(forged).unwrap();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let merged = dir.join("merged");
    let out = arbiter(&["merge", merged.to_str().unwrap(), run.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("its moves do not end the game"), "{said}");
    let out = arbiter(&["match", "--resume", shard.to_str().unwrap(), "--quiet"]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("its moves do not end the game"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}
