//! Joint ratings of many players by maximum likelihood, with BayesElo's model: Bradley–Terry on
//! Elo, a draw width (`drawelo`) and a first-move advantage. With rating difference `x` (white
//! minus black, plus the advantage) and `f(z) = 1 / (1 + 10^(-z/400))`:
//! P(white wins) = f(x - drawelo), P(black wins) = f(-x - drawelo), P(draw) = the rest.
//!
//! Like BayesElo, a prior of virtual draws between every two players who met keeps perfect
//! scores finite. Intervals come from the inverse of the log-likelihood's Hessian.

// Matrix arithmetic reads best with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::game::Outcome;
use statrs::distribution::{ContinuousCDF, Normal};
use std::collections::BTreeMap;
use thiserror::Error;

const C: f64 = std::f64::consts::LN_10 / 400.0;

/// Results grouped by (white, black): [white wins, draws, black wins].
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub players: Vec<String>,
    counts: BTreeMap<(usize, usize), [f64; 3]>,
}

impl Results {
    fn index(&mut self, name: &str) -> usize {
        match self.players.iter().position(|p| p == name) {
            Some(i) => i,
            None => {
                self.players.push(name.to_string());
                self.players.len() - 1
            }
        }
    }

    pub fn add(&mut self, white: &str, black: &str, outcome: Outcome) {
        let (w, b) = (self.index(white), self.index(black));
        self.add_indexed(w, b, outcome);
    }

    /// Adds a game between players given by their index in `players`.
    pub fn add_indexed(&mut self, w: usize, b: usize, outcome: Outcome) {
        let cell = self.counts.entry((w, b)).or_insert([0.0; 3]);
        match outcome {
            Outcome::WhiteWins => cell[0] += 1.0,
            Outcome::Draw => cell[1] += 1.0,
            Outcome::BlackWins => cell[2] += 1.0,
        }
    }

    /// Every (white, black) pair that played, with [white wins, draws, black wins].
    pub fn cells(&self) -> impl Iterator<Item = ((usize, usize), [f64; 3])> + '_ {
        self.counts.iter().map(|(&k, &c)| (k, c))
    }

    pub fn games(&self) -> f64 {
        self.counts.values().flatten().sum()
    }

    /// Games won by either side.
    pub fn decisive(&self) -> f64 {
        self.counts.values().map(|c| c[0] + c[2]).sum()
    }
}

/// A model parameter: estimated from the data, or fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param {
    Estimate,
    Fixed(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RatingOptions {
    pub advantage: Param,
    pub drawelo: Param,
    /// Virtual draws added between every two players who met (BayesElo's `prior`, default 2).
    pub prior: f64,
    /// Fix this player's rating; otherwise the ratings average 0.
    pub anchor: Option<(String, f64)>,
}

/// BayesElo's default first-move advantage and draw width, used when they are not estimated.
pub const DEFAULT_ADVANTAGE: f64 = 32.8;
pub const DEFAULT_DRAWELO: f64 = 97.3;
/// Fewer real games than this leave the likelihood too flat to estimate the advantage and the
/// draw width (it drifts along a ridge of ever larger values): the defaults are used instead.
pub const MIN_GAMES_TO_ESTIMATE: f64 = 100.0;

impl Default for RatingOptions {
    fn default() -> Self {
        RatingOptions {
            advantage: Param::Estimate,
            drawelo: Param::Estimate,
            prior: 2.0,
            anchor: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    pub name: String,
    pub elo: f64,
    pub lower: f64,
    pub upper: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    /// In the order players first appeared.
    pub ratings: Vec<Rating>,
    pub advantage: f64,
    pub drawelo: f64,
    /// `los[i][j]`: probability that player i is stronger than player j.
    pub los: Vec<Vec<f64>>,
}

#[derive(Clone, Debug, Error, PartialEq)]
pub enum RatingError {
    #[error("no games to rate")]
    NoGames,
    #[error("the anchor '{0}' played no game")]
    UnknownAnchor(String),
    #[error("players fall into groups that never met ({0}); ratings across groups mean nothing")]
    Disconnected(String),
    #[error("{0} has no finite rating (it won or lost every game); use a prior of virtual draws")]
    Unbounded(String),
    #[error(
        "{0} players are more than joint ratings are computed for (at most {MAX_PLAYERS}: the \
        fit's memory and time grow with the square and cube of the players); the standings rank by \
        points"
    )]
    TooManyPlayers(usize),
}

/// The most players rated jointly: the Hessian is n x n and is inverted.
pub const MAX_PLAYERS: usize = 500;

struct Model<'a> {
    results: &'a Results,
    opts: &'a RatingOptions,
    n: usize,
    /// Virtual draws per (white, black) pair.
    prior_pairs: Vec<(usize, usize)>,
}

impl Model<'_> {
    /// (ratings with player 0 at 0, advantage, drawelo) from the free parameters.
    fn unpack(&self, theta: &[f64]) -> (Vec<f64>, f64, f64) {
        let mut r = vec![0.0; self.n];
        r[1..].copy_from_slice(&theta[..self.n - 1]);
        let mut k = self.n - 1;
        let adv = match self.opts.advantage {
            Param::Fixed(v) => v,
            Param::Estimate => {
                k += 1;
                theta[k - 1]
            }
        };
        let d = match self.opts.drawelo {
            Param::Fixed(v) => v,
            Param::Estimate => theta[k],
        };
        (r, adv, d)
    }

    fn cells(&self) -> impl Iterator<Item = (usize, usize, [f64; 3])> + '_ {
        let prior = self.opts.prior / 2.0;
        self.results
            .counts
            .iter()
            .map(|(&(w, b), &c)| (w, b, c))
            .chain(
                self.prior_pairs
                    .iter()
                    .map(move |&(w, b)| (w, b, [0.0, prior, 0.0])),
            )
    }

    /// Log-likelihood and its gradient in the free parameters.
    fn evaluate(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        let (r, adv, d) = self.unpack(theta);
        let mut ll = 0.0;
        let mut g_r = vec![0.0; self.n];
        let (mut g_adv, mut g_d) = (0.0, 0.0);
        let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
        for (w, b, [wins, draws, losses]) in self.cells() {
            let x = r[w] - r[b] + adv;
            let pw = sig(C * (x - d));
            let pb = sig(C * (-x - d));
            let pd = (1.0 - pw - pb).max(1e-300);
            ll += wins * pw.max(1e-300).ln() + losses * pb.max(1e-300).ln();
            if draws > 0.0 {
                ll += draws * pd.ln();
            }
            let (dw, db) = (pw * (1.0 - pw), pb * (1.0 - pb));
            let dx = wins * C * (1.0 - pw) - losses * C * (1.0 - pb)
                + if draws > 0.0 {
                    draws * C * (db - dw) / pd
                } else {
                    0.0
                };
            let dd = -wins * C * (1.0 - pw) - losses * C * (1.0 - pb)
                + if draws > 0.0 {
                    draws * C * (dw + db) / pd
                } else {
                    0.0
                };
            g_r[w] += dx;
            g_r[b] -= dx;
            g_adv += dx;
            g_d += dd;
        }
        let mut grad: Vec<f64> = g_r[1..].to_vec();
        if self.opts.advantage == Param::Estimate {
            grad.push(g_adv);
        }
        if self.opts.drawelo == Param::Estimate {
            grad.push(g_d);
        }
        (ll, grad)
    }

    /// The Hessian by central differences of the analytic gradient.
    fn hessian(&self, theta: &[f64]) -> Vec<Vec<f64>> {
        let k = theta.len();
        let h = 1e-3;
        let mut hess = vec![vec![0.0; k]; k];
        for j in 0..k {
            let mut plus = theta.to_vec();
            let mut minus = theta.to_vec();
            plus[j] += h;
            minus[j] -= h;
            let (_, gp) = self.evaluate(&plus);
            let (_, gm) = self.evaluate(&minus);
            for i in 0..k {
                hess[i][j] = (gp[i] - gm[i]) / (2.0 * h);
            }
        }
        // Symmetrize away the differencing noise.
        for i in 0..k {
            for j in 0..i {
                let m = (hess[i][j] + hess[j][i]) / 2.0;
                hess[i][j] = m;
                hess[j][i] = m;
            }
        }
        hess
    }
}

/// Solves `a x = b` by Gauss-Jordan elimination with partial pivoting; `None` if singular.
pub(crate) fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let p = a[col][col];
        for v in a[col].iter_mut() {
            *v /= p;
        }
        for v in b[col].iter_mut() {
            *v /= p;
        }
        for row in 0..n {
            if row != col {
                let f = a[row][col];
                if f != 0.0 {
                    for k in 0..n {
                        a[row][k] -= f * a[col][k];
                    }
                    for k in 0..b[row].len() {
                        b[row][k] -= f * b[col][k];
                    }
                }
            }
        }
    }
    Some(b)
}

fn components(n: usize, edges: impl Iterator<Item = (usize, usize)>) -> Vec<usize> {
    let mut label: Vec<usize> = (0..n).collect();
    fn root(label: &mut [usize], mut i: usize) -> usize {
        while label[i] != i {
            label[i] = label[label[i]];
            i = label[i];
        }
        i
    }
    for (a, b) in edges {
        let (ra, rb) = (root(&mut label, a), root(&mut label, b));
        label[ra] = rb;
    }
    (0..n).map(|i| root(&mut label, i)).collect()
}

/// Rates every player of `results` jointly.
pub fn rate(results: &Results, opts: &RatingOptions) -> Result<Ratings, RatingError> {
    let opts = &effective_options(results, opts);
    let n = results.players.len();
    let anchor = check_rateable(results, opts)?;
    let model = Model {
        results,
        opts,
        n,
        prior_pairs: prior_pairs(results, opts),
    };
    let theta = model.maximize();
    let (mut r, advantage, drawelo) = model.unpack(&theta);
    if let Some(i) = r.iter().position(|v| v.abs() > 5000.0) {
        return Err(RatingError::Unbounded(results.players[i].clone()));
    }
    let cov = model.covariance(&theta);
    let variance_of = |a: &[f64]| -> f64 {
        let mut v = 0.0;
        for i in 0..n {
            for j in 0..n {
                v += a[i] * cov[i][j] * a[j];
            }
        }
        v.max(0.0)
    };
    let shift = match anchor {
        Some((i, elo)) => elo - r[i],
        None => -r.iter().sum::<f64>() / n as f64,
    };
    for v in r.iter_mut() {
        *v += shift;
    }
    let z = super::Z95;
    let ratings = (0..n)
        .map(|i| {
            let sd = variance_of(&rating_contrast(n, i, anchor.map(|a| a.0))).sqrt();
            Rating {
                name: results.players[i].clone(),
                elo: r[i],
                lower: r[i] - z * sd,
                upper: r[i] + z * sd,
            }
        })
        .collect();
    let normal = Normal::new(0.0, 1.0).expect("the standard normal exists");
    let los = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let mut a = vec![0.0; n];
                    a[i] += 1.0;
                    a[j] -= 1.0;
                    let sd = variance_of(&a).sqrt();
                    if i == j || sd <= 0.0 {
                        0.5
                    } else {
                        normal.cdf((r[i] - r[j]) / sd)
                    }
                })
                .collect()
        })
        .collect();
    Ok(Ratings {
        ratings,
        advantage,
        drawelo,
        los,
    })
}

/// Too few games to estimate the white advantage or the draw rate, or not one of them won:
/// they are fixed instead. (Every game drawn sends the draw width to infinity, where every
/// rating difference explains the games equally and the intervals collapse to nothing.)
fn effective_options(results: &Results, opts: &RatingOptions) -> RatingOptions {
    let mut opts = opts.clone();
    if results.games() < MIN_GAMES_TO_ESTIMATE || results.decisive() == 0.0 {
        if opts.advantage == Param::Estimate {
            opts.advantage = Param::Fixed(DEFAULT_ADVANTAGE);
        }
        if opts.drawelo == Param::Estimate {
            opts.drawelo = Param::Fixed(DEFAULT_DRAWELO);
        }
    }
    opts
}

/// The weights that give player `i`'s rating from the raw ones: relative to the anchor, or to
/// the average of all.
fn rating_contrast(n: usize, i: usize, anchor: Option<usize>) -> Vec<f64> {
    let mut a = vec![0.0; n];
    match anchor {
        Some(anchor) => a[anchor] -= 1.0,
        None => a.iter_mut().for_each(|v| *v = -1.0 / n as f64),
    }
    a[i] += 1.0;
    a
}

/// Refuses results that have no finite joint rating; returns the anchor's index and rating.
pub(crate) fn check_rateable(
    results: &Results,
    opts: &RatingOptions,
) -> Result<Option<(usize, f64)>, RatingError> {
    let n = results.players.len();
    if results.games() == 0.0 || n < 2 {
        return Err(RatingError::NoGames);
    }
    if n > MAX_PLAYERS {
        return Err(RatingError::TooManyPlayers(n));
    }
    let comp = components(n, results.counts.keys().copied());
    if comp.iter().any(|&c| c != comp[0]) {
        let mut groups: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        for (i, &c) in comp.iter().enumerate() {
            groups.entry(c).or_default().push(&results.players[i]);
        }
        let text: Vec<String> = groups.values().map(|g| g.join(", ")).collect();
        return Err(RatingError::Disconnected(text.join(" | ")));
    }
    if opts.prior <= 0.0 {
        // Without virtual draws, a player who only won (or only lost) has no finite rating.
        for (i, name) in results.players.iter().enumerate() {
            let (mut scored, mut conceded) = (0.0, 0.0);
            for (&(w, b), c) in &results.counts {
                if w == i {
                    scored += c[0] + c[1];
                    conceded += c[1] + c[2];
                } else if b == i {
                    scored += c[2] + c[1];
                    conceded += c[1] + c[0];
                }
            }
            if scored == 0.0 || conceded == 0.0 {
                return Err(RatingError::Unbounded(name.clone()));
            }
        }
    }
    opts.anchor
        .as_ref()
        .map(|(name, elo)| {
            results
                .players
                .iter()
                .position(|p| p == name)
                .map(|i| (i, *elo))
                .ok_or_else(|| RatingError::UnknownAnchor(name.clone()))
        })
        .transpose()
}

/// The pairs that get virtual draws, both colours of every pairing that met.
fn prior_pairs(results: &Results, opts: &RatingOptions) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    if opts.prior > 0.0 {
        for &(w, b) in results.counts.keys() {
            for pair in [(w, b), (b, w)] {
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
    }
    pairs
}

fn negated(m: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    m.into_iter()
        .map(|row| row.into_iter().map(|v| -v).collect())
        .collect()
}

impl Model<'_> {
    /// The most likely free parameters: Newton's method with a backtracking line search on the
    /// log-likelihood.
    fn maximize(&self) -> Vec<f64> {
        let mut theta = vec![0.0; self.n - 1];
        if self.opts.advantage == Param::Estimate {
            theta.push(DEFAULT_ADVANTAGE);
        }
        if self.opts.drawelo == Param::Estimate {
            theta.push(DEFAULT_DRAWELO);
        }
        let (mut ll, mut grad) = self.evaluate(&theta);
        for _ in 0..200 {
            let step = solve(
                negated(self.hessian(&theta)),
                grad.iter().map(|g| vec![*g]).collect(),
            )
            .map(|s| s.into_iter().map(|v| v[0]).collect::<Vec<f64>>())
            .unwrap_or_else(|| grad.iter().map(|g| g * 10.0).collect());
            let mut t = 1.0;
            let mut improved = false;
            for _ in 0..40 {
                let candidate: Vec<f64> = theta.iter().zip(&step).map(|(x, s)| x + t * s).collect();
                let (cll, cgrad) = self.evaluate(&candidate);
                if cll.is_finite() && cll >= ll - 1e-12 {
                    let moved = step.iter().map(|s| (t * s).abs()).fold(0.0, f64::max);
                    theta = candidate;
                    ll = cll;
                    grad = cgrad;
                    improved = moved > 1e-7;
                    break;
                }
                t /= 2.0;
            }
            if !improved {
                break;
            }
        }
        theta
    }

    /// Covariance of all raw ratings (player 0 fixed at 0): the inverse of minus the Hessian
    /// of the free parameters.
    fn covariance(&self, theta: &[f64]) -> Vec<Vec<f64>> {
        let k = theta.len();
        let identity: Vec<Vec<f64>> = (0..k)
            .map(|i| (0..k).map(|j| f64::from(i == j)).collect())
            .collect();
        let cov_free =
            solve(negated(self.hessian(theta)), identity).unwrap_or_else(|| vec![vec![0.0; k]; k]);
        let n = self.n;
        let mut cov = vec![vec![0.0; n]; n];
        for i in 1..n {
            for j in 1..n {
                cov[i][j] = cov_free[i - 1][j - 1];
            }
        }
        cov
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(results: &mut Results, white: &str, black: &str, w: u32, d: u32, l: u32) {
        for _ in 0..w {
            results.add(white, black, Outcome::WhiteWins);
        }
        for _ in 0..d {
            results.add(white, black, Outcome::Draw);
        }
        for _ in 0..l {
            results.add(white, black, Outcome::BlackWins);
        }
    }

    fn plain_bradley_terry() -> RatingOptions {
        RatingOptions {
            advantage: Param::Fixed(0.0),
            drawelo: Param::Fixed(0.0),
            prior: 0.0,
            anchor: None,
        }
    }

    #[test]
    fn a_consistent_triangle_gives_its_exact_differences() {
        // A beats B 3:1, B beats C 3:1, A beats C 9:1, half of each with either colour:
        // the maximum-likelihood gaps are 400 log10(3) = 190.85 and 400 log10(9) = 381.70.
        let mut r = Results::default();
        for (x, y, w, l) in [("A", "B", 30, 10), ("B", "C", 30, 10), ("A", "C", 90, 10)] {
            add(&mut r, x, y, w / 2, 0, l / 2);
            add(&mut r, y, x, l / 2, 0, w / 2);
        }
        let out = rate(&r, &plain_bradley_terry()).unwrap();
        let elo = |n: &str| out.ratings.iter().find(|x| x.name == n).unwrap().elo;
        assert!((elo("A") - elo("B") - 190.849).abs() < 0.01, "{out:?}");
        assert!((elo("B") - elo("C") - 190.849).abs() < 0.01);
        assert!(
            (elo("A") + elo("B") + elo("C")).abs() < 1e-6,
            "centred on 0"
        );
        assert!(out.los[0][2] > 0.99 && out.los[2][0] < 0.01);
    }

    #[test]
    fn draw_width_and_first_move_advantage_are_estimated() {
        // Equal players, 40% draws, colours balanced: drawelo = 400 log10(7/3) = 147.19.
        let mut r = Results::default();
        add(&mut r, "A", "B", 30, 40, 30);
        add(&mut r, "B", "A", 30, 40, 30);
        let opts = RatingOptions {
            prior: 0.0,
            ..Default::default()
        };
        let out = rate(&r, &opts).unwrap();
        assert!((out.drawelo - 147.19).abs() < 0.05, "{out:?}");
        assert!(out.advantage.abs() < 1e-3 && out.ratings[0].elo.abs() < 1e-3);
        // White scores 60% in every game, no draws: advantage = 400 log10(1.5) = 70.44.
        let mut r = Results::default();
        add(&mut r, "A", "B", 60, 0, 40);
        add(&mut r, "B", "A", 60, 0, 40);
        let opts = RatingOptions {
            drawelo: Param::Fixed(0.0),
            prior: 0.0,
            ..Default::default()
        };
        let out = rate(&r, &opts).unwrap();
        assert!((out.advantage - 70.437).abs() < 0.01, "{out:?}");
    }

    #[test]
    fn an_anchor_fixes_one_rating_and_intervals_widen_with_fewer_games() {
        let mut r = Results::default();
        add(&mut r, "A", "B", 6, 2, 2);
        add(&mut r, "B", "A", 2, 2, 6);
        let opts = RatingOptions {
            anchor: Some(("B".into(), 1500.0)),
            ..Default::default()
        };
        let out = rate(&r, &opts).unwrap();
        assert_eq!(out.ratings[1].elo, 1500.0);
        assert!(out.ratings[0].elo > 1500.0);
        assert_eq!(
            (out.ratings[1].lower, out.ratings[1].upper),
            (1500.0, 1500.0)
        );
        let wide = out.ratings[0].upper - out.ratings[0].lower;
        let mut more = Results::default();
        add(&mut more, "A", "B", 60, 20, 20);
        add(&mut more, "B", "A", 20, 20, 60);
        let out2 = rate(&more, &opts).unwrap();
        assert!(out2.ratings[0].upper - out2.ratings[0].lower < wide / 2.0);
    }

    #[test]
    fn every_game_drawn_gives_an_interval_of_some_width() {
        // 100,000 draws: the draw width cannot be estimated (it would run to infinity and the
        // intervals to nothing), so it is BayesElo's; the interval narrows with games but is
        // never zero.
        for games in [1000, 100_000] {
            let mut r = Results::default();
            add(&mut r, "A", "B", 0, games / 2, 0);
            add(&mut r, "B", "A", 0, games / 2, 0);
            let out = rate(&r, &RatingOptions::default()).unwrap();
            assert_eq!(out.drawelo, DEFAULT_DRAWELO, "{out:?}");
            let width = out.ratings[0].upper - out.ratings[0].lower;
            let expected = if games == 1000 { 2.0..20.0 } else { 0.2..2.0 };
            assert!(expected.contains(&width), "{games}: {width} {out:?}");
            assert!(out.ratings[0].elo.abs() < 1e-6);
        }
    }

    #[test]
    fn degenerate_data_is_explained() {
        assert_eq!(
            rate(&Results::default(), &RatingOptions::default()),
            Err(RatingError::NoGames)
        );
        let mut r = Results::default();
        add(&mut r, "A", "B", 5, 0, 0);
        add(&mut r, "C", "D", 1, 1, 1);
        assert!(matches!(
            rate(&r, &RatingOptions::default()),
            Err(RatingError::Disconnected(_))
        ));
        // A perfect score stays finite thanks to the prior...
        let mut p = Results::default();
        add(&mut p, "A", "B", 10, 0, 0);
        add(&mut p, "B", "A", 0, 0, 10);
        let out = rate(&p, &RatingOptions::default()).unwrap();
        assert!(out.ratings[0].elo.is_finite() && out.ratings[0].elo > 100.0);
        // ...and without one it is named, not NaN.
        assert!(matches!(
            rate(&p, &plain_bradley_terry()),
            Err(RatingError::Unbounded(_))
        ));
        let opts = RatingOptions {
            anchor: Some(("Z".into(), 0.0)),
            ..Default::default()
        };
        assert_eq!(rate(&p, &opts), Err(RatingError::UnknownAnchor("Z".into())));
    }
}
