//! `arbiter bisect`: which version of a series lost the strength. A posterior over the place of
//! the drop (`posterior`), moved by every game, picks the next version to play and says when
//! one answer is sure enough; `simulate` proves its error rate and cost against the hand method;
//! `drive` plays it, each step a match run of its own in the bisect's folder; `outcome` is
//! what it was asked and found, which `report` shows.

pub mod posterior;
pub mod simulate;

/// Game pairs played at each step by default: a step's engines start once for them.
pub const DEFAULT_STEP_PAIRS: u64 = 4;

pub mod drive;
pub mod git;
pub mod outcome;
pub mod report;

pub use drive::{
    Answer, Bisect, BisectError, BisectOutcome, BisectProgress, BisectSpec, OpenBisect,
};
