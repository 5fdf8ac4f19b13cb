//! Ratings as BayesElo prints them (Rémi Coulom's program, which the MIT course and many engine
//! authors pipe their PGN to: `readpgn`, `elo`, `mm`, `exactdist` or `covariance`, `ratings`).
//! The model is the one of `ratings.rs`; what differs is what BayesElo does around it:
//!
//! - its prior: `prior P` virtual draws *per player*, spread over its opponents in proportion
//!   to the games played with each (so with 4 players `prior 2` weighs 3x what 2 draws per
//!   pairing would);
//! - `mm` without arguments keeps the first-move advantage (32.8) and draw width (97.3) fixed;
//! - ratings and intervals are printed multiplied by its `eloScale`, `4x / (1 + x)^2` with
//!   `x = 10^(-drawelo/400)` (1.6% at drawelo 44, 7.5% at 97.3, 27% at 200), which makes an
//!   Elo difference mean an expected score again once draws take part of the probability;
//! - intervals: `exactdist` (each player's likelihood on a 1001-point grid over -1500..1500,
//!   the others moved to keep the mean, cut at 2.5% on each side) or `covariance` (the normal
//!   approximation from the inverted Hessian of the mean-centred ratings).

// Matrix arithmetic reads best with explicit indices.
#![allow(clippy::needless_range_loop)]

use super::ratings::{
    check_rateable, solve, RatingError, RatingOptions, Results, DEFAULT_ADVANTAGE, DEFAULT_DRAWELO,
};

/// How BayesElo's intervals are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intervals {
    /// BayesElo's `exactdist`: each player's own likelihood, others following.
    Exactdist,
    /// BayesElo's `covariance`: the normal approximation.
    Covariance,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BayesEloOptions {
    /// `prior`: virtual draws per player.
    pub prior: f64,
    /// `advantage`: the first move's worth in Elo.
    pub advantage: f64,
    /// `drawelo`: the draw width in Elo.
    pub drawelo: f64,
    pub intervals: Intervals,
    /// `confidence`.
    pub confidence: f64,
}

impl Default for BayesEloOptions {
    fn default() -> Self {
        BayesEloOptions {
            prior: 2.0,
            advantage: DEFAULT_ADVANTAGE,
            drawelo: DEFAULT_DRAWELO,
            intervals: Intervals::Exactdist,
            confidence: 0.95,
        }
    }
}

/// One player as BayesElo's `ratings` prints it: the rating (mean 0) and how far the interval
/// reaches below and above it, all already multiplied by `eloScale`.
#[derive(Clone, Debug, PartialEq)]
pub struct BayesEloRating {
    pub player: usize,
    pub elo: f64,
    pub minus: f64,
    pub plus: f64,
}

/// Results per ordered pair (white, black): white's wins, draws, white's losses; prior
/// included.
struct Table {
    n: usize,
    cells: Vec<[f64; 3]>,
    /// Each player's opponents: the only cells that are not empty.
    opponents: Vec<Vec<usize>>,
}

impl Table {
    fn of(results: &Results, prior: f64) -> Table {
        let n = results.players.len();
        let mut cells = vec![[0.0; 3]; n * n];
        for ((w, b), c) in results.cells() {
            cells[w * n + b] = c;
        }
        // games[i][j]: games between i and j in either colour.
        let games = |i: usize, j: usize| -> f64 {
            cells[i * n + j].iter().sum::<f64>() + cells[j * n + i].iter().sum::<f64>()
        };
        let total: Vec<f64> = (0..n).map(|i| (0..n).map(|j| games(i, j)).sum()).collect();
        let mut with_prior = cells.clone();
        for i in 0..n {
            for j in 0..n {
                let g = games(i, j);
                if i != j && g > 0.0 {
                    // Each player's P/4 per colour, spread over its opponents by games played.
                    with_prior[i * n + j][1] +=
                        0.25 * prior * g * (1.0 / total[i] + 1.0 / total[j]);
                }
            }
        }
        let opponents = (0..n)
            .map(|i| (0..n).filter(|&j| j != i && games(i, j) > 0.0).collect())
            .collect();
        Table {
            n,
            cells: with_prior,
            opponents,
        }
    }

    fn cell(&self, white: usize, black: usize) -> [f64; 3] {
        self.cells[white * self.n + black]
    }
}

/// P(win) of the player whose rating minus the other's is `delta`, with the colour's
/// advantage already in `delta`.
fn win(delta: f64, drawelo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf((-delta + drawelo) / 400.0))
}

/// The log-likelihood of one player's games, at rating `mine_elo` against opponents rated
/// `elo - shift`.
fn player_log_likelihood(
    t: &Table,
    elo: &[f64],
    (p, mine_elo, shift): (usize, f64, f64),
    adv: f64,
    drawelo: f64,
) -> f64 {
    let mut sum = 0.0;
    let mut add = |count: f64, prob: f64| {
        if count > 0.0 {
            sum += count * prob.ln();
        }
    };
    for &q in &t.opponents[p] {
        let theirs = elo[q] - shift;
        // p with White, then p with Black.
        for (white, black, mine) in [(p, q, true), (q, p, false)] {
            let [ww, d, bw] = t.cell(white, black);
            let x = if mine {
                mine_elo + adv - theirs
            } else {
                theirs + adv - mine_elo
            };
            let (pw, pb) = (win(x, drawelo), win(-x, drawelo));
            let (wins, losses) = if mine { (ww, bw) } else { (bw, ww) };
            let (p_win, p_loss) = if mine { (pw, pb) } else { (pb, pw) };
            add(wins, p_win);
            add(d, 1.0 - pw - pb);
            add(losses, p_loss);
        }
    }
    sum
}

/// BayesElo's `mm` with the advantage and draw width fixed: minorization-maximization on
/// gammas (`10^(elo/400)`), then ratings centred on 0.
fn maximize(t: &Table, adv: f64, drawelo: f64) -> Vec<f64> {
    let n = t.n;
    let (tw, td) = (10f64.powf(adv / 400.0), 10f64.powf(drawelo / 400.0));
    let mut gamma = vec![1.0; n];
    for _ in 0..100_000 {
        let mut diff: f64 = 0.0;
        for p in 0..n {
            let (mut a, mut b) = (0.0, 0.0);
            for &q in &t.opponents[p] {
                let [w_ij, d_ij, l_ij] = t.cell(p, q);
                let [w_ji, d_ji, l_ji] = t.cell(q, p);
                let (gp, gq) = (gamma[p], gamma[q]);
                a += w_ij + d_ij + l_ji + d_ji;
                b += (d_ij + w_ij) * tw / (tw * gp + td * gq)
                    + (d_ij + l_ij) * td * tw / (td * tw * gp + gq)
                    + (d_ji + w_ji) * td / (tw * gq + td * gp)
                    + (d_ji + l_ji) / (td * tw * gq + gp);
            }
            if b > 0.0 {
                let next = a / b;
                diff = diff.max((next - gamma[p]).abs());
                gamma[p] = next;
            }
        }
        if diff < 1e-12 {
            break;
        }
    }
    let mut elo: Vec<f64> = gamma.iter().map(|g| 400.0 * g.log10()).collect();
    let mean = elo.iter().sum::<f64>() / n as f64;
    elo.iter_mut().for_each(|e| *e -= mean);
    elo
}

/// BayesElo's `eloScale` for a draw width.
pub fn elo_scale(drawelo: f64) -> f64 {
    let x = 10f64.powf(-drawelo / 400.0);
    4.0 * x / ((1.0 + x) * (1.0 + x))
}

/// The value below which (or, from the top, above which) `(1 - confidence) / 2` of a
/// distribution on a grid lies, with the trapezoid sums and linear interpolation BayesElo uses.
fn bound(dist: &[f64], values: &dyn Fn(usize) -> f64, confidence: f64, upward: bool) -> f64 {
    let threshold = (1.0 - confidence) / 2.0;
    let order: Vec<usize> = if upward {
        (0..dist.len()).collect()
    } else {
        (0..dist.len()).rev().collect()
    };
    let (mut p, mut previous) = (0.0, 0.0);
    for (k, &i) in order.iter().enumerate() {
        let next_p = p + (previous + dist[i]) / 2.0;
        if next_p >= threshold {
            let step = values(1) - values(0);
            let before = if k == 0 {
                // The grid point before the first, as BayesElo extrapolates it.
                if upward {
                    values(i) - step
                } else {
                    values(i) + step
                }
            } else {
                values(order[k - 1])
            };
            return before + (values(i) - before) * (threshold - p) / (next_p - p);
        }
        p = next_p;
        previous = dist[i];
    }
    values(*order.last().unwrap_or(&0))
}

/// `exactdist`: each player's likelihood over a grid, the others moved to keep the mean.
fn exact_intervals(t: &Table, elo: &[f64], o: &BayesEloOptions) -> Vec<(f64, f64)> {
    const SIZE: usize = 1001;
    let (min, max) = (-1500.0, 1500.0);
    let value = |i: usize| min + (i as f64 + 0.5) * (max - min) / SIZE as f64;
    let n = t.n;
    (0..n)
        .map(|p| {
            let mut ll: Vec<f64> = (0..SIZE)
                .map(|i| {
                    let v = value(i);
                    // The others move together, so that the mean stays 0.
                    let shift = if n > 1 {
                        (v - elo[p]) / (n - 1) as f64
                    } else {
                        0.0
                    };
                    player_log_likelihood(t, elo, (p, v, shift), o.advantage, o.drawelo)
                })
                .collect();
            let top = ll.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            ll.iter_mut().for_each(|x| *x = (*x - top).exp());
            let total: f64 = ll.iter().sum();
            ll.iter_mut().for_each(|x| *x /= total);
            let lower = bound(&ll, &value, o.confidence, true);
            let upper = bound(&ll, &value, o.confidence, false);
            (elo[p] - lower, upper - elo[p])
        })
        .collect()
}

/// `covariance`: the inverted Hessian of the ratings with the last one held, mapped to the
/// mean-centred ratings.
fn covariance_intervals(t: &Table, elo: &[f64], o: &BayesEloOptions) -> Vec<(f64, f64)> {
    let n = t.n;
    if n < 2 {
        return vec![(0.0, 0.0); n];
    }
    let (tw, td) = (
        10f64.powf(o.advantage / 400.0),
        10f64.powf(o.drawelo / 400.0),
    );
    let gamma: Vec<f64> = elo.iter().map(|e| 10f64.powf(e / 400.0)).collect();
    let c = (std::f64::consts::LN_10 / 400.0).powi(2);
    // The opposite of the Hessian, in Elo units, for players 0..n-1 (the last one held).
    let m = n - 1;
    let mut h = vec![vec![0.0; m]; m];
    for p in 0..m {
        for &q in &t.opponents[p] {
            let [w_ij, d_ij, l_ij] = t.cell(p, q);
            let [w_ji, d_ji, l_ji] = t.cell(q, p);
            let (gp, gq) = (gamma[p], gamma[q]);
            let sq = |x: f64| x * x;
            let k = ((w_ij + d_ij) / sq(tw * gp + td * gq)
                + (l_ij + d_ij) / sq(td * tw * gp + gq)
                + (w_ji + d_ji) / sq(tw * gq + td * gp)
                + (l_ji + d_ji) / sq(td * tw * gq + gp))
                * gp
                * gq
                * td
                * tw
                * c;
            h[p][p] += k;
            if q < m {
                h[p][q] -= k;
            }
        }
    }
    let identity: Vec<Vec<f64>> = (0..m)
        .map(|i| (0..m).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    let Some(inverse) = solve(h, identity) else {
        return vec![(f64::INFINITY, f64::INFINITY); n];
    };
    // Centred ratings r = A theta, A = I - 1/n on the held coordinates: Cov = A C A^T.
    let a = |i: usize, j: usize| if i == j { 1.0 } else { 0.0 } - 1.0 / n as f64;
    let z = statrs_z(o.confidence);
    (0..n)
        .map(|i| {
            let mut v = 0.0;
            for j in 0..m {
                for k in 0..m {
                    v += a(i, j) * inverse[j][k] * a(i, k);
                }
            }
            let half = z * v.max(0.0).sqrt();
            (half, half)
        })
        .collect()
}

fn statrs_z(confidence: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::new(0.0, 1.0)
        .expect("the standard normal")
        .inverse_cdf(0.5 + confidence / 2.0)
}

/// Ratings as BayesElo's `mm` then `exactdist` (or `covariance`) then `ratings` give them,
/// best first.
pub fn bayeselo(
    results: &Results,
    o: &BayesEloOptions,
) -> Result<Vec<BayesEloRating>, RatingError> {
    // As BayesElo would rate them, but not results it cannot rate meaningfully: players in
    // groups that never met, or (without a prior) a perfect score.
    let checks = RatingOptions {
        prior: o.prior,
        ..RatingOptions::default()
    };
    check_rateable(results, &checks)?;
    let t = Table::of(results, o.prior);
    let elo = maximize(&t, o.advantage, o.drawelo);
    let intervals = match o.intervals {
        Intervals::Exactdist => exact_intervals(&t, &elo, o),
        Intervals::Covariance => covariance_intervals(&t, &elo, o),
    };
    let scale = elo_scale(o.drawelo);
    let mut out: Vec<BayesEloRating> = elo
        .iter()
        .zip(intervals)
        .enumerate()
        .map(|(player, (e, (minus, plus)))| BayesEloRating {
            player,
            elo: e * scale,
            minus: minus * scale,
            plus: plus * scale,
        })
        .collect();
    out.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Outcome;

    #[test]
    fn the_scale_is_bayeselos() {
        assert!((elo_scale(44.0) - 0.984).abs() < 0.001);
        assert!((elo_scale(97.3) - 0.925).abs() < 0.001);
        assert!((elo_scale(200.0) - 0.730).abs() < 0.002);
    }

    #[test]
    fn equal_players_are_equal_and_a_better_one_is_above() {
        let mut r = Results::default();
        for _ in 0..10 {
            r.add("a", "b", Outcome::WhiteWins);
            r.add("b", "a", Outcome::WhiteWins);
            r.add("a", "c", Outcome::WhiteWins);
            r.add("c", "a", Outcome::BlackWins);
            r.add("b", "c", Outcome::Draw);
            r.add("c", "b", Outcome::Draw);
        }
        for intervals in [Intervals::Exactdist, Intervals::Covariance] {
            let o = BayesEloOptions {
                intervals,
                ..BayesEloOptions::default()
            };
            let out = bayeselo(&r, &o).unwrap();
            assert_eq!(out[0].player, 0, "{out:?}");
            assert!((out.iter().map(|x| x.elo).sum::<f64>()).abs() < 1e-6);
            assert!(out.iter().all(|x| x.minus > 0.0 && x.plus > 0.0), "{out:?}");
        }
    }
}
