//! `arbiter run <file>`: a tournament described in a file, either arbiter's TOML (see
//! `tournament.example.toml`) or the MIT 6.172 autotester's `.txt` configuration. Both become the
//! arguments of `arbiter tournament`, so they are checked exactly like a command line.
//! Relative paths (engines, books) are taken from the configuration file's folder.

use super::Failure;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlRun {
    game: Option<String>,
    format: Option<String>,
    rounds: Option<u64>,
    concurrency: Option<usize>,
    openings: Option<String>,
    book_plies: Option<usize>,
    random_openings: Option<bool>,
    affinity: Option<bool>,
    max_plies: Option<usize>,
    seed: Option<u64>,
    name: Option<String>,
    out: Option<String>,
    event: Option<String>,
    anchor: Option<String>,
    draw: Option<String>,
    resign: Option<String>,
    #[serde(default)]
    each: BTreeMap<String, toml::Value>,
    #[serde(default)]
    engine: Vec<TomlEngine>,
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
    let name = name.trim_start_matches('.');
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

fn toml_argv(text: &str, base: &Path, file: &Path) -> Result<Vec<String>, Failure> {
    let run: TomlRun =
        toml::from_str(text).map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
    let mut argv: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            argv.push(format!("--{name}"));
            argv.push(v);
        }
    };
    flag("game", run.game);
    flag("format", run.format);
    flag("rounds", run.rounds.map(|v| v.to_string()));
    flag("concurrency", run.concurrency.map(|v| v.to_string()));
    flag("openings", run.openings.map(|o| in_folder(base, &o)));
    flag("book-plies", run.book_plies.map(|v| v.to_string()));
    flag("max-plies", run.max_plies.map(|v| v.to_string()));
    flag("seed", run.seed.map(|v| v.to_string()));
    flag("name", run.name);
    flag("out", run.out.map(|o| in_folder(base, &o)));
    flag("event", run.event);
    flag("anchor", run.anchor);
    if run.random_openings == Some(true) {
        argv.push("--random-openings".into());
    }
    if run.affinity == Some(true) {
        argv.push("--affinity".into());
    }
    for (name, value) in [("draw", run.draw), ("resign", run.resign)] {
        if let Some(v) = value {
            argv.push(format!("--{name}"));
            argv.extend(v.split_whitespace().map(str::to_string));
        }
    }
    if !run.each.is_empty() {
        argv.push("--each".into());
        argv.extend(
            run.each
                .iter()
                .map(|(k, v)| format!("{k}={}", value_text(v))),
        );
    }
    if run.engine.is_empty() {
        return Err(Failure::bad_input(format!(
            "{}: no [[engine]] tables",
            file.display()
        )));
    }
    for e in run.engine {
        argv.push("--engine".into());
        argv.push(format!("cmd={}", beside(base, &e.cmd)));
        if let Some(n) = e.name {
            argv.push(format!("name={n}"));
        }
        argv.extend(e.args.iter().map(|a| format!("arg={a}")));
        argv.extend(
            e.options
                .iter()
                .map(|(k, v)| format!("option.{k}={}", value_text(v))),
        );
        argv.extend(
            e.settings
                .iter()
                .map(|(k, v)| format!("{k}={}", value_text(v))),
        );
    }
    Ok(argv)
}

/// A player section of the autotester's file: its settings and the line that opened it.
struct MitPlayer {
    line: usize,
    settings: Vec<String>,
}

/// The MIT autotester's `key = value` format: header keys, then `player = <name>` sections.
/// Every error names the file and the line it comes from.
fn mit_argv(text: &str, base: &Path, file: &Path) -> Result<Vec<String>, Failure> {
    let at =
        |line: usize, why: String| Failure::bad_input(format!("{}:{line}: {why}", file.display()));
    let mut header: Vec<(usize, String, String)> = Vec::new();
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
        let Some(player) = players.last_mut() else {
            header.push((i + 1, key.to_string(), value.to_string()));
            continue;
        };
        let player = &mut player.settings;
        match key {
            "invoke" => {
                // A command line, split on spaces and run directly, never through a shell.
                let mut words = value.split_whitespace();
                let cmd = words.next().ok_or_else(|| bad("invoke needs a program"))?;
                player.push(format!("cmd={}", beside(base, cmd)));
                player.extend(words.map(|w| format!("arg={w}")));
            }
            "depth" | "nodes" => player.push(format!("{key}={value}")),
            "fis" => {
                let parts: Vec<&str> = value.split_whitespace().collect();
                let [main, inc] = parts[..] else {
                    return Err(bad("fis takes <main seconds> <increment seconds>"));
                };
                player.push(format!("tc={main}+{inc}"));
            }
            "tc" => {
                let parts: Vec<&str> = value.split_whitespace().collect();
                let [moves, secs] = parts[..] else {
                    return Err(bad("tc takes <moves> <seconds>"));
                };
                player.push(format!("tc={moves}/{secs}"));
            }
            other => player.push(format!("option.{other}={value}")),
        }
    }
    for p in &players {
        // Checked here, where the line is known, rather than later as "--engine #3".
        arbiter::engine::EngineConfig::parse(&p.settings, &[])
            .map_err(|e| at(p.line, format!("player: {e}")))?;
    }
    let mut argv: Vec<String> = vec!["--game".into(), "leiserchess".into()];
    let players_n = players.len() as u64;
    for (line, key, value) in header {
        let number = |what: &str| {
            value
                .parse::<u64>()
                .map_err(|_| at(line, format!("{what} = {value} is not a whole number")))
        };
        match key.as_str() {
            "cpus" => argv.extend(["--concurrency".into(), number("cpus")?.to_string()]),
            "book" => {
                argv.extend(["--openings".into(), in_folder(base, &value)]);
                argv.extend(["--book-plies".into(), "10".into()]);
            }
            "game_rounds" => {
                // The autotester counts games in all; arbiter plays rounds of game pairs, so
                // it plays enough rounds and stops at exactly that many games.
                let games = number("game_rounds")?;
                let pairings = (players_n * players_n.saturating_sub(1) / 2).max(1);
                argv.extend([
                    "--rounds".into(),
                    games.div_ceil(2 * pairings).max(1).to_string(),
                    "--games".into(),
                    games.to_string(),
                ]);
            }
            "title" => argv.extend([
                "--event".into(),
                value.clone(),
                "--name".into(),
                run_name(&value),
            ]),
            "adjudicate" => {
                let moves = number("adjudicate")?;
                argv.extend(["--max-plies".into(), (2 * moves).to_string()]);
            }
            other => {
                return Err(at(
                    line,
                    format!("unknown setting '{other}' before the first player"),
                ))
            }
        }
    }
    for p in players {
        argv.push("--engine".into());
        argv.extend(p.settings);
    }
    Ok(argv)
}

/// The `arbiter tournament` arguments a configuration file stands for.
pub fn tournament_argv(file: &Path) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::bad_input(format!("cannot read {}: {e}", file.display())))?;
    let base: PathBuf = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let is_toml = file.extension().is_some_and(|e| e == "toml");
    if is_toml {
        toml_argv(&text, &base, file)
    } else {
        mit_argv(&text, &base, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn config_parsers_never_panic(text in "[a-z_ =0-9./#\\n\\[\\]\"{},]{0,200}") {
            let base = Path::new("/tmp");
            let _ = mit_argv(&text, base, Path::new("x.txt"));
            let _ = toml_argv(&text, base, Path::new("x.toml"));
        }
    }

    #[test]
    fn the_autotester_example_becomes_tournament_arguments() {
        let text = "cpus = 2\nbook = ../tests/book.dta\ngame_rounds = 500\ntitle = basic\nadjudicate = 400\n\nplayer = reference\ninvoke = ../player/leiserchess\nfis = 20 0.5\n\nplayer = candidate\ninvoke = ../player/leiserchess_new\nfis = 20 0.5\nhash = 64\n";
        let argv = mit_argv(text, Path::new("/at"), Path::new("basic.txt")).unwrap();
        let line = argv.join(" ");
        assert!(line.contains("--concurrency 2"), "{line}");
        assert!(
            line.contains("--openings /at/../tests/book.dta --book-plies 10"),
            "{line}"
        );
        assert!(line.contains("--rounds 250 --games 500"), "{line}");
        assert!(line.contains("--event basic --name basic"), "{line}");
        assert!(line.contains("--max-plies 800"), "{line}");
        assert!(
            line.contains(
                "--engine name=reference proto=leiserchess cmd=/at/../player/leiserchess tc=20+0.5"
            ),
            "{line}"
        );
        assert!(line.contains("option.hash=64"), "{line}");
    }

    #[test]
    fn the_autotester_file_names_its_lines_in_errors_and_resolves_the_book_beside_it() {
        let text = "book = book.dta\ntitle = my run/1\nplayer = a\ninvoke = ./p\ndepth = x\n";
        let err = mit_argv(text, Path::new("/at"), Path::new("basic.txt")).unwrap_err();
        assert!(
            err.message.starts_with("basic.txt:3: player: "),
            "{}",
            err.message
        );
        assert!(err.message.contains("depth=x"), "{}", err.message);
        let text = "book = book.dta\ntitle = my run/1\ngame_rounds = 3\nplayer = a\ninvoke = ./p\ndepth = 1\nplayer = b\ninvoke = ./q\ndepth = 1\n";
        let line = mit_argv(text, Path::new("/at"), Path::new("basic.txt"))
            .unwrap()
            .join(" ");
        assert!(line.contains("--openings /at/book.dta"), "{line}");
        assert!(line.contains("--name my-run-1"), "{line}");
        assert!(line.contains("--rounds 2 --games 3"), "{line}");
        let err = mit_argv("cpus = two\n", Path::new("/at"), Path::new("b.txt")).unwrap_err();
        assert!(
            err.message.starts_with("b.txt:1: cpus = two"),
            "{}",
            err.message
        );
    }

    #[test]
    fn toml_switches_become_flags_only_when_true() {
        let engines = "[[engine]]\ncmd = \"a\"\n[[engine]]\ncmd = \"b\"\n";
        let on = format!("affinity = true\nrandom_openings = true\n{engines}");
        let line = toml_argv(&on, Path::new("/t"), Path::new("t.toml"))
            .unwrap()
            .join(" ");
        assert!(line.contains("--affinity"), "{line}");
        assert!(line.contains("--random-openings"), "{line}");
        let off = format!("affinity = false\n{engines}");
        let line = toml_argv(&off, Path::new("/t"), Path::new("t.toml"))
            .unwrap()
            .join(" ");
        assert!(!line.contains("--affinity"), "{line}");
    }
}
