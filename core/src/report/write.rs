//! A run's output files, all rebuilt from the journal and the totals: `games.csv`, `games.pgn`,
//! `standings.csv`, `crosstable.csv`, `report.md`, `report.html`. Each is written to a
//! temporary file and renamed, so a reader never sees half a file.

use super::story::Story;
use crate::pgn::write_game;
use crate::stats::{fixed, los, signed, trinomial_elo, RatingOptions, Ratings, Sprt};
use crate::tournament::journal;
use crate::tournament::schedule::PairSchedule;
use crate::tournament::totals::Totals;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// What the report says about the run besides its results.
pub struct RunInfo<'a> {
    pub event: String,
    pub game: &'a str,
    /// The game's rule options chosen for the run, `name=value` (empty: the defaults).
    pub rules: String,
    pub format: &'a str,
    pub time_controls: String,
    pub sprt: Option<(Sprt, &'a [f64])>,
    /// The SPRT's decision when a bound was crossed (games still in progress then are counted
    /// afterwards and may move the final LLR back inside the bounds; the decision stands).
    pub decision: Option<crate::stats::Decision>,
    pub rating: RatingOptions,
    pub interrupted: bool,
    /// The engines as configured (empty for imported games).
    pub engines: &'a [crate::engine::EngineConfig],
    /// Games embedded in the report's viewer.
    pub viewer_games: usize,
    /// How the engines were confined, as the run that played them said (none for imports).
    pub sandbox: Option<String>,
    /// The run's settings, for what the report shows of them (none for imported games).
    pub run: Option<&'a crate::tournament::RunSpec>,
}

impl<'a> RunInfo<'a> {
    /// What the report says of a run played from `spec` (its SPRT's LLR after each pair
    /// `llr`, its decision, whether it was cut short).
    pub fn of_run(
        spec: &'a crate::tournament::RunSpec,
        llr: &'a [f64],
        interrupted: bool,
        decision: Option<crate::stats::Decision>,
    ) -> RunInfo<'a> {
        let tags: Vec<String> = spec.engines.iter().map(|e| e.limits_summary()).collect();
        let time_controls = if tags.iter().all(|t| *t == tags[0]) {
            tags[0].clone()
        } else {
            tags.join(", ")
        };
        RunInfo {
            event: spec.event(),
            game: crate::game::find_game(&spec.game).map_or(spec.game.as_str(), |g| g.id),
            rules: spec
                .rules
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            format: if spec.engines.len() == 2 {
                "match"
            } else {
                spec.format.as_str()
            },
            time_controls,
            sprt: spec.sprt.map(|s| (s, llr)),
            rating: spec.rating_options(),
            interrupted,
            decision,
            engines: &spec.engines,
            viewer_games: spec.viewer_games,
            sandbox: Some(crate::engine::sandbox::describe(&spec.engines)),
            run: Some(spec),
        }
    }

    /// What the report says of games imported from PGN files (`arbiter rate`).
    pub fn imported(rating: RatingOptions) -> RunInfo<'a> {
        RunInfo {
            event: "arbiter rate".into(),
            game: "imported",
            rules: String::new(),
            format: "PGN",
            time_controls: "as recorded".into(),
            sprt: None,
            rating,
            interrupted: false,
            decision: None,
            engines: &[],
            viewer_games: crate::report::viewer::MAX_SHOWN,
            sandbox: None,
            run: None,
        }
    }
}

/// Whole or not at all: written under a temporary name, then renamed over the old file. Not
/// synced to the disk: every report is made from the journal, which is, and a finished run
/// resumed writes them again (a sync per file was a tenth of the run's own thread).
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::output::replace(path, bytes)
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
            // Shown, not obeyed: an escape sequence or a direction mark from an engine.
            c if crate::referee::shown::hidden_meaning(c) && !matches!(c, '\n' | '\t') => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
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

impl Standing {
    /// The row's cells after the engine's name, as the report's standings table and the live
    /// page show them: Elo, lower, upper, games, points, score, draws.
    pub fn cells(&self) -> [String; 7] {
        let (elo, lo, hi) = match self.elo {
            Some((a, b, c)) => (fixed(a, 1), fixed(b, 1), fixed(c, 1)),
            None => ("-".into(), "-".into(), "-".into()),
        };
        [
            elo,
            lo,
            hi,
            self.games.to_string(),
            self.points.to_string(),
            format!("{:.1}%", self.score * 100.0),
            self.draws.to_string(),
        ]
    }
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

/// `n` with its noun, plural unless `n` is 1: "1 pair", "4 pairs".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        _ => format!("{n} {many}"),
    }
}

/// A cell a spreadsheet will not run: text starting with `=`, `+`, `-`, `@`, a tab or a return
/// (an engine named `=HYPERLINK(...)`) gets a leading `'`, as OWASP advises; numbers stay as
/// they are.
pub fn spreadsheet_safe(cell: String) -> String {
    let risky = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && cell.parse::<f64>().is_err() {
        format!("'{cell}")
    } else {
        cell
    }
}

pub(crate) fn csv_bytes(rows: impl IntoIterator<Item = Vec<String>>) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        let row: Vec<String> = row.into_iter().map(spreadsheet_safe).collect();
        w.write_record(&row).map_err(std::io::Error::other)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

fn fmt_elo(e: Option<f64>) -> String {
    e.map(|v| fixed(v, 1)).unwrap_or_default()
}

/// The columns of games.csv.
const GAMES_CSV_HEADER: [&str; 10] = [
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
];

fn games_csv_row(entry: &journal::Entry) -> [String; 10] {
    let r = &entry.record;
    [
        (entry.index + 1).to_string(),
        r.round.to_string(),
        (PairSchedule::pair_of(entry.index) + 1).to_string(),
        r.white.clone(),
        r.black.clone(),
        r.opening.to_string(),
        r.opening_text(),
        r.outcome.to_string(),
        r.termination.to_string(),
        r.plies().to_string(),
    ]
    .map(spreadsheet_safe)
}

/// games.csv and games.pgn, streamed from the journal straight to the files in the order of the
/// games' numbers, so memory does not grow with the games; what the run's course shows is
/// gathered on the way. games.csv holds nothing that depends on the machine (durations are in
/// the journal), so the same games give the same bytes however they were played.
fn write_games(dir: &Path, totals: &Totals, info: &RunInfo) -> std::io::Result<Story> {
    let (csv_path, pgn_path) = (
        dir.join(super::files::GAMES_CSV),
        dir.join(super::files::GAMES_PGN),
    );
    let (csv_tmp, csv_file) = crate::output::create_beside(&csv_path, 0o644)?;
    let (pgn_tmp, pgn_file) = crate::output::create_beside(&pgn_path, 0o644)?;
    let mut games_csv = csv::Writer::from_writer(std::io::BufWriter::new(csv_file));
    let mut pgn = std::io::BufWriter::new(pgn_file);
    games_csv
        .write_record(GAMES_CSV_HEADER)
        .map_err(std::io::Error::other)?;
    let mut write_error: Option<std::io::Error> = None;
    let site = info
        .run
        .and_then(|r| r.site.as_deref())
        .unwrap_or("arbiter");
    let mut story = Story::new(&totals.names, totals.games);
    story.showcase = super::viewer::Showcase::new(info.viewer_games);
    journal::read_in_order(&dir.join(journal::JOURNAL_FILE), |entry| {
        story.add(&entry);
        if write_error.is_some() {
            return;
        }
        let result = games_csv
            .write_record(games_csv_row(&entry))
            .map_err(std::io::Error::other)
            .and_then(|_| pgn.write_all(write_game(&entry.record, &info.event, site).as_bytes()));
        if let Err(e) = result {
            write_error = Some(e);
        }
    })
    .map_err(std::io::Error::other)?;
    if let Some(e) = write_error {
        return Err(e);
    }
    story.finish();
    let mut csv_file = games_csv
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    csv_file.flush()?;
    pgn.flush()?;
    drop((csv_file, pgn));
    std::fs::rename(csv_tmp, csv_path)?;
    std::fs::rename(pgn_tmp, pgn_path)?;
    Ok(story)
}

pub(super) fn standings_csv(rows: &[Standing]) -> std::io::Result<Vec<u8>> {
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
    csv_bytes(table)
}

/// Writes every output file of the run into `dir`.
pub fn write_reports(dir: &Path, totals: &Totals, info: &RunInfo) -> std::io::Result<()> {
    write_made(dir, totals, info, Pages::Written)
}

/// Which of a run's made files are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pages {
    /// Every one: the games, the tables and the pages for people.
    Written,
    /// The games and the tables only: a bisect's steps, whose games the bisect's page shows.
    Left,
}

/// Writes the files made from a run's journal; its pages (report.md, report.html) only where
/// `pages` says.
pub fn write_made(
    dir: &Path,
    totals: &Totals,
    info: &RunInfo,
    pages: Pages,
) -> std::io::Result<()> {
    let story = write_games(dir, totals, info)?;
    let tables = Tables::of(totals, &info.rating);
    let report = super::files::Report {
        totals,
        info,
        tables: &tables,
        story: &story,
    };
    for file in super::files::RUN_FILES {
        let make = match file.maker {
            super::files::Maker::Report(make) => make,
            super::files::Maker::Page(make) if pages == Pages::Written => make,
            _ => continue,
        };
        write_atomically(&dir.join(file.name), &make(&report)?)?;
    }
    Ok(())
}

/// What report.md and report.html both show of the results, worked out once for both: the
/// standings, the joint ratings (or why there are none) and each pairing's figures.
pub struct Tables {
    pub rows: Vec<Standing>,
    pub ratings: Option<Ratings>,
    /// Why there are no joint ratings, when there are none.
    pub note: Option<String>,
    pub pairings: Vec<PairingLine>,
}

impl Tables {
    pub fn of(totals: &Totals, rating: &RatingOptions) -> Tables {
        let rating_result = totals.ratings(rating);
        let note = rating_result.as_ref().err().map(|e| e.to_string());
        let ratings = rating_result.ok();
        Tables {
            rows: standings(totals, &ratings),
            ratings,
            note,
            pairings: pairing_lines(totals),
        }
    }
}

/// One pairing's figures, as the reports write them.
pub struct PairingLine {
    pub pairing: String,
    pub wdl: String,
    pub trinomial: String,
    pub pentanomial: String,
    pub los: String,
}

/// Engines up to which the reports show square tables (likelihood of superiority, crosstable).
pub const MATRIX_ENGINES: usize = 40;

/// Engines up to which the crosstable is a square; past it, one row per pairing that met, so
/// the file grows with the games played rather than with the square of the engines.
pub const SQUARE_CROSSTABLE: usize = 200;

/// Crosstable: each cell "W-L-D" of the row engine against the column engine (the order
/// cutechess and fastchess print and the console uses).
pub(super) fn crosstable_csv(totals: &Totals) -> std::io::Result<Vec<u8>> {
    let n = totals.names.len();
    if n > SQUARE_CROSSTABLE {
        let mut rows = vec![["engine", "opponent", "wins", "losses", "draws"]
            .map(String::from)
            .to_vec()];
        for (&(a, b), t) in &totals.pairings {
            let w = t.wdl;
            rows.push(vec![
                totals.names[a].clone(),
                totals.names[b].clone(),
                w.wins.to_string(),
                w.losses.to_string(),
                w.draws.to_string(),
            ]);
        }
        return csv_bytes(rows);
    }
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
    csv_bytes(cross)
}

fn pairing_lines(totals: &Totals) -> Vec<PairingLine> {
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
            PairingLine {
                pairing: format!("{} vs {}", totals.names[a], totals.names[b]),
                wdl: format!(
                    "{}-{}-{} ({})",
                    w.wins,
                    w.losses,
                    w.draws,
                    counted(t.pairs.pairs(), "pair", "pairs")
                ),
                trinomial: tri,
                pentanomial: format!("{penta}; nElo {nelo}"),
                los: l,
            }
        })
        .collect()
}

/// How many games the clock decided, said at the top of every report of a run under a clock:
/// on a busy machine a game is lost to the machine's own load, and the standings then rank
/// engines by how they bore it. `None` for runs by depth or nodes with no game lost on time.
pub(super) fn clock_note(totals: &Totals, info: &RunInfo) -> Option<String> {
    let lost = totals
        .terminations
        .get("time forfeit")
        .copied()
        .unwrap_or(0);
    let timed = info.time_controls.contains("tc=") || info.time_controls.contains("st=");
    let on_time = match (lost, timed) {
        (0, false) => None,
        (0, true) => Some("No game was lost on time.".to_string()),
        (lost, _) => Some(format!(
            "{lost} of {} games were lost on time: on a busy machine the clock, not only the \
             play, decides games (give more time per move, lower --concurrency, or play by \
             depth= or nodes=).",
            totals.games
        )),
    };
    let overloaded = (totals.overloaded > 0).then(|| {
        format!(
            "The machine was overloaded for this time control in {} of {} games: in a tenth of \
             their moves or more, the referee, short of CPU, took a tenth or more of the time \
             each move adds to pass the move on.",
            totals.overloaded, totals.games
        )
    });
    match (on_time, overloaded) {
        (Some(a), Some(b)) => Some(format!("{a} {b}")),
        (a, b) => a.or(b),
    }
}

pub(super) fn markdown(totals: &Totals, info: &RunInfo, tables: &Tables) -> String {
    let Tables {
        rows,
        ratings,
        note,
        ..
    } = tables;
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", md_text(&info.event));
    let _ = writeln!(
        md,
        "{}{} {}, {} games, limits {}{}\n",
        info.game,
        rules_note(&info.rules),
        info.format,
        totals.games,
        info.time_controls,
        if info.interrupted {
            " (interrupted: resume with --resume)"
        } else {
            ""
        }
    );
    if let Some(clock) = clock_note(totals, info) {
        let _ = writeln!(md, "{clock}\n");
    }
    if let Some(sandbox) = &info.sandbox {
        let _ = writeln!(md, "{}\n", md_text(sandbox));
    }
    md_standings(&mut md, rows);
    if let Some(n) = note {
        let _ = writeln!(md, "\nNo joint ratings: {n}.");
    }
    if let Some(r) = ratings
        .as_ref()
        .filter(|_| totals.names.len() <= MATRIX_ENGINES)
    {
        let _ = writeln!(md, "\n{}", ratings_note(r));
        los_table(&mut md, totals, rows, r);
    }
    let _ = writeln!(
        md,
        "\n## Pairings\n\n| pairing | W-L-D | pairing Elo, these two alone \
        (trinomial) | pairing Elo (pentanomial) | LOS |\n| --- | --- | --- | --- | --- |"
    );
    for p in &tables.pairings {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            md_text(&p.pairing),
            p.wdl,
            p.trinomial,
            p.pentanomial,
            p.los
        );
    }
    let _ = writeln!(md, "\n{PAIRING_NOTE}");
    if let Some((sprt, llr)) = &info.sprt {
        let (lo, hi) = sprt.bounds();
        let last = llr.last().copied().unwrap_or(0.0);
        let _ = writeln!(
            md,
            "\n## SPRT\n\nelo0 {} elo1 {} alpha {} beta {} ({:?} model): LLR {} \
            after {}, bounds [{lo:.3}, {hi:.3}], {}.",
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            sprt.model,
            fixed(last, 3),
            counted(llr.len() as u64, "pair", "pairs"),
            describe_sprt_end(sprt, llr, info.decision)
        );
    }
    let ends: Vec<String> = totals
        .terminations
        .iter()
        .map(|(t, n)| format!("{t}: {n}"))
        .collect();
    let _ = writeln!(md, "\n## Terminations\n\n{}", ends.join(", "));
    if let Some((distinct, of)) = totals.repeats() {
        let _ = writeln!(md, "\nDistinct games: {distinct} of {of}.");
        if let Some(said) = totals.repeats_said() {
            let _ = writeln!(md, "\n**Repeated games:** {said}.");
        }
    }
    md
}

/// The standings table of report.md.
fn md_standings(md: &mut String, rows: &[Standing]) {
    let _ = writeln!(
        md,
        "## Standings\n\n| rank | engine | Elo | 95% interval | games | points | \
        score | draws |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for (i, s) in rows.iter().enumerate() {
        let (elo, ci) = match s.elo {
            Some((e, lo, hi)) => (signed(e), format!("{} .. {}", signed(lo), signed(hi))),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {elo} | {ci} | {} | {} | {:.1}% | {} |",
            i + 1,
            md_text(&s.name),
            s.games,
            s.points,
            s.score * 100.0,
            s.draws
        );
    }
}

/// Text for a Markdown table cell or heading: a `|` would end the cell, and `<...>` would be
/// taken for HTML by a renderer; control characters are dropped.
fn md_text(text: &str) -> String {
    text.chars()
        .filter(|c| !crate::referee::shown::hidden_meaning(*c))
        .map(|c| match c {
            '|' => "\\|".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The likelihood-of-superiority matrix, in standings order.
fn los_table(md: &mut String, totals: &Totals, rows: &[Standing], r: &Ratings) {
    let _ = writeln!(md, "\n### Likelihood of superiority\n");
    let _ = write!(md, "| | ");
    let order: Vec<usize> = rows
        .iter()
        .filter_map(|s| totals.names.iter().position(|n| *n == s.name))
        .collect();
    for &j in &order {
        let _ = write!(md, "{} | ", md_text(&totals.names[j]));
    }
    let _ = writeln!(md, "\n|{}", " --- |".repeat(order.len() + 1));
    for &i in &order {
        let _ = write!(md, "| {} | ", md_text(&totals.names[i]));
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

/// How the standings' ratings are made and centred.
pub fn ratings_note(r: &Ratings) -> String {
    format!(
        "Standings: joint ratings of all engines by maximum likelihood (BayesElo's model: draws \
         modelled with drawelo {:.1}, first-move advantage {:.1} Elo, a prior of two virtual draws \
         per pairing), centred so the field averages 0 unless --anchor fixes one engine.",
        r.drawelo, r.advantage
    )
}

/// Why a pairing's Elo and the difference of two standings ratings need not agree.
pub const PAIRING_NOTE: &str = "Pairings: the Elo of one engine's score against the other alone \
    (trinomial: per game; pentanomial: per game pair, which counts the pair's shared opening). It \
    differs from the difference of their standings ratings, which use every game of the run, model \
    draws and the first move, and are pulled towards 0 by the prior: on few games, or with \
    lopsided \
    scores, the two can differ by hundreds of Elo.";

/// The SPRT's verdict and, once decided, the pair at which the LLR first crossed a bound: where
/// a split run's shards, which play on a little after it, were told to stop.
pub fn describe_sprt_end(
    sprt: &crate::stats::Sprt,
    llr: &[f64],
    decision: Option<crate::stats::Decision>,
) -> String {
    let verdict = describe_decision(decision);
    let crossed = llr
        .iter()
        .position(|&v| sprt.decide(v) != crate::stats::Decision::Continue);
    match (decision, crossed) {
        (Some(_), Some(at)) => format!("{verdict} (a bound first crossed after pair {})", at + 1),
        _ => verdict.to_string(),
    }
}

pub fn describe_decision(decision: Option<crate::stats::Decision>) -> &'static str {
    match decision.unwrap_or(crate::stats::Decision::Continue) {
        crate::stats::Decision::H1 => "H1 accepted",
        crate::stats::Decision::H0 => "H0 accepted",
        crate::stats::Decision::Continue => "undecided",
    }
}

/// ` (rules: repetition=fairy-stockfish)` after the game's name, or nothing for its defaults.
pub fn rules_note(rules: &str) -> String {
    if rules.is_empty() {
        String::new()
    } else {
        format!(" (rules: {rules})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Outcome, Termination};
    use crate::referee::GameRecord;

    fn game(white: &str, black: &str) -> GameRecord {
        GameRecord {
            turnaround_us: Vec::new(),
            overloaded: false,
            pv_warnings: Vec::new(),
            rules: Vec::new(),
            game: "leiserchess".into(),
            white: white.into(),
            black: black.into(),
            start_fen: None,
            moves: Vec::new(),
            outcome: Outcome::WhiteWins,
            termination: Termination::KingZapped,
            detail: String::new(),
            time_control: "-".into(),
            duration: std::time::Duration::ZERO,
            opening: 0,
            round: 1,
            date: String::new(),
        }
    }

    #[test]
    fn the_crosstable_of_many_engines_grows_with_the_games_not_the_square() {
        let names: Vec<String> = (0..1000).map(|i| format!("e{i}")).collect();
        let mut totals = Totals::new(names);
        totals.add(&game("e1", "e2"), None);
        totals.add(&game("e3", "e999"), None);
        let text = String::from_utf8(crosstable_csv(&totals).unwrap()).unwrap();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "engine,opponent,wins,losses,draws",
                "e1,e2,1,0,0",
                "e3,e999,1,0,0"
            ]
        );
        let few = Totals::new(vec!["a".into(), "b".into()]);
        let square = String::from_utf8(crosstable_csv(&few).unwrap()).unwrap();
        assert_eq!(square.lines().count(), 3, "{square}");
    }

    #[test]
    fn the_top_of_a_report_says_how_many_games_an_overloaded_machine_played() {
        let spec = crate::tournament::RunSpec::new(
            crate::tournament::RunKind::Match,
            ["a", "b"]
                .iter()
                .map(|n| {
                    let settings = [
                        "cmd=/bin/sh".to_string(),
                        format!("name={n}"),
                        "st=0.05".into(),
                    ];
                    crate::engine::EngineConfig::parse(&settings, &[] as &[String]).unwrap()
                })
                .collect(),
        );
        let info = RunInfo::of_run(&spec, &[], false, None);
        let mut totals = Totals::new(vec!["a".into(), "b".into()]);
        totals.add(&game("a", "b"), None);
        assert_eq!(
            clock_note(&totals, &info).as_deref(),
            Some("No game was lost on time.")
        );
        let mut late = game("b", "a");
        late.overloaded = true;
        // Kept in the journal's line, and read back; a line without it was not overloaded.
        let line = serde_json::to_string(&late).unwrap();
        assert!(line.contains("\"overloaded\":true"), "{line}");
        let read: GameRecord = serde_json::from_str(&line).unwrap();
        totals.add(&read, None);
        let note = clock_note(&totals, &info).unwrap();
        assert!(
            note.contains("overloaded for this time control in 1 of 2 games"),
            "{note}"
        );
        assert!(!serde_json::to_string(&game("a", "b"))
            .unwrap()
            .contains("overloaded"));
    }
}
