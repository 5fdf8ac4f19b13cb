//! `arbiter match` from the command line, with the bundled engine as a real process.

mod common;

use common::{arbiter, stderr, stdout};
use std::path::PathBuf;

/// The bundled engine, built beside the `arbiter` binary by the same `cargo test`.
fn engine() -> String {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_arbiter")).with_file_name("arbiter-engine");
    assert!(
        path.is_file(),
        "{} is missing: run the whole workspace's tests (cargo test)",
        path.display()
    );
    path.display().to_string()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arbiter-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_match_prints_results_and_writes_pgn() {
    let dir = scratch("match");
    let pgn = dir.join("games.pgn");
    let book = dir.join("book.txt");
    std::fs::write(&book, "# two openings\ng4g5 e6e7\ng3h4\n").unwrap();
    let e = engine();
    let out = arbiter(&[
        "match",
        "--game",
        "leiserchess",
        "--games",
        "4",
        "--concurrency",
        "2",
        "--engine",
        &format!("cmd={e}"),
        "name=searcher",
        "option.Style=search",
        "--engine",
        &format!("cmd={e}"),
        "name=random",
        "option.Style=random",
        "--each",
        "depth=2",
        "--openings",
        book.to_str().unwrap(),
        "--pgnout",
        pgn.to_str().unwrap(),
        "--max-plies",
        "200",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("Result of searcher vs random:"), "{text}");
    assert_eq!(text.matches("Finished game").count(), 4);
    let written = std::fs::read_to_string(&pgn).unwrap();
    let games = arbiter::pgn::read_games(&written).unwrap();
    assert_eq!(games.len(), 4);
    // Book moves lead every game, and each opening is played with both colours.
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
}

#[test]
fn bad_match_input_is_refused_with_exit_code_2() {
    let e = engine();
    let cmd = format!("cmd={e}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--engine", &cmd, "depth=1"], "exactly two --engine"),
        (
            vec![
                "--engine", &cmd, "depth=x", "--engine", &cmd, "depth=1", "name=b",
            ],
            "depth=x",
        ),
        (
            vec![
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
            vec!["--engine", &cmd, "depth=1", "--engine", &cmd, "depth=1"],
            "different names",
        ),
        (
            vec![
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
    ];
    for (args, expected) in cases {
        let mut all = vec!["match", "--game", "leiserchess"];
        all.extend(args);
        let out = arbiter(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{all:?}: {}", stderr(&out));
    }
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
}
