//! Whether the machine, not the engines, kept pace with a game's clock: the referee's
//! turnaround (reading a move to asking for the reply) set against the least time each move
//! adds (an increment or a fixed time per move).

use crate::engine::EngineConfig;
use std::time::Duration;

/// A turnaround this share of the time per move or more: the machine is overloaded for the
/// time control (the referee, starved of CPU, eats the engines' time).
pub const SHARE: f64 = 0.1;

/// The least time an engine gets per move on top of its clock: its increment, or its fixed
/// time per move (none for depth/node limits or a clock without increment).
pub fn slice<'a>(engines: impl IntoIterator<Item = &'a EngineConfig>) -> Option<Duration> {
    engines
        .into_iter()
        .filter_map(|e| {
            e.limits
                .movetime
                .or(e.limits.tc.map(|tc| tc.inc))
                .filter(|d| !d.is_zero())
        })
        .min()
}

/// Whether a game was played on an overloaded machine: a tenth of its turnarounds or more
/// took `SHARE` of the time per move or more. A single late move is a hiccup, not a load.
pub fn game_overloaded(turnaround_us: &[u32], slice: Option<Duration>) -> bool {
    let Some(slice) = slice else {
        return false;
    };
    if turnaround_us.is_empty() {
        return false;
    }
    let mut sorted = turnaround_us.to_vec();
    let at = sorted.len() * 9 / 10;
    let (_, p90, _) = sorted.select_nth_unstable(at);
    f64::from(*p90) >= SHARE * slice.as_micros() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::{RunKind, RunSpec};

    #[test]
    fn the_time_per_move_is_the_least_increment_or_fixed_time() {
        let engine = |s: &str| EngineConfig::parse(&["cmd=/bin/sh", s], &[] as &[&str]).unwrap();
        let mut spec = RunSpec::new(RunKind::Match, vec![engine("tc=1+0.01"), engine("st=0.5")]);
        assert_eq!(slice(&spec.engines), Some(Duration::from_millis(10)));
        spec.engines = vec![engine("depth=2"), engine("tc=10")];
        assert_eq!(slice(&spec.engines), None);
    }

    #[test]
    fn a_game_is_overloaded_when_a_tenth_of_its_turnarounds_are_late() {
        let slice = Some(Duration::from_millis(10));
        let mut turnarounds = vec![50u32; 90];
        assert!(!game_overloaded(&turnarounds, slice));
        // One hiccup of 5 ms: not a load.
        turnarounds.push(5_000);
        assert!(!game_overloaded(&turnarounds, slice));
        // A tenth of the moves 1 ms or more late for 10 ms a move: overloaded.
        turnarounds.extend([1_000; 10]);
        assert!(game_overloaded(&turnarounds, slice));
        assert!(
            !game_overloaded(&turnarounds, None),
            "no clock, no judgement"
        );
    }
}
