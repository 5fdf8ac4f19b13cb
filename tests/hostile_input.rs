//! Every parser of outside data, fed arbitrary and near-valid input: none may panic, and bad
//! input must come back as an error. Inputs proptest finds are kept in proptest-regressions/.

use arbiter::engine::{parse_line, EngineConfig};
use arbiter::game::{find_game, games};
use arbiter::pgn::read_games;
use arbiter::referee::{DrawRule, ResignRule, TimeControl};
use arbiter::stats::Sprt;
use arbiter::tournament::openings::parse_book;
use proptest::prelude::*;

/// Text made of the characters these formats use, so mutations stay close to valid input.
fn near_valid() -> impl Strategy<Value = String> {
    prop::string::string_regex("[a-jA-Z0-9/+*@#=\\[\\]\\-. xwbWBKkNnPpSsLlUuCcEeAa{}\"\n]{0,120}")
        .unwrap()
}

/// A real value with a few characters changed, dropped or added.
fn mutated(base: &'static str) -> impl Strategy<Value = String> {
    (prop::collection::vec((0usize..base.len().max(1), any::<char>(), 0u8..3), 0..4)).prop_map(
        move |edits| {
            let mut chars: Vec<char> = base.chars().collect();
            for (at, c, kind) in edits {
                let at = at.min(chars.len());
                match kind {
                    0 if at < chars.len() => chars[at] = c,
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    _ => chars.insert(at, c),
                }
            }
            chars.into_iter().collect()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn fen_parsers_never_panic(text in near_valid()) {
        for entry in games() {
            let _ = entry.new_game(Some(&text));
        }
    }

    #[test]
    fn fens_near_the_start_positions_never_panic(i in 0usize..games().len(), edits in prop::collection::vec((0usize..120, any::<char>(), 0u8..3), 0..4)) {
        let entry = games()[i];
        let mut chars: Vec<char> = entry.start_fen.chars().collect();
        for (at, c, kind) in edits {
            let at = at.min(chars.len());
            match kind {
                0 if at < chars.len() => chars[at] = c,
                1 if at < chars.len() => { chars.remove(at); }
                _ => chars.insert(at, c),
            }
        }
        let fen: String = chars.into_iter().collect();
        if let Ok(game) = entry.new_game(Some(&fen)) {
            // Whatever parses must write a FEN that parses back.
            prop_assert!(entry.new_game(Some(&game.fen())).is_ok(), "{} -> {}", fen, game.fen());
            let _ = game.legal_moves();
        }
    }

    #[test]
    fn move_parsers_never_panic(text in near_valid()) {
        for entry in games() {
            let mut game = entry.new_game(None).unwrap();
            let _ = game.play(&text);
        }
    }

    #[test]
    fn engine_output_lines_never_panic(text in any::<String>(), line in mutated("info depth 12 \
        score cp -35 nodes 99 time (microsec) 512 pv e2e4")) {
        let _ = parse_line(&text);
        let _ = parse_line(&line);
        let _ = parse_line(&format!("bestmove {text}"));
        let _ = parse_line(&format!("option name {text} type combo var {text}"));
    }

    #[test]
    fn opening_books_never_panic(text in near_valid(), i in 0usize..games().len()) {
        let _ = parse_book(&text, "book.txt", games()[i], Some(10));
        let _ = parse_book(&format!("fen {text} moves g4g5"), "book.txt", games()[i], None);
    }

    #[test]
    fn pgn_reader_never_panics(text in any::<String>(), pgn in mutated("[Event \"e\"]\n[White \
        \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\n1. g4g5 {c} e6e7 (1... x) 1-0\n")) {
        let _ = read_games(&text);
        if let Err(e) = read_games(&pgn) {
            prop_assert!(e.line >= 1);
        }
    }

    #[test]
    fn settings_parsers_never_panic(text in near_valid(), tc in mutated("40/60+0.5")) {
        let _ = TimeControl::parse(&text);
        let _ = TimeControl::parse(&tc);
        let _ = EngineConfig::parse(&["cmd=x".to_string(), text.clone(), format!("tc={tc}")], &[] as &[String]);
        let _ = DrawRule::parse(&text);
        let _ = ResignRule::parse(&text);
        let _ = Sprt::parse(&text);
    }
}

#[test]
fn inputs_at_the_edges_of_each_format_are_refused() {
    // Hand-picked edge cases (no fuzzing run has found a failure yet; any it finds are kept by
    // proptest in proptest-regressions/ and replayed first).
    let leiserchess = find_game("leiserchess").unwrap();
    for fen in [
        "",
        " ",
        "/",
        "10 W",
        "ss7/8/8/8/8/8/8/99999999999999999999NN W",
        "ss7/8/8/8/8/8/8/7N",
        "ŝs7/8/8/8/8/8/8/7NN W",
    ] {
        assert!(leiserchess.new_game(Some(fen)).is_err(), "{fen:?}");
    }
    let leaperhouse = find_game("leaperhouse").unwrap();
    for fen in [
        "k9/10/10/10/10/10/10/10/10/9K[",
        "k9/10/10/10/10/10/10/10/10/9K[Kk] w",
        "k9/10/10/10/10/10/10/10/10/+K8K[] w",
        "k9/10/10/10/10/10/10/10/10/9K[] w - - x",
    ] {
        assert!(leaperhouse.new_game(Some(fen)).is_err(), "{fen:?}");
    }
    let mut game = find_game("leaperhouse").unwrap().new_game(None).unwrap();
    for mv in [
        "", "@", "P@", "@e5", "e", "e10e11", "ē3e4", "e3e4++", "a1a1",
    ] {
        assert!(game.play(mv).is_err(), "{mv:?}");
    }
    for line in [
        "info time (microsec)",
        "info score mate",
        "bestmove",
        "option name",
        "info pv",
        "info string",
    ] {
        let _ = parse_line(line);
    }
    assert!(read_games("[Event \"x").is_err());
}
