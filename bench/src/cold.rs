//! `arbiter bench`'s rules rows: what the referee's rules cost per ply with warm caches, and
//! with the caches emptied between plies.
//!
//! The second is what a match pays. Between two plies the engines search, and an engine's hash
//! table and network push the referee's code and tables out of the caches of the CPU they share
//! (always with `--affinity`): every ply then fetches them again. Measured so, chess through
//! shakmaty costs over ten times its warm figure, most of a ply's rules cost in a real match;
//! a change that saves instructions but touches more memory loses there, which the warm figure
//! alone would not show.

use super::BenchError as Failure;
use super::{row, Row};
use arbiter::game::{GameEntry, Status};
use std::time::{Duration, Instant};

/// Bytes written between plies: more than a core's second-level cache on the machines at hand
/// (2 MiB), as an engine's search touches.
const EVICTED: usize = 8 << 20;

/// Random games played for the measure, and their longest.
fn playout_size(full: bool) -> (usize, usize) {
    if full {
        (40, 160)
    } else {
        (8, 100)
    }
}

/// Random legal games from the start position (the same every time: a fixed seed).
fn playouts(entry: &GameEntry, count: usize, plies: usize) -> Result<Vec<Vec<String>>, Failure> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let bad = |e: &dyn std::fmt::Display| Failure::bad_input(format!("{}: {e}", entry.id));
    let mut lines = Vec::with_capacity(count);
    for _ in 0..count {
        let mut game = entry.new_game(None).map_err(|e| bad(&e))?;
        let mut line = Vec::new();
        while line.len() < plies && game.status() == Status::Ongoing {
            let legal = game.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[(next() % legal.len() as u64) as usize].clone();
            game.play(&mv).map_err(|e| bad(&e))?;
            line.push(mv);
        }
        lines.push(line);
    }
    Ok(lines)
}

/// The referee's time per ply over `lines`, the caches emptied before each ply when `evict` is
/// given (not timed).
fn per_ply(
    entry: &GameEntry,
    lines: &[Vec<String>],
    mut evict: Option<&mut [u8]>,
) -> Result<f64, Failure> {
    let mut spent = Duration::ZERO;
    let mut plies = 0usize;
    for line in lines {
        let mut game = entry
            .new_game(None)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        for mv in line {
            if let Some(bytes) = evict.as_deref_mut() {
                for i in (0..bytes.len()).step_by(64) {
                    bytes[i] = bytes[i].wrapping_add(1);
                }
            }
            let started = Instant::now();
            let played = game.play(mv);
            spent += started.elapsed();
            played.map_err(|e| Failure::bad_input(format!("{}: {e}", entry.id)))?;
            plies += 1;
        }
    }
    Ok(spent.as_secs_f64() * 1e6 / plies.max(1) as f64)
}

/// Two rows for `entry`: its rules per ply with warm caches, and with the caches emptied
/// between plies.
pub(super) fn rules_rows(entry: &GameEntry, full: bool) -> Result<Vec<Row>, Failure> {
    let (count, plies) = playout_size(full);
    let lines = playouts(entry, count, plies)?;
    // Once before measuring: the first replay also pays for the program's first touches.
    per_ply(entry, &lines, None)?;
    let warm = per_ply(entry, &lines, None)?;
    let mut junk = vec![0u8; EVICTED];
    let cold = per_ply(entry, &lines, Some(&mut junk))?;
    std::hint::black_box(&junk);
    Ok(vec![
        row(
            format!("rules {}: per ply, warm caches", entry.id),
            warm,
            "us",
        ),
        row(
            format!("rules {}: per ply, caches emptied between plies", entry.id),
            cold,
            "us",
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_games_replay_and_both_figures_are_measured() {
        let entry = arbiter::game::find_game("chess").unwrap();
        let lines = playouts(entry, 2, 30).unwrap();
        assert_eq!(
            lines,
            playouts(entry, 2, 30).unwrap(),
            "the same games each time"
        );
        assert!(lines.iter().all(|l| !l.is_empty() && l.len() <= 30));
        let rows = rules_rows(entry, false).unwrap();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.value > 0.0), "both timed");
    }
}
