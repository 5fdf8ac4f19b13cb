//! What a finished run prints: the result (two engines) or the joint ratings (more), the
//! terminations, the referee's latency, the SPRT's verdict; and the exit code it implies.

use arbiter::report::describe_sprt_end;
use arbiter::stats::Ratings;
use arbiter::stats::{
    fixed, los, percentiles, signed, trinomial_elo, Decision, RatingOptions, Sprt,
};
use arbiter::tournament::totals::Totals;
use arbiter::tournament::RunOutcome;

pub fn print(outcome: &RunOutcome, names: &[String], rating: &RatingOptions, sprt: Option<Sprt>) {
    if names.len() == 2 {
        head_to_head(outcome, names);
    } else {
        standings(outcome, rating);
    }
    let ends: Vec<String> = outcome
        .totals
        .terminations
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    say!("Terminations: {}", ends.join(", "));
    if let Some(repeats) = outcome.totals.repeats_said() {
        say!("Repeated games: {repeats}.");
    }
    turnaround(outcome);
    if let Some(s) = sprt {
        let last = outcome.llr.last().copied().unwrap_or(0.0);
        let (lo, hi) = s.bounds();
        say!(
            "SPRT: {} (LLR {} after {}, bounds {lo:.3}, {hi:.3})",
            describe_sprt_end(&s, &outcome.llr, outcome.decision),
            fixed(last, 3),
            arbiter::report::counted(outcome.llr.len() as u64, "pair", "pairs")
        );
    }
}

/// The referee's turnaround per move, when moves were timed.
pub fn turnaround(outcome: &RunOutcome) {
    if let Some((median, p99, max)) = percentiles(&outcome.latency_us) {
        say!(
            "Referee turnaround per move (from reading a move to asking for the reply, {} moves): \
                median {median} us, p99 {p99} us, max {max} us",
            outcome.latency_us.len()
        );
    }
}

/// 0 when an SPRT accepted H1 (or there was none), 1 for H0, 3 when it ran out undecided.
pub fn exit_code(sprt: Option<&Sprt>, decision: Option<Decision>) -> super::exit::Exit {
    use super::exit::Exit;
    // cutechess-cli and fastchess exit 0 whatever the SPRT decided: scripts around them read
    // the decision from their lines, and take any other code for a failed run.
    if arbiter::compat::tool_lines::TOOL_LINES.get().is_some() {
        return Exit::Success;
    }
    match (sprt, decision) {
        (None, _) | (_, Some(Decision::H1)) => Exit::Success,
        (_, Some(Decision::H0)) => Exit::Rejected,
        _ => Exit::Incomplete,
    }
}

fn head_to_head(outcome: &RunOutcome, names: &[String]) {
    let totals = &outcome.totals;
    let w = totals.per_engine[0];
    say!(
        "Result of {} vs {}: {} - {} - {} (W - L - D), {} games",
        names[0],
        names[1],
        w.wins,
        w.losses,
        w.draws,
        w.games()
    );
    let los_text = los(w)
        .map(|p| format!("{:.1} %", p * 100.0))
        .unwrap_or_else(|| "n/a (no decisive games)".into());
    let pairs = totals.head_to_head();
    // Games were played, but a pair counts only once both its games are in.
    let penta = if pairs.pairs() == 0 {
        "none: no game pair complete yet".to_string()
    } else {
        pairs.elo().describe()
    };
    say!(
        "Elo difference: {} (pentanomial {penta}), LOS: {los_text}, draw ratio: {:.1} %",
        trinomial_elo(w).describe(),
        w.draw_ratio().unwrap_or(0.0) * 100.0
    );
}

fn standings(outcome: &RunOutcome, rating: &RatingOptions) {
    match outcome.totals.ratings(rating) {
        Ok(r) => {
            say!(
                "Joint ratings (Elo from all games together, 95% interval; the report's pairings \
                give each pair's own):"
            );
            print_ratings(&r, &outcome.totals)
        }
        Err(e) => say!("No joint ratings: {e}"),
    }
}

/// The joint ratings, best first, with each engine's points.
pub fn print_ratings(ratings: &Ratings, totals: &Totals) {
    let mut rows: Vec<_> = ratings.ratings.iter().collect();
    rows.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    for (i, x) in rows.iter().enumerate() {
        let idx = totals.names.iter().position(|n| *n == x.name).unwrap_or(0);
        let w = totals.per_engine[idx];
        say!(
            "{:>3}. {:<20} {:>7}  ({} .. {})  {}/{} points",
            i + 1,
            x.name,
            signed(x.elo),
            signed(x.lower),
            signed(x.upper),
            w.points(),
            w.games()
        );
    }
}
