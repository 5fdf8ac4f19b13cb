//! `arbiter rate` prints what BayesElo prints for the same PGN. The expected tables below are
//! BayesElo's own output (a build of Rémi Coulom's program, run by hand, `offset 0`), for a
//! round robin of five bundled engines of different strengths (120 chess games, many draws):
//!
//! ```text
//! readpgn five_players.pgn / elo / offset 0 / [prior 1 / drawelo 10 / advantage 0] / mm /
//! exactdist / ratings / covariance / ratings
//! ```
//!
//! Ratings must agree within 1 Elo and interval ends within 2, as the BayesElo user reads them.

use crate::common;

use common::{arbiter_in, scratch, stderr, stdout};

/// (name, Elo, +, -) as BayesElo printed them.
type Row = (&'static str, f64, f64, f64);

const DEFAULTS_EXACTDIST: [Row; 5] = [
    ("deep", 164.0, 73.0, 66.0),
    ("shallow", 25.0, 60.0, 59.0),
    ("greedy", -4.0, 58.0, 58.0),
    ("random2", -89.0, 60.0, 62.0),
    ("random", -96.0, 59.0, 61.0),
];
const DEFAULTS_COVARIANCE: [Row; 5] = [
    ("deep", 164.0, 69.0, 69.0),
    ("shallow", 25.0, 59.0, 59.0),
    ("greedy", -4.0, 57.0, 57.0),
    ("random2", -89.0, 61.0, 61.0),
    ("random", -96.0, 60.0, 60.0),
];
/// `prior 1`, `drawelo 10`, `advantage 0`.
const CHANGED_EXACTDIST: [Row; 5] = [
    ("deep", 140.0, 79.0, 71.0),
    ("shallow", 22.0, 64.0, 63.0),
    ("greedy", -4.0, 61.0, 61.0),
    ("random2", -75.0, 63.0, 66.0),
    ("random", -82.0, 63.0, 66.0),
];
const CHANGED_COVARIANCE: [Row; 5] = [
    ("deep", 140.0, 74.0, 74.0),
    ("shallow", 22.0, 63.0, 63.0),
    ("greedy", -4.0, 61.0, 61.0),
    ("random2", -75.0, 64.0, 64.0),
    ("random", -82.0, 64.0, 64.0),
];

fn rate(extra: &[&str]) -> Vec<(String, f64, f64, f64)> {
    let dir = scratch("bayeselo", &extra.join("_").replace('-', ""));
    let pgn = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/five_players.pgn"
    );
    let args = [&["rate", pgn, "--out", "r"][..], extra].concat();
    let out = arbiter_in(&dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    text.lines()
        .skip_while(|l| !l.starts_with("Rank "))
        .skip(1)
        .take_while(|l| !l.starts_with("Report"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| w[i].parse::<f64>().unwrap_or_else(|_| panic!("{l}"));
            (w[1].to_string(), n(2), n(3), n(4))
        })
        .collect()
}

fn agree(ours: &[(String, f64, f64, f64)], theirs: &[Row]) {
    assert_eq!(ours.len(), theirs.len(), "{ours:?}");
    for (name, elo, plus, minus) in theirs {
        let mine = ours
            .iter()
            .find(|o| o.0 == *name)
            .unwrap_or_else(|| panic!("{name} missing: {ours:?}"));
        assert!((mine.1 - elo).abs() <= 1.0, "{name} Elo: {mine:?} vs {elo}");
        assert!((mine.2 - plus).abs() <= 2.0, "{name} +: {mine:?} vs {plus}");
        assert!(
            (mine.3 - minus).abs() <= 2.0,
            "{name} -: {mine:?} vs {minus}"
        );
    }
}

#[test]
fn rate_prints_what_bayeselo_prints() {
    agree(&rate(&[]), &DEFAULTS_EXACTDIST);
    agree(&rate(&["--intervals", "covariance"]), &DEFAULTS_COVARIANCE);
    let changed = ["--prior", "1", "--drawelo", "10", "--advantage", "0"];
    agree(&rate(&changed), &CHANGED_EXACTDIST);
    agree(
        &rate(&[&changed[..], &["--intervals", "covariance"]].concat()),
        &CHANGED_COVARIANCE,
    );
}

/// arbiter's own model stays one flag away, and is not BayesElo's: no scale, per-pairing prior.
#[test]
fn the_arbiter_model_is_a_flag_away() {
    let dir = scratch("bayeselo", "model");
    let pgn = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/five_players.pgn"
    );
    let out = arbiter_in(&dir, &["rate", pgn, "--model", "arbiter", "--out", "r"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("first-move advantage"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("as BayesElo rates them"));
}
