//! `arbiter run <file>`: a tournament described in a file, either arbiter's TOML (see
//! `tournament.example.toml`) or the MIT 6.172 autotester's `.txt` configuration. Both become a
//! `RunSpec`, checked by the same `RunSpec::check` as a command line; what a file gets wrong is
//! named by its file and line. Relative paths (engines, books) are taken from the file's folder.

use super::runargs::{key_values, Origin, RunJob, TournamentArgs};
use super::Failure;
use arbiter::engine::EngineConfig;
use arbiter::stats::Sprt;
use arbiter::tournament::{RunKind, RunSpec, SpecError};
use arbiter::tune::spec as spec_defaults;
use arbiter::tune::spsa::Param;
use arbiter::tune::TuneSpec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An arbiter TOML file: its sections, and every other key a flag of `arbiter tournament` by
/// the flag's name (`book_plies` for `--book-plies`), read by the flags' own parser so that a
/// setting needs no key of its own here.
#[derive(Deserialize)]
struct TomlRun {
    #[serde(default)]
    each: BTreeMap<String, toml::Value>,
    #[serde(default)]
    engine: Vec<TomlEngine>,
    /// Present: the file describes a tune (`arbiter tune`) of its one engine.
    tune: Option<TomlTune>,
    #[serde(flatten)]
    flags: BTreeMap<String, toml::Value>,
}

/// The flags a file's keys stand for: `arbiter tournament`'s, and `match`'s `--sprt`.
#[derive(clap::Parser)]
struct FileFlags {
    #[command(flatten)]
    tournament: TournamentArgs,
    #[arg(long, num_args = 1..)]
    sprt: Vec<String>,
}

/// Flags of the command line that say how this process runs, not what the run is.
const NOT_KEYS: &[&str] = &["resume", "shard", "shards", "quiet", "help"];

/// Keys naming a file or folder: relative to the configuration file's folder.
const PATH_KEYS: &[&str] = &["openings", "out", "pgnout", "epdout", "log"];

/// A key refused before its flag is parsed, named by its line.
struct KeyError {
    key: String,
    why: String,
}

impl KeyError {
    fn at(self, origin: &Origin) -> Failure {
        let Origin::File { path, text, .. } = origin else {
            return Failure::bad_input(format!("{}: {}", self.key, self.why));
        };
        match super::runargs::nth_line_starting(text, &self.key, 0) {
            Some(n) => Failure::bad_input(format!(
                "{}:{n}: {}: {}",
                path.display(),
                self.key,
                self.why
            )),
            None => Failure::bad_input(format!("{}: {}: {}", path.display(), self.key, self.why)),
        }
    }
}

/// Keys whose flag, when absent, is neither on nor off: `false` is written as `--key=off`.
const OFF_WORD_KEYS: &[&str] = &["affinity"];

/// The command-line words of the file's keys: `true` is the flag alone, `false` no flag, a list
/// its items joined by commas (`affinity = [0, 1]`).
fn key_words(flags: &BTreeMap<String, toml::Value>, base: &Path) -> Result<Vec<String>, KeyError> {
    let mut words = vec!["arbiter run".to_string()];
    for (key, value) in flags {
        let refuse = |why: &str| KeyError {
            key: key.clone(),
            why: why.to_string(),
        };
        if NOT_KEYS.contains(&key.as_str()) || key.contains('-') {
            return Err(refuse(if key.contains('-') {
                "keys are written with _ where the flag has -"
            } else {
                "a flag of the command line, not a key of the file"
            }));
        }
        let flag = format!("--{}", key.replace('_', "-"));
        let text = match value {
            toml::Value::Boolean(true) => {
                words.push(flag);
                continue;
            }
            // Off where the flag's absence means `auto`.
            toml::Value::Boolean(false) if OFF_WORD_KEYS.contains(&key.as_str()) => {
                words.push(format!("{flag}=off"));
                continue;
            }
            toml::Value::Boolean(false) => continue,
            toml::Value::String(s) if PATH_KEYS.contains(&key.as_str()) => in_folder(base, s),
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(_) | toml::Value::Float(_) => value.to_string(),
            toml::Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(","),
            toml::Value::Datetime(_) | toml::Value::Table(_) => {
                return Err(refuse("takes a string, a number, true or false"))
            }
        };
        // One word, `=` joined: a value that starts with '-' is not read as a flag.
        words.push(format!("{flag}={text}"));
    }
    Ok(words)
}

/// A flag's refusal as the key that stands for it.
fn clap_refusal(e: clap::Error) -> KeyError {
    use clap::error::{ContextKind, ContextValue};
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.clone(),
        Some(ContextValue::Strings(args)) => args.first().cloned().unwrap_or_default(),
        _ => String::new(),
    };
    let key = arg
        .trim_start_matches('-')
        .split([' ', '='])
        .next()
        .unwrap_or("")
        .replace('-', "_");
    let rendered = e.render().to_string();
    let why = match e.kind() {
        clap::error::ErrorKind::UnknownArgument => "not a key of arbiter's files (every flag of \
             `arbiter tournament` is one, with _ for -, besides [each], [[engine]] and [tune])"
            .to_string(),
        _ => {
            let why = rendered
                .lines()
                .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage"))
                .map(|l| l.trim().trim_start_matches("error: "))
                .collect::<Vec<_>>()
                .join(" ");
            // The key is named before the reason: the flag's spelling would only confuse.
            match why.split_once(" for '--") {
                Some((head, tail)) => {
                    format!(
                        "{head}{}",
                        tail.split_once('\'').map_or("", |(_, rest)| rest)
                    )
                }
                None => why,
            }
        }
    };
    KeyError { key, why }
}

/// The flags the file's keys stand for, parsed as the command line's.
fn file_flags(run: &TomlRun, base: &Path) -> Result<FileFlags, KeyError> {
    use clap::Parser;
    FileFlags::try_parse_from(key_words(&run.flags, base)?).map_err(clap_refusal)
}

/// The `[tune]` section: `arbiter tune`'s own flags, by the same names.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlTune {
    /// `NAME=START,MIN,MAX,C_END,R_END`, one string per parameter.
    params: Vec<String>,
    pairs: Option<u64>,
    alpha: Option<f64>,
    gamma: Option<f64>,
    a_ratio: Option<f64>,
    window: Option<u64>,
    verify: Option<String>,
    verify_games: Option<u64>,
}

impl TomlTune {
    fn spec(&self, run: RunSpec) -> Result<TuneSpec, SpecError> {
        let params = self
            .params
            .iter()
            .map(|p| Param::parse(p).map_err(|why| SpecError::new("params", why)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut spec = TuneSpec::of_run(run, params, self.pairs.unwrap_or(spec_defaults::PAIRS));
        spec.gains.alpha = self.alpha.unwrap_or(spec.gains.alpha);
        spec.gains.gamma = self.gamma.unwrap_or(spec.gains.gamma);
        spec.gains.a_ratio = self.a_ratio.unwrap_or(spec.gains.a_ratio);
        spec.window = self.window.unwrap_or(spec.window);
        spec.verify = key_values("verify", self.verify.as_slice(), Sprt::parse)?;
        spec.verify_games = self.verify_games.unwrap_or(spec.verify_games);
        Ok(spec)
    }
}

#[derive(Deserialize)]
struct TomlEngine {
    cmd: String,
    name: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
    /// Any other setting (tc, st, depth, nodes, proto, timemargin, stall, dir...).
    #[serde(flatten)]
    settings: BTreeMap<String, toml::Value>,
}

/// Settings as `key=value`, a dotted key's table (`option.Style = "greedy"`, which TOML reads
/// as a table `option`, and `env.NAME`) as the `option.Style=greedy` of the command line.
fn flat_settings<'a>(
    settings: impl IntoIterator<Item = (&'a String, &'a toml::Value)>,
) -> Vec<String> {
    let mut flat = Vec::new();
    for (key, value) in settings {
        match value {
            toml::Value::Table(table) => flat.extend(
                table
                    .iter()
                    .map(|(k, v)| format!("{key}.{k}={}", value_text(v))),
            ),
            _ => flat.push(format!("{key}={}", value_text(value))),
        }
    }
    flat
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A file named in the configuration (a book, an output folder): relative to the file's folder,
/// even as a bare name.
fn in_folder(base: &Path, path: &str) -> String {
    if Path::new(path).is_absolute() {
        path.to_string()
    } else {
        base.join(path).display().to_string()
    }
}

/// A run name made from a title: what `check_run_name` accepts, other characters as '-'.
fn run_name(title: &str) -> String {
    let name: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(100)
        .collect();
    // Neither a hidden folder nor one that reads as a flag (`-rf`) when typed in a shell.
    let name = name.trim_start_matches(['.', '-']);
    if name.is_empty() {
        "run".into()
    } else {
        name.to_string()
    }
}

/// A program in the file: relative to the file's folder when it is a path; a bare name is
/// looked up on PATH.
fn beside(base: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() || !path.contains('/') {
        path.to_string()
    } else {
        base.join(p).display().to_string()
    }
}

/// An engine table as the `key=value` settings of `--engine`, its one parser.
fn toml_engine_settings(e: &TomlEngine, base: &Path) -> Vec<String> {
    let mut settings = vec![format!("cmd={}", beside(base, &e.cmd))];
    settings.extend(e.name.as_ref().map(|n| format!("name={n}")));
    settings.extend(e.args.iter().map(|a| format!("arg={a}")));
    settings.extend(
        e.options
            .iter()
            .map(|(k, v)| format!("option.{k}={}", value_text(v))),
    );
    settings.extend(flat_settings(&e.settings));
    settings
}

fn toml_spec(run: &TomlRun, base: &Path, origin: &Origin) -> Result<RunSpec, Failure> {
    let explain = |e: SpecError| origin.explain(e);
    if run.tune.is_some() {
        return Err(explain(SpecError::new(
            "tune",
            "this file describes a tune: run it with `arbiter run` (not as a tournament)",
        )));
    }
    tune_or_run_spec(run, base, origin)
}

/// The run of a file, whether it is played or tuned.
fn tune_or_run_spec(run: &TomlRun, base: &Path, origin: &Origin) -> Result<RunSpec, Failure> {
    let explain = |e: SpecError| origin.explain(e);
    let mut flags = file_flags(run, base).map_err(|e| e.at(origin))?;
    // The game first: every engine and book setting is read as that game's.
    let game = (flags.tournament.run.game.as_deref()).unwrap_or(super::runargs::DEFAULT_GAME);
    if arbiter::game::find_game(game).is_none() {
        let known: Vec<&str> = arbiter::game::games().iter().map(|g| g.id).collect();
        return Err(explain(SpecError::new(
            "game",
            format!(
                "'{game}' is no game arbiter plays; give one of {} as text, like game = \"{}\"",
                known.join(", "),
                known[0]
            ),
        )));
    }
    if run.engine.is_empty() {
        return Err(explain(SpecError::new("engine", "no [[engine]] tables")));
    }
    flags.tournament.run.engine_groups = run
        .engine
        .iter()
        .map(|e| toml_engine_settings(e, base))
        .collect();
    flags.tournament.run.each = flat_settings(&run.each);
    let mut spec = flags.tournament.spec().map_err(explain)?;
    spec.sprt = key_values("sprt", &flags.sprt, Sprt::parse).map_err(explain)?;
    Ok(spec)
}

/// A player section of the autotester's file: its settings and the line that opened it.
struct MitPlayer {
    line: usize,
    settings: Vec<String>,
    /// Its limits, each with its rank in the tester's precedence (`PlayGame.java`: tc, then
    /// nodes, then depth, then fis): only the first is played.
    limits: Vec<(u8, String)>,
}

impl MitPlayer {
    /// The settings the player is played with: the limit the tester would use, or its
    /// `DEFAULT_DEPTH` of 4 where the section names none.
    fn played(mut self) -> Vec<String> {
        self.limits.sort_by_key(|(rank, _)| *rank);
        let limit = self.limits.into_iter().next().map(|(_, l)| l);
        self.settings
            .push(limit.unwrap_or_else(|| format!("depth={MIT_DEFAULT_DEPTH}")));
        self.settings
    }
}

/// The depth the course's tester searches to for a player with no limit.
const MIT_DEFAULT_DEPTH: u32 = 4;

/// The MIT autotester's `key = value` format: header keys, then `player = <name>` sections.
/// Every error names the file and the line it comes from.
fn mit_spec(text: &str, base: &Path, file: &Path) -> Result<RunSpec, Failure> {
    let at =
        |line: usize, why: String| Failure::bad_input(format!("{}:{line}: {why}", file.display()));
    let (header, players) = mit_sections(text, base, &at)?;
    let engines = players
        .into_iter()
        .map(|p| {
            // Checked here, where the line is known, rather than later as "engine #3".
            let line = p.line;
            EngineConfig::parse(&p.played(), &[]).map_err(|e| at(line, format!("player: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut spec = RunSpec::new(RunKind::Tournament, engines);
    spec.course_tester = true;
    // The course tester's defaults: the start position without `book`, 1000 games in all
    // without `game_rounds`.
    spec.no_book = true;
    let mut games = MIT_DEFAULT_GAMES;
    let mut move_rule = None;
    for (line, key, value) in header {
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| at(line, format!("{key} = {value} is not a whole number")))
        };
        match key.as_str() {
            "cpus" => spec.concurrency = number()? as usize,
            "book" => {
                spec.no_book = false;
                spec.openings = Some(PathBuf::from(in_folder(base, &value)));
                spec.book_plies = Some(10);
            }
            // The tester reads 0 as its default.
            "game_rounds" => games = Some(number()?).filter(|&g| g > 0).unwrap_or(games),
            "title" => {
                spec.name = Some(run_name(&value));
                spec.event = Some(value);
            }
            // Moves, as plies, within the tester's bounds (2 to 4000 moves); a number its
            // reader (a Java int) cannot hold is refused, as it is there.
            "adjudicate" => match number()? {
                n if n > i32::MAX as u64 => {
                    return Err(at(line, format!("adjudicate = {value} is too large")))
                }
                n => spec.max_plies = 2 * n.clamp(2, 4000) as usize,
            },
            // A description the tester reads and leaves unused.
            "desc" => {}
            // arbiter's own keys: the 2012 course's player plays leiserchess2012, and
            // `move_rule = rules` draws as the rule text does rather than as the course's tester.
            "game" => spec.game = value,
            "move_rule" => move_rule = Some((line, value)),
            other => {
                return Err(at(
                    line,
                    format!("unknown setting '{other}' before the first player"),
                ))
            }
        }
    }
    apply_move_rule(&mut spec, move_rule, &at)?;
    // The autotester counts games in all; arbiter plays rounds of game pairs, so it plays
    // enough rounds (of the pairings the families leave) and stops at exactly that many games.
    let pairings = spec.schedule(0).pairings().max(1);
    spec.rounds = games.div_ceil(2 * pairings).max(1);
    spec.games = Some(games);
    Ok(spec)
}

/// The file's `move_rule` (with its line), else the course tester's own count for leiserchess
/// (`PlayGame.java`), the game its files are written for.
fn apply_move_rule(
    spec: &mut RunSpec,
    move_rule: Option<(usize, String)>,
    at: &impl Fn(usize, String) -> Failure,
) -> Result<(), Failure> {
    let default_rule = (spec.game == "leiserchess").then_some("course");
    match move_rule
        .as_ref()
        .map(|(l, v)| (*l, v.as_str()))
        .or(default_rule.map(|v| (0, v)))
    {
        Some((_, "rules")) | None => Ok(()),
        Some((_, "course")) if spec.game == "leiserchess" => {
            spec.rules.push(("move-rule".into(), "course".into()));
            Ok(())
        }
        Some((line, value)) => Err(at(
            line,
            format!("move_rule = {value}: {} takes rules or course", spec.game),
        )),
    }
}

/// The games the course's tester plays when its file has no `game_rounds`.
const MIT_DEFAULT_GAMES: u64 = 1000;

/// The header's `(line, key, value)` settings and the player sections, in order.
type MitSections = (Vec<(usize, String, String)>, Vec<MitPlayer>);

fn mit_sections(
    text: &str,
    base: &Path,
    at: &dyn Fn(usize, String) -> Failure,
) -> Result<MitSections, Failure> {
    let mut header = Vec::new();
    let mut players: Vec<MitPlayer> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| at(i + 1, why.to_string());
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| bad("expected key = value"))?;
        let (key, value) = (key.trim(), value.trim());
        if key == "player" {
            players.push(MitPlayer {
                line: i + 1,
                settings: vec![format!("name={value}"), "proto=leiserchess".into()],
                limits: Vec::new(),
            });
            continue;
        }
        match players.last_mut() {
            None => header.push((i + 1, key.to_string(), value.to_string())),
            Some(player) => match mit_limit(key, value).map_err(|why| bad(&why))? {
                Some(limit) => player.limits.push(limit),
                None => player
                    .settings
                    .extend(mit_player_setting(key, value, base).map_err(|why| bad(&why))?),
            },
        }
    }
    Ok((header, players))
}

/// One line of a player section as engine settings.
fn mit_player_setting(key: &str, value: &str, base: &Path) -> Result<Vec<String>, String> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    Ok(match key {
        "invoke" => {
            // A command line, split on spaces and run directly, never through a shell.
            let [cmd, args @ ..] = &parts[..] else {
                return Err("invoke needs a program".into());
            };
            let mut settings = vec![format!("cmd={}", beside(base, cmd))];
            settings.extend(args.iter().map(|a| format!("arg={a}")));
            settings
        }
        "family" => vec![format!("{key}={value}")],
        other => vec![format!("option.{other}={value}")],
    })
}

/// A limit line of a player section, with its rank in the tester's precedence; `None` for a
/// line that is no limit.
fn mit_limit(key: &str, value: &str) -> Result<Option<(u8, String)>, String> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    Ok(Some(match key {
        "tc" => match parts[..] {
            [moves, secs] => (0, format!("tc={moves}/{secs}")),
            [moves, secs, moves2, secs2] => (0, format!("tc={moves}/{secs}:{moves2}/{secs2}")),
            _ => return Err("tc takes <moves> <seconds> [<moves> <seconds>]".into()),
        },
        // The tester takes 1,000,000 (or 1.000.000) for a million.
        "nodes" => (1, format!("nodes={}", value.replace([',', '.'], ""))),
        "depth" => (2, format!("depth={value}")),
        "fis" => match parts[..] {
            [main, inc] => (3, format!("tc={main}+{inc}")),
            _ => return Err("fis takes <main seconds> <increment seconds>".into()),
        },
        _ => return Ok(None),
    }))
}

fn read_toml(text: &str, file: &Path) -> Result<TomlRun, Failure> {
    toml::from_str(text).map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))
}

/// The run a configuration file describes.
pub fn job_of(file: &Path, quiet: bool, out: Option<&Path>) -> Result<RunJob, Failure> {
    let text = arbiter::input::read_text_capped(file, 64 << 20)
        .map_err(|e| Failure::bad_input(format!("cannot read {}: {e}", file.display())))?;
    job_of_text(text, file, quiet, out)
}

/// The tune a TOML file with a `[tune]` section describes; `None` for any other file.
pub fn tune_job_of(
    file: &Path,
    quiet: bool,
    out: Option<&Path>,
) -> Result<Option<super::tunecmd::TuneJob>, Failure> {
    if file.extension().is_none_or(|e| e != "toml") {
        return Ok(None);
    }
    let text = arbiter::input::read_text_capped(file, 64 << 20)
        .map_err(|e| Failure::bad_input(format!("cannot read {}: {e}", file.display())))?;
    let run = read_toml(&text, file)?;
    let Some(tune) = &run.tune else {
        return Ok(None);
    };
    let origin = Origin::File {
        path: file.to_path_buf(),
        text: text.clone(),
        mit: false,
    };
    let base: PathBuf = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let run_spec = tune_or_run_spec(&run, &base, &origin)?;
    let mut spec = tune.spec(run_spec).map_err(|e| origin.explain(e))?;
    if let Some(dir) = out {
        spec.run.out = Some(dir.to_path_buf());
        spec.run.name = None;
    }
    Ok(Some(super::tunecmd::TuneJob {
        spec,
        origin,
        quiet,
        resume: None,
    }))
}

/// The run a configuration's text describes, as read from `file` (whose name says the format:
/// `.toml`, else the autotester's `.txt`, and whose folder relative paths start from).
pub fn job_of_text(
    text: String,
    file: &Path,
    quiet: bool,
    out: Option<&Path>,
) -> Result<RunJob, Failure> {
    let base: PathBuf = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let mit = file.extension().is_none_or(|e| e != "toml");
    let mut spec = if mit {
        mit_spec(&text, &base, file)?
    } else {
        let run = read_toml(&text, file)?;
        let origin = Origin::File {
            path: file.to_path_buf(),
            text: text.clone(),
            mit: false,
        };
        toml_spec(&run, &base, &origin)?
    };
    if let Some(dir) = out {
        spec.out = Some(dir.to_path_buf());
        spec.name = None;
    }
    if mit && out.is_none() {
        if let Some(job) = course_rerun(&spec, file, quiet)? {
            return Ok(job);
        }
    }
    Ok(RunJob {
        spec,
        origin: Origin::File {
            path: file.to_path_buf(),
            text,
            mit,
        },
        quiet,
        resume: None,
    })
}

/// The course's tester run again on its file goes on where it stopped (it adds to the file's
/// PGN); arbiter does the same with the file's run folder when it holds this file's run.
fn course_rerun(spec: &RunSpec, file: &Path, quiet: bool) -> Result<Option<RunJob>, Failure> {
    use arbiter::tournament::{journal::JOURNAL_FILE, launch::out_dir, spec::same_identity};
    let dir = out_dir(spec, None);
    if !dir.join(JOURNAL_FILE).exists() {
        return Ok(None);
    }
    let Ok(mut saved) = RunSpec::load(&dir) else {
        return Ok(None);
    };
    // What the run recorded when it started (the programs' hashes) is checked by the resume.
    saved.contents = None;
    if same_identity(&saved.identity(), &spec.identity()).is_err() {
        return Ok(None);
    }
    arbiter::notice!(
        "{} holds the run of {}: going on with it, as the course's tester goes on with its \
         .pgn (--resume {} implied)",
        dir.display(),
        file.display(),
        dir.display()
    );
    super::runargs::resumed(&dir, quiet, Some(spec.concurrency)).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter::tournament::Format;

    #[test]
    fn a_title_makes_a_plain_folder_name() {
        assert_eq!(run_name("../../etc"), "etc");
        assert_eq!(run_name("-rf basic"), "rf-basic");
        assert_eq!(run_name("..."), "run");
        assert_eq!(run_name("basic 2"), "basic-2");
    }
    use proptest::prelude::*;

    fn toml_of(text: &str) -> Result<RunSpec, String> {
        let run: TomlRun = toml::from_str(text).map_err(|e| e.to_string())?;
        let origin = Origin::File {
            path: "t.toml".into(),
            text: text.to_string(),
            mit: false,
        };
        toml_spec(&run, Path::new("/t"), &origin).map_err(|e| e.message)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn config_parsers_never_panic(text in "[a-z_ =0-9./#\\n\\[\\]\"{},]{0,200}") {
            let _ = mit_spec(&text, Path::new("/tmp"), Path::new("x.txt"));
            let _ = toml_of(&text);
        }
    }

    #[test]
    fn the_autotester_example_becomes_a_tournament() {
        let text = "cpus = 2\nbook = ../tests/book.dta\ngame_rounds = 500\ntitle = \
            basic\nadjudicate = 400\n\nplayer = reference\ninvoke = ../player/leiserchess\nfis = \
            20 0.5\n\nplayer = candidate\ninvoke = ../player/leiserchess_new -v\nfis = 20 \
            0.5\nhash = 64\n";
        let spec = mit_spec(text, Path::new("/at"), Path::new("basic.txt")).unwrap();
        assert_eq!(spec.concurrency, 2);
        assert_eq!(spec.openings, Some("/at/../tests/book.dta".into()));
        assert_eq!(spec.book_plies, Some(10));
        assert_eq!((spec.rounds, spec.games), (250, Some(500)));
        assert_eq!(spec.event.as_deref(), Some("basic"));
        assert_eq!(spec.name.as_deref(), Some("basic"));
        assert_eq!(spec.max_plies, 800);
        let [reference, candidate] = &spec.engines[..] else {
            panic!("{:?}", spec.engines)
        };
        assert_eq!(reference.name, "reference");
        assert_eq!(reference.cmd, "/at/../player/leiserchess");
        assert_eq!(reference.proto, arbiter::engine::Proto::Leiserchess);
        assert_eq!(reference.limits_summary(), "tc=20+0.5");
        assert_eq!(candidate.args, ["-v"]);
        assert_eq!(candidate.options, [("hash".to_string(), "64".to_string())]);
    }

    /// The example the repository ships is one the course's own tester reads: its reader
    /// (`lauto.jar`) takes a comment only on a line of its own, starting with `#`, and the
    /// rest of a value line as the value.
    #[test]
    fn the_shipped_example_holds_no_comment_after_a_value() {
        let text = include_str!("../autotester.example.txt");
        for (i, line) in text.lines().enumerate() {
            let comment = line.starts_with('#');
            let setting = line.split_once(" = ").is_some() && !line.contains('#');
            assert!(
                line.is_empty() || comment || setting,
                "autotester.example.txt:{}: {line}",
                i + 1
            );
        }
        assert!(mit_spec(text, Path::new("/at"), Path::new("x.txt")).is_ok());
    }

    /// The course guide's family example, and the tester's defaults where its keys are absent.
    #[test]
    fn the_course_file_plays_the_testers_limits_and_draw_rule() {
        let names = ["beta", "delta", "alpha", "gamma"];
        let mut players = String::new();
        let limits = [
            "fis = 20 0.5\ndepth = 3",
            "",
            "tc = 40 60 20 30\ndepth = 5",
            "depth = 2",
        ];
        for (name, limit) in names.iter().zip(limits) {
            players.push_str(&format!("player = {name}\ninvoke = ./{name}\n{limit}\n"));
        }
        let text = format!("title = mine\n{players}");
        let spec = mit_spec(&text, Path::new("/at"), Path::new("f.txt")).unwrap();
        let limits: Vec<String> = spec.engines.iter().map(|e| e.limits_summary()).collect();
        let tc = |text: &str| arbiter::clock::TimeControl::parse(text).unwrap();
        // tc before nodes before depth before fis; no limit at all is depth 4.
        assert_eq!(spec.engines[0].limits.depth, Some(3), "{limits:?}");
        assert_eq!(spec.engines[0].limits.tc, None, "{limits:?}");
        assert_eq!(spec.engines[1].limits.depth, Some(4), "{limits:?}");
        assert_eq!(
            spec.engines[2].limits.tc,
            Some(tc("40/60:20/30")),
            "{limits:?}"
        );
        assert_eq!(spec.engines[2].limits.depth, None, "{limits:?}");
        assert_eq!(spec.engines[3].limits.depth, Some(2), "{limits:?}");
        // The course's player has no node limit (`go` takes depth or time): a player with
        // nothing else is refused, one with a clock too plays on its clock.
        let nodes = |more: &str| {
            let text = format!(
                "player = a\ninvoke = ./a\nnodes = 1,000\n{more}player = b\ninvoke = ./b\n"
            );
            mit_spec(&text, Path::new("/at"), Path::new("f.txt"))
        };
        assert!(nodes("")
            .unwrap_err()
            .message
            .contains("f.txt:1: player: engine 'a': the leiserchess"));
        assert_eq!(nodes("tc = 40 60\n").unwrap().engines[0].limits.nodes, None);
        assert_eq!(
            spec.rules,
            [("move-rule".to_string(), "course".to_string())]
        );
        let rules = format!("move_rule = rules\n{text}");
        let spec = mit_spec(&rules, Path::new("/at"), Path::new("f.txt")).unwrap();
        assert!(spec.rules.is_empty());
        let err = mit_spec(
            &rules.replace("= rules", "= 50"),
            Path::new("/at"),
            Path::new("f.txt"),
        );
        assert!(err.unwrap_err().message.contains("f.txt:1: move_rule = 50"));
    }

    #[test]
    fn the_autotesters_families_never_meet_and_its_defaults_hold() {
        let player = |name: &str, family: &str| {
            format!("player = {name}\ninvoke = ./{name}\nfis = 6 0.1\n{family}\n")
        };
        let mut text =
            String::from("cpus = 4\ntitle = foreign program test\ndesc = three of mine\n");
        for name in ["Master", "Joes_program", "Fred"] {
            text.push_str(&player(name, ""));
        }
        for version in ["1.0", "1.1", "1.2"] {
            text.push_str(&player(
                &format!("myPlayer{version}"),
                "family = myLeiserchess",
            ));
        }
        let spec = mit_spec(&text, Path::new("/at"), Path::new("f.txt")).unwrap();
        let schedule = spec.schedule(0);
        // 15 pairings less the 3 among the family's versions.
        assert_eq!(schedule.pairings(), 12);
        assert_eq!(spec.games, Some(1000), "the tester's 1000 games");
        assert!(spec.rounds * 12 * 2 >= 1000);
        assert!(
            spec.no_book,
            "the start position without a book, as the tester plays"
        );
        use arbiter::tournament::runner::Schedule;
        for i in 0..schedule.len() {
            let p = schedule.pairing(i);
            let family = |e: usize| spec.engines[e].family.clone();
            assert!(
                family(p.white).is_none() || family(p.white) != family(p.black),
                "game {i}: {} against {}",
                spec.engines[p.white].name,
                spec.engines[p.black].name
            );
        }
        // Its reader's bounds: adjudicate within 2..4000 moves.
        let text = "adjudicate = 9000\nplayer = a\ninvoke = ./a\ndepth = 1\nplayer = b\ninvoke = \
            ./b\ndepth = 1\n";
        let spec = mit_spec(text, Path::new("/at"), Path::new("f.txt")).unwrap();
        assert_eq!(spec.max_plies, 8000);
        let spec = mit_spec(
            &text.replace("9000", "1"),
            Path::new("/at"),
            Path::new("f.txt"),
        );
        assert_eq!(spec.unwrap().max_plies, 4);
        // A family that leaves no game is refused, naming it.
        let text = "player = a\ninvoke = ./a\ndepth = 1\nfamily = x\nplayer = b\ninvoke = \
            ./b\ndepth = 1\nfamily = x\n";
        let spec = mit_spec(text, Path::new("/at"), Path::new("f.txt")).unwrap();
        assert_eq!(spec.check_all_but_programs().unwrap_err().setting, "family");
    }

    #[test]
    fn the_autotester_file_names_its_lines_in_errors_and_resolves_the_book_beside_it() {
        let text = "book = book.dta\ntitle = my run/1\nplayer = a\ninvoke = ./p\ndepth = x\n";
        let err = mit_spec(text, Path::new("/at"), Path::new("basic.txt")).unwrap_err();
        assert!(
            err.message.starts_with("basic.txt:3: player: "),
            "{}",
            err.message
        );
        assert!(err.message.contains("depth=x"), "{}", err.message);
        let text = "book = book.dta\ntitle = my run/1\ngame_rounds = 3\nplayer = a\ninvoke = \
            ./p\ndepth = 1\nplayer = b\ninvoke = ./q\ndepth = 1\n";
        let spec = mit_spec(text, Path::new("/at"), Path::new("basic.txt")).unwrap();
        assert_eq!(spec.openings, Some("/at/book.dta".into()));
        assert_eq!(spec.name.as_deref(), Some("my-run-1"));
        assert_eq!((spec.rounds, spec.games), (2, Some(3)));
        let err = mit_spec("cpus = two\n", Path::new("/at"), Path::new("b.txt")).unwrap_err();
        assert!(
            err.message.starts_with("b.txt:1: cpus = two"),
            "{}",
            err.message
        );
    }

    #[test]
    fn dotted_option_and_env_keys_read_as_on_the_command_line() {
        let spec = toml_of(
            "[[engine]]\ncmd = \"/bin/sh\"\nname = \"a\"\noption.Style = \"greedy\"\nenv.LEVEL = \
                3\n\n\
             [[engine]]\ncmd = \"/bin/sh\"\nname = \"b\"\n\n[each]\ndepth = 1\noption.Hash = 16\n",
        )
        .unwrap();
        let a = &spec.engines[0];
        assert!(
            a.options.contains(&("Style".into(), "greedy".into())),
            "{a:?}"
        );
        assert!(a.options.contains(&("Hash".into(), "16".into())), "{a:?}");
        assert_eq!(a.sandbox.env, vec![("LEVEL".to_string(), "3".to_string())]);
    }

    #[test]
    fn toml_settings_are_typed_where_they_are_read() {
        let engines = "[[engine]]\ncmd = \"a\"\ndepth = 1\n[[engine]]\ncmd = \"b\"\ndepth = 1\n";
        let on =
            format!("affinity = true\nrandom_openings = true\nformat = \"gauntlet\"\n{engines}");
        let spec = toml_of(&on).unwrap();
        assert!(spec.affinity.is_on() && spec.random_openings);
        assert_eq!(spec.format, Format::Gauntlet);
        let off = format!("affinity = false\n{engines}");
        assert_eq!(
            toml_of(&off).unwrap().affinity,
            arbiter::tournament::Affinity::Pinned(false)
        );
        assert!(toml_of(engines).unwrap().affinity.is_auto(), "the default");
        let auto = format!("affinity = \"auto\"\n{engines}");
        assert!(toml_of(&auto).unwrap().affinity.is_auto());
        let listed = format!("affinity = [0]\n{engines}");
        assert_eq!(
            toml_of(&listed).unwrap().affinity,
            arbiter::tournament::Affinity::Cpus(vec![0])
        );
        let err = toml_of(&format!("format = \"swiss\"\n{engines}")).unwrap_err();
        assert_eq!(
            err,
            "t.toml:1: format: invalid value 'swiss' [possible values: round-robin, gauntlet]"
        );
        let err = toml_of(&format!("seed = 1\ndraw = \"movecount=8\"\n{engines}")).unwrap_err();
        assert!(err.starts_with("t.toml:2: draw: missing"), "{err}");
        let err = toml_of(&format!("rounds = \"four\"\n{engines}")).unwrap_err();
        assert!(
            err.starts_with("t.toml:1: rounds: invalid value 'four'"),
            "{err}"
        );
        let err = toml_of(&format!("game = \"chess\"\nrouds = 3\n{engines}")).unwrap_err();
        assert!(err.starts_with("t.toml:2: rouds: not a key"), "{err}");
        let err = toml_of(&format!("book-plies = 3\n{engines}")).unwrap_err();
        assert!(err.contains("with _ where the flag has -"), "{err}");
        let err = toml_of(&format!("resume = \"r\"\n{engines}")).unwrap_err();
        assert!(err.contains("not a key of the file"), "{err}");
        // A value that starts with '-' is a value, not a flag.
        let spec = toml_of(&format!("event = \"-x\"\n{engines}")).unwrap();
        assert_eq!(spec.event.as_deref(), Some("-x"));
    }
}
