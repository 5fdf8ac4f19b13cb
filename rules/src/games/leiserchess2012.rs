//! Leiserchess 2012, 10x10: `../shared/rules/leiserchess-2012.txt` as RULINGS.md rules it.
//!
//! A piece rotates or steps to any adjacent square, swapping with whatever stands there (own or
//! enemy). The King may make a null move (`j0j0`) that only fires the laser. Moves may carry an
//! `x<square>` suffix naming the zapped piece.

use super::laser_bits::{adjacent_pairs, counting, Bits};
use super::laser_board::explain_illegal;
use super::laser_board::{color_of, is_piece, rotated, LaserBoard, LaserMove, NEIGHBOURS, OFF};
use crate::game::{Color, Drawing, FenError, History, MoveError, Position, Removals, Status};

/// A Leiserchess 2012 position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leiserchess2012 {
    board: LaserBoard,
}

const NOTATION: &str = "g1R (rotation), j4i5 (step or swap), j0j0 (null move)";

/// Plies without any zap before the game is drawn (100 moves by each side).
pub const MOVE_RULE_PLIES: u32 = 200;

impl Leiserchess2012 {
    pub fn board(&self) -> &LaserBoard {
        &self.board
    }

    #[inline]
    fn for_each_move(&self, mut f: impl FnMut(LaserMove)) {
        if self.board.board_status().is_over() {
            return;
        }
        let cells = &self.board.cells;
        let us = self.board.turn;
        let king = self.board.kings[us.index()] as usize;
        f(LaserMove::step(king, king));
        for from in self.board.squares() {
            let cell = cells[from];
            if !is_piece(cell) || color_of(cell) != us {
                continue;
            }
            for t in 1..=3 {
                f(LaserMove::rotate(from, t));
            }
            for d in NEIGHBOURS {
                let to = (from as isize + d) as usize;
                if cells[to] != OFF {
                    f(LaserMove::step(from, to));
                }
            }
        }
    }

    fn count_moves(&self) -> u64 {
        if self.board.board_status().is_over() {
            return 0;
        }
        // The null move, three rotations per piece, and a step (or swap) to each neighbour
        // on the board, counted on bitboards (`laser_bits`).
        let bits = Bits::of::<10>(&self.board);
        let count =
            counting(|| 1 + 3 * bits.own.count_ones() + adjacent_pairs(bits.own, bits.board));
        count as u64
    }

    #[inline]
    fn make(&mut self, mv: LaserMove) -> Option<(usize, u8)> {
        let mover = self.shift(mv);
        self.board.fire(mover)
    }

    /// The move without the laser: pieces moved, the turn passed; returns who moved.
    #[inline]
    fn shift(&mut self, mv: LaserMove) -> Color {
        let b = &mut self.board;
        let (from, to) = (mv.from as usize, mv.second as usize);
        if to == 0 {
            b.cells[from] = rotated(b.cells[from], mv.turn);
        } else if to != from {
            b.cells.swap(from, to);
            b.track_kings(from, to);
        }
        let mover = b.turn;
        b.turn = mover.other();
        mover
    }
}

impl Position for Leiserchess2012 {
    type Move = LaserMove;

    const ID: &'static str = "leiserchess2012";
    const DRAWING: Drawing = super::laser_board::leiser_drawing(10);
    const BENCH_DEPTHS: (u32, u32) = (4, 5);
    const DESCRIPTION: &'static str =
        "Leiserchess 2012, 10x10, swaps with any adjacent piece, null move, Ko";
    const START_FEN: &'static str =
        "ss3nw5/3nw6/2nw7/1nw8/nw3nwne4/4SWSE3SE/8SE1/7SE2/6SE3/5SE3NN W";
    const TERMINAL_IS_LEAF: bool = true;
    const ZAP_SUFFIX: bool = true;

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        Ok(Leiserchess2012 {
            board: LaserBoard::parse_fen(Self::ID, 10, fen)?,
        })
    }

    fn fen(&self) -> String {
        self.board.fen()
    }

    fn turn(&self) -> Color {
        self.board.turn
    }

    fn generate(&self, out: &mut Vec<LaserMove>) {
        self.for_each_move(|mv| out.push(mv));
    }

    fn move_count(&self) -> usize {
        self.count_moves() as usize
    }

    fn play(&mut self, mv: LaserMove) -> Removals {
        LaserBoard::removals(self.make(mv))
    }

    fn parse_move(&self, text: &str) -> Result<LaserMove, MoveError> {
        let shape = self.board.parse_move_shape(Self::ID, NOTATION, text)?;
        if shape.third != 0 || (shape.second != 0 && shape.turn != 0) {
            return Err(MoveError::malformed(
                text,
                format!("a leiserchess2012 move is one of {NOTATION}"),
            ));
        }
        let mut found = false;
        self.for_each_move(|m| found |= m == shape);
        if found {
            Ok(shape)
        } else {
            Err(MoveError::illegal(
                text,
                explain_illegal(&self.board, shape),
            ))
        }
    }

    fn move_text(&self, mv: LaserMove) -> String {
        LaserBoard::move_text(mv)
    }

    fn key(&self) -> u64 {
        self.board.key()
    }

    fn material(&self) -> i32 {
        self.board.material()
    }

    fn perft(&self, depth: u32) -> u64 {
        crate::game::perft::bulk_perft(self, depth)
    }

    fn board_status(&self) -> Status {
        self.board.board_status()
    }

    fn forbidden_by_history(
        history: &History<Self>,
        mv: LaserMove,
        after: &Self,
        removed: &Removals,
    ) -> Option<&'static str> {
        if !removed.is_empty() {
            return None;
        }
        if mv.second == mv.from {
            Some("a null move must zap a piece")
        } else if after.board.cells == history.current().board.cells {
            Some("Ko: the move zaps nothing and leaves the position unchanged")
        } else if history.key_back(1) == Some(after.key()) {
            Some("Ko: the move zaps nothing and undoes the opponent's last move")
        } else {
            None
        }
    }

    fn judge(history: &History<Self>) -> Status {
        history.board_then_draws(MOVE_RULE_PLIES)
    }

    fn laser_path_of(&self, mv: LaserMove) -> Vec<crate::game::SquareName> {
        let mut after = self.clone();
        let shooter = after.shift(mv);
        after.board.beam(shooter)
    }

    fn render(&self) -> String {
        self.board.render("Tangerine (W)", "Lavender (B)")
    }
}

impl crate::game::perft::BulkMoves for Leiserchess2012 {
    type Move = LaserMove;

    fn visit(&self, f: impl FnMut(LaserMove)) {
        self.for_each_move(f)
    }

    fn count(&self) -> u64 {
        self.count_moves()
    }

    fn make_move(&mut self, mv: LaserMove) {
        self.make(mv);
    }

    fn is_leaf(&self) -> bool {
        self.board.board_status().is_over()
    }
}
