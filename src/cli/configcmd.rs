//! `arbiter run <file>`: a tournament described in a file, either arbiter's TOML (see
//! `tournament.example.toml`) or the MIT 6.172 autotester's `.txt` configuration. Both become a
//! `RunSpec`, checked by the same `RunSpec::check` as a command line; what a file gets wrong is
//! named by its file and line. Relative paths (engines, books) are taken from the file's folder.

use super::runargs::{engine_error, key_values, Origin, RunJob};
use super::Failure;
use crate::engine::EngineConfig;
use crate::referee::{DrawRule, ResignRule};
use crate::stats::Sprt;
use crate::tournament::spec::Anchor;
use crate::tournament::{Format, RunKind, RunSpec, SpecError};
use crate::tune::spec as spec_defaults;
use crate::tune::spsa::Param;
use crate::tune::TuneSpec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlRun {
    game: Option<String>,
    format: Option<Format>,
    rounds: Option<u64>,
    games: Option<u64>,
    concurrency: Option<usize>,
    openings: Option<String>,
    no_book: Option<bool>,
    book_plies: Option<usize>,
    book_format: Option<String>,
    random_openings: Option<bool>,
    book_start: Option<u64>,
    colours: Option<crate::tournament::Colours>,
    affinity: Option<crate::tournament::Affinity>,
    max_plies: Option<usize>,
    seed: Option<u64>,
    name: Option<String>,
    out: Option<String>,
    event: Option<String>,
    site: Option<String>,
    anchor: Option<String>,
    draw: Option<String>,
    rules: Option<String>,
    resign: Option<String>,
    strict: Option<bool>,
    sprt: Option<String>,
    pgnout: Option<String>,
    epdout: Option<String>,
    replace_copies: Option<bool>,
    log: Option<String>,
    viewer_games: Option<usize>,
    #[serde(default)]
    each: BTreeMap<String, toml::Value>,
    #[serde(default)]
    engine: Vec<TomlEngine>,
    /// Present: the file describes a tune (`arbiter tune`) of its one engine.
    tune: Option<TomlTune>,
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

fn toml_spec(mut run: TomlRun, base: &Path) -> Result<RunSpec, SpecError> {
    if run.tune.take().is_some() {
        return Err(SpecError::new(
            "tune",
            "this file describes a tune: run it with `arbiter run` (not as a tournament)",
        ));
    }
    if run.engine.is_empty() {
        return Err(SpecError::new("engine", "no [[engine]] tables"));
    }
    let each = flat_settings(&run.each);
    let engines = run
        .engine
        .iter()
        .enumerate()
        .map(|(i, e)| {
            EngineConfig::parse(&toml_engine_settings(e, base), &each)
                .map_err(|e| engine_error(i, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut spec = RunSpec::new(RunKind::Tournament, engines);
    let file_path = |p: Option<String>| p.map(|p| PathBuf::from(in_folder(base, &p)));
    spec.game = run.game.unwrap_or(spec.game);
    spec.format = run.format.unwrap_or(spec.format);
    spec.rounds = run.rounds.unwrap_or(spec.rounds);
    spec.games = run.games;
    spec.concurrency = run.concurrency.unwrap_or(spec.concurrency);
    spec.openings = file_path(run.openings);
    spec.no_book = run.no_book.unwrap_or(false);
    spec.book_plies = run.book_plies;
    spec.book_format = run
        .book_format
        .as_deref()
        .map(crate::tournament::openings::BookFormat::parse)
        .transpose()
        .map_err(|e| SpecError::new("book_format", e))?;
    spec.random_openings = run.random_openings.unwrap_or(false);
    spec.book_start = run.book_start.unwrap_or(spec.book_start);
    spec.colours = run.colours.unwrap_or_default();
    spec.affinity = run.affinity.unwrap_or_default();
    spec.max_plies = run.max_plies.unwrap_or(spec.max_plies);
    spec.seed = run.seed.unwrap_or(spec.seed);
    spec.name = run.name;
    spec.out = file_path(run.out);
    spec.event = run.event;
    spec.site = run.site;
    spec.pgnout = file_path(run.pgnout);
    spec.epdout = file_path(run.epdout);
    spec.replace_copies = run.replace_copies.unwrap_or(false);
    spec.log = file_path(run.log);
    spec.viewer_games = run.viewer_games.unwrap_or(spec.viewer_games);
    spec.anchor = key_values("anchor", run.anchor.as_slice(), Anchor::parse)?;
    spec.rules = super::runargs::rule_pairs(run.rules.as_slice())?;
    spec.draw = key_values("draw", run.draw.as_slice(), DrawRule::parse)?;
    spec.resign = key_values("resign", run.resign.as_slice(), ResignRule::parse)?;
    spec.strict = run.strict.unwrap_or(false);
    spec.sprt = key_values("sprt", run.sprt.as_slice(), Sprt::parse)?;
    Ok(spec)
}

/// A player section of the autotester's file: its settings and the line that opened it.
struct MitPlayer {
    line: usize,
    settings: Vec<String>,
}

/// The MIT autotester's `key = value` format: header keys, then `player = <name>` sections.
/// Every error names the file and the line it comes from.
fn mit_spec(text: &str, base: &Path, file: &Path) -> Result<RunSpec, Failure> {
    let at =
        |line: usize, why: String| Failure::bad_input(format!("{}:{line}: {why}", file.display()));
    let (header, players) = mit_sections(text, base, &at)?;
    let engines = players
        .iter()
        .map(|p| {
            // Checked here, where the line is known, rather than later as "engine #3".
            EngineConfig::parse(&p.settings, &[]).map_err(|e| at(p.line, format!("player: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let players_n = engines.len() as u64;
    let mut spec = RunSpec::new(RunKind::Tournament, engines);
    for (line, key, value) in header {
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| at(line, format!("{key} = {value} is not a whole number")))
        };
        match key.as_str() {
            "cpus" => spec.concurrency = number()? as usize,
            "book" => {
                spec.openings = Some(PathBuf::from(in_folder(base, &value)));
                spec.book_plies = Some(10);
            }
            "game_rounds" => {
                // The autotester counts games in all; arbiter plays rounds of game pairs, so
                // it plays enough rounds and stops at exactly that many games.
                let games = number()?;
                let pairings = (players_n * players_n.saturating_sub(1) / 2).max(1);
                spec.rounds = games.div_ceil(2 * pairings).max(1);
                spec.games = Some(games);
            }
            "title" => {
                spec.name = Some(run_name(&value));
                spec.event = Some(value);
            }
            "adjudicate" => {
                // Moves, as plies: a number that does not fit must not wrap to a tiny cap.
                spec.max_plies = number()?
                    .checked_mul(2)
                    .and_then(|p| usize::try_from(p).ok())
                    .ok_or_else(|| at(line, format!("adjudicate = {value} is too large")))?;
            }
            // arbiter's own key: the 2012 course's player plays leiserchess2012.
            "game" => spec.game = value,
            other => {
                return Err(at(
                    line,
                    format!("unknown setting '{other}' before the first player"),
                ))
            }
        }
    }
    Ok(spec)
}

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
            });
            continue;
        }
        match players.last_mut() {
            None => header.push((i + 1, key.to_string(), value.to_string())),
            Some(player) => player
                .settings
                .extend(mit_player_setting(key, value, base).map_err(|why| bad(&why))?),
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
        "depth" | "nodes" => vec![format!("{key}={value}")],
        "fis" => match parts[..] {
            [main, inc] => vec![format!("tc={main}+{inc}")],
            _ => return Err("fis takes <main seconds> <increment seconds>".into()),
        },
        "tc" => match parts[..] {
            [moves, secs] => vec![format!("tc={moves}/{secs}")],
            _ => return Err("tc takes <moves> <seconds>".into()),
        },
        other => vec![format!("option.{other}={value}")],
    })
}

/// The run a configuration file describes.
pub fn job_of(file: &Path, quiet: bool, out: Option<&Path>) -> Result<RunJob, Failure> {
    let text = std::fs::read_to_string(file)
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
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::bad_input(format!("cannot read {}: {e}", file.display())))?;
    let mut run: TomlRun = toml::from_str(&text)
        .map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
    let Some(tune) = run.tune.take() else {
        return Ok(None);
    };
    let origin = Origin::File {
        path: file.to_path_buf(),
        text,
        mit: false,
    };
    let base: PathBuf = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut spec = toml_spec(run, &base)
        .and_then(|run| tune.spec(run))
        .map_err(|e| origin.explain(e))?;
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
        let run: TomlRun = toml::from_str(&text)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
        let origin = Origin::File {
            path: file.to_path_buf(),
            text: text.clone(),
            mit: false,
        };
        toml_spec(run, &base).map_err(|e| origin.explain(e))?
    };
    if let Some(dir) = out {
        spec.out = Some(dir.to_path_buf());
        spec.name = None;
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

#[cfg(test)]
mod tests {
    use super::*;

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
        toml_spec(run, Path::new("/t")).map_err(|e| e.to_string())
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
        let text = "cpus = 2\nbook = ../tests/book.dta\ngame_rounds = 500\ntitle = basic\nadjudicate = 400\n\nplayer = reference\ninvoke = ../player/leiserchess\nfis = 20 0.5\n\nplayer = candidate\ninvoke = ../player/leiserchess_new -v\nfis = 20 0.5\nhash = 64\n";
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
        assert_eq!(reference.proto, crate::engine::Proto::Leiserchess);
        assert_eq!(reference.limits_summary(), "tc=20+0.5");
        assert_eq!(candidate.args, ["-v"]);
        assert_eq!(candidate.options, [("hash".to_string(), "64".to_string())]);
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
        let text = "book = book.dta\ntitle = my run/1\ngame_rounds = 3\nplayer = a\ninvoke = ./p\ndepth = 1\nplayer = b\ninvoke = ./q\ndepth = 1\n";
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
            "[[engine]]\ncmd = \"/bin/sh\"\nname = \"a\"\noption.Style = \"greedy\"\nenv.LEVEL = 3\n\n\
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
        assert!(!toml_of(&off).unwrap().affinity.is_on());
        let listed = format!("affinity = [0]\n{engines}");
        assert_eq!(
            toml_of(&listed).unwrap().affinity,
            crate::tournament::Affinity::Cpus(vec![0])
        );
        let err = toml_of(&format!("format = \"swiss\"\n{engines}")).unwrap_err();
        assert!(err.contains("line 1") && err.contains("gauntlet"), "{err}");
        let err = toml_of(&format!("draw = \"movecount=8\"\n{engines}")).unwrap_err();
        assert!(err.starts_with("draw: missing"), "{err}");
    }
}
