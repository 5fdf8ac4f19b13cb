//! Leiserchess 2018 and 2012: reference perft, the rule texts' sample games, and each rule.

use crate::common;

use arbiter::game::{Game, Outcome, Position, Status, Termination};
use arbiter::games::leiserchess::Leiserchess;
use arbiter::games::leiserchess2012::Leiserchess2012;
use common::*;
use proptest::prelude::*;

fn game<P: Position>(fen: &str) -> Game<P> {
    Game::new(P::from_fen(fen).expect("test FEN parses"))
}

fn play<P: Position>(g: &mut Game<P>, moves: &[&str]) {
    for m in moves {
        g.play_text(m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

// --- perft -------------------------------------------------------------------------------------

#[test]
fn perft_2018_matches_reference_counts() {
    let p = Leiserchess::from_fen(Leiserchess::START_FEN).unwrap();
    assert_eq!(arbiter::game::perft(&p, 3), vec![61, 3_757, 239_205]);
}

#[test]
fn perft_2012_matches_reference_counts() {
    let p = Leiserchess2012::from_fen(Leiserchess2012::START_FEN).unwrap();
    assert_eq!(arbiter::game::perft(&p, 3), vec![78, 6_084, 473_371]);
}

#[test]
fn perft_cli_prints_one_line_per_depth() {
    let out = arbiter(&["perft", "leiserchess", "3"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out), "perft 1 61\nperft 2 3757\nperft 3 239205\n");
}

#[test]
fn divide_sums_to_perft() {
    let out = arbiter(&["perft", "leiserchess2012", "2", "--divide"]);
    let text = stdout(&out);
    let sum: u64 = text
        .lines()
        .filter(|l| !l.starts_with("total"))
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 6_084);
    assert!(text.ends_with("total 6084\n"));
}

// --- sample games ------------------------------------------------------------------------------

#[test]
fn sample_game_2018_replays_to_its_result() {
    let moves = recorded_moves(&data("leiserchess-2018-sample.txt"));
    assert_eq!(moves.len(), 100);
    let args: Vec<&str> = ["replay", "leiserchess"]
        .into_iter()
        .chain(moves.iter().map(String::as_str))
        .collect();
    let out = arbiter(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 102);
    assert_eq!(lines[99], "ply 100 g3h3 removed WW@h1");
    assert!(lines[100].starts_with("fen "));
    assert_eq!(lines[101], "result 0-1 king zapped");
}

#[test]
fn sample_game_2012_replays_to_its_result() {
    let moves = recorded_moves(&data("leiserchess-2012-sample.txt"));
    assert_eq!(moves.len(), 56);
    assert_eq!(moves[54], "c2b1xf6");
    let mut g = game::<Leiserchess2012>(Leiserchess2012::START_FEN);
    for (i, m) in moves.iter().enumerate() {
        let (_, _, removed) = g
            .play_text(m)
            .unwrap_or_else(|e| panic!("ply {}: {e}", i + 1));
        // The record names every zap; nothing else is zapped in this game.
        assert_eq!(removed.is_empty(), !m.contains('x'), "ply {}", i + 1);
    }
    assert_eq!(
        g.status(),
        Status::Over(Outcome::BlackWins, Termination::KingZapped)
    );
}

/// The tests' own records of the sample games are the moves of the rule texts, where those lie
/// beside the repository (CI runs this with `--ignored`).
#[test]
#[ignore = "reads the rule texts in ../shared/rules"]
fn the_sample_games_are_the_rule_texts_games() {
    for (text, data) in [
        ("leiserchess-2018.txt", "leiserchess-2018-sample.txt"),
        ("leiserchess-2012.txt", "leiserchess-2012-sample.txt"),
    ] {
        assert_eq!(
            recorded_moves(&rule_text(text)),
            recorded_moves(&common::data(data)),
            "{data}"
        );
    }
}

// --- the rules ---------------------------------------------------------------------------------

#[test]
fn ko_2018_forbids_undoing_a_swap() {
    let mut g = game::<Leiserchess>("ww7/8/8/8/3NWnw3/8/8/7EE W");
    play(&mut g, &["d3e3e4"]);
    let err = g.play_text("d3e4e3").unwrap_err().to_string();
    assert!(err.contains("Ko"), "{err}");
    // Still generated (perft counts it) but not among the legal moves.
    let mut pseudo = Vec::new();
    g.position().generate(&mut pseudo);
    let undo = g.position().parse_move("d3e4e3").unwrap();
    assert!(pseudo.contains(&undo));
    assert!(!g.legal_moves().contains(&undo));
    // A different reply is fine.
    play(&mut g, &["d3e4f4"]);
}

#[test]
fn ko_2012_forbids_swap_back_unchanged_position_and_quiet_null_move() {
    let fen = "ww9/10/10/10/10/10/3NWnw5/10/10/9EE W";
    let mut g = game::<Leiserchess2012>(fen);
    play(&mut g, &["d3e3"]);
    assert!(g.play_text("d3e3").unwrap_err().to_string().contains("Ko"));

    let mut same = game::<Leiserchess2012>("ww9/10/10/10/10/10/3NWNW5/10/10/9EE W");
    let err = same.play_text("d3e3").unwrap_err().to_string();
    assert!(err.contains("unchanged"), "{err}");

    let mut null = game::<Leiserchess2012>(fen);
    let err = null.play_text("j0j0").unwrap_err().to_string();
    assert!(err.contains("null move must zap"), "{err}");
}

#[test]
fn null_move_2012_is_legal_when_it_zaps() {
    // The Tangerine King on j0 faces north at the back of a Lavender Pawn on j5.
    let mut g = game::<Leiserchess2012>("ww9/10/10/10/9nw/10/10/10/10/9NN W");
    let (_, text, removed) = g.play_text("j0j0xj5").unwrap();
    assert_eq!(text, "j0j0");
    assert_eq!(removed.iter().next().unwrap().to_string(), "nw@j5");
}

#[test]
fn zap_suffix_naming_the_wrong_square_is_rejected() {
    let mut g = game::<Leiserchess2012>("ww9/10/10/10/9nw/10/10/10/10/9NN W");
    let err = g.play_text("j0j0xj6").unwrap_err().to_string();
    assert!(err.contains("j5"), "{err}");
    assert_eq!(g.history().ply_count(), 0);
}

#[test]
fn threefold_repetition_draws() {
    let mut g = game::<Leiserchess>("ww7/8/8/8/8/8/8/7EE W");
    let cycle = ["h0L", "a7R", "h0R", "a7L"];
    play(&mut g, &cycle);
    assert_eq!(g.status(), Status::Ongoing, "second occurrence only");
    play(&mut g, &cycle[..3]);
    assert_eq!(g.status(), Status::Ongoing);
    play(&mut g, &cycle[3..]);
    assert_eq!(
        g.status(),
        Status::Over(Outcome::Draw, Termination::Repetition)
    );
    assert!(g.play_text("h0L").is_err(), "no move after the end");
}

/// Plays quiet moves (no zap, no third occurrence) until `plies` are played.
fn play_quietly<P: Position>(g: &mut Game<P>, plies: usize) {
    for ply in 0..plies {
        assert_eq!(g.status(), Status::Ongoing, "ended early at ply {ply}");
        let pick = g.legal_moves().into_iter().find(|&mv| {
            let mut after = g.position().clone();
            after.play(mv).is_empty() && g.history().occurrences(after.key()) < 2
        });
        let mv = pick.unwrap_or_else(|| panic!("no quiet move at ply {ply}"));
        g.play(mv).unwrap();
    }
}

#[test]
fn move_rule_2018_draws_after_100_quiet_plies() {
    let mut g = game::<Leiserchess>(Leiserchess::START_FEN);
    play_quietly(&mut g, 99);
    assert_eq!(g.status(), Status::Ongoing);
    play_quietly(&mut g, 1);
    assert_eq!(
        g.status(),
        Status::Over(Outcome::Draw, Termination::MoveRule)
    );
}

#[test]
fn move_rule_2012_draws_after_200_quiet_plies() {
    let mut g = game::<Leiserchess2012>(Leiserchess2012::START_FEN);
    play_quietly(&mut g, 199);
    assert_eq!(g.status(), Status::Ongoing);
    play_quietly(&mut g, 1);
    assert_eq!(
        g.status(),
        Status::Over(Outcome::Draw, Termination::MoveRule)
    );
}

#[test]
fn a_pawn_zap_resets_the_move_rule() {
    let mut g = game::<Leiserchess2012>("ww9/10/10/10/9nw/10/10/10/10/9NN W");
    play(&mut g, &["j0j0"]);
    assert_eq!(g.history().quiet_plies(), 0);
    play(&mut g, &["a9L"]);
    assert_eq!(g.history().quiet_plies(), 1);
}

#[test]
fn zapping_own_king_loses() {
    // Turning c0 from NE to NW sends Tangerine's own beam a3 -> c3 -> c0 -> back into a0.
    let mut g = game::<Leiserchess>("ss7/8/8/8/SE1SW5/8/8/NN1NE5 W");
    let (_, _, removed) = g.play_text("c0L").unwrap();
    assert_eq!(removed.iter().next().unwrap().to_string(), "NN@a0");
    assert_eq!(
        g.status(),
        Status::Over(Outcome::BlackWins, Termination::KingZapped)
    );
}

#[test]
fn beam_reflects_and_zaps_the_enemy_king() {
    // The Tangerine King turns to fire north into a SW mirror on h4, which sends the beam west to
    // a4.
    let mut g = game::<Leiserchess>("7nw/8/8/8/ww6SW/8/8/7EE W");
    play(&mut g, &["h0L"]);
    assert_eq!(
        g.status(),
        Status::Over(Outcome::WhiteWins, Termination::KingZapped)
    );
}

#[test]
fn a_pawn_hit_on_its_back_is_zapped_and_stops_the_beam() {
    // North-going beam hits the NW mirror on h3 from behind; h6's pawn stays.
    let mut g = game::<Leiserchess>("ww7/7sw/8/8/7NW/8/8/7EE W");
    let (_, _, removed) = g.play_text("h0L").unwrap();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed.iter().next().unwrap().to_string(), "NW@h3");
    assert_eq!(g.position().fen(), "ww7/7sw/8/8/8/8/8/7NN B");
}

#[test]
fn a_final_position_without_a_king_reads_back_as_finished() {
    let p = Leiserchess::from_fen("ssne6/8/3SW1SW2/8/ne6sw/8/2NE5/8 W").unwrap();
    assert_eq!(
        p.board_status(),
        Status::Over(Outcome::BlackWins, Termination::KingZapped)
    );
    let mut moves = Vec::new();
    p.generate(&mut moves);
    assert!(moves.is_empty());
}

#[test]
fn fen_round_trips() {
    for fen in [
        Leiserchess::START_FEN,
        "ww7/8/8/8/3NWnw3/8/8/7EE B",
        "ss7/8/8/8/SE1SW5/8/8/NN1NE5 W",
    ] {
        assert_eq!(Leiserchess::from_fen(fen).unwrap().fen(), fen);
    }
    for fen in [
        Leiserchess2012::START_FEN,
        "ww9/10/10/10/9nw/10/10/10/10/9NN B",
    ] {
        assert_eq!(Leiserchess2012::from_fen(fen).unwrap().fen(), fen);
    }
}

#[test]
fn bad_fens_are_rejected_with_a_reason() {
    let cases = [
        ("", "empty FEN"),
        ("ss7/8/8/8/8/8/8/7NN", "missing side"),
        ("ss7/8/8/8/8/8/8/7NN X", "side to move"),
        ("ss7/8/8/8/8/8/7NN W", "7 ranks"),
        ("ss7/8/8/8/8/8/8/6NN W", "7 squares"),
        ("ss7/8/8/8/8/8/8/8NN W", "more than 8"),
        ("ss7/8/8/8/8/8/8/7Nn W", "unknown piece 'Nn'"),
        ("8/8/8/8/8/8/8/8 W", "no Kings"),
        ("NN7/8/8/8/8/8/8/7NN W", "two Tangerine"),
        ("ss6ss/8/8/8/8/8/8/7NN W", "two Lavender"),
        ("ss7/8/8/8/8/8/8/7NN W extra", "unexpected field"),
        ("ss7/8/8/8/8/8/8/7N W", "cut short"),
    ];
    for (fen, expected) in cases {
        let err = Leiserchess::from_fen(fen).unwrap_err().to_string();
        assert!(err.contains(expected), "{fen:?}: {err}");
    }
}

#[test]
fn cli_reports_bad_input_with_exit_code_2() {
    let out = arbiter(&["perft", "go", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown game 'go'"));

    let out = arbiter(&["replay", "leiserchess", "--fen", "ss7/8 W", "g4g5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("2 ranks given"));
    assert!(stdout(&out).is_empty(), "nothing printed before a bad FEN");

    let out = arbiter(&["replay", "leiserchess", "g4g5", "q9q9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ply 2: malformed move 'q9q9'"));
}

#[test]
fn cli_reports_an_illegal_move_with_its_ply_and_exit_code_1() {
    let out = arbiter(&["replay", "leiserchess", "g4g5", "e6e7", "g4g5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("ply 3: illegal move 'g4g5'"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "ply 1 g4g5\nply 2 e6e7\n");
}

#[test]
fn show_draws_the_board() {
    let out = arbiter(&["show", "leiserchess", "g4g5"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("7  ss  .  ."), "{text}");
    assert!(text.contains("Lavender (B) to move"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn playouts_2018_round_trip(choices in prop::collection::vec(any::<usize>(), 1..120)) {
        check_playout::<Leiserchess>(Leiserchess::START_FEN, &choices);
    }

    #[test]
    fn playouts_2012_round_trip(choices in prop::collection::vec(any::<usize>(), 1..120)) {
        check_playout::<Leiserchess2012>(Leiserchess2012::START_FEN, &choices);
    }
}
