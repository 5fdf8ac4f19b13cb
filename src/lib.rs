//! arbiter: a referee and tournament harness for laser-chess and variant engines.
//!
//! The library holds the harness around the reference rules of `arbiter-rules` ([`game`],
//! [`games`]) and the command line ([`cli`]); the `arbiter` binary only calls [`cli::run`].

#[macro_use]
mod out;
pub mod parallel;

pub mod bench;
pub mod bisect;
pub mod cli;
pub mod compat;
pub mod engine;
pub mod huge_text;
pub mod pgn;
pub mod referee;
pub mod report;
pub mod stats;
pub mod tournament;
pub mod tune;

/// The rules live in their own crate (`arbiter-rules`), which the bundled engine uses alone;
/// they are re-exported here so that `arbiter::game` and `arbiter::games` keep working.
pub use arbiter_rules::{game, games, zobrist};
