//! The SPRT keeps its promise: simulated tests at Elo = elo0 accept H1 at most about alpha of the
//! time, and at Elo = elo1 accept H0 at most about beta of the time, for both Elo models, with and
//! without draws and opening bias. Seeded, so a failure reproduces.

use arbiter::stats::simulate::{at_elo, simulate, standard_error, Outcomes, SHAPES};
use arbiter::stats::{Sprt, SprtModel};

const RUNS: u64 = 600;
const MAX_PAIRS: u64 = 50_000;

fn check(model: &str, bounds: &str) {
    let sprt = Sprt::parse(&format!("{bounds} model={model}")).unwrap();
    let model = sprt.model;
    for (k, shape) in SHAPES.iter().enumerate() {
        let null = simulate(
            &sprt,
            &at_elo(shape, model, sprt.elo0),
            RUNS,
            MAX_PAIRS,
            11 + k as u64,
        );
        let alt = simulate(
            &sprt,
            &at_elo(shape, model, sprt.elo1),
            RUNS,
            MAX_PAIRS,
            101 + k as u64,
        );
        let report = |o: &Outcomes| {
            format!(
                "H1 {:.3} H0 {:.3} undecided {} mean pairs {:.0}",
                o.rate_h1(),
                o.rate_h0(),
                o.undecided,
                o.mean_pairs
            )
        };
        println!("{model:?} {:<26} at elo0: {}", shape.name, report(&null));
        println!("{model:?} {:<26} at elo1: {}", shape.name, report(&alt));
        // Three standard errors of the promised rate: a correct test fails this about once in
        // seven hundred batches; the old normal approximation failed it by a wide margin.
        let slack = |p: f64| p + 3.0 * standard_error(p, RUNS);
        assert!(
            null.rate_h1() <= slack(sprt.alpha),
            "{model:?} {}: false positives {:.3} > alpha {}",
            shape.name,
            null.rate_h1(),
            sprt.alpha
        );
        assert!(
            alt.rate_h0() <= slack(sprt.beta),
            "{model:?} {}: false negatives {:.3} > beta {}",
            shape.name,
            alt.rate_h0(),
            sprt.beta
        );
        assert_eq!(null.undecided + alt.undecided, 0, "a test ran out of pairs");
    }
}

#[test]
fn logistic_sprt_keeps_alpha_and_beta() {
    check("logistic", "elo0=0 elo1=15 alpha=0.05 beta=0.05");
}

#[test]
fn normalized_sprt_keeps_alpha_and_beta() {
    check("normalized", "elo0=0 elo1=20 alpha=0.05 beta=0.05");
}

#[test]
fn wide_bounds_on_tiny_samples_keep_alpha_and_beta() {
    // elo1 = 100 decides within a few pairs: exactly where the normal approximation broke.
    check("logistic", "elo0=0 elo1=100 alpha=0.05 beta=0.05");
    check("normalized", "elo0=0 elo1=100 alpha=0.05 beta=0.05");
}

#[test]
fn the_model_name_is_parsed() {
    assert_eq!(
        Sprt::parse("elo0=0 elo1=5").unwrap().model,
        SprtModel::Normalized
    );
}
