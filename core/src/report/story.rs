//! How a run went, gathered while the report streams the journal: each engine's Elo against the
//! field at up to `SNAPSHOTS` points of the run, and how each engine's games ended. Its size is
//! bounded by the number of engines, not of games.

use crate::game::{Outcome, Termination};
use crate::stats::{trinomial_elo, EloEstimate, Wdl};
use crate::tournament::journal::Entry;
use std::collections::{BTreeMap, HashMap};

/// Points of the Elo-over-time chart.
pub const SNAPSHOTS: u64 = 200;

/// Engines up to which the Elo over the run is kept (the chart shows no more lines than this).
pub const MAX_HISTORY: usize = 10;

/// One engine's Elo against the field after `games` games of the run: estimate and interval,
/// `None` while it has no finite estimate (no games, or a perfect score so far).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Snapshot {
    pub games: u64,
    pub elo: Option<(f64, f64, f64)>,
    /// While every game so far was won (or lost): the one-sided 95% bound on its Elo, a lower
    /// (or upper) bound, in place of an estimate.
    pub bound: Option<f64>,
}

impl Snapshot {
    /// The Elo of an engine with `wdl` after `games` games of the run.
    fn fit(games: u64, wdl: Wdl) -> Snapshot {
        let (elo, bound) = match trinomial_elo(wdl) {
            EloEstimate::Estimate { elo, lower, upper } => (Some((elo, lower, upper)), None),
            EloEstimate::Perfect { bound, .. } => (None, Some(bound)),
            _ => (None, None),
        };
        Snapshot { games, elo, bound }
    }

    /// The opponent's, in a match: its estimate and interval negated.
    fn mirrored(&self) -> Snapshot {
        Snapshot {
            games: self.games,
            elo: self.elo.map(|(e, lower, upper)| (-e, -upper, -lower)),
            bound: self.bound.map(|b| -b),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Ending {
    pub games: u64,
    pub lost: u64,
}

#[derive(Clone)]
pub struct Story {
    names: Vec<String>,
    index: HashMap<String, usize>,
    per_engine: Vec<Wdl>,
    step: u64,
    games: u64,
    /// Per engine, its Elo at each snapshot.
    pub history: Vec<Vec<Snapshot>>,
    /// Per engine, per termination: games that ended so, and how many of them it lost.
    pub endings: Vec<BTreeMap<Termination, Ending>>,
    /// The games the report's viewer shows.
    pub showcase: super::viewer::Showcase,
}

impl Story {
    pub fn new(names: &[String], total_games: u64) -> Story {
        Story {
            names: names.to_vec(),
            index: names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect(),
            per_engine: vec![Wdl::default(); names.len()],
            step: total_games.div_ceil(SNAPSHOTS).max(1),
            games: 0,
            history: vec![Vec::new(); names.len()],
            endings: vec![BTreeMap::new(); names.len()],
            showcase: Default::default(),
        }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn add(&mut self, entry: &Entry) {
        self.showcase.add(entry);
        let r = &entry.record;
        let (Some(&w), Some(&b)) = (self.index.get(&r.white), self.index.get(&r.black)) else {
            return;
        };
        self.games += 1;
        let white_points = match r.outcome {
            Outcome::WhiteWins => 1.0,
            Outcome::Draw => 0.5,
            Outcome::BlackWins => 0.0,
        };
        for (engine, points) in [(w, white_points), (b, 1.0 - white_points)] {
            crate::tournament::totals::tally(&mut self.per_engine[engine], points);
            let ending = self.endings[engine].entry(r.termination).or_default();
            ending.games += 1;
            if points <= 0.0 {
                ending.lost += 1;
            }
        }
        if self.games.is_multiple_of(self.step) {
            self.snapshot();
        }
    }

    fn snapshot(&mut self) {
        if self.names.len() > MAX_HISTORY {
            return;
        }
        // Of two engines, each one's games are the other's with wins and losses swapped: the
        // second's Elo is the first's negated, and half the fits are saved.
        let two = self.per_engine.len() == 2;
        for (i, wdl) in self.per_engine.iter().enumerate() {
            let snapshot = match self.history[0].last() {
                Some(first) if two && i == 1 => first.mirrored(),
                _ => Snapshot::fit(self.games, *wdl),
            };
            self.history[i].push(snapshot);
        }
    }

    /// Takes the last snapshot if the run did not end on one.
    pub fn finish(&mut self) {
        let last = self.history.first().and_then(|h| h.last()).map(|s| s.games);
        if self.games > 0 && last != Some(self.games) && self.names.len() <= MAX_HISTORY {
            self.snapshot();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::referee::GameRecord;
    use std::time::Duration;

    fn entry(index: u64, white: &str, black: &str, outcome: Outcome, t: Termination) -> Entry {
        Entry {
            index,
            record: GameRecord {
                turnaround_us: Vec::new(),
                overloaded: false,
                pv_warnings: Vec::new(),
                rules: Vec::new(),
                game: "leiserchess".into(),
                white: white.into(),
                black: black.into(),
                start_fen: None,
                moves: Vec::new(),
                outcome,
                termination: t,
                detail: String::new(),
                time_control: "-".into(),
                duration: Duration::ZERO,
                opening: 0,
                round: 1,
                date: String::new(),
            },
        }
    }

    #[test]
    fn endings_say_who_lost_how_and_snapshots_are_bounded() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut story = Story::new(&names, 1000);
        for i in 0..1000 {
            let (outcome, t) = if i % 10 == 0 {
                (Outcome::BlackWins, Termination::TimeForfeit)
            } else {
                (Outcome::Draw, Termination::MaxPlies)
            };
            story.add(&entry(i, "a", "b", outcome, t));
        }
        story.finish();
        assert_eq!(story.history[0].len() as u64, SNAPSHOTS);
        assert_eq!(story.history[0].last().unwrap().games, 1000);
        let forfeits = &story.endings[0][&Termination::TimeForfeit];
        assert_eq!((forfeits.games, forfeits.lost), (100, 100));
        assert_eq!(story.endings[1][&Termination::TimeForfeit].lost, 0);
        let (elo, lo, hi) = story.history[0].last().unwrap().elo.unwrap();
        assert!(elo < 0.0 && lo < elo && elo < hi);
    }

    /// The second engine's Elo, read off the first's, is what fitting its own games gives.
    #[test]
    fn in_a_match_the_second_engines_elo_is_its_own_fit() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut story = Story::new(&names, 300);
        for (i, outcome) in (0..300).zip(seeded_outcomes(7)) {
            let (w, b) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
            story.add(&entry(i, w, b, outcome, Termination::MaxPlies));
        }
        let mut compared = 0;
        for snapshot in &story.history[1] {
            let b = story_wdl_of("b", snapshot.games, 7);
            match (trinomial_elo(b), snapshot.elo, snapshot.bound) {
                (EloEstimate::Estimate { elo, lower, upper }, Some((e, lo, hi)), None) => {
                    for (x, y) in [(elo, e), (lower, lo), (upper, hi)] {
                        assert!((x - y).abs() < 1e-6 * (1.0 + x.abs()), "{x} {y}");
                    }
                    compared += 1;
                }
                (EloEstimate::Perfect { bound, .. }, None, Some(b)) => {
                    assert!((bound - b).abs() < 1e-6 * (1.0 + b.abs()));
                }
                other => panic!("{other:?}"),
            }
        }
        // A snapshot every second game; the first few are perfect scores.
        assert!(compared > 140, "{compared}");
    }

    /// Game results drawn from `seed`, half of them draws.
    fn seeded_outcomes(mut seed: u64) -> impl Iterator<Item = Outcome> {
        std::iter::repeat_with(move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            [
                Outcome::WhiteWins,
                Outcome::Draw,
                Outcome::BlackWins,
                Outcome::Draw,
            ][(seed >> 60) as usize % 4]
        })
    }

    /// `name`'s results over the first `games` games of the test's seeded sequence.
    fn story_wdl_of(name: &str, games: u64, seed: u64) -> Wdl {
        let mut wdl = Wdl::default();
        for (i, outcome) in (0..games).zip(seeded_outcomes(seed)) {
            let white = if i % 2 == 0 { "a" } else { "b" };
            let points = match outcome {
                Outcome::WhiteWins => 1.0,
                Outcome::Draw => 0.5,
                Outcome::BlackWins => 0.0,
            };
            let mine = if white == name { points } else { 1.0 - points };
            crate::tournament::totals::tally(&mut wdl, mine);
        }
        wdl
    }

    #[test]
    fn an_engine_that_wins_every_game_has_a_bound_instead_of_an_estimate() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut story = Story::new(&names, 10);
        for i in 0..10 {
            story.add(&entry(
                i,
                "a",
                "b",
                Outcome::WhiteWins,
                Termination::TimeForfeit,
            ));
        }
        story.finish();
        let last = story.history[0].last().unwrap();
        assert!(
            last.elo.is_none() && last.bound.is_some_and(|b| b > 0.0),
            "{last:?}"
        );
        let loser = story.history[1].last().unwrap();
        assert!(loser.bound.is_some_and(|b| b < 0.0), "{loser:?}");
    }
}
