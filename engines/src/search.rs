//! The bundled engines' play, generic over every game: a random mover, a greedy 1-ply player and an
//! iterative-deepening alpha-beta searcher on material.

use crate::eval::Eval;
use arbiter_rules::game::{Game, Outcome, Position, Status};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub const MATE: i32 = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Random,
    Greedy,
    Search,
}

impl Style {
    pub fn parse(s: &str) -> Option<Style> {
        match s.to_ascii_lowercase().as_str() {
            "random" => Some(Style::Random),
            "greedy" => Some(Style::Greedy),
            "search" => Some(Style::Search),
            _ => None,
        }
    }
}

/// What `go` asked for. A missing limit is unlimited; with none at all the search runs to its
/// maximum depth (or until `stop`).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// The moment by which a move must be chosen.
    pub deadline: Option<Instant>,
}

/// One finished iteration, for `info` lines.
pub struct Iteration {
    pub depth: u32,
    pub score: i32,
    pub nodes: u64,
    pub elapsed: Duration,
    pub pv: String,
}

/// A small, seedable generator: reproducible play without a dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Score of a finished position for the side to move there.
fn terminal_score<P: Position>(pos: &P, status: Status, ply: u32) -> Option<i32> {
    match status {
        Status::Ongoing => None,
        Status::Over(Outcome::Draw, _) => Some(0),
        Status::Over(outcome, _) => {
            let won = outcome == pos.turn().wins();
            let score = MATE - ply as i32;
            Some(if won { score } else { -score })
        }
    }
}

struct Searcher<'a> {
    limits: &'a Limits,
    eval: &'a Eval,
    stop: &'a AtomicBool,
    nodes: u64,
    aborted: bool,
}

impl Searcher<'_> {
    fn out_of_budget(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes.is_multiple_of(256) {
            let late = self.limits.deadline.is_some_and(|d| Instant::now() >= d);
            let too_many = self.limits.nodes.is_some_and(|n| self.nodes >= n);
            if late || too_many || self.stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
        }
        self.aborted
    }

    fn negamax<P: Position>(
        &mut self,
        pos: &P,
        depth: u32,
        mut alpha: i32,
        beta: i32,
        ply: u32,
        their_moves: usize,
    ) -> i32 {
        self.nodes += 1;
        if self.out_of_budget() {
            return 0;
        }
        if let Some(score) = terminal_score(pos, pos.board_status(), ply) {
            return score;
        }
        if depth == 0 {
            return self.eval.leaf(pos, their_moves);
        }
        // Room for a usual position's moves at once (Leiserchess starts with 61): one
        // allocation a node; only a wider one (drops in Leaperhouse) grows it.
        let mut moves = Vec::with_capacity(256);
        pos.generate(&mut moves);
        if moves.is_empty() {
            return 0;
        }
        let count = moves.len();
        let mut best = -MATE - 1;
        for mv in moves {
            let mut child = pos.clone();
            child.play(mv);
            let score = -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, count);
            if self.aborted {
                return 0;
            }
            best = best.max(score);
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

/// Chooses a move for the side to move in `game`, calling `report` after each finished iteration.
/// Returns `None` only when there is no legal move.
pub fn choose<P: Position>(
    game: &Game<P>,
    style: Style,
    rng: &mut Rng,
    limits: &Limits,
    eval: &Eval,
    stop: &AtomicBool,
    mut report: impl FnMut(&Iteration),
) -> Option<P::Move> {
    let started = Instant::now();
    let mut root = game.legal_moves();
    if root.is_empty() {
        return None;
    }
    // Shuffle so that equal moves are chosen differently from game to game (seeded: reproducible).
    for i in (1..root.len()).rev() {
        root.swap(i, rng.below(i + 1));
    }
    let pos = game.position();
    let after = |mv: P::Move| {
        let mut child = pos.clone();
        child.play(mv);
        child
    };
    match style {
        Style::Random => {
            report(&Iteration {
                depth: 1,
                score: 0,
                nodes: 1,
                elapsed: started.elapsed(),
                pv: pos.move_text(root[0]),
            });
            Some(root[0])
        }
        Style::Greedy => {
            let scored = root.iter().map(|&mv| {
                let child = after(mv);
                let score = terminal_score(&child, child.board_status(), 1)
                    .map(|s| -s)
                    .unwrap_or_else(|| -eval.leaf(&child, root.len()));
                (score, mv)
            });
            let (score, best) = scored.max_by_key(|(s, _)| *s)?;
            report(&Iteration {
                depth: 1,
                score,
                nodes: root.len() as u64,
                elapsed: started.elapsed(),
                pv: pos.move_text(best),
            });
            Some(best)
        }
        Style::Search => {
            let searcher = Searcher {
                limits,
                eval,
                stop,
                nodes: 0,
                aborted: false,
            };
            Some(searcher.deepen(pos, &mut root, started, &mut report))
        }
    }
}

impl Searcher<'_> {
    /// Iterative deepening over the root moves: each finished depth is reported; a search cut
    /// short keeps the last finished depth's best move.
    fn deepen<P: Position>(
        mut self,
        pos: &P,
        root: &mut [P::Move],
        started: Instant,
        report: &mut impl FnMut(&Iteration),
    ) -> P::Move {
        let max_depth = self.limits.depth.unwrap_or(64).max(1);
        let mut best = root[0];
        for depth in 1..=max_depth {
            let mut alpha = -MATE - 1;
            let mut iteration_best = None;
            // Search the previous best first: a better bound, and a move in hand if cut short.
            if let Some(i) = root.iter().position(|&m| m == best) {
                root.swap(0, i);
            }
            for &mv in root.iter() {
                let mut child = pos.clone();
                child.play(mv);
                let score = -self.negamax(&child, depth - 1, -MATE - 1, -alpha, 1, root.len());
                if self.aborted {
                    break;
                }
                if score > alpha {
                    alpha = score;
                    iteration_best = Some(mv);
                }
            }
            if self.aborted {
                break;
            }
            if let Some(mv) = iteration_best {
                best = mv;
            }
            report(&Iteration {
                depth,
                score: alpha,
                nodes: self.nodes,
                elapsed: started.elapsed(),
                pv: pos.move_text(best),
            });
            if alpha.abs() >= MATE - 1000 {
                break;
            }
        }
        best
    }
}
