//! The command-line side of a run: `match` and `tournament` flags become a `RunSpec`, and a
//! setting the spec refuses is named as the user gave it (`--concurrency`, `basic.txt:3`).

use super::Failure;
use arbiter::engine::{ConfigError, EngineConfig};
use arbiter::referee::{DrawRule, ResignRule};
use arbiter::stats::Sprt;
use arbiter::tournament::spec::{Anchor, Shard};
use arbiter::tournament::{Affinity, Colours, Format, RunKind, RunSpec, SpecError};
use clap::ArgAction;
use std::path::{Path, PathBuf};

/// The game played when none is named.
pub const DEFAULT_GAME: &str = "leiserchess";

/// Declares `RunArgs`: its plain fields, then each run setting once, as its flag (clap's
/// attributes and help, which TOML keys are read through), how the flag's value becomes its
/// `RunSpec` field, and an example that sets it (`every_setting` checks it from a flag and from
/// a TOML key). A new setting is one entry here and its use.
macro_rules! run_settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$bmeta:meta])* pub $bfield:ident : $bty:ty, )*
        }
        settings {
            $(
                $(#[$smeta:meta])*
                $field:ident : $ty:ty => $into:expr,
                    example [$($example:literal),*];
            )*
        }
        then {
            $( $(#[$ameta:meta])* pub $afield:ident : $aty:ty, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$bmeta])* pub $bfield: $bty, )*
            $( $(#[$smeta])* pub $field: $ty, )*
            $( $(#[$ameta])* pub $afield: $aty, )*
        }

        impl $name {
            /// Each run setting's `RunSpec` field, from its flag.
            fn set_settings(&self, spec: &mut RunSpec) -> Result<(), SpecError> {
                $( spec.$field = ($into)(&self.$field)?; )*
                Ok(())
            }

            /// Each run setting's field, and the flags of an example that sets it.
            #[cfg(test)]
            pub const SETTINGS: &'static [(&'static str, &'static [&'static str])] =
                &[ $( (stringify!($field), &[$($example),*]) ),* ];
        }
    };
}

/// `--engine`'s help, its closed choices named from the lists the engine layer reads them by.
fn engine_help() -> String {
    let protos = arbiter::engine::dialect::Proto::names().join("|");
    format!(
        "An engine, as KEY=VALUE settings: cmd=<program> (required), name=, arg= (repeatable), \
         dir=, proto={protos}, tc=[moves/]base[+inc] (seconds, or minutes:seconds as in \
         40/1:30+1), st=<seconds per move>, depth=, nodes=, timemargin=<ms>, stall=<seconds>, \
         handshake=<seconds>, restart=on|off (a new process every game; default off), \
         stderr=<file> (the engine's stderr added to it; by default to --log), \
         option.<Name>=<value> (checked against the options the engine lists: a name it does \
         not offer, or a value outside its range, stops the run before the first game). \
         Sandbox (docs/safety.md): sandbox=auto|on|off (default auto: in a bubblewrap sandbox \
         where the machine has one; `--each sandbox=off` for the whole run), memory=<size, e.g. \
         512M> (default: RAM / (2 x engines at once)), processes=<N> (default 512), \
         threads=<CPU cores> (default: option.Threads, else 1), readable=<path> (a file or \
         folder outside its own that it may read, e.g. what a wrapper script runs; repeatable), \
         writable=<folder> (kept after the run, e.g. for learning files; repeatable: everything \
         else an engine writes stays in a private copy of its working folder and goes with it). \
         env.<NAME>=<value> passes a variable; an engine gets only PATH HOME USER LOGNAME LANG \
         LC_ALL LC_CTYPE TZ of arbiter's environment. freeze=watch|on|off (default watch: an \
         engine's CPU is counted while its opponent thinks, and one that uses more than 5 ms \
         there is frozen on its opponent's turns from then on; on: frozen from the first turn; \
         off: for an engine that ponders on its own)."
    )
}

/// A setting whose flag's value is its field's.
fn copied<T: Clone>(value: &T) -> Result<T, SpecError> {
    Ok(value.clone())
}

// The flags that are not a run setting of their own, then the run settings (`RunSpec` fields),
// each declared once.
run_settings! {
    /// Settings shared by `match` and `tournament`.
    #[derive(clap::Args, Debug, Clone)]
    pub struct RunArgs {
        /// Game id (see `arbiter games`); leiserchess unless named. A UCI engine that offers no
        /// `UCI_Variant` (a chess engine) is refused under the default: name the game it plays.
        #[arg(long)]
        pub game: Option<String>,
        #[arg(long, num_args = 1.., value_name = "KEY=VALUE", action = ArgAction::Append,
              help = engine_help())]
        pub engine: Vec<String>,
        /// `--engine` settings grouped by occurrence (filled from clap's matches, not a flag).
        #[arg(skip)]
        pub engine_groups: Vec<Vec<String>>,
        /// Settings applied to every engine (an engine's own settings win).
        #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
        pub each: Vec<String>,
    }
    settings {
        /// Games played at the same time (the quick start, `tournament` without --engine, plays 2).
        #[arg(long, default_value_t = 1)]
        concurrency: usize => copied,
            example ["--concurrency", "3"];
        /// Pin each concurrent game to one CPU: its referee thread and both engines (engines
        /// started by it inherit the CPU). There the referee, a SCHED_BATCH thread, lets the engine
        /// finish its reply and reads it at once instead of waking for every `info` line on another
        /// CPU: a quarter to a half of its cost per move with fast engines. The games take the CPUs
        /// arbiter may run on in turn, or those listed (`--affinity 2,3` or `4-7`, as taskset and
        /// fastchess's -use-affinity write them). By default (`auto`) the games are pinned only
        /// when each gets a CPU no other arbiter run holds, one CPU is left over, and no engine
        /// searches with several threads (`option.Threads`, `threads=`, or the engine's own
        /// `Threads` default); a line says so. Runs hold their CPUs by locks in /tmp/arbiter-cpus
        /// (or the folder ARBITER_CPU_LOCKS names). `--affinity off` pins nothing.
        #[arg(long, value_name = "CPUS", num_args = 0..=1)]
        affinity: Option<Option<String>> => |a: &Option<Option<String>>| match a {
            None => Ok(Affinity::default()),
            Some(None) => Ok(Affinity::Pinned(true)),
            Some(Some(list)) => {
                Affinity::parse(list).map_err(|why| SpecError::new("affinity", why))
            }
        },
            example ["--affinity"];
        /// Opening book: one line per opening, moves (`g4g5 e6e7`) or `fen <FEN> [moves ...]`.
        /// Default: openings/<game>.txt if it exists (recorded in run.json by absolute path), else
        /// the start position.
        #[arg(long)]
        openings: Option<PathBuf> => copied,
            example ["--openings", "/b.txt"];
        /// Play every game from the start position, even where openings/<game>.txt is.
        #[arg(long, conflicts_with = "openings")]
        no_book: bool => copied,
            example ["--no-book"];
        /// Use only the first N plies of each book line.
        #[arg(long)]
        book_plies: Option<usize> => copied,
            example ["--book-plies", "4"];
        /// Read the book as epd, pgn or lines (arbiter's own), whatever its file's name; by default
        /// its ending says (.epd, .pgn, anything else lines).
        #[arg(long, value_name = "FORMAT",
              value_parser = arbiter::tournament::openings::BookFormat::parse)]
        book_format: Option<arbiter::tournament::openings::BookFormat> => copied,
            example ["--book-format", "pgn"];
        /// Take openings in a seeded random order instead of book order.
        #[arg(long)]
        random_openings: bool => copied,
            example ["--random-openings"];
        /// Begin the book at its Nth opening (1-based; with --random-openings, at the Nth of the
        /// shuffled order), wrapping round to the first after the last: the start= of
        /// cutechess-cli's and fastchess's -openings.
        #[arg(long, default_value_t = 1, value_name = "N")]
        book_start: u64 => copied,
            example ["--book-start", "3"];
        /// Who has White in each game pair: alternate (the first engine White, then Black; the
        /// default), reverse (the second engine White first; their -reverse), first-white (the
        /// first engine White in both games; their -noswap) or second-white (both).
        #[arg(long, value_parser = crate::choices::colours(), default_value = "alternate",
              value_name = "ORDER")]
        colours: Colours => copied,
            example ["--colours", "first-white"];
        /// Play each opening N games in a row between two engines, colours alternating: 2 (the
        /// default) makes colour-reversed pairs, 1 gives each game its own opening (cutechess-cli
        /// without -repeat, fastchess's -games 1). The pentanomial figures still count consecutive
        /// games as pairs; they share an opening only when N is 2.
        #[arg(long, default_value_t = 2, value_name = "N")]
        games_per_opening: u64 => copied,
            example ["--games-per-opening", "1"];
        /// Seeds what is chosen at random: the opening order with --random-openings, and a tune's
        /// flips. The same seed plays the same schedule.
        #[arg(long, default_value_t = 1)]
        seed: u64 => copied,
            example ["--seed", "9"];
        /// Draw a game after this many plies (termination "max plies").
        #[arg(long, default_value_t = 500)]
        max_plies: usize => copied,
            example ["--max-plies", "90"];
        /// The game's rule options, as name=value (leaperhouse: repetition=fairy-stockfish scores a
        /// third occurrence as Fairy-Stockfish does, against the side to move; the default, prose,
        /// as its rule text does; leiserchess: move-rule=course draws after 200 plies without a zap
        /// counted from the book's last move, as the MIT course's tester does, where the rule
        /// text's 100 count from the first). Named in the report and in each PGN's Rules tag.
        #[arg(long, num_args = 1.., value_name = "NAME=VALUE")]
        rules: Vec<String> => rule_pairs,
            example ["--rules", "repetition=fairy-stockfish"];
        /// Stop at the first game an engine loses by a fault of the program (an illegal move, its
        /// clock, a crash, silence, its memory limit): the games in progress are abandoned, the
        /// reports written, and arbiter exits with code 6; `--resume` goes on from there (and plays
        /// the abandoned games). For engine CI, where any such game is a bug (fastchess's -strict).
        #[arg(long)]
        strict: bool => copied,
            example ["--strict"];
        /// Adjudicate a draw: movenumber=N movecount=N score=CP.
        #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
        draw: Vec<String> => |d: &Vec<String>| key_values("draw", d, DrawRule::parse),
            example ["--draw", "movenumber=40", "movecount=8", "score=10"];
        /// Adjudicate a loss: movecount=N score=CP [twosided=true]. The side whose own last N
        /// scores are all at most -CP loses; with twosided=true only if its opponent's last N are
        /// all at least +CP too.
        #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
        resign: Vec<String> => |r: &Vec<String>| key_values("resign", r, ResignRule::parse),
            example ["--resign", "movecount=3", "score=600"];
        /// Chess: end a game by Syzygy tablebases once its position is in them: path=DIR[;DIR]
        /// [pieces=N] [results=both|win-loss|draw] [ignore50=true]. Probed after a capture or pawn
        /// move without castling rights (as fastchess's -tb); a win the fifty-move rule spoils is a
        /// draw unless ignore50=true. The result and "SyzygyTB" go in the PGN.
        #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
        tablebase: Vec<String> => |t: &Vec<String>| {
            key_values("tablebase", t, arbiter::referee::tablebase::TbRule::parse)
        },
            example ["--game", "chess", "--tablebase", "path=tests/syzygy", "pieces=4"];
        /// Chess: check every line the engines report (`info ... pv`) against the position they
        /// searched, and print fastchess's warning for each fault: a move that is illegal or played
        /// after the game ended, a move played that is not its last line's first; `mates` also
        /// checks that a mate score's line is that long and ends in mate (fastchess's
        /// -check-mate-pvs). Games are not changed.
        #[arg(long, value_name = "CHECKS", num_args = 0..=1, default_missing_value = "lines",
              value_parser = arbiter::referee::pv_check::PvChecks::parse)]
        check_pvs: Option<arbiter::referee::pv_check::PvChecks> => copied,
            example ["--game", "chess", "--check-pvs", "mates"];
        /// Fix one engine's rating in the joint ratings: name=elo.
        #[arg(long, value_name = "NAME=ELO", value_parser = Anchor::parse)]
        anchor: Option<Anchor> => copied,
            example ["--anchor", "a=100"];
        /// Name of the run: its output goes to reports/<name>/.
        #[arg(long)]
        name: Option<String> => copied,
            example ["--name", "x"];
        /// Output directory (instead of reports/<name>/).
        #[arg(long)]
        out: Option<PathBuf> => copied,
            example ["--out", "/x"];
        /// Write all engine input and output, timestamped, to this file.
        #[arg(long)]
        log: Option<PathBuf> => copied,
            example ["--log", "/io.log"];
        /// PGN Event tag and report title.
        #[arg(long)]
        event: Option<String> => copied,
            example ["--event", "E"];
        /// PGN Site tag (default: arbiter).
        #[arg(long)]
        site: Option<String> => copied,
            example ["--site", "S"];
        /// Also write every game to this PGN file, after what it held before the run (as
        /// cutechess-cli and fastchess add to it); --replace-copies to replace it.
        #[arg(long)]
        pgnout: Option<PathBuf> => copied,
            example ["--pgnout", "/g.pgn"];
        /// Also write the final position of every game to this file, one line each: for chess EPD
        /// as fastchess writes it (`<fields> hmvc N; fmvn N;`), for the other games their FEN.
        #[arg(long)]
        epdout: Option<PathBuf> => copied,
            example ["--epdout", "/g.epd"];
        /// --pgnout and --epdout replace the files' contents instead of adding to them.
        #[arg(long)]
        replace_copies: bool => copied,
            example ["--replace-copies"];
        /// --pgnout's games without the engines' comments (score, depth, time per move): a minimal
        /// PGN, as cutechess-cli's `-pgnout FILE min` writes it.
        #[arg(long, requires = "pgnout")]
        pgnout_min: bool => copied,
            example ["--pgnout", "/g.pgn", "--pgnout-min"];
        /// Each engine move's PGN comment also gives the nodes searched, as `n=N` (fastchess's
        /// `-pgnout nodes=true`).
        #[arg(long)]
        pgn_nodes: bool => copied,
            example ["--pgn-nodes"];
        /// Each engine move's PGN comment also gives the selective depth, as `sd=N` (fastchess's
        /// `-pgnout seldepth=true`).
        #[arg(long)]
        pgn_seldepth: bool => copied,
            example ["--pgn-seldepth"];
        /// Each engine move's PGN comment also holds the last line the engine wrote during that
        /// search that REGEX finds a match in, as `line="..."` (fastchess's `-pgnout
        /// match_line=REGEX`, which OpenBench gives as `^info string pgncomment .*`). Repeat for
        /// several patterns; in a TOML file, one pattern.
        #[arg(long, value_name = "REGEX", value_parser = regex_pattern)]
        pgn_line: Vec<String> => copied,
            example ["--pgn-line", "^info string pgncomment .*"];
        /// Games shown in report.html's game viewer (games a fault ended first, then decisive
        /// ones); 0 for none.
        #[arg(long, value_name = "N", default_value_t = arbiter::report::viewer::MAX_SHOWN)]
        viewer_games: usize => copied,
            example ["--viewer-games", "3"];
    }
    then {
        /// Continue the interrupted run in this directory, with the settings it was started with.
        #[arg(long, value_name = "DIR")]
        pub resume: Option<PathBuf>,
        /// Print only the final result.
        #[arg(long)]
        pub quiet: bool,
        #[command(flatten)]
        pub split: SplitArgs,
    }
}

/// Splitting a run over machines.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SplitArgs {
    /// Play as task K of up to N of a split run, in the folder <out>/shard-K-of-N/ (needs the
    /// run's folder, the same for every task: --out or --name, or for `run` its --out or the
    /// file's out/name). Tasks claim game pairs in the schedule's order, so
    /// any number of them, started in any order, share the run; an SPRT stops them all near
    /// where one machine would stop. `slurm` takes K and N from the Slurm array task
    /// (SLURM_ARRAY_TASK_ID, _MIN, _COUNT). `arbiter merge` joins the folders.
    #[arg(long, value_name = "K/N|slurm")]
    pub shard: Option<String>,
    /// The number of tasks, for a Kubernetes Indexed Job: the task is
    /// JOB_COMPLETION_INDEX + 1 of N.
    #[arg(long, value_name = "N", conflicts_with = "shard")]
    pub shards: Option<u64>,
    /// Seconds a task of a split run may stay silent before the others take it for dead and
    /// play the game pairs it left unfinished.
    #[arg(long, value_name = "SECONDS", default_value_t = arbiter::tournament::spec::DEFAULT_LEASE)]
    pub lease: u64,
}

impl SplitArgs {
    /// Sets the task this process plays (the flag's, or the one its job scheduler gave when
    /// asked to take it from there) and its lease.
    pub fn apply(&self, spec: &mut RunSpec) -> Result<(), SpecError> {
        spec.shard = self.shard()?;
        spec.lease = self.lease;
        Ok(())
    }

    fn shard(&self) -> Result<Option<Shard>, SpecError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let number = |name: &str| -> Result<Option<u64>, SpecError> {
            env(name)
                .map(|v| {
                    v.parse::<u64>().map_err(|_| {
                        SpecError::new("shard", format!("{name}={v} is not a whole number"))
                    })
                })
                .transpose()
        };
        let make = |k: u64, n: u64, from: &str| {
            Shard::new(k, n).map(Some).ok_or_else(|| {
                SpecError::new(
                    "shard",
                    format!("{from} gives shard {k} of {n}, which is not one"),
                )
            })
        };
        if let Some(n) = self.shards {
            let index = number("JOB_COMPLETION_INDEX")?.ok_or_else(|| {
                SpecError::new(
                    "shards",
                    "needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); elsewhere give --shard \
                        K/N",
                )
            })?;
            return make(index + 1, n, "JOB_COMPLETION_INDEX");
        }
        // The scheduler's environment is read only when asked: any arbiter started inside an
        // array task (a parameter sweep) would otherwise play a fraction of its games.
        match self.shard.as_deref() {
            None => Ok(None),
            Some("slurm") => match (
                number("SLURM_ARRAY_TASK_ID")?,
                number("SLURM_ARRAY_TASK_COUNT")?,
            ) {
                (Some(id), Some(count)) => {
                    let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
                    make(id.saturating_sub(min) + 1, count, "the Slurm array task")
                }
                _ => Err(SpecError::new(
                    "shard",
                    "--shard slurm needs SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT: run it \
                     as a task of a Slurm job array (sbatch --array), else give --shard K/N",
                )),
            },
            Some(text) => Shard::parse(text)
                .map(Some)
                .map_err(|e| SpecError::new("shard", e)),
        }
    }
}

/// The most games of a match with an SPRT and no `--games`.
pub const SPRT_GAMES: u64 = 100_000;

#[derive(clap::Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Number of games; each opening is played twice with colours reversed. Default 2; with
    /// --sprt, until the test decides, at most 100000.
    #[arg(long)]
    pub games: Option<u64>,
    /// Stop as soon as a sequential test decides: elo0=<e> elo1=<e> alpha=<a> beta=<b>
    /// [model=normalized|logistic] (alpha and beta default to 0.05, model to normalized).
    /// Exit code 0: H1 accepted, 1: H0, 3: undecided at --games.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub sprt: Vec<String>,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TournamentArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// round-robin (everyone meets everyone) or gauntlet (the first engine meets the rest).
    #[arg(long, value_parser = crate::choices::format(), default_value = "round-robin")]
    pub format: Format,
    /// A gauntlet's seeds: its first N engines, each of whom meets every engine after the seeds
    /// (cutechess-cli's -seeds).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seeds: u64,
    /// A gauntlet's seeds also meet each other (fastchess's -seeds).
    #[arg(long)]
    pub seeds_meet: bool,
    /// Rounds: in each, every pairing plays one game pair (an opening with both colours).
    #[arg(long, default_value_t = 4)]
    pub rounds: u64,
    /// Stop after this many games in all, even mid-round (the autotester's game_rounds).
    #[arg(long)]
    pub games: Option<u64>,
}

/// A run to carry out: its spec, where the spec came from (for error messages), and how to
/// show it.
pub struct RunJob {
    pub spec: RunSpec,
    pub origin: Origin,
    pub quiet: bool,
    /// The folder of the run this continues.
    pub resume: Option<PathBuf>,
}

/// Where a spec's settings were written, to name a refused one as the user wrote it.
pub enum Origin {
    CommandLine,
    /// A configuration file and its text; `mit` for the autotester's key names.
    File {
        path: PathBuf,
        text: String,
        mit: bool,
    },
    /// The settings a run or tune saved in its folder (run.json, tune.json).
    Saved(PathBuf),
}

impl Origin {
    pub fn explain(&self, e: SpecError) -> Failure {
        let message = match self {
            Origin::CommandLine => {
                let flag = e.setting.replace('_', "-");
                match e.engine {
                    Some(i) => format!("--{flag} #{}: {}", i + 1, e.reason),
                    None => format!("--{flag}: {}", e.reason),
                }
            }
            Origin::File { path, text, mit } => {
                let key = if *mit { mit_key(e.setting) } else { e.setting };
                let line = match e.engine {
                    Some(i) => {
                        nth_line_starting(text, if *mit { "player" } else { "[[engine]]" }, i)
                    }
                    None => nth_line_starting(text, key, 0),
                };
                match line {
                    Some(n) => format!("{}:{n}: {key}: {}", path.display(), e.reason),
                    None => format!("{}: {key}: {}", path.display(), e.reason),
                }
            }
            Origin::Saved(file) => format!("{}: {}", file.display(), e),
        };
        Failure::bad_input(message)
    }
}

/// The autotester's name for a setting.
fn mit_key(setting: &str) -> &str {
    match setting {
        "concurrency" => "cpus",
        "games" | "rounds" => "game_rounds",
        "openings" | "book_plies" | "book_format" => "book",
        "max_plies" => "adjudicate",
        "name" | "event" => "title",
        "engine" => "player",
        other => other,
    }
}

/// The 1-based number of the `n`-th line (from 0) that sets `key` (or opens `[[engine]]`).
pub(super) fn nth_line_starting(text: &str, key: &str, n: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let line = line.trim_start();
            line.strip_prefix(key)
                .is_some_and(|rest| key.starts_with('[') || rest.trim_start().starts_with('='))
        })
        .nth(n)
        .map(|(i, _)| i + 1)
}

/// `key=value` settings (one flag's words, or one line of a file) read by `parse`; a refusal
/// names `setting`.
pub fn key_values<T>(
    setting: &'static str,
    given: &[String],
    parse: fn(&str) -> Result<T, String>,
) -> Result<Option<T>, SpecError> {
    (!given.is_empty())
        .then(|| parse(&given.join(" ")))
        .transpose()
        .map_err(|reason| SpecError::new(setting, reason))
}

/// `name=value` rule options, as a run spec holds them.
pub fn rule_pairs(given: &[String]) -> Result<Vec<(String, String)>, SpecError> {
    given
        .iter()
        .flat_map(|g| g.split_whitespace())
        .map(|rule| {
            rule.split_once('=')
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .ok_or_else(|| SpecError::new("rules", format!("'{rule}' is not name=value")))
        })
        .collect()
}

/// The engines of `--engine` groups, `--each` applied to every one.
pub fn engines(groups: &[Vec<String>], each: &[String]) -> Result<Vec<EngineConfig>, SpecError> {
    let mut engines = groups
        .iter()
        .enumerate()
        .map(|(i, group)| EngineConfig::parse(group, each).map_err(|e| engine_error(i, e)))
        .collect::<Result<Vec<_>, _>>()?;
    // Named after their program, two engines of one program are told apart as cutechess-cli
    // and fastchess tell them: the second is `<name>_2`. Two given one name stay refused.
    let named = |i: usize| groups[i].iter().chain(each).any(|s| s.starts_with("name="));
    for i in 0..engines.len() {
        let name = engines[i].name.clone();
        let taken = engines[..i].iter().filter(|e| e.name == name).count();
        if taken > 0 && !named(i) {
            let renamed = format!("{name}_{}", taken + 1);
            eprintln!(
                "note: two engines are named '{name}': --engine #{} plays as '{renamed}'",
                i + 1
            );
            engines[i].name = renamed;
        }
    }
    Ok(engines)
}

/// A refused engine setting, blamed on where it was written: the engine's own settings, or
/// `--each` (`[each]`) when every engine shares it.
pub fn engine_error(index: usize, e: ConfigError) -> SpecError {
    match e {
        ConfigError::FromEach(inner) => SpecError::new("each", inner.to_string()),
        e => SpecError::of_engine(index, e.to_string()),
    }
}

impl RunArgs {
    pub(super) fn spec(&self, kind: RunKind) -> Result<RunSpec, SpecError> {
        let mut spec = RunSpec::new(kind, engines(&self.engine_groups, &self.each)?);
        spec.game = self
            .game
            .clone()
            .unwrap_or_else(|| DEFAULT_GAME.to_string());
        // Said to the engines' start: an engine that cannot say it plays the default game is
        // asked to name it rather than lose every game by illegal moves.
        arbiter::engine::config::note_game_defaulted(self.game.is_none());
        self.set_settings(&mut spec)?;
        self.split.apply(&mut spec)?;
        Ok(spec)
    }

    fn job(&self, spec: Result<RunSpec, SpecError>) -> Result<RunJob, Failure> {
        let origin = Origin::CommandLine;
        Ok(RunJob {
            spec: spec.map_err(|e| origin.explain(e))?,
            origin,
            quiet: self.quiet,
            resume: None,
        })
    }
}

impl MatchArgs {
    pub fn job(&self) -> Result<RunJob, Failure> {
        let spec = self.run.spec(RunKind::Match).and_then(|mut spec| {
            spec.sprt = key_values("sprt", &self.sprt, Sprt::parse)?;
            // An SPRT stopped after the default two games decides nothing: without --games it
            // plays until it decides, and says so.
            let games = match (self.games, spec.sprt.is_some()) {
                (Some(games), _) => games,
                (None, true) => {
                    if !self.run.quiet {
                        eprintln!(
                            "SPRT without --games: playing until it decides, at most \
                             {SPRT_GAMES} games"
                        );
                    }
                    SPRT_GAMES
                }
                (None, false) => 2,
            };
            spec.games = Some(games);
            spec.rounds = games.div_ceil(2).max(1);
            Ok(spec)
        });
        self.run.job(spec)
    }
}

impl TournamentArgs {
    /// Without `--engine`, the quick start: three bundled engines of different strengths.
    pub fn job(&self) -> Result<RunJob, Failure> {
        let mut run = self.run.clone();
        if run.engine_groups.is_empty() {
            run.engine_groups = bundled_engines()?;
            // A depth, not a clock: a newcomer's first ranking must not depend on what else the
            // machine is doing (under `tc=1+0.01` a busy machine forfeited the strongest engine's
            // games and ranked it last).
            if run.each.is_empty() {
                run.each = vec!["depth=3".into()];
            }
            if run.concurrency == 1 {
                run.concurrency = 2;
            }
        }
        let spec = TournamentArgs {
            run,
            ..self.clone()
        }
        .spec();
        self.run.job(spec)
    }

    /// The run these flags describe, engines as given.
    pub(super) fn spec(&self) -> Result<RunSpec, SpecError> {
        let mut spec = self.run.spec(RunKind::Tournament)?;
        spec.format = self.format;
        spec.seeds = self.seeds;
        spec.seeds_meet = self.seeds_meet;
        spec.rounds = self.rounds;
        spec.games = self.games;
        Ok(spec)
    }
}

/// The run saved in `dir`, to continue it with `--resume`.
pub fn resumed(dir: &Path, quiet: bool, concurrency: Option<usize>) -> Result<RunJob, Failure> {
    let mut job = RunJob {
        spec: RunSpec::load(dir).map_err(Failure::bad_input)?,
        origin: Origin::Saved(dir.join(arbiter::tournament::spec::SPEC_FILE)),
        quiet,
        resume: Some(dir.to_path_buf()),
    };
    if let Some(c) = concurrency {
        job.spec.concurrency = c;
    }
    Ok(job)
}

/// Three bundled engines of clearly different strengths, for the quick start.
fn bundled_engines() -> Result<Vec<Vec<String>>, Failure> {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("arbiter-engine")))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            Failure::bad_input(
                "the bundled engine arbiter-engine is not next to arbiter: build the workspace \
                    (cargo build --release), or give --engine",
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

/// A `--pgn-line` pattern, refused at once if it is no regular expression.
fn regex_pattern(text: &str) -> Result<String, String> {
    regex::Regex::new(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_and_the_readme_list_the_protocols_the_engine_layer_reads() {
        let listed = format!(
            "proto={}",
            arbiter::engine::dialect::Proto::names().join("|")
        );
        assert!(super::engine_help().contains(&listed));
        let readme = include_str!("../README.md");
        assert!(readme.contains(&listed), "README.md does not list {listed}");
    }

    #[test]
    fn a_refused_setting_is_named_where_it_was_written() {
        let e = SpecError::new("concurrency", "must be at least 1, not 0");
        assert_eq!(
            Origin::CommandLine.explain(e.clone()).message,
            "--concurrency: must be at least 1, not 0"
        );
        let toml = Origin::File {
            path: "t.toml".into(),
            text: "game = \"ultima\"\nconcurrency = 0\n[[engine]]\ncmd = \"a\"\n[[engine]]\n"
                .into(),
            mit: false,
        };
        assert_eq!(
            toml.explain(e.clone()).message,
            "t.toml:2: concurrency: must be at least 1, not 0"
        );
        let mit = Origin::File {
            path: "b.txt".into(),
            text: "title = x\ncpus = 0\nplayer = a\nplayer = b\n".into(),
            mit: true,
        };
        assert_eq!(
            mit.explain(e).message,
            "b.txt:2: cpus: must be at least 1, not 0"
        );
        let dup = SpecError::of_engine(1, "two engines are named 'a'");
        assert!(mit
            .explain(dup.clone())
            .message
            .starts_with("b.txt:4: player: "));
        assert!(toml
            .explain(dup.clone())
            .message
            .starts_with("t.toml:5: engine: "));
        assert_eq!(
            Origin::CommandLine.explain(dup).message,
            "--engine #2: two engines are named 'a'"
        );
    }
}
