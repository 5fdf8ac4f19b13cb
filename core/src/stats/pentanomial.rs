//! Game pairs (the same opening with colours reversed) scored as one sample, as fishtest and
//! fastchess do: the pentanomial distribution of pair scores 0, 0.5, 1, 1.5, 2.

use super::mle::{Sample, PAIR_SCORES};
use super::{signed, EloEstimate, Z95};

/// Counts of pair results by the player's total points in the pair: [0, 0.5, 1, 1.5, 2].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pentanomial(pub [u64; 5]);

/// 800 / ln(10): converts a score's t-value to normalized Elo.
pub const NELO_PER_T: f64 = 347.435_585_522_601_46;

/// How far from its estimate a pair t-value is searched for an interval's end; past it the end
/// is reported as unbounded (a t-value of 30 per pair is about 7,400 normalized Elo).
const T_SEARCH: f64 = 30.0;

/// Normalized Elo (fishtest's nElo: the per-game t-value `(mu - 1/2) / sigma` times 800 / ln 10)
/// with its 95% profile-likelihood interval; an end may be infinite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalizedElo {
    pub nelo: f64,
    pub lower: f64,
    pub upper: f64,
}

impl NormalizedElo {
    pub fn describe(&self) -> String {
        // nElo divides by the pairs' spread: with every pair scored alike there is none.
        if !self.nelo.is_finite() || (self.lower.is_infinite() && self.upper.is_infinite()) {
            return "not defined (every pair scored alike)".into();
        }
        format!(
            "{} (95% {} .. {})",
            signed(self.nelo),
            signed(self.lower),
            signed(self.upper)
        )
    }
}

impl Pentanomial {
    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Adds one pair; `points` is the player's total over the two games (0 to 2, in halves).
    pub fn add(&mut self, points: f64) {
        let i = (points * 2.0).round().clamp(0.0, 4.0) as usize;
        self.0[i] += 1;
    }

    pub fn flipped(&self) -> Pentanomial {
        let c = self.0;
        Pentanomial([c[4], c[3], c[2], c[1], c[0]])
    }

    /// The observed mean score per game, without regularization.
    pub fn score(&self) -> Option<f64> {
        let n = self.pairs();
        (n > 0).then(|| {
            self.0
                .iter()
                .zip(PAIR_SCORES)
                .map(|(&c, x)| c as f64 * x)
                .sum::<f64>()
                / n as f64
        })
    }

    /// The pair results as a regularized sample (empty cells get 1e-3 pseudo-pairs).
    pub fn sample(&self) -> Option<Sample> {
        Sample::regularized(&PAIR_SCORES, &self.0)
    }

    /// Elo with a 95% interval from pair scores.
    pub fn elo(&self) -> EloEstimate {
        match (self.sample(), self.score()) {
            (Some(sample), Some(score)) => EloEstimate::from_sample(&sample, score),
            _ => EloEstimate::NoGames,
        }
    }

    /// Normalized Elo per game with its interval, or `None` without pairs. The estimate and the
    /// interval come from the regularized sample, so identical pairs still have a spread; a
    /// one-sided sample (every pair won, or every pair lost) has an infinite estimate and one
    /// finite bound.
    pub fn normalized_elo(&self) -> Option<NormalizedElo> {
        let sample = self.sample()?;
        let (mean, var) = sample.mean_var();
        let per_game = |t: f64| t / std::f64::consts::SQRT_2 * NELO_PER_T;
        let (lower, upper) = sample.t_value_interval(0.5, Z95, T_SEARCH);
        let nelo = match self.score() {
            Some(s) if s >= 1.0 => f64::INFINITY,
            Some(s) if s <= 0.0 => f64::NEG_INFINITY,
            _ => per_game((mean - 0.5) / var.sqrt()),
        };
        Some(NormalizedElo {
            nelo,
            lower: per_game(lower),
            upper: per_game(upper),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::elo_from_score;

    /// Every pair scored alike has no spread to divide by: nElo is said to be undefined, not
    /// printed as `+inf (95% -inf .. +inf)`.
    #[test]
    fn nelo_of_pairs_all_alike_is_not_a_number_printed() {
        if let Some(n) = Pentanomial([0, 0, 50, 0, 0]).normalized_elo() {
            let text = n.describe();
            assert!(!text.contains("-inf .. +inf"), "{text}");
        }
    }

    #[test]
    fn a_symmetric_sample_is_centred_on_zero() {
        // 10 pairs: 1x0, 2x0.5, 4x1, 2x1.5, 1x2 points: symmetric around 0.5.
        let p = Pentanomial([1, 2, 4, 2, 1]);
        assert_eq!(p.score(), Some(0.5));
        let EloEstimate::Estimate { elo, lower, upper } = p.elo() else {
            panic!()
        };
        assert!(elo.abs() < 1e-9);
        assert!(
            (upper + lower).abs() < 1e-6,
            "symmetric interval {lower} {upper}"
        );
        // Per-pair variance 0.075: the normal interval's end is near the likelihood one.
        let margin = Z95 * (0.075f64 / 10.0).sqrt();
        assert!((upper - elo_from_score(0.5 + margin).unwrap()).abs() < 15.0);
        let n = p.normalized_elo().unwrap();
        assert!(
            n.nelo.abs() < 1e-9 && (n.upper + n.lower).abs() < 1e-3,
            "{n:?}"
        );
        assert!(n.upper > 100.0, "{n:?}");
    }

    #[test]
    fn one_sided_samples_get_one_sided_bounds() {
        let all_won = Pentanomial([0, 0, 0, 0, 5]);
        let EloEstimate::Perfect {
            won_all: true,
            bound,
        } = all_won.elo()
        else {
            panic!("{:?}", all_won.elo())
        };
        assert!(bound.is_finite() && bound > 0.0, "{bound}");
        let n = all_won.normalized_elo().unwrap();
        assert!(
            n.upper.is_infinite() && n.lower.is_finite() && n.lower > 0.0,
            "{n:?}"
        );
        assert_eq!(Pentanomial::default().elo(), EloEstimate::NoGames);
        assert_eq!(Pentanomial::default().normalized_elo(), None);
    }

    #[test]
    fn identical_even_pairs_have_an_interval_of_honest_width() {
        let mirrored = Pentanomial([0, 0, 7, 0, 0]);
        let EloEstimate::Estimate { elo, lower, upper } = mirrored.elo() else {
            panic!()
        };
        assert!(
            elo == 0.0 && lower < -20.0 && upper > 20.0,
            "{lower} {upper}"
        );
        let n = mirrored.normalized_elo().unwrap();
        assert!(
            n.nelo.abs() < 1e-6 && n.lower < -20.0 && n.upper > 20.0,
            "{n:?}"
        );
        assert!(!n.describe().contains("-0.0"));
    }
}
