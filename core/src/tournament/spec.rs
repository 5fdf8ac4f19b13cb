//! A run, typed: what is played, by whom, under which rules, and where it is written.
//!
//! The command line, arbiter's TOML, the MIT autotester's `.txt` and a run folder's `run.json`
//! all become one `RunSpec`, and `RunSpec::check` alone decides whether it can be played, so a
//! file is refused exactly as the same command line would be. A `SpecError` names the setting at
//! fault; each source says where that setting came from (`--concurrency`, `basic.txt:3`).

use super::schedule::{Colours, Format, PairSchedule};
use crate::engine::EngineConfig;
use crate::game::find_game;
use crate::referee::{Adjudication, DrawRule, ResignRule};
use crate::stats::{RatingOptions, Sprt};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The most games played at once.
pub const MAX_CONCURRENCY: usize = 256;

/// The file in a run folder that holds the run's spec, for `--resume`.
pub const SPEC_FILE: &str = "run.json";

/// The version of the run folder this build writes and reads, recorded first in `run.json`. A
/// folder of the version before is upgraded in place by `arbiter adopt` (`crate::upgrade`);
/// nothing else reads it.
pub const FOLDER_FORMAT: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// Two engines, `--games N`, optionally an SPRT.
    Match,
    /// Two or more engines in rounds, rated jointly.
    Tournament,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Match => "match",
            RunKind::Tournament => "tournament",
        }
    }
}

/// One task of a run split over several machines: task `index` (from 1) of up to `count`. It
/// names the task's folder; which game pairs it plays, it claims while it runs (`claims`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

/// The most shards a run may be split into.
pub const MAX_SHARDS: u64 = 100_000;

impl Shard {
    /// `K/N`, with 1 <= K <= N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("'{text}' must be K/N, shard K of N with 1 <= K <= N, e.g. 2/8");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u64>().map_err(|_| bad())?,
            n.trim().parse::<u64>().map_err(|_| bad())?,
        );
        Shard::new(index, count).ok_or_else(bad)
    }

    pub fn new(index: u64, count: u64) -> Option<Shard> {
        (1..=count)
            .contains(&index)
            .then_some(Shard { index, count })
            .filter(|_| count <= MAX_SHARDS)
    }

    /// The shard's folder inside the run's folder.
    pub fn folder(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// One engine's rating held fixed in the joint ratings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    pub name: String,
    pub elo: f64,
}

impl Anchor {
    /// `name=elo`.
    pub fn parse(text: &str) -> Result<Anchor, String> {
        text.split_once('=')
            .and_then(|(n, e)| {
                let elo = e.parse::<f64>().ok().filter(|e| e.is_finite())?;
                Some(Anchor {
                    name: n.to_string(),
                    elo,
                })
            })
            .ok_or_else(|| format!("'{text}' must be name=elo"))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The folder's format: [`FOLDER_FORMAT`] in every spec this build makes or reads.
    pub folder_format: u32,
    pub kind: RunKind,
    pub game: String,
    pub engines: Vec<EngineConfig>,
    pub format: Format,
    /// A gauntlet's seeds: its first engines, each of whom meets the engines after the seeds.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub seeds: u64,
    /// Whether a gauntlet's seeds also meet each other (fastchess's `-seeds`; cutechess-cli's
    /// seeds do not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seeds_meet: bool,
    /// Rounds: in each, every pairing plays one game pair.
    pub rounds: u64,
    /// Games as the MIT course's tester plays them. Its pairings: each pairing's first game
    /// gives White to the engine whose name sorts later, and a last round cut short gives every
    /// pairing one game before any plays its second (`PairSchedule::spread_last_round`). Its
    /// clocks: each book move earns its side the increment and counts toward a move-count
    /// period, as the tester's `PlayGame.java` counts every ply from the game's start, and a
    /// move's increment comes after it.
    #[serde(
        default,
        alias = "course_tester",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub course_tester: bool,
    /// Stop after this many games in all, even mid-round or mid-pair.
    pub games: Option<u64>,
    pub concurrency: usize,
    pub affinity: super::Affinity,
    pub openings: Option<PathBuf>,
    /// Every game from the start position, even where a default book is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_book: bool,
    pub book_plies: Option<usize>,
    /// How the book reads: `epd`, `pgn` or `lines` (arbiter's own); by default its file's
    /// ending says.
    #[serde(default)]
    pub book_format: Option<super::openings::BookFormat>,
    pub random_openings: bool,
    /// How a random-order book is shuffled: what this build does for a new run, what the run
    /// was started with for one resumed or continued, or joined by a new task.
    pub shuffle: super::shuffle::Shuffle,
    /// The book's opening the first round plays (1-based; cutechess-cli's and fastchess's
    /// `start=`).
    #[serde(default = "default_book_start")]
    pub book_start: u64,
    /// Who has White in each game of a pair.
    #[serde(default)]
    pub colours: Colours,
    /// How many games in a row (of a pairing) play one opening: 2, a colour-reversed pair, by
    /// default; 1 gives every game its own; cutechess-cli's `-repeat N`.
    #[serde(
        default = "default_games_per_opening",
        skip_serializing_if = "is_default_games_per_opening"
    )]
    pub games_per_opening: u64,
    pub seed: u64,
    pub max_plies: usize,
    /// The game's rule options chosen for this run (`repetition=fairy-stockfish`).
    #[serde(default)]
    pub rules: Vec<(String, String)>,
    pub draw: Option<DrawRule>,
    pub resign: Option<ResignRule>,
    /// Chess: the engines' reported lines checked, and warned of (`--check-pvs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_pvs: Option<crate::referee::pv_check::PvChecks>,
    /// Chess games ended by Syzygy tablebases (`--tablebase`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tablebase: Option<crate::referee::tablebase::TbRule>,
    /// Stop the run at the first game an engine loses by a fault (fastchess's `-strict`).
    #[serde(default)]
    pub strict: bool,
    pub sprt: Option<Sprt>,
    pub anchor: Option<Anchor>,
    /// Output goes to reports/<name>/ unless `out` is given.
    pub name: Option<String>,
    pub out: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub pgnout: Option<PathBuf>,
    /// The final position of every game, one per line.
    #[serde(default)]
    pub epdout: Option<PathBuf>,
    /// `pgnout` and `epdout` replace what their files held before the run, instead of being
    /// added to it (as cutechess-cli and fastchess add to them).
    #[serde(default)]
    pub replace_copies: bool,
    /// `pgnout` without the engines' comments (cutechess-cli's `min`, fastchess's `min=true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pgnout_min: bool,
    /// Each engine move's comment also holds its nodes (`n=`), selective depth (`sd=`) and the
    /// last of its output lines matching each pattern (`line="..."`), as fastchess writes them
    /// for `-pgnout nodes=true seldepth=true match_line=...`. Shared by a split run's tasks:
    /// they decide what its journals hold.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pgn_nodes: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pgn_seldepth: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pgn_line: Vec<String>,
    /// How long `pgnout` and `epdout` were when the run started: its games go after that, so a
    /// resumed run or a second merge rewrites its own games, never anything before them.
    #[serde(default)]
    pub copy_base: Option<CopyBase>,
    pub event: Option<String>,
    /// The PGN Site tag (`arbiter` when not given).
    #[serde(default)]
    pub site: Option<String>,
    /// The part of the run this process plays, when it is split over machines.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// Seconds without a heartbeat after which a task of a split run is taken for dead and its
    /// unfinished game pairs are played by another.
    #[serde(default = "default_lease")]
    pub lease: u64,
    /// Games embedded in the report's viewer.
    #[serde(default = "default_viewer_games")]
    pub viewer_games: usize,
    /// The book's and the engines' programs' content hashes, taken when the run was started:
    /// what decides its games beyond their paths.
    #[serde(default)]
    pub contents: Option<super::contents::Contents>,
}

/// The lease of a split run's tasks, in seconds: long enough for a slow shared disk.
pub const DEFAULT_LEASE: u64 = 120;

/// The longest lease: a task silent for a day is dead.
pub const MAX_LEASE: u64 = 86_400;

fn default_lease() -> u64 {
    DEFAULT_LEASE
}

fn default_book_start() -> u64 {
    1
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn default_games_per_opening() -> u64 {
    2
}

fn is_default_games_per_opening(n: &u64) -> bool {
    *n == default_games_per_opening()
}

/// Games the report's viewer shows by default (`--viewer-games`).
pub const DEFAULT_VIEWER_GAMES: usize = 20;

fn default_viewer_games() -> usize {
    DEFAULT_VIEWER_GAMES
}

/// The lengths of `pgnout` and `epdout` when the run started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyBase {
    pub pgn: u64,
    pub epd: u64,
}

impl CopyBase {
    /// What the run's copies go after: the files' lengths now, or nothing when they are
    /// replaced.
    pub fn now(spec: &RunSpec) -> CopyBase {
        let len = |p: &Option<PathBuf>| match (p, spec.replace_copies) {
            (Some(path), false) => std::fs::metadata(path).map_or(0, |m| m.len()),
            _ => 0,
        };
        CopyBase {
            pgn: len(&spec.pgnout),
            epd: len(&spec.epdout),
        }
    }
}

/// A setting that cannot be played, and why.
#[derive(Clone, Debug, Error, PartialEq)]
#[error("{setting}: {reason}")]
pub struct SpecError {
    /// The setting at fault, by its TOML key (`concurrency`, `engine`, `games`).
    pub setting: &'static str,
    /// The engine at fault (from 0, in the order given), for `engine` settings.
    pub engine: Option<usize>,
    pub reason: String,
}

impl SpecError {
    pub fn new(setting: &'static str, reason: impl Into<String>) -> SpecError {
        SpecError {
            setting,
            engine: None,
            reason: reason.into(),
        }
    }

    pub fn of_engine(index: usize, reason: impl Into<String>) -> SpecError {
        SpecError {
            setting: "engine",
            engine: Some(index),
            reason: reason.into(),
        }
    }
}

impl RunSpec {
    /// A spec with the defaults of `arbiter tournament`, for the sources to fill in.
    pub fn new(kind: RunKind, engines: Vec<EngineConfig>) -> RunSpec {
        RunSpec {
            folder_format: FOLDER_FORMAT,
            kind,
            game: "leiserchess".into(),
            engines,
            format: Format::RoundRobin,
            seeds: 1,
            seeds_meet: false,
            rounds: 4,
            course_tester: false,
            games: None,
            concurrency: 1,
            affinity: super::Affinity::default(),
            openings: None,
            no_book: false,
            book_plies: None,
            book_format: None,
            random_openings: false,
            shuffle: super::shuffle::Shuffle::Feistel,
            book_start: default_book_start(),
            colours: Colours::default(),
            games_per_opening: default_games_per_opening(),
            seed: 1,
            max_plies: 500,
            rules: Vec::new(),
            draw: None,
            resign: None,
            tablebase: None,
            check_pvs: None,
            strict: false,
            sprt: None,
            anchor: None,
            name: None,
            out: None,
            log: None,
            pgnout: None,
            epdout: None,
            replace_copies: false,
            pgnout_min: false,
            pgn_nodes: false,
            pgn_seldepth: false,
            pgn_line: Vec::new(),
            copy_base: None,
            event: None,
            site: None,
            shard: None,
            lease: DEFAULT_LEASE,
            viewer_games: default_viewer_games(),
            contents: None,
        }
    }

    /// Every check a run passes before anything starts or is written: the game, counts and
    /// limits, engine names and programs, the run name and the output files.
    pub fn check(&self) -> Result<(), SpecError> {
        self.check_all_but_programs()?;
        check_programs(&self.engines)
    }

    /// Every check but whether the engines' programs are there: all that resuming a finished
    /// run needs, which starts no engine and only writes its reports again.
    pub fn check_all_but_programs(&self) -> Result<(), SpecError> {
        let Some(entry) = find_game(&self.game) else {
            let known = crate::game::game_ids().join(", ");
            return Err(SpecError::new(
                "game",
                format!("unknown game '{}' (known: {known})", self.game),
            ));
        };
        entry
            .check_rules(&self.rules)
            .map_err(|why| SpecError::new("rules", why))?;
        if let Some(tb) = &self.tablebase {
            if !matches!(entry.id, "chess" | "chess960") {
                return Err(SpecError::new(
                    "tablebase",
                    format!(
                        "Syzygy tablebases hold chess positions: {} has none",
                        entry.id
                    ),
                ));
            }
            crate::referee::tablebase::Tables::shared(&tb.paths)
                .map_err(|why| SpecError::new("tablebase", why))?;
        }
        if !matches!(entry.id, "chess" | "chess960") {
            if let Some(i) = self.engines.iter().position(|e| e.book.is_some()) {
                return Err(SpecError::of_engine(
                    i,
                    format!(
                        "book= is a Polyglot book, which holds chess positions: {} has none",
                        entry.id
                    ),
                ));
            }
        }
        self.check_engines()?;
        self.check_counts()?;
        self.affinity
            .check()
            .map_err(|why| SpecError::new("affinity", why))?;
        if let Some(name) = &self.name {
            check_run_name(name)?;
        }
        if self.no_book && self.openings.is_some() {
            return Err(SpecError::new(
                "no_book",
                "a run plays from a book (--openings) or from the start position (--no-book), \
                 not both",
            ));
        }
        if self.shard.is_some() && self.name.is_none() && self.out.is_none() {
            return Err(SpecError::new(
                "shard",
                "a split run needs --out or --name, the same for every shard, so that the \
                 shards write into one folder",
            ));
        }
        for (setting, path) in [
            ("pgnout", &self.pgnout),
            ("epdout", &self.epdout),
            ("log", &self.log),
        ] {
            if let Some(path) = path {
                check_output_file(path)
                    .map_err(|why| SpecError::new(setting, format!("{}: {why}", path.display())))?;
            }
        }
        Ok(())
    }

    fn check_seeds(&self) -> Result<(), SpecError> {
        let seeded = self.seeds != 1 || self.seeds_meet;
        if seeded && self.format != Format::Gauntlet {
            return Err(SpecError::new(
                "seeds",
                "only a gauntlet has seeds (--format gauntlet)",
            ));
        }
        let players = self.engines.len() as u64;
        if self.seeds == 0 || (players >= 2 && self.seeds >= players) {
            return Err(SpecError::new(
                "seeds",
                format!(
                    "{}: from 1 to one fewer than the {players} engines, for a seed needs an \
                     opponent",
                    self.seeds
                ),
            ));
        }
        Ok(())
    }

    fn check_engines(&self) -> Result<(), SpecError> {
        match (self.kind, self.engines.len()) {
            (RunKind::Match, 2) => {}
            (RunKind::Match, n) => {
                return Err(SpecError::new(
                    "engine",
                    format!(
                        "a match takes exactly two engines, not {n} (for more, use a tournament)"
                    ),
                ))
            }
            (RunKind::Tournament, n) if n < 2 => {
                return Err(SpecError::new(
                    "engine",
                    format!("a tournament needs at least two engines, not {n}"),
                ))
            }
            _ => {}
        }
        self.check_seeds()?;
        if self.engines.len() >= 2 && self.schedule(0).pairings() == 0 {
            return Err(SpecError::new(
                "family",
                "every engine is of one family (family=), and engines of one family never meet: \
                 no game is left to play",
            ));
        }
        if self.sprt.is_some() && self.engines.len() != 2 {
            return Err(SpecError::new(
                "sprt",
                "an SPRT compares exactly two engines",
            ));
        }
        check_engine_names(&self.engines)?;
        if let Some(anchor) = &self.anchor {
            if !self.engines.iter().any(|e| e.name == anchor.name) {
                return Err(SpecError::new(
                    "anchor",
                    format!("no engine is named '{}'", anchor.name),
                ));
            }
        }
        Ok(())
    }

    fn check_counts(&self) -> Result<(), SpecError> {
        let at_least_one = |setting: &'static str, value: u64| {
            if value == 0 {
                Err(SpecError::new(setting, "must be at least 1, not 0"))
            } else {
                Ok(())
            }
        };
        at_least_one("concurrency", self.concurrency as u64)?;
        at_least_one("rounds", self.rounds)?;
        at_least_one("games", self.games.unwrap_or(1))?;
        at_least_one("max_plies", self.max_plies as u64)?;
        at_least_one("book_start", self.book_start)?;
        at_least_one("games_per_opening", self.games_per_opening)?;
        at_least_one("lease", self.lease)?;
        if self.lease > MAX_LEASE {
            return Err(SpecError::new(
                "lease",
                format!("{}: at most {MAX_LEASE} seconds (a day)", self.lease),
            ));
        }
        if self.concurrency > MAX_CONCURRENCY {
            return Err(SpecError::new(
                "concurrency",
                format!(
                    "{}: at most {MAX_CONCURRENCY} games at a time (each runs two engine \
                     processes and a thread of its own)",
                    self.concurrency
                ),
            ));
        }
        // The run keeps one bit per scheduled game: a cap keeps that (and the journal) sane.
        let size = self.schedule_size();
        if size > MAX_GAMES {
            let setting = if self.games.is_some_and(|g| g > MAX_GAMES) {
                "games"
            } else {
                "rounds"
            };
            return Err(SpecError::new(
                setting,
                format!(
                    "{size} games: at most {MAX_GAMES} in one run (split it, or stop it with \
                    an SPRT)"
                ),
            ));
        }
        Ok(())
    }

    /// The adjudication rules the referee applies.
    pub fn adjudication(&self) -> Adjudication {
        Adjudication {
            draw: self.draw,
            resign: self.resign,
            max_plies: Some(self.max_plies),
            // Opened when the settings were checked; opened again here only by reference.
            tablebase: self.tablebase.as_ref().and_then(|rule| {
                let tables = crate::referee::tablebase::Tables::shared(&rule.paths).ok()?;
                Some(crate::referee::tablebase::TbAdjudication {
                    rule: rule.clone(),
                    tables,
                })
            }),
        }
    }

    /// The PGN Event tag and the report's title.
    pub fn event(&self) -> String {
        self.event
            .clone()
            .unwrap_or_else(|| format!("arbiter {}", self.kind.as_str()))
    }

    pub fn rating_options(&self) -> RatingOptions {
        RatingOptions {
            anchor: self.anchor.as_ref().map(|a| (a.name.clone(), a.elo)),
            ..RatingOptions::default()
        }
    }

    /// Games in the schedule: rounds of one game pair per pairing, cut at `games`.
    pub fn schedule_size(&self) -> u64 {
        use super::runner::Schedule;
        self.schedule(0).len()
    }

    /// How the book's openings are taken: shuffled (and how), or in the book's order (`None`).
    pub fn opening_order(&self) -> Option<super::shuffle::Shuffle> {
        self.random_openings.then_some(self.shuffle)
    }

    /// Who plays whom in which game, with which opening of a book of `openings`. Engines of one
    /// family never meet.
    pub fn schedule(&self, openings: usize) -> PairSchedule {
        let schedule = PairSchedule {
            engines: self.engines.len(),
            format: self.format,
            seeds: self.seeds,
            seeds_meet: self.seeds_meet,
            rounds: self.rounds,
            limit: self.games,
            openings,
            seed: self.seed,
            random_order: self.opening_order(),
            book_start: self.book_start,
            colours: self.colours,
            games_per_opening: self.games_per_opening,
            only: None,
            spread_last_round: self.course_tester,
            course_walks: None,
        };
        let schedule = if self.engines.iter().all(|e| e.family.is_none()) {
            schedule
        } else {
            let family = |i: usize| {
                let e = &self.engines[i];
                e.family.as_deref().unwrap_or(&e.name)
            };
            schedule.without(|a, b| family(a) == family(b))
        };
        if !self.course_tester {
            return schedule;
        }
        // `Harness.java`'s getNextMatch: the name that sorts later has White first.
        let named = |i: usize| self.engines[i].name.as_str();
        let pairings = schedule.pairings();
        let oriented: Vec<(usize, usize)> = (0..pairings)
            .map(|p| schedule.pairing_at(p))
            .map(|(a, b)| if named(a) > named(b) { (a, b) } else { (b, a) })
            .collect();
        let walks: Vec<(u64, u64)> = oriented
            .iter()
            .map(|&(greater, lesser)| {
                super::schedule::course_walk(named(lesser), named(greater), openings as u64)
            })
            .collect();
        PairSchedule {
            only: Some(oriented.into()),
            course_walks: Some(walks.into()),
            ..schedule
        }
    }

    /// Writes the spec into its run folder, for `--resume`.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        // Renamed into place: the other tasks of a split run read it while it is written.
        let tmp = dir.join(format!(".{SPEC_FILE}.{}", std::process::id()));
        self.save_as(&tmp)?;
        crate::proof::seal_spec(dir, SPEC_FILE, &std::fs::read(&tmp)?)?;
        std::fs::rename(&tmp, dir.join(SPEC_FILE))
    }

    /// The engines as the run starts them: each told what of its searches the PGN keeps.
    pub fn engines_as_played(&self) -> Vec<EngineConfig> {
        let recorded = crate::engine::Recorded {
            nodes: self.pgn_nodes,
            seldepth: self.pgn_seldepth,
            lines: self.pgn_line.clone(),
            // Only chess's lines are read by the checks.
            pvs: self.check_pvs.is_some() && matches!(self.game.as_str(), "chess" | "chess960"),
        };
        self.engines
            .iter()
            .map(|e| EngineConfig {
                recorded: recorded.clone(),
                ..e.clone()
            })
            .collect()
    }

    /// Writes the spec to `path`, as `save` writes it into a run folder.
    pub fn save_as(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::output::replace(path, (text + "\n").as_bytes())
    }

    /// The settings that may differ between the tasks of one split run (which task, where its
    /// folder was named from, its concurrency, log and copies, the lease); `merge` and the
    /// tasks compare every other field. A new field is shared unless it is named here.
    pub const PER_TASK: &'static [&'static str] = &[
        "shard",
        // Warnings printed, nothing decided.
        "check_pvs",
        "out",
        "name",
        "log",
        "pgnout",
        "epdout",
        "replace_copies",
        "pgnout_min",
        "copy_base",
        "concurrency",
        "affinity",
        "lease",
    ];

    /// The run a shard belongs to: this spec with its `PER_TASK` settings at their defaults.
    pub fn unsplit(&self) -> RunSpec {
        let mut this = serde_json::to_value(self).expect("a spec is plain data");
        let blank = serde_json::to_value(RunSpec::new(self.kind, Vec::new()))
            .expect("a spec is plain data");
        for field in Self::PER_TASK {
            match blank.get(*field) {
                Some(default) => this[*field] = default.clone(),
                // Left out of run.json at its default: left out of the identity too.
                None => {
                    if let Some(fields) = this.as_object_mut() {
                        fields.remove(*field);
                    }
                }
            }
        }
        // How a book would be shuffled decides nothing of a run in the book's order.
        if !self.random_openings {
            this["shuffle"] = blank["shuffle"].clone();
        }
        serde_json::from_value(this).expect("a spec reads back what it wrote")
    }

    /// The run's identity as text, the same for every task of a split run.
    pub fn identity(&self) -> String {
        serde_json::to_string(&self.unsplit()).unwrap_or_default()
    }
}

/// Whether the identity `theirs` (written into a split run's folder, perhaps by an older build)
/// is the run of `mine`, or, where it is not, which setting differs and how. Both are read as
/// this build reads a run: a setting a newer build added counts at its default, one it dropped
/// is ignored, and the settings of one task (affinity, concurrency, the lease...) never count,
/// so a run started before an upgrade goes on after it.
pub fn same_identity(theirs: &str, mine: &str) -> Result<(), String> {
    if theirs == mine {
        return Ok(());
    }
    let read = |text: &str| serde_json::from_str::<serde_json::Value>(text).ok();
    let (Some(a), Some(b)) = (read(theirs), read(mine)) else {
        return Err("the run in the folder has settings this build cannot read".into());
    };
    let (a, b) = (as_this_build_reads(a), as_this_build_reads(b));
    if a == b {
        return Ok(());
    }
    Err(match first_difference(&a, &b, String::new()) {
        Some((path, x, y)) => {
            format!("`{path}` differs: the run in the folder has {x}, this one {y}")
        }
        None => "its settings differ".into(),
    })
}

/// A run's identity as this build writes it; a tune's has its run's inside.
fn as_this_build_reads(value: serde_json::Value) -> serde_json::Value {
    if let Ok(spec) = serde_json::from_value::<RunSpec>(value.clone()) {
        return serde_json::to_value(spec.unsplit()).unwrap_or(value);
    }
    match value {
        serde_json::Value::Object(mut fields) => {
            if let Some(run) = fields.remove("run") {
                fields.insert("run".into(), as_this_build_reads(run));
            }
            serde_json::Value::Object(fields)
        }
        other => other,
    }
}

/// The first place two settings differ: its path, and each side's value, shortened.
fn first_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
    path: String,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    let at = |key: &str| match path.is_empty() {
        true => key.to_string(),
        false => format!("{path}.{key}"),
    };
    match (a, b) {
        _ if a == b => None,
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    at(k),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]"))),
        _ => {
            let show = |v: &Value| {
                let text = v.to_string();
                match text.chars().count() > 80 {
                    true => text.chars().take(77).collect::<String>() + "...",
                    false => text,
                }
            };
            Some((path, show(a), show(b)))
        }
    }
}

impl RunSpec {
    /// The spec saved in a run folder. `Ok(None)`: the folder's run.json is from before specs
    /// were saved typed (a `command` and its `args`), for the caller to read as a command line.
    pub fn load(dir: &Path) -> Result<RunSpec, String> {
        let path = dir.join(SPEC_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot resume {}: {e} (is it a run directory?)",
                dir.display()
            )
        })?;
        crate::proof::check_spec(dir, SPEC_FILE, text.as_bytes())?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        check_folder_format(&value, &path)?;
        serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A task about to join the split run in `run_dir` plays the openings in the order the run
    /// began with: how a book is shuffled belongs to the run, not to one of its tasks.
    pub fn join_order_of(&mut self, run_dir: &Path) -> Result<(), String> {
        let path = run_dir
            .join(super::claims::CLAIMS_DIR)
            .join(super::claims::IDENTITY_FILE);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(());
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        check_folder_format(&value, &path)?;
        if let Some(shuffle) = [&value, &value["run"]]
            .into_iter()
            .find_map(|v| serde_json::from_value(v.get("shuffle")?.clone()).ok())
        {
            self.shuffle = shuffle;
        }
        Ok(())
    }
}

/// Refuses settings an earlier build wrote (at `path`), naming the one command that upgrades
/// their folder, on a line of its own so that no clip of the message cuts it.
pub fn check_folder_format(value: &serde_json::Value, path: &Path) -> Result<(), String> {
    // A tune's settings hold its run's, a bisect's its games'.
    let found = [value, &value["run"], &value["games"]]
        .into_iter()
        .find_map(|v| v.get("folder_format").and_then(|v| v.as_u64()));
    if found == Some(u64::from(FOLDER_FORMAT)) {
        return Ok(());
    }
    let folder = path.parent().unwrap_or(Path::new("."));
    // A task's folder or the claims of a split run: the run's folder is the one to upgrade.
    let run = match folder.parent() {
        Some(up) if up.join(super::claims::CLAIMS_DIR).is_dir() => up,
        _ => folder,
    };
    let run = if run.as_os_str().is_empty() {
        Path::new(".")
    } else {
        run
    };
    Err(match found {
        None => format!(
            "{}: written by an earlier arbiter (folder format 1; this build reads \
                {FOLDER_FORMAT}). \
             Upgrade the run's folder once, in place, and go on as before:\n  arbiter adopt {}",
            path.display(),
            run.display()
        ),
        Some(n) => format!(
            "{}: folder format {n}, which this build ({FOLDER_FORMAT}) cannot read: use the \
             arbiter that wrote it",
            path.display()
        ),
    })
}

/// Engines a run can start: programs that exist, and books that read (a resumed run's too: a
/// book gone since would otherwise go unplayed without a word).
pub fn check_programs(engines: &[EngineConfig]) -> Result<(), SpecError> {
    for (i, cfg) in engines.iter().enumerate() {
        super::check_engine_command(cfg).map_err(|why| SpecError::of_engine(i, why))?;
        if let Some(book) = &cfg.book {
            crate::engine::book::shared(book)
                .map_err(|why| SpecError::of_engine(i, format!("book: {why}")))?;
        }
    }
    Ok(())
}

/// Engines a run can tell apart: names that differ.
pub fn check_engine_names(engines: &[EngineConfig]) -> Result<(), SpecError> {
    for (i, cfg) in engines.iter().enumerate() {
        if engines[..i].iter().any(|e| e.name == cfg.name) {
            return Err(SpecError::of_engine(
                i,
                format!(
                    "two engines are named '{}': give each a different name",
                    cfg.name
                ),
            ));
        }
    }
    Ok(())
}

/// A run name is one plain path component, so output cannot land outside `reports/`.
pub fn check_run_name(name: &str) -> Result<(), SpecError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(SpecError::new(
            "name",
            format!(
                "run name '{name}' must be letters, digits, '-', '_' or '.', not starting with '.'"
            ),
        ))
    }
}

/// An output file must be creatable before the first game: a missing folder or a folder without
/// write permission found after an hour of games would lose them.
/// Makes the folders the run's output files (`pgnout`, `epdout`, `log`) go into, once the run is
/// known to start.
pub fn make_output_folders(spec: &RunSpec) -> Result<(), String> {
    for path in [&spec.pgnout, &spec.epdout, &spec.log]
        .into_iter()
        .flatten()
    {
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder)
                .map_err(|e| format!("cannot make the folder {}: {e}", folder.display()))?;
        }
    }
    Ok(())
}

/// The most games one run schedules.
pub const MAX_GAMES: u64 = 100_000_000;

fn check_output_file(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("is a folder, not a file".into());
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !folder.is_dir() {
        // A missing folder is made when the run starts (as cutechess and fastchess users
        // expect of `-pgnout file=./games/x.pgn`), provided nothing in its way is a file.
        let existing = folder
            .ancestors()
            .find(|a| a.exists() || a.as_os_str().is_empty());
        return match existing {
            Some(a) if !a.as_os_str().is_empty() && !a.is_dir() => {
                Err(format!("{} is a file, not a folder", a.display()))
            }
            _ => Ok(()),
        };
    }
    // Opening is the only test that holds for every user (root included) and file system
    // (read-only mounts, /proc): a file that did not exist is removed again at once.
    let probe = if std::fs::symlink_metadata(path).is_ok() {
        crate::output::open_own(path, true).map(drop)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|_| std::fs::remove_file(path))
    };
    probe.map_err(|e| format!("cannot write there: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(name: &str) -> EngineConfig {
        EngineConfig::parse(&["cmd=sh", &format!("name={name}"), "depth=1"], &[]).unwrap()
    }

    #[test]
    fn a_spec_survives_its_run_json() {
        let mut spec = RunSpec::new(RunKind::Match, vec![engine("a"), engine("b")]);
        spec.sprt = Some(Sprt::parse("elo0=0 elo1=5 model=logistic").unwrap());
        spec.draw = Some(DrawRule::parse("movenumber=40 movecount=8 score=10").unwrap());
        spec.anchor = Some(Anchor::parse("a=1500").unwrap());
        spec.format = Format::Gauntlet;
        let dir = std::env::temp_dir().join(format!("arbiter-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        spec.save(&dir).unwrap();
        assert_eq!(RunSpec::load(&dir).unwrap(), spec);
        // Proofs are the owner's: a run.json changed, a proof removed, a key of the folder's
        // own (as older builds kept it, and as a forger would write one) are all refused.
        let sealed = std::fs::read(dir.join(SPEC_FILE)).unwrap();
        std::fs::write(
            dir.join(SPEC_FILE),
            r#"{"command":"match","args":["--games","2"]}"#,
        )
        .unwrap();
        let changed = RunSpec::load(&dir).unwrap_err();
        assert!(
            changed.contains("changed since arbiter wrote it"),
            "{changed}"
        );
        std::fs::write(dir.join(SPEC_FILE), &sealed).unwrap();
        let proof = dir.join(crate::proof::SPEC_PROOF_FILE);
        let kept = std::fs::read(&proof).unwrap();
        std::fs::remove_file(&proof).unwrap();
        let missing = RunSpec::load(&dir).unwrap_err();
        assert!(missing.contains("run.proof:1: missing"), "{missing}");
        std::fs::write(&proof, &kept).unwrap();
        std::fs::write(dir.join(crate::proof::KEY_FILE), [9u8; 32]).unwrap();
        let legacy = RunSpec::load(&dir).unwrap_err();
        assert!(legacy.contains("older arbiter"), "{legacy}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_task_is_k_of_n() {
        assert_eq!(Shard::parse("2/8"), Ok(Shard { index: 2, count: 8 }));
        for bad in ["0/4", "5/4", "1", "a/b", "1/0", "1/100001"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_check_names_its_setting() {
        let two = || RunSpec::new(RunKind::Match, vec![engine("a"), engine("b")]);
        let refused = |change: &dyn Fn(&mut RunSpec)| {
            let mut spec = two();
            change(&mut spec);
            spec.check().unwrap_err()
        };
        assert_eq!(refused(&|s| s.concurrency = 0).setting, "concurrency");
        assert!(refused(&|s| s.concurrency = 257)
            .reason
            .contains("at most 256"));
        assert_eq!(refused(&|s| s.games = Some(0)).setting, "games");
        assert_eq!(refused(&|s| s.rounds = 0).setting, "rounds");
        assert_eq!(refused(&|s| s.book_start = 0).setting, "book_start");
        assert_eq!(
            refused(&|s| s.games_per_opening = 0).setting,
            "games_per_opening"
        );
        assert_eq!(refused(&|s| s.game = "go".into()).setting, "game");
        assert_eq!(refused(&|s| s.name = Some("../x".into())).setting, "name");
        let dup = refused(&|s| s.engines[1].name = "a".into());
        assert_eq!((dup.setting, dup.engine), ("engine", Some(1)));
        assert_eq!(refused(&|s| s.engines.push(engine("c"))).setting, "engine");
        let anchor = refused(&|s| s.anchor = Some(Anchor::parse("z=0").unwrap()));
        assert_eq!(anchor.setting, "anchor");
        two().check().unwrap();
    }
}
