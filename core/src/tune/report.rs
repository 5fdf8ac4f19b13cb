//! What a tune leaves: the values as flags to paste (`tuned.txt`), theta after every pair
//! (`theta.csv`), and `report.html` with each parameter's trajectory.

use super::TuneSpec;
use crate::report::charts::{line_chart, Axes, Rule, Series};
use crate::report::html_escape;
use std::fmt::Write as _;
use std::path::Path;

pub const THETA_CSV: &str = "theta.csv";
pub const TUNED_FILE: &str = "tuned.txt";
pub const REPORT_FILE: &str = "report.html";

/// The values as `--engine` settings: `option.Name=value ...`.
pub fn flags(spec: &TuneSpec, theta: &[f64]) -> String {
    spec.params
        .iter()
        .zip(theta)
        .map(|(p, v)| format!("option.{}={}", p.name, p.engine_value(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn csv_number(v: f64) -> String {
    let text = format!("{v:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub fn theta_csv(spec: &TuneSpec, thetas: &[Vec<f64>]) -> std::io::Result<String> {
    let header = std::iter::once("pair".to_string())
        .chain(spec.params.iter().map(|p| p.name.clone()))
        .collect();
    let rows = thetas.iter().enumerate().map(|(j, theta)| {
        std::iter::once(j.to_string())
            .chain(theta.iter().map(|v| csv_number(*v)))
            .collect()
    });
    let bytes = crate::report::csv_bytes(std::iter::once(header).chain(rows))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// At most this many points per line: a long tune's chart stays small.
const CHART_POINTS: usize = 400;

pub fn html(spec: &TuneSpec, thetas: &[Vec<f64>], score: [u64; 3], finished: bool) -> String {
    let engine = html_escape(&spec.engine().name);
    let last = thetas.last().cloned().unwrap_or_default();
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Tune of {engine}</title><style>body{{font-family:sans-serif;max-width:60em;\
         margin:1em auto;padding:0 1em}}table{{border-collapse:collapse}}td,th{{border:1px solid \
         #ccc;padding:.2em .5em;text-align:right}}th:first-child,td:first-child{{text-align:left}}\
         code{{background:#f4f4f4;padding:.2em;word-break:break-all}}svg{{max-width:100%;height:auto}}\
         </style></head><body><h1>Tune of {engine} ({game})</h1>",
        game = html_escape(&spec.run.game)
    );
    let _ = write!(
        out,
        "<p>SPSA, {done} of {pairs} game pairs{state}; the engine at theta + c·flip against \
         theta − c·flip: plus side {w} wins, {l} losses, {d} draws. Gains: alpha {alpha}, gamma \
         {gamma}, A = {ratio} × pairs; up to {window} pairs played from one theta.</p>",
        done = thetas.len().saturating_sub(1),
        pairs = spec.pairs,
        state = if finished { "" } else { " (unfinished)" },
        w = score[0],
        l = score[1],
        d = score[2],
        alpha = spec.gains.alpha,
        gamma = spec.gains.gamma,
        ratio = spec.gains.a_ratio,
        window = spec.window,
    );
    let _ = write!(
        out,
        "<h2>Values</h2><p>To play them: <code>{}</code></p><table><tr><th>parameter</th>\
         <th>start</th><th>now</th><th>min</th><th>max</th><th>c_end</th><th>r_end</th></tr>",
        html_escape(&flags(spec, &last))
    );
    for (p, v) in spec.params.iter().zip(&last) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html_escape(&p.name),
            csv_number(p.start),
            csv_number(*v),
            csv_number(p.min),
            csv_number(p.max),
            csv_number(p.c_end),
            csv_number(p.r_end)
        );
    }
    out.push_str("</table><h2>Trajectories</h2>");
    trajectories(spec, thetas, &mut out);
    out.push_str(
        "<p>Files: theta.csv (theta after every pair), pairs.jsonl (each pair's values, games and \
         result), tuned.txt (the values as flags).</p></body></html>\n",
    );
    out
}

/// One chart per parameter: its value after each pair (at most `CHART_POINTS` of them, the last
/// always), and its start.
fn trajectories(spec: &TuneSpec, thetas: &[Vec<f64>], out: &mut String) {
    let step = thetas.len().div_ceil(CHART_POINTS).max(1);
    for (i, p) in spec.params.iter().enumerate() {
        let mut points: Vec<(f64, f64)> = thetas
            .iter()
            .enumerate()
            .step_by(step)
            .map(|(j, t)| (j as f64, t[i]))
            .collect();
        if let Some(t) = thetas.last() {
            let end = (thetas.len() - 1) as f64;
            if points.last().is_some_and(|(x, _)| *x != end) {
                points.push((end, t[i]));
            }
        }
        let label = format!("{} after each pair", p.name);
        let axes = Axes {
            label: &label,
            x_label: "game pairs",
            y_label: &p.name,
        };
        let series = [Series {
            name: p.name.clone(),
            points,
            band: Vec::new(),
        }];
        let rules = [Rule {
            y: p.start,
            label: "start".into(),
        }];
        out.push_str(&line_chart(&axes, &series, &rules));
    }
}

/// Writes the tune's files into `dir`, each whole under a temporary name and then renamed: the
/// tasks of a split tune write the same files, and a reader never sees half of one.
pub fn write(
    dir: &Path,
    spec: &TuneSpec,
    thetas: &[Vec<f64>],
    score: [u64; 3],
    finished: bool,
) -> std::io::Result<()> {
    let last = thetas.last().cloned().unwrap_or_default();
    let files = [
        (TUNED_FILE, flags(spec, &last) + "\n"),
        (THETA_CSV, theta_csv(spec, thetas)?),
        (REPORT_FILE, html(spec, thetas, score, finished)),
    ];
    for (name, text) in files {
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, dir.join(name))?;
    }
    Ok(())
}
