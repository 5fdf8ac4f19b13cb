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
