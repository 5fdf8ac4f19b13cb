//! Statistics of match results: Elo from a score, error bars, likelihood of superiority.
//!
//! Formulas follow fishtest and cutechess: the Elo difference of a score `s` is
//! `-400 log10(1/s - 1)`; the 95% interval maps the score's normal interval through the same
//! function; LOS is the normal approximation `Phi((W - L) / sqrt(W + L))`.

use statrs::distribution::{ContinuousCDF, Normal};

pub mod pentanomial;
pub mod ratings;
pub mod sprt;

pub use pentanomial::Pentanomial;
pub use ratings::{rate, Param, RatingError, RatingOptions, Ratings, Results};
pub use sprt::{Decision, Sprt, SprtModel};

/// Two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses from one player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    /// Score in [0, 1]; `None` without games.
    pub fn score(&self) -> Option<f64> {
        (self.games() > 0).then(|| self.points() / self.games() as f64)
    }

    pub fn draw_ratio(&self) -> Option<f64> {
        (self.games() > 0).then(|| self.draws as f64 / self.games() as f64)
    }

    pub fn flipped(&self) -> Wdl {
        Wdl {
            wins: self.losses,
            draws: self.draws,
            losses: self.wins,
        }
    }
}

/// Elo difference for a score strictly between 0 and 1.
pub fn elo_from_score(score: f64) -> Option<f64> {
    (score > 0.0 && score < 1.0).then(|| -400.0 * (1.0 / score - 1.0).log10())
}

/// The Elo of one end of a score interval: an end that reaches a perfect score (or zero) has no
/// finite Elo.
pub fn elo_bound(score: f64) -> f64 {
    if score >= 1.0 {
        f64::INFINITY
    } else if score <= 0.0 {
        f64::NEG_INFINITY
    } else {
        elo_from_score(score).unwrap_or(0.0)
    }
}

/// An Elo estimate with its 95% interval, or why there is none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EloEstimate {
    Estimate {
        elo: f64,
        lower: f64,
        upper: f64,
    },
    NoGames,
    /// Every game won or every game lost: the difference is unbounded.
    Perfect {
        won_all: bool,
    },
}

impl EloEstimate {
    /// A plain sentence, never NaN.
    pub fn describe(&self) -> String {
        match *self {
            EloEstimate::Estimate { elo, lower, upper } => {
                format!("{elo:+.1} (95% {lower:+.1} .. {upper:+.1})")
            }
            EloEstimate::NoGames => "no games played yet".into(),
            EloEstimate::Perfect { won_all: true } => {
                "won every game: no finite Elo estimate".into()
            }
            EloEstimate::Perfect { won_all: false } => {
                "lost every game: no finite Elo estimate".into()
            }
        }
    }
}

/// Elo and its 95% interval from a trinomial (per-game W/D/L) model.
pub fn trinomial_elo(wdl: Wdl) -> EloEstimate {
    let n = wdl.games() as f64;
    let Some(s) = wdl.score() else {
        return EloEstimate::NoGames;
    };
    if wdl.wins == wdl.games() || wdl.losses == wdl.games() {
        return EloEstimate::Perfect {
            won_all: wdl.wins == wdl.games(),
        };
    }
    let var = (wdl.wins as f64 * (1.0 - s).powi(2)
        + wdl.draws as f64 * (0.5 - s).powi(2)
        + wdl.losses as f64 * s.powi(2))
        / n;
    let margin = Z95 * (var / n).sqrt();
    let elo = elo_from_score(s).unwrap_or(0.0);
    EloEstimate::Estimate {
        elo,
        lower: elo_bound(s - margin),
        upper: elo_bound(s + margin),
    }
}

/// Likelihood of superiority: probability that the player is the stronger, from wins and losses.
pub fn los(wdl: Wdl) -> Option<f64> {
    let decisive = (wdl.wins + wdl.losses) as f64;
    if decisive == 0.0 {
        return None;
    }
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some(normal.cdf((wdl.wins as f64 - wdl.losses as f64) / decisive.sqrt()))
}

/// Median, 99th percentile and maximum of samples (nearest-rank), or `None` without samples.
pub fn percentiles(samples: &[i64]) -> Option<(i64, i64, i64)> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank =
        |p: f64| sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    Some((rank(0.5), rank(0.99), sorted[sorted.len() - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_of_common_scores() {
        assert!((elo_from_score(0.5).unwrap()).abs() < 1e-9);
        assert!((elo_from_score(0.75).unwrap() - 190.848_501_887_865).abs() < 1e-6);
        assert_eq!(elo_from_score(1.0), None);
    }

    #[test]
    fn trinomial_matches_a_hand_computed_example() {
        // 60 wins, 20 draws, 20 losses: s = 0.7; per-game variance (60*0.09 + 20*0.04 + 20*0.49)/100
        // = 0.16, so the standard error of the mean is 0.04.
        let est = trinomial_elo(Wdl {
            wins: 60,
            draws: 20,
            losses: 20,
        });
        let EloEstimate::Estimate { elo, lower, upper } = est else {
            panic!()
        };
        assert!((elo - 147.19).abs() < 0.01, "{elo}");
        let lo_s = 0.7 - Z95 * 0.04;
        assert!((lower - elo_from_score(lo_s).unwrap()).abs() < 1e-9);
        assert!(upper > elo && lower < elo);
    }

    #[test]
    fn an_interval_reaching_a_perfect_score_is_unbounded() {
        // 20 wins and a draw: the score's interval passes 100%.
        let est = trinomial_elo(Wdl {
            wins: 20,
            draws: 1,
            losses: 0,
        });
        let EloEstimate::Estimate { upper, lower, .. } = est else {
            panic!()
        };
        assert_eq!(upper, f64::INFINITY);
        assert!(lower.is_finite());
        assert!(est.describe().contains("+inf"), "{}", est.describe());
    }

    #[test]
    fn degenerate_results_are_explained() {
        assert_eq!(trinomial_elo(Wdl::default()), EloEstimate::NoGames);
        assert_eq!(
            trinomial_elo(Wdl {
                wins: 5,
                draws: 0,
                losses: 0
            }),
            EloEstimate::Perfect { won_all: true }
        );
        let draws = trinomial_elo(Wdl {
            wins: 0,
            draws: 10,
            losses: 0,
        });
        assert_eq!(
            draws,
            EloEstimate::Estimate {
                elo: 0.0,
                lower: 0.0,
                upper: 0.0
            }
        );
        assert_eq!(
            los(Wdl {
                wins: 0,
                draws: 10,
                losses: 0
            }),
            None
        );
        assert!(!draws.describe().contains("NaN"));
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let samples: Vec<i64> = (1..=100).collect();
        assert_eq!(percentiles(&samples), Some((50, 99, 100)));
        assert_eq!(percentiles(&[7]), Some((7, 7, 7)));
        assert_eq!(percentiles(&[]), None);
    }

    #[test]
    fn los_is_half_for_equal_wins_and_losses() {
        assert!(
            (los(Wdl {
                wins: 10,
                draws: 3,
                losses: 10
            })
            .unwrap()
                - 0.5)
                .abs()
                < 1e-12
        );
        assert!(
            los(Wdl {
                wins: 20,
                draws: 0,
                losses: 5
            })
            .unwrap()
                > 0.99
        );
    }
}
