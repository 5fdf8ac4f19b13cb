//! `arbiter match` and `arbiter tournament`: engines as processes, a schedule of game pairs,
//! results journalled to `reports/<name>/` and reported there.

use super::progress::{Plan, Reporter};
use super::Failure;
use arbiter::engine::EngineConfig;
use arbiter::referee::{Adjudication, DrawRule, ResignRule};
use arbiter::stats::{RatingOptions, Sprt};
use arbiter::tournament::journal::JOURNAL_FILE;
use arbiter::tournament::openings::load_book;
use arbiter::tournament::{run, Format, RunError, RunOptions};
use clap::ArgAction;
use std::path::{Path, PathBuf};

/// Settings shared by `match` and `tournament`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// Game id (see `arbiter games`).
    #[arg(long, default_value = "leiserchess")]
    pub game: String,
    /// An engine, as KEY=VALUE settings: cmd=<program> (required), name=, arg= (repeatable),
    /// dir=, proto=uci|leiserchess|xboard, tc=[moves/]base[+inc] (seconds), st=<seconds per move>,
    /// depth=, nodes=, timemargin=<ms>, stall=<seconds>, handshake=<seconds>,
    /// option.<Name>=<value>.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE", action = ArgAction::Append)]
    pub engine: Vec<String>,
    /// `--engine` settings grouped by occurrence (filled from clap's matches, not a flag).
    #[arg(skip)]
    pub engine_groups: Vec<Vec<String>>,
    /// The arguments that started this run, saved for `--resume` (not a flag).
    #[arg(skip)]
    pub invocation: Vec<String>,
    /// Settings applied to every engine (an engine's own settings win).
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub each: Vec<String>,
    /// Games played at the same time.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Pin each concurrent game to one CPU: its referee thread and both engines (engines
    /// started by it inherit the CPU). Saves the referee most of its cost per move with fast
    /// engines; leave it off for engines that search with several threads.
    #[arg(long)]
    pub affinity: bool,
    /// Opening book: one line per opening, moves (`g4g5 e6e7`) or `fen <FEN> [moves ...]`.
    /// Default: openings/<game>.txt if it exists, else the start position.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Use only the first N plies of each book line.
    #[arg(long)]
    pub book_plies: Option<usize>,
    /// Take openings in a seeded random order instead of book order.
    #[arg(long)]
    pub random_openings: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Draw a game after this many plies (termination "max plies").
    #[arg(long, default_value_t = 500)]
    pub max_plies: usize,
    /// Adjudicate a draw: movenumber=N movecount=N score=CP.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub draw: Vec<String>,
    /// Adjudicate a loss: movecount=N score=CP.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub resign: Vec<String>,
    /// Fix one engine's rating in the joint ratings: name=elo.
    #[arg(long, value_name = "NAME=ELO")]
    pub anchor: Option<String>,
    /// Name of the run: its output goes to reports/<name>/.
    #[arg(long)]
    pub name: Option<String>,
    /// Output directory (instead of reports/<name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the interrupted run in this directory, with the settings it was started with.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Write all engine input and output, timestamped, to this file.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// PGN Event tag and report title.
    #[arg(long)]
    pub event: Option<String>,
    /// Print only the final result.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Number of games; each opening is played twice with colours reversed.
    #[arg(long, default_value_t = 2)]
    pub games: u64,
    /// Stop as soon as a sequential test decides: elo0=<e> elo1=<e> alpha=<a> beta=<b>
    /// [model=normalized|logistic]. Exit code 0: H1 accepted, 1: H0, 3: undecided at --games.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub sprt: Vec<String>,
    /// Also write every game to this PGN file.
    #[arg(long)]
    pub pgnout: Option<PathBuf>,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TournamentArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// round-robin (everyone meets everyone) or gauntlet (the first engine meets the rest).
    #[arg(long, default_value = "round-robin")]
    pub format: String,
    /// Rounds: in each, every pairing plays one game pair (an opening with both colours).
    #[arg(long, default_value_t = 4)]
    pub rounds: u64,
    /// Stop after this many games in all, even mid-round (the autotester's game_rounds).
    #[arg(long)]
    pub games: Option<u64>,
    /// Also write every game to this PGN file.
    #[arg(long)]
    pub pgnout: Option<PathBuf>,
}

pub fn adjudication(
    draw: &[String],
    resign: &[String],
    max_plies: usize,
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
        max_plies: Some(max_plies),
    })
}

fn engines(specs: &[Vec<String>], each: &[String]) -> Result<Vec<EngineConfig>, Failure> {
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            EngineConfig::parse(spec, each)
                .map_err(|e| Failure::bad_input(format!("--engine #{}: {e}", i + 1)))
        })
        .collect()
}

/// A run name is one plain path component, so output cannot land outside `reports/`.
pub fn check_run_name(name: &str) -> Result<(), Failure> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Failure::bad_input(format!(
            "run name '{name}' must be letters, digits, '-', '_' or '.', not starting with '.'"
        )))
    }
}

fn default_name(kind: &str, game: &str) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{kind}-{game}-{secs}")
}

/// Where a run writes, and whether it continues an earlier one.
fn out_dir(args: &RunArgs, kind: &str) -> Result<(PathBuf, bool), Failure> {
    if let Some(dir) = &args.resume {
        return Ok((dir.clone(), true));
    }
    if let Some(dir) = &args.out {
        return Ok((dir.clone(), false));
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| default_name(kind, &args.game));
    check_run_name(&name)?;
    Ok((Path::new("reports").join(name), false))
}

/// Saves the command line so that `--resume <dir>` can start the same run again.
fn save_invocation(dir: &Path, kind: &str, args: &[String]) -> Result<(), Failure> {
    let json = serde_json::json!({ "command": kind, "args": args });
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::bad_input(format!("cannot create {}: {e}", dir.display())))?;
    std::fs::write(dir.join("run.json"), json.to_string()).map_err(|e| {
        Failure::bad_input(format!(
            "cannot write {}: {e}",
            dir.join("run.json").display()
        ))
    })
}

/// The saved command line of the run in `dir`, for `--resume`.
pub fn saved_invocation(dir: &Path) -> Result<(String, Vec<String>), Failure> {
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Failure::bad_input(format!(
            "cannot resume {}: {e} (is it a run directory?)",
            dir.display()
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", path.display())))?;
    let command = value["command"].as_str().unwrap_or("").to_string();
    let args = value["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok((command, args))
}

fn rating_options(anchor: &Option<String>) -> Result<RatingOptions, Failure> {
    let mut opts = RatingOptions::default();
    if let Some(a) = anchor {
        let (name, elo) = a
            .split_once('=')
            .and_then(|(n, e)| e.parse::<f64>().ok().map(|e| (n.to_string(), e)))
            .ok_or_else(|| Failure::bad_input(format!("--anchor '{a}' must be name=elo")))?;
        opts.anchor = Some((name, elo));
    }
    Ok(opts)
}

/// The most games played at once.
pub const MAX_CONCURRENCY: usize = 256;

/// Schedules past these sizes get a warning before they start: they take days, and reports of
/// thousands of engines leave out their square tables.
const LARGE_SCHEDULE: u64 = 1_000_000;
const MANY_ENGINES: usize = 500;

/// Exit code of a run stopped by the machine rather than the input: a full disk, a folder that
/// went away. Bad input is 2.
pub const EXIT_RUNTIME: u8 = 5;

/// Exit code of a run stopped because an engine kept failing to start.
pub const EXIT_ENGINE_START: u8 = 4;

/// How the user can call arbiter again: `arbiter` when that is what is on PATH, else the path
/// this process was started by.
pub fn self_command() -> String {
    let invoked = std::env::args().next().unwrap_or_else(|| "arbiter".into());
    if invoked.contains('/') {
        invoked
    } else {
        "arbiter".into()
    }
}

/// An output file must be creatable before the first game: a missing folder or a folder without
/// write permission found after an hour of games would lose them.
fn check_output_file(flag: &str, path: &Path) -> Result<(), Failure> {
    let refuse = |why: String| {
        Err(Failure::bad_input(format!(
            "{flag} {}: {why}",
            path.display()
        )))
    };
    if path.is_dir() {
        return refuse("is a folder, not a file".into());
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !folder.is_dir() {
        return refuse(format!("the folder {} does not exist", folder.display()));
    }
    // Opening is the only test that holds for every user (root included) and file system
    // (read-only mounts, /proc): a file that did not exist is removed again at once.
    let probe = if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|_| std::fs::remove_file(path))
    };
    if let Err(e) = probe {
        return refuse(format!("cannot write there: {e}"));
    }
    Ok(())
}

/// Mends a resumed run's journal (a torn last line is cut, the file kept beside it), says what
/// was found, and returns how many games it holds.
fn resume_journal(path: &Path) -> Result<u64, Failure> {
    use arbiter::tournament::journal;
    if let Some(note) = journal::repair(path)
        .map_err(|e| Failure::bad_input(format!("cannot repair {}: {e}", path.display())))?
    {
        eprintln!("{note}");
    }
    let summary = journal::read(path, |_| ()).map_err(Failure::bad_input)?;
    if let Some(note) = summary.note(path) {
        eprintln!("{note}");
    }
    Ok(summary.entries)
}

/// Runs a match or tournament; returns the process exit code.
/// The checks a run's settings pass before anything starts: counts, limits, names, programs and
/// output files. A refused run leaves no trace.
fn check_run(
    args: &RunArgs,
    kind: &str,
    rounds: u64,
    limit: Option<u64>,
    engines: &[EngineConfig],
    pgnout: &Option<PathBuf>,
) -> Result<(), Failure> {
    match (kind, engines.len()) {
        ("match", 2) => {}
        ("match", n) => {
            return Err(Failure::bad_input(format!(
                "a match takes exactly two --engine, not {n} (for more, use `arbiter tournament`)"
            )))
        }
        (_, n) if n < 2 => {
            return Err(Failure::bad_input(format!(
                "a tournament needs at least two --engine, not {n}"
            )))
        }
        _ => {}
    }
    if args.concurrency > MAX_CONCURRENCY {
        return Err(Failure::bad_input(format!(
            "--concurrency {}: at most {MAX_CONCURRENCY} games at a time (each runs two engine \
             processes and a thread of its own)",
            args.concurrency
        )));
    }
    if args.concurrency == 0 || rounds == 0 || limit == Some(0) {
        return Err(Failure::bad_input(
            "--games, --rounds and --concurrency must be at least 1",
        ));
    }
    for (i, cfg) in engines.iter().enumerate() {
        arbiter::tournament::check_engine_command(cfg).map_err(Failure::bad_input)?;
        if engines[..i].iter().any(|e| e.name == cfg.name) {
            return Err(Failure::bad_input(format!(
                "two engines are named '{}': give each a different name=",
                cfg.name
            )));
        }
    }
    for (flag, path) in [("--pgnout", pgnout), ("--log", &args.log)] {
        if let Some(path) = path {
            check_output_file(flag, path)?;
        }
    }
    Ok(())
}

/// Games in the schedule: rounds of one game pair per pairing, cut at `limit`.
fn schedule_size(engines: usize, format: Format, rounds: u64, limit: Option<u64>) -> u64 {
    let n = engines as u64;
    let pairings = if format == Format::Gauntlet || n == 2 {
        n - 1
    } else {
        n.saturating_mul(n - 1) / 2
    };
    let full = rounds.saturating_mul(pairings).saturating_mul(2);
    limit.unwrap_or(full).min(full)
}

fn warn_if_huge(total: u64, engines: usize) {
    if total > LARGE_SCHEDULE || engines > MANY_ENGINES {
        eprintln!(
            "warning: {total} games scheduled for {engines} engines; at 10 games a second that is \
             {:.1} days. Joint ratings are left out past {} engines and square tables past {}.",
            total as f64 / 10.0 / 86_400.0,
            arbiter::stats::ratings::MAX_PLAYERS,
            arbiter::tournament::report::MATRIX_ENGINES
        );
    }
}

/// The run's folder, locked for this process; a new run's command line saved in it.
fn prepare_folder(
    args: &RunArgs,
    kind: &str,
) -> Result<(PathBuf, bool, arbiter::tournament::RunLock), Failure> {
    let (out_dir, resume) = out_dir(args, kind)?;
    // Held until the run ends: a second arbiter on the same folder would play the same games.
    let lock = arbiter::tournament::lock_run_dir(&out_dir).map_err(Failure::bad_input)?;
    if !resume {
        if out_dir.join(JOURNAL_FILE).exists() {
            return Err(Failure::bad_input(format!(
                "{} already holds a run: continue it with --resume {}",
                out_dir.display(),
                out_dir.display()
            )));
        }
        save_invocation(&out_dir, kind, &args.invocation)?;
    }
    Ok((out_dir, resume, lock))
}

/// How a run that stopped early is reported: each cause with its exit code and what to do.
fn run_failure(e: RunError, kind: &str, out_dir: &Path) -> Failure {
    let resume = format!("{} {kind} --resume {}", self_command(), out_dir.display());
    match e {
        RunError::EngineStart(message) => Failure {
            code: EXIT_ENGINE_START,
            message: format!("{message}. Fix the engine, then continue with: {resume}"),
        },
        e @ RunError::Output { .. } => Failure {
            code: EXIT_RUNTIME,
            message: format!(
                "{e}. The games finished before it are kept: free the space (or fix the \
                 folder), then continue with: {resume}"
            ),
        },
        e => Failure::bad_input(e.to_string()),
    }
}

/// Runs a match or tournament; returns the process exit code.
fn execute(
    args: &RunArgs,
    kind: &str,
    format: Format,
    rounds: u64,
    limit: Option<u64>,
    sprt: Option<Sprt>,
    pgnout: &Option<PathBuf>,
) -> Result<u8, Failure> {
    let entry = super::rules::game_entry(&args.game)?;
    let engines = engines(&args.engine_groups, &args.each)?;
    check_run(args, kind, rounds, limit, &engines, pgnout)?;
    let book = args.openings.clone().or_else(|| {
        let default = PathBuf::from(format!("openings/{}.txt", entry.id));
        default.is_file().then_some(default)
    });
    let openings = match &book {
        Some(path) => load_book(path, entry, args.book_plies)
            .map_err(|e| Failure::bad_input(e.to_string()))?,
        None => Vec::new(),
    };
    let rating = rating_options(&args.anchor)?;
    let adjudication = adjudication(&args.draw, &args.resign, args.max_plies)?;
    let total = schedule_size(engines.len(), format, rounds, limit);
    if !args.quiet {
        warn_if_huge(total, engines.len());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::bad_input(format!("cannot start the runtime: {e}")))?;
    runtime
        .block_on(arbiter::tournament::preflight(&engines, entry.id))
        .map_err(Failure::bad_input)?;
    let (out_dir, resume, _lock) = prepare_folder(args, kind)?;
    let already = if resume {
        resume_journal(&out_dir.join(JOURNAL_FILE))?
    } else {
        0
    };
    // As the run will cap it: no more workers than games.
    let concurrency = args.concurrency.min(total.max(1) as usize);
    let reporter = Reporter::start(
        &Plan {
            kind,
            game: entry.id,
            format: if engines.len() == 2 {
                "match"
            } else {
                format.as_str()
            },
            engines: &engines,
            games: total,
            already: already.min(total),
            concurrency,
            openings: book.as_deref().map(|b| (b, openings.len())),
            out_dir: &out_dir,
        },
        args.quiet,
    );
    let names: Vec<String> = engines.iter().map(|e| e.name.clone()).collect();
    let opts = RunOptions {
        entry,
        engines,
        format,
        rounds,
        limit,
        concurrency: args.concurrency,
        openings,
        random_order: args.random_openings,
        seed: args.seed,
        adjudication,
        out_dir: out_dir.clone(),
        event: args
            .event
            .clone()
            .unwrap_or_else(|| format!("arbiter {kind}")),
        sprt,
        rating,
        log: args.log.clone(),
        resume,
        affinity: args.affinity,
    };
    let outcome = runtime.block_on(run(opts, |p| reporter.game(&p)));
    reporter.finish();
    let outcome = outcome.map_err(|e| run_failure(e, kind, &out_dir))?;
    if let Some(path) = pgnout {
        std::fs::copy(out_dir.join("games.pgn"), path).map_err(|e| Failure {
            code: EXIT_RUNTIME,
            message: format!("cannot write {}: {e}", path.display()),
        })?;
    }
    super::summary::print(&outcome, &names, &rating_options(&args.anchor)?, sprt);
    println!("Report: {}", out_dir.join("report.html").display());
    if outcome.interrupted {
        println!(
            "Interrupted after {} games; {} still to play. Continue with: {} {kind} --resume {}",
            outcome.totals.games,
            outcome.unplayed,
            self_command(),
            out_dir.display()
        );
        return Ok(130);
    }
    Ok(super::summary::exit_code(sprt.as_ref(), outcome.decision))
}

pub fn run_match(args: MatchArgs) -> Result<u8, Failure> {
    let sprt = (!args.sprt.is_empty())
        .then(|| Sprt::parse(&args.sprt.join(" ")))
        .transpose()
        .map_err(|e| Failure::bad_input(format!("--sprt: {e}")))?;
    if args.games == 0 {
        return Err(Failure::bad_input("--games must be at least 1"));
    }
    execute(
        &args.run,
        "match",
        Format::RoundRobin,
        args.games.div_ceil(2),
        Some(args.games),
        sprt,
        &args.pgnout,
    )
}

pub fn run_tournament(args: TournamentArgs) -> Result<u8, Failure> {
    let format = Format::parse(&args.format).ok_or_else(|| {
        Failure::bad_input(format!(
            "--format '{}': expected round-robin or gauntlet",
            args.format
        ))
    })?;
    execute(
        &args.run,
        "tournament",
        format,
        args.rounds,
        args.games,
        None,
        &args.pgnout,
    )
}
