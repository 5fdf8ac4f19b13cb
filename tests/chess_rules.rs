//! Standard chess through the shakmaty crate: perft of the standard test positions against the
//! published numbers (the Chess Programming Wiki's "Perft Results", which shakmaty's own tests
//! use), a game to mate replayed through the CLI, and SAN in the PGN of a real match.

mod common;

use arbiter::game::{find_game, Position};
use arbiter::games::chess::Chess;
use common::{arbiter, arbiter_in, bundled_engine, scratch, stderr, stdout};

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

#[test]
fn perft_matches_the_published_numbers() {
    let cases: [(&str, u32, u64); 5] = [
        (Chess::START_FEN, 5, 4_865_609),
        (KIWIPETE, 4, 4_085_603),
        ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 674_624),
        (
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            4,
            422_333,
        ),
        (
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            3,
            62_379,
        ),
    ];
    let entry = find_game("chess").expect("chess is registered");
    for (fen, depth, nodes) in cases {
        assert_eq!(entry.perft_at(Some(fen), depth).unwrap(), nodes, "{fen}");
    }
    let out = arbiter(&["perft", "chess", "3"]);
    assert_eq!(stdout(&out), "perft 1 20\nperft 2 400\nperft 3 8902\n");
}

#[test]
fn a_game_to_mate_replays_in_uci_and_san() {
    let out = arbiter(&["replay", "chess", "f2f3", "e7e5", "g2g4", "Qh4#"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("result 0-1 checkmate"), "{text}");
    let out = arbiter(&[
        "replay", "chess", "e2e4", "e7e5", "e1e2", "e8e7", "e2e1", "e7e8", "e1e2",
    ]);
    assert!(
        stdout(&out).contains("result * ongoing"),
        "{}",
        stdout(&out)
    );
    let out = arbiter(&["replay", "chess", "e2e5"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an illegal move: {}",
        stdout(&out)
    );
}

#[test]
fn a_match_writes_san_in_the_pgn_and_uci_to_the_engines() {
    let dir = scratch("chess", "match");
    let e = bundled_engine();
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--game",
            "chess",
            "--games",
            "2",
            "--max-plies",
            "40",
            "--openings",
            &format!("{}/openings/chess.txt", env!("CARGO_MANIFEST_DIR")),
            "--engine",
            &format!("cmd={e}"),
            "name=a",
            "depth=1",
            "--engine",
            &format!("cmd={e}"),
            "name=b",
            "depth=2",
            "--out",
            "run",
            "--log",
            "io.log",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    let games = arbiter::pgn::read_games(&pgn).unwrap();
    assert_eq!(games.len(), 2);
    for g in &games {
        // Replaying the PGN's moves (SAN) through the rules gives a legal game.
        let mut pos = Chess::from_fen(Chess::START_FEN).unwrap();
        for san in &g.moves {
            let mv = pos.parse_move(san).unwrap_or_else(|e| panic!("{san}: {e}"));
            assert_eq!(&pos.pgn_move_text(mv), san, "written as SAN");
            pos.play(mv);
        }
    }
    let log = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert!(
        log.contains("position startpos moves "),
        "UCI to the engines"
    );
}
