//! arbiter: a referee and tournament harness for laser-chess and variant engines.
//!
//! The library holds the reference rules ([`game`], [`games`]); the `arbiter` binary is a thin
//! command-line layer over it.

pub mod engine;
pub mod game;
pub mod games;
pub mod pgn;
pub mod referee;
pub mod stats;
pub mod tournament;
mod zobrist;
