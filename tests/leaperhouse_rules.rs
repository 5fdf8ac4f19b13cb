//! Leaperhouse: Fairy-Stockfish perft and notation, drops and their bans, promotion, campmate,
//! stalemate, drop mate, and the repetition rulings.

use crate::common;

use arbiter::game::{Game, Outcome, Position, Status, Termination};
use arbiter::games::leaperhouse::Leaperhouse;
use common::check_playout;
use proptest::prelude::*;

fn game(fen: &str) -> Game<Leaperhouse> {
    Game::new(Leaperhouse::from_fen(fen).unwrap_or_else(|e| panic!("{e}")))
}

fn illegal(fen: &str, mv: &str) -> String {
    game(fen)
        .play_text(mv)
        .map(|_| panic!("{mv} should be illegal in {fen}"))
        .unwrap_err()
        .to_string()
}

/// Only the two Kings, White's on j1, with `hand` and a piece row for rank `rank`.
const KINGS: &str = "k9/10/10/10/10/10/10/10/10/9K";

#[test]
fn perft_matches_fairy_stockfish() {
    let p = Leaperhouse::from_fen(Leaperhouse::START_FEN).unwrap();
    assert_eq!(arbiter::game::perft(&p, 4), vec![28, 784, 22_456, 636_196]);
}

#[test]
fn fen_is_fairy_stockfish_shaped() {
    assert_eq!(
        Leaperhouse::from_fen(Leaperhouse::START_FEN).unwrap().fen(),
        Leaperhouse::START_FEN
    );
    // Hands are written White first, in descending piece order; any order is read.
    let p = Leaperhouse::from_fen(&format!("{KINGS}[nupP] b - - 3 7")).unwrap();
    assert_eq!(p.fen(), format!("{KINGS}[Pupn] b - - 3 7"));
    let promoted = "k9/10/10/10/4+P5/10/10/10/10/4+p4K[] w - - 0 1";
    assert_eq!(Leaperhouse::from_fen(promoted).unwrap().fen(), promoted);
}

#[test]
fn captures_go_to_hand_demoted_and_can_be_dropped() {
    let mut g = game("k9/10/10/4+p5/4P5/10/10/10/10/9K[] w - - 0 1");
    // Rank 7 is outside White's zone (ranks 8 to 10): no promotion.
    assert!(g.clone().play_text("e6e7+").is_err());
    let (_, text, removed) = g.play_text("e6e7").unwrap();
    assert_eq!(text, "e6e7");
    assert_eq!(removed.iter().next().unwrap().to_string(), "+p@e7");
    assert!(g.position().fen().contains("[P]"), "{}", g.position().fen());
    g.play_text("a10b10").unwrap();
    g.play_text("P@c5").unwrap();
    assert!(g.position().fen().contains("[]"));
}

#[test]
fn pawn_drop_bans() {
    let fen = format!("{KINGS}[P] w - - 0 1");
    assert!(illegal(&fen, "P@e10").contains("last rank"));
    let doubled = "k9/10/10/10/10/10/4P5/10/10/9K[P] w - - 0 1";
    assert!(illegal(doubled, "P@e6").contains("unpromoted own pawn"));
    // A promoted pawn on the file does not count.
    let promoted = "k9/10/10/10/10/10/4+P5/10/10/9K[P] w - - 0 1";
    game(promoted).play_text("P@e6").unwrap();
    assert!(illegal(&format!("{KINGS}[] w - - 0 1"), "N@e5").contains("no such piece"));
}

#[test]
fn promotion_is_forced_entering_and_inside_the_zone() {
    let entering = "k9/10/10/4P5/10/10/10/10/10/9K[] w - - 0 1";
    assert!(illegal(entering, "e7e8").contains("must promote"));
    game(entering).play_text("e7e8+").unwrap();
    // A pawn dropped in the zone is unpromoted and promotes when it next moves.
    let mut g = game(&format!("{KINGS}[P] w - - 0 1"));
    g.play_text("P@e8").unwrap();
    g.play_text("a10b10").unwrap();
    assert!(g.play_text("e8e9").is_err());
    g.play_text("e8e9+").unwrap();
    // Outside the zone a pawn may not promote.
    assert!(game("k9/10/10/10/10/4P5/10/10/10/9K[] w - - 0 1")
        .play_text("e5e6+")
        .is_err());
}

#[test]
fn a_king_on_the_last_rank_wins_by_campmate() {
    let mut g = game("k9/4K5/10/10/10/10/10/10/10/10[] w - - 0 1");
    g.play_text("e9e10").unwrap();
    assert_eq!(
        g.status(),
        Status::Over(Outcome::WhiteWins, Termination::Campmate)
    );
    // ...but not onto an attacked square (the knight on c9 guards e10).
    assert!(game("k9/2n1K5/10/10/10/10/10/10/10/10[] w - - 0 1")
        .play_text("e9e10")
        .is_err());
}

#[test]
fn stalemate_loses() {
    // The Black King on a10 is not attacked, but every square around it is.
    let g = game("k9/2+P7/2N7/10/10/10/10/10/10/9K[] b - - 0 1");
    assert_eq!(
        g.status(),
        Status::Over(Outcome::WhiteWins, Termination::Stalemate)
    );
}

#[test]
fn a_pawn_drop_may_mate() {
    let mut g = game("k9/10/1+PN7/10/10/10/10/10/10/9K[P] w - - 0 1");
    g.play_text("P@a9").unwrap();
    assert_eq!(
        g.status(),
        Status::Over(Outcome::WhiteWins, Termination::Checkmate)
    );
}

#[test]
fn a_move_may_not_leave_the_king_attacked() {
    // In check from the knight on b8, only King moves or capturing the knight are legal.
    let g = game("k9/10/1n8/10/10/10/10/10/10/9K[N] b - - 0 1");
    assert!(!g.position().in_check());
    let checked = game("k9/10/1N8/10/10/10/10/10/10/9K[n] b - - 0 1");
    assert!(checked.position().in_check());
    let moves = checked.legal_moves();
    assert!(moves
        .iter()
        .all(|m| checked.position().move_text(*m).starts_with("a10")));
}

#[test]
fn the_player_who_makes_the_third_occurrence_loses() {
    let mut g = game(&format!("{KINGS}[] w - - 0 1"));
    let cycle = ["j1i1", "a10b10", "i1j1", "b10a10"];
    for mv in cycle.iter().chain(&cycle[..3]) {
        g.play_text(mv).unwrap();
        assert_eq!(g.status(), Status::Ongoing);
    }
    g.play_text("b10a10").unwrap();
    assert_eq!(
        g.status(),
        Status::Over(Outcome::WhiteWins, Termination::Repetition)
    );
}

#[test]
fn a_perpetual_checker_loses_the_repetition() {
    // The knight checks a10 from c9 and b10 from a8; Black's King shuttles between them.
    let mut g = game("k9/10/N9/10/10/10/10/10/10/9K[] w - - 0 1");
    let cycle = ["a8c9", "a10b10", "c9a8", "b10a10"];
    for mv in cycle.iter().chain(&cycle[..3]) {
        g.play_text(mv).unwrap();
        assert_eq!(g.status(), Status::Ongoing, "after {mv}");
    }
    // Black makes the third occurrence, but every White move in the cycle gave check.
    g.play_text("b10a10").unwrap();
    assert_eq!(
        g.status(),
        Status::Over(Outcome::BlackWins, Termination::Repetition)
    );
}

#[test]
fn notation_errors_name_the_problem() {
    for (mv, why) in [
        ("e3e", "not a square"),
        ("k1k2", "not a square"),
        ("e0e1", "not a square"),
        ("Q@e5", "cannot be dropped"),
        ("PP@e5", "one piece letter"),
    ] {
        let err = game(Leaperhouse::START_FEN)
            .play_text(mv)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("malformed") && err.contains(why),
            "{mv}: {err}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn playouts_round_trip(choices in prop::collection::vec(any::<usize>(), 1..150)) {
        check_playout::<Leaperhouse>(Leaperhouse::START_FEN, &choices);
    }
}

/// FENs after drops and promotions as Fairy-Stockfish writes them (its halfmove clock restarts
/// at a drop and at a promotion, not only at a capture): 90 positions from random games, 30 just
/// after a drop and 15 just after a promotion,
/// Fairy-Stockfish's own `d` output beside the moves that reach them.
#[test]
fn fens_after_drops_and_promotions_are_fairy_stockfishs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/leaperhouse_fairy_fens.tsv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut checked = 0;
    let (mut drops, mut promotions) = (0, 0);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (moves, fen) = line.split_once('\t').expect("moves<TAB>fen");
        let mut g = game(Leaperhouse::START_FEN);
        for mv in moves.split_whitespace() {
            g.play_text(mv).unwrap_or_else(|e| panic!("{mv}: {e}"));
        }
        assert_eq!(g.position().fen(), fen, "after {moves}");
        let last = moves.split_whitespace().last().unwrap();
        drops += usize::from(last.contains('@'));
        promotions += usize::from(last.ends_with('+'));
        checked += 1;
    }
    assert_eq!(checked, 90);
    assert!(
        drops >= 20 && promotions >= 10,
        "{drops} drops, {promotions} promotions"
    );
}

/// `repetition=fairy-stockfish` (a run's `--rules`): the side to move at the third occurrence
/// loses, as Fairy-Stockfish scores it (`nFoldValue = loss`), where the prose makes the mover
/// lose; a perpetual checker still loses (`perpetualCheckIllegal`).
#[test]
fn the_fairy_stockfish_reading_of_repetition_is_a_rule_option() {
    let entry = arbiter::game::find_game("leaperhouse").unwrap();
    let fairy = [("repetition".to_string(), "fairy-stockfish".to_string())];
    let play = |fen: String, cycle: [&str; 4]| {
        let mut g = entry.new_game_with(Some(&fen), &fairy).unwrap();
        for mv in cycle.iter().chain(&cycle[..3]) {
            g.play(mv).unwrap();
            assert_eq!(g.status(), Status::Ongoing, "after {mv}");
        }
        g.play(cycle[3]).unwrap();
        g.status()
    };
    // Kings shuttling: Black makes the third occurrence and White, to move, loses.
    assert_eq!(
        play(
            format!("{KINGS}[] w - - 0 1"),
            ["j1i1", "a10b10", "i1j1", "b10a10"]
        ),
        Status::Over(Outcome::BlackWins, Termination::Repetition)
    );
    // White's knight checks at every move: the perpetual checker loses in both readings.
    assert_eq!(
        play(
            "k9/10/N9/10/10/10/10/10/10/9K[] w - - 0 1".into(),
            ["a8c9", "a10b10", "c9a8", "b10a10"]
        ),
        Status::Over(Outcome::BlackWins, Termination::Repetition)
    );
    // An option the game does not have, or a value it does not take, is named.
    let err = entry
        .check_rules(&[("repetition".into(), "fsf".into())])
        .unwrap_err();
    assert!(err.contains("repetition=prose|fairy-stockfish"), "{err}");
    let err = arbiter::game::find_game("ultima")
        .unwrap()
        .check_rules(&fairy)
        .unwrap_err();
    assert!(
        err.contains("ultima has no rule option 'repetition'"),
        "{err}"
    );
}
