//! What a bisect writes for people and for scripts: `report.html` (the answer, the posterior
//! drawn over the series, each version's Elo against the first with its interval, the steps) and
//! `bisect.json`.

use super::outcome::{describe, Answer, BisectOutcome, BisectSpec};
use crate::report::html_escape;
use crate::stats::{trinomial_elo, EloEstimate};
use std::path::Path;

pub const REPORT_HTML: &str = "report.html";
pub const RESULT_JSON: &str = "bisect.json";

/// The line users act on: `first worse: v5 (probability 0.97)`.
pub fn answer_line(outcome: &BisectOutcome) -> String {
    let name = |v: Option<usize>| match v {
        Some(v) => outcome.versions[v].name.clone(),
        None => "none".into(),
    };
    match outcome.answer {
        Answer::Found(l) => format!(
            "first worse: {} (probability {:.3})",
            name(l.version),
            l.probability
        ),
        Answer::NoDrop(l) => format!(
            "first worse: none, no drop (probability {:.3})",
            l.probability
        ),
        Answer::BudgetOut(l) => format!(
            "undecided after {} games: the likeliest first worse is {} (probability {:.3})",
            outcome.games,
            name(l.version),
            l.probability
        ),
        Answer::Interrupted(l) => format!(
            "interrupted after {} games: the likeliest first worse so far is {} (probability \
             {:.3})",
            outcome.games,
            name(l.version),
            l.probability
        ),
    }
}

fn status(answer: &Answer) -> &'static str {
    match answer {
        Answer::Found(_) => "found",
        Answer::NoDrop(_) => "none",
        Answer::BudgetOut(_) => "budget",
        Answer::Interrupted(_) => "interrupted",
    }
}

fn elo_json(e: EloEstimate) -> serde_json::Value {
    let finite = |x: f64| x.is_finite().then_some(x);
    match e {
        EloEstimate::Estimate { elo, lower, upper } => serde_json::json!({
            "elo": elo, "lower": finite(lower), "upper": finite(upper)
        }),
        _ => serde_json::json!({ "elo": null, "lower": null, "upper": null }),
    }
}

pub fn write(dir: &Path, spec: &BisectSpec, outcome: &BisectOutcome) -> std::io::Result<()> {
    let leader = match outcome.answer {
        Answer::Found(l) | Answer::NoDrop(l) | Answer::BudgetOut(l) | Answer::Interrupted(l) => l,
    };
    let versions: Vec<serde_json::Value> = outcome
        .versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::json!({
                "name": v.name,
                "games": v.wdl.games(),
                "wins": v.wdl.wins, "draws": v.wdl.draws, "losses": v.wdl.losses,
                "pairs": v.pairs.0,
                "elo_vs_first": elo_json(trinomial_elo(v.wdl)),
                // Its games against the version before it, where a step played them.
                "against_previous": (v.previous_wdl.games() > 0).then(|| serde_json::json!({
                    "games": v.previous_wdl.games(),
                    "wins": v.previous_wdl.wins,
                    "draws": v.previous_wdl.draws,
                    "losses": v.previous_wdl.losses,
                    "pairs": v.previous_pairs.0,
                    "elo": elo_json(trinomial_elo(v.previous_wdl)),
                })),
                // The probability that this version is the first worse (none for the first).
                "probability_first_worse": (i > 0).then(|| outcome.probabilities[i]),
            })
        })
        .collect();
    let steps: Vec<serde_json::Value> = outcome
        .steps
        .iter()
        .map(|s| {
            serde_json::json!({
                "step": s.number,
                "version": outcome.versions[s.matchup.player].name,
                "against": outcome.versions[s.matchup.opponent].name,
                "games": s.games,
                "folder": s.folder.strip_prefix(dir).unwrap_or(&s.folder),
                "leader": s.leader.map(|v| outcome.versions[v].name.clone()),
                "probability": s.probability,
            })
        })
        .collect();
    let json = serde_json::json!({
        "status": status(&outcome.answer),
        "first_worse": leader.version.map(|v| outcome.versions[v].name.clone()),
        "probability": leader.probability,
        "probability_no_drop": outcome.probabilities[0],
        "elo": spec.elo,
        "alpha": spec.alpha,
        "games": outcome.games,
        "max_games": spec.max_games,
        "versions": versions,
        "steps": steps,
    });
    let text = serde_json::to_string_pretty(&json).map_err(std::io::Error::other)? + "\n";
    replace(&dir.join(RESULT_JSON), &text)?;
    replace(&dir.join(REPORT_HTML), &html(spec, outcome))
}

/// Written beside and renamed into place: a reader never sees half a file.
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// The posterior as bars over the series, "none" first.
fn posterior_svg(outcome: &BisectOutcome) -> String {
    let n = outcome.probabilities.len();
    let (bar, gap, height) = (28.0, 6.0, 160.0);
    let width = n as f64 * (bar + gap) + 40.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" \
         role=\"img\" aria-label=\"probability of each version being the first worse\">",
        height + 60.0
    );
    for (i, p) in outcome.probabilities.iter().enumerate() {
        let x = 20.0 + i as f64 * (bar + gap);
        let h = p * height;
        let label = match i {
            0 => "none".to_string(),
            _ => outcome.versions[i].name.clone(),
        };
        svg += &format!(
            "<rect x=\"{x}\" y=\"{}\" width=\"{bar}\" height=\"{h:.1}\" fill=\"{}\"><title>{}: \
             {p:.3}</title></rect><text x=\"{}\" y=\"{}\" font-size=\"10\" \
             transform=\"rotate(45 {0} {1})\">{}</text>",
            10.0 + height - h,
            if i == 0 { "#999" } else { "#c0392b" },
            html_escape(&label),
            x + 4.0,
            height + 22.0,
            html_escape(&label),
        );
    }
    svg + "</svg>"
}

/// A row of the versions' table for each version: its games against the first and the one
/// before it, and its chance of being the first worse one.
fn version_rows(outcome: &BisectOutcome) -> String {
    let mut rows = String::new();
    for (i, v) in outcome.versions.iter().enumerate() {
        let elo = match i {
            0 => "the reference".to_string(),
            _ => trinomial_elo(v.wdl).describe(),
        };
        let p = match i {
            0 => String::new(),
            _ => format!("{:.3}", outcome.probabilities[i]),
        };
        let previous = match v.previous_wdl.games() {
            0 => String::new(),
            _ => format!(
                "{} / {} / {}: {}",
                v.previous_wdl.wins,
                v.previous_wdl.draws,
                v.previous_wdl.losses,
                trinomial_elo(v.previous_wdl).describe()
            ),
        };
        rows += &format!(
            "<tr><td>{}</td><td>{}</td><td>{} / {} / {}</td><td>{}</td><td>{}</td><td>{p}</td>\
             </tr>\n",
            html_escape(&v.name),
            v.wdl.games() + v.previous_wdl.games(),
            v.wdl.wins,
            v.wdl.draws,
            v.wdl.losses,
            html_escape(&elo),
            html_escape(&previous)
        );
    }
    rows
}

fn html(spec: &BisectSpec, outcome: &BisectOutcome) -> String {
    let rows = version_rows(outcome);
    let names: Vec<String> = outcome.versions.iter().map(|v| v.name.clone()).collect();
    let mut steps = String::new();
    for s in &outcome.steps {
        let folder = s
            .folder
            .strip_prefix(s.folder.ancestors().nth(2).unwrap_or(Path::new("")));
        let link = folder
            .map(|f| {
                f.join(crate::report::files::GAMES_PGN)
                    .display()
                    .to_string()
            })
            .unwrap_or_default();
        let leader = s
            .leader
            .map(|v| outcome.versions[v].name.clone())
            .unwrap_or_else(|| "none".into());
        steps += &format!(
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{} ({:.3})</td></tr>\n",
            html_escape(&link),
            s.number,
            html_escape(&describe(s.matchup, &names)),
            s.games,
            html_escape(&leader),
            s.probability
        );
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>arbiter bisect \
         </title><style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}\
         td,th{{padding:2px 10px;text-align:left}}</style></head><body>\n\
         <h1>{}</h1>\n<p>{} versions of {}, the first the reference; sought: the first version \
         at least {} Elo weaker, at error rate {}; {} games played (at most {}).</p>\n\
         <h2>Where the drop is</h2>\n<p>The probability of each version being the first \
         weaker one, and of no drop (grey), after every game.</p>\n{}\n\
         <h2>Versions</h2>\n<table><tr><th>version</th><th>games</th><th>W / D / L against the \
         first</th><th>Elo against the first (95%)</th><th>W / D / L and Elo against the version \
         before</th><th>first worse</th></tr>\n{rows}</table>\n\
         <h2>Steps</h2>\n<table><tr><th>step</th><th>played</th><th>games</th>\
         <th>leader after it</th></tr>\n{steps}</table>\n</body></html>\n",
        html_escape(&answer_line(outcome)),
        outcome.versions.len(),
        html_escape(&spec.games.game),
        spec.elo,
        spec.alpha,
        outcome.games,
        spec.max_games,
        posterior_svg(outcome),
    )
}
