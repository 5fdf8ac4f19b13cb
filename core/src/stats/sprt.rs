//! Sequential probability ratio test on game pairs, to stop a test as soon as its answer is clear.
//!
//! The log-likelihood ratio is the generalized SPRT's (GSPRT) exact one, as fishtest computes it
//! (`LLR_logistic` and `LLR_normalized` in fishtest's `stat_util.py`, after M. Van den Bergh):
//! for each hypothesis the multinomial distribution of pair results that is most likely given the
//! observed counts, under that hypothesis's constraint, is found (`mle.rs`), and
//! `LLR = N * sum_i phat_i * ln(p1_i / p0_i)`. In the logistic model the constraint is on the
//! expected score (`1 / (1 + 10^(-elo/400))`); in the normalized model on the t-value
//! `(mu - 1/2) / sigma`, which is `nElo / (800 / ln 10)` per game and `sqrt(2)` times that per
//! pair. The Bayesian model is fastchess's `model=bayesian`: on single games (win, draw, loss), the
//! expected score BayesElo's model gives each bound with the draw Elo the games' own win and loss
//! rates imply (`200 log10((1 - L) / L * (1 - W) / W)`); it stays at 0 until a game is won and
//! one is lost.
//!
//! Why not the normal approximation `N (s1 - s0)(2 mean - s0 - s1) / (2 var)` used before: it
//! divides by the sample's variance, which is near zero for a few identical pairs, so two lost
//! pairs gave an LLR far past the bounds and stopped a test. The exact GLR is a ratio of two
//! likelihoods of the same data, so a few pairs can only move it a little (two lost pairs against
//! elo1 = 100: -0.95 normalized, -0.66 logistic; the normal approximation gave -13.49
//! normalized). Empty cells are regularized with 1e-3 pseudo-pairs, as in fishtest: that is the
//! whole rule for degenerate samples, no minimum number of pairs is needed.

use super::mle::{Sample, GAME_SCORES, PAIR_SCORES};
use super::pentanomial::{Pentanomial, NELO_PER_T};
use super::Wdl;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtModel {
    Logistic,
    Normalized,
    Bayesian,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: SprtModel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// H1 accepted: the difference is at least elo1.
    H1,
    /// H0 accepted: the difference is at most elo0.
    H0,
    Continue,
}

pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The expected score at a BayesElo difference, with this draw Elo.
pub fn bayeselo_score(elo: f64, drawelo: f64) -> f64 {
    let win = 1.0 / (1.0 + 10f64.powf((drawelo - elo) / 400.0));
    let loss = 1.0 / (1.0 + 10f64.powf((drawelo + elo) / 400.0));
    win + 0.5 * (1.0 - win - loss)
}

impl Sprt {
    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=normalized|logistic|bayesian]`.
    pub fn parse(text: &str) -> Result<Sprt, String> {
        let mut sprt = Sprt {
            elo0: f64::NAN,
            elo1: f64::NAN,
            alpha: 0.05,
            beta: 0.05,
            model: SprtModel::Normalized,
        };
        for part in text
            .split_whitespace()
            .flat_map(|p| p.split(','))
            .filter(|p| !p.is_empty())
        {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' is not key=value"))?;
            // `inf` and `nan` parse as numbers but bound nothing.
            let number = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("{k}={v} is not a finite number"))
            };
            match k {
                "elo0" => sprt.elo0 = number()?,
                "elo1" => sprt.elo1 = number()?,
                "alpha" => sprt.alpha = number()?,
                "beta" => sprt.beta = number()?,
                "model" => {
                    sprt.model = match v {
                        "normalized" => SprtModel::Normalized,
                        "logistic" => SprtModel::Logistic,
                        "bayesian" => SprtModel::Bayesian,
                        _ => {
                            return Err(format!(
                                "model must be normalized, logistic or bayesian, not '{v}'"
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown key '{k}' (elo0, elo1, alpha, beta, model)"
                    ))
                }
            }
        }
        if sprt.elo0.is_nan() || sprt.elo1.is_nan() {
            return Err("elo0= and elo1= are required".into());
        }
        if sprt.elo1 <= sprt.elo0 {
            return Err("elo1 must be greater than elo0".into());
        }
        let prob = 0.0..0.5;
        if !prob.contains(&sprt.alpha)
            || !prob.contains(&sprt.beta)
            || sprt.alpha == 0.0
            || sprt.beta == 0.0
        {
            return Err("alpha and beta must be between 0 and 0.5".into());
        }
        Ok(sprt)
    }

    /// (lower, upper) LLR bounds: below the lower H0 is accepted, above the upper H1.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The LLR of game pairs (pentanomial).
    pub fn llr(&self, pairs: &Pentanomial) -> f64 {
        self.llr_of(&PAIR_SCORES, &pairs.0)
    }

    /// The LLR of a run's results, as its model reads them: the game pairs, or for the Bayesian
    /// model the single games.
    pub fn llr_of_results(&self, pairs: &Pentanomial, games: Wdl) -> f64 {
        match self.model {
            SprtModel::Bayesian => self.llr_trinomial(games),
            SprtModel::Logistic | SprtModel::Normalized => self.llr(pairs),
        }
    }

    /// The LLR of single games (trinomial), for results that are not paired.
    pub fn llr_trinomial(&self, games: Wdl) -> f64 {
        self.llr_of(&GAME_SCORES, &[games.losses, games.draws, games.wins])
    }

    fn llr_of(&self, values: &[f64], counts: &[u64]) -> f64 {
        let Some(sample) = Sample::regularized(values, counts) else {
            return 0.0;
        };
        let fits = match self.model {
            SprtModel::Bayesian => {
                let (loss, win) = (sample.probs[0], sample.probs[sample.probs.len() - 1]);
                if counts[0] == 0 || counts[counts.len() - 1] == 0 {
                    return 0.0;
                }
                let drawelo = 200.0 * ((1.0 - loss) / loss * (1.0 - win) / win).log10();
                (
                    sample.fit_mean(bayeselo_score(self.elo0, drawelo)),
                    sample.fit_mean(bayeselo_score(self.elo1, drawelo)),
                )
            }
            SprtModel::Logistic => (
                sample.fit_mean(logistic_score(self.elo0)),
                sample.fit_mean(logistic_score(self.elo1)),
            ),
            SprtModel::Normalized => {
                // A pair's score spreads 1/sqrt(2) as much as a game's.
                let per_sample = if values.len() == PAIR_SCORES.len() {
                    std::f64::consts::SQRT_2
                } else {
                    1.0
                };
                let t = |nelo: f64| nelo / NELO_PER_T * per_sample;
                (
                    sample.fit_t_value(0.5, t(self.elo0)),
                    sample.fit_t_value(0.5, t(self.elo1)),
                )
            }
        };
        match fits {
            (Some(h0), Some(h1)) => sample.log_likelihood(&h1) - sample.log_likelihood(&h0),
            _ => 0.0,
        }
    }

    pub fn decide(&self, llr: f64) -> Decision {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            Decision::H1
        } else if llr <= lower {
            Decision::H0
        } else {
            Decision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fastchess's `model=bayesian` (`SPRT::getLLR(win, draw, loss)` in its sprt.cpp), as a
    /// stdlib Python transcription of it computes it: (wins, draws, losses, elo0, elo1, LLR).
    #[test]
    fn the_bayesian_model_gives_fastchess_s_llr_on_single_games() {
        let cases: [(u64, u64, u64, f64, f64, f64); 4] = [
            (50, 40, 30, 0.0, 10.0, 0.7043541651),
            (1200, 3000, 1100, 0.0, 5.0, 1.6694392493),
            (120, 0, 80, -5.0, 5.0, 1.1512983025),
            (10, 5, 0, 0.0, 10.0, 0.0),
        ];
        for (wins, draws, losses, elo0, elo1, expected) in cases {
            let s = Sprt::parse(&format!("elo0={elo0} elo1={elo1} model=bayesian")).unwrap();
            let games = Wdl {
                wins,
                draws,
                losses,
            };
            let llr = s.llr_of_results(&Pentanomial::default(), games);
            assert!(
                (llr - expected).abs() < 1e-6,
                "{wins}-{draws}-{losses}: {llr} vs {expected}"
            );
        }
        // The other models read the pairs, whatever the games say.
        let s = Sprt::parse("elo0=0 elo1=5 model=logistic").unwrap();
        let pairs = Pentanomial([10, 50, 200, 80, 20]);
        let games = Wdl {
            wins: 9,
            draws: 0,
            losses: 0,
        };
        assert_eq!(s.llr_of_results(&pairs, games), s.llr(&pairs));
    }

    #[test]
    fn bounds_match_wald() {
        let s = Sprt::parse("elo0=0 elo1=5 alpha=0.05 beta=0.05").unwrap();
        let (lo, hi) = s.bounds();
        assert!((lo + 2.944_438_979).abs() < 1e-6 && (hi - 2.944_438_979).abs() < 1e-6);
    }

    /// Output of `python3 tests/reference/fishtest_llr.py`, a stdlib transcription of fishtest's
    /// published `stat_util.py` formulas (LLR_logistic, LLR_normalized), run on 2026-11-23.
    /// Five counts are pentanomial pairs (LL .. WW), three are trinomial (L, D, W).
    const FISHTEST_LLR: [(&str, f64, f64, &[u64], f64); 8] = [
        ("logistic", 0.0, 5.0, &[10, 50, 200, 80, 20], 1.8523567961),
        ("logistic", 0.0, 100.0, &[2, 0, 0, 0, 0], -0.6581074213),
        (
            "logistic",
            -3.0,
            1.0,
            &[412, 3120, 7801, 3240, 427],
            8.3958443469,
        ),
        ("logistic", 0.0, 10.0, &[30, 40, 50], 0.7902559501),
        ("normalized", 0.0, 5.0, &[10, 50, 200, 80, 20], 1.1415865457),
        ("normalized", 0.0, 100.0, &[2, 0, 0, 0, 0], -0.9469008762),
        (
            "normalized",
            0.0,
            2.0,
            &[412, 3120, 7801, 3240, 427],
            1.0201939361,
        ),
        ("normalized", 0.0, 10.0, &[30, 40, 50], 0.6555167187),
    ];

    #[test]
    fn llr_agrees_with_fishtest_formulas_computed_independently() {
        for (model, elo0, elo1, counts, expected) in FISHTEST_LLR {
            let s = Sprt::parse(&format!("elo0={elo0} elo1={elo1} model={model}")).unwrap();
            let llr = match counts.len() {
                5 => s.llr(&Pentanomial(counts.try_into().unwrap())),
                _ => s.llr_trinomial(Wdl {
                    losses: counts[0],
                    draws: counts[1],
                    wins: counts[2],
                }),
            };
            assert!(
                (llr - expected).abs() < 1e-6,
                "{model} {elo0} {elo1} {counts:?}: {llr} vs fishtest {expected}"
            );
        }
    }

    #[test]
    fn two_lost_pairs_are_weak_evidence() {
        // The case that stopped a test at LLR -13.5 with the normal approximation.
        for model in ["logistic", "normalized"] {
            let s = Sprt::parse(&format!("elo0=0 elo1=100 model={model}")).unwrap();
            let llr = s.llr(&Pentanomial([2, 0, 0, 0, 0]));
            assert!(llr < 0.0 && llr.abs() < 3.0, "{model}: {llr}");
            assert_eq!(s.decide(llr), Decision::Continue);
        }
    }

    #[test]
    fn llr_has_the_right_sign_and_decides_at_the_bounds() {
        let s = Sprt::parse("elo0=0 elo1=10 model=logistic").unwrap();
        let good = Pentanomial([10, 50, 200, 80, 20]);
        assert!(s.llr(&good) > 0.0 && s.llr(&good.flipped()) < 0.0);
        assert_eq!(s.decide(100.0), Decision::H1);
        assert_eq!(s.decide(-100.0), Decision::H0);
        assert_eq!(s.decide(0.0), Decision::Continue);
    }

    #[test]
    fn one_sided_results_decide_once_there_are_enough() {
        let s = Sprt::parse("elo0=0 elo1=20").unwrap();
        let few = s.llr(&Pentanomial([0, 0, 0, 0, 12]));
        assert!(few > 0.0 && s.decide(few) == Decision::Continue, "{few}");
        assert_eq!(
            s.decide(s.llr(&Pentanomial([0, 0, 0, 0, 200]))),
            Decision::H1
        );
        assert_eq!(
            s.decide(s.llr(&Pentanomial([200, 0, 0, 0, 0]))),
            Decision::H0
        );
        assert_eq!(s.llr(&Pentanomial::default()), 0.0);
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Sprt::parse("elo0=5 elo1=0")
            .unwrap_err()
            .contains("greater"));
        assert!(Sprt::parse("elo0=0").unwrap_err().contains("required"));
        assert!(Sprt::parse("elo0=0 elo1=5 alpha=0.7")
            .unwrap_err()
            .contains("alpha"));
        assert!(Sprt::parse("elo0=0 elo1=5 model=x")
            .unwrap_err()
            .contains("model"));
    }
}
