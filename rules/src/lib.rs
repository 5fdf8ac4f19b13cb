//! The reference rules of every game arbiter referees, with nothing else: no processes, no
//! runtime, no command line. The harness (`arbiter`) and the bundled engine both build on it.
//!
//! [`game`] holds the `Position` trait every game implements, game history (Ko, repetition,
//! move rules), perft and the registry of games; [`games`] has one file per game's rules.

pub mod game;
pub mod games;
pub mod zobrist;
