//! Sequential probability ratio test on game pairs, to stop a test as soon as its answer is clear.
//!
//! The log-likelihood ratio is the generalized SPRT's normal approximation on pentanomial pair
//! scores: `LLR = N (s1 - s0) (2 mean - s0 - s1) / (2 var)`, where `s0`, `s1` are the expected
//! pair scores under the two hypotheses. In the logistic model the bounds are Elo differences;
//! in the normalized model they are normalized Elo (scaled by the sample's own spread).
//! Each pentanomial cell is padded with 1e-3 pseudo-pairs, as fishtest does.

use super::pentanomial::{Pentanomial, NELO_PER_T};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtModel {
    Logistic,
    Normalized,
}

#[derive(Clone, Copy, Debug, PartialEq)]
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

fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

impl Sprt {
    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=normalized|logistic]`.
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
            let number = || {
                v.parse::<f64>()
                    .map_err(|_| format!("{k}={v} is not a number"))
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
                        _ => {
                            return Err(format!("model must be normalized or logistic, not '{v}'"))
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

    pub fn llr(&self, pairs: &Pentanomial) -> f64 {
        let Some((mean, var, n)) = pairs.mean_var(1e-3) else {
            return 0.0;
        };
        if var <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = match self.model {
            SprtModel::Logistic => (logistic_score(self.elo0), logistic_score(self.elo1)),
            SprtModel::Normalized => {
                let per_game_sd = (2.0 * var).sqrt();
                (
                    0.5 + self.elo0 / NELO_PER_T * per_game_sd,
                    0.5 + self.elo1 / NELO_PER_T * per_game_sd,
                )
            }
        };
        n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
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

    #[test]
    fn bounds_match_wald() {
        let s = Sprt::parse("elo0=0 elo1=5 alpha=0.05 beta=0.05").unwrap();
        let (lo, hi) = s.bounds();
        assert!((lo + 2.944_438_979).abs() < 1e-6 && (hi - 2.944_438_979).abs() < 1e-6);
    }

    #[test]
    fn llr_has_the_right_sign_and_size() {
        let s = Sprt::parse("elo0=0 elo1=10 model=logistic").unwrap();
        let good = Pentanomial([10, 50, 200, 80, 20]);
        let bad = good.flipped();
        assert!(s.llr(&good) > 0.0 && s.llr(&bad) < 0.0);
        // By hand for the logistic model: s0 = 0.5, s1 = 0.514387; mean and var from the counts.
        let (mean, var, n) = good.mean_var(1e-3).unwrap();
        let s1 = 1.0 / (1.0 + 10f64.powf(-10.0 / 400.0));
        let expected = n * (s1 - 0.5) * (2.0 * mean - 0.5 - s1) / (2.0 * var);
        assert!((s.llr(&good) - expected).abs() < 1e-9);
        assert_eq!(s.decide(100.0), Decision::H1);
        assert_eq!(s.decide(-100.0), Decision::H0);
        assert_eq!(s.decide(0.0), Decision::Continue);
    }

    #[test]
    fn one_sided_results_still_decide() {
        let s = Sprt::parse("elo0=0 elo1=20").unwrap();
        assert_eq!(
            s.decide(s.llr(&Pentanomial([0, 0, 0, 0, 12]))),
            Decision::H1
        );
        assert_eq!(
            s.decide(s.llr(&Pentanomial([12, 0, 0, 0, 0]))),
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
