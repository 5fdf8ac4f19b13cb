//! `report.html`: one self-contained page (no scripts, no fonts or images from elsewhere) with
//! everything a reader looks for: what was played, by which engines with which settings, the
//! standings and how they are made, the ratings and Elo over the run as charts, likelihood of
//! superiority, the crosstable, the pairings, the SPRT, and how each engine's games ended.

use super::charts::{line_chart, ratings_chart, Axes, Rule, Series};
use super::story::Story;
use super::write::{
    describe_sprt_end, html_escape as e, ratings_note, PairingLine, RunInfo, Standing, Tables,
    MATRIX_ENGINES, PAIRING_NOTE,
};
use crate::stats::{fixed, Ratings, Sprt};
use crate::tournament::totals::Totals;
use std::fmt::Write as _;

use super::story::MAX_HISTORY as MAX_LINES;

const STYLE: &str = "#moves{columns:8rem;font-size:.9rem}#moves li.now{font-weight:bold}\
#view button{min-width:2.5rem}body{font-family:system-ui,sans-serif;max-width:62rem;margin:2rem \
auto;\
padding:0 1rem;color:#222}table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid \
#ccc;padding:.3rem .6rem;text-align:right}td:first-child,th:first-child,td.left{text-align:left}\
caption{text-align:left;font-weight:bold;padding-bottom:.3rem}p.note{color:#555;font-size:.9rem}\
nav{display:flex;flex-wrap:wrap;column-gap:1rem}code{font-size:.85rem;overflow-wrap:anywhere}#standings td:nth-child(2){text-align:left}\
table{display:block;max-width:100%;overflow-x:auto}svg{max-width:100%;height:auto;overflow:hidden}select{max-width:100%}\
@media (max-width:40rem){body{margin:1rem auto;padding:0 .5rem}td,th{padding:.2rem .3rem}}";

pub fn html(totals: &Totals, info: &RunInfo, tables: &Tables, story: &Story) -> String {
    let Tables {
        rows,
        ratings,
        note,
        pairings: pairing_lines,
    } = tables;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta \
        name=\"viewport\" content=\"width=device-width, \
        initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>",
        e(&info.event)
    );
    header(&mut h, totals, info);
    engines(&mut h, info);
    standings(&mut h, rows, ratings, note);
    elo_over_the_run(&mut h, story);
    if let Some(r) = ratings {
        los_matrix(&mut h, totals, rows, r);
    }
    crosstable(&mut h, totals);
    pairings(&mut h, pairing_lines);
    if let Some((sprt, llr)) = &info.sprt {
        sprt_section(&mut h, sprt, llr, info);
    }
    endings(&mut h, totals, story);
    super::viewer::section(&mut h, &story.showcase);
    h.push_str("</body></html>\n");
    h
}

fn header(h: &mut String, totals: &Totals, info: &RunInfo) {
    let _ = write!(
        h,
        "<h1>{}</h1><p>{}{} {}, {} games, limits {}{}</p>",
        e(&info.event),
        e(info.game),
        e(&super::write::rules_note(&info.rules)),
        e(info.format),
        totals.games,
        e(&info.time_controls),
        if info.interrupted {
            " <strong>(interrupted: continue it with --resume)</strong>"
        } else {
            ""
        }
    );
    if let Some(clock) = super::write::clock_note(totals, info) {
        let _ = write!(h, "<p><strong>{}</strong></p>", e(&clock));
    }
    if let Some(sandbox) = &info.sandbox {
        let _ = write!(h, "<p class=\"note\">{}</p>", e(sandbox));
    }
    let _ = write!(
        h,
        "<p class=\"note\">Report of {} by arbiter {}.</p>",
        crate::referee::record::today(),
        env!("CARGO_PKG_VERSION")
    );
    h.push_str("<nav>Files: ");
    for name in super::files::linked() {
        let _ = write!(h, "<a href=\"{name}\">{name}</a>");
    }
    h.push_str("</nav>");
}

fn engines(h: &mut String, info: &RunInfo) {
    if info.engines.is_empty() {
        return;
    }
    h.push_str("<table id=\"engines\"><caption>Engines</caption><tr><th>engine</th><th>command</th><th>protocol</th><th>limits</th><th>options</th></tr>");
    for cfg in info.engines {
        let mut command = cfg.cmd.clone();
        for a in &cfg.args {
            command.push(' ');
            command.push_str(a);
        }
        let options: Vec<String> = cfg
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"left\"><code>{}</code></td><td class=\"left\">{}</td><td \
                class=\"left\">{}</td><td class=\"left\">{}</td></tr>",
            e(&cfg.name),
            e(&command),
            cfg.proto.as_str(),
            e(&cfg.limits_summary()),
            e(&options.join(" "))
        );
    }
    h.push_str("</table>");
}

fn standings(h: &mut String, rows: &[Standing], ratings: &Option<Ratings>, note: &Option<String>) {
    h.push_str("<table id=\"standings\"><caption>Standings</caption><tr><th>rank</th><th>engine</th><th>Elo</th><th>lower</th><th>upper</th><th>games</th><th>points</th><th>score</th><th>draws</th></tr>");
    for (i, s) in rows.iter().enumerate() {
        let cells: String = s
            .cells()
            .iter()
            .map(|c| format!("<td>{}</td>", e(c)))
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td>{cells}</tr>",
            i + 1,
            e(&s.name)
        );
    }
    h.push_str("</table>");
    if let Some(n) = note {
        let _ = write!(h, "<p>No joint ratings: {}.</p>", e(n));
    }
    if let Some(r) = ratings {
        let _ = write!(h, "<p class=\"note\">{}</p>", e(&ratings_note(r)));
        let rated: Vec<(String, f64, f64, f64)> = rows
            .iter()
            .filter_map(|s| s.elo.map(|(a, b, c)| (s.name.clone(), a, b, c)))
            .collect();
        h.push_str("<h2>Ratings and 95% intervals</h2>");
        h.push_str(&ratings_chart(&rated));
    }
}

/// Engine `i`'s Elo after each game, with its band when it is the only line; an engine that has
/// won (or lost) every game so far has no estimate, and its one-sided 95% bound is drawn
/// instead, its legend saying so (and the second value is true).
fn elo_series(story: &Story, name: &str, i: usize, alone: bool) -> (Series, bool) {
    let mut from_bounds = false;
    let mut points = Vec::new();
    let mut band = Vec::new();
    for s in &story.history[i] {
        let g = s.games as f64;
        match (s.elo, s.bound) {
            (Some((a, b, c)), _) if a.is_finite() && b.is_finite() && c.is_finite() => {
                points.push((g, a));
                band.push((g, b, c));
            }
            (None, Some(bound)) if bound.is_finite() => {
                points.push((g, bound));
                from_bounds = true;
            }
            _ => {}
        }
    }
    let name = if from_bounds {
        format!("{name} (bound while it won or lost every game)")
    } else {
        name.to_string()
    };
    let band = if alone && !from_bounds {
        band
    } else {
        Vec::new()
    };
    (Series { name, points, band }, from_bounds)
}

fn elo_over_the_run(h: &mut String, story: &Story) {
    let names = story.names();
    if names.len() > MAX_LINES || story.history.first().is_none_or(|s| s.len() < 2) {
        return;
    }
    // Two engines: the first one's Elo against the other, with its interval. More: each
    // engine's Elo against the field it met.
    let shown = if names.len() == 2 { 1 } else { names.len() };
    let (series, bounds): (Vec<Series>, Vec<bool>) = (0..shown)
        .map(|i| elo_series(story, &names[i], i, shown == 1))
        .unzip();
    let bounded = bounds.contains(&true);
    let (title, y_label) = if shown == 1 {
        (
            format!("Elo of {} against {} over the run", names[0], names[1]),
            format!("Elo of {} (95% band)", names[0]),
        )
    } else {
        (
            "Elo against the field over the run".to_string(),
            "Elo against the field".to_string(),
        )
    };
    let chart = line_chart(
        &Axes {
            label: &title,
            x_label: "games played",
            y_label: &y_label,
        },
        &series,
        &[Rule {
            y: 0.0,
            label: "0".into(),
        }],
    );
    if !chart.is_empty() {
        let _ = write!(h, "<h2>{}</h2>{chart}", e(&title));
        if bounded {
            h.push_str(
                "<p class=\"note\">An engine that has won every game so far has no Elo \
                 estimate (it would be infinite): its line shows the one-sided 95% lower bound \
                 instead (an upper bound for one that has lost every game).</p>",
            );
        }
    }
}

fn los_matrix(h: &mut String, totals: &Totals, rows: &[Standing], r: &Ratings) {
    let order: Vec<usize> = rows
        .iter()
        .filter_map(|s| totals.names.iter().position(|n| *n == s.name))
        .collect();
    if order.len() > MATRIX_ENGINES {
        return;
    }
    h.push_str(
        "<table id=\"los\"><caption>Likelihood of superiority (row engine stronger than \
        column engine)</caption><tr><th></th>",
    );
    for &j in &order {
        let _ = write!(h, "<th>{}</th>", e(&totals.names[j]));
    }
    h.push_str("</tr>");
    for &i in &order {
        let _ = write!(h, "<tr><td>{}</td>", e(&totals.names[i]));
        for &j in &order {
            let cell = if i == j {
                String::new()
            } else {
                format!("{:.1}%", r.los[i][j] * 100.0)
            };
            let _ = write!(h, "<td>{cell}</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn crosstable(h: &mut String, totals: &Totals) {
    let n = totals.names.len();
    if n > MATRIX_ENGINES {
        h.push_str("<p>The crosstable of this many engines is in crosstable.csv.</p>");
        return;
    }
    h.push_str(
        "<table id=\"crosstable\"><caption>Crosstable (W-L-D of the row engine against the \
        column engine)</caption><tr><th></th>",
    );
    for name in &totals.names {
        let _ = write!(h, "<th>{}</th>", e(name));
    }
    h.push_str("</tr>");
    for i in 0..n {
        let _ = write!(h, "<tr><td>{}</td>", e(&totals.names[i]));
        for j in 0..n {
            let cell = (i != j)
                .then(|| totals.pairings.get(&(i.min(j), i.max(j))))
                .flatten()
                .map(|t| if i < j { t.wdl } else { t.wdl.flipped() })
                .map(|w| format!("{}-{}-{}", w.wins, w.losses, w.draws))
                .unwrap_or_default();
            let _ = write!(h, "<td>{cell}</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn pairings(h: &mut String, lines: &[PairingLine]) {
    h.push_str("<table id=\"pairings\"><caption>Pairings</caption><tr><th>pairing</th><th>W-L-D</th><th>pairing Elo, these two alone (trinomial)</th><th>pairing Elo (pentanomial); normalized Elo</th><th>LOS</th></tr>");
    for p in lines {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e(&p.pairing),
            e(&p.wdl),
            e(&p.trinomial),
            e(&p.pentanomial),
            e(&p.los)
        );
    }
    h.push_str("</table>");
    let _ = write!(h, "<p class=\"note\">{}</p>", e(PAIRING_NOTE));
}

fn sprt_section(h: &mut String, sprt: &Sprt, llr: &[f64], info: &RunInfo) {
    let last = llr.last().copied().unwrap_or(0.0);
    let (lo, hi) = sprt.bounds();
    let _ = write!(
        h,
        "<h2>SPRT</h2><p>elo0 {} elo1 {}, alpha {} beta {} ({:?} model): LLR {} \
        after {}, bounds [{lo:.3}, {hi:.3}], \
        <strong>{}</strong>.</p>",
        sprt.elo0,
        sprt.elo1,
        sprt.alpha,
        sprt.beta,
        sprt.model,
        fixed(last, 3),
        super::write::counted(llr.len() as u64, "game pair", "game pairs"),
        describe_sprt_end(sprt, llr, info.decision)
    );
    let series = Series {
        name: "LLR".into(),
        points: llr
            .iter()
            .enumerate()
            .map(|(i, v)| ((i + 1) as f64, *v))
            .collect(),
        band: Vec::new(),
    };
    let rules = [
        Rule {
            y: hi,
            label: format!("H1 {hi:.2}"),
        },
        Rule {
            y: lo,
            label: format!("H0 {lo:.2}"),
        },
    ];
    h.push_str(&line_chart(
        &Axes {
            label: "LLR over game pairs",
            x_label: "game pairs",
            y_label: "log-likelihood ratio",
        },
        &[series],
        &rules,
    ));
}

fn endings(h: &mut String, totals: &Totals, story: &Story) {
    let ends: Vec<String> = totals
        .terminations
        .iter()
        .map(|(t, n)| format!("{}: {n}", e(t)))
        .collect();
    let _ = write!(h, "<h2>Terminations</h2><p>{}</p>", ends.join(", "));
    if let Some((distinct, of)) = totals.repeats() {
        let _ = write!(h, "<p>Distinct games: {distinct} of {of}.</p>");
        if let Some(said) = totals.repeats_said() {
            let _ = write!(h, "<p><strong>Repeated games:</strong> {}.</p>", e(&said));
        }
    }
    let mut kinds: Vec<crate::game::Termination> = story
        .endings
        .iter()
        .flat_map(|m| m.keys().copied())
        .collect();
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() || story.names().len() > 200 {
        return;
    }
    h.push_str(
        "<table id=\"endings\"><caption>How each engine's games ended (games, of which \
        lost)</caption><tr><th>engine</th>",
    );
    for k in &kinds {
        let _ = write!(h, "<th>{}</th>", e(k.as_str()));
    }
    h.push_str("</tr>");
    for (name, ended) in story.names().iter().zip(&story.endings) {
        let _ = write!(h, "<tr><td>{}</td>", e(name));
        for k in &kinds {
            let cell = ended
                .get(k)
                .map(|x| {
                    if x.lost > 0 {
                        format!("{} ({} lost)", x.games, x.lost)
                    } else {
                        x.games.to_string()
                    }
                })
                .unwrap_or_default();
            let _ = write!(h, "<td>{cell}</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::super::story::Snapshot;
    use super::*;

    fn story(names: &[&str], first: Snapshot) -> Story {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut story = Story::new(&names, 10);
        let later = Snapshot {
            games: 4,
            elo: Some((50.0, 10.0, 90.0)),
            bound: None,
        };
        story.history = vec![vec![first, later]; names.len()];
        story
    }

    /// The note under the chart is said when a line was drawn from a bound, and only then,
    /// whatever the engines are called.
    #[test]
    fn a_line_drawn_from_its_bound_is_said_to_be_one() {
        let bounded = Snapshot {
            games: 2,
            elo: None,
            bound: Some(120.0),
        };
        let mut h = String::new();
        elo_over_the_run(&mut h, &story(&["a", "b"], bounded));
        assert!(
            h.contains("a (bound while it won or lost every game)"),
            "{h}"
        );
        assert!(h.contains("one-sided 95% lower bound"), "{h}");
        let estimated = Snapshot {
            games: 2,
            elo: Some((30.0, -10.0, 70.0)),
            bound: None,
        };
        let mut h = String::new();
        let odd = "x (bound while it won or lost every game)";
        elo_over_the_run(&mut h, &story(&[odd, "b"], estimated));
        assert!(!h.is_empty());
        assert!(!h.contains("one-sided 95% lower bound"), "{h}");
    }
}
