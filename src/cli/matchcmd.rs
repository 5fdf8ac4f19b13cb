//! `arbiter match`: two engines, game pairs, concurrent games, a result with error bars.

use super::Failure;
use arbiter::engine::EngineConfig;
use arbiter::referee::{Adjudication, DrawRule, ResignRule};
use arbiter::stats::{los, percentiles, trinomial_elo};
use arbiter::tournament::openings::load_book;
use arbiter::tournament::{run_match, MatchOptions};
use clap::ArgAction;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct MatchArgs {
    /// Game id (see `arbiter games`).
    #[arg(long)]
    pub game: String,
    /// An engine, as KEY=VALUE settings: cmd=<program> (required), name=, arg= (repeatable),
    /// dir=, proto=uci|leiserchess, tc=[moves/]base[+inc] (seconds), st=<seconds per move>,
    /// depth=, nodes=, timemargin=<ms>, stall=<seconds>, option.<Name>=<value>. Give it twice.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE", action = ArgAction::Append, required = true)]
    pub engine: Vec<String>,
    /// `--engine` settings grouped by occurrence (filled from clap's matches, not a flag).
    #[arg(skip)]
    pub engine_groups: Vec<Vec<String>>,
    /// Settings applied to every engine (an engine's own settings win).
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub each: Vec<String>,
    /// Number of games; each opening is played twice with colours reversed.
    #[arg(long, default_value_t = 2)]
    pub games: u64,
    /// Games played at the same time.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Opening book: one line per opening, moves (`g4g5 e6e7`) or `fen <FEN> [moves ...]`.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Use only the first N plies of each book line.
    #[arg(long)]
    pub book_plies: Option<usize>,
    /// Take openings in a random order (from --seed) instead of book order.
    #[arg(long)]
    pub random_openings: bool,
    /// Append every game to this PGN file.
    #[arg(long)]
    pub pgnout: Option<PathBuf>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Draw a game after this many plies (termination "max plies").
    #[arg(long)]
    pub max_plies: Option<usize>,
    /// Adjudicate a draw: movenumber=N movecount=N score=CP.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub draw: Vec<String>,
    /// Adjudicate a loss: movecount=N score=CP.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub resign: Vec<String>,
    /// Write all engine input and output, timestamped, to this file.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// PGN Event tag.
    #[arg(long, default_value = "arbiter match")]
    pub event: String,
    /// Print only the final result.
    #[arg(long)]
    pub quiet: bool,
}

pub fn adjudication(
    draw: &[String],
    resign: &[String],
    max_plies: Option<usize>,
) -> Result<Adjudication, Failure> {
    let draw = (!draw.is_empty())
        .then(|| DrawRule::parse(&draw.join(" ")))
        .transpose()
        .map_err(|e| Failure::bad_input(format!("--draw: {e}")))?;
    let resign = (!resign.is_empty())
        .then(|| ResignRule::parse(&resign.join(" ")))
        .transpose()
        .map_err(|e| Failure::bad_input(format!("--resign: {e}")))?;
    Ok(Adjudication {
        draw,
        resign,
        max_plies,
    })
}

pub fn engines(specs: &[Vec<String>], each: &[String]) -> Result<Vec<EngineConfig>, Failure> {
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            EngineConfig::parse(spec, each)
                .map_err(|e| Failure::bad_input(format!("--engine #{}: {e}", i + 1)))
        })
        .collect()
}

pub fn run(args: MatchArgs) -> Result<(), Failure> {
    let entry = super::rules::game_entry(&args.game)?;
    let engines = engines(&args.engine_groups, &args.each)?;
    if engines.len() != 2 {
        return Err(Failure::bad_input(format!(
            "a match takes exactly two --engine, not {} (for more, use `arbiter tournament`)",
            engines.len()
        )));
    }
    if args.games == 0 || args.concurrency == 0 {
        return Err(Failure::bad_input(
            "--games and --concurrency must be at least 1",
        ));
    }
    let openings = match &args.openings {
        Some(path) => load_book(path, entry, args.book_plies)
            .map_err(|e| Failure::bad_input(e.to_string()))?,
        None => Vec::new(),
    };
    let (a, b) = (engines[0].name.clone(), engines[1].name.clone());
    let opts = MatchOptions {
        entry,
        engines,
        games: args.games,
        concurrency: args.concurrency,
        openings,
        random_order: args.random_openings,
        seed: args.seed,
        adjudication: adjudication(&args.draw, &args.resign, args.max_plies)?,
        pgnout: args.pgnout.clone(),
        log: args.log.clone(),
        event: args.event.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::bad_input(format!("cannot start the runtime: {e}")))?;
    let quiet = args.quiet;
    let total = args.games;
    let summary = runtime
        .block_on(run_match(opts, |record, so_far| {
            if quiet {
                return;
            }
            println!(
                "Finished game {} ({} vs {}): {} {{{}}}",
                record.round, record.white, record.black, record.outcome, record.detail
            );
            let w = so_far.wdl;
            println!(
                "Score of {a} vs {b}: {} - {} - {}  [{:.3}] {}/{total}",
                w.wins,
                w.losses,
                w.draws,
                w.score().unwrap_or(0.5),
                w.games()
            );
        }))
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    let w = summary.wdl;
    println!(
        "Result of {a} vs {b}: {} - {} - {} (W - L - D), {} games",
        w.wins,
        w.losses,
        w.draws,
        w.games()
    );
    let los_text = los(w)
        .map(|p| format!("{:.1} %", p * 100.0))
        .unwrap_or_else(|| "n/a (no decisive games)".into());
    println!(
        "Elo difference: {}, LOS: {los_text}, draw ratio: {:.1} %",
        trinomial_elo(w).describe(),
        w.draw_ratio().unwrap_or(0.0) * 100.0
    );
    let ends: Vec<String> = summary
        .terminations
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    println!("Terminations: {}", ends.join(", "));
    if let Some((median, p99, max)) = percentiles(&summary.latency_us) {
        println!(
            "Referee latency per move (measured minus engine-reported time, {} moves): median {median} us, p99 {p99} us, max {max} us",
            summary.latency_us.len()
        );
    }
    Ok(())
}
