//! Running totals of a run: per pairing (trinomial and pentanomial), per engine against the
//! field, and the data for joint ratings. Constant-size per engine pair, whatever the game count.

use crate::game::Outcome;
use crate::referee::GameRecord;
use crate::stats::{rate, Pentanomial, RatingError, RatingOptions, Ratings, Results, Wdl};
use std::collections::{BTreeMap, HashMap};

/// Counts one game worth `points` (1, 0.5 or 0) to the player.
pub(crate) fn tally(wdl: &mut Wdl, points: f64) {
    if points >= 1.0 {
        wdl.wins += 1;
    } else if points <= 0.0 {
        wdl.losses += 1;
    } else {
        wdl.draws += 1;
    }
}

#[derive(Clone, Debug, Default)]
pub struct PairingTotals {
    /// From the first (lower-index) engine's point of view.
    pub wdl: Wdl,
    pub pairs: Pentanomial,
}

#[derive(Clone, Debug)]
pub struct Totals {
    pub names: Vec<String>,
    pub pairings: BTreeMap<(usize, usize), PairingTotals>,
    pub per_engine: Vec<Wdl>,
    pub results: Results,
    pub terminations: BTreeMap<String, u64>,
    pub games: u64,
    /// Games played on a machine overloaded for their clock.
    pub overloaded: u64,
    /// The first game of each pair whose second game has not finished: (lower-index engine's
    /// points, pairing).
    half_pairs: HashMap<u64, (f64, (usize, usize))>,
    /// Each name's index: counting a game costs the same with ten engines or ten thousand.
    positions: HashMap<String, usize>,
}

impl Totals {
    pub fn new(names: Vec<String>) -> Totals {
        let mut results = Results::default();
        // Fix the players' order to the engines' order.
        results.players = names.clone();
        let names_index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Totals {
            per_engine: vec![Wdl::default(); names.len()],
            names,
            pairings: BTreeMap::new(),
            results,
            terminations: BTreeMap::new(),
            games: 0,
            overloaded: 0,
            half_pairs: HashMap::new(),
            positions: names_index,
        }
    }

    /// The index of the player `name`, added as a new one if it has not played yet (games read
    /// from a file meet their players as they come).
    pub fn player(&mut self, name: &str) -> usize {
        if let Some(i) = self.index(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.results.players.push(name.to_string());
        self.per_engine.push(Wdl::default());
        self.positions.insert(name.to_string(), i);
        i
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.positions.get(name).copied()
    }

    /// Counts a finished game; `pair` identifies its game pair (`None`: not part of a pair).
    pub fn add(&mut self, record: &GameRecord, pair: Option<u64>) {
        let (Some(w), Some(b)) = (self.index(&record.white), self.index(&record.black)) else {
            return;
        };
        self.games += 1;
        self.overloaded += u64::from(record.overloaded);
        *self
            .terminations
            .entry(record.termination.to_string())
            .or_insert(0) += 1;
        self.results.add_indexed(w, b, record.outcome);
        let white_points = match record.outcome {
            Outcome::WhiteWins => 1.0,
            Outcome::Draw => 0.5,
            Outcome::BlackWins => 0.0,
        };
        for (engine, points) in [(w, white_points), (b, 1.0 - white_points)] {
            tally(&mut self.per_engine[engine], points);
        }
        let key = (w.min(b), w.max(b));
        let first_points = if w == key.0 {
            white_points
        } else {
            1.0 - white_points
        };
        let totals = self.pairings.entry(key).or_default();
        tally(&mut totals.wdl, first_points);
        if let Some(pair) = pair {
            match self.half_pairs.remove(&pair) {
                Some((earlier, k)) if k == key => totals.pairs.add(earlier + first_points),
                _ => {
                    self.half_pairs.insert(pair, (first_points, key));
                }
            }
        }
    }

    /// The pentanomial totals of the first two engines, from engine 0's point of view.
    pub fn head_to_head(&self) -> Pentanomial {
        self.first_two().pairs
    }

    /// The single-game totals of the first two engines, from engine 0's point of view.
    pub fn head_to_head_games(&self) -> Wdl {
        self.first_two().wdl
    }

    fn first_two(&self) -> PairingTotals {
        self.pairings.get(&(0, 1)).cloned().unwrap_or_default()
    }

    pub fn ratings(&self, opts: &RatingOptions) -> Result<Ratings, RatingError> {
        rate(&self.results, opts)
    }
}
