//! `arbiter rate <pgn>...`: joint ratings and the run report from existing PGN files.

use super::exit::Exit;
use super::Failure;
use arbiter::report::{write_reports, RunInfo};
use arbiter::stats::bayeselo::{bayeselo, BayesEloOptions, Intervals};
use arbiter::stats::{RatingError, RatingOptions, Ratings};
use arbiter::tournament::import::{pgn_records, Detail};
use arbiter::tournament::journal::{Entry, Journal};
use arbiter::tournament::rules_check::{RulesCheck, Tally};
use arbiter::tournament::totals::Totals;
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
    #[arg(long, value_parser = crate::choices::intervals(), default_value = "exactdist")]
    pub intervals: Intervals,
    /// BayesElo's `advantage`: the first move's worth in Elo (--model bayeselo).
    #[arg(long, default_value_t = arbiter::stats::ratings::DEFAULT_ADVANTAGE)]
    pub advantage: f64,
    /// BayesElo's `drawelo`: the draw width in Elo (--model bayeselo; the MIT autotester's
    /// scripts set 10).
    #[arg(long, default_value_t = arbiter::stats::ratings::DEFAULT_DRAWELO)]
    pub drawelo: f64,
    /// Also write the games and a report there (the run report: standings, crosstable,
    /// charts, the games as journal, PGN and CSV, a viewer). Without it the ratings are only
    /// printed, as BayesElo prints them, and nothing is written.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replay every game by the rules of its `Variant` tag, on every core, before rating:
    /// each move legal, each result the rules decide as scored. A file with a game that
    /// fails is not rated (exit code 1); the first failures are named by file and line.
    #[arg(long)]
    pub check: bool,
    /// With --check: the game of PGN files whose games name no `Variant` (cutechess-cli
    /// writes none for chess, the course's autotester none for leiserchess). Default: the
    /// default game of every arbiter command, leiserchess.
    #[arg(long, value_name = "GAME")]
    pub game: Option<String>,
}

/// Which ratings `rate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    Bayeselo,
    Arbiter,
}

pub fn run(args: RateArgs) -> Result<Exit, Failure> {
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
    let unnamed =
        super::rulescmd::game_entry(args.game.as_deref().unwrap_or(super::runargs::DEFAULT_GAME))?;
    let mut out = args.out.as_deref().map(Output::open).transpose()?;
    let check = args.check.then(|| RulesCheck::start(unnamed));
    let chosen = args.game.is_some();
    let read = read_games(
        &args.files,
        out.as_mut().map(|o| &mut o.journal),
        check,
        chosen,
    );
    let rated = read.and_then(|totals| {
        print_ratings_of(&args, &totals, &rating)?;
        // Known where the moves were read (--check, --out); the ratings alone skip them.
        if let Some(repeats) = totals.repeats_said() {
            eprintln!("Repeated games: {repeats}.");
        }
        Ok(totals)
    });
    match (rated, out) {
        (Ok(totals), Some(out)) => out.finish(&totals, &rating),
        (Ok(_), None) => Ok(Exit::Success),
        (Err(failure), out) => {
            if let Some(out) = out {
                out.abandon();
            }
            Err(failure)
        }
    }
}

/// The ratings of the model asked for, printed.
fn print_ratings_of(
    args: &RateArgs,
    totals: &Totals,
    rating: &RatingOptions,
) -> Result<(), Failure> {
    let games = totals.games as usize;
    if args.model == Model::Bayeselo {
        let o = BayesEloOptions {
            prior: args.prior.max(0.0),
            advantage: args.advantage,
            drawelo: args.drawelo,
            intervals: args.intervals,
            ..BayesEloOptions::default()
        };
        print_bayeselo(totals, &o, rating.anchor.as_ref(), games)
    } else {
        print_arbiter_model(totals, rating, games)
    }
}

/// Every finished game of `files`, counted as it is read (and written to `journal`, when the
/// games are to be kept, and replayed by `check`, when asked): memory holds the players and
/// pairings, not the games.
fn read_games(
    files: &[PathBuf],
    mut journal: Option<&mut Journal>,
    mut check: Option<RulesCheck>,
    game_chosen: bool,
) -> Result<Totals, Failure> {
    let detail = match (&journal, &check) {
        (None, None) => Detail::Results,
        _ => Detail::Moves,
    };
    let mut totals = Totals::new(Vec::new());
    for file in files {
        let name = file.display().to_string();
        for game in pgn_records(file, detail).map_err(Failure::bad_input)? {
            let game = game.map_err(Failure::bad_input)?;
            let record = &game.record;
            totals.player(&record.white);
            totals.player(&record.black);
            totals.add(record, None);
            if let Some(journal) = journal.as_deref_mut() {
                let entry = Entry {
                    index: totals.games - 1,
                    record: record.clone(),
                };
                journal
                    .write(&entry)
                    .map_err(|e| Failure::bad_input(format!("journal: {e}")))?;
            }
            if let Some(check) = check.as_mut() {
                check.push(&name, game);
            }
        }
    }
    if let Some(check) = check {
        report_check(check.finish(), game_chosen)?;
    }
    if totals.games == 0 {
        return Err(Failure::bad_input("no finished games in the PGN files"));
    }
    if let Some(journal) = journal {
        journal
            .sync()
            .map_err(|e| Failure::bad_input(format!("journal: {e}")))?;
    }
    Ok(totals)
}

/// Says what the replays checked; a game that failed fails the command.
fn report_check(tally: Tally, game_chosen: bool) -> Result<(), Failure> {
    if tally.failed > 0 {
        let mut text = vec![format!(
            "{} of {} games fail their replay by the rules; nothing is rated:",
            tally.failed, tally.games
        )];
        text.extend(tally.failures.iter().map(|f| format!("  {}", f.text)));
        if tally.failed > tally.failures.len() as u64 {
            text.push(format!(
                "  ... and {} more",
                tally.failed - tally.failures.len() as u64
            ));
        }
        if tally.failed_unnamed > 0 && !game_chosen {
            text.push(format!(
                "  {} of them name no Variant and were read as {}, arbiter's default game; \
                 --game chess (or another game) reads such files as that game",
                tally.failed_unnamed,
                super::runargs::DEFAULT_GAME
            ));
        }
        return Err(Failure::illegal(text.join("\n")));
    }
    let kinds: Vec<String> = tally
        .kinds
        .iter()
        .map(|(id, n)| format!("{n} of {id}"))
        .collect();
    eprintln!(
        "checked: {} games replayed by the rules ({}) on {} threads: every move legal; \
         {} results decided by the rules agree, {} given outside them (adjudication, time, \
         resignation) fall on a legal position",
        tally.games,
        kinds.join(", "),
        tally.threads,
        tally.by_rules,
        tally.outside
    );
    Ok(())
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
        "{games} games, {} players; as BayesElo rates them (mm with advantage {:.1} and drawelo \
            {:.1} fixed, prior {}, {:?} intervals, eloScale {:.4})",
        rows.len(),
        o.advantage,
        o.drawelo,
        o.prior,
        o.intervals,
        arbiter::stats::bayeselo::elo_scale(o.drawelo)
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

/// The folder `rate` writes, and the journal of the games as they are read, under a temporary
/// name until every file has been read.
struct Output {
    dir: PathBuf,
    journal: Journal,
    tmp: PathBuf,
    /// Made by this rate: removed again if the files are refused.
    made: bool,
}

impl Output {
    fn open(dir: &std::path::Path) -> Result<Output, Failure> {
        let dir = dir.to_path_buf();
        let journal_path = dir.join(arbiter::tournament::journal::JOURNAL_FILE);
        let marker = dir.join(RATED_MARKER);
        // A run's folder is never written over: its journal is the only copy of its games.
        if dir.join(arbiter::tournament::spec::SPEC_FILE).exists()
            || (journal_path.exists() && !marker.exists())
        {
            return Err(Failure::bad_input(format!(
                "--out {}: that folder holds a run; rate into another folder",
                dir.display()
            )));
        }
        let made = !dir.exists();
        std::fs::create_dir_all(&dir)
            .map_err(|e| Failure::bad_input(format!("cannot create {}: {e}", dir.display())))?;
        let tmp = dir.join(format!(
            ".{}.rating",
            arbiter::tournament::journal::JOURNAL_FILE
        ));
        let _ = std::fs::remove_file(&tmp);
        let journal = Journal::open(&tmp)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", tmp.display())))?;
        Ok(Output {
            dir,
            journal,
            tmp,
            made,
        })
    }

    /// The journal in place, under its own name, and the reports written from it.
    fn finish(self, totals: &Totals, rating: &RatingOptions) -> Result<Exit, Failure> {
        let marker = self.dir.join(RATED_MARKER);
        std::fs::write(&marker, "games imported by arbiter rate\n")
            .map_err(|e| Failure::bad_input(format!("{}: {e}", marker.display())))?;
        let journal_path = self.dir.join(arbiter::tournament::journal::JOURNAL_FILE);
        std::fs::rename(&self.tmp, &journal_path)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", journal_path.display())))?;
        let info = RunInfo::imported(rating.clone());
        write_reports(&self.dir, totals, &info)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", self.dir.display())))?;
        say!(
            "Report: {}",
            self.dir.join(arbiter::report::files::REPORT_HTML).display()
        );
        Ok(Exit::Success)
    }

    /// Leaves the folder as it was: a refused file writes nothing.
    fn abandon(self) {
        let _ = std::fs::remove_file(&self.tmp);
        if self.made {
            // Made by this rate a moment ago: all it holds is this rate's.
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
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
