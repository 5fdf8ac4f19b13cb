//! Leiserchess 2018 (MIT 6.172), 8x8: `../shared/rules/leiserchess-2018.txt` as RULINGS.md rules
//! it.
//!
//! Every piece rotates, steps to an adjacent empty square, or swaps with an adjacent enemy piece
//! and then makes one extra basic move. After the move the mover's King fires; a zapped King loses.

use super::laser_bits::{adjacent_pairs, around, counting, neighbours, Bits};
use super::laser_board::{
    explain_illegal, is_piece, rotated, LaserBoard, LaserMove, EMPTY, NEIGHBOURS,
};
use crate::game::{Color, Drawing, FenError, History, MoveError, Position, Removals, Status};

/// A Leiserchess 2018 position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leiserchess {
    board: LaserBoard,
    /// `move-rule=course`: the MIT course's tester's count, not the rule text's.
    course_move_rule: bool,
}

const NOTATION: &str = "g4L, h3g4, d5e4f5 or e4d5R";

/// Plies without a Pawn zapped before the game is drawn (50 moves by each side).
pub const MOVE_RULE_PLIES: u32 = 100;

/// The course's tester (`PlayGame.java`, `nMoveDrawRule`): plies without a zap, counted from the
/// opening book's last move, before it draws the game.
pub const COURSE_MOVE_RULE_PLIES: u32 = 200;

impl Leiserchess {
    pub fn board(&self) -> &LaserBoard {
        &self.board
    }

    /// Calls `f` with every move perft counts, Ko not applied.
    #[inline]
    fn for_each_move(&self, mut f: impl FnMut(LaserMove)) {
        if self.board.board_status().is_over() {
            return;
        }
        let cells = &self.board.cells;
        let us = self.board.turn;
        for from in self.board.squares() {
            let cell = cells[from];
            if !is_piece(cell) || super::laser_board::color_of(cell) != us {
                continue;
            }
            for t in 1..=3 {
                f(LaserMove::rotate(from, t));
            }
            for d in NEIGHBOURS {
                let n = (from as isize + d) as usize;
                let target = cells[n];
                if target == EMPTY {
                    f(LaserMove::step(from, n));
                } else if is_piece(target) && super::laser_board::color_of(target) != us {
                    for t in 1..=3 {
                        f(LaserMove::swap_rotate(from, n, t));
                    }
                    // `from` now holds the enemy piece, so it is never empty here.
                    for d2 in NEIGHBOURS {
                        let to = (n as isize + d2) as usize;
                        if cells[to] == EMPTY {
                            f(LaserMove::swap_step(from, n, to));
                        }
                    }
                }
            }
        }
    }

    /// The number of moves `for_each_move` would produce, without producing them: three
    /// rotations per piece, a step to each empty neighbour, and for each (piece, enemy
    /// neighbour) pair three swap-and-rotates and a swap-and-step to each square empty next to
    /// the enemy. Counted on bitboards (`laser_bits`), an enemy at a time only where it is
    /// next to one of ours.
    fn count_moves(&self) -> u64 {
        if self.board.board_status().is_over() {
            return 0;
        }
        let bits = Bits::of::<8>(&self.board);
        let count = counting(|| {
            let empty = bits.empty();
            let mut count = 3 * bits.own.count_ones() + adjacent_pairs(bits.own, empty);
            let mut swappable = around(bits.own) & bits.enemy;
            while swappable != 0 {
                let enemy = swappable.trailing_zeros();
                swappable &= swappable - 1;
                let next = neighbours(enemy);
                count += (next & bits.own).count_ones() * (3 + (next & empty).count_ones());
            }
            count
        });
        count as u64
    }

    /// Applies a move and fires the mover's laser; returns the zapped square and piece.
    #[inline]
    fn make(&mut self, mv: LaserMove) -> Option<(usize, u8)> {
        let mover = self.shift(mv);
        self.board.fire(mover)
    }

    /// The move without the laser: pieces moved, the turn passed; returns who moved.
    #[inline]
    fn shift(&mut self, mv: LaserMove) -> Color {
        let b = &mut self.board;
        let (from, second, third) = (mv.from as usize, mv.second as usize, mv.third as usize);
        if second == 0 {
            b.cells[from] = rotated(b.cells[from], mv.turn);
        } else if b.cells[second] == EMPTY {
            b.cells[second] = b.cells[from];
            b.cells[from] = EMPTY;
            b.track_kings(from, second);
        } else {
            b.cells.swap(from, second);
            b.track_kings(from, second);
            if third != 0 {
                b.cells[third] = b.cells[second];
                b.cells[second] = EMPTY;
                b.track_kings(second, third);
            } else {
                b.cells[second] = rotated(b.cells[second], mv.turn);
            }
        }
        let mover = b.turn;
        b.turn = mover.other();
        mover
    }
}

impl Position for Leiserchess {
    type Move = LaserMove;

    const ID: &'static str = "leiserchess";
    const DRAWING: Drawing = super::laser_board::leiser_drawing(8);
    const BENCH_DEPTHS: (u32, u32) = (4, 5);
    const DESCRIPTION: &'static str =
        "Leiserchess 2018 (MIT 6.172), 8x8, Kings and Pawns, swaps, Ko";
    const START_FEN: &'static str = "ss7/3nwse3/2nwse4/1nwse3NW1/1se3NWSE1/4NWSE2/3NWSE3/7NN W";
    const TERMINAL_IS_LEAF: bool = true;
    const ZAP_SUFFIX: bool = true;
    const RULE_OPTIONS: &'static [(&'static str, &'static [&'static str])] =
        &[("move-rule", &["rules", "course"])];

    fn set_rule(&mut self, name: &str, value: &str) {
        if name == "move-rule" {
            self.course_move_rule = value == "course";
        }
    }

    fn move_rule_counts_from_book(&self) -> bool {
        self.course_move_rule
    }

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        Ok(Leiserchess {
            board: LaserBoard::parse_fen(Self::ID, 8, fen)?,
            course_move_rule: false,
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
        let mv = self.board.parse_move_shape(Self::ID, NOTATION, text)?;
        let mut found = false;
        self.for_each_move(|m| found |= m == mv);
        if found {
            Ok(mv)
        } else {
            Err(MoveError::illegal(text, explain_illegal(&self.board, mv)))
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
        _mv: LaserMove,
        after: &Self,
        _removed: &Removals,
    ) -> Option<&'static str> {
        // Ko: the position after the move may not be the one before the opponent's last move.
        (history.key_back(1) == Some(after.key()))
            .then_some("Ko: the move undoes the opponent's last move")
    }

    fn judge(history: &History<Self>) -> Status {
        history.board_then_draws(if history.current().course_move_rule {
            COURSE_MOVE_RULE_PLIES
        } else {
            MOVE_RULE_PLIES
        })
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

impl crate::game::perft::BulkMoves for Leiserchess {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::perft;

    #[test]
    fn start_position_round_trips() {
        let p = Leiserchess::from_fen(Leiserchess::START_FEN).unwrap();
        assert_eq!(p.fen(), Leiserchess::START_FEN);
    }

    #[test]
    fn bulk_perft_agrees_with_plain_perft() {
        let p = Leiserchess::from_fen(Leiserchess::START_FEN).unwrap();
        for d in 1..=3 {
            assert_eq!(
                p.perft(d),
                crate::game::perft::generic_perft(&p, d),
                "depth {d}"
            );
        }
        assert_eq!(perft(&p, 2), vec![61, 3757]);
    }

    /// A game of quiet moves only: each zaps nothing and reaches a position not seen before, so
    /// that only the move-count rule can end it. `end_book_after`: plies taken as the book.
    fn quiet_walk(rule: &str, end_book_after: Option<usize>) -> (usize, Status) {
        use crate::game::Game;
        let mut start = Leiserchess::from_fen(Leiserchess::START_FEN).unwrap();
        start.set_rule("move-rule", rule);
        let mut game = Game::new(start);
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        while !game.status().is_over() {
            if Some(game.history().ply_count()) == end_book_after {
                game.end_book();
            }
            let mut moves = game.legal_moves();
            assert!(!moves.is_empty());
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let turn = seed as usize % moves.len();
            moves.rotate_left(turn);
            let quiet = moves.into_iter().find(|&mv| {
                let mut trial = game.clone();
                trial.play(mv).is_ok_and(|removed| removed.is_empty())
                    && trial.history().occurrences_of_current() == 1
            });
            game.play(quiet.expect("a quiet move to a new position"))
                .unwrap();
        }
        (game.history().ply_count(), game.status())
    }

    #[test]
    fn the_courses_move_rule_draws_after_200_quiet_plies_counted_from_the_books_last_move() {
        use crate::game::{Outcome, Termination};
        let drawn = Status::Over(Outcome::Draw, Termination::MoveRule);
        assert_eq!(quiet_walk("rules", None), (100, drawn));
        assert_eq!(
            quiet_walk("rules", Some(10)),
            (100, drawn),
            "the text counts from move 1"
        );
        assert_eq!(quiet_walk("course", None), (200, drawn));
        // PlayGame.java sets its clock to 200 on each book move, then counts that move too.
        assert_eq!(quiet_walk("course", Some(10)), (209, drawn));
    }
}
