//! `arbiter rate <pgn>...`: joint ratings and the run report from existing PGN files.

use super::exit::Exit;
use super::Failure;
use crate::report::{write_reports, RunInfo};
use crate::stats::bayeselo::{bayeselo, BayesEloOptions, Intervals};
use crate::stats::{RatingError, RatingOptions, Ratings};
use crate::tournament::import::read_pgn_records;
use crate::tournament::journal::{Entry, Journal};
use crate::tournament::totals::Totals;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RateArgs {
    /// PGN files (arbiter's, cutechess's, fastchess's, the MIT autotester's).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Fix one player's rating: name=elo.
    #[arg(long, value_name = "NAME=ELO")]
    pub anchor: Option<String>,
    /// Whose ratings to print. bayeselo (default): what BayesElo prints for the same PGN after
    /// `readpgn`, `elo`, `mm`, `exactdist` (or `covariance`), `ratings`: advantage and draw
    /// width fixed, its per-player prior, ratings scaled by its eloScale, mean 0. arbiter: the
    /// model of arbiter's own reports (advantage and draw width estimated from 100 games on,
    /// --prior draws per pairing, no scale, the anchor honoured).
    #[arg(long, value_enum, default_value_t = Model::Bayeselo)]
    pub model: Model,
    /// Virtual draws: BayesElo's `prior` (per player, spread over its opponents) with
    /// --model bayeselo, per pairing with --model arbiter.
    #[arg(long, default_value_t = 2.0)]
    pub prior: f64,
    /// BayesElo's intervals: exactdist (each player's own likelihood) or covariance (normal).
    #[arg(long, value_enum, default_value_t = Intervals::Exactdist)]
    pub intervals: Intervals,
    /// BayesElo's `advantage`: the first move's worth in Elo (--model bayeselo).
    #[arg(long, default_value_t = crate::stats::ratings::DEFAULT_ADVANTAGE)]
    pub advantage: f64,
    /// BayesElo's `drawelo`: the draw width in Elo (--model bayeselo; the MIT autotester's
    /// scripts set 10).
    #[arg(long, default_value_t = crate::stats::ratings::DEFAULT_DRAWELO)]
    pub drawelo: f64,
    /// Where to write the report (default reports/rate-<time>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Which ratings `rate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    Bayeselo,
    Arbiter,
}

pub fn run(args: RateArgs) -> Result<Exit, Failure> {
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
    if args.model == Model::Bayeselo {
        let o = BayesEloOptions {
            prior: args.prior.max(0.0),
            advantage: args.advantage,
            drawelo: args.drawelo,
            intervals: args.intervals,
            ..BayesEloOptions::default()
        };
        print_bayeselo(&totals, &o, rating.anchor.as_ref(), records.len())?;
    } else {
        print_arbiter_model(&totals, &rating, records.len())?;
    }
    write_report(&args, records, &totals, &rating)
}

fn print_arbiter_model(
    totals: &Totals,
    rating: &RatingOptions,
    games: usize,
) -> Result<(), Failure> {
    match totals.ratings(rating) {
        Ok(ratings) => print_ratings(&ratings, totals, games),
        // Too many players for a joint fit: the report still ranks them by points.
        Err(e @ RatingError::TooManyPlayers(_)) => say!(
            "{games} games, {} players; no joint ratings: {e}",
            totals.names.len()
        ),
        Err(e) => return Err(Failure::bad_input(e.to_string())),
    }
    Ok(())
}

/// BayesElo's `ratings` table: rank, name, Elo, +, -, games, score, average opponent, draws.
fn print_bayeselo(
    totals: &Totals,
    o: &BayesEloOptions,
    anchor: Option<&(String, f64)>,
    games: usize,
) -> Result<(), Failure> {
    let mut rows = match bayeselo(&totals.results, o) {
        Ok(rows) => rows,
        // Too many players for a joint fit: the report still ranks them by points.
        Err(e @ RatingError::TooManyPlayers(_)) => {
            say!(
                "{games} games, {} players; no joint ratings: {e}",
                totals.names.len()
            );
            return Ok(());
        }
        Err(e) => return Err(Failure::bad_input(e.to_string())),
    };
    // BayesElo's `offset <elo> <player>`: every rating moved so that one player has `elo`.
    if let Some((name, elo)) = anchor {
        let at = totals.names.iter().position(|n| n == name);
        let Some(row) = rows.iter().find(|r| Some(r.player) == at) else {
            return Err(Failure::bad_input(format!(
                "--anchor: no player is named '{name}'"
            )));
        };
        let shift = elo - row.elo;
        rows.iter_mut().for_each(|r| r.elo += shift);
    }
    say!(
        "{games} games, {} players; as BayesElo rates them (mm with advantage {:.1} and drawelo {:.1} fixed, prior {}, {:?} intervals, eloScale {:.4})",
        rows.len(),
        o.advantage,
        o.drawelo,
        o.prior,
        o.intervals,
        crate::stats::bayeselo::elo_scale(o.drawelo)
    );
    let width = totals
        .names
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(4)
        .max(4);
    say!(
        "Rank {:<width$}   Elo    +    - games score oppo. draws",
        "Name"
    );
    let elo_of = |p: usize| rows.iter().find(|r| r.player == p).map_or(0.0, |r| r.elo);
    for (rank, r) in rows.iter().enumerate() {
        let wdl = &totals.per_engine[r.player];
        let n = wdl.games().max(1) as f64;
        // The average opponent, weighted by games, as BayesElo prints it.
        let (mut sum, mut count) = (0.0f64, 0.0f64);
        for (&(a, b), p) in &totals.pairings {
            let g = p.wdl.games() as f64;
            if a == r.player {
                sum += g * elo_of(b);
                count += g;
            } else if b == r.player {
                sum += g * elo_of(a);
                count += g;
            }
        }
        say!(
            "{:>4} {:<width$} {:>5} {:>4} {:>4} {:>5} {:>4.0}% {:>5} {:>4.0}%",
            rank + 1,
            totals.names[r.player],
            r.elo.round(),
            r.plus.round(),
            r.minus.round(),
            wdl.games(),
            100.0 * wdl.points() / n,
            (sum / count.max(1.0)).round(),
            100.0 * wdl.draws as f64 / n
        );
    }
    Ok(())
}

/// The file that marks a folder written by `rate` (which it may write again).
const RATED_MARKER: &str = "rated.txt";

fn write_report(
    args: &RateArgs,
    records: Vec<crate::referee::GameRecord>,
    totals: &Totals,
    rating: &RatingOptions,
) -> Result<Exit, Failure> {
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!("reports/rate-{}", crate::referee::now_for_names()))
    });
    let journal_path = out.join(crate::tournament::journal::JOURNAL_FILE);
    let marker = out.join(RATED_MARKER);
    // A run's folder is never written over: its journal is the only copy of its games.
    if out.join(crate::tournament::spec::SPEC_FILE).exists()
        || (journal_path.exists() && !marker.exists())
    {
        return Err(Failure::bad_input(format!(
            "--out {}: that folder holds a run; rate into another folder",
            out.display()
        )));
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::bad_input(format!("cannot create {}: {e}", out.display())))?;
    std::fs::write(&marker, "games imported by arbiter rate\n")
        .map_err(|e| Failure::bad_input(format!("{}: {e}", marker.display())))?;
    let tmp = out.join(format!(
        ".{}.rating",
        crate::tournament::journal::JOURNAL_FILE
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut journal =
        Journal::open(&tmp).map_err(|e| Failure::bad_input(format!("{}: {e}", tmp.display())))?;
    // Written under a temporary name and renamed once whole: one sync for the file, not one
    // per game (a rate of 100,000 games spent most of its time waiting for the disk).
    let written = records
        .into_iter()
        .enumerate()
        .try_for_each(|(i, record)| {
            journal.write(&Entry {
                index: i as u64,
                record,
            })
        })
        .and_then(|()| journal.sync());
    written.map_err(|e| Failure::bad_input(format!("{}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, &journal_path)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", journal_path.display())))?;
    let info = RunInfo::imported(rating.clone());
    write_reports(&out, totals, &info)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", out.display())))?;
    say!(
        "Report: {}",
        out.join(crate::report::files::REPORT_HTML).display()
    );
    Ok(Exit::Success)
}

fn print_ratings(ratings: &Ratings, totals: &Totals, games: usize) {
    say!(
        "{games} games, {} players; first-move advantage {:.1}, drawelo {:.1}",
        ratings.ratings.len(),
        ratings.advantage,
        ratings.drawelo
    );
    super::summary::print_ratings(ratings, totals);
}
