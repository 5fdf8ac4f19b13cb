//! cutechess-cli and fastchess command lines, taken as they are: `arbiter -engine cmd=a -engine
//! cmd=b -each tc=10+0.1 -rounds 200 -repeat -concurrency 4` is turned into the `arbiter match` (or
//! `tournament`) it means, and then read exactly as that command line would be. What has no
//! meaning here is refused with a sentence saying so, never silently dropped where it changes what
//! is played.

use super::fastchess_config::{config_flags, TheirFlag};
use super::Failure;

/// Flags of cutechess-cli and fastchess; a command line whose first word is one of them is theirs.
const THEIR_FLAGS: &[&str] = &[
    "-engine",
    "-each",
    "-rounds",
    "-games",
    "-repeat",
    "-concurrency",
    "-openings",
    "-pgnout",
    "-epdout",
    "-sprt",
    "-draw",
    "-resign",
    "-ratinginterval",
    "-recover",
    "-log",
    "-event",
    "-srand",
    "-randomseed",
    "-variant",
    "-tournament",
    "-config",
    "-maxmoves",
    "-site",
    "-output",
    "-scoreinterval",
    "-autosaveinterval",
    "-wait",
    "-noswap",
    "-reverse",
    "-debug",
    "-tb",
    "-tbpieces",
    "-tbignore50",
    "-show-latency",
    "-use-affinity",
    "-report",
    "-crc32",
    "-testEnv",
    "-quick",
    "-seeds",
];

/// Whether `args` (without the program name) is a cutechess/fastchess command line.
pub fn is_theirs(args: &[String]) -> bool {
    args.first()
        .is_some_and(|a| THEIR_FLAGS.contains(&a.as_str()))
}

/// One flag and the words after it up to the next flag.
struct Flag<'a> {
    name: &'a str,
    values: Vec<&'a str>,
}

fn flags(args: &[String]) -> Vec<Flag<'_>> {
    let mut out: Vec<Flag> = Vec::new();
    for arg in args {
        // A flag is a dash and a letter; `-5` (a negative number) is a value.
        let is_flag =
            arg.starts_with('-') && arg[1..].starts_with(|c: char| c.is_ascii_alphabetic());
        match out.last_mut() {
            Some(last) if !is_flag => last.values.push(arg),
            _ if is_flag => out.push(Flag {
                name: arg,
                values: Vec::new(),
            }),
            _ => out.push(Flag {
                name: "",
                values: vec![arg],
            }),
        }
    }
    out
}

fn refuse(flag: &str, why: &str) -> Failure {
    Failure::bad_input(format!("{flag}: {why}"))
}

/// `key=value` words as pairs; a bare word is `(word, "")`.
fn pairs<'a>(values: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    values
        .iter()
        .map(|v| v.split_once('=').unwrap_or((v, "")))
        .collect()
}

/// What their engine settings become: the same keys where arbiter has them.
fn engine_settings(flag: &str, values: &[&str]) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    for (key, value) in pairs(values) {
        match key {
            "cmd" | "name" | "dir" | "proto" | "tc" | "st" | "depth" | "nodes" | "timemargin" => {
                out.push(format!("{key}={value}"))
            }
            "arg" => out.push(format!("arg={value}")),
            // fastchess: args="-a -b", one string of arguments.
            "args" => out.extend(value.split_whitespace().map(|a| format!("arg={a}"))),
            _ if key.starts_with("option.") => out.push(format!("{key}={value}")),
            // Settings about how the engine is watched or restarted, which arbiter always
            // does its own way: every game starts fresh engines, stderr is kept in --log.
            "restart" | "stderr" | "trust" | "whitepov" | "ponder" => {}
            "plies" => {
                return Err(refuse(
                    flag,
                    "plies= (a depth in plies for fastchess) has no equivalent: give depth=",
                ))
            }
            "initstr" => {
                return Err(refuse(
                    flag,
                    "initstr= has no equivalent: set what it sets with option.<Name>=",
                ))
            }
            _ => return Err(refuse(flag, &format!("unknown engine setting '{key}'"))),
        }
    }
    Ok(out)
}

/// Their `-openings file= format= order= plies= start= policy=`.
fn openings(values: &[&str], out: &mut Vec<String>) -> Result<(), Failure> {
    for (key, value) in pairs(values) {
        match key {
            "file" => out.extend(["--openings".to_string(), value.to_string()]),
            "format" => {
                let named = values
                    .iter()
                    .find_map(|v| v.strip_prefix("file="))
                    .unwrap_or("");
                let ext = named.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
                // The book's format is its file's ending; a format= that says otherwise would
                // be read as something it is not.
                if !matches!(value, "epd" | "pgn") || ext != value {
                    return Err(refuse(
                        "-openings",
                        &format!("format={value}: books are read by their name's ending (.epd, .pgn, or arbiter's own lines); name the file so"),
                    ));
                }
            }
            "order" => match value {
                "random" => out.push("--random-openings".into()),
                "sequential" => {}
                _ => return Err(refuse("-openings", "order= is random or sequential")),
            },
            "plies" => out.extend(["--book-plies".to_string(), value.to_string()]),
            "start" if value == "1" => {}
            "start" => {
                return Err(refuse(
                    "-openings",
                    "start= other than 1 is not supported: cut the book file instead",
                ))
            }
            // arbiter's own order: each opening for one colour-reversed pair of games.
            "policy" if value == "default" => {}
            "policy" => {
                return Err(refuse(
                    "-openings",
                    &format!("policy={value} has no equivalent: arbiter gives each opening to one pair of games (policy=default)"),
                ))
            }
            _ => return Err(refuse("-openings", &format!("unknown key '{key}'"))),
        }
    }
    Ok(())
}

/// What the whole command line plays: the engines, rounds and games per encounter.
#[derive(Default)]
struct Shape {
    engines: usize,
    rounds: Option<u64>,
    games: Option<u64>,
    gauntlet: bool,
}

/// The file of `-pgnout file=F` (fastchess) or `-pgnout F [min]` (cutechess).
fn file_of(values: &[&str]) -> Option<String> {
    pairs(values)
        .iter()
        .find(|(k, _)| *k == "file")
        .map(|(_, v)| v.to_string())
        .or_else(|| {
            values
                .first()
                .filter(|v| !v.contains('='))
                .map(|v| v.to_string())
        })
}

fn number(flag: &str, values: &[&str]) -> Result<u64, Failure> {
    values
        .first()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| refuse(flag, "expects a whole number"))
}

/// Their flags with fastchess's `-config file=` opened: as in fastchess, the file replaces
/// what came before it, and a flag after it replaces the file's setting of that flag (engines
/// and `-each` add up instead).
fn with_config(args: &[String]) -> Result<Vec<TheirFlag>, Failure> {
    let mut list: Vec<TheirFlag> = Vec::new();
    for Flag { name, values } in flags(args) {
        if name == "-config" {
            list = config_flags(&values)?;
            continue;
        }
        if !matches!(name, "-engine" | "-each" | "") {
            list.retain(|(n, _)| n != name);
        }
        list.push((
            name.to_string(),
            values.iter().map(|v| v.to_string()).collect(),
        ));
    }
    Ok(list)
}

/// The arbiter command line their flags mean.
pub fn translate(args: &[String]) -> Result<Vec<String>, Failure> {
    // Their tools play chess unless told otherwise.
    let mut out: Vec<String> = vec!["--game".into(), "chess".into()];
    let mut shape = Shape::default();
    for (name, values) in with_config(args)? {
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        translate_flag(&name, &values, &mut out, &mut shape)?;
    }
    // Their rounds times games per encounter is the games each pairing plays; arbiter plays
    // them in colour-reversed pairs, which is what -repeat asks for.
    let per_pairing = shape.rounds.unwrap_or(1) * shape.games.unwrap_or(1);
    let mut argv = if shape.engines == 2 && !shape.gauntlet {
        vec![
            "match".to_string(),
            "--games".into(),
            per_pairing.to_string(),
        ]
    } else {
        let mut v = vec![
            "tournament".to_string(),
            "--rounds".into(),
            per_pairing.div_ceil(2).to_string(),
        ];
        if shape.gauntlet {
            v.extend(["--format".into(), "gauntlet".into()]);
        }
        v
    };
    argv.extend(out);
    Ok(argv)
}

fn translate_flag(
    name: &str,
    values: &[&str],
    out: &mut Vec<String>,
    shape: &mut Shape,
) -> Result<(), Failure> {
    let mut pass = |flag: &str| {
        out.push(flag.to_string());
        out.extend(values.iter().map(|v| v.to_string()));
    };
    match name {
        "-engine" => {
            shape.engines += 1;
            out.push("--engine".into());
            out.extend(engine_settings(name, values)?);
        }
        "-each" => {
            out.push("--each".into());
            out.extend(engine_settings(name, values)?);
        }
        "-rounds" => shape.rounds = Some(number(name, values)?),
        "-games" => shape.games = Some(number(name, values)?),
        // arbiter always plays each opening twice with colours reversed.
        "-repeat" => shape.games = Some(shape.games.unwrap_or(1).max(2)),
        "-concurrency" => pass("--concurrency"),
        "-openings" => openings(values, out)?,
        "-pgnout" | "-epdout" => {
            let file = file_of(values).ok_or_else(|| refuse(name, "needs a file"))?;
            out.extend([format!("-{name}"), file]);
        }
        "-sprt" | "-draw" => pass(&format!("-{name}")),
        "-resign" => pass("--resign"),
        "-log" => out.extend(file_of(values).map(|f| ["--log".to_string(), f]).into_iter().flatten()),
        "-event" => out.extend(["--event".to_string(), values.join(" ")]),
        "-srand" => pass("--seed"),
        "-variant" => {
            let variant = values.first().copied().unwrap_or("standard");
            let game = if variant == "standard" { "chess" } else { variant };
            out.extend(["--game".to_string(), game.to_string()]);
        }
        "-tournament" => match values.first().copied() {
            Some("gauntlet") => shape.gauntlet = true,
            Some("round-robin") | None => {}
            Some(other) => return Err(refuse(name, &format!("'{other}': round-robin or gauntlet"))),
        },
        "-maxmoves" => out.extend(["--max-plies".to_string(), (2 * number(name, values)?).to_string()]),
        // Shown or done differently here: the progress bar replaces the periodic ratings,
        // crashed engines are always replaced, a seed is always used.
        "-ratinginterval" | "-scoreinterval" | "-recover" | "-randomseed" | "-output"
        | "-site" | "-autosaveinterval" | "-show-latency" | "-report" | "-use-affinity" => {}
        "" => {
            return Err(Failure::bad_input(format!(
                "'{}' belongs to no flag",
                values.join(" ")
            )))
        }
        other => {
            return Err(refuse(
                other,
                "has no equivalent in arbiter (see the table in README.md, \"cutechess-cli and fastchess command lines\")",
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_fastchess_readme_example_is_a_match() {
        let argv = translate(&words(
            "-engine cmd=Engine1.exe name=Engine1 -engine cmd=Engine2.exe name=Engine2 -each tc=10+0.1 -rounds 200 -repeat -concurrency 4",
        ))
        .unwrap();
        assert_eq!(
            argv.join(" "),
            "match --games 400 --game chess --engine cmd=Engine1.exe name=Engine1 --engine cmd=Engine2.exe name=Engine2 --each tc=10+0.1 --concurrency 4"
        );
    }

    #[test]
    fn two_sided_resignation_is_kept() {
        let argv = translate(&words(
            "-engine cmd=a -engine cmd=b -each tc=1 -resign movecount=3 score=400 twosided=true",
        ))
        .unwrap();
        assert!(
            argv.join(" ")
                .ends_with("--resign movecount=3 score=400 twosided=true"),
            "{argv:?}"
        );
    }

    #[test]
    fn what_has_no_meaning_here_is_refused_by_name() {
        let err = translate(&words("-engine cmd=a -engine cmd=b -tb /syzygy")).unwrap_err();
        assert!(
            err.message.starts_with("-tb: has no equivalent"),
            "{}",
            err.message
        );
        let err = translate(&words("-engine cmd=a plies=4")).unwrap_err();
        assert!(err.message.contains("plies="), "{}", err.message);
        assert!(is_theirs(&words("-engine cmd=a")));
        assert!(!is_theirs(&words("match --engine cmd=a")));
    }
}
