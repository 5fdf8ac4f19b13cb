//! Opening books, validated against the rules when loaded, every mistake named by file and line.
//!
//! arbiter's own format (`.txt`, any other name): one opening per line, moves separated by spaces
//! (`g4g5 e6e7`, the MIT autotester's format), or `fen <FEN>` optionally followed by
//! `moves <m1> <m2> ...` (as in UCI's `position`); blank lines and `#` lines are skipped.
//! Chess users' formats: `.epd`, one position per line (the four EPD fields; of the opcodes after
//! them only the move counters `hmvc` and `fmvn` are read), and `.pgn`, each game's moves (SAN or
//! the game's notation) from its `FEN` tag or the start. Moves are kept in the game's own notation,
//! as the engines are sent them.

use crate::game::GameEntry;
use std::path::Path;
use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// Line number in the book (1-based); 0 for the start position.
    pub line: usize,
    pub fen: Option<String>,
    pub moves: Vec<String>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum BookError {
    #[error("cannot read opening book {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}:{line}: {reason}")]
    Bad {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("{path}: no openings in the book")]
    Empty { path: String },
}

/// Parses and validates a book's text. `max_plies` keeps only the first plies of each line (the
/// MIT autotester uses 10).
pub fn parse_book(
    text: &str,
    path: &str,
    entry: &GameEntry,
    max_plies: Option<usize>,
) -> Result<Vec<Opening>, BookError> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |reason: String| BookError::Bad {
            path: path.to_string(),
            line: line_no,
            reason,
        };
        let (fen, moves_text) = match line.strip_prefix("fen ") {
            Some(rest) => match rest.split_once(" moves ") {
                Some((fen, moves)) => (Some(fen.trim().to_string()), moves),
                None => (Some(rest.trim().to_string()), ""),
            },
            None => (None, line),
        };
        let moves: Vec<&str> = moves_text.split_whitespace().collect();
        openings.push(checked(entry, line_no, fen, &moves, max_plies).map_err(bad)?);
    }
    if openings.is_empty() {
        return Err(BookError::Empty {
            path: path.to_string(),
        });
    }
    Ok(openings)
}

/// An opening played through the rules: its moves in the game's notation, cut at `max_plies`;
/// refused when a move is not legal or the game is over by its end.
fn checked(
    entry: &GameEntry,
    line: usize,
    fen: Option<String>,
    moves: &[&str],
    max_plies: Option<usize>,
) -> Result<Opening, String> {
    let moves = &moves[..max_plies.unwrap_or(usize::MAX).min(moves.len())];
    let mut game = entry.new_game(fen.as_deref()).map_err(|e| e.to_string())?;
    let mut played = Vec::with_capacity(moves.len());
    for (ply, mv) in moves.iter().enumerate() {
        // Refused rather than charged to the side to move (the MIT course's tester scores it
        // a loss for White): a game no engine decided would count in the ratings.
        let report = game.play(mv).map_err(|e| {
            format!(
                "ply {}: {e}; a book's lines must be legal, a game lost to its book would \
                 count as played",
                ply + 1
            )
        })?;
        played.push(report.mv);
    }
    if game.status().is_over() {
        return Err("the game is already over at the end of this line".into());
    }
    Ok(Opening {
        line,
        fen,
        moves: played,
    })
}

/// The move counters an EPD line's `hmvc` and `fmvn` opcodes give (as `-epdout` writes them),
/// else those of a new game.
fn epd_counters(opcodes: &str) -> (&str, &str) {
    let mut counters = ("0", "1");
    for op in opcodes.split(';') {
        let mut words = op.split_whitespace();
        match (words.next(), words.next()) {
            (Some("hmvc"), Some(n)) => counters.0 = n,
            (Some("fmvn"), Some(n)) => counters.1 = n,
            _ => {}
        }
    }
    counters
}

/// An EPD book: one position per line, its four fields (board, side, castling, en passant),
/// then opcodes, of which the move counters are kept.
pub fn parse_epd(text: &str, path: &str, entry: &GameEntry) -> Result<Vec<Opening>, BookError> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let (fields, rest) = words.split_at(words.len().min(4));
        // A FEN's two counters where the opcodes would begin (`... w - - 7 9`), as fastchess
        // and cutechess-cli read such a line; else the `hmvc`/`fmvn` opcodes, else 0 and 1.
        let number = |w: &str| w.bytes().all(|b| b.is_ascii_digit());
        let opcodes = rest.join(" ");
        let (halfmove, fullmove) = match rest {
            [halfmove, fullmove, ..] if number(halfmove) && number(fullmove) => {
                (*halfmove, *fullmove)
            }
            _ => epd_counters(&opcodes),
        };
        let fen = format!("{} {halfmove} {fullmove}", fields.join(" "));
        let opening =
            checked(entry, i + 1, Some(fen), &[], None).map_err(|reason| BookError::Bad {
                path: path.to_string(),
                line: i + 1,
                reason,
            })?;
        openings.push(opening);
    }
    non_empty(openings, path)
}

/// A PGN book: each game's moves, from its `FEN` tag or the start position.
pub fn parse_pgn_book(
    text: &str,
    path: &str,
    entry: &GameEntry,
    max_plies: Option<usize>,
) -> Result<Vec<Opening>, BookError> {
    let bad = |line: usize, reason: String| BookError::Bad {
        path: path.to_string(),
        line,
        reason,
    };
    let games = crate::pgn::read_games(text).map_err(|e| bad(e.line, e.reason))?;
    let openings = games
        .iter()
        .map(|g| {
            let moves: Vec<&str> = g.moves.iter().map(String::as_str).collect();
            checked(
                entry,
                g.line,
                g.tag("FEN").map(str::to_string),
                &moves,
                max_plies,
            )
            .map_err(|reason| bad(g.line, reason))
        })
        .collect::<Result<Vec<_>, _>>()?;
    non_empty(openings, path)
}

fn non_empty(openings: Vec<Opening>, path: &str) -> Result<Vec<Opening>, BookError> {
    if openings.is_empty() {
        return Err(BookError::Empty {
            path: path.to_string(),
        });
    }
    Ok(openings)
}

/// Reads a book in the format its name says: `.epd`, `.pgn`, else arbiter's own.
/// How a book's text reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BookFormat {
    Epd,
    Pgn,
    /// arbiter's own: a position or moves per line.
    Lines,
}

impl BookFormat {
    pub fn parse(text: &str) -> Result<BookFormat, String> {
        match text {
            "epd" => Ok(BookFormat::Epd),
            "pgn" => Ok(BookFormat::Pgn),
            "lines" | "txt" => Ok(BookFormat::Lines),
            other => Err(format!("'{other}': epd, pgn or lines")),
        }
    }

    /// The format a file's name says: `.epd`, `.pgn`, else arbiter's lines.
    pub fn of_name(path: &Path) -> BookFormat {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("epd") => BookFormat::Epd,
            Some("pgn") => BookFormat::Pgn,
            _ => BookFormat::Lines,
        }
    }
}

/// The largest opening book read: books of millions of positions are some hundreds of MiB.
const MAX_BOOK_BYTES: u64 = 2 << 30;

pub fn load_book(
    path: &Path,
    entry: &GameEntry,
    max_plies: Option<usize>,
) -> Result<Vec<Opening>, BookError> {
    load_book_as(path, BookFormat::of_name(path), entry, max_plies)
}

/// The book in `path` read as `format`, whatever its name.
pub fn load_book_as(
    path: &Path,
    format: BookFormat,
    entry: &GameEntry,
    max_plies: Option<usize>,
) -> Result<Vec<Opening>, BookError> {
    let name = path.display().to_string();
    let text =
        crate::input::read_text_capped(path, MAX_BOOK_BYTES).map_err(|reason| BookError::Read {
            path: name.clone(),
            reason,
        })?;
    // Editors on Windows start UTF-8 files with a byte order mark: it is no part of the book.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match format {
        BookFormat::Epd => parse_epd(text, &name, entry),
        BookFormat::Pgn => parse_pgn_book(text, &name, entry, max_plies),
        BookFormat::Lines => parse_book(text, &name, entry, max_plies),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::find_game;

    #[test]
    fn reads_move_lines_and_fen_lines() {
        let entry = find_game("leiserchess").unwrap();
        let book = "# comment\ng4g5 e6e7\n\nfen ss7/8/8/8/8/8/8/7NN W moves h0L a7R\n";
        let openings = parse_book(book, "b.txt", entry, None).unwrap();
        assert_eq!(openings.len(), 2);
        assert_eq!(openings[0].line, 2);
        assert_eq!(openings[1].fen.as_deref(), Some("ss7/8/8/8/8/8/8/7NN W"));
        assert_eq!(openings[1].moves, ["h0L", "a7R"]);
    }

    #[test]
    fn chess_books_in_epd_and_pgn_keep_moves_in_uci() {
        let chess = find_game("chess").unwrap();
        let epd = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; id \"x\";\n";
        let openings = parse_epd(epd, "b.epd", chess).unwrap();
        assert_eq!(
            openings[0].fen.as_deref(),
            Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
        );
        let pgn = "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 Nf6 *\n";
        let openings = parse_pgn_book(pgn, "b.pgn", chess, Some(2)).unwrap();
        assert_eq!(openings[0].moves, ["e2e4", "e7e5"]);
        assert_eq!(openings[1].moves, ["d2d4", "g8f6"]);
        let err = parse_pgn_book("[Event \"a\"]\n\n1. e4 e4 *\n", "b.pgn", chess, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("b.pgn:1: ply 2: illegal move 'e4'"),
            "{err}"
        );
        // What -epdout writes reads back with its move counters.
        let epd = "8/8/4k3/8/8/3RK3/8/8 w - - hmvc 37; fmvn 80;\n";
        let openings = parse_epd(epd, "b.epd", chess).unwrap();
        assert_eq!(
            openings[0].fen.as_deref(),
            Some("8/8/4k3/8/8/3RK3/8/8 w - - 37 80")
        );
        let err = parse_epd("8/8/8/8/8/8/8/8 w - -\n", "b.epd", chess)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("b.epd:1: "), "{err}");
    }

    #[test]
    fn an_illegal_line_names_file_line_and_ply() {
        let entry = find_game("leiserchess").unwrap();
        let err = parse_book("g4g5 e6e7\ng4g5 g4g5\n", "book.txt", entry, None).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("book.txt:2: ply 2: illegal move 'g4g5'"),
            "{text}"
        );
        assert!(parse_book("# only\n", "e.txt", entry, None)
            .unwrap_err()
            .to_string()
            .contains("no openings"));
    }
}
