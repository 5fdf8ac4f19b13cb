//! Standard chess, through the `shakmaty` crate: its move generation is exact and tested against
//! the published perft numbers by its authors, so arbiter writes no chess rules of its own. This
//! file only adapts it: UCI move notation (SAN accepted too, and written in PGN), FEN, and the
//! draws the referee applies from the game's history (threefold repetition, the 50-move rule,
//! insufficient material). Chess960 (Fischer random chess) is the same type with shakmaty's
//! Chess960 castling: the king castles with a rook wherever the start put them, and UCI writes
//! castling as the king taking its own rook (`e1g1` for a king on e1 is read too).

use super::chess_lines;
use crate::game::drawing::{lettered, Figure, Shape};
use crate::game::Drawing;
use crate::game::{
    Color, FenError, History, MoveError, Outcome, Position, Removals, SquareName, Status,
    Termination,
};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Bitboard, CastlingMode, EnPassantMode, Move, Position as _, Role};

/// Plies without a capture or a pawn move before the game is drawn (50 moves by each side).
pub const MOVE_RULE_PLIES: u32 = 100;

fn color(c: shakmaty::Color) -> Color {
    match c {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    }
}

/// Standard chess.
pub type Chess = ChessRules<false>;
/// Chess960: the start position comes from the book (or is the standard one, number 518).
pub type Chess960 = ChessRules<true>;

#[derive(Clone, Debug)]
pub struct ChessRules<const FISCHER_RANDOM: bool> {
    pos: shakmaty::Chess,
    /// The position's Zobrist key, kept up to date move by move: computed afresh, it reads a
    /// table entry per piece, which in a match are cache misses at every ply.
    key: u64,
    /// The pieces giving check, found once per move: the history, the end of the game and the
    /// PGN's suffix all ask, and each asking costs attack-table lookups (cache misses after an
    /// engine's search).
    checkers: Bitboard,
}

impl<const FISCHER_RANDOM: bool> ChessRules<FISCHER_RANDOM> {
    const CASTLING: CastlingMode = if FISCHER_RANDOM {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };

    fn new(pos: shakmaty::Chess) -> Self {
        let key: Zobrist64 = pos.zobrist_hash(EnPassantMode::Legal);
        let checkers = pos.checkers();
        Self {
            pos,
            key: key.0,
            checkers,
        }
    }

    /// Whether the side to move has a legal move. Out of check, most positions have a pawn
    /// push, a knight move or a king step that `chess_lines` finds legal without a table; only
    /// the others pay for a full move generation.
    fn has_legal_move(&self) -> bool {
        if self.checkers.is_empty() {
            let board = self.pos.board();
            let us = self.pos.turn();
            if board
                .king_of(us)
                .is_some_and(|king| chess_lines::plain_move_exists(board, us, king))
            {
                return true;
            }
        }
        !self.pos.legal_moves().is_empty()
    }

    /// Plays `mv` through `play` (shakmaty's `play_unchecked` or a SAN writer that calls it)
    /// and keeps the key.
    fn play_keyed<T>(&mut self, mv: Move, play: impl FnOnce(&mut shakmaty::Chess, Move) -> T) -> T {
        let key = self
            .pos
            .update_zobrist_hash(Zobrist64(self.key), mv, EnPassantMode::Legal);
        let played = play(&mut self.pos, mv);
        // shakmaty updates only the common moves (not castling, king moves, double steps or
        // anything next to an en passant chance); the others are hashed afresh.
        self.key = key
            .unwrap_or_else(|| self.pos.zobrist_hash(EnPassantMode::Legal))
            .0;
        self.checkers = chess_lines::checkers_after(self.pos.board(), !self.pos.turn(), mv)
            .unwrap_or_else(|| self.pos.checkers());
        played
    }

    /// The move in Standard Algebraic Notation, with `+`/`#`, as PGN writes it.
    pub fn san(&self, mv: Move) -> String {
        SanPlus::from_move(self.pos.clone(), mv).to_string()
    }
}

fn figure(token: &str) -> Option<Figure> {
    lettered(
        token,
        &[
            ('K', Shape::Crown),
            ('Q', Shape::Star),
            ('R', Shape::Square),
            ('B', Shape::Diamond),
            ('N', Shape::Triangle),
            ('P', Shape::Disc),
        ],
    )
}

impl<const FISCHER_RANDOM: bool> Position for ChessRules<FISCHER_RANDOM> {
    type Move = Move;

    const ID: &'static str = if FISCHER_RANDOM { "chess960" } else { "chess" };
    const DRAWING: Drawing = Drawing {
        figure,
        legend: &[
            ("K", "King"),
            ("Q", "Queen"),
            ("R", "Rook"),
            ("B", "Bishop"),
            ("N", "Knight"),
            ("P", "Pawn"),
        ],
        ..Drawing::STANDARD
    };
    /// EPD as fastchess writes it: the FEN's clocks as `hmvc`/`fmvn` opcodes.
    fn position_line(fen: &str) -> String {
        match fen.split_whitespace().collect::<Vec<_>>().as_slice() {
            [board, side, castling, ep, halfmove, fullmove] => {
                format!("{board} {side} {castling} {ep} hmvc {halfmove}; fmvn {fullmove};")
            }
            _ => fen.to_string(),
        }
    }
    const DESCRIPTION: &'static str = if FISCHER_RANDOM {
        "Chess960 (Fischer random chess, by the shakmaty crate), the start from the book; UCI \
         castling as the king taking its rook, X-FEN/Shredder-FEN"
    } else {
        "Standard chess (FIDE rules by the shakmaty crate), UCI moves, FEN, SAN in PGN"
    };
    const START_FEN: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const SAN_IN_PGN: bool = true;

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        let err = |reason: String| FenError::new(Self::ID, fen, reason);
        let parsed = Fen::from_ascii(fen.trim().as_bytes()).map_err(|e| err(e.to_string()))?;
        let pos = parsed
            .into_position(Self::CASTLING)
            .map_err(|e| err(e.to_string()))?;
        Ok(Self::new(pos))
    }

    fn fen(&self) -> String {
        // Appended rather than formatted: the game viewer writes one for every ply it shows.
        let mut text = String::with_capacity(96);
        Fen::from_position(&self.pos, EnPassantMode::Legal).append_to_string(&mut text);
        text
    }

    fn turn(&self) -> Color {
        color(self.pos.turn())
    }

    fn generate(&self, out: &mut Vec<Move>) {
        out.extend(self.pos.legal_moves());
    }

    fn play(&mut self, mv: Move) -> Removals {
        let removed = mv.capture().map(|role| {
            // En passant takes the pawn beside the square moved to.
            let square = match mv {
                Move::EnPassant { from, to } => {
                    shakmaty::Square::from_coords(to.file(), from.rank())
                }
                _ => mv.to(),
            };
            let piece = role.of(!self.pos.turn()).char();
            // Spelt on the stack: captures come often and each would allocate twice.
            let name = [square.file().char() as u8, square.rank().char() as u8];
            Removals::one(
                SquareName::new(std::str::from_utf8(&name).unwrap_or("?")),
                piece.encode_utf8(&mut [0; 4]),
            )
        });
        self.play_keyed(mv, |pos, mv| pos.play_unchecked(mv));
        removed.unwrap_or_default()
    }

    fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        if let Ok(uci) = text.parse::<UciMove>() {
            if let UciMove::Normal {
                from,
                to,
                promotion,
            } = uci
            {
                let board = self.pos.board();
                let (us, in_check) = (self.pos.turn(), self.checkers.any());
                if let Some(mv) = chess_lines::plain_move(board, us, in_check, from, to, promotion)
                {
                    return Ok(mv);
                }
            }
            return uci
                .to_move(&self.pos)
                .map_err(|_| MoveError::illegal(text, "not a legal move in this position"));
        }
        // Opening books and PGN files write SAN; a `+` or `#` is allowed.
        let san = text
            .trim_end_matches(['+', '#'])
            .parse::<San>()
            .map_err(|_| {
                MoveError::malformed(
                    text,
                    "a chess move looks like e2e4, e7e8q or e1g1 (UCI), or Nf3",
                )
            })?;
        san.to_move(&self.pos)
            .map_err(|e| MoveError::illegal(text, e.to_string()))
    }

    fn move_text(&self, mv: Move) -> String {
        // Appended rather than formatted: the referee says every engine's move this way.
        let mut text = String::with_capacity(5);
        mv.to_uci(Self::CASTLING).append_to_string(&mut text);
        text
    }

    fn key(&self) -> u64 {
        self.key
    }

    fn perft(&self, depth: u32) -> u64 {
        shakmaty::perft(&self.pos, depth)
    }

    fn material(&self) -> i32 {
        let board = self.pos.board();
        let value = |role: Role| match role {
            Role::Pawn => 100,
            Role::Knight | Role::Bishop => 300,
            Role::Rook => 500,
            Role::Queen => 900,
            Role::King => 0,
        };
        let side = |c: shakmaty::Color| -> i32 {
            Role::ALL
                .iter()
                .map(|&r| value(r) * (board.by_piece(r.of(c)).count() as i32))
                .sum()
        };
        let us = self.pos.turn();
        side(us) - side(!us)
    }

    fn in_check(&self) -> bool {
        self.checkers.any()
    }

    fn resets_move_rule(mv: Move, _removed: &Removals) -> bool {
        mv.is_capture() || mv.role() == Role::Pawn
    }

    fn initial_quiet_plies(&self) -> u32 {
        self.pos.halfmoves()
    }

    fn board_status(&self) -> Status {
        if self.has_legal_move() {
            Status::Ongoing
        } else if self.checkers.any() {
            Status::Over(color(!self.pos.turn()).wins(), Termination::Checkmate)
        } else {
            Status::Over(Outcome::Draw, Termination::Stalemate)
        }
    }

    fn judge(history: &History<Self>) -> Status {
        match history.board_then_draws(MOVE_RULE_PLIES) {
            Status::Ongoing if history.current().pos.is_insufficient_material() => {
                Status::Over(Outcome::Draw, Termination::InsufficientMaterial)
            }
            status => status,
        }
    }

    fn pgn_move_text(&self, mv: Move) -> String {
        self.san(mv)
    }

    fn play_for_pgn(&mut self, mv: Move) -> String {
        // A piece no other of its kind could move to the same square needs no disambiguation:
        // shakmaty's asks for every candidate's legality (attack tables), at every ply of every
        // game the PGN writes.
        let alone = match mv {
            Move::Normal {
                role: Role::King, ..
            } => true,
            Move::Normal { role, from, to, .. } => {
                let (board, us) = (self.pos.board(), self.pos.turn());
                chess_lines::alone_to_reach(board, us, role, from, to)
            }
            _ => false,
        };
        let san = if alone {
            San::disambiguate(mv, &shakmaty::MoveList::new())
        } else {
            San::from_move(&self.pos, mv)
        };
        self.play_keyed(mv, |pos, mv| pos.play_unchecked(mv));
        // shakmaty's own suffix asks for the game's outcome, a full move generation at every
        // ply; only a check can be a mate, so only a check asks whether any move is left.
        let suffix = self.checkers.any().then(|| {
            if self.pos.legal_moves().is_empty() {
                Suffix::Checkmate
            } else {
                Suffix::Check
            }
        });
        let mut text = String::with_capacity(8);
        SanPlus { san, suffix }.append_to_string(&mut text);
        text
    }

    fn render(&self) -> String {
        let board = self.pos.board();
        let mut out = String::new();
        for rank in (0..8u32).rev() {
            out.push_str(&format!("{} ", rank + 1));
            for file in 0..8u32 {
                let square = shakmaty::Square::from_coords(
                    shakmaty::File::new(file),
                    shakmaty::Rank::new(rank),
                );
                out.push(' ');
                out.push(board.piece_at(square).map_or('.', shakmaty::Piece::char));
            }
            out.push('\n');
        }
        out.push_str("   a b c d e f g h\n");
        out.push_str(match self.pos.turn() {
            shakmaty::Color::White => "White to move\n",
            shakmaty::Color::Black => "Black to move\n",
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{pick, Game};

    /// Random games, each move said both ways: with checks, mates, castling, en passant and
    /// promotions among them.
    #[test]
    fn playing_for_pgn_is_saying_the_move_then_playing_it() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut moves = Vec::new();
        let mut said = 0;
        let mut suffixes = [0; 3];
        for _ in 0..200 {
            let mut a = Chess::from_fen(Chess::START_FEN).unwrap();
            for _ in 0..300 {
                moves.clear();
                a.generate(&mut moves);
                if moves.is_empty() {
                    break;
                }
                let mv = pick(&mut seed, &moves);
                let mut c = a.clone();
                let want = c.pgn_move_text(mv);
                c.play(mv);
                assert_eq!(a.play_for_pgn(mv), want);
                suffixes
                    [usize::from(want.ends_with('+')) + 2 * usize::from(want.ends_with('#'))] += 1;
                assert_eq!(a.fen(), c.fen());
                // The key kept move by move is the one computed afresh, both ways of playing.
                let fresh: Zobrist64 = a.pos.zobrist_hash(EnPassantMode::Legal);
                assert_eq!((a.key(), c.key()), (fresh.0, fresh.0), "{}", a.fen());
                said += 1;
            }
        }
        assert!(said > 10_000, "{said}");
        // Checks and mates among them, which alone are written from a move generation.
        assert!(suffixes[1] > 1_000 && suffixes[2] > 20, "{suffixes:?}");
    }

    /// The shortcut answers as a full move generation does, in random games and in mates and
    /// stalemates; both of its ways (a move found, the generation after all) are taken many
    /// times.
    #[test]
    fn whether_a_move_is_left_is_what_the_move_generation_says() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut ways = [0; 2];
        let mut moves = Vec::new();
        let check = |p: &Chess, ways: &mut [u32; 2]| {
            assert_eq!(p.checkers, p.pos.checkers(), "{}", p.fen());
            let generated = !p.pos.legal_moves().is_empty();
            assert_eq!(p.has_legal_move(), generated, "{}", p.fen());
            let (board, us) = (p.pos.board(), p.pos.turn());
            let king = board.king_of(us).unwrap();
            let found = p.checkers.is_empty() && chess_lines::plain_move_exists(board, us, king);
            ways[usize::from(found)] += 1;
        };
        for _ in 0..300 {
            let mut p = Chess::from_fen(Chess::START_FEN).unwrap();
            for _ in 0..400 {
                check(&p, &mut ways);
                moves.clear();
                p.generate(&mut moves);
                if moves.is_empty() {
                    break;
                }
                p.play(pick(&mut seed, &moves));
            }
        }
        assert!(ways[0] > 5_000 && ways[1] > 5_000, "{ways:?}");
        for (fen, status) in [
            // Stalemate: the king's free squares are all attacked.
            (
                "k7/8/1Q6/8/8/8/8/7K b - - 0 1",
                Status::Over(Outcome::Draw, Termination::Stalemate),
            ),
            // Mate in the corner.
            (
                "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
                Status::Over(Outcome::WhiteWins, Termination::Checkmate),
            ),
            // The king is shut in, but a pawn can move.
            ("k7/8/1Q6/8/8/8/p7/7K b - - 0 1", Status::Ongoing),
        ] {
            let p = Chess::from_fen(fen).unwrap();
            check(&p, &mut ways);
            assert_eq!(p.board_status(), status, "{fen}");
        }
    }

    #[test]
    fn moves_read_in_uci_and_san_and_write_in_both() {
        let p = Chess::from_fen(Chess::START_FEN).unwrap();
        let mv = p.parse_move("g1f3").unwrap();
        assert_eq!(p.parse_move("Nf3").unwrap(), mv);
        assert_eq!(p.move_text(mv), "g1f3");
        assert_eq!(p.pgn_move_text(mv), "Nf3");
        assert!(matches!(
            p.parse_move("e2e5"),
            Err(MoveError::Illegal { .. })
        ));
        assert!(matches!(
            p.parse_move("zz"),
            Err(MoveError::Malformed { .. })
        ));
        assert_eq!(p.fen(), Chess::START_FEN);
    }

    #[test]
    fn the_referees_draws_come_from_the_history() {
        // Knights out and back twice: the start position a third time.
        let mut g = Game::new(Chess::from_fen(Chess::START_FEN).unwrap());
        for text in [
            "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
        ] {
            let mv = g.position().parse_move(text).unwrap();
            g.play(mv).unwrap();
        }
        assert_eq!(
            g.status(),
            Status::Over(Outcome::Draw, Termination::Repetition)
        );
        let bare = Game::new(Chess::from_fen("8/8/4k3/8/8/3BK3/8/8 w - - 0 1").unwrap());
        assert_eq!(
            bare.status(),
            Status::Over(Outcome::Draw, Termination::InsufficientMaterial)
        );
        let fifty = Game::new(Chess::from_fen("8/8/4k3/8/8/3RK3/8/8 w - - 100 80").unwrap());
        assert_eq!(
            fifty.status(),
            Status::Over(Outcome::Draw, Termination::MoveRule)
        );
        let mate = Chess::from_fen("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1").unwrap();
        assert_eq!(
            mate.board_status(),
            Status::Over(Outcome::WhiteWins, Termination::Checkmate)
        );
    }

    #[test]
    fn en_passant_removes_the_pawn_beside() {
        let mut p = Chess::from_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2").unwrap();
        let mv = p.parse_move("e5d6").unwrap();
        let removed = p.play(mv);
        let r = removed.iter().next().unwrap();
        assert_eq!((r.square.as_str(), r.piece.as_str()), ("d5", "p"));
    }
}
