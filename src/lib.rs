//! arbiter's command line: it parses, prints, draws progress and serves the live page over the
//! library (`arbiter-core`, imported as `arbiter`), which does the work and carries no command-line
//! or web dependency.
//!
//! Command-line definitions and dispatch. Exit codes: 0 success, 1 an illegal move in `replay`
//! (an SPRT's H0 in a run), 2 bad input (unknown game, malformed FEN or move, bad flag), 3 an
//! SPRT undecided, 4 an engine that kept failing to start, 5 the machine (disk, folder), 6 a
//! `--strict` run stopped by an engine's fault, 130 interrupted.

#[macro_use]
extern crate arbiter;

mod benchcmd;
mod bisectcmd;
mod choices;
mod cluster;
mod compliance;
mod configcmd;
#[cfg(test)]
mod every_setting;
mod exit;
mod overload;
mod progress;
mod ratecmd;
mod rulescmd;
mod runargs;
mod runcmd;
mod summary;
mod tunecmd;
mod watch_conn;
mod watchcmd;

use arbiter::compat::{self, tool_lines};
use arbiter::tune::spec::TUNE_FILE;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use exit::Exit;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "arbiter",
    version,
    about = "Referee and tournament harness for laser-chess and variant engines",
    long_about = "arbiter referees games between engines with an exact built-in rules engine.\n\n\
Games: leiserchess (2018, 8x8), leiserchess2012 (10x10), laserchess (10x8),\n\
leaperhouse (10x10 with drops), ultima (Baroque chess), chess.\n\
Run `arbiter games` to list them with their start positions.\n\n\
cutechess-cli and fastchess command lines run as they are (`arbiter -engine cmd=a\n\
-engine cmd=b -each tc=10+0.1 -rounds 200 -repeat`), games counted as the tool the line\n\
was written for counts them: chosen by -dialect fastchess|cutechess, by the name arbiter is\n\
started under (a link named fastchess or cutechess-cli), or by what the line shows; the\n\
banner says which reading was taken.",
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
        /// Game id (see `arbiter games`).
        game: String,
        /// Start from this position (or a setup name) instead of the start position.
        #[arg(long, conflicts_with = "setup")]
        fen: Option<String>,
        /// Start from a named setup (laserchess: ace, curiosity, grail, mercury, sophie).
        #[arg(long)]
        setup: Option<String>,
        /// Moves in the game's notation, as separate arguments or in one quoted string.
        #[arg(num_args = 0..)]
        moves: Vec<String>,
    },
    /// Draw the board as text, after optional moves; --svg also draws it as a picture: the game's
    /// pieces facing their ways in two side colours, the last move's squares, its laser beam and
    /// what it removed, and a legend.
    Show {
        /// Game id (see `arbiter games`).
        game: String,
        /// Start from this position (or a setup name) instead of the start position.
        #[arg(long, conflicts_with = "setup")]
        fen: Option<String>,
        /// Start from a named setup (laserchess: ace, curiosity, grail, mercury, sophie).
        #[arg(long)]
        setup: Option<String>,
        /// Also write the position as an SVG picture to this file (the report's viewer and the
        /// live page draw the same picture).
        #[arg(long, value_name = "FILE")]
        svg: Option<std::path::PathBuf>,
        #[arg(num_args = 0..)]
        moves: Vec<String>,
    },
    /// List the games arbiter referees, with their start positions.
    Games,
    /// Check that a UCI engine does what a match asks of it, step by step (fastchess's
    /// `--compliance ENGINE [ARGS]` runs this too).
    ///
    /// The engine is taken through the handshake (uciok, id name, id author), readiness after
    /// new positions, and searches under several clocks, each step said as it passes. Beyond
    /// fastchess's own steps, every bestmove must be a legal move in the position asked about
    /// (the referee checks it), every info line's numbers whole, and the engine must leave on
    /// `quit`. A step waits 10 s at most. Exit code 0 when every step passed, 1 at the first
    /// that failed (with what the engine wrote), 2 when the engine cannot be started.
    ///
    /// Examples:
    ///   arbiter compliance /usr/games/stockfish
    ///   arbiter compliance --option UCI_Variant=chess target/release/arbiter-engine
    ///   arbiter --compliance ./engine "--threads 1"     # as fastchess takes it
    #[command(verbatim_doc_comment)]
    Compliance {
        /// An option set after the handshake (`setoption name NAME value VALUE`); repeatable.
        #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
        options: Vec<String>,
        /// The engine's program.
        engine: std::path::PathBuf,
        /// Its arguments (one word holding spaces is split, as fastchess does).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Play a match between two engines: game pairs with colours reversed, concurrently
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
    Match(Box<runargs::MatchArgs>),
    /// Play a round robin or gauntlet of several engines and rate them jointly.
    ///
    /// Without --engine, three bundled engines of different strengths play a short
    /// round robin (the quick start).
    ///
    /// Example:
    ///   arbiter tournament --rounds 10 --concurrency 2 --each tc=2+0.02 \
    ///     --engine cmd=./v1 name=v1 --engine cmd=./v2 name=v2 --engine cmd=./v3 name=v3
    #[command(verbatim_doc_comment)]
    Tournament(Box<runargs::TournamentArgs>),
    /// Tune engine options by SPSA, as fishtest does: the engine plays itself at theta ± c,
    /// game pair after game pair, and each pair's result moves theta toward the stronger side.
    ///
    /// Writes <out>/tuned.txt (the values as option.Name=value flags to paste), theta.csv
    /// (theta after every pair), report.html (each parameter's trajectory) and pairs.jsonl
    /// (every pair's values and games; `--resume <out>` continues after a kill). With
    /// --shard K/N (or `slurm`) the tasks of a cluster job tune one theta together; with
    /// --verify an SPRT of tuned against start values follows.
    ///
    /// Example (the bundled engine's evaluation weights, from poor values):
    ///   arbiter tune --game leiserchess --pairs 400 --concurrency 2 \
    ///     --engine cmd=target/release/arbiter-engine name=e --each depth=2 tc=inf \
    ///     --param Material=300,0,400,20,0.05 --param Mobility=0,0,100,5,0.1 \
    ///     --verify elo0=0 elo1=20 alpha=0.05 beta=0.05
    #[command(verbatim_doc_comment)]
    Tune(Box<tunecmd::TuneArgs>),
    /// Find the version that lost the strength: the first of a series of versions at least
    /// --elo weaker than the first, at error rate --alpha, with the fewest games.
    ///
    /// The versions are --engine entries in order, the first the known good one. Every game
    /// moves a probability over where the drop is; each step plays the version whose result
    /// tells most against the first, until one answer (a version, or "no drop") is sure enough.
    /// Each step is a match in <out>/steps/; <out>/report.html draws the probability over the
    /// series and each version's Elo against the first; <out>/bisect.json is for scripts.
    /// Exit code 0: a version found; 1: no drop; 3: undecided at --max-games; --resume <out>
    /// goes on after Ctrl-C or a crash.
    ///
    /// Example (eight builds, the first known good):
    ///   arbiter bisect --elo 10 --concurrency 2 --each tc=2+0.02 \
    ///     --engine cmd=./builds/v1 name=v1 --engine cmd=./builds/v2 name=v2 ... \
    ///     --engine cmd=./builds/v8 name=v8
    #[command(verbatim_doc_comment)]
    Bisect(Box<bisectcmd::BisectArgs>),
    /// Run a tournament (or, with a [tune] section, a tune) described in a file: arbiter's TOML or
    /// the MIT 6.172 autotester's .txt configuration.
    Run {
        /// The configuration file (.toml, or the autotester's key = value .txt); with --resume
        /// the folder's saved settings are used and no file is needed.
        #[arg(required_unless_present = "resume")]
        file: Option<std::path::PathBuf>,
        /// Print only the final result.
        #[arg(long)]
        quiet: bool,
        /// Output directory (instead of reports/<name>/, the name from the file's name or title).
        #[arg(long, conflicts_with = "resume")]
        out: Option<std::path::PathBuf>,
        /// Continue the interrupted run in this directory, with the settings it was started with.
        #[arg(long, value_name = "DIR")]
        resume: Option<std::path::PathBuf>,
        #[command(flatten)]
        split: runargs::SplitArgs,
    },
    /// Join a split run's shard folders into one folder, as one machine would have written it.
    ///
    /// The shards of a run split with `--shard K/N` become one run folder with the files a single
    /// machine would have written (games.csv, standings.csv, crosstable.csv, report...).
    ///
    /// DIR is a shard folder or a folder holding shard-* folders (the run's folder). Every game
    /// is replayed by the rules and checked against the run's schedule; a forged or foreign one
    /// is refused with its file and line. A game found twice is kept once; with two results,
    /// the task holding its claim wins, else it is an error naming both files. Games in no
    /// folder are listed (exit code 3) unless the SPRT had decided before the first of them.
    /// OUT is locked, and a folder of another run is refused; a refused merge changes nothing.
    /// Merging again after more games (or after `--resume OUT`) is safe.
    ///
    /// Example: arbiter merge runs/sprt runs/sprt
    #[command(verbatim_doc_comment)]
    Merge {
        /// The merged run's folder (usually the run's folder holding the shards).
        out: std::path::PathBuf,
        /// Shard folders, or folders holding them.
        #[arg(required = true)]
        dirs: Vec<std::path::PathBuf>,
        /// Print only the merge line and the report's path.
        #[arg(long)]
        quiet: bool,
    },
    /// Upgrade a folder an earlier arbiter wrote to this build's format, in place.
    ///
    /// --resume, merge, --shard and the tasks of `arbiter slurm` read only this build's folder
    /// format and name this command for a folder of the format before. adopt writes each
    /// settings file as this build does (a random-order book keeps the order the run began
    /// with), sealed again under its run's id, so that the run goes on where it stopped. A
    /// folder an older arbiter sealed with a key kept inside it is refused by --resume and
    /// merge, as whoever could write it could have written that key too: if no one else could
    /// write it, adopt checks every seal with that key (a record it does not prove refuses the
    /// adoption, naming file and line, and nothing changes), then seals every record again with
    /// your key and removes the folder's. Everything is checked before anything is written.
    /// FOLDER may be a run's, a tune's, or a split run's folder with its shards.
    ///
    /// Example: arbiter adopt reports/sprt-new-vs-old
    #[command(verbatim_doc_comment)]
    Adopt {
        /// The folder to take over.
        folder: std::path::PathBuf,
    },
    /// Print a bash script that submits a run, a tune or a bisect to Slurm as a job array.
    ///
    /// One shard per array task, and for a run the merge as a job that waits for them all (for
    /// a bisect, `bisect --resume`, which merges its steps and writes its report).
    ///
    /// The run is given after `--` as it would be typed after `arbiter`, with --out on the
    /// cluster's shared file system. Each array task joins the run with `--shard slurm` and
    /// cpus-per-task = --concurrency; the tasks claim game pairs in order, so however few the
    /// cluster runs at once, an SPRT stops near where one machine would. A requeued task
    /// continues; the others play what a dead task left, after its --lease. The run is checked
    /// (settings, book, engines) before the script is printed.
    ///
    /// Example:
    ///   arbiter slurm --shards 50 --time 2:00:00 -- match --games 20000 --concurrency 4 \
    ///     --engine cmd=./new --engine cmd=./old --each tc=10+0.1 \
    ///     --sprt elo0=0 elo1=5 --out /scratch/me/new-vs-old > submit.sh
    ///   bash submit.sh
    #[command(verbatim_doc_comment)]
    Slurm {
        /// Array tasks, one shard of the run each.
        #[arg(long)]
        shards: u64,
        /// Time limit of each task and of the merge (Slurm's --time).
        #[arg(long, default_value = "1-00:00:00")]
        time: String,
        /// Slurm partition.
        #[arg(long)]
        partition: Option<String>,
        /// Job name (default arbiter-<game>).
        #[arg(long)]
        job_name: Option<String>,
        /// Write the script even where `sinfo` shows no node with the CPUs a task asks for
        /// (the run's --concurrency): without it such a script is refused, since Slurm would
        /// accept the array and never run it.
        #[arg(long)]
        force: bool,
        /// The run: `match ...`, `tournament ...` or `run FILE`.
        #[arg(last = true, required = true, value_name = "RUN")]
        run: Vec<String>,
    },
    /// Make an opening book: random legal lines that end roughly balanced and quiet.
    ///
    /// The books in openings/ were made with the defaults, e.g.
    ///   arbiter book --game ultima --out openings/ultima.txt
    #[command(verbatim_doc_comment)]
    Book {
        /// Game id (see `arbiter games`).
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
    /// Watch a run live in a browser: standings, the games in progress move by move with their
    /// clocks, and the report (charts, SPRT, finished games) as games finish.
    ///
    /// Serves a read-only page on this machine (127.0.0.1; --bind to serve others) and prints
    /// its address. Works on a playing or finished run, and on a split run's folder (all its
    /// shard-K-of-N tasks): `arbiter match ... --out reports/m & arbiter watch reports/m`.
    /// The run writes its games in progress only while a watcher looks (a file
    /// live/watching in its folder, touched every 2 s), so an unwatched run pays nothing.
    Watch(watchcmd::WatchArgs),
    /// Measure perft speed of every game and the referee's own cost with instant engines.
    ///
    /// Referee rows: two bundled random movers in the MIT dialect (they report microseconds),
    /// leiserchess, at concurrency 1 and 2, without and with --affinity: arbiter's own CPU per
    /// ply and per game (engines excluded), games per second, the referee's turnaround per move
    /// (from reading a move to asking for the reply, by its own clock), peak memory. --full: deeper
    /// perft, 1,000-game matches and a 10,000-game run.
    ///
    /// --sprt-sim checks an SPRT's bounds instead: simulated tests at Elo = elo0 and elo1 on
    /// several pair distributions (with and without draws and opening bias) print the measured
    /// false-positive and false-negative rates and the average number of pairs, e.g.
    /// `arbiter bench --sprt-sim "elo0=0 elo1=5 alpha=0.05 beta=0.05" --runs 2000`.
    ///
    /// --peer compares with another harness on identical work: `arbiter bench --peer
    /// fastchess=/opt/fastchess/fastchess` plays one stockfish match (nodes=200, 100 games)
    /// under arbiter and then under fastchess, from the same command line, and prints each
    /// one's own CPU per ply and the ratio. --peer-affinity pins both (fastchess
    /// `-use-affinity`, arbiter --affinity). The same games are then relayed bare (a blocking read
    /// and write, nothing checked or recorded): the floor any harness pays per ply on this
    /// machine, and what each harness spends over it. --peer-runs 5 repeats the whole
    /// comparison and prints the ratio of every run with their median.
    Bench(benchcmd::BenchArgs),
}

/// A failure to report at the edge, with the exit code it deserves.
#[derive(Debug)]
pub struct Failure {
    pub code: Exit,
    pub message: String,
}

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Failure {
        Failure {
            code: Exit::BadInput,
            message: message.into(),
        }
    }

    pub fn illegal(message: impl Into<String>) -> Failure {
        Failure {
            code: Exit::Rejected,
            message: message.into(),
        }
    }

    /// The machine failed us (a socket, a runtime), not the input.
    pub fn io(message: impl Into<String>) -> Failure {
        Failure {
            code: Exit::Runtime,
            message: message.into(),
        }
    }
}

/// `--engine a=1 b=2 --engine c=3` as one group of settings per `--engine`.
fn engine_groups(sub: &clap::ArgMatches) -> Vec<Vec<String>> {
    sub.try_get_occurrences::<String>("engine")
        .ok()
        .flatten()
        .map(|occurrences| occurrences.map(|o| o.cloned().collect()).collect())
        .unwrap_or_default()
}

/// Lets SIGINT and SIGTERM stop arbiter from its first instant. A shell starts background jobs
/// with SIGINT ignored, and that disposition is inherited: a Ctrl-C or `kill -INT` that came
/// before the run's own handlers were in place was lost, and the run played on.
fn stop_signals_from_the_start() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: reading and setting a signal's disposition, before any thread is started.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    }
}

/// Entry points for the fuzzers (`fuzz/`): each reads a configuration text as `arbiter` reads that
/// kind of file, through to the run's settings or the refusal the user would see.
#[doc(hidden)]
pub mod fuzzing {
    use arbiter::tournament::RunSpec;
    use std::path::Path;

    /// An autotester `.txt` (`toml == false`) or a TOML run file, as if at `/fuzz/run.<ext>`.
    pub fn run_file(text: &str, toml: bool) -> Result<RunSpec, String> {
        let file = Path::new(if toml {
            "/fuzz/run.toml"
        } else {
            "/fuzz/run.txt"
        });
        super::configcmd::job_of_text(text.to_string(), file, true, None)
            .map(|job| job.spec)
            .map_err(|f| f.message)
    }

    /// A fastchess `config.json`: the arbiter command line it stands for.
    pub fn fastchess_config(text: &str) -> Result<Vec<String>, String> {
        let flags = arbiter::compat::fastchess_config::flags_of_json(text, "config.json", true)
            .map_err(|f| f.0)?;
        let mut args: Vec<String> = Vec::new();
        for (name, values) in flags {
            args.push(name);
            args.extend(values);
        }
        arbiter::compat::translate("fastchess", &args)
            .map(|t| t.argv)
            .map_err(|f| f.0)
    }
}

pub fn run() -> ExitCode {
    stop_signals_from_the_start();
    arbiter::engine::overhead::measure_if_asked();
    let args: Vec<String> = std::env::args().collect();
    let argv = if let Some(ours) = compat::standalone(&args) {
        ours
    } else if compat::is_theirs(&args[1..]) {
        // A cutechess-cli or fastchess command line: read as the arbiter one it means.
        match compat::translate(&args[0], &args[1..]) {
            Ok(ours) => {
                for note in &ours.notes {
                    eprintln!("note: {note}");
                }
                let _ = compat::READING.set(ours.reading);
                let _ = tool_lines::TOOL_LINES.set(ours.lines);
                std::iter::once(args[0].clone()).chain(ours.argv).collect()
            }
            Err(refused) => return finish(Err(Failure::bad_input(refused.0))),
        }
    } else {
        args
    };
    let command = Cli::command();
    let examples = command
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let command = command.after_long_help(format!("{examples}\n\n{}", Exit::help()));
    let matches = match command.try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return clap_exit(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let result = dispatch(cli.command, &matches);
    // What engines left behind is gone before arbiter is.
    arbiter::engine::cleanup::settle();
    report_harness_cpu();
    finish(result)
}

fn clap_exit(e: clap::Error) -> ExitCode {
    if !e.use_stderr() {
        // --help and --version.
        let _ = e.print();
        return ExitCode::from(Exit::Success);
    }
    // clap quotes a refused value (twice, for some errors): a 120 kB one is cut.
    let text = e.render().to_string();
    let shown: Vec<String> = text
        .split(' ')
        .map(|word| match word.char_indices().nth(80) {
            Some((cut, _)) => format!(
                "{}... ({} characters cut)",
                &word[..cut],
                word.chars().count() - 80
            ),
            None => word.to_string(),
        })
        .collect();
    eprint!("{}", shown.join(" "));
    ExitCode::from(Exit::BadInput)
}

/// The run a `match`, `tournament` or `run` command stands for: the one it describes, or with
/// `--resume` the one saved in that folder.
fn run_job(command: Command, matches: &clap::ArgMatches) -> Result<runargs::RunJob, Failure> {
    let (name, sub) = matches.subcommand().expect("a run command has its matches");
    let resume = match &command {
        Command::Match(a) => a.run.resume.clone(),
        Command::Tournament(a) => a.run.resume.clone(),
        Command::Run { resume, .. } => resume.clone(),
        _ => None,
    };
    if let Some(dir) = resume {
        let (quiet, concurrency) = resume_overrides(name, sub)?;
        return runargs::resumed(&dir, quiet, concurrency);
    }
    match command {
        Command::Match(mut a) => {
            a.run.engine_groups = engine_groups(sub);
            a.job()
        }
        Command::Tournament(mut a) => {
            a.run.engine_groups = engine_groups(sub);
            a.job()
        }
        Command::Run {
            file,
            quiet,
            out,
            split,
            ..
        } => {
            let file = file.ok_or_else(|| Failure::bad_input("no configuration file given"))?;
            let mut job = configcmd::job_of(&file, quiet, out.as_deref())?;
            split
                .apply(&mut job.spec)
                .map_err(|e| runargs::Origin::CommandLine.explain(e))?;
            Ok(job)
        }
        _ => unreachable!("only run commands have a run"),
    }
}

/// Carries out a command; returns the exit code.
fn dispatch(command: Command, matches: &clap::ArgMatches) -> Result<Exit, Failure> {
    match command {
        Command::Perft {
            game,
            depth,
            fen,
            setup,
            divide,
        } => rulescmd::start(&game, fen, setup)
            .and_then(|(entry, fen)| rulescmd::perft(entry, depth, fen.as_deref(), divide))
            .map(|_| Exit::Success),
        Command::Replay {
            game,
            fen,
            setup,
            moves,
        } => rulescmd::start(&game, fen, setup)
            .and_then(|(entry, fen)| rulescmd::replay(entry, fen.as_deref(), &moves))
            .map(|_| Exit::Success),
        Command::Show {
            game,
            fen,
            setup,
            svg,
            moves,
        } => rulescmd::start(&game, fen, setup)
            .and_then(|(entry, fen)| rulescmd::show(entry, fen.as_deref(), &moves, svg.as_deref()))
            .map(|_| Exit::Success),
        Command::Games => rulescmd::list_games().map(|_| Exit::Success),
        Command::Compliance {
            options,
            engine,
            args,
        } => compliance::run(&engine, &args, &options),
        Command::Run { .. } => run_file(command, matches),
        Command::Match(_) | Command::Tournament(_) => runcmd::execute(run_job(command, matches)?),
        Command::Tune(args) => tune(&args, matches),
        Command::Bisect(args) => {
            let sub = matches
                .subcommand_matches("bisect")
                .expect("the bisect command's matches");
            bisectcmd::execute(&args, engine_groups(sub))
        }
        Command::Rate(args) => ratecmd::run(args),
        Command::Watch(args) => watchcmd::run(args).map(|()| Exit::Success),
        Command::Merge { out, dirs, quiet } => cluster::run_merge(&out, &dirs, quiet),
        Command::Adopt { folder } => {
            for line in arbiter::upgrade::adopt(&folder).map_err(Failure::bad_input)? {
                say!("{line}");
            }
            Ok(Exit::Success)
        }
        Command::Slurm {
            shards,
            time,
            partition,
            job_name,
            force,
            run,
        } => {
            let opts = cluster::SlurmOptions {
                shards,
                time,
                partition,
                job_name,
                force,
            };
            slurm(&run, &opts)
        }
        Command::Book {
            game,
            count,
            plies,
            seed,
            max_imbalance,
            out,
        } => make_book(&game, count, plies, seed, max_imbalance, out.as_deref()),
        Command::Bench(args) => benchcmd::command(args),
    }
}

/// `arbiter run`: a run's file or folder, or a tune's (a TOML file with a [tune] section, or a
/// tune's folder).
fn run_file(command: Command, matches: &clap::ArgMatches) -> Result<Exit, Failure> {
    let Command::Run {
        ref file,
        quiet,
        ref out,
        ref resume,
        ref split,
    } = command
    else {
        unreachable!("run_file is given the run command")
    };
    if let Some(dir) = resume.as_ref().filter(|d| d.join(TUNE_FILE).is_file()) {
        let spec = arbiter::tune::TuneSpec::load(dir).map_err(Failure::bad_input)?;
        return tunecmd::execute(tunecmd::TuneJob {
            spec,
            origin: runargs::Origin::Saved(dir.join(TUNE_FILE)),
            quiet,
            resume: Some(dir.clone()),
        });
    }
    if let (None, Some(file)) = (resume, file) {
        if let Some(mut job) = configcmd::tune_job_of(file, quiet, out.as_deref())? {
            split
                .apply(&mut job.spec.run)
                .map_err(|e| runargs::Origin::CommandLine.explain(e))?;
            return tunecmd::execute(job);
        }
    }
    runcmd::execute(run_job(command, matches)?)
}

/// `arbiter tune`; on resume only how the rest is played may change, as for a run.
fn tune(args: &tunecmd::TuneArgs, matches: &clap::ArgMatches) -> Result<Exit, Failure> {
    let sub = matches
        .subcommand_matches("tune")
        .expect("the tune command's matches");
    let mut job = tunecmd::job(args, engine_groups(sub))?;
    if job.resume.is_some() {
        let (quiet, concurrency) = resume_overrides("tune", sub)?;
        job.quiet |= quiet;
        if let Some(c) = concurrency {
            job.spec.run.concurrency = c;
        }
    }
    tunecmd::execute(job)
}

fn finish(result: Result<Exit, Failure>) -> ExitCode {
    match result {
        Ok(exit) => ExitCode::from(exit),
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
) -> Result<Exit, Failure> {
    use arbiter::tournament::bookgen::{generate, BookSpec};
    let entry = rulescmd::game_entry(game)?;
    let spec = BookSpec {
        count,
        plies,
        seed,
        max_imbalance,
    };
    let lines = generate(entry, &spec).map_err(Failure::bad_input)?;
    let mut text = format!(
        "# {} openings for {}, made by: arbiter book --game {} --count {count} --plies {plies} \
            --seed {seed} --max-imbalance {max_imbalance}\n",
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
        None => say_inline!("{text}"),
    }
    if let Some(path) = out {
        // The book went to a file: say what was made, where the command would otherwise be silent.
        say!(
            "Wrote {} openings for {} to {}",
            lines.len(),
            entry.id,
            path.display()
        );
    }
    Ok(Exit::Success)
}

/// `arbiter slurm`: the run is read and checked here, as it will be in every task, so that a
/// mistake shows before anything is submitted.
fn slurm(run: &[String], opts: &cluster::SlurmOptions) -> Result<Exit, Failure> {
    if !(1..=arbiter::tournament::spec::MAX_SHARDS).contains(&opts.shards) {
        return Err(Failure::bad_input(format!(
            "--shards {}: from 1 to {}",
            opts.shards,
            arbiter::tournament::spec::MAX_SHARDS
        )));
    }
    let argv = std::iter::once("arbiter".to_string()).chain(run.iter().cloned());
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .map_err(|e| Failure::bad_input(format!("the run after --: {e}")))?;
    let cli = Cli::from_arg_matches(&matches).map_err(|e| Failure::bad_input(e.to_string()))?;
    if let Command::Tune(args) = &cli.command {
        let sub = matches
            .subcommand_matches("tune")
            .expect("the tune command's matches");
        let job = tunecmd::job(args, engine_groups(sub))?;
        // Checked as each task will check it, before anything is submitted.
        tunecmd::check_before_play(&job)?;
        let run_job = runargs::RunJob {
            spec: job.spec.run,
            origin: job.origin,
            quiet: job.quiet,
            resume: None,
        };
        let script = cluster::slurm_script(&run_job, run, opts, cluster::AfterTasks::Nothing)?;
        cluster::refuse_if_no_node_fits(
            run_job.spec.concurrency,
            opts.partition.as_deref(),
            opts.force,
        )?;
        say_inline!("{script}");
        return Ok(Exit::Success);
    }
    if let Command::Bisect(args) = &cli.command {
        let sub = matches
            .subcommand_matches("bisect")
            .expect("the bisect command's matches");
        // Checked (and a git range built) here, once, before anything is submitted: the
        // tasks find every version built.
        let job = bisectcmd::check_for_cluster(args, engine_groups(sub))?;
        let script = cluster::slurm_script(&job, run, opts, cluster::AfterTasks::ResumeBisect)?;
        cluster::refuse_if_no_node_fits(
            job.spec.concurrency,
            opts.partition.as_deref(),
            opts.force,
        )?;
        say_inline!("{script}");
        return Ok(Exit::Success);
    }
    if !matches!(
        cli.command,
        Command::Match(_) | Command::Tournament(_) | Command::Run { .. }
    ) {
        return Err(Failure::bad_input(
            "the run after -- must be `match ...`, `tournament ...`, `run FILE`, `tune ...` or \
             `bisect ...`",
        ));
    }
    let job = run_job(cli.command, &matches)?;
    // Everything a task will check, checked before anything is submitted: settings, book,
    // output files and the engines' start-up.
    runcmd::check_before_play(&job)?;
    // What is checked here (the out folder) before what the cluster is asked, which may take
    // seconds where its controller is down.
    let script = cluster::slurm_script(&job, run, opts, cluster::AfterTasks::Merge)?;
    cluster::refuse_if_no_node_fits(job.spec.concurrency, opts.partition.as_deref(), opts.force)?;
    say_inline!("{script}");
    Ok(Exit::Success)
}

/// The flags that may accompany `--resume`: `--quiet` and `--concurrency` change how the rest
/// is played, not what is played. Any other flag would silently not apply, so it is refused.
fn resume_overrides(name: &str, sub: &clap::ArgMatches) -> Result<(bool, Option<usize>), Failure> {
    use clap::parser::ValueSource;
    let command = Cli::command();
    let flags = command
        .find_subcommand(name)
        .expect("a subcommand of arbiter");
    // Argument groups (one per flattened struct) are listed too; only flags count.
    let is_flag = |id: &str| flags.get_arguments().any(|a| a.get_id() == id);
    let given = |id: &str| is_flag(id) && sub.value_source(id) == Some(ValueSource::CommandLine);
    let refused: Vec<String> = sub
        .ids()
        .map(|id| id.as_str())
        .filter(|id| given(id))
        .filter(|id| !matches!(*id, "resume" | "quiet" | "concurrency" | "file"))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !refused.is_empty() {
        return Err(Failure::bad_input(format!(
            "--resume continues a run with the settings it was started with; {} cannot be \
             changed on resume (only --quiet and --concurrency can). To play more or \
             differently, start a new run with --out or --name.",
            refused.join(", ")
        )));
    }
    let concurrency = given("concurrency")
        .then(|| sub.get_one::<usize>("concurrency").copied())
        .flatten();
    Ok((sub.get_flag("quiet"), concurrency))
}

/// A panic in the shipped binaries ends the process at once, as `panic = "abort"` would, after
/// the message: a referee thread that panicked must not leave a run half alive. Set here rather
/// than in the release profile, so that `cargo test --release` reuses the release build.
pub fn abort_on_panic() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
}

/// Writes arbiter's own CPU time and its processes' beside the engines' where the peer bench
/// asked (`ARBITER_HARNESS_CPU`; nothing when it did not).
fn report_harness_cpu() {
    use arbiter::engine::overhead::{own_cpu, sandbox_spent, HARNESS_CPU_FILE};
    if let Some(path) = std::env::var_os(HARNESS_CPU_FILE) {
        let line = format!(
            "{} {} {} {}\n",
            own_cpu().as_micros(),
            arbiter::engine::keeper::spent().as_micros(),
            arbiter::tournament::preflight_cpu().as_micros(),
            sandbox_spent().as_micros(),
        );
        let _ = std::fs::write(path, line);
    }
}
