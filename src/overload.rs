//! Warnings that the machine, not the engines, may be deciding games on time: more games at once
//! than CPUs, or a referee turnaround that is a large share of the time per move.

use arbiter::stats::percentiles;
use arbiter::tournament::overload::{slice, SHARE};
use arbiter::tournament::{RunOutcome, RunSpec};
use std::time::Duration;

fn timed(spec: &RunSpec) -> bool {
    spec.engines
        .iter()
        .any(|e| e.limits.tc.is_some() || e.limits.movetime.is_some())
}

/// Before the run: more concurrent games than CPUs under a clock.
pub fn before(spec: &RunSpec) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if timed(spec) && spec.concurrency > cpus {
        eprintln!(
            "warning: {} games at a time on {cpus} CPUs: engines under a clock will wait for a \
             CPU, and a game may be lost to the machine's clock rather than to the opponent; use \
             --concurrency {cpus} or less",
            spec.concurrency
        );
    }
}

// The warnings avoid the words scripts count per line as their tools' game results ("on time",
// "timeout", "disconnect", "stall": fishtest's worker counts each such line as a lost game).

/// After the run: a referee turnaround that is a large share of the time per move.
pub fn after(spec: &RunSpec, outcome: &RunOutcome) {
    let (Some(slice), Some((_, p99, _))) = (slice(&spec.engines), percentiles(&outcome.latency_us))
    else {
        return;
    };
    let p99 = Duration::from_micros(p99.max(0) as u64);
    if p99.as_secs_f64() >= SHARE * slice.as_secs_f64() {
        eprintln!(
            "warning: the p99 turnaround ({} ms) is {:.0}% of the {} ms each move adds: the \
             machine is overloaded for this time control ({} games forfeited to the clock). Lower \
             --concurrency, close other work, or give more time per move.",
            p99.as_millis(),
            100.0 * p99.as_secs_f64() / slice.as_secs_f64(),
            slice.as_millis(),
            outcome.time_forfeits
        );
    }
}
