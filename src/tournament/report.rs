//! A run's output files, all rebuilt from the journal and the totals: `games.csv`, `games.pgn`,
//! `standings.csv`, `crosstable.csv`, `report.md`, `report.html`. Each is written to a
//! temporary file and renamed, so a reader never sees half a file.

use super::journal;
use super::results::Totals;
use crate::pgn::write_game;
use crate::stats::{fixed, los, trinomial_elo, RatingOptions, Ratings, Sprt};
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// What the report says about the run besides its results.
pub struct RunInfo<'a> {
    pub event: &'a str,
    pub game: &'a str,
    pub format: &'a str,
    pub time_controls: String,
    pub sprt: Option<(Sprt, &'a [f64])>,
    /// The SPRT's decision when a bound was crossed (games still in progress then are counted
    /// afterwards and may move the final LLR back inside the bounds; the decision stands).
    pub decision: Option<crate::stats::Decision>,
    pub rating: &'a RatingOptions,
    pub interrupted: bool,
}

/// `games.csv` -> `games.csv.tmp`: a temporary name of its own for every output file.
fn temporary(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temporary(path);
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
    }
    std::fs::rename(tmp, path)
}

pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A standings row: rank order follows the joint rating, then points.
pub struct Standing {
    pub name: String,
    pub elo: Option<(f64, f64, f64)>,
    pub games: u64,
    pub points: f64,
    pub score: f64,
    pub draws: u64,
}

pub fn standings(totals: &Totals, ratings: &Option<Ratings>) -> Vec<Standing> {
    let mut rows: Vec<Standing> = totals
        .names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let wdl = totals.per_engine[i];
            let elo = ratings.as_ref().and_then(|r| {
                r.ratings
                    .iter()
                    .find(|x| &x.name == name)
                    .map(|x| (x.elo, x.lower, x.upper))
            });
            Standing {
                name: name.clone(),
                elo,
                games: wdl.games(),
                points: wdl.points(),
                score: wdl.score().unwrap_or(0.0),
                draws: wdl.draws,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        let ka = a.elo.map(|e| e.0).unwrap_or(f64::NEG_INFINITY);
        let kb = b.elo.map(|e| e.0).unwrap_or(f64::NEG_INFINITY);
        kb.total_cmp(&ka).then(b.points.total_cmp(&a.points))
    });
    rows
}

fn csv_bytes(rows: impl IntoIterator<Item = Vec<String>>) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(&row).map_err(std::io::Error::other)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

fn fmt_elo(e: Option<f64>) -> String {
    e.map(|v| format!("{v:.1}")).unwrap_or_default()
}

/// Writes every output file of the run into `dir`.
pub fn write_reports(dir: &Path, totals: &Totals, info: &RunInfo) -> std::io::Result<()> {
    let journal_path = dir.join("journal.jsonl");
    // Games: streamed from the journal straight to the files, in the order they finished, so
    // memory does not grow with the number of games.
    let (csv_path, pgn_path) = (dir.join("games.csv"), dir.join("games.pgn"));
    let (csv_tmp, pgn_tmp) = (temporary(&csv_path), temporary(&pgn_path));
    let mut games_csv =
        csv::Writer::from_writer(std::io::BufWriter::new(std::fs::File::create(&csv_tmp)?));
    let mut pgn = std::io::BufWriter::new(std::fs::File::create(&pgn_tmp)?);
    games_csv
        .write_record([
            "id",
            "round",
            "pair",
            "white",
            "black",
            "opening",
            "opening_text",
            "result",
            "termination",
            "plies",
            "duration_ms",
        ])
        .map_err(std::io::Error::other)?;
    let mut write_error: Option<std::io::Error> = None;
    journal::read(&journal_path, |entry| {
        if write_error.is_some() {
            return;
        }
        let r = &entry.record;
        let row = games_csv.write_record([
            (entry.index + 1).to_string(),
            r.round.to_string(),
            (entry.index / 2 + 1).to_string(),
            r.white.clone(),
            r.black.clone(),
            r.opening.to_string(),
            r.opening_text(),
            r.outcome.to_string(),
            r.termination.to_string(),
            r.plies().to_string(),
            r.duration.as_millis().to_string(),
        ]);
        let result = row
            .map_err(std::io::Error::other)
            .and_then(|_| pgn.write_all(write_game(r, info.event).as_bytes()));
        if let Err(e) = result {
            write_error = Some(e);
        }
    })
    .map_err(std::io::Error::other)?;
    if let Some(e) = write_error {
        return Err(e);
    }
    let mut csv_file = games_csv
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    csv_file.flush()?;
    pgn.flush()?;
    csv_file.get_ref().sync_data()?;
    pgn.get_ref().sync_data()?;
    drop((csv_file, pgn));
    std::fs::rename(csv_tmp, csv_path)?;
    std::fs::rename(pgn_tmp, pgn_path)?;

    let rating_result = totals.ratings(info.rating);
    let ratings = rating_result.as_ref().ok().cloned();
    let rows = standings(totals, &ratings);
    let mut table = vec![[
        "rank", "name", "elo", "elo_lo", "elo_hi", "games", "points", "score", "draws",
    ]
    .map(String::from)
    .to_vec()];
    for (i, s) in rows.iter().enumerate() {
        table.push(vec![
            (i + 1).to_string(),
            s.name.clone(),
            fmt_elo(s.elo.map(|e| e.0)),
            fmt_elo(s.elo.map(|e| e.1)),
            fmt_elo(s.elo.map(|e| e.2)),
            s.games.to_string(),
            format!("{}", s.points),
            format!("{:.4}", s.score),
            s.draws.to_string(),
        ]);
    }
    write_atomically(&dir.join("standings.csv"), &csv_bytes(table)?)?;

    // Crosstable: each cell "W-L-D" of the row engine against the column engine (the order
    // cutechess and fastchess print and the console uses).
    let n = totals.names.len();
    let mut cross = vec![std::iter::once("engine".to_string())
        .chain(totals.names.iter().cloned())
        .collect::<Vec<_>>()];
    for i in 0..n {
        let mut row = vec![totals.names[i].clone()];
        for j in 0..n {
            if i == j {
                row.push(String::new());
                continue;
            }
            let key = (i.min(j), i.max(j));
            let cell = totals
                .pairings
                .get(&key)
                .map(|t| if i < j { t.wdl } else { t.wdl.flipped() });
            row.push(
                cell.map(|w| format!("{}-{}-{}", w.wins, w.losses, w.draws))
                    .unwrap_or_default(),
            );
        }
        cross.push(row);
    }
    write_atomically(&dir.join("crosstable.csv"), &csv_bytes(cross)?)?;

    let rating_note = rating_result.as_ref().err().map(|e| e.to_string());
    write_atomically(
        &dir.join("report.md"),
        markdown(totals, info, &rows, &ratings, &rating_note).as_bytes(),
    )?;
    write_atomically(
        &dir.join("report.html"),
        html(totals, info, &rows, &ratings, &rating_note).as_bytes(),
    )?;
    Ok(())
}

fn pairing_lines(totals: &Totals) -> Vec<(String, String, String, String, String)> {
    totals
        .pairings
        .iter()
        .map(|(&(a, b), t)| {
            let tri = trinomial_elo(t.wdl).describe();
            let penta = if t.pairs.pairs() == 0 {
                "no complete game pairs".to_string()
            } else {
                t.pairs.elo().describe()
            };
            let nelo = t
                .pairs
                .normalized_elo()
                .map(|n| n.describe())
                .unwrap_or_else(|| "n/a".into());
            let l = los(t.wdl)
                .map(|p| format!("{:.1}%", p * 100.0))
                .unwrap_or_else(|| "n/a".into());
            let w = t.wdl;
            (
                format!("{} vs {}", totals.names[a], totals.names[b]),
                format!(
                    "{}-{}-{} ({} pairs)",
                    w.wins,
                    w.losses,
                    w.draws,
                    t.pairs.pairs()
                ),
                tri,
                format!("{penta}; nElo {nelo}"),
                l,
            )
        })
        .collect()
}

fn markdown(
    totals: &Totals,
    info: &RunInfo,
    rows: &[Standing],
    ratings: &Option<Ratings>,
    note: &Option<String>,
) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", info.event);
    let _ = writeln!(
        md,
        "{} {}, {} games, time control {}{}\n",
        info.game,
        info.format,
        totals.games,
        info.time_controls,
        if info.interrupted {
            " (interrupted: resume with --resume)"
        } else {
            ""
        }
    );
    let _ = writeln!(md, "## Standings\n\n| rank | engine | Elo | 95% interval | games | points | score | draws |\n| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (i, s) in rows.iter().enumerate() {
        let (elo, ci) = match s.elo {
            Some((e, lo, hi)) => (format!("{e:+.1}"), format!("{lo:+.1} .. {hi:+.1}")),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {elo} | {ci} | {} | {} | {:.1}% | {} |",
            i + 1,
            s.name,
            s.games,
            s.points,
            s.score * 100.0,
            s.draws
        );
    }
    if let Some(n) = note {
        let _ = writeln!(md, "\nNo joint ratings: {n}.");
    }
    if let Some(r) = ratings {
        let _ = writeln!(md, "\nJoint ratings by maximum likelihood (Bradley–Terry with draws; first-move advantage {:.1} Elo, drawelo {:.1}), centred on the field's average unless anchored.", r.advantage, r.drawelo);
        let _ = writeln!(md, "\n### Likelihood of superiority\n");
        let _ = write!(md, "| | ");
        let order: Vec<usize> = rows
            .iter()
            .filter_map(|s| totals.names.iter().position(|n| *n == s.name))
            .collect();
        for &j in &order {
            let _ = write!(md, "{} | ", totals.names[j]);
        }
        let _ = writeln!(md, "\n|{}", " --- |".repeat(order.len() + 1));
        for &i in &order {
            let _ = write!(md, "| {} | ", totals.names[i]);
            for &j in &order {
                let cell = if i == j {
                    "".into()
                } else {
                    format!("{:.1}%", r.los[i][j] * 100.0)
                };
                let _ = write!(md, "{cell} | ");
            }
            let _ = writeln!(md);
        }
    }
    let _ = writeln!(md, "\n## Pairings\n\n| pairing | W-L-D | Elo (trinomial) | Elo (pentanomial) | LOS |\n| --- | --- | --- | --- | --- |");
    for (p, wdl, tri, penta, l) in pairing_lines(totals) {
        let _ = writeln!(md, "| {p} | {wdl} | {tri} | {penta} | {l} |");
    }
    if let Some((sprt, llr)) = &info.sprt {
        let (lo, hi) = sprt.bounds();
        let last = llr.last().copied().unwrap_or(0.0);
        let _ = writeln!(md, "\n## SPRT\n\nelo0 {} elo1 {} alpha {} beta {} ({:?} model): LLR {} after {} pairs, bounds [{lo:.3}, {hi:.3}], {}.",
            sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, sprt.model, fixed(last, 3), llr.len(), describe_decision(info.decision));
    }
    let ends: Vec<String> = totals
        .terminations
        .iter()
        .map(|(t, n)| format!("{t}: {n}"))
        .collect();
    let _ = writeln!(md, "\n## Terminations\n\n{}", ends.join(", "));
    md
}

pub fn describe_decision(decision: Option<crate::stats::Decision>) -> &'static str {
    match decision.unwrap_or(crate::stats::Decision::Continue) {
        crate::stats::Decision::H1 => "H1 accepted",
        crate::stats::Decision::H0 => "H0 accepted",
        crate::stats::Decision::Continue => "undecided",
    }
}

fn ratings_svg(rows: &[Standing]) -> String {
    let rated: Vec<&Standing> = rows.iter().filter(|r| r.elo.is_some()).collect();
    if rated.is_empty() {
        return String::new();
    }
    let lo = rated
        .iter()
        .map(|r| r.elo.unwrap().1)
        .fold(f64::INFINITY, f64::min);
    let hi = rated
        .iter()
        .map(|r| r.elo.unwrap().2)
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi - lo < 1.0 {
        (lo - 50.0, hi + 50.0)
    } else {
        (lo, hi)
    };
    let (left, width, row_h) = (170.0, 460.0, 28.0);
    let x = |v: f64| left + (v - lo) / (hi - lo) * width;
    let height = row_h * rated.len() as f64 + 40.0;
    let mut svg = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"660\" height=\"{height}\" role=\"img\" aria-label=\"Ratings with 95% intervals\">");
    let zero = x(0.0);
    if (left..=left + width).contains(&zero) {
        let _ = write!(svg, "<line x1=\"{zero:.1}\" y1=\"10\" x2=\"{zero:.1}\" y2=\"{:.1}\" stroke=\"#bbb\" stroke-dasharray=\"4\"/>", height - 25.0);
    }
    for (i, r) in rated.iter().enumerate() {
        let (e, l, h) = r.elo.unwrap();
        let y = 25.0 + row_h * i as f64;
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"13\">{}</text>",
            left - 10.0,
            y + 4.0,
            html_escape(&r.name)
        );
        let _ = write!(svg, "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#4a6fa5\" stroke-width=\"3\"/>", x(l), x(h));
        let _ = write!(svg, "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#c0392b\"><title>{} {e:+.1} ({l:+.1} .. {h:+.1})</title></circle>", x(e), html_escape(&r.name));
    }
    let _ = write!(svg, "<text x=\"{left}\" y=\"{:.1}\" font-size=\"11\">{lo:+.0}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{hi:+.0}</text></svg>", height - 8.0, left + width, height - 8.0);
    svg
}

fn llr_svg(sprt: &Sprt, llr: &[f64]) -> String {
    let (lo, hi) = sprt.bounds();
    let (w, h, pad) = (640.0, 240.0, 30.0);
    let min = llr.iter().copied().fold(lo, f64::min) - 0.5;
    let max = llr.iter().copied().fold(hi, f64::max) + 0.5;
    let n = llr.len().max(2) as f64;
    let x = |i: f64| pad + i / (n - 1.0) * (w - 2.0 * pad);
    let y = |v: f64| h - pad - (v - min) / (max - min) * (h - 2.0 * pad);
    let mut svg = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"LLR over game pairs\">");
    for (b, label) in [(lo, "H0"), (hi, "H1"), (0.0, "")] {
        let _ = write!(svg, "<line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\" stroke-dasharray=\"5\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{label}</text>", y(b), w - pad, y(b), w - pad + 3.0, y(b) + 4.0);
    }
    let points: Vec<String> = llr
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", x(i as f64), y(*v)))
        .collect();
    let _ = write!(
        svg,
        "<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\" points=\"{}\"/></svg>",
        points.join(" ")
    );
    svg
}

fn html(
    totals: &Totals,
    info: &RunInfo,
    rows: &[Standing],
    ratings: &Option<Ratings>,
    note: &Option<String>,
) -> String {
    let e = html_escape;
    let mut h = String::new();
    let _ = write!(h, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}}table{{border-collapse:collapse;margin:1rem 0}}td,th{{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}}td:nth-child(2),th:nth-child(2),.pairings td:first-child,.pairings th:first-child{{text-align:left}}caption{{text-align:left;font-weight:bold}}</style></head><body>", e(info.event));
    let _ = write!(
        h,
        "<h1>{}</h1><p>{} {}, {} games, time control {}{}</p>",
        e(info.event),
        e(info.game),
        e(info.format),
        totals.games,
        e(&info.time_controls),
        if info.interrupted {
            " <strong>(interrupted: resume with --resume)</strong>"
        } else {
            ""
        }
    );
    let _ = write!(h, "<table id=\"standings\"><caption>Standings</caption><tr><th>rank</th><th>engine</th><th>Elo</th><th>lower</th><th>upper</th><th>games</th><th>points</th><th>score</th><th>draws</th></tr>");
    for (i, s) in rows.iter().enumerate() {
        let (el, lo, hi) = match s.elo {
            Some((a, b, c)) => (format!("{a:.1}"), format!("{b:.1}"), format!("{c:.1}")),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let _ = write!(h, "<tr><td>{}</td><td>{}</td><td>{el}</td><td>{lo}</td><td>{hi}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td></tr>", i + 1, e(&s.name), s.games, s.points, s.score * 100.0, s.draws);
    }
    h.push_str("</table>");
    if let Some(n) = note {
        let _ = write!(h, "<p>No joint ratings: {}.</p>", e(n));
    }
    if ratings.is_some() {
        h.push_str("<h2>Ratings and 95% intervals</h2>");
        h.push_str(&ratings_svg(rows));
    }
    h.push_str("<table class=\"pairings\"><caption>Pairings</caption><tr><th>pairing</th><th>W-L-D</th><th>Elo (trinomial)</th><th>Elo (pentanomial)</th><th>LOS</th></tr>");
    for (p, wdl, tri, penta, l) in pairing_lines(totals) {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e(&p),
            e(&wdl),
            e(&tri),
            e(&penta),
            e(&l)
        );
    }
    h.push_str("</table>");
    if let Some((sprt, llr)) = &info.sprt {
        let last = llr.last().copied().unwrap_or(0.0);
        let (lo, hi) = sprt.bounds();
        let _ = write!(h, "<h2>SPRT</h2><p>elo0 {} elo1 {}, alpha {} beta {}: LLR {}, bounds [{lo:.3}, {hi:.3}], {}.</p>", sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, fixed(last, 3), describe_decision(info.decision));
        h.push_str(&llr_svg(sprt, llr));
    }
    let ends: Vec<String> = totals
        .terminations
        .iter()
        .map(|(t, n)| format!("{}: {n}", e(t)))
        .collect();
    let _ = write!(
        h,
        "<h2>Terminations</h2><p>{}</p></body></html>",
        ends.join(", ")
    );
    h.push('\n');
    h
}
