//! `arbiter tune`: SPSA over engine options, as fishtest tunes Stockfish. The engine plays
//! itself at two settings around the current values, game pair after game pair, and each
//! pair's result moves the values; on one machine or split over a cluster's tasks.

mod drive;
mod journal;
mod ledger;
mod play;
pub mod report;
pub mod spec;
mod split;
pub mod spsa;

pub use drive::{verify_run, OpenTune, Tune};
pub use journal::PAIRS_FILE;
pub use play::{nothing_left, tune, TuneOptions, TuneOutcome, TuneProgress};
pub use spec::TuneSpec;

/// A tune fails as a run does (a set-up refused, an output not written, an engine that will not
/// start), and is reported the same way.
pub use crate::tournament::RunError as TuneError;
