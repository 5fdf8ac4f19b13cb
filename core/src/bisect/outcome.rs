//! What a bisect is asked and what it found: its settings, its steps and its answer, as the
//! driver (`drive`) plays them and the report (`report`) shows them.

use super::posterior::{Leader, Matchup};
use crate::stats::pentanomial::Pentanomial;
use crate::stats::Wdl;
use crate::tournament::RunSpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BisectSpec {
    /// Every setting of the games, with the versions as its engines, in order: the first known
    /// good, the last known (or suspected) worse.
    pub games: RunSpec,
    /// The drop sought, in Elo.
    pub elo: f64,
    /// The error rate allowed.
    pub alpha: f64,
    /// Games at most.
    pub max_games: u64,
    /// Game pairs per step.
    pub step_pairs: u64,
}

/// How a bisect ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// The first worse version, sure enough.
    Found(Leader),
    /// No version is worse, sure enough.
    NoDrop(Leader),
    /// The budget ran out: the leader as it stands.
    BudgetOut(Leader),
    /// Stopped by a signal: `--resume` goes on.
    Interrupted(Leader),
}

/// One version's games against the first, or against the version before it.
#[derive(Clone, Debug, Default)]
pub struct VersionGames {
    pub name: String,
    /// From the version's side.
    pub wdl: Wdl,
    pub pairs: Pentanomial,
    /// Against the version before it (none for the first two).
    pub previous_wdl: Wdl,
    pub previous_pairs: Pentanomial,
}

/// One step played.
#[derive(Clone, Debug)]
pub struct Step {
    pub number: u64,
    pub matchup: Matchup,
    pub folder: PathBuf,
    pub games: u64,
    /// The leader after the step.
    pub leader: Option<usize>,
    pub probability: f64,
}

pub struct BisectOutcome {
    pub answer: Answer,
    pub versions: Vec<VersionGames>,
    /// `[none, 1, 2, ...]`, as `Posterior::probabilities`.
    pub probabilities: Vec<f64>,
    pub steps: Vec<Step>,
    pub games: u64,
}

/// "v5", or "v5 against v4".
pub fn describe(matchup: Matchup, names: &[String]) -> String {
    match matchup.opponent {
        0 => names[matchup.player].clone(),
        o => format!("{} against {}", names[matchup.player], names[o]),
    }
}

impl VersionGames {
    /// A version with no games yet.
    pub fn of(name: &str) -> VersionGames {
        VersionGames {
            name: name.to_string(),
            ..VersionGames::default()
        }
    }
}

impl Step {
    /// Step `number`, played: `games` of `matchup` in `folder`, and the leader after them.
    pub fn played(
        number: u64,
        matchup: Matchup,
        folder: PathBuf,
        games: u64,
        after: Leader,
    ) -> Step {
        Step {
            number,
            matchup,
            folder,
            games,
            leader: after.version,
            probability: after.probability,
        }
    }
}
