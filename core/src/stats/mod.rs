//! Statistics of match results: Elo from a score, error bars, likelihood of superiority.
//!
//! Formulas follow fishtest and cutechess: the Elo difference of a score `s` is
//! `-400 log10(1/s - 1)`; LOS is the normal approximation `Phi((W - L) / sqrt(W + L))`.
//!
//! The 95% interval of a score is the profile-likelihood interval of the multinomial over the
//! known score values (`mle.rs`): every expected score whose best-fitting distribution loses at
//! most `1.96^2 / 2` of log-likelihood. Unlike the normal (Wald) interval `s ± 1.96 sd / sqrt(n)`,
//! it has honest width on tiny and one-sided samples: ten draws give 0.41 .. 0.59 (Wald: zero
//! width), two losses give "below +83 Elo" (Wald: nothing), and on large samples the two agree.

use statrs::distribution::{ContinuousCDF, Normal};

pub mod bayeselo;
pub mod mle;
pub mod pentanomial;
pub mod ratings;
pub mod simulate;
pub mod sprt;

pub use pentanomial::Pentanomial;
pub use ratings::{rate, Param, RatingError, RatingOptions, Ratings, Results};
pub use sprt::{Decision, Sprt, SprtModel};

/// Two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses from one player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
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
    /// An end of the interval may be infinite when it reaches a perfect score.
    Estimate {
        elo: f64,
        lower: f64,
        upper: f64,
    },
    NoGames,
    /// Every game won or every game lost: no finite estimate, but a one-sided 95% bound
    /// (a lower bound when everything was won, an upper bound when everything was lost).
    Perfect {
        won_all: bool,
        bound: f64,
    },
}

/// A signed number with one decimal that never reads `-0.0` (a value that rounds to zero is zero).
pub fn signed(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "+inf" } else { "-inf" }.into();
    }
    let rounded = (value * 10.0).round() / 10.0;
    if rounded == 0.0 {
        "0.0".into()
    } else {
        format!("{rounded:+.1}")
    }
}

/// An interval's end, with the decimals its width needs: 100,000 drawn games give an interval
/// of about a hundredth of an Elo, which one decimal would print as an overconfident "0.0 ..
/// 0.0".
fn bound_text(value: f64, width: f64) -> String {
    if !(width > 0.0 && width < 0.5 && value.is_finite()) {
        return signed(value);
    }
    let decimals = (1.0 - width.log10()).ceil().clamp(2.0, 6.0) as usize;
    let text = format!("{value:+.decimals$}");
    if text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0.0".into()
    } else {
        text
    }
}

/// A number with `decimals` decimals that never reads `-0.000`.
pub fn fixed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

impl EloEstimate {
    /// From the observed `score` and the (regularized) sample behind it: the score's Elo and
    /// the profile-likelihood interval.
    pub fn from_sample(sample: &mle::Sample, score: f64) -> EloEstimate {
        let (lo, hi) = sample.mean_interval(Z95);
        if score >= 1.0 {
            EloEstimate::Perfect {
                won_all: true,
                bound: elo_bound(lo),
            }
        } else if score <= 0.0 {
            EloEstimate::Perfect {
                won_all: false,
                bound: elo_bound(hi),
            }
        } else {
            EloEstimate::Estimate {
                elo: elo_from_score(score).unwrap_or(0.0),
                lower: elo_bound(lo),
                upper: elo_bound(hi),
            }
        }
    }

    /// A plain sentence, never NaN, never `-0.0`.
    pub fn describe(&self) -> String {
        match *self {
            EloEstimate::Estimate { elo, lower, upper } => {
                format!(
                    "{} (95% {} .. {})",
                    signed(elo),
                    bound_text(lower, upper - lower),
                    bound_text(upper, upper - lower)
                )
            }
            EloEstimate::NoGames => "no games played yet".into(),
            EloEstimate::Perfect {
                won_all: true,
                bound,
            } => format!("won every game: above {} (95%)", signed(bound)),
            EloEstimate::Perfect {
                won_all: false,
                bound,
            } => format!("lost every game: below {} (95%)", signed(bound)),
        }
    }
}

/// Elo and its 95% interval from a trinomial (per-game W/D/L) model.
///
/// Each count is fitted once per process: a run's progress line fits the standing after every
/// game, and its report's course of the run then asks for the very same counts (each fit is a
/// few hundred solutions of the secular equation, on caches the engines emptied).
pub fn trinomial_elo(wdl: Wdl) -> EloEstimate {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    /// Fits kept at most; past it they are forgotten and made again.
    const KEPT: usize = 1 << 12;
    static FITS: OnceLock<Mutex<HashMap<Wdl, EloEstimate>>> = OnceLock::new();
    let fits = FITS.get_or_init(Default::default);
    if let Some(known) = fits.lock().ok().and_then(|f| f.get(&wdl).copied()) {
        return known;
    }
    let fitted = fit_trinomial(wdl);
    if let Ok(mut f) = fits.lock() {
        if f.len() >= KEPT {
            f.clear();
        }
        f.insert(wdl, fitted);
    }
    fitted
}

fn fit_trinomial(wdl: Wdl) -> EloEstimate {
    let counts = [wdl.losses, wdl.draws, wdl.wins];
    match (
        mle::Sample::regularized(&mle::GAME_SCORES, &counts),
        wdl.score(),
    ) {
        (Some(sample), Some(score)) => EloEstimate::from_sample(&sample, score),
        _ => EloEstimate::NoGames,
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

    /// A count asked again gets the fit it got the first time, which is the fit made afresh.
    #[test]
    fn a_trinomial_fit_remembered_is_the_fit() {
        for round in 0..2 {
            for wins in 0..12 {
                for draws in 0..5 {
                    let wdl = Wdl {
                        wins,
                        draws,
                        losses: 7,
                    };
                    assert_eq!(trinomial_elo(wdl), fit_trinomial(wdl), "{wdl:?} {round}");
                }
            }
        }
    }

    #[test]
    fn elo_of_common_scores() {
        assert!((elo_from_score(0.5).unwrap()).abs() < 1e-9);
        assert!((elo_from_score(0.75).unwrap() - 190.848_501_887_865).abs() < 1e-6);
        assert_eq!(elo_from_score(1.0), None);
    }

    #[test]
    fn a_large_sample_agrees_with_the_normal_interval() {
        // 600 wins, 200 draws, 200 losses: s = 0.7, per-game variance 0.16, so the normal
        // interval is 0.7 ± 1.96 * 0.4 / sqrt(1000); the likelihood interval is close to it.
        let est = trinomial_elo(Wdl {
            wins: 600,
            draws: 200,
            losses: 200,
        });
        let EloEstimate::Estimate { elo, lower, upper } = est else {
            panic!("{est:?}")
        };
        assert!((elo - 147.19).abs() < 0.01, "{elo}");
        let margin = Z95 * 0.4 / 1000f64.sqrt();
        assert!(
            (lower - elo_from_score(0.7 - margin).unwrap()).abs() < 1.0,
            "{lower}"
        );
        assert!(
            (upper - elo_from_score(0.7 + margin).unwrap()).abs() < 1.0,
            "{upper}"
        );
    }

    #[test]
    fn a_near_perfect_score_has_a_finite_interval() {
        // 20 wins and a draw: the draw rules out a perfect expected score.
        let est = trinomial_elo(Wdl {
            wins: 20,
            draws: 1,
            losses: 0,
        });
        let EloEstimate::Estimate { elo, upper, lower } = est else {
            panic!("{est:?}")
        };
        assert!(lower.is_finite() && upper.is_finite() && lower < elo && elo < upper);
    }

    #[test]
    fn no_interval_from_a_small_sample_has_zero_width() {
        for wins in 0..6 {
            for draws in 0..6 {
                for losses in 0..6 {
                    let wdl = Wdl {
                        wins,
                        draws,
                        losses,
                    };
                    let text = trinomial_elo(wdl).describe();
                    assert!(!text.contains("NaN") && !text.contains("-0.0"), "{text}");
                    if let EloEstimate::Estimate { lower, upper, .. } = trinomial_elo(wdl) {
                        assert!(upper - lower > 10.0, "{wdl:?}: {text}");
                    }
                }
            }
        }
    }

    #[test]
    fn degenerate_results_are_explained() {
        assert_eq!(trinomial_elo(Wdl::default()), EloEstimate::NoGames);
        // Five wins: 5 ln(s) = -1.96^2/2 at the lower end, s = 0.681, +131 Elo.
        let EloEstimate::Perfect {
            won_all: true,
            bound,
        } = trinomial_elo(Wdl {
            wins: 5,
            draws: 0,
            losses: 0,
        })
        else {
            panic!()
        };
        assert!((bound - 131.0).abs() < 2.0, "{bound}");
        // Two losses: below +83 (2 ln(1 - s) = -1.92 at s = 0.617).
        let two_losses = trinomial_elo(Wdl {
            wins: 0,
            draws: 0,
            losses: 2,
        });
        // (The 1e-3 pseudo-counts of the empty cells move it to +84.1.)
        assert_eq!(two_losses.describe(), "lost every game: below +84.1 (95%)");
        let draws = trinomial_elo(Wdl {
            wins: 0,
            draws: 10,
            losses: 0,
        });
        let EloEstimate::Estimate { elo, lower, upper } = draws else {
            panic!()
        };
        assert!(elo == 0.0 && (upper - 61.0).abs() < 2.0 && (lower + 61.0).abs() < 2.0);
        assert!(
            draws.describe().starts_with("0.0 (95% -"),
            "{}",
            draws.describe()
        );
        assert_eq!(
            los(Wdl {
                wins: 0,
                draws: 10,
                losses: 0
            }),
            None
        );
    }

    /// 100,000 drawn games pin the difference down to about a hundredth of an Elo, not to
    /// nothing: the interval is printed with the decimals that show its width.
    #[test]
    fn every_game_drawn_gives_a_narrow_interval_not_none() {
        let wdl = Wdl {
            wins: 0,
            draws: 100_000,
            losses: 0,
        };
        let EloEstimate::Estimate { lower, upper, .. } = trinomial_elo(wdl) else {
            panic!("an estimate");
        };
        assert!(lower < 0.0 && upper > 0.0, "{lower} .. {upper}");
        let text = trinomial_elo(wdl).describe();
        assert!(!text.contains("0.0 .. 0.0"), "{text}");
        assert!(text.starts_with("0.0 (95% -0.0"), "{text}");
        let few = Wdl {
            wins: 0,
            draws: 100,
            losses: 0,
        };
        assert!(
            trinomial_elo(few).describe().contains(" .. +"),
            "{}",
            trinomial_elo(few).describe()
        );
    }

    #[test]
    fn signed_never_prints_negative_zero() {
        assert_eq!(signed(-0.0), "0.0");
        assert_eq!(signed(-0.04), "0.0");
        assert_eq!(signed(-0.06), "-0.1");
        assert_eq!(signed(12.34), "+12.3");
        assert_eq!(signed(f64::NEG_INFINITY), "-inf");
        assert_eq!(fixed(-0.0001, 3), "0.000");
        assert_eq!(fixed(-0.0006, 3), "-0.001");
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
