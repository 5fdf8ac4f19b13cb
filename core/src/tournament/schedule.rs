//! Who plays whom, computed from a game's index alone: nothing grows with the number of rounds.
//!
//! Games come in pairs: the two games of a pair share an opening with colours reversed. Within a
//! round every pairing plays one pair; each round uses the next opening (or a seeded random one).
//! A run may give an opening to fewer or more games in a row (`games_per_opening`, cutechess-cli's
//! `-repeat N`): the colours still alternate game by game.

use super::runner::{Pairing, Schedule};
use super::shuffle::Shuffle;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Everyone plays everyone.
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
pub fn opening_of_round(
    round: u64,
    openings: u64,
    random: Option<Shuffle>,
    seed: u64,
    start: u64,
) -> u64 {
    let openings = openings.max(1);
    // cutechess-cli's and fastchess's start=: the book (shuffled, if random) begins there.
    let place = round.saturating_add(start.saturating_sub(1) % openings);
    match random {
        Some(shuffle) => shuffle.position(place, openings, seed),
        None => place % openings,
    }
}

#[derive(Clone, Debug)]
pub struct PairSchedule {
    pub engines: usize,
    pub format: Format,
    /// A gauntlet's first engines, who meet the others; `seeds_meet`: and each other.
    pub seeds: u64,
    pub seeds_meet: bool,
    pub rounds: u64,
    /// A cap on the number of games (a match of an odd number of games ends mid-pair).
    pub limit: Option<u64>,
    pub openings: usize,
    pub seed: u64,
    /// The book's order shuffled, and how; `None`: in the book's order.
    pub random_order: Option<Shuffle>,
    /// The book's opening the first round plays (1-based).
    pub book_start: u64,
    pub colours: Colours,
    /// Games in a row of one pairing that share an opening (2: each pair).
    pub games_per_opening: u64,
    /// The pairings played, when the format's are not all played (engines of one family never
    /// meet): a list as long as the pairings, whatever the rounds.
    pub only: Option<std::sync::Arc<[(usize, usize)]>>,
    /// A last round cut short by `limit` gives every pairing one game before any plays its
    /// second, as the MIT course's tester plays least-played pairings first: any count of
    /// games then spreads over the pairings evenly. Otherwise it plays whole pairs in order.
    pub spread_last_round: bool,
    /// Each pairing's walk through the book as the MIT course's tester takes it (see
    /// `course_walk`), in the order of `only`: its round r plays opening (offset + r * skip) mod
    /// the book's size. `None`: the book's order (or a seeded shuffle).
    pub course_walks: Option<std::sync::Arc<[(u64, u64)]>>,
}

/// Java's `String.hashCode` (over UTF-16 code units, wrapping), which the course's tester seeds
/// its openings with.
fn java_hash(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// `Harness.java`'s `setOfst` and `setSkip` for the pairing of `lesser` and `greater` (their
/// names in sort order) over a book of `openings`: where the pairing's walk starts, and its
/// step, chosen so that the walk visits every opening before it repeats one.
pub fn course_walk(lesser: &str, greater: &str, openings: u64) -> (u64, u64) {
    let openings = openings.max(1);
    let unsigned = |h: i32| u64::from(h as u32);
    let offset = unsigned(java_hash(&format!("{greater}<->{lesser}"))) % openings;
    if openings < 3 {
        return (offset, 1);
    }
    // Harness.java's `lcd`: the first i from 2 up to min(x, y) with x % i == y % i, else 0.
    let lcd = |x: u64, y: u64| (2..=x.min(y)).find(|i| x % i == y % i).unwrap_or(0);
    let mut skip = unsigned(java_hash(&format!("{lesser}|{greater}")));
    loop {
        skip %= openings;
        if skip == 0 {
            skip = 1;
        }
        let m = openings % skip;
        if m != 0 && lcd(m, skip) == 0 {
            return (offset, skip);
        }
        skip += 1;
    }
}

impl PairSchedule {
    /// The schedule without the pairings `apart` says must not meet.
    pub fn without(mut self, apart: impl Fn(usize, usize) -> bool) -> PairSchedule {
        self.only = None;
        let kept: Vec<(usize, usize)> = (0..self.pairings())
            .map(|p| self.pairing_at(p))
            .filter(|&(a, b)| !apart(a, b))
            .collect();
        self.only = Some(kept.into());
        self
    }

    /// Pairings per round.
    pub fn pairings(&self) -> u64 {
        if let Some(only) = &self.only {
            return only.len() as u64;
        }
        let n = self.engines as u64;
        let s = self.seeds.clamp(1, n.saturating_sub(1).max(1));
        match self.format {
            Format::RoundRobin => n.saturating_mul(n.saturating_sub(1)) / 2,
            // The round robin's first s rows: each seed meets every engine after it.
            Format::Gauntlet if self.seeds_meet => (s * n).saturating_sub(s * (s + 1) / 2),
            Format::Gauntlet => s.saturating_mul(n.saturating_sub(s)),
        }
    }

    /// The `p`-th pairing of a round, as (first, second) engine indices.
    pub(crate) fn pairing_at(&self, p: u64) -> (usize, usize) {
        if let Some(only) = &self.only {
            return only[p as usize];
        }
        let n = self.engines as u64;
        match self.format {
            Format::Gauntlet if !self.seeds_meet => {
                let s = self.seeds.clamp(1, n.saturating_sub(1).max(1));
                let others = n.saturating_sub(s).max(1);
                ((p / others) as usize, (s + p % others) as usize)
            }
            Format::Gauntlet | Format::RoundRobin => {
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

    /// Where game `index` falls: its round (0-based), its pairing within the round, and whether
    /// it is the first or second game of the pairing's pair there.
    fn place(&self, index: u64) -> (u64, u64, u64) {
        let per_round = self.pairings().max(1);
        let round_games = 2 * per_round;
        let (round, at) = (index / round_games, index % round_games);
        let cut_short = self.len() - round * round_games;
        if !self.spread_last_round || cut_short >= round_games {
            return (round, at / 2, at % 2);
        }
        // The round's whole pairs come first, then one game each for the other pairings.
        let pairs = cut_short.saturating_sub(per_round);
        if at < 2 * pairs {
            (round, at / 2, at % 2)
        } else {
            (round, at - pairs, 0)
        }
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
        let (round, p, game) = self.place(index);
        let (a, b) = self.pairing_at(p);
        // The pairing's games so far, in its rounds' order, grouped by the opening they share.
        let turn = (round.saturating_mul(2) + game) / self.games_per_opening.max(1);
        let opening = match &self.course_walks {
            Some(walks) => {
                let (offset, skip) = walks[p as usize];
                let count = (self.openings as u64).max(1);
                ((offset + (round % count) * skip) % count) as usize
            }
            None => opening_of_round(
                turn,
                self.openings as u64,
                self.random_order,
                self.seed,
                self.book_start,
            ) as usize,
        };
        let (white, black) = if self.colours.first_is_white(game) {
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
            seeds: 1,
            seeds_meet: false,
            rounds,
            limit: None,
            openings: 3,
            seed: 7,
            random_order: Some(Shuffle::Feistel),
            book_start: 1,
            colours: Colours::Alternate,
            games_per_opening: 2,
            only: None,
            spread_last_round: false,
            course_walks: None,
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
    fn a_gauntlets_seeds_meet_the_rest_and_each_other_only_when_asked() {
        let pairings = |seeds, seeds_meet| {
            let s = PairSchedule {
                seeds,
                seeds_meet,
                ..schedule(5, Format::Gauntlet, 1)
            };
            let list: Vec<(usize, usize)> = (0..s.len())
                .step_by(2)
                .map(|i| (s.pairing(i).white, s.pairing(i).black))
                .collect();
            assert_eq!(list.len() as u64, s.pairings());
            list
        };
        // cutechess-cli: seed after seed, each against every engine after the seeds.
        assert_eq!(
            pairings(2, false),
            [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)]
        );
        // fastchess: the seeds meet each other too.
        assert_eq!(
            pairings(2, true),
            [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)]
        );
        assert_eq!(pairings(1, false), pairings(1, true));
        assert_eq!(pairings(1, false), [(0, 1), (0, 2), (0, 3), (0, 4)]);
    }

    #[test]
    fn the_course_walks_its_book_as_harness_java_does() {
        // Java: "abc".hashCode() == 96354; "a<->b" and "b|a" as Harness.java builds them.
        assert_eq!(java_hash("abc"), 96354);
        assert_eq!(java_hash("polygenelubricants"), i32::MIN);
        for openings in [3u64, 7, 10, 12, 60, 1000] {
            let (offset, skip) = course_walk("candidate", "reference", openings);
            assert!(offset < openings && (1..openings).contains(&skip));
            let seen: std::collections::BTreeSet<u64> = (0..openings)
                .map(|r| (offset + r * skip) % openings)
                .collect();
            assert_eq!(
                seen.len() as u64,
                openings,
                "{openings}: every opening once"
            );
        }
        assert_eq!(
            course_walk("a", "b", 2),
            (java_hash("b<->a") as u32 as u64 % 2, 1)
        );
        // The openings of each pairing's first three rounds as the course's own Harness.java
        // (its Fall 2016 autotester, run on a config of these five players, 54 games, over its
        // 100-line book.dta) chose them: the lines its games began with (the book repeats some
        // lines, hence the sets).
        let a: &[u64] = &[6, 29, 44];
        let b: &[u64] = &[15, 39, 46, 59, 62, 79, 80, 82, 86, 96];
        let c: &[u64] = &[21, 33, 52, 64, 72, 78];
        let d: &[u64] = &[32, 61, 98];
        let chosen: [(&str, &str, [&[u64]; 3]); 9] = [
            (
                "alpha",
                "beta",
                [
                    a,
                    &[8, 28, 36, 63, 76],
                    &[2, 17, 23, 30, 34, 37, 47, 48, 90, 91],
                ],
            ),
            ("alpha", "delta", [c, d, &[1, 31, 70]]),
            ("alpha", "epsilon", [&[87], b, &[60, 69, 85]]),
            ("alpha", "gamma", [&[12], &[11], &[10, 25]]),
            ("beta", "delta", [&[53], &[94], &[35]]),
            ("beta", "epsilon", [&[7], a, &[5]]),
            ("beta", "gamma", [d, &[97], b]),
            ("delta", "gamma", [&[66], &[65], c]),
            ("epsilon", "gamma", [a, &[51], &[58]]),
        ];
        for (lesser, greater, rounds) in chosen {
            let (offset, skip) = course_walk(lesser, greater, 100);
            for (round, lines) in rounds.iter().enumerate() {
                let ours = (offset + round as u64 * skip) % 100;
                assert!(
                    lines.contains(&ours),
                    "{lesser} - {greater}, round {round}: {ours}"
                );
            }
        }
    }

    #[test]
    fn engines_kept_apart_never_meet() {
        // The autotester's family example: three programs, and three versions of one.
        let family = [0, 1, 2, 3, 3, 3];
        let s = schedule(6, Format::RoundRobin, 2).without(|a, b| family[a] == family[b]);
        assert_eq!(s.pairings(), 15 - 3);
        assert_eq!(s.len(), 2 * 12 * 2);
        let mut met = std::collections::BTreeSet::new();
        for i in 0..s.len() {
            let p = s.pairing(i);
            assert_ne!(family[p.white], family[p.black], "game {i}");
            met.insert((p.white.min(p.black), p.white.max(p.black)));
        }
        assert_eq!(met.len(), 12, "every other pairing is played");
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
    }

    #[test]
    fn an_opening_serves_as_many_games_in_a_row_as_asked() {
        let openings = |games_per_opening| {
            let s = PairSchedule {
                games_per_opening,
                random_order: None,
                openings: 100,
                ..schedule(2, Format::RoundRobin, 4)
            };
            (0..8)
                .map(|i| (s.pairing(i).opening, s.pairing(i).white))
                .collect::<Vec<_>>()
        };
        let whites = [0, 1, 0, 1, 0, 1, 0, 1];
        let with = |o: [usize; 8]| o.into_iter().zip(whites).collect::<Vec<_>>();
        assert_eq!(openings(2), with([0, 0, 1, 1, 2, 2, 3, 3]));
        assert_eq!(openings(1), with([0, 1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(openings(4), with([0, 0, 0, 0, 1, 1, 1, 1]));
        assert_eq!(openings(3), with([0, 0, 0, 1, 1, 1, 2, 2]));
        assert_eq!(openings(u64::MAX), with([0; 8]));
    }

    #[test]
    fn a_book_start_begins_the_book_there_and_wraps_round() {
        // Sequential: the 3rd of 4 openings first, then on round the book.
        let rounds: Vec<u64> = (0..6).map(|r| opening_of_round(r, 4, None, 7, 3)).collect();
        assert_eq!(rounds, [2, 3, 0, 1, 2, 3]);
        // Random: the same shuffled order, entered at its 3rd place.
        let from_start: Vec<u64> = (0..8)
            .map(|r| opening_of_round(r, 4, Some(Shuffle::Feistel), 7, 1))
            .collect();
        let from_third: Vec<u64> = (0..6)
            .map(|r| opening_of_round(r, 4, Some(Shuffle::Feistel), 7, 3))
            .collect();
        assert_eq!(from_third, from_start[2..]);
        // A start past the end of the book wraps, as the peers' rotation does.
        assert_eq!(opening_of_round(0, 4, None, 7, 6), 1);
    }
}
