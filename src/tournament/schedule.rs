//! Who plays whom, computed from a game's index alone: nothing grows with the number of rounds.
//!
//! Games come in pairs: the two games of a pair share an opening with colours reversed. Within a
//! round every pairing plays one pair; each round uses the next opening (or a seeded random one).

use super::runner::{permuted, Pairing, Schedule};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Everyone plays everyone.
    #[value(alias = "roundrobin", alias = "rr")]
    #[serde(alias = "roundrobin", alias = "rr")]
    RoundRobin,
    /// The first engine plays every other one.
    Gauntlet,
}

impl Format {
    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "round-robin" | "roundrobin" | "rr" => Some(Format::RoundRobin),
            "gauntlet" => Some(Format::Gauntlet),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Format::RoundRobin => "round-robin",
            Format::Gauntlet => "gauntlet",
        }
    }
}

/// Which engine of a pairing has White in each game of a pair. cutechess-cli and fastchess
/// write the last three as `-reverse`, `-noswap` and both.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Colours {
    /// The first engine White in a pair's first game and Black in its second.
    #[default]
    Alternate,
    /// The second engine White in a pair's first game and Black in its second.
    Reverse,
    /// The first engine White in both games of a pair (no colour-reversed pairs).
    FirstWhite,
    /// The second engine White in both games of a pair.
    SecondWhite,
}

impl Colours {
    /// In a sentence, for the banner.
    pub fn describe(self) -> &'static str {
        match self {
            Colours::Alternate => "each pair colour-reversed, the first engine White first",
            Colours::Reverse => "each pair colour-reversed, the second engine White first",
            Colours::FirstWhite => "the first engine White in both games of each pair",
            Colours::SecondWhite => "the second engine White in both games of each pair",
        }
    }

    /// The pair's `game`-th game (0 or 1): whether the first engine has White.
    fn first_is_white(self, game: u64) -> bool {
        match self {
            Colours::Alternate => game == 0,
            Colours::Reverse => game == 1,
            Colours::FirstWhite => true,
            Colours::SecondWhite => false,
        }
    }
}

/// The opening (0-based in a book of `openings`) that round `round` (0-based) plays: the book's
/// order or a seeded random one, from its `start`-th opening (1-based) on, round after round.
pub fn opening_of_round(round: u64, openings: u64, random: bool, seed: u64, start: u64) -> u64 {
    let openings = openings.max(1);
    // cutechess-cli's and fastchess's start=: the book (shuffled, if random) begins there.
    let place = round.saturating_add(start.saturating_sub(1) % openings);
    if random {
        permuted(place, openings, seed)
    } else {
        place % openings
    }
}

#[derive(Clone, Debug)]
pub struct PairSchedule {
    pub engines: usize,
    pub format: Format,
    pub rounds: u64,
    /// A cap on the number of games (a match of an odd number of games ends mid-pair).
    pub limit: Option<u64>,
    pub openings: usize,
    pub seed: u64,
    pub random_order: bool,
    /// The book's opening the first round plays (1-based).
    pub book_start: u64,
    pub colours: Colours,
}

impl PairSchedule {
    /// Pairings per round.
    pub fn pairings(&self) -> u64 {
        let n = self.engines as u64;
        match self.format {
            Format::RoundRobin => n.saturating_mul(n.saturating_sub(1)) / 2,
            Format::Gauntlet => n.saturating_sub(1),
        }
    }

    /// The `p`-th pairing of a round, as (first, second) engine indices.
    fn pairing_at(&self, p: u64) -> (usize, usize) {
        match self.format {
            Format::Gauntlet => (0, p as usize + 1),
            Format::RoundRobin => {
                let n = self.engines as u64;
                let mut first = 0;
                let mut p = p;
                while p >= n - 1 - first {
                    p -= n - 1 - first;
                    first += 1;
                }
                (first as usize, (first + 1 + p) as usize)
            }
        }
    }

    /// The pair (0-based) that game `index` belongs to.
    pub fn pair_of(index: u64) -> u64 {
        index / 2
    }
}

impl Schedule for PairSchedule {
    fn len(&self) -> u64 {
        let full = self
            .rounds
            .saturating_mul(self.pairings())
            .saturating_mul(2);
        self.limit.map_or(full, |l| l.min(full))
    }

    fn pairing(&self, index: u64) -> Pairing {
        let pair = Self::pair_of(index);
        let per_round = self.pairings().max(1);
        let (round, p) = (pair / per_round, pair % per_round);
        let (a, b) = self.pairing_at(p);
        let opening = opening_of_round(
            round,
            self.openings as u64,
            self.random_order,
            self.seed,
            self.book_start,
        ) as usize;
        let (white, black) = if self.colours.first_is_white(index % 2) {
            (a, b)
        } else {
            (b, a)
        };
        Pairing {
            white,
            black,
            opening,
            round: round + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(engines: usize, format: Format, rounds: u64) -> PairSchedule {
        PairSchedule {
            engines,
            format,
            rounds,
            limit: None,
            openings: 3,
            seed: 7,
            random_order: true,
            book_start: 1,
            colours: Colours::Alternate,
        }
    }

    #[test]
    fn round_robin_meets_every_pair_with_both_colours() {
        let s = schedule(4, Format::RoundRobin, 2);
        assert_eq!(s.len(), 2 * 6 * 2);
        let mut seen = std::collections::BTreeMap::new();
        for i in 0..s.len() {
            let p = s.pairing(i);
            *seen.entry((p.white, p.black)).or_insert(0) += 1;
            if i % 2 == 1 {
                let q = s.pairing(i - 1);
                assert_eq!((p.white, p.black, p.opening), (q.black, q.white, q.opening));
            }
        }
        assert_eq!(seen.len(), 12, "every ordered pair");
        assert!(seen.values().all(|&n| n == 2));
    }

    #[test]
    fn gauntlet_pits_the_first_engine_against_the_rest() {
        let s = schedule(4, Format::Gauntlet, 1);
        assert_eq!(s.len(), 6);
        assert!((0..6).all(|i| {
            let p = s.pairing(i);
            p.white == 0 || p.black == 0
        }));
    }

    #[test]
    fn a_million_games_are_scheduled_without_listing_them() {
        // The schedule is a few words whatever its length; walking it allocates nothing.
        let s = schedule(10, Format::RoundRobin, 1_000_000 / 90 + 1);
        assert!(s.len() >= 1_000_000);
        assert!(std::mem::size_of_val(&s) < 128);
        let mut checksum = 0u64;
        for i in 0..1_000_000 {
            let p = s.pairing(i);
            checksum = checksum.wrapping_add((p.white * 31 + p.black * 7 + p.opening) as u64);
        }
        assert!(checksum > 0);
        // Deterministic from the seed.
        let again = schedule(10, Format::RoundRobin, 1_000_000 / 90 + 1);
        assert_eq!(s.pairing(987_654), again.pairing(987_654));
    }

    #[test]
    fn colours_follow_reverse_and_noswap_as_the_peers_define_them() {
        // Two engines, two pairs: who is White in games 1-4, for each setting.
        let whites = |colours| {
            let s = PairSchedule {
                colours,
                ..schedule(2, Format::RoundRobin, 2)
            };
            (0..4).map(|i| s.pairing(i).white).collect::<Vec<_>>()
        };
        assert_eq!(whites(Colours::Alternate), [0, 1, 0, 1]);
        assert_eq!(whites(Colours::Reverse), [1, 0, 1, 0]);
        assert_eq!(whites(Colours::FirstWhite), [0, 0, 0, 0]);
        assert_eq!(whites(Colours::SecondWhite), [1, 1, 1, 1]);
        for name in ["alternate", "reverse", "first-white", "second-white"] {
            let c = <Colours as clap::ValueEnum>::from_str(name, false).expect(name);
            let saved = serde_json::to_string(&c).unwrap();
            assert_eq!(saved, format!("\"{name}\""));
        }
    }

    #[test]
    fn a_book_start_begins_the_book_there_and_wraps_round() {
        // Sequential: the 3rd of 4 openings first, then on round the book.
        let rounds: Vec<u64> = (0..6)
            .map(|r| opening_of_round(r, 4, false, 7, 3))
            .collect();
        assert_eq!(rounds, [2, 3, 0, 1, 2, 3]);
        // Random: the same shuffled order, entered at its 3rd place.
        let from_start: Vec<u64> = (0..8).map(|r| opening_of_round(r, 4, true, 7, 1)).collect();
        let from_third: Vec<u64> = (0..6).map(|r| opening_of_round(r, 4, true, 7, 3)).collect();
        assert_eq!(from_third, from_start[2..]);
        // A start past the end of the book wraps, as the peers' rotation does.
        assert_eq!(opening_of_round(0, 4, false, 7, 6), 1);
    }
}
