//! Game pairs (the same opening with colours reversed) scored as one sample, as fishtest and
//! fastchess do: the pentanomial distribution of pair scores 0, 0.5, 1, 1.5, 2.

use super::{elo_bound, elo_from_score, EloEstimate, Z95};

/// Counts of pair results by the player's total points in the pair: [0, 0.5, 1, 1.5, 2].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pentanomial(pub [u64; 5]);

/// 800 / ln(10): converts a score's t-value to normalized Elo.
pub const NELO_PER_T: f64 = 347.435_585_522_601_46;

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

    /// Mean pair score (in [0, 1]) and its per-pair variance, with each cell padded by
    /// `pad` pseudo-pairs (fishtest pads by 1e-3 so that a one-sided sample keeps a variance).
    pub fn mean_var(&self, pad: f64) -> Option<(f64, f64, f64)> {
        let counts: Vec<f64> = self.0.iter().map(|&c| c as f64 + pad).collect();
        let n: f64 = counts.iter().sum();
        if self.pairs() == 0 || n <= 0.0 {
            return None;
        }
        let x = [0.0, 0.25, 0.5, 0.75, 1.0];
        let mean = counts.iter().zip(x).map(|(c, x)| c * x).sum::<f64>() / n;
        let var = counts
            .iter()
            .zip(x)
            .map(|(c, x)| c * (x - mean).powi(2))
            .sum::<f64>()
            / n;
        Some((mean, var, n))
    }

    /// Elo with a 95% interval from pair scores.
    pub fn elo(&self) -> EloEstimate {
        let Some((s, var, n)) = self.mean_var(0.0) else {
            return EloEstimate::NoGames;
        };
        if s >= 1.0 || s <= 0.0 {
            return EloEstimate::Perfect { won_all: s >= 1.0 };
        }
        let margin = Z95 * (var / n).sqrt();
        EloEstimate::Estimate {
            elo: elo_from_score(s).unwrap_or(0.0),
            lower: elo_bound(s - margin),
            upper: elo_bound(s + margin),
        }
    }

    /// Normalized Elo (fishtest's nElo) with its 95% margin, or `None` without spread.
    pub fn normalized_elo(&self) -> Option<(f64, f64)> {
        let (s, var, n) = self.mean_var(0.0)?;
        if var <= 0.0 {
            return None;
        }
        let per_game_sd = (2.0 * var).sqrt();
        let nelo = (s - 0.5) / per_game_sd * NELO_PER_T;
        // The t-value's standard error is 1/sqrt(2n) per game pair of two games.
        let margin = Z95 * NELO_PER_T / (2.0 * n).sqrt();
        Some((nelo, margin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pentanomial_mean_variance_and_elo() {
        // 10 pairs: 1x0, 2x0.5, 4x1, 2x1.5, 1x2 points: symmetric around 0.5.
        let p = Pentanomial([1, 2, 4, 2, 1]);
        let (mean, var, n) = p.mean_var(0.0).unwrap();
        assert!((mean - 0.5).abs() < 1e-12 && n == 10.0);
        // E[(x-0.5)^2] = (2*0.0625*... ) = (1*0.25 + 2*0.0625 + 0 + 2*0.0625 + 1*0.25)/10 = 0.075
        assert!((var - 0.075).abs() < 1e-12);
        let EloEstimate::Estimate { elo, lower, upper } = p.elo() else {
            panic!()
        };
        assert!(elo.abs() < 1e-9);
        assert!((upper + lower).abs() < 1e-9, "symmetric interval");
        let margin = Z95 * (0.075f64 / 10.0).sqrt();
        assert!((upper - elo_from_score(0.5 + margin).unwrap()).abs() < 1e-9);
        let (nelo, _) = p.normalized_elo().unwrap();
        assert!(nelo.abs() < 1e-9);
    }

    #[test]
    fn one_sided_samples_are_explained_not_nan() {
        let all_won = Pentanomial([0, 0, 0, 0, 5]);
        assert_eq!(all_won.elo(), EloEstimate::Perfect { won_all: true });
        assert_eq!(all_won.normalized_elo(), None);
        assert_eq!(Pentanomial::default().elo(), EloEstimate::NoGames);
        let mirrored = Pentanomial([0, 0, 7, 0, 0]);
        assert_eq!(mirrored.normalized_elo(), None);
        assert!(matches!(mirrored.elo(), EloEstimate::Estimate { elo, .. } if elo == 0.0));
    }
}
