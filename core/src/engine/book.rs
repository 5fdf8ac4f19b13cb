//! An engine's own opening book in the Polyglot format (cutechess-cli's `book=FILE
//! bookdepth=N`): while the game is in the book and within its depth, the referee plays the
//! engine's move from the book instead of asking the engine, as cutechess-cli does.
//!
//! The format is the published Polyglot one: entries of 16 bytes, big-endian, sorted by key:
//! the position's key (a Zobrist hash with Polyglot's fixed random numbers, which shakmaty's
//! `Zobrist64` computes), the move (to-file, to-row, from-file, from-row in three bits each from
//! the lowest, then the promotion piece: 1 knight, 2 bishop, 3 rook, 4 queen; castling is the
//! king taking its own rook), a weight, and four bytes of learning data.

use shakmaty::fen::Fen;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, EnPassantMode, Position as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// One move of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    key: u64,
    mv: u16,
    weight: u16,
}

/// A Polyglot book, read whole.
#[derive(Debug)]
pub struct PolyglotBook {
    entries: Vec<Entry>,
}

/// The largest book read: books of hundreds of megabytes exist, but a file of gigabytes given
/// by mistake must not take the machine's memory.
const MAX_BOOK_BYTES: u64 = 1 << 30;

impl PolyglotBook {
    /// Reads `path`; the reason it is no Polyglot book otherwise.
    pub fn read(path: &Path) -> Result<PolyglotBook, String> {
        let bytes = crate::input::read_capped(path, MAX_BOOK_BYTES)
            .map_err(|why| format!("{}: {why}", path.display()))?;
        PolyglotBook::from_bytes(&bytes).map_err(|why| format!("{}: {why}", path.display()))
    }

    fn from_bytes(bytes: &[u8]) -> Result<PolyglotBook, String> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(16) {
            return Err(format!(
                "{} bytes, not a whole number of 16-byte Polyglot entries",
                bytes.len()
            ));
        }
        let mut entries: Vec<Entry> = bytes
            .chunks_exact(16)
            .map(|e| Entry {
                key: u64::from_be_bytes(e[..8].try_into().expect("8 bytes")),
                mv: u16::from_be_bytes([e[8], e[9]]),
                weight: u16::from_be_bytes([e[10], e[11]]),
            })
            .collect();
        // Books are written sorted; one that is not is sorted here rather than misread.
        entries.sort_by_key(|e| e.key);
        Ok(PolyglotBook { entries })
    }

    /// The book's moves for a position key, with their weights.
    fn moves(&self, key: u64) -> &[Entry] {
        let start = self.entries.partition_point(|e| e.key < key);
        let end = start + self.entries[start..].partition_point(|e| e.key == key);
        &self.entries[start..end]
    }

    /// The book's move for the chess position `fen` (`chess960`: castling rights by file), as
    /// UCI text with castling as the king taking its rook, drawn by the weights with `draw` (any
    /// number: the same draw picks the same move). None out of the book, or where every move
    /// of the position has weight 0.
    pub fn pick(&self, fen: &str, chess960: bool, draw: u64) -> Option<String> {
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let pos: shakmaty::Chess = Fen::from_ascii(fen.as_bytes())
            .ok()?
            .into_position(mode)
            .ok()?;
        let key: Zobrist64 = pos.zobrist_hash(EnPassantMode::PseudoLegal);
        let moves = self.moves(key.0);
        let total: u64 = moves.iter().map(|e| u64::from(e.weight)).sum();
        if total == 0 {
            return None;
        }
        let mut at = draw % total;
        let chosen = moves.iter().find(|e| {
            let w = u64::from(e.weight);
            if at < w {
                true
            } else {
                at -= w;
                false
            }
        })?;
        Some(move_text(chosen.mv))
    }
}

/// A Polyglot move as UCI text (`e1h1` for castling, as the format writes it).
fn move_text(mv: u16) -> String {
    let square = |file: u16, row: u16| {
        let f = char::from(b'a' + (file & 7) as u8);
        let r = char::from(b'1' + (row & 7) as u8);
        format!("{f}{r}")
    };
    let mut text = square(mv >> 6, mv >> 9);
    text.push_str(&square(mv, mv >> 3));
    match (mv >> 12) & 7 {
        1 => text.push('n'),
        2 => text.push('b'),
        3 => text.push('r'),
        4 => text.push('q'),
        _ => {}
    }
    text
}

/// The books read so far, by path.
type ReadBooks = Mutex<Vec<(PathBuf, Arc<PolyglotBook>)>>;

/// Each book read once for the whole run, however many workers play from it.
pub fn shared(path: &Path) -> Result<Arc<PolyglotBook>, String> {
    static READ: OnceLock<ReadBooks> = OnceLock::new();
    let mut read = READ
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, book)) = read.iter().find(|(p, _)| p == path) {
        return Ok(book.clone());
    }
    let book = Arc::new(PolyglotBook::read(path)?);
    read.push((path.to_path_buf(), book.clone()));
    Ok(book)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: u64, mv: &str, weight: u16) -> Vec<u8> {
        let b = mv.as_bytes();
        let sq = |f: u8, r: u8| u16::from(f - b'a') | (u16::from(r - b'1') << 3);
        let code = sq(b[2], b[3]) | (sq(b[0], b[1]) << 6);
        let mut out = key.to_be_bytes().to_vec();
        out.extend_from_slice(&code.to_be_bytes());
        out.extend_from_slice(&weight.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        out
    }

    /// The start position's key is the one the Polyglot format's description gives
    /// (0x463b96181691fc9c); after 1. e4, 0x823c9b50fd114196.
    #[test]
    fn moves_are_found_by_the_published_keys_and_drawn_by_weight() {
        let mut bytes = entry(0x823c_9b50_fd11_4196, "d7d5", 1);
        bytes.extend(entry(0x463b_9618_1691_fc9c, "e2e4", 3));
        bytes.extend(entry(0x463b_9618_1691_fc9c, "d2d4", 1));
        let book = PolyglotBook::from_bytes(&bytes).unwrap();
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let picks: Vec<String> = (0..4)
            .map(|d| book.pick(start, false, d).unwrap())
            .collect();
        assert_eq!(picks, ["e2e4", "e2e4", "e2e4", "d2d4"]);
        let after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(book.pick(after_e4, false, 7).as_deref(), Some("d7d5"));
        let out_of_book = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(book.pick(out_of_book, false, 0), None);
        assert!(PolyglotBook::from_bytes(&bytes[..20]).is_err());
    }

    #[test]
    fn promotions_and_castling_read_as_the_format_writes_them() {
        // e7e8q: to e8 (4, 7), from e7 (4, 6), queen 4.
        let code = 4 | (7 << 3) | (4 << 6) | (6 << 9) | (4 << 12);
        assert_eq!(move_text(code), "e7e8q");
        // White's short castling as the king takes the h1 rook.
        let code = 7 | (4 << 6);
        assert_eq!(move_text(code), "e1h1");
    }
}
