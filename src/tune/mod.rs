//! `arbiter tune`: SPSA over engine options, as fishtest tunes Stockfish. The engine plays
//! itself at two settings around the current values, game pair after game pair, and each
//! pair's result moves the values; on one machine or split over a cluster's tasks.

mod journal;
mod ledger;
mod play;
pub mod report;
pub mod spec;
mod split;
pub mod spsa;

use thiserror::Error;

pub use journal::PAIRS_FILE;
pub use play::{tune, TuneOptions, TuneOutcome, TuneProgress};
pub use spec::TuneSpec;

#[derive(Debug, Error)]
pub enum TuneError {
    #[error("cannot write {path}: {reason}")]
    Output { path: String, reason: String },
    #[error("{0}")]
    Setup(String),
    /// An engine could not start, again and again: the pairs finished before it are kept.
    #[error("{0}")]
    EngineStart(String),
}
