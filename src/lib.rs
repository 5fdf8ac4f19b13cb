//! arbiter: a referee and tournament harness for laser-chess and variant engines.
//!
//! The library holds the harness around the reference rules of `arbiter-rules` ([`game`],
//! [`games`]); the `arbiter` binary is a thin command-line layer over it.

pub mod engine;
pub mod pgn;
pub mod referee;
pub mod stats;
pub mod tournament;

/// The rules live in their own crate (`arbiter-rules`), which the bundled engine uses alone;
/// they are re-exported here so that `arbiter::game` and `arbiter::games` keep working.
pub use arbiter_rules::{game, games, zobrist};
