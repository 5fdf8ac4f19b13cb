//! Opening books: one opening per line, validated against the rules when loaded.
//!
//! A line is either moves separated by spaces (`g4g5 e6e7`, the MIT autotester's format), or
//! `fen <FEN>` optionally followed by `moves <m1> <m2> ...` (as in UCI's `position`). Blank lines
//! and lines starting with `#` are skipped.

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
        let mut moves: Vec<String> = moves_text.split_whitespace().map(str::to_string).collect();
        if let Some(max) = max_plies {
            moves.truncate(max);
        }
        let mut game = entry
            .new_game(fen.as_deref())
            .map_err(|e| bad(e.to_string()))?;
        for (ply, mv) in moves.iter().enumerate() {
            game.play(mv)
                .map_err(|e| bad(format!("ply {}: {e}", ply + 1)))?;
        }
        if game.status().is_over() {
            return Err(bad(
                "the game is already over at the end of this line".into()
            ));
        }
        openings.push(Opening {
            line: line_no,
            fen,
            moves,
        });
    }
    if openings.is_empty() {
        return Err(BookError::Empty {
            path: path.to_string(),
        });
    }
    Ok(openings)
}

pub fn load_book(
    path: &Path,
    entry: &GameEntry,
    max_plies: Option<usize>,
) -> Result<Vec<Opening>, BookError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| BookError::Read {
        path: name.clone(),
        reason: e.to_string(),
    })?;
    parse_book(&text, &name, entry, max_plies)
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
