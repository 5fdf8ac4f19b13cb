//! Simulated bisections: the realised error rate and the games spent, by the posterior search
//! (`posterior`) and by the hand method it replaces — an SPRT at each midpoint of a binary
//! search, after one on the last version to see that there is a drop at all, the overall error
//! budget split evenly over those tests (`arbiter bench --bisect-sim`, and a test).
//!
//! Game pairs are drawn as `stats::simulate` draws them for `bench --sprt-sim`: a pentanomial
//! shape with draws and an opening bias, tilted to each version's Elo against version 0.

use super::posterior::{Matchup, Posterior};
use crate::stats::pentanomial::Pentanomial;
use crate::stats::simulate::{at_elo, draw_pair, Shape, SHAPES};
use crate::stats::sprt::{Decision, Sprt, SprtModel};
use crate::zobrist::SplitMix;

/// Where the drops are in a simulated series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// One drop of the sought size at a random place.
    Drop,
    /// One drop of twice the sought size.
    DoubleDrop,
    /// Every version as strong as the first.
    NoDrop,
    /// A drop of the sought size, and another later: the first is the answer.
    TwoDrops,
}

impl Scenario {
    pub const ALL: [Scenario; 4] = [
        Scenario::Drop,
        Scenario::DoubleDrop,
        Scenario::NoDrop,
        Scenario::TwoDrops,
    ];

    pub fn describe(self, elo: f64) -> String {
        match self {
            Scenario::Drop => format!("one drop of {elo} Elo"),
            Scenario::DoubleDrop => format!("one drop of {} Elo", 2.0 * elo),
            Scenario::NoDrop => "no drop".into(),
            Scenario::TwoDrops => format!("two drops of {elo} Elo"),
        }
    }

    /// Each version's Elo against version 0, and the first worse version.
    fn series(self, versions: usize, elo: f64, rng: &mut SplitMix) -> (Vec<f64>, Option<usize>) {
        let place = |rng: &mut SplitMix, from: usize| {
            from + (rng.next_unit() * (versions - from) as f64) as usize
        };
        let mut elos = vec![0.0; versions];
        let first = match self {
            Scenario::NoDrop => None,
            Scenario::Drop | Scenario::DoubleDrop | Scenario::TwoDrops => Some(place(rng, 1)),
        };
        let size = if self == Scenario::DoubleDrop {
            2.0
        } else {
            1.0
        } * elo;
        if let Some(k) = first {
            elos[k..].iter_mut().for_each(|e| *e -= size);
            if self == Scenario::TwoDrops && k + 1 < versions {
                let second = place(rng, k + 1);
                elos[second..].iter_mut().for_each(|e| *e -= elo);
            }
        }
        (elos, first)
    }
}

/// The settings of a simulation.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub versions: usize,
    pub elo: f64,
    pub alpha: f64,
    /// Game pairs played at each step of the posterior search.
    pub step_pairs: u64,
    /// The most game pairs either method may play in one bisection.
    pub budget_pairs: u64,
    pub shape: Shape,
}

impl Setup {
    pub fn new(versions: usize, elo: f64, alpha: f64) -> Setup {
        Setup {
            versions,
            elo,
            alpha,
            step_pairs: super::DEFAULT_STEP_PAIRS,
            budget_pairs: 1_000_000,
            shape: SHAPES[3],
        }
    }
}

/// One method's results over many simulated series.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    pub runs: u64,
    pub wrong: u64,
    /// Bisections that ran out of budget (their answer is the leader's then, right or wrong).
    pub budget_out: u64,
    pub games: u64,
}

impl Tally {
    pub fn error_rate(&self) -> f64 {
        self.wrong as f64 / self.runs.max(1) as f64
    }
    pub fn mean_games(&self) -> f64 {
        self.games as f64 / self.runs.max(1) as f64
    }
    fn count(&mut self, answer: Option<usize>, truth: Option<usize>, pairs: u64, out: bool) {
        self.runs += 1;
        self.wrong += u64::from(answer != truth);
        self.budget_out += u64::from(out);
        self.games += 2 * pairs;
    }
}

/// Draws pairs of a version whose pair distribution is `probs`.
fn draw(probs: &[f64; 5], pairs: u64, rng: &mut SplitMix) -> Pentanomial {
    let mut counts = Pentanomial::default();
    for _ in 0..pairs {
        counts.0[draw_pair(probs, rng)] += 1;
    }
    counts
}

/// The posterior search on one series: its answer, the pairs it played, and whether the
/// budget ran out.
fn posterior_search(setup: &Setup, elos: &[f64], rng: &mut SplitMix) -> (Option<usize>, u64, bool) {
    let mut posterior = Posterior::new(setup.versions, setup.elo);
    let mut pairs = 0;
    loop {
        if let Some(decided) = posterior.decided(setup.alpha) {
            return (decided.version, pairs, false);
        }
        if pairs >= setup.budget_pairs {
            return (posterior.leader().version, pairs, true);
        }
        let m: Matchup = posterior.next_probe();
        let probs = at_elo(
            &setup.shape,
            SprtModel::Logistic,
            elos[m.player] - elos[m.opponent],
        );
        posterior.add(m, &draw(&probs, setup.step_pairs, rng));
        pairs += setup.step_pairs;
    }
}

/// The hand method on one series: an SPRT of the last version ("is there a drop?"), then a
/// binary search with an SPRT at each midpoint, each test given an even share of the error
/// budget. An SPRT still undecided at its share of the budget goes by the sign of its LLR.
fn hand_method(
    setup: &Setup,
    probs: &[[f64; 5]],
    rng: &mut SplitMix,
) -> (Option<usize>, u64, bool) {
    let n = setup.versions;
    let tests = 1 + (usize::BITS - (n - 2).leading_zeros()) as u64;
    let share = setup.alpha / tests as f64;
    let sprt = Sprt {
        elo0: -setup.elo,
        elo1: 0.0,
        alpha: share,
        beta: share,
        model: SprtModel::Logistic,
    };
    let cap = setup.budget_pairs / tests;
    let mut pairs = 0;
    let mut out = false;
    // Whether version j is weaker (H0 of the test, whose H1 is "as strong").
    let mut weaker = |j: usize, pairs: &mut u64, rng: &mut SplitMix| -> bool {
        let mut counts = Pentanomial::default();
        loop {
            counts.0[draw_pair(&probs[j], rng)] += 1;
            *pairs += 1;
            let llr = sprt.llr(&counts);
            match sprt.decide(llr) {
                Decision::H0 => return true,
                Decision::H1 => return false,
                Decision::Continue if counts.pairs() >= cap => {
                    out = true;
                    return llr < 0.0;
                }
                Decision::Continue => {}
            }
        }
    };
    if !weaker(n - 1, &mut pairs, rng) {
        return (None, pairs, out);
    }
    let (mut good, mut bad) = (0, n - 1);
    while bad - good > 1 {
        let mid = (good + bad) / 2;
        if weaker(mid, &mut pairs, rng) {
            bad = mid;
        } else {
            good = mid;
        }
    }
    (Some(bad), pairs, out)
}

/// What one game pair can tell about a version `elo` weaker than its opponent, and the fewest
/// games a bisection of one drop can hope for, whatever its method.
#[derive(Clone, Copy, Debug)]
pub struct InformationBound {
    /// The channel's capacity, nats per game pair: a matchup's answer is "weaker" or "as
    /// strong", told by pairs drawn from one of two distributions.
    pub capacity: f64,
    /// The larger of the two distributions' divergences, nats per pair: the rate at which a
    /// known answer is confirmed.
    pub confirmation: f64,
    /// Games: `ln(places) / capacity + ln(1 / alpha) / confirmation`, two games a pair.
    pub games: f64,
}

/// Burnashev's bound for a channel with feedback, as the search is one (each step chosen after
/// the last): finding one of `versions - 1` places at error rate `alpha` takes at least
/// `ln M / C + ln(1/alpha) / C1` uses of the channel, up to terms small against both as they
/// grow. An estimate, not a bound at these sizes; a method that knows there is a drop, and
/// one drop only, is held to it too.
pub fn information_bound(setup: &Setup) -> InformationBound {
    let strong = at_elo(&setup.shape, SprtModel::Logistic, 0.0);
    let weaker = at_elo(&setup.shape, SprtModel::Logistic, -setup.elo);
    let divergence = |a: &[f64; 5], b: &[f64; 5]| -> f64 {
        a.iter()
            .zip(b)
            .filter(|(x, _)| **x > 0.0)
            .map(|(x, y)| x * (x / y).ln())
            .sum()
    };
    // The mutual information of the answer and a pair, the answer "weaker" with chance `p`.
    let information = |p: f64| -> f64 {
        let mix: [f64; 5] = std::array::from_fn(|i| p * weaker[i] + (1.0 - p) * strong[i]);
        p * divergence(&weaker, &mix) + (1.0 - p) * divergence(&strong, &mix)
    };
    // Concave in p: a golden-section search finds its top.
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let (a, b) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if information(a) < information(b) {
            lo = a;
        } else {
            hi = b;
        }
    }
    let capacity = information((lo + hi) / 2.0);
    let confirmation = divergence(&strong, &weaker).max(divergence(&weaker, &strong));
    let places = (setup.versions - 1) as f64;
    let pairs = places.ln() / capacity + (1.0 / setup.alpha).ln() / confirmation;
    InformationBound {
        capacity,
        confirmation,
        games: 2.0 * pairs,
    }
}

/// Both methods over `runs` series of one scenario: (posterior search, hand method).
pub fn compare(setup: &Setup, scenario: Scenario, runs: u64, seed: u64) -> (Tally, Tally) {
    let mut rng = SplitMix(seed);
    let (mut ours, mut hand) = (Tally::default(), Tally::default());
    for _ in 0..runs {
        let (elos, truth) = scenario.series(setup.versions, setup.elo, &mut rng);
        let probs: Vec<[f64; 5]> = elos
            .iter()
            .map(|&e| at_elo(&setup.shape, SprtModel::Logistic, e))
            .collect();
        let (answer, pairs, out) = posterior_search(setup, &elos, &mut rng);
        ours.count(answer, truth, pairs, out);
        let (answer, pairs, out) = hand_method(setup, &probs, &mut rng);
        hand.count(answer, truth, pairs, out);
    }
    (ours, hand)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_put_the_drops_where_they_say() {
        let mut rng = SplitMix(7);
        for _ in 0..50 {
            let (elos, first) = Scenario::TwoDrops.series(8, 10.0, &mut rng);
            let k = first.unwrap();
            assert!(elos[..k].iter().all(|&e| e == 0.0));
            assert!(elos[k..].iter().all(|&e| e <= -10.0));
            let (elos, first) = Scenario::NoDrop.series(8, 10.0, &mut rng);
            assert_eq!(first, None);
            assert!(elos.iter().all(|&e| e == 0.0));
        }
    }

    /// The promise `bench --bisect-sim` shows: in every kind of series the answer is wrong at
    /// most alpha of the time (within three standard errors of 300 runs), and where there is a
    /// drop it costs fewer games than an SPRT at each midpoint.
    #[test]
    fn the_posterior_search_keeps_its_error_rate_and_beats_the_hand_method() {
        let setup = Setup::new(12, 20.0, 0.05);
        for (k, scenario) in Scenario::ALL.into_iter().enumerate() {
            let (ours, hand) = compare(&setup, scenario, 300, 11 + k as u64);
            let slack = 3.0 * crate::stats::simulate::standard_error(0.05, 300);
            assert!(
                ours.error_rate() <= 0.05 + slack,
                "{scenario:?}: wrong {} of 300",
                ours.wrong
            );
            if scenario != Scenario::NoDrop {
                assert!(
                    ours.mean_games() < 0.8 * hand.mean_games(),
                    "{scenario:?}: {} games against {}",
                    ours.mean_games(),
                    hand.mean_games()
                );
            }
        }
    }

    /// The estimate is of the right size: about a quarter of the divergence per pair for a small
    /// drop (a binary answer, even odds), and the search cannot fall far below it unless the
    /// simulation lets it see the answer.
    #[test]
    fn no_search_plays_far_fewer_games_than_the_information_bound() {
        let setup = Setup::new(12, 20.0, 0.05);
        let bound = information_bound(&setup);
        let quarter = bound.confirmation / 4.0;
        assert!(
            (bound.capacity - quarter).abs() < 0.05 * quarter,
            "{bound:?}"
        );
        let (ours, hand) = compare(&setup, Scenario::Drop, 300, 5);
        assert!(
            ours.mean_games() > 0.8 * bound.games,
            "{} against {bound:?}",
            ours.mean_games()
        );
        assert!(hand.mean_games() > ours.mean_games());
    }
}
