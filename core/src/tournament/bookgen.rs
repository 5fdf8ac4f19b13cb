//! Makes opening books: random legal lines from the start position, kept only when the position
//! they reach is roughly balanced and quiet, and distinct. Reproducible from the seed.

use crate::game::{GameEntry, Status};
use crate::zobrist::SplitMix;
use std::collections::HashSet;

/// How the book was made, written at the top of the file so it can be made again.
pub struct BookSpec {
    pub count: usize,
    pub plies: usize,
    pub seed: u64,
    /// Largest material imbalance (centipawns) accepted at the end of a line.
    pub max_imbalance: i32,
}

/// Lines of moves, one per opening, or an error if not enough could be found.
pub fn generate(entry: &GameEntry, spec: &BookSpec) -> Result<Vec<String>, String> {
    let mut rng = SplitMix(spec.seed);
    let mut seen = HashSet::new();
    let mut lines = Vec::new();
    let attempts = spec.count * 500;
    for _ in 0..attempts {
        if lines.len() == spec.count {
            break;
        }
        let mut game = entry.new_game(None).map_err(|e| e.to_string())?;
        let mut moves = Vec::new();
        for _ in 0..spec.plies {
            let legal = game.legal_moves();
            if legal.is_empty() || game.status().is_over() {
                break;
            }
            let mv = legal[(rng.next_u64() % legal.len() as u64) as usize].clone();
            game.play(&mv).map_err(|e| e.to_string())?;
            moves.push(mv);
        }
        if moves.len() < spec.plies
            || game.status().is_over()
            || !balanced(&*game, spec.max_imbalance)
        {
            continue;
        }
        if seen.insert(game.fen()) {
            lines.push(moves.join(" "));
        }
    }
    if lines.len() < spec.count {
        return Err(format!(
            "found only {} of {} balanced openings in {attempts} tries; try fewer plies or a \
                larger imbalance",
            lines.len(),
            spec.count
        ));
    }
    Ok(lines)
}

/// Even material, and no move for the side to move that ends the game or wins material at once.
fn balanced(game: &dyn crate::game::AnyGame, max_imbalance: i32) -> bool {
    if game.material().abs() > max_imbalance {
        return false;
    }
    let before = game.material();
    game.legal_moves().iter().all(|mv| {
        let mut next = game.boxed_clone();
        if next.play(mv).is_err() {
            return true;
        }
        // After the move it is the opponent's turn: their material is minus ours.
        let gain = -next.material() - before;
        !matches!(next.status(), Status::Over(..)) && gain <= max_imbalance.max(50)
    })
}
