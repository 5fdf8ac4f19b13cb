//! Ultima: perft, one test per capture method and chameleon imitation, immobilization, suicide,
//! check, and random playouts.

use crate::common;

use arbiter::game::{Game, Outcome, Position, Status, Termination};
use arbiter::games::ultima::Ultima;
use common::check_playout;
use proptest::prelude::*;

/// Plays `mv` from `fen` and returns the captured squares, sorted.
fn captured(fen: &str, mv: &str) -> Vec<String> {
    let mut g = Game::new(Ultima::from_fen(fen).unwrap());
    let (_, _, removed) = g
        .play_text(mv)
        .unwrap_or_else(|e| panic!("{mv} in {fen}: {e}"));
    let mut squares: Vec<String> = removed.iter().map(|r| r.square.to_string()).collect();
    squares.sort();
    squares
}

fn illegal(fen: &str, mv: &str) -> String {
    let mut g = Game::new(Ultima::from_fen(fen).unwrap());
    g.play_text(mv)
        .map(|_| panic!("{mv} should be illegal in {fen}"))
        .unwrap_err()
        .to_string()
}

fn in_check(fen: &str) -> bool {
    Ultima::from_fen(fen).unwrap().in_check()
}

#[test]
fn perft_matches_the_derived_counts() {
    let p = Ultima::from_fen(Ultima::START_FEN).unwrap();
    assert_eq!(arbiter::game::perft(&p, 2), vec![32, 944]);
    // The ruling's start position without clocks is the same position.
    let bare = Ultima::from_fen("clswksli/pppppppp/8/8/8/8/PPPPPPPP/ILSWKSLC w").unwrap();
    assert_eq!(bare.key(), p.key());
}

#[test]
fn king_captures_by_replacement() {
    assert_eq!(captured("7k/8/8/8/8/8/1p6/K7 w", "a1b2"), ["b2"]);
}

#[test]
fn pawn_captures_by_interception() {
    assert_eq!(captured("7k/8/3P4/3w4/8/8/3P4/K7 w", "d2d4"), ["d5"]);
    // Figure 2: another piece moving there does not intercept.
    assert!(captured("7k/8/3P4/3w4/8/8/3L4/K7 w", "d2d4").is_empty());
    // Figure 3: several at once, each with a friendly piece beyond.
    assert_eq!(
        captured("7k/8/3P4/3w4/1Pc1sP2/8/3P4/K7 w", "d2d4"),
        ["c4", "d5", "e4"]
    );
}

#[test]
fn long_leaper_captures_by_leaping_to_the_square_beyond() {
    assert_eq!(captured("7k/8/8/1c6/8/8/1L6/K7 w", "b2b6"), ["b5"]);
    // Only directly beyond, never over a friend, never without a landing square.
    illegal("7k/8/8/1c6/8/8/1L6/K7 w", "b2b7");
    illegal("7k/8/8/1P6/8/8/1L6/K7 w", "b2b6");
    illegal("7k/8/1p6/1c6/8/8/1L6/K7 w", "b2b6");
}

#[test]
fn withdrawer_captures_by_moving_directly_away() {
    assert_eq!(captured("7k/8/8/3p4/3W4/8/8/K7 w", "d4d2"), ["d5"]);
    assert!(captured("7k/8/8/3p4/3W4/8/8/K7 w", "d4e3").is_empty());
}

#[test]
fn coordinator_captures_on_both_intersections_with_its_king() {
    assert_eq!(captured("7k/8/8/1p5C/8/8/8/1K2p3 w", "h5e5"), ["b5", "e1"]);
    // Moving the King instead captures nothing.
    assert!(captured("7k/8/8/1p3C2/8/8/8/K3p3 w", "a1b1").is_empty());
}

#[test]
fn immobilizer_paralyses_adjacent_enemies_and_captures_nothing() {
    let err = illegal("7k/8/8/4w3/3I4/8/8/K7 b", "e5e7");
    assert!(err.contains("immobilized"), "{err}");
    assert!(captured("7k/8/8/4w3/8/3I4/8/K7 w", "d3d4").is_empty());
}

#[test]
fn immobilizer_and_chameleon_or_two_immobilizers_paralyse_each_other() {
    illegal("7k/8/8/3s4/3I4/8/8/K7 w", "d4c3");
    illegal("7k/8/8/3s4/3I4/8/8/K7 b", "d5d7");
    illegal("7k/8/8/3i4/3I4/8/8/K7 w", "d4c3");
    illegal("7k/8/8/3i4/3I4/8/8/K7 b", "d5d7");
}

#[test]
fn chameleon_intercepts_pawns_only_and_only_after_an_orthogonal_move() {
    assert_eq!(captured("7k/8/3P4/3p4/8/8/3S4/K7 w", "d2d4"), ["d5"]);
    // Figure 10: a diagonal move does not capture a pawn.
    assert!(captured("7k/8/3P4/3p4/8/8/1S6/K7 w", "b2d4").is_empty());
    assert!(captured("7k/8/3P4/3w4/8/8/3S4/K7 w", "d2d4").is_empty());
}

#[test]
fn chameleon_leaps_only_long_leapers() {
    assert_eq!(captured("7k/8/8/1l6/8/8/1S6/K7 w", "b2b6"), ["b5"]);
    illegal("7k/8/8/1p6/8/8/1S6/K7 w", "b2b6");
}

#[test]
fn chameleon_withdraws_only_from_withdrawers() {
    assert_eq!(captured("7k/8/8/3w4/3S4/8/8/K7 w", "d4d2"), ["d5"]);
    assert!(captured("7k/8/8/3p4/3S4/8/8/K7 w", "d4d2").is_empty());
}

#[test]
fn chameleon_coordinates_only_coordinators() {
    assert_eq!(captured("7k/8/8/1p5S/8/8/8/1K2c3 w", "h5e5"), ["e1"]);
}

#[test]
fn chameleon_never_captures_a_chameleon_or_an_immobilizer() {
    assert!(captured("7k/8/8/3s4/3S4/8/8/K7 w", "d4d2").is_empty());
    assert!(captured("7k/8/3P4/3s4/8/8/3S4/K7 w", "d2d4").is_empty());
}

#[test]
fn chameleon_multi_capture_as_in_figure_11() {
    // Leaping the leaper on d4 to d5, the chameleon withdraws from d1, coordinates h5 with its
    // King on h7, intercepts three pawns, and checks the King on e4.
    let fen = "8/3P3K/3p4/1Pp1pP1c/3lk3/8/3S4/3w4 w";
    assert_eq!(captured(fen, "d2d5"), ["c5", "d1", "d4", "d6", "e5", "h5"]);
    let mut g = Game::new(Ultima::from_fen(fen).unwrap());
    g.play_text("d2d5").unwrap();
    assert!(
        g.position().in_check(),
        "the chameleon next to the King gives check"
    );
}

#[test]
fn check_comes_from_every_capture_method() {
    assert!(in_check("7k/8/8/8/8/8/1s6/K7 w"), "adjacent chameleon");
    // Kings side by side hold each other in check, which no game reaches: the white King here
    // is frozen by the Immobilizer, so only the black one threatens.
    assert!(in_check("8/8/8/8/8/8/ik6/K7 w"), "adjacent king");
    assert!(in_check("7k/8/8/8/8/8/3w4/3K4 w"), "withdrawer with room");
    assert!(
        !in_check("7k/8/8/8/8/3w4/3w4/3K4 w"),
        "withdrawer without room"
    );
    assert!(
        in_check("7k/8/8/8/3l4/8/3K4/8 w"),
        "leaper with a clear line"
    );
    assert!(
        !in_check("7k/8/8/8/3l4/8/8/3K4 w"),
        "no square beyond the King"
    );
    assert!(
        !in_check("7k/8/8/8/3l4/3P4/3K4/8 w"),
        "leaper blocked by a piece"
    );
    assert!(
        in_check("7k/8/8/1p6/8/8/8/2Kp4 w"),
        "pawn slides to b1 opposite d1"
    );
    assert!(
        !in_check("7k/8/8/1p6/8/8/8/2K5 w"),
        "pawn without a partner"
    );
    assert!(
        in_check("8/8/8/8/8/8/6c1/k6K w"),
        "coordinator reaches the h-file"
    );
    assert!(
        !in_check("k7/8/8/8/8/8/6c1/7K w"),
        "coordinator with its King elsewhere"
    );
}

#[test]
fn an_immobilized_piece_gives_no_check() {
    assert!(in_check("7k/8/8/8/8/8/3w4/3K4 w"));
    assert!(!in_check("7k/8/8/8/8/2I5/3w4/3K4 w"));
}

#[test]
fn a_move_may_not_leave_the_king_capturable() {
    // The White King may not step next to the Black King.
    illegal("8/8/8/8/8/2k5/8/K7 w", "a1b2");
}

#[test]
fn suicide_removes_an_immobilized_piece_other_than_the_king() {
    let fen = "7k/8/4i3/4W3/8/8/8/K7 w";
    assert_eq!(captured(fen, "e5e5"), ["e5"]);
    let err = illegal("7k/8/8/4W3/8/8/8/K7 w", "e5e5");
    assert!(err.contains("suicide"), "{err}");
    illegal("7k/8/8/8/8/8/1i6/K7 w", "a1a1");
    // A suicide is no capture: the 50-move count goes on.
    let mut g = Game::new(Ultima::from_fen("7k/8/4i3/4W3/8/8/8/K7 w 7 30").unwrap());
    g.play_text("e5e5").unwrap();
    assert_eq!(g.history().quiet_plies(), 8);
}

#[test]
fn checkmate_wins_and_stalemate_draws() {
    // The Black King is paralysed by the immobilizer on b7 and has no other piece.
    let stalemate = Game::new(Ultima::from_fen("k7/1I6/8/8/8/8/8/7K b").unwrap());
    assert_eq!(
        stalemate.status(),
        Status::Over(Outcome::Draw, Termination::Stalemate)
    );
    // The same, with a chameleon next to the King: check, and no way out.
    let mate = Game::new(Ultima::from_fen("kS6/1I6/8/8/8/8/8/7K b").unwrap());
    assert_eq!(
        mate.status(),
        Status::Over(Outcome::WhiteWins, Termination::Checkmate)
    );
}

#[test]
fn fifty_move_rule_draws_after_100_quiet_plies() {
    let mut g = Game::new(Ultima::from_fen("7k/8/8/8/8/8/8/K7 w 99 60").unwrap());
    g.play_text("a1a2").unwrap();
    assert_eq!(
        g.status(),
        Status::Over(Outcome::Draw, Termination::MoveRule)
    );
}

#[test]
fn threefold_repetition_draws() {
    let mut g = Game::new(Ultima::from_fen("7k/8/8/8/8/8/8/K7 w").unwrap());
    for mv in ["a1a2", "h8h7", "a2a1", "h7h8", "a1a2", "h8h7", "a2a1"] {
        g.play_text(mv).unwrap();
        assert_eq!(g.status(), Status::Ongoing);
    }
    g.play_text("h7h8").unwrap();
    assert_eq!(
        g.status(),
        Status::Over(Outcome::Draw, Termination::Repetition)
    );
}

#[test]
fn fen_round_trips_and_errors() {
    for fen in [
        Ultima::START_FEN,
        "8/3P3K/3p4/1Pp1pP1c/3lk3/8/3S4/3w4 b 12 40",
    ] {
        assert_eq!(Ultima::from_fen(fen).unwrap().fen(), fen);
    }
    for (fen, why) in [
        ("clswksli/pppppppp/8/8/8/8/PPPPPPPP w", "7 ranks"),
        (
            "clswksli/pppppppp/8/8/8/8/PPPPPPPP/ILSWKSLX w",
            "unknown piece 'X'",
        ),
        (
            "clswksli/pppppppp/8/8/8/8/PPPPPPPP/ILSWKSLC x",
            "side to move",
        ),
        ("clsw1sli/pppppppp/8/8/8/8/PPPPPPPP/ILSWKSLC w", "one King"),
    ] {
        let err = Ultima::from_fen(fen).unwrap_err().to_string();
        assert!(err.contains(why), "{fen}: {err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn playouts_round_trip(choices in prop::collection::vec(any::<usize>(), 1..100)) {
        check_playout::<Ultima>(Ultima::START_FEN, &choices);
    }
}

/// Found by fuzzing: with White to move and Black's King in reach, White took the King and the
/// game went on to a position its own FEN reader refused (no black King). Such a position is
/// refused as chess refuses it: the side not to move may not be in check.
#[test]
fn a_position_whose_side_not_to_move_is_in_check_is_refused() {
    let Err(err) = Ultima::from_fen("clsPPsP1/Ilpppppp/8/8/8/8/PPPwkSli/ppSWKSLC w 0 1") else {
        panic!("accepted");
    };
    let err = err.to_string();
    assert!(err.contains("side not to move is in check"), "{err}");
    assert!(Ultima::from_fen(Ultima::START_FEN).is_ok());
}
