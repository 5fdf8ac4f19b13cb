//! The delay an engine does not see, for `bench --peer`: per move, the time the harness charged
//! less the time the engine reported for its search (fastchess's "latency"). What an engine
//! does not see it cannot plan for: on a loaded machine this tail, not the engines' play,
//! decides which games are lost on time. Both harnesses are measured alike, in whole
//! milliseconds: fastchess truncates its clock to them, and arbiter's times are truncated so.

use arbiter::tournament::journal;
use std::path::Path;

/// Moves delayed by more than this are counted apart: stockfish's default `Move Overhead` is
/// 10 ms, and a delay twice that loses games at a fast clock.
const LATE_MS: i64 = 20;

#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    /// Delays in milliseconds, sorted.
    delays: Vec<i64>,
}

impl Latency {
    fn new(mut delays: Vec<i64>) -> Option<Latency> {
        delays.sort_unstable();
        (!delays.is_empty()).then_some(Latency { delays })
    }

    fn quantile(&self, q: f64) -> i64 {
        let last = self.delays.len() - 1;
        self.delays[((q * self.delays.len() as f64) as usize).min(last)]
    }

    /// `p50 0 ms, p99 18 ms, p99.9 35 ms, max 58 ms; 36 of 6319 moves over 20 ms`.
    pub fn describe(&self) -> String {
        format!(
            "p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms; {} of {} moves over {LATE_MS} ms",
            self.quantile(0.5),
            self.quantile(0.99),
            self.quantile(0.999),
            self.delays[self.delays.len() - 1],
            self.delays.iter().filter(|&&d| d > LATE_MS).count(),
            self.delays.len()
        )
    }
}

/// From fastchess's PGN comments with `-pgnout latency=true` (`{+0.31/10 0.080s,
/// latency=-0.001s}`).
pub fn from_pgn(text: &str) -> Option<Latency> {
    let delays = text
        .split("latency=")
        .skip(1)
        .filter_map(|rest| {
            let secs: f64 = rest.split('s').next()?.parse().ok()?;
            Some((secs * 1000.0).round() as i64)
        })
        .collect();
    Latency::new(delays)
}

/// From the journal of the run arbiter played in `dir` (its `reports/<run>/journal.jsonl`):
/// each engine move the engine reported a time for.
pub fn from_arbiter_run(dir: &Path) -> Option<Latency> {
    let runs = std::fs::read_dir(dir.join("reports")).ok()?;
    let mut delays = Vec::new();
    for run in runs.flatten() {
        let path = run.path().join(journal::JOURNAL_FILE);
        let _ = journal::read(&path, |entry| {
            for m in entry.record.moves.iter().filter(|m| !m.book) {
                if let Some(reported) = m.reported_us {
                    let charged_ms = m.elapsed.as_millis() as i64;
                    delays.push(charged_ms - (reported / 1000) as i64);
                }
            }
        });
    }
    Latency::new(delays)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastchess_comments_are_read_in_milliseconds() {
        let pgn = "1. Nf3 {+0.31/10 0.080s, latency=-0.001s} d5 {-0.15/8 0.083s, latency=0.021s}\n\
                   2. d4 {book} Nf6 {+1.00/3 0.010s, latency=0.002s}";
        let l = from_pgn(pgn).unwrap();
        assert_eq!(l.delays, vec![-1, 2, 21]);
        assert_eq!(
            l.describe(),
            "p50 2 ms, p99 21 ms, p99.9 21 ms, max 21 ms; 1 of 3 moves over 20 ms"
        );
        assert_eq!(from_pgn("1. e4 {+0.10/1 0.001s}"), None);
    }
}
