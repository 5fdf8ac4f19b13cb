//! Standard chess through the shakmaty crate: perft of the standard test positions against the
//! published numbers (the Chess Programming Wiki's "Perft Results", which shakmaty's own tests
//! use), a game to mate replayed through the CLI, and SAN in the PGN of a real match.

use crate::common;

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

/// Chess960 positions of the Chess Programming Wiki's "Chess960 Perft Results" (as Ethereal's
/// fischer.epd lists them), with castling rights in Shredder-FEN (`HFhf`): each count is the
/// published one.
#[test]
fn chess960_perft_matches_the_published_numbers() {
    let cases: [(&str, u32, u64); 5] = [
        (
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
            4,
            326_672,
        ),
        (
            "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
            4,
            667_366,
        ),
        (
            "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
            4,
            273_318,
        ),
        (
            "qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w hf - 0 9",
            4,
            382_958,
        ),
        (
            "1nbbnrkr/p1p1ppp1/3p4/1p3P1p/3Pq2P/8/PPP1P1P1/QNBBNRKR w HFhf - 0 9",
            3,
            31_058,
        ),
    ];
    let entry = find_game("chess960").expect("chess960 is registered");
    for (fen, depth, nodes) in cases {
        assert_eq!(entry.perft_at(Some(fen), depth).unwrap(), nodes, "{fen}");
    }
    // From the standard start (position 518) the counts are chess's.
    let out = arbiter(&["perft", "chess960", "3"]);
    assert_eq!(stdout(&out), "perft 1 20\nperft 2 400\nperft 3 8902\n");
}

/// Castling in Chess960 as engines write it: the king takes its own rook (`b1a1`), and, for a
/// king on e1 (or e8), the two-square step too (`e1g1`, `e8c8`); arbiter writes the first form.
#[test]
fn chess960_castling_is_read_in_both_notations_and_written_as_the_king_takes_the_rook() {
    let fen = "rk2r3/8/8/8/8/8/8/RK2R3 w AEae - 0 1";
    let out = arbiter(&["replay", "chess960", "--fen", fen, "b1a1", "b8a8"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("ply 1 b1a1\nply 2 b8a8\nfen 2krr3/8/8/8/8/8/8/2KRR3 w - -"),
        "{text}"
    );
    let fen = "r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1";
    let out = arbiter(&["replay", "chess960", "--fen", fen, "e1g1", "e8c8"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("ply 1 e1h1\nply 2 e8a8\nfen 2kr4/8/8/8/8/8/8/5RK1 w - -"),
        "{text}"
    );
    // In standard chess the same step is written as it was given.
    let out = arbiter(&["replay", "chess", "--fen", fen, "e1g1", "e8c8"]);
    assert!(
        stdout(&out).contains("ply 1 e1g1\nply 2 e8c8\n"),
        "{}",
        stdout(&out)
    );
}
