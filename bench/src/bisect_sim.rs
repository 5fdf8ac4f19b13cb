//! `arbiter bench --bisect-sim`: the posterior search's error rate and games against the hand
//! method's, over simulated series (`arbiter::bisect::simulate`).

use super::BenchError;
use arbiter::bisect::simulate::{compare, information_bound, Scenario, Setup, Tally};
use arbiter::stats::simulate::standard_error;

/// Prints one row per scenario, the scenarios simulated on threads of their own.
pub fn table(setup: &Setup, runs: u64) -> Result<(), BenchError> {
    if runs == 0 {
        return Err(BenchError("--runs must be at least 1".into()));
    }
    let sound = setup.elo > 0.0 && setup.elo.is_finite() && 0.0 < setup.alpha && setup.alpha < 0.5;
    if !sound {
        return Err(BenchError(
            "--elo must be a positive number and --alpha between 0 and 0.5".into(),
        ));
    }
    say!(
        "bisect simulation: {} versions, first version at least {} Elo worse sought at error \
         rate {}, {runs} series per row (game pairs: {}; {} pairs per step)",
        setup.versions,
        setup.elo,
        setup.alpha,
        setup.shape.name,
        setup.step_pairs
    );
    let rows: Vec<(Scenario, (Tally, Tally))> = std::thread::scope(|scope| {
        let handles: Vec<_> = Scenario::ALL
            .iter()
            .enumerate()
            .map(|(k, &scenario)| {
                scope.spawn(move || (scenario, compare(setup, scenario, runs, 1 + k as u64)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a simulation thread"))
            .collect()
    });
    say!(
        "{:<22} {:>15} {:>10} {:>15} {:>10} {:>7}",
        "series",
        "arbiter wrong",
        "games",
        "by hand wrong",
        "games",
        "ratio"
    );
    let rate = |t: &Tally| {
        let p = t.error_rate();
        format!("{p:.3} ± {:.3}", standard_error(p, t.runs))
    };
    for (scenario, (ours, hand)) in &rows {
        say!(
            "{:<22} {:>15} {:>10.0} {:>15} {:>10.0} {:>7.2}",
            scenario.describe(setup.elo),
            rate(ours),
            ours.mean_games(),
            rate(hand),
            hand.mean_games(),
            ours.mean_games() / hand.mean_games().max(1.0)
        );
        if ours.budget_out + hand.budget_out > 0 {
            say!(
                "  out of budget: arbiter {}, by hand {} of {runs}",
                ours.budget_out,
                hand.budget_out
            );
        }
    }
    let bound = information_bound(setup);
    say!(
        "fewest games for one drop, any method (Burnashev's estimate: ln {} places / {:.2e} nats \
         a pair + ln(1/alpha) / {:.2e}): {:.0}",
        setup.versions - 1,
        bound.capacity,
        bound.confirmation,
        bound.games
    );
    say!(
        "arbiter: the posterior over the first worse version, every game counted (versions \
         against the first and against the one before), stopped at 1 - alpha/2; by hand: an SPRT \
         of the last version, then one at each midpoint, alpha \
         split evenly over them. Ratio: arbiter's games over the hand method's."
    );
    Ok(())
}
