//! Running totals of a run: per pairing (trinomial and pentanomial), per engine against the
//! field, and the data for joint ratings. Constant-size per engine pair, whatever the game count.

use crate::game::Outcome;
use crate::referee::GameRecord;
use crate::stats::{rate, Pentanomial, RatingError, RatingOptions, Ratings, Results, Wdl};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

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
    /// Games counted with their moves, and the distinct ones among them (see `repeats`).
    with_moves: u64,
    distinct: HashSet<u64>,
}

/// The share of repeated games above which a run is warned that its intervals overstate
/// the evidence.
pub const REPEATS_WARNED: f64 = 0.1;

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
            with_moves: 0,
            distinct: HashSet::new(),
        }
    }

    /// How many of the games counted with their moves were distinct, of how many: a game that
    /// repeats an earlier one (the same players, start, moves and result; deterministic
    /// engines at fixed nodes or depth from a small book) adds no evidence of its own. `None`
    /// where no game came with its moves.
    pub fn repeats(&self) -> Option<(u64, u64)> {
        (self.with_moves > 0).then_some((self.distinct.len() as u64, self.with_moves))
    }

    /// The sentence a report or summary gives about repeated games, with the warning when they
    /// are a sizeable share; `None` where every game was distinct.
    pub fn repeats_said(&self) -> Option<String> {
        let (distinct, of) = self.repeats()?;
        if distinct == of {
            return None;
        }
        let mut said = format!(
            "{distinct} of {of} games distinct; {} repeat an earlier game move for move",
            of - distinct
        );
        if (of - distinct) as f64 >= REPEATS_WARNED * of as f64 {
            said.push_str(
                ". The intervals count every game as independent evidence, so they are too \
                 narrow: use a bigger book, --random-openings, or a clock instead of fixed \
                 nodes or depth",
            );
        }
        Some(said)
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
        if !record.moves.is_empty() {
            let mut game = std::collections::hash_map::DefaultHasher::new();
            (w, b, &record.start_fen, record.outcome.to_string()).hash(&mut game);
            for mv in &record.moves {
                mv.text.hash(&mut game);
            }
            self.with_moves += 1;
            self.distinct.insert(game.finish());
        }
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
