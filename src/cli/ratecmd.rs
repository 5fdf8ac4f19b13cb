//! `arbiter rate <pgn>...`: joint ratings and the run report from existing PGN files.

use super::Failure;
use arbiter::stats::{RatingError, RatingOptions, Ratings};
use arbiter::tournament::import::read_pgn_records;
use arbiter::tournament::journal::{Entry, Journal};
use arbiter::tournament::report::{write_reports, RunInfo};
use arbiter::tournament::results::Totals;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RateArgs {
    /// PGN files (arbiter's, cutechess's, fastchess's, the MIT autotester's).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Fix one player's rating: name=elo.
    #[arg(long, value_name = "NAME=ELO")]
    pub anchor: Option<String>,
    /// Virtual draws between every two players who met (BayesElo's prior).
    #[arg(long, default_value_t = 2.0)]
    pub prior: f64,
    /// Where to write the report (default reports/rate-<time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: RateArgs) -> Result<u8, Failure> {
    let mut records = Vec::new();
    for file in &args.files {
        records.extend(read_pgn_records(file).map_err(Failure::bad_input)?);
    }
    if records.is_empty() {
        return Err(Failure::bad_input("no finished games in the PGN files"));
    }
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &records {
        for n in [&r.white, &r.black] {
            if seen.insert(n.clone()) {
                names.push(n.clone());
            }
        }
    }
    let mut rating = RatingOptions {
        prior: args.prior.max(0.0),
        ..RatingOptions::default()
    };
    if let Some(a) = &args.anchor {
        let (name, elo) = a
            .split_once('=')
            .and_then(|(n, e)| e.parse::<f64>().ok().map(|e| (n.to_string(), e)))
            .ok_or_else(|| Failure::bad_input(format!("--anchor '{a}' must be name=elo")))?;
        rating.anchor = Some((name, elo));
    }
    let mut totals = Totals::new(names);
    for r in &records {
        totals.add(r, None);
    }
    match totals.ratings(&rating) {
        Ok(ratings) => print_ratings(&ratings, &totals, records.len()),
        // Too many players for a joint fit: the report still ranks them by points.
        Err(e @ RatingError::TooManyPlayers(_)) => println!(
            "{} games, {} players; no joint ratings: {e}",
            records.len(),
            totals.names.len()
        ),
        Err(e) => return Err(Failure::bad_input(e.to_string())),
    }
    let out = args.out.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        PathBuf::from(format!("reports/rate-{secs}"))
    });
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::bad_input(format!("cannot create {}: {e}", out.display())))?;
    let journal_path = out.join(arbiter::tournament::journal::JOURNAL_FILE);
    let _ = std::fs::remove_file(&journal_path);
    let mut journal = Journal::open(&journal_path)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", journal_path.display())))?;
    for (i, r) in records.into_iter().enumerate() {
        journal
            .append(&Entry {
                index: i as u64,
                record: r,
            })
            .map_err(|e| Failure::bad_input(format!("{}: {e}", journal_path.display())))?;
    }
    let info = RunInfo {
        event: "arbiter rate",
        game: "imported",
        format: "PGN",
        time_controls: "as recorded".into(),
        sprt: None,
        rating: &rating,
        interrupted: false,
        decision: None,
        engines: &[],
        viewer_games: arbiter::tournament::viewer::MAX_SHOWN,
    };
    write_reports(&out, &totals, &info)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", out.display())))?;
    println!("Report: {}", out.join("report.html").display());
    Ok(0)
}

fn print_ratings(ratings: &Ratings, totals: &Totals, games: usize) {
    println!(
        "{games} games, {} players; first-move advantage {:.1}, drawelo {:.1}",
        ratings.ratings.len(),
        ratings.advantage,
        ratings.drawelo
    );
    super::summary::print_ratings(ratings, totals);
}
