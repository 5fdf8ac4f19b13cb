//! Command-line definitions and dispatch. Exit codes: 0 success, 1 an illegal move in `replay`,
//! 2 bad input (unknown game, malformed FEN or move, bad flag).

mod bench;
mod configcmd;
mod progress;
mod ratecmd;
mod rules;
mod runcmd;
mod summary;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "arbiter",
    version,
    about = "Referee and tournament harness for laser-chess and variant engines",
    long_about = "arbiter referees games between engines with an exact built-in rules engine.\n\n\
Games: leiserchess (2018, 8x8), leiserchess2012 (10x10), laserchess (10x8),\n\
leaperhouse (10x10 with drops), ultima (Baroque chess).\n\
Run `arbiter games` to list them with their start positions.",
    after_help = "Examples:\n  \
arbiter perft leiserchess 4\n  \
arbiter replay leiserchess g4g5 e6e7 g5g4\n  \
arbiter show leiserchess2012 --fen 'ss9/10/10/10/10/10/10/10/10/9NN W'\n  \
arbiter perft laserchess 3 --setup curiosity\n  \
arbiter replay leaperhouse e3e4 e8e7 P@e5\n  \
arbiter bench --full"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaves of the move tree, one line `perft <depth> <nodes>` per depth on stdout.
    ///
    /// Counts follow RULINGS.md: for the Leiserchess games Ko is not applied and a move that zaps a
    /// King is a leaf. Timing goes to stderr so the output can be compared byte for byte.
    Perft {
        /// Game id (see `arbiter games`).
        game: String,
        /// Count to this depth, printing every depth from 1.
        depth: u32,
        /// Start from this position instead of the start position (or a setup name).
        #[arg(long, conflicts_with = "setup")]
        fen: Option<String>,
        /// Start from a named setup (laserchess: ace, curiosity, grail, mercury, sophie).
        #[arg(long)]
        setup: Option<String>,
        /// Instead, print the count below each move at DEPTH (`<move> <nodes>`), then the total.
        #[arg(long)]
        divide: bool,
    },
    /// Replay moves through the referee: one line per ply, then the final FEN and result.
    ///
    /// Output: `ply <n> <move>` (with `removed <piece>@<square>` when a piece is zapped or
    /// captured), then `fen <FEN>`, then `result <1-0|0-1|1/2-1/2|*> <termination>`.
    /// An illegal move stops the replay with its ply number and exit code 1.
    /// Move numbers such as `12.` are skipped, so a recorded game can be pasted as is.
    Replay {
        game: String,
        /// Start from this position (or a setup name) instead of the start position.
        #[arg(long, conflicts_with = "setup")]
        fen: Option<String>,
        /// Start from a named setup (laserchess: ace, curiosity, grail, mercury, sophie).
        #[arg(long)]
        setup: Option<String>,
        /// Moves in the game's notation, as separate arguments or in one quoted string.
        #[arg(num_args = 0.., allow_hyphen_values = true)]
        moves: Vec<String>,
    },
    /// Draw the board as text, after optional moves.
    Show {
        game: String,
        /// Start from this position (or a setup name) instead of the start position.
        #[arg(long, conflicts_with = "setup")]
        fen: Option<String>,
        /// Start from a named setup (laserchess: ace, curiosity, grail, mercury, sophie).
        #[arg(long)]
        setup: Option<String>,
        #[arg(num_args = 0.., allow_hyphen_values = true)]
        moves: Vec<String>,
    },
    /// List the games arbiter referees, with their start positions.
    Games,
    /// Play a match between two engines: game pairs with colours reversed, concurrently.
    ///
    /// Results go to reports/<name>/ (games.csv, standings.csv, crosstable.csv, games.pgn,
    /// report.md, report.html) and a journal that `--resume <dir>` continues from.
    ///
    /// Example (the bundled engines, searching vs greedy, as an SPRT):
    ///   arbiter match --games 400 --concurrency 2 \
    ///     --engine cmd=target/release/arbiter-engine name=search option.Style=search \
    ///     --engine cmd=target/release/arbiter-engine name=greedy option.Style=greedy \
    ///     --each tc=2+0.02 --sprt elo0=0 elo1=10 alpha=0.05 beta=0.05
    #[command(verbatim_doc_comment)]
    Match(Box<runcmd::MatchArgs>),
    /// Play a round robin or gauntlet of several engines and rate them jointly.
    ///
    /// Without --engine, three bundled engines of different strengths play a short
    /// round robin (the quick start).
    ///
    /// Example:
    ///   arbiter tournament --rounds 10 --concurrency 2 --each tc=2+0.02 \
    ///     --engine cmd=./v1 name=v1 --engine cmd=./v2 name=v2 --engine cmd=./v3 name=v3
    #[command(verbatim_doc_comment)]
    Tournament(Box<runcmd::TournamentArgs>),
    /// Run a tournament described in a file: arbiter's TOML (see tournament.example.toml) or
    /// the MIT 6.172 autotester's .txt configuration.
    Run {
        /// The configuration file (.toml, or the autotester's key = value .txt).
        file: std::path::PathBuf,
        /// Print only the final result.
        #[arg(long)]
        quiet: bool,
        /// Output directory (instead of reports/<name>/, the name from the file's name or title).
        #[arg(long, conflicts_with = "resume")]
        out: Option<std::path::PathBuf>,
        /// Continue the interrupted run in this directory, with the settings it was started with.
        #[arg(long, value_name = "DIR")]
        resume: Option<std::path::PathBuf>,
    },
    /// Make an opening book: random legal lines that end roughly balanced and quiet.
    ///
    /// The books in openings/ were made with the defaults, e.g.
    ///   arbiter book --game ultima --out openings/ultima.txt
    #[command(verbatim_doc_comment)]
    Book {
        #[arg(long)]
        game: String,
        /// Number of distinct openings.
        #[arg(long, default_value_t = 60)]
        count: usize,
        /// Plies per opening.
        #[arg(long, default_value_t = 6)]
        plies: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Largest material imbalance accepted, in centipawns.
        #[arg(long, default_value_t = 0)]
        max_imbalance: i32,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Rate the players of existing PGN files jointly and write the report.
    Rate(ratecmd::RateArgs),
    /// Measure perft speed of every game and the referee's own cost with instant engines.
    ///
    /// Referee rows: two bundled random movers in the MIT dialect (they report microseconds),
    /// leiserchess, at concurrency 1 and 2, without and with --affinity: arbiter's own CPU per
    /// ply and per game (engines excluded), games per second, per-move latency (measured minus
    /// engine-reported time), peak memory. --full: deeper perft, 1,000-game matches and a
    /// 10,000-game run.
    ///
    /// --sprt-sim checks an SPRT's bounds instead: simulated tests at Elo = elo0 and elo1 on
    /// several pair distributions (with and without draws and opening bias) print the measured
    /// false-positive and false-negative rates and the average number of pairs, e.g.
    /// `arbiter bench --sprt-sim "elo0=0 elo1=5 alpha=0.05 beta=0.05" --runs 2000`.
    Bench {
        /// Deeper, slower runs (the figures quoted in the README).
        #[arg(long)]
        full: bool,
        /// Only perft, and only for this game.
        #[arg(long, conflicts_with = "referee")]
        game: Option<String>,
        /// Only the referee rows (no perft).
        #[arg(long)]
        referee: bool,
        /// Also write the table as CSV to this file.
        #[arg(long)]
        csv: Option<std::path::PathBuf>,
        /// Simulate SPRTs with these bounds (as for --sprt) instead of timing anything.
        #[arg(long, value_name = "SPRT", conflicts_with_all = ["game", "referee", "full"])]
        sprt_sim: Option<String>,
        /// Simulated tests per distribution and hypothesis, with --sprt-sim.
        #[arg(long, default_value_t = 1000, requires = "sprt_sim")]
        runs: u64,
    },
}

/// A failure to report at the edge, with the exit code it deserves.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    pub fn illegal(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
}

/// `--engine a=1 b=2 --engine c=3` as one group of settings per `--engine`.
fn engine_groups(matches: &clap::ArgMatches) -> Vec<Vec<String>> {
    matches
        .subcommand()
        .and_then(|(_, sub)| sub.try_get_occurrences::<String>("engine").ok().flatten())
        .map(|occurrences| occurrences.map(|o| o.cloned().collect()).collect())
        .unwrap_or_default()
}

pub fn run() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, engine_groups(&m))));
    let (cli, groups) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    finish(resolve(cli.command, groups).and_then(dispatch))
}

/// The command to carry out: with its `--engine` groups and command line for runs, a
/// configuration file turned into the tournament it describes, a `--resume` into the run saved in
/// its folder (with the flags that may change).
fn resolve(mut command: Command, groups: Vec<Vec<String>>) -> Result<Command, Failure> {
    let invocation: Vec<String> = std::env::args().skip(2).collect();
    match &mut command {
        Command::Match(args) => {
            args.run.engine_groups = groups;
            args.run.invocation = invocation.clone();
        }
        Command::Tournament(args) => {
            args.run.engine_groups = groups;
            args.run.invocation = invocation.clone();
        }
        Command::Run {
            file,
            quiet,
            out,
            resume,
        } => command = from_config(file, *quiet, out.as_deref(), resume.as_deref())?,
        _ => {}
    }
    let resume_dir = match &command {
        Command::Match(a) => a.run.resume.clone(),
        Command::Tournament(a) => a.run.resume.clone(),
        _ => None,
    };
    let Some(dir) = resume_dir else {
        return Ok(command);
    };
    let (quiet, concurrency) = resume_overrides(&invocation)?;
    let mut command = resumed(&dir)?;
    let run = match &mut command {
        Command::Match(a) => Some(&mut a.run),
        Command::Tournament(a) => Some(&mut a.run),
        _ => None,
    };
    if let Some(run) = run {
        run.quiet |= quiet;
        if let Some(c) = concurrency {
            run.concurrency = c;
        }
    }
    Ok(command)
}

/// Carries out a command; returns the exit code.
fn dispatch(command: Command) -> Result<u8, Failure> {
    match command {
        Command::Perft {
            game,
            depth,
            fen,
            setup,
            divide,
        } => rules::start(&game, fen, setup)
            .and_then(|(entry, fen)| rules::perft(entry, depth, fen.as_deref(), divide))
            .map(|_| 0),
        Command::Replay {
            game,
            fen,
            setup,
            moves,
        } => rules::start(&game, fen, setup)
            .and_then(|(entry, fen)| rules::replay(entry, fen.as_deref(), &moves))
            .map(|_| 0),
        Command::Show {
            game,
            fen,
            setup,
            moves,
        } => rules::start(&game, fen, setup)
            .and_then(|(entry, fen)| rules::show(entry, fen.as_deref(), &moves))
            .map(|_| 0),
        Command::Games => rules::list_games().map(|_| 0),
        Command::Match(args) => runcmd::run_match(*args),
        Command::Tournament(mut args) => {
            if args.run.engine_groups.is_empty() {
                args.run.engine_groups = bundled_engines()?;
                if args.run.each.is_empty() {
                    args.run.each = vec!["tc=1+0.01".into()];
                }
                if args.run.concurrency == 1 {
                    args.run.concurrency = 2;
                }
            }
            runcmd::run_tournament(*args)
        }
        Command::Rate(args) => ratecmd::run(args),
        Command::Book {
            game,
            count,
            plies,
            seed,
            max_imbalance,
            out,
        } => make_book(&game, count, plies, seed, max_imbalance, out.as_deref()),
        Command::Run { .. } => unreachable!("replaced by the tournament it describes"),
        Command::Bench {
            full,
            game,
            referee,
            csv,
            sprt_sim,
            runs,
        } => match sprt_sim {
            Some(bounds) => bench::sprt_simulation(&bounds, runs).map(|_| 0),
            None => bench::run_bench(full, game.as_deref(), csv.as_deref(), referee).map(|_| 0),
        },
    }
}

fn finish(result: Result<u8, Failure>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("error: {}", clip(&f.message));
            ExitCode::from(f.code)
        }
    }
}

/// Characters of a message line kept at its start and at its end when it is cut.
const CLIP_HEAD: usize = 200;
const CLIP_TAIL: usize = 80;

/// An error message that echoes a huge input (a 300 KB "move", a book line of 100,000 moves)
/// keeps each line's start and end, where the file, line and position are said, and says how
/// much was left out.
pub fn clip(message: &str) -> String {
    message
        .lines()
        .map(|line| {
            let chars: Vec<char> = line.chars().collect();
            if chars.len() <= CLIP_HEAD + CLIP_TAIL + 40 {
                return line.to_string();
            }
            let head: String = chars[..CLIP_HEAD].iter().collect();
            let tail: String = chars[chars.len() - CLIP_TAIL..].iter().collect();
            let cut = chars.len() - CLIP_HEAD - CLIP_TAIL;
            format!("{head} [... {cut} characters cut ...] {tail}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn make_book(
    game: &str,
    count: usize,
    plies: usize,
    seed: u64,
    max_imbalance: i32,
    out: Option<&std::path::Path>,
) -> Result<u8, Failure> {
    use arbiter::tournament::bookgen::{generate, BookSpec};
    let entry = rules::game_entry(game)?;
    let spec = BookSpec {
        count,
        plies,
        seed,
        max_imbalance,
    };
    let lines = generate(entry, &spec).map_err(Failure::bad_input)?;
    let mut text = format!(
        "# {} openings for {}, made by: arbiter book --game {} --count {count} --plies {plies} --seed {seed} --max-imbalance {max_imbalance}\n",
        lines.len(),
        entry.id,
        entry.id
    );
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    match out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?,
        None => print!("{text}"),
    }
    Ok(0)
}

/// The tournament a configuration file describes, parsed as if typed.
fn from_config(
    file: &std::path::Path,
    quiet: bool,
    out: Option<&std::path::Path>,
    resume: Option<&std::path::Path>,
) -> Result<Command, Failure> {
    let mut args = configcmd::tournament_argv(file)?;
    if let Some(dir) = out {
        strip_flag(&mut args, "--name");
        strip_flag(&mut args, "--out");
        args.extend(["--out".into(), dir.display().to_string()]);
    }
    let mut argv = vec!["arbiter".to_string(), "tournament".to_string()];
    argv.extend(args.iter().cloned());
    if quiet {
        argv.push("--quiet".into());
    }
    if let Some(dir) = resume {
        argv.extend(["--resume".into(), dir.display().to_string()]);
    }
    let matches = Cli::command()
        .try_get_matches_from(&argv)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
    let mut cli = Cli::from_arg_matches(&matches)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
    if let Command::Tournament(a) = &mut cli.command {
        a.run.engine_groups = engine_groups(&matches);
        a.run.invocation = args;
    }
    Ok(cli.command)
}

/// Removes a flag and its value from an argument list.
fn strip_flag(args: &mut Vec<String>, flag: &str) {
    if let Some(i) = args.iter().position(|a| a == flag) {
        args.drain(i..(i + 2).min(args.len()));
    }
}

/// The flags that may accompany `--resume`: `--quiet` and `--concurrency` change how the rest
/// is played, not what is played. Any other flag would silently not apply, so it is refused.
fn resume_overrides(given: &[String]) -> Result<(bool, Option<usize>), Failure> {
    let (mut quiet, mut concurrency, mut refused) = (false, None, Vec::new());
    let mut tokens = given.iter().peekable();
    while let Some(token) = tokens.next() {
        let (flag, inline) = match token.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (token.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| tokens.next().cloned());
        match flag {
            "--resume" => {
                value();
            }
            "--quiet" => quiet = true,
            "--concurrency" => {
                let v = value().unwrap_or_default();
                concurrency =
                    Some(v.parse::<usize>().ok().filter(|&c| c > 0).ok_or_else(|| {
                        Failure::bad_input(format!(
                            "--concurrency '{v}' must be a whole number of at least 1"
                        ))
                    })?);
            }
            f if f.starts_with('-') => refused.push(f.to_string()),
            _ => {}
        }
    }
    if refused.is_empty() {
        Ok((quiet, concurrency))
    } else {
        Err(Failure::bad_input(format!(
            "--resume continues a run with the settings it was started with; {} cannot be \
             changed on resume (only --quiet and --concurrency can). To play more or \
             differently, start a new run with --out or --name.",
            refused.join(", ")
        )))
    }
}

/// The command saved in a run directory, to continue it (`--resume <dir>`).
fn resumed(dir: &std::path::Path) -> Result<Command, Failure> {
    let (command, args) = runcmd::saved_invocation(dir)?;
    let mut argv = vec!["arbiter".to_string(), command];
    argv.extend(args);
    let matches = Cli::command()
        .try_get_matches_from(&argv)
        .map_err(|e| Failure::bad_input(format!("cannot resume {}: {e}", dir.display())))?;
    let mut cli = Cli::from_arg_matches(&matches)
        .map_err(|e| Failure::bad_input(format!("cannot resume {}: {e}", dir.display())))?;
    let groups = engine_groups(&matches);
    match &mut cli.command {
        Command::Match(a) => {
            a.run.engine_groups = groups;
            a.run.resume = Some(dir.to_path_buf());
        }
        Command::Tournament(a) => {
            a.run.engine_groups = if groups.is_empty() {
                bundled_engines()?
            } else {
                groups
            };
            a.run.resume = Some(dir.to_path_buf());
            if a.run.each.is_empty() && a.run.engine.is_empty() {
                a.run.each = vec!["tc=1+0.01".into()];
            }
        }
        _ => {
            return Err(Failure::bad_input(format!(
                "{} is not a run directory",
                dir.display()
            )))
        }
    }
    Ok(cli.command)
}

/// Three bundled engines of clearly different strengths, for the quick start.
fn bundled_engines() -> Result<Vec<Vec<String>>, Failure> {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("arbiter-engine")))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            Failure::bad_input(
                "the bundled engine arbiter-engine is not next to arbiter: build the workspace (cargo build --release), or give --engine",
            )
        })?;
    let cmd = format!("cmd={}", exe.display());
    Ok(["search", "greedy", "random"]
        .iter()
        .map(|style| {
            vec![
                cmd.clone(),
                format!("name={style}"),
                format!("option.Style={style}"),
            ]
        })
        .collect())
}
