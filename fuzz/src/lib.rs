//! What each fuzz target does with its bytes, and what it holds to be true: no parser of
//! outside input panics, and what one writes, its reader reads back the same. A panic here is a
//! finding; AFL++ keeps the input that caused it.
//!
//! The first byte of an input picks among choices (a game, a book format); the rest is the text.

use arbiter::game::{games, GameEntry};
use arbiter::report::board_svg::{board_svg, Marks};

/// The game an input is about, from its first byte, and the rest as text.
fn game_and_text(data: &[u8]) -> Option<(&'static GameEntry, String)> {
    let (&pick, rest) = data.split_first()?;
    let games = games();
    let entry = games[pick as usize % games.len()];
    Some((entry, String::from_utf8_lossy(rest).into_owned()))
}

/// Engine output, line by line, read as UCI (and the MIT dialect), CECP, and CECP features.
pub fn engine_lines(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = arbiter::engine::protocol::parse_line(line);
        let _ = arbiter::engine::dialect::cecp::parse_line(line);
        let _ = arbiter::engine::dialect::cecp::parse_features(line);
    }
    // The same lines as a chess engine's reports of one search, checked as `--check-pvs`
    // checks them (from the start and from a middlegame), the first word the move played.
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let played = text.split_whitespace().next().unwrap_or("");
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    ] {
        let _ = arbiter::referee::pv_check::check(fen, false, &lines, played, "fuzz", true);
    }
}

/// A FEN of one game, then move texts. A FEN that is read writes back a FEN that reads to the
/// same position; every legal move it lists plays; a move text is played or refused, never a
/// panic. Every position and every move's marks draw, each piece with its picture.
pub fn positions(data: &[u8]) {
    let Some((entry, text)) = game_and_text(data) else {
        return;
    };
    let mut lines = text.lines();
    let Some(fen) = lines.next() else { return };
    let Ok(mut game) = entry.new_game(Some(fen)) else {
        return;
    };
    let written = game.fen();
    let again = entry
        .new_game(Some(&written))
        .unwrap_or_else(|e| panic!("{}: its own FEN {written:?} is refused: {e}", entry.id));
    assert_eq!(again.fen(), written, "{}: FEN round trip", entry.id);
    // Every piece the game writes has a picture.
    let tokens = entry
        .drawing
        .squares(&written)
        .into_iter()
        .flatten()
        .flatten()
        .count();
    let svg = board_svg(entry, &written, &Marks::default());
    assert_eq!(
        svg.matches("class=\"piece\"").count(),
        tokens,
        "{}: {written}",
        entry.id
    );
    let legal = game.legal_moves();
    for mv in legal.iter().take(64) {
        let mut copy = game.boxed_clone();
        let marks = Marks::play(copy.as_mut(), mv)
            .unwrap_or_else(|e| panic!("{}: listed move {mv} refused in {written}: {e}", entry.id));
        let _ = board_svg(entry, &copy.fen(), &marks);
        let _ = copy.status();
    }
    for mv in lines.flat_map(str::split_whitespace).take(64) {
        if game.status().is_over() {
            break;
        }
        if game.play(mv).is_ok() {
            let fen = game.fen();
            assert!(
                entry.new_game(Some(&fen)).is_ok(),
                "{}: FEN {fen:?} after {mv} is refused",
                entry.id
            );
        }
    }
}

/// An opening book of one game, in each of its formats: every opening it yields replays from
/// its position.
pub fn books(data: &[u8]) {
    use arbiter::tournament::openings::{parse_book, parse_epd, parse_pgn_book};
    let Some((entry, text)) = game_and_text(data) else {
        return;
    };
    let books = [
        parse_book(&text, "fuzz.txt", entry, None),
        parse_book(&text, "fuzz.txt", entry, Some(3)),
        parse_epd(&text, "fuzz.epd", entry),
        parse_pgn_book(&text, "fuzz.pgn", entry, None),
    ];
    for openings in books.into_iter().flatten() {
        for o in openings {
            let mut game = entry
                .new_game(o.fen.as_deref())
                .unwrap_or_else(|e| panic!("a book opening's position is refused: {e}"));
            for mv in &o.moves {
                if let Err(e) = game.play(mv) {
                    panic!("a book opening's move {mv} does not replay: {e}");
                }
            }
        }
    }
}

/// Journal lines (a run's, a shard's, a merge's input): an entry read back is written again
/// and reads the same.
pub fn journal_lines(data: &[u8]) {
    use arbiter::tournament::journal::parse_line;
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let Some((entry, _)) = parse_line(line.trim()) else {
            continue;
        };
        let written = serde_json::to_string(&entry).expect("an entry always writes");
        let (again, glued) = parse_line(&written)
            .unwrap_or_else(|| panic!("a written entry does not read back: {written}"));
        assert!(!glued);
        // Durations are whole microseconds in the journal: compare what was written.
        let rewritten = serde_json::to_string(&again).expect("an entry always writes");
        assert_eq!(rewritten, written, "journal round trip");
    }
}

/// A run folder's run.json: read, checked as every run is, and its identity taken.
pub fn run_specs(data: &[u8]) {
    let Ok(spec) = serde_json::from_slice::<arbiter::tournament::RunSpec>(data) else {
        return;
    };
    let _ = spec.check();
    let _ = spec.identity();
    let _ = spec.schedule_size();
}

/// PGN text, as `arbiter rate` reads it: with the moves, and without them (plain `rate`), where
/// every game must have the same tags, outcome and line, and every error the same place. (A
/// game whose tags give its result keeps no result token from its movetext when the moves are
/// skipped: its outcome is what is compared.)
pub fn pgn(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let full = arbiter::pgn::read_games(&text);
    let results: Vec<_> = arbiter::pgn::PgnReader::new(text.as_bytes())
        .results_only()
        .collect();
    let full_games: Vec<_> = match &full {
        Ok(games) => games.iter().map(|g| Ok(g.clone())).collect(),
        Err(e) => vec![Err(e.clone())],
    };
    let strip = |g: &Result<arbiter::pgn::PgnGame, arbiter::pgn::PgnError>| {
        g.clone().map(|mut g| {
            g.moves.clear();
            g.result = g.outcome().map(|o| o.as_str().to_string());
            g
        })
    };
    let last_or_all = |v: Vec<_>| match full {
        Ok(_) => v,
        Err(_) => v.into_iter().rev().take(1).collect(),
    };
    assert_eq!(
        last_or_all(results.iter().map(strip).collect()),
        full_games.iter().map(strip).collect::<Vec<_>>()
    );
}

/// A run configuration as the command line reads one: the first byte picks the MIT autotester's
/// `.txt`, a TOML run file, or fastchess's `config.json`. What is read is a run whose settings
/// check without a panic and whose `run.json` reads back the same; a `config.json` becomes an
/// arbiter command line or a refusal.
pub fn configs(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match pick % 3 {
        0 | 1 => {
            let Ok(spec) = arbiter_cli::fuzzing::run_file(&text, pick % 3 == 1) else {
                return;
            };
            let _ = spec.check();
            let _ = spec.schedule_size();
            let json = serde_json::to_string(&spec).expect("a run spec writes as JSON");
            let again: arbiter::tournament::RunSpec = serde_json::from_str(&json)
                .unwrap_or_else(|e| panic!("its own run.json {json} is refused: {e}"));
            assert_eq!(
                serde_json::to_string(&again).expect("writes"),
                json,
                "run.json round trip"
            );
        }
        _ => {
            if let Ok(argv) = arbiter_cli::fuzzing::fastchess_config(&text) {
                assert!(!argv.is_empty(), "an empty command line from {text:?}");
            }
        }
    }
}
