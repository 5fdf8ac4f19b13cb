//! Move-tree leaf counting, the standard check that move generation is exact.

use super::{Position, Status};

/// Leaf counts for depths 1..=depth, each computed with the position's own (possibly bulk) perft.
pub fn perft<P: Position>(pos: &P, depth: u32) -> Vec<u64> {
    (1..=depth).map(|d| pos.perft(d)).collect()
}

/// Per-move leaf counts at `depth`, for tracking down a disagreement with another implementation.
pub fn perft_divide<P: Position>(pos: &P, depth: u32) -> Vec<(String, u64)> {
    let mut moves = Vec::new();
    pos.generate(&mut moves);
    moves
        .into_iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play(mv);
            let leaf = depth <= 1 || (P::TERMINAL_IS_LEAF && child.board_status().is_over());
            let n = if leaf { 1 } else { child.perft(depth - 1) };
            (pos.move_text(mv), n)
        })
        .collect()
}

/// The plain recursive count. Where the game says so, a move that ends the game on the board is a
/// leaf; otherwise the finished position simply has no moves below it.
pub(crate) fn generic_perft<P: Position>(pos: &P, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut moves = Vec::new();
    pos.generate(&mut moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .into_iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play(mv);
            if P::TERMINAL_IS_LEAF && child.board_status() != Status::Ongoing {
                1
            } else {
                generic_perft(&child, depth - 1)
            }
        })
        .sum()
}

/// A position that can visit, count and make its moves without allocating: what a fast perft
/// needs. Each game's generator implements it once; `bulk_perft` is the one count over it.
pub(crate) trait BulkMoves: Clone {
    type Move: Copy;
    /// Calls `f` with every legal move.
    fn visit(&self, f: impl FnMut(Self::Move));
    /// The number of legal moves, ideally without producing them.
    fn count(&self) -> u64;
    fn make_move(&mut self, mv: Self::Move);
    /// Whether this position, reached by a move, is a leaf however deep the count goes (a
    /// finished Leiserchess game).
    fn is_leaf(&self) -> bool {
        false
    }
}

/// Leaves of the move tree, with the moves of the last ply counted rather than made.
pub(crate) fn bulk_perft<P: BulkMoves>(pos: &P, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count(),
        _ => {
            let mut total = 0;
            pos.visit(|mv| {
                let mut child = pos.clone();
                child.make_move(mv);
                total += if child.is_leaf() {
                    1
                } else {
                    bulk_perft(&child, depth - 1)
                };
            });
            total
        }
    }
}
