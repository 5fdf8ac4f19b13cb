//! cutechess-cli and fastchess command lines, taken as they are: `arbiter -engine cmd=a -engine
//! cmd=b -each tc=10+0.1 -rounds 200 -repeat -concurrency 4` is turned into the `arbiter match` (or
//! `tournament`) it means, and then read exactly as that command line would be. What has no
//! meaning here is refused with a sentence saying so, never silently dropped where it changes what
//! is played.

mod engines_json;
pub mod fastchess_config;
pub mod tool_lines;

use fastchess_config::{config_flags, TheirFlag};
use tool_lines::{Style, ToolLines};

/// Another tool's command line or configuration that cannot be read here, and why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

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
    "-check-mate-pvs",
    "-use-affinity",
    "-report",
    "-crc32",
    "-testEnv",
    "-quick",
    "-seeds",
    "-startup-ms",
    "-ucinewgame-ms",
    "-ping-ms",
    "-force-concurrency",
    "-dialect",
    "-outcomeinterval",
    "-bookmode",
    "-resultformat",
];

/// fastchess's commands that are not a match, as its README and manual give them, as the
/// arbiter command they stand for (`args` with the program name): `--compliance ENGINE
/// [ARGS]` is `compliance`, and `-version` (which clap would read as `-v -e -r ...`) is
/// `--version`. `None` for any other line.
pub fn standalone(args: &[String]) -> Option<Vec<String>> {
    match args.get(1).map(String::as_str) {
        Some("--compliance" | "-compliance") => {
            let mut ours = args.to_vec();
            ours[1] = "compliance".into();
            Some(ours)
        }
        Some("-version") if args.len() == 2 => Some(vec![args[0].clone(), "--version".into()]),
        _ => None,
    }
}

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

fn refuse(flag: &str, why: &str) -> Refused {
    Refused(format!("{flag}: {why}"))
}

/// `key=value` words as pairs; a bare word is `(word, "")`.
fn pairs<'a>(values: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    values
        .iter()
        .map(|v| v.split_once('=').unwrap_or((v, "")))
        .collect()
}

/// Which tool's reading a command line gets: where the two spell a line the same, they count
/// games differently (fastchess plays `-games 2 -rounds 2` unless told, cutechess-cli 1 and 1;
/// cutechess-cli's `-repeat` reuses openings, fastchess's sets `-games 2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Cutechess,
    Fastchess,
}

impl Dialect {
    fn name(self) -> &'static str {
        match self {
            Dialect::Cutechess => "cutechess-cli",
            Dialect::Fastchess => "fastchess",
        }
    }
}

/// Flags only fastchess has.
const FASTCHESS_ONLY: &[&str] = &[
    "-config",
    "-quick",
    "-output",
    "-scoreinterval",
    "-autosaveinterval",
    "-show-latency",
    "-check-mate-pvs",
    "-use-affinity",
    "-report",
    "-crc32",
    "-testEnv",
    "-log",
    "-randomseed",
    "-force-concurrency",
    "-startup-ms",
    "-ucinewgame-ms",
    "-ping-ms",
    "-strict",
    "-tbadjudicate",
];

/// Flags only cutechess-cli has.
const CUTECHESS_ONLY: &[&str] = &["-outcomeinterval", "-bookmode", "-resultformat", "-debug"];

/// What in a line shows whose it is: its flags and keys only one tool has, as
/// `(fastchess's, cutechess-cli's)`, each named as written.
fn markers(list: &[TheirFlag]) -> (Vec<String>, Vec<String>) {
    let (mut fast, mut cute) = (Vec::new(), Vec::new());
    for (name, values) in list {
        if FASTCHESS_ONLY.contains(&name.as_str()) {
            fast.push(name.clone());
        }
        if CUTECHESS_ONLY.contains(&name.as_str()) {
            cute.push(name.clone());
        }
        let has_file_key = values.iter().any(|v| v.starts_with("file="));
        match name.as_str() {
            "-pgnout" | "-epdout" if has_file_key => fast.push(format!("{name} file=")),
            "-pgnout" | "-epdout" if !values.is_empty() => cute.push(format!("{name} <file>")),
            // fastchess takes only `policy=round` (cli.cpp: "Unsupported opening book policy"
            // for the others); cutechess-cli's `default` and `encounter` are its own.
            "-openings"
                if values
                    .iter()
                    .any(|v| v.starts_with("policy=") && v != "policy=round") =>
            {
                cute.push("-openings policy=".into())
            }
            "-tournament" if values.first().is_some_and(|v| v == "roundrobin") => {
                fast.push("-tournament roundrobin".into())
            }
            "-tournament" if values.first().is_some_and(|v| v != "gauntlet") => {
                cute.push(format!("-tournament {}", values[0]))
            }
            "-engine" | "-each" => {
                for v in values {
                    let key = v.split_once('=').map_or(v.as_str(), |(k, _)| k);
                    match key {
                        "args" | "plies" => fast.push(format!("{key}=")),
                        // cutechess-cli's engine options (its README); fastchess has none of
                        // these (cli.cpp's engine keys).
                        "conf" | "book" | "bookdepth" | "initstr" | "tscale" | "whitepov"
                        | "stderr" | "trust" | "ponder" => cute.push(format!("{key}=")),
                        "proto" if v != "proto=uci" => cute.push(v.clone()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (fast, cute)
}

/// The dialect of a line: named by `-dialect`, by the name arbiter was started under (a link
/// called `fastchess` or `cutechess-cli`), or by what the line shows; fastchess's when nothing
/// tells. Also the sentence saying why, for the banner.
fn dialect_of(program: &str, list: &mut Vec<TheirFlag>) -> Result<(Dialect, String), Refused> {
    let parse = |v: &str| match v {
        "fastchess" | "fast-chess" => Some(Dialect::Fastchess),
        "cutechess" | "cutechess-cli" => Some(Dialect::Cutechess),
        _ => None,
    };
    if let Some(at) = list.iter().position(|(n, _)| n == "-dialect") {
        let (_, values) = list.remove(at);
        let named = values.first().map(String::as_str).unwrap_or("");
        let d = parse(named).ok_or_else(|| refuse("-dialect", "is fastchess or cutechess"))?;
        return Ok((d, format!("as {} asks", "-dialect")));
    }
    let stem = std::path::Path::new(program)
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if let Some(d) = parse(&stem) {
        return Ok((d, format!("started as {stem}")));
    }
    let (fast, cute) = markers(list);
    match (fast.is_empty(), cute.is_empty()) {
        (false, true) => Ok((Dialect::Fastchess, format!("it uses {}", fast.join(", ")))),
        (true, false) => Ok((Dialect::Cutechess, format!("it uses {}", cute.join(", ")))),
        (false, false) => Err(Refused(format!(
            "this line mixes fastchess's {} with cutechess-cli's {}, which count games \
             differently: add -dialect fastchess or -dialect cutechess",
            fast.join(", "),
            cute.join(", ")
        ))),
        (true, true) => Ok((
            Dialect::Fastchess,
            "nothing in it is only cutechess-cli's; add -dialect cutechess for its reading".into(),
        )),
    }
}

/// What their engine settings become: the same keys where arbiter has them.
fn engine_settings(flag: &str, values: &[&str]) -> Result<Vec<String>, Refused> {
    let mut out = Vec::new();
    for (key, value) in pairs(values) {
        match key {
            "cmd" | "name" | "dir" | "proto" | "tc" | "st" | "depth" | "nodes" | "timemargin"
            | "sync" => out.push(format!("{key}={value}")),
            "arg" => out.push(format!("arg={value}")),
            // cutechess-cli: the engine's stderr added to a file of its own.
            "stderr" if !value.is_empty() => out.push(format!("stderr={value}")),
            "ponder" => {
                return Err(refuse(
                    flag,
                    "ponder: arbiter does not let an engine think on its opponent's time (no `go \
                     ponder`, and an engine not on move is frozen): leave ponder out, and the \
                     games \
                     are played as without it",
                ))
            }
            // fastchess: args="-a -b", one string of arguments.
            "args" => out.extend(value.split_whitespace().map(|a| format!("arg={a}"))),
            // fastchess: plies= is depth= under another name.
            "plies" => out.push(format!("depth={value}")),
            // cutechess's auto: the engine is kept unless it fails, as arbiter does.
            "restart" if value == "auto" => {}
            "restart" => out.push(format!("restart={value}")),
            _ if key.starts_with("option.") => out.push(format!("{key}={value}")),
            // Settings about how the engine is watched, which arbiter does its own way: claims
            // are never trusted, timeouts are its own.
            "trust" | "whitepov" | "tscale" => {}
            // Cute Chess's engines.json: its settings where conf= stands, later keys over them.
            "conf" => {
                let named: Vec<&str> = pairs(values).into_iter().map(|(k, _)| k).collect();
                let found = engines_json::settings_of(value, &named);
                out.extend(found.map_err(|why| refuse(flag, &why))?)
            }
            // cutechess-cli: the engine's own Polyglot book, and how many moves it plays.
            "book" | "bookdepth" => out.push(format!("{key}={value}")),
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
fn openings(values: &[&str], out: &mut Vec<String>, shape: &mut Shape) -> Result<(), Refused> {
    for (key, value) in pairs(values) {
        match key {
            "file" => out.extend(["--openings".to_string(), value.to_string()]),
            "format" => {
                let named = values
                    .iter()
                    .find_map(|v| v.strip_prefix("file="))
                    .unwrap_or("");
                let ext = named.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
                if !matches!(value, "epd" | "pgn") {
                    return Err(refuse("-openings", &format!("format={value}: epd or pgn")));
                }
                // As the tools do: format= says how the book reads, whatever its name.
                if ext != value {
                    out.extend(["--book-format".to_string(), value.to_string()]);
                }
            }
            "order" => match value {
                "random" => out.push("--random-openings".into()),
                "sequential" => {}
                _ => return Err(refuse("-openings", "order= is random or sequential")),
            },
            "plies" => out.extend(["--book-plies".to_string(), value.to_string()]),
            "start" => match value.parse::<u64>() {
                Ok(n) if n >= 1 => out.extend(["--book-start".to_string(), n.to_string()]),
                _ => {
                    return Err(refuse(
                        "-openings",
                        &format!("start={value}: the book's first opening is start=1"),
                    ))
                }
            },
            "policy" => {
                shape.policy = Some(match value {
                    "default" => Policy::Default,
                    "encounter" => Policy::Encounter,
                    "round" => Policy::Round,
                    _ => {
                        return Err(refuse(
                            "-openings",
                            &format!("policy={value}: default, encounter or round"),
                        ))
                    }
                })
            }
            _ => return Err(refuse("-openings", &format!("unknown key '{key}'"))),
        }
    }
    Ok(())
}

/// cutechess-cli's rules for moving to the next opening: after `-repeat` games or at a new
/// encounter (default), only at a new encounter, or only at a new round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    Default,
    Encounter,
    Round,
}

/// What the whole command line plays: the engines, rounds and games per encounter.
#[derive(Default)]
struct Shape {
    engines: Vec<Vec<String>>,
    rounds: Option<u64>,
    games: Option<u64>,
    repeat: Option<u64>,
    /// `-seeds N`: a gauntlet's first N engines; `seeds_meet`: who meet each other too.
    seeds: Option<u64>,
    seeds_meet: bool,
    /// cutechess-cli's `-openings policy=`: when the next opening is taken.
    policy: Option<Policy>,
    gauntlet: bool,
    game: Option<String>,
    /// `-noswap`: both games of a pair with the same colours.
    noswap: bool,
    /// `-reverse`: the second engine White first.
    reverse: bool,
    /// `-concurrency N` as written: fastchess reads 0 and below as the CPUs less |N|.
    concurrency: Option<i64>,
    /// `-force-concurrency`: fastchess refuses more games at once than CPUs without it.
    force_concurrency: bool,
    /// Sentences on what the line asked that is done otherwise here.
    notes: Vec<String>,
    /// The longest of fastchess's waits for an engine outside its moves (`-startup-ms`,
    /// `-ucinewgame-ms`, `-ping-ms`), which arbiter's one `handshake=` bounds.
    handshake_ms: Option<u64>,
    /// `-ping-ms`: how long an engine may take to answer `isready` between its moves.
    ping_ms: Option<u64>,
    /// How its progress is printed (`-output format=`, `-ratinginterval`, `-scoreinterval`,
    /// `-report penta=`), over the tool's defaults.
    output: Option<Style>,
    rating_interval: Option<u64>,
    score_interval: Option<u64>,
    penta: Option<bool>,
    /// `-crc32 pgn=true`: the PGN's checksum said as fastchess says it.
    crc32: bool,
    /// Whose line it is, decided before its flags are read.
    dialect: Option<Dialect>,
    /// `-tb PATHS` and the flags that go with it (`-tbpieces`, `-tbadjudicate`, `-tbignore50`),
    /// as `--tablebase` keys; the others mean nothing without `-tb`.
    tb_path: Option<String>,
    tb_keys: Vec<String>,
    /// `-check-mate-pvs`: fastchess checks mate scores' lines too.
    check_mate_pvs: bool,
}

/// The file of `-pgnout file=F` (fastchess) or `-pgnout F [min] [fi]` (cutechess).
fn file_of(values: &[&str]) -> Option<String> {
    pairs(values)
        .iter()
        .find(|(k, _)| *k == "file")
        .map(|(_, v)| v.to_string())
        .or_else(|| {
            values
                .first()
                .filter(|v| !v.contains('=') && !matches!(**v, "min" | "fi"))
                .map(|v| v.to_string())
        })
}

/// fastchess's `-log file= level= engine= append= realtime= compress=`: arbiter's log is every
/// line to and from the engines, timestamped; what differs from that is noted.
fn log_keys(values: &[&str], shape: &mut Shape) -> Result<(), Refused> {
    let file = file_of(values);
    for (i, (key, value)) in pairs(values).into_iter().enumerate() {
        let bare_file = i == 0 && value.is_empty() && file.as_deref() == Some(key);
        match (key, value) {
            _ if bare_file => {}
            ("file" | "engine" | "append" | "realtime", _) | ("level", "trace") => {}
            ("level", level) => shape.notes.push(format!(
                "-log level={level}: arbiter's log holds every line to and from the engines, as \
                 level=trace does"
            )),
            ("compress", "true") => shape
                .notes
                .push("-log compress=true: arbiter's log is written uncompressed".into()),
            ("compress", _) => {}
            (other, _) => return Err(refuse("-log", &format!("unknown key '{other}'"))),
        }
    }
    Ok(())
}

/// What fastchess's PGN comments may add beyond arbiter's score, depth and time.
const COMMENT_FIELDS: &[&str] = &[
    "nodes", "seldepth", "nps", "hashfull", "tbhits", "timeleft", "latency", "pv",
];

/// The keys of `-pgnout`/`-epdout` besides the file: cutechess's `min` (no comments) and `fi`
/// (finished games only, as arbiter's copies always are), fastchess's `min=`, `notation=`,
/// `append=`, `nodes=`, `seldepth=` and `match_line=`, and the comment fields arbiter does not
/// record (noted, not dropped silently).
fn copy_keys(
    name: &str,
    values: &[&str],
    out: &mut Vec<String>,
    shape: &mut Shape,
) -> Result<(), Refused> {
    let file = file_of(values);
    for (i, (key, value)) in pairs(values).into_iter().enumerate() {
        let bare_file = i == 0 && value.is_empty() && file.as_deref() == Some(key);
        match (key, value) {
            _ if bare_file => {}
            ("file" | "append" | "fi", _) => {}
            ("min", "" | "true") if name == "-pgnout" => out.push("--pgnout-min".into()),
            ("min", _) => {}
            ("notation", "san") => {}
            ("notation", other) => {
                return Err(refuse(
                    name,
                    &format!(
                        "notation={other}: arbiter writes chess moves in SAN in PGN (games.csv \
                         and the journal hold them as UCI); leave notation= out or give san"
                    ),
                ))
            }
            // OpenBench's client asks for these on every line it runs.
            ("match_line", pattern) if name == "-pgnout" => {
                out.push("--pgn-line".into());
                out.push(pattern.into());
            }
            ("nodes", "true") if name == "-pgnout" => out.push("--pgn-nodes".into()),
            ("seldepth", "true") if name == "-pgnout" => out.push("--pgn-seldepth".into()),
            (field, "true") if COMMENT_FIELDS.contains(&field) => shape.notes.push(format!(
                "{name} {field}=true: arbiter's PGN comments hold each move's score, depth and \
                 time, not {field}"
            )),
            (field, _) if COMMENT_FIELDS.contains(&field) => {}
            (other, _) => return Err(refuse(name, &format!("unknown key '{other}'"))),
        }
    }
    Ok(())
}

fn number(flag: &str, values: &[&str]) -> Result<u64, Refused> {
    match values {
        [one] => one
            .parse()
            .map_err(|_| refuse(flag, &format!("'{one}' is not a whole number"))),
        [] => Err(refuse(flag, "expects a whole number")),
        [_, rest @ ..] => Err(refuse(
            flag,
            &format!("takes one number; '{}' belongs to no flag", rest.join(" ")),
        )),
    }
}

/// Their flags with fastchess's `-config file=` opened: as in fastchess, the file replaces
/// what came before it, and a flag after it replaces the file's setting of that flag (engines
/// and `-each` add up instead).
fn with_config(args: &[String]) -> Result<Vec<TheirFlag>, Refused> {
    let mut list: Vec<TheirFlag> = Vec::new();
    for Flag { name, values } in flags(args) {
        if name == "-config" {
            if let Some(loaded) = config_flags(&values)? {
                list = loaded;
            }
            list.push(("-config".into(), Vec::new()));
            continue;
        }
        if name == "-quick" {
            list.extend(quick_flags(&values)?);
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

/// fastchess's `-quick cmd=A cmd=B book=F`: the flags it stands for (10+0.1, the book in random
/// order, 25,000 rounds of 2 games, all CPUs but two, draw adjudication 30/8/8).
fn quick_flags(values: &[&str]) -> Result<Vec<TheirFlag>, Refused> {
    let owned = |v: &[String]| v.to_vec();
    let mut cmds = Vec::new();
    let mut book = None;
    for (key, value) in pairs(values) {
        match key {
            "cmd" => cmds.push(value.to_string()),
            "book" => book = Some(value.to_string()),
            _ => {
                return Err(refuse(
                    "-quick",
                    &format!("unknown key '{key}' (cmd=, cmd=, book=)"),
                ))
            }
        }
    }
    let (Some(book), [a, b]) = (book, cmds.as_slice()) else {
        return Err(refuse("-quick", "takes exactly two cmd= and one book="));
    };
    let format = book.rsplit('.').next().unwrap_or("").to_string();
    let names = if a == b {
        [format!("{a}1"), format!("{b}2")]
    } else {
        [a.clone(), b.clone()]
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut flags: Vec<TheirFlag> = [a, b]
        .iter()
        .zip(&names)
        .map(|(cmd, name)| {
            let settings = [
                format!("cmd={cmd}"),
                format!("name={name}"),
                "tc=10+0.1".into(),
            ];
            ("-engine".to_string(), owned(&settings))
        })
        .collect();
    let rest: [(&str, Vec<String>); 5] = [
        (
            "-openings",
            vec![
                format!("file={book}"),
                format!("format={format}"),
                "order=random".into(),
            ],
        ),
        ("-games", vec!["2".into()]),
        ("-rounds", vec!["25000".into()]),
        (
            "-concurrency",
            vec![cpus.saturating_sub(2).max(1).to_string()],
        ),
        (
            "-draw",
            vec![
                "movenumber=30".into(),
                "movecount=8".into(),
                "score=8".into(),
            ],
        ),
    ];
    flags.extend(rest.into_iter().map(|(n, v)| (n.to_string(), v)));
    flags.push(("-quick".into(), Vec::new()));
    Ok(flags)
}

/// How this process's command line was read, when it was theirs: shown in the run's banner.
pub static READING: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// A command line of theirs as arbiter runs it, and how it was read.
#[derive(Debug)]
pub struct Translation {
    pub argv: Vec<String>,
    /// One line for the banner: whose syntax, and why.
    pub reading: String,
    /// The tool's progress lines the run prints.
    pub lines: ToolLines,
    /// What the line asked that is done otherwise here, one sentence each, for stderr.
    pub notes: Vec<String>,
}

/// The games each pairing plays, counted as the tool whose syntax the line is in counts them.
fn games_per_pairing(dialect: Dialect, shape: &Shape) -> Result<u64, Refused> {
    let (games, rounds) = encounters(dialect, shape)?;
    Ok(games.saturating_mul(rounds))
}

/// How many games in a row of one pairing share an opening, as the line's tool plays them.
/// fastchess gives each round's games (1 or 2) one opening. cutechess-cli takes the next
/// opening after `-repeat N` games (1 without it) and at a new encounter when more than two
/// engines play; `policy=encounter` moves on only at a new encounter (never, between two
/// engines), `policy=round` at a new round.
fn games_per_opening(dialect: Dialect, shape: &Shape) -> Result<u64, Refused> {
    let (encounter, rounds) = encounters(dialect, shape)?;
    let more_than_two = shape.engines.len() > 2;
    Ok(match (dialect, shape.policy.unwrap_or(Policy::Default)) {
        (Dialect::Fastchess, Policy::Encounter) => return Err(refuse(
            "-openings",
            "policy=encounter is cutechess-cli's; fastchess refuses it (add -dialect cutechess)",
        )),
        (Dialect::Fastchess, _) => encounter,
        (Dialect::Cutechess, Policy::Default) => {
            let repeat = shape.repeat.unwrap_or(1);
            if more_than_two {
                repeat.min(encounter)
            } else {
                repeat
            }
        }
        (Dialect::Cutechess, Policy::Encounter) if more_than_two => encounter,
        (Dialect::Cutechess, Policy::Encounter) => encounter.saturating_mul(rounds),
        (Dialect::Cutechess, Policy::Round) => encounter,
    }
    .max(1))
}

/// The games of one encounter (a pairing's games in a round) and the rounds, as the line's
/// tool counts them.
fn encounters(dialect: Dialect, shape: &Shape) -> Result<(u64, u64), Refused> {
    match dialect {
        // -repeat reuses an opening; it does not add games.
        Dialect::Cutechess => Ok((shape.games.unwrap_or(1), shape.rounds.unwrap_or(1))),
        Dialect::Fastchess => {
            let mut games = shape.repeat.or(shape.games).unwrap_or(2);
            let mut rounds = shape.rounds.unwrap_or(2);
            // fastchess reads -games over 2 as meant for -rounds, and swaps them.
            if games > 2 {
                std::mem::swap(&mut games, &mut rounds);
            }
            if games > 2 {
                return Err(refuse(
                    "-games",
                    "fastchess plays 1 or 2 games per round (-games over 2 with -rounds over 2 is \
                        refused there too)",
                ));
            }
            Ok((games, rounds))
        }
    }
}

/// An engine's name as the tool would show it: `name=`, else its program's file name
/// (fastchess drops the extension).
fn default_name(dialect: Dialect, settings: &[String], each: &[String]) -> Option<String> {
    if let Some(name) = setting(settings, each, "name=") {
        return Some(name);
    }
    let mut cmd = std::path::PathBuf::from(setting(settings, each, "cmd=")?);
    // A command line in `cmd=` (`python3 engine.py`) is named after its program.
    let dir = setting(settings, each, "dir=").unwrap_or_else(|| ".".into());
    let text = cmd.to_string_lossy().into_owned();
    if text.contains(char::is_whitespace) && !std::path::Path::new(&dir).join(&cmd).exists() {
        cmd = crate::engine::config::command_words(&text)
            .into_iter()
            .next()?
            .into();
    }
    let name = match dialect {
        Dialect::Fastchess => cmd.file_stem(),
        Dialect::Cutechess => cmd.file_name(),
    };
    name.map(|n| n.to_string_lossy().into_owned())
}

/// The value an engine has for `key` (written `key=`): its own last setting, else `-each`'s.
fn setting(settings: &[String], each: &[String], key: &str) -> Option<String> {
    settings
        .iter()
        .rev()
        .chain(each.iter().rev())
        .find_map(|s| s.strip_prefix(key).map(str::to_string))
}

/// Engine settings as their tool finds and names engines: a bare `cmd=` is looked for in the
/// engine's folder (`dir=`, else the current one) before PATH, and a second engine with a name
/// already taken is renamed `<name>_2` (fastchess's rule; cutechess-cli keeps both names, which
/// arbiter cannot tell apart in its tables).
fn settle_engines(dialect: Dialect, shape: &mut Shape, each: &[String]) {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for settings in &mut shape.engines {
        if let Some(cmd) = setting(settings, each, "cmd=").filter(|c| !c.contains('/')) {
            let folder = std::path::PathBuf::from(
                setting(settings, each, "dir=").unwrap_or_else(|| ".".into()),
            );
            if folder.join(&cmd).is_file() {
                settings.push(format!("cmd=./{cmd}"));
            }
        }
        let given = setting(settings, each, "name=");
        let Some(name) = default_name(dialect, settings, each) else {
            continue;
        };
        match seen.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => {
                *count += 1;
                settings.push(format!("name={name}_{count}"));
            }
            None => {
                seen.push((name.clone(), 1));
                if given.is_none() {
                    settings.push(format!("name={name}"));
                }
            }
        }
    }
}

/// A seed from the operating system, as the tools draw one for `order=random` without `-srand`.
fn drawn_seed() -> u64 {
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    match read {
        Ok(()) => u64::from_le_bytes(bytes) >> 1,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 >> 1),
    }
}

/// `-seeds N` as the line's tool reads it: in a gauntlet, the first N engines (at least one, and
/// one fewer than the engines at most), who in fastchess also meet each other; a round robin has
/// none, and both tools pass over it there.
fn seeds(dialect: Dialect, shape: &mut Shape, out: &mut Vec<String>) {
    let Some(asked) = shape.seeds else { return };
    if !shape.gauntlet {
        shape
            .notes
            .push(format!("-seeds {asked}: a round robin has no seeds"));
        return;
    }
    let n = asked.clamp(1, (shape.engines.len() as u64).saturating_sub(1).max(1));
    shape.seeds = Some(n);
    shape.seeds_meet = dialect == Dialect::Fastchess;
    out.extend(["--seeds".to_string(), n.to_string()]);
    if shape.seeds_meet {
        out.push("--seeds-meet".into());
    }
}

/// The arbiter command and its game count: a match for two engines, else a tournament.
fn command_of(shape: &Shape, per_pairing: u64) -> Vec<String> {
    let players = shape.engines.len() as u64;
    if players == 2 && !shape.gauntlet {
        vec![
            "match".to_string(),
            "--games".into(),
            per_pairing.to_string(),
        ]
    } else {
        let seeds = shape.seeds.unwrap_or(1);
        let pairings = match (shape.gauntlet, shape.seeds_meet) {
            (true, false) => seeds * players.saturating_sub(seeds),
            (true, true) => (seeds * players).saturating_sub(seeds * (seeds + 1) / 2),
            (false, _) => players * players.saturating_sub(1) / 2,
        };
        // arbiter plays each pairing's games in colour-reversed pairs, one pair per round: an
        // odd count is the rounds rounded up, cut at the total.
        let mut v = vec![
            "tournament".to_string(),
            "--rounds".into(),
            per_pairing.div_ceil(2).to_string(),
        ];
        if per_pairing % 2 == 1 {
            v.extend([
                "--games".into(),
                pairings.saturating_mul(per_pairing).to_string(),
            ]);
        }
        if shape.gauntlet {
            v.extend(["--format".into(), "gauntlet".into()]);
        }
        v
    }
}

/// The arbiter command line their flags mean. `program` is the name arbiter was started under.
pub fn translate(program: &str, args: &[String]) -> Result<Translation, Refused> {
    let mut list = with_config(args)?;
    let (dialect, why) = dialect_of(program, &mut list)?;
    let mut out: Vec<String> = Vec::new();
    let mut each: Vec<String> = Vec::new();
    let mut shape = Shape {
        dialect: Some(dialect),
        ..Shape::default()
    };
    // Every flag is read, so that a line with several problems names them all at once.
    let mut refused: Vec<String> = Vec::new();
    for (name, values) in list {
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        if let Err(why) = translate_flag(&name, &values, &mut out, &mut each, &mut shape) {
            refused.push(why.0);
        }
    }
    if !refused.is_empty() {
        return Err(Refused(refused.join("\n")));
    }
    let colours = match (shape.noswap, shape.reverse) {
        (false, false) => None,
        (false, true) => Some("reverse"),
        (true, false) => Some("first-white"),
        (true, true) => Some("second-white"),
    };
    out.extend(colours.map(|c| format!("--colours={c}")));
    if let Some(n) = shape.concurrency {
        let n = concurrency(dialect, n, &shape, &each)?;
        out.extend(["--concurrency".to_string(), n.to_string()]);
    }
    if let Some(ms) = shape.handshake_ms {
        each.push(format!("handshake={}", ms as f64 / 1000.0));
    }
    if let Some(ms) = shape.ping_ms {
        each.push(format!("ping={}", ms as f64 / 1000.0));
    }
    if dialect == Dialect::Fastchess {
        fastchess_checks(&shape, &mut out, &mut each);
    }
    if let Some(path) = &shape.tb_path {
        out.extend(["--tablebase".into(), format!("path={path}")]);
        out.extend(shape.tb_keys.iter().cloned());
    }
    settle_engines(dialect, &mut shape, &each);
    seeds(dialect, &mut shape, &mut out);
    let per_pairing = games_per_pairing(dialect, &shape)?;
    let per_opening = games_per_opening(dialect, &shape)?;
    if per_opening != 2 {
        out.extend(["--games-per-opening".to_string(), per_opening.to_string()]);
    }
    let mut argv = command_of(&shape, per_pairing);
    argv.extend([
        "--game".into(),
        shape.game.clone().unwrap_or_else(|| "chess".into()),
    ]);
    for settings in &shape.engines {
        argv.push("--engine".into());
        argv.extend(settings.iter().cloned());
    }
    if !each.is_empty() {
        argv.push("--each".into());
        argv.extend(each);
    }
    let drawn = seed_if_none(&mut out);
    argv.extend(out);
    Ok(Translation {
        argv,
        reading: reading(dialect, &why, per_pairing, per_opening, drawn),
        lines: tool_lines(dialect, &shape),
        notes: shape.notes.clone(),
    })
}

/// What fastchess checks that cutechess-cli does not: every reported line of every move
/// (match.cpp `verifyPvLines`, called for each move played), mate scores' lines with
/// -check-mate-pvs; and it pings every engine before each `go`, calling one that stops
/// answering stalled (the line's own -each sync= comes later and wins).
fn fastchess_checks(shape: &Shape, out: &mut Vec<String>, each: &mut Vec<String>) {
    each.insert(0, "sync=every".to_string());
    let checks = if shape.check_mate_pvs {
        "mates"
    } else {
        "lines"
    };
    out.extend(["--check-pvs".to_string(), checks.to_string()]);
}

/// The line that says how the tool's command line was read: the games per pairing and per
/// opening, and the seed drawn to shuffle the openings where the line gave none.
fn reading(
    dialect: Dialect,
    why: &str,
    per_pairing: u64,
    per_opening: u64,
    drawn: Option<u64>,
) -> String {
    let mut reading = format!(
        "read as a {} command line ({why}): {per_pairing} games per pairing",
        dialect.name()
    );
    match per_opening {
        2 => {}
        1 => reading.push_str("; each game its own opening"),
        n if n >= per_pairing => reading.push_str("; one opening for all of a pairing's games"),
        n => reading.push_str(&format!("; each opening for {n} games in a row")),
    }
    if let Some(seed) = drawn {
        reading.push_str(&format!(
            "; openings shuffled with the drawn seed {seed} (-srand {seed} repeats it)"
        ));
    }
    reading
}

/// The games played at once for `-concurrency n`, as the line's tool reads it: fastchess takes 0
/// and below as the CPUs less |n|, and refuses more than the CPUs unless forced (or, here, when
/// no engine has a clock, for then the CPUs cannot decide a game).
fn concurrency(dialect: Dialect, n: i64, shape: &Shape, each: &[String]) -> Result<u64, Refused> {
    let timed = shape
        .engines
        .iter()
        .chain([&each.to_vec()])
        .flatten()
        .any(|s| (s.starts_with("tc=") && s != "tc=inf") || s.starts_with("st="));
    let forced = shape.force_concurrency || !timed;
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get()) as i64;
    let n = match dialect {
        Dialect::Fastchess if n <= 0 => cpus - n.abs(),
        _ => n,
    };
    if n < 1 {
        return Err(refuse(
            "-concurrency",
            &format!("{n} games at once ({cpus} CPUs here): at least 1"),
        ));
    }
    if dialect == Dialect::Fastchess && n > cpus && !forced {
        return Err(refuse(
            "-concurrency",
            &format!(
                "{n} exceeds the {cpus} CPUs here, which fastchess refuses: add \
                 -force-concurrency to play it anyway"
            ),
        ));
    }
    Ok(n as u64)
}

/// Both tools draw a seed for a shuffled book when none is given: runs pooled afterwards are
/// then not the same sample. It is added to the flags (so run.json records it, and --resume and
/// merge replay it) and returned, to be printed.
fn seed_if_none(out: &mut Vec<String>) -> Option<u64> {
    let unseeded =
        out.iter().any(|a| a == "--random-openings") && !out.iter().any(|a| a == "--seed");
    let seed = unseeded.then(drawn_seed)?;
    out.extend(["--seed".to_string(), seed.to_string()]);
    Some(seed)
}

/// The progress lines the line's tool prints, as the line sets them.
fn tool_lines(dialect: Dialect, shape: &Shape) -> ToolLines {
    let mut lines = ToolLines::defaults(shape.output.unwrap_or(match dialect {
        Dialect::Cutechess => Style::Cutechess,
        Dialect::Fastchess => Style::Fastchess,
    }));
    lines.rating_interval = shape.rating_interval.unwrap_or(lines.rating_interval);
    lines.score_interval = shape.score_interval.unwrap_or(lines.score_interval);
    lines.penta = shape.penta.unwrap_or(dialect == Dialect::Fastchess);
    lines.crc32 = shape.crc32;
    lines
}

/// Flags read and dropped, for nothing of what is played depends on them.
const IGNORED: &[&str] = &[
    // Shown or done differently here: crashed engines are always replaced, a seed is always
    // used, the run's journal is always kept.
    "-outcomeinterval",
    "-recover",
    "-randomseed",
    "-autosaveinterval",
    "-config",
    "-quick",
    // A pause between games, fastchess's outputs for OpenBench.
    "-wait",
    "-testEnv",
    // cutechess-cli's layout of its result table, and how it reads Polyglot books (book= is
    // refused on its own).
    "-resultformat",
    "-bookmode",
];

/// Flags whose tool shows something arbiter shows otherwise (or not at all), and the sentence
/// printed for each: nothing played depends on them.
const NOTED: &[(&str, &str)] = &[
    (
        "-debug",
        "arbiter does not print the engines' input and output among its lines; --log FILE \
         writes every line to and from them, timestamped",
    ),
    (
        "-show-latency",
        "arbiter prints no latency line per move; --log timestamps every line to and from the \
         engines, and the summary gives the referee's own turnaround",
    ),
];

/// `-variant` and `-tournament`: the game, and a gauntlet or a round robin.
fn game_flag(name: &str, values: &[&str], shape: &mut Shape) -> Result<(), Refused> {
    match name {
        "-variant" => {
            let game = match values.first().copied() {
                Some("standard") | None => "chess",
                Some("fischerandom") => "chess960",
                Some(other) => other,
            };
            shape.game = Some(game.to_string());
        }
        "-tournament" => match values.first().copied() {
            Some("gauntlet") => shape.gauntlet = true,
            Some("round-robin") | Some("roundrobin") | None => {}
            Some(other) => {
                return Err(refuse(name, &format!("'{other}': round-robin or gauntlet")))
            }
        },
        _ => unreachable!("game_flag is given -variant or -tournament"),
    }
    Ok(())
}

/// The flags of the tools' output lines: how often ratings and scores are printed, in which
/// tool's format, and whether pairs are counted.
fn output_flag(name: &str, values: &[&str], shape: &mut Shape) -> Result<(), Refused> {
    match name {
        "-ratinginterval" => shape.rating_interval = Some(number(name, values)?),
        "-scoreinterval" => shape.score_interval = Some(number(name, values)?.max(1)),
        "-output" => {
            shape.output = match pairs(values).iter().find(|(k, _)| *k == "format") {
                Some((_, "cutechess")) => Some(Style::Cutechess),
                Some((_, "fastchess")) => Some(Style::Fastchess),
                other => {
                    return Err(refuse(
                        name,
                        &format!(
                            "'{}': format=cutechess or format=fastchess",
                            other.map(|(_, v)| *v).unwrap_or_default()
                        ),
                    ))
                }
            }
        }
        "-report" => {
            if let Some((_, v)) = pairs(values).iter().find(|(k, _)| *k == "penta") {
                shape.penta = Some(*v == "true");
            }
        }
        // fastchess's only key (cli.cpp, `parseCrc`): pgn=true|false.
        "-crc32" => shape.crc32 = pairs(values).contains(&("pgn", "true")),
        _ => unreachable!("output_flag is given an output flag"),
    }
    Ok(())
}

/// The flags that name a file arbiter writes: the copies of the games (added to, as both tools
/// add, unless fastchess is told `append=false`) and the log.
fn file_flag(
    name: &str,
    values: &[&str],
    out: &mut Vec<String>,
    shape: &mut Shape,
) -> Result<(), Refused> {
    if name == "-log" {
        log_keys(values, shape)?;
        out.extend(
            file_of(values)
                .map(|f| ["--log".to_string(), f])
                .into_iter()
                .flatten(),
        );
        return Ok(());
    }
    copy_keys(name, values, out, shape)?;
    let file = file_of(values).ok_or_else(|| refuse(name, "needs a file"))?;
    out.extend([format!("-{name}"), file]);
    let replace = "--replace-copies".to_string();
    if pairs(values).contains(&("append", "false")) && !out.contains(&replace) {
        out.push(replace);
    }
    Ok(())
}

fn translate_flag(
    name: &str,
    values: &[&str],
    out: &mut Vec<String>,
    each: &mut Vec<String>,
    shape: &mut Shape,
) -> Result<(), Refused> {
    let mut pass = |flag: &str| {
        out.push(flag.to_string());
        out.extend(values.iter().map(|v| v.to_string()));
    };
    match name {
        "-engine" => shape.engines.push(engine_settings(name, values)?),
        "-each" => each.extend(engine_settings(name, values)?),
        "-rounds" => shape.rounds = Some(number(name, values)?),
        "-seeds" => shape.seeds = Some(number(name, values)?),
        "-games" => shape.games = Some(number(name, values)?),
        // fastchess: -games 2 (or N); cutechess: each opening N times (games_per_opening).
        "-repeat" => shape.repeat = Some(values.first().map_or(Ok(2), |_| number(name, values))?),
        "-concurrency" => {
            let n = values.first().and_then(|v| v.parse::<i64>().ok());
            shape.concurrency = Some(n.ok_or_else(|| refuse(name, "needs a whole number"))?);
        }
        "-force-concurrency" => shape.force_concurrency = true,
        "-openings" => openings(values, out, shape)?,
        "-pgnout" | "-epdout" | "-log" => file_flag(name, values, out, shape)?,
        "-sprt" => pass("--sprt"),
        "-draw" | "-resign" => adjudication_flag(name, values, out, shape),
        "-event" => out.extend(["--event".to_string(), values.join(" ")]),
        "-site" => out.extend(["--site".to_string(), values.join(" ")]),
        "-srand" => pass("--seed"),
        "-variant" | "-tournament" => game_flag(name, values, shape)?,
        "-ratinginterval" | "-scoreinterval" | "-output" | "-report" | "-crc32" => {
            output_flag(name, values, shape)?
        }
        _ if NOTED.iter().any(|(n, _)| *n == name) => shape.notes.extend(
            NOTED
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, why)| format!("{name}: {why}")),
        ),
        _ if IGNORED.contains(&name) => {}
        "-strict" => out.push("--strict".into()),
        "-noswap" => shape.noswap = true,
        "-check-mate-pvs" => shape.check_mate_pvs = true,
        "-tb" | "-tbpieces" | "-tbignore50" | "-tbadjudicate" => {
            tablebase_flag(name, values, shape)?
        }
        "-reverse" => shape.reverse = true,
        "-maxmoves" => out.extend([
            "--max-plies".to_string(),
            (2 * number(name, values)?).to_string(),
        ]),
        // fastchess's wait for `readyok` between moves: its engines' start keeps its own
        // time, as in fastchess (a short ping would otherwise cut their start short).
        "-ping-ms" => shape.ping_ms = Some(number(name, values)?),
        // One allowance here for what fastchess times separately; the longest is kept, so no
        // engine is cut short that fastchess would have waited for.
        "-startup-ms" | "-ucinewgame-ms" => {
            let ms = number(name, values)?;
            shape.handshake_ms = Some(shape.handshake_ms.map_or(ms, |m| m.max(ms)));
        }
        // fastchess pins a game's engines (and the thread that runs them) to a core, as
        // --affinity does, on the CPUs listed or else on all it may use.
        "-use-affinity" => match values {
            [] => out.push("--affinity".to_string()),
            list => out.push(format!("--affinity={}", list.join(","))),
        },
        "" => {
            return Err(Refused(format!(
                "'{}' belongs to no flag",
                values.join(" ")
            )))
        }
        other => return Err(unknown_flag(other)),
    }
    Ok(())
}

/// `-draw` and `-resign`, as arbiter's flags of the same name read them; fastchess's defaults
/// for a key left out (types/draw_adjudication.hpp, types/resign_adjudication.hpp), where
/// cutechess-cli's line gives all of them.
fn adjudication_flag(name: &str, values: &[&str], out: &mut Vec<String>, shape: &Shape) {
    out.push(format!("-{name}"));
    out.extend(values.iter().map(|v| v.to_string()));
    if shape.dialect == Some(Dialect::Fastchess) {
        let defaults: &[(&str, &str)] = match name {
            "-draw" => &[("movenumber", "0"), ("movecount", "1"), ("score", "0")],
            _ => &[("movecount", "1"), ("score", "0")],
        };
        for (key, value) in defaults {
            if !values.iter().any(|v| v.starts_with(&format!("{key}="))) {
                out.push(format!("{key}={value}"));
            }
        }
    }
}

/// The tablebase flags (fastchess: cli.cpp parseTbAdjudication / parseTbMaxPieces /
/// parseTbIgnore50 / parseTbAdjudicate; cutechess-cli takes -tb, -tbpieces and -tbignore50
/// alike), gathered into `--tablebase`'s keys.
fn tablebase_flag(name: &str, values: &[&str], shape: &mut Shape) -> Result<(), Refused> {
    use crate::referee::tablebase::TbResults;
    match name {
        "-tb" => shape.tb_path = Some(values.join(" ")),
        "-tbpieces" => {
            let n = number(name, values)?;
            // fastchess's 0 is "as many as the tables hold", arbiter's default.
            if n != 0 {
                shape.tb_keys.push(format!("pieces={n}"));
            }
        }
        "-tbignore50" => shape.tb_keys.push("ignore50=true".into()),
        _ => {
            let kind = values.first().copied().unwrap_or("");
            let word = match TbResults::parse(kind).map_err(|why| refuse(name, &why))? {
                TbResults::Both => "both",
                TbResults::WinLoss => "win-loss",
                TbResults::Draw => "draw",
            };
            shape.tb_keys.push(format!("results={word}"));
        }
    }
    Ok(())
}

/// A flag neither tool has: refused, with the one meant where it is a letter or two away
/// (cutechess-cli warns and plays on without it, which would not be the run asked for).
fn unknown_flag(flag: &str) -> Refused {
    match closest_flag(flag) {
        Some(meant) => refuse(
            flag,
            &format!(
                "no such option; did you mean {meant}? (played without it, the run would not \
                 be the one asked for)"
            ),
        ),
        None => refuse(
            flag,
            "has no equivalent in arbiter (see the table in docs/command-lines.md)",
        ),
    }
}

/// The tools' flag a misspelt one was meant to be: one or two letters apart.
fn closest_flag(flag: &str) -> Option<&'static str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let next = (diagonal + usize::from(ca != *cb))
                    .min(row[j] + 1)
                    .min(row[j + 1] + 1);
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    }
    THEIR_FLAGS
        .iter()
        .map(|known| (distance(flag, known), *known))
        .filter(|&(d, _)| (1..=2).contains(&d))
        .min()
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_flag_is_refused_with_the_one_meant() {
        assert_eq!(closest_flag("-rouns"), Some("-rounds"));
        assert_eq!(closest_flag("-concurency"), Some("-concurrency"));
        assert_eq!(closest_flag("-rounds"), None, "a flag is not its own typo");
        assert_eq!(closest_flag("-frobnicate"), None);
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_fastchess_readme_example_is_a_match() {
        // Forced: fastchess refuses 4 games at once under a clock on a machine of fewer CPUs.
        let line = "-engine cmd=Engine1.exe name=Engine1 -engine cmd=Engine2.exe name=Engine2 \
            -each tc=10+0.1 -rounds 200 -repeat -concurrency 4 -force-concurrency";
        let t = translate("arbiter", &words(line)).unwrap();
        assert_eq!(
            t.argv.join(" "),
            "match --games 400 --game chess --engine cmd=Engine1.exe name=Engine1 --engine \
                cmd=Engine2.exe name=Engine2 --each sync=every tc=10+0.1 --concurrency 4 \
                --check-pvs lines"
        );
        assert!(t.reading.contains("fastchess"), "{}", t.reading);
        // The same line typed to cutechess-cli plays 200 games: its -repeat reuses openings.
        let t = translate("/usr/bin/cutechess-cli", &words(line)).unwrap();
        assert!(
            t.argv.join(" ").starts_with("match --games 200 "),
            "{:?}",
            t.argv
        );
    }

    /// The value of `flag` in a translation's command line, if it has one.
    fn value_of(t: &Translation, flag: &str) -> Option<String> {
        let at = t.argv.iter().position(|a| a == flag)?;
        t.argv.get(at + 1).cloned()
    }

    #[test]
    fn openings_serve_the_games_their_tool_gives_them() {
        let per_opening = |program: &str, line: &str| {
            let t = translate(program, &words(line)).unwrap();
            value_of(&t, "--games-per-opening").map_or(2, |v| v.parse().unwrap())
        };
        let two = "-engine cmd=a -engine cmd=b -each tc=1 -openings file=b.epd";
        let four = "-engine cmd=a -engine cmd=b -engine cmd=c -engine cmd=d -each tc=1 -openings \
            file=b.epd";
        for (program, line, games) in [
            // cutechess-cli: a new opening each game unless -repeat says otherwise.
            ("cutechess-cli", format!("{two} -rounds 10"), 1),
            ("cutechess-cli", format!("{two} -rounds 10 -repeat"), 2),
            ("cutechess-cli", format!("{two} -rounds 10 -repeat 4"), 4),
            ("cutechess-cli", format!("{two} -rounds 10 -repeat 1"), 1),
            // ... and at each new encounter when more than two engines play.
            ("cutechess-cli", format!("{four} -games 2 -repeat 4"), 2),
            (
                "cutechess-cli",
                format!("{four} -games 6 -openings policy=encounter"),
                6,
            ),
            // Between two engines, policy=encounter never moves on.
            (
                "cutechess-cli",
                format!("{two} policy=encounter -games 2 -rounds 5"),
                10,
            ),
            (
                "cutechess-cli",
                format!("{four} -games 3 -openings policy=round"),
                3,
            ),
            // fastchess: one opening for each round's games.
            ("fastchess", format!("{two} -games 1 -rounds 10"), 1),
            ("fastchess", format!("{two} -rounds 10 -repeat"), 2),
            ("fastchess", format!("{two} -rounds 10"), 2),
        ] {
            assert_eq!(per_opening(program, &line), games, "{program} {line}");
        }
        let err = translate(
            "fastchess",
            &words(&format!("{two} -openings policy=encounter")),
        )
        .err()
        .unwrap();
        assert!(err.0.contains("fastchess refuses it"), "{}", err.0);
        let stray = translate(
            "cutechess-cli",
            &words(&format!("{two} -rounds 5 policy=round")),
        );
        let err = stray.err().unwrap().0;
        assert!(err.contains("'policy=round' belongs to no flag"), "{err}");
    }

    #[test]
    fn a_gauntlets_seeds_are_read_as_their_tool_reads_them() {
        let line = "-tournament gauntlet -engine cmd=a -engine cmd=b -engine cmd=c -engine cmd=d \
            -each tc=1 -games 2 -seeds 2";
        let cute = translate("cutechess-cli", &words(line)).unwrap();
        assert_eq!(value_of(&cute, "--seeds").as_deref(), Some("2"));
        assert!(!cute.argv.contains(&"--seeds-meet".to_string()));
        let fast = translate("fastchess", &words(line)).unwrap();
        assert!(fast.argv.contains(&"--seeds-meet".to_string()));
        // More seeds than the engines allow are as many as can have an opponent.
        let many = translate("fastchess", &words(&line.replace("-seeds 2", "-seeds 9"))).unwrap();
        assert_eq!(value_of(&many, "--seeds").as_deref(), Some("3"));
        let rr = line.replace("-tournament gauntlet ", "");
        let t = translate("cutechess-cli", &words(&rr)).unwrap();
        assert_eq!(value_of(&t, "--seeds"), None);
        assert!(t.notes[0].contains("no seeds"), "{:?}", t.notes);
    }

    #[test]
    fn pgnout_keys_are_done_noted_or_refused() {
        let line = |tail: &str| words(&format!("-engine cmd=a -engine cmd=b -each tc=1 {tail}"));
        let t = translate("cutechess-cli", &line("-pgnout out.pgn min fi")).unwrap();
        let argv = t.argv.join(" ");
        assert!(
            argv.contains("--pgnout-min") && argv.contains("--pgnout out.pgn"),
            "{argv}"
        );
        assert!(t.notes.is_empty());
        let t = translate(
            "fastchess",
            &line("-pgnout file=o.pgn notation=san nps=true seldepth=false min=true"),
        )
        .unwrap();
        assert!(t.argv.join(" ").contains("--pgnout-min"));
        assert!(!t.argv.join(" ").contains("--pgn-seldepth"));
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
        assert!(t.notes[0].contains("nps=true"), "{:?}", t.notes);
        // OpenBench's client line: its pattern holds spaces, one word of the command line.
        let mut openbench = line("-pgnout file=o.pgn seldepth=true nodes=true");
        openbench.push("match_line=^info string pgncomment .*".into());
        let t = translate("fastchess", &openbench).unwrap();
        let argv = t.argv.join(" ");
        assert!(argv.contains("--pgnout o.pgn"), "{argv}");
        assert!(
            argv.contains("--pgn-seldepth")
                && argv.contains("--pgn-nodes")
                && t.argv
                    .windows(2)
                    .any(|w| w == ["--pgn-line", "^info string pgncomment .*"]),
            "{argv}"
        );
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        let t = translate("cutechess-cli", &line("-debug")).unwrap();
        assert!(t.notes[0].starts_with("-debug: "), "{:?}", t.notes);
        let t = translate("fastchess", &line("-show-latency -check-mate-pvs")).unwrap();
        assert!(t.notes[0].starts_with("-show-latency: "), "{:?}", t.notes);
        assert!(
            t.argv.join(" ").contains("--check-pvs mates"),
            "{:?}",
            t.argv
        );
        let t = translate("fastchess", &line("-rounds 1")).unwrap();
        assert!(
            t.argv.join(" ").contains("--check-pvs lines"),
            "{:?}",
            t.argv
        );
        let t = translate("cutechess-cli", &line("-rounds 1")).unwrap();
        assert!(!t.argv.join(" ").contains("--check-pvs"), "{:?}", t.argv);
        let t = translate("fastchess", &line("-log f.log")).unwrap();
        assert!(t.argv.join(" ").contains("--log f.log"), "{:?}", t.argv);
        let t = translate("fastchess", &line("-log file=f.log level=warn engine=true")).unwrap();
        assert!(t.argv.join(" ").contains("--log f.log"), "{:?}", t.argv);
        assert!(t.notes[0].starts_with("-log level=warn"), "{:?}", t.notes);
        for (tail, says) in [
            ("-log file=f.log colour=blue", "unknown key 'colour'"),
            ("-pgnout file=o.pgn notation=uci", "notation=uci"),
            ("-pgnout file=o.pgn colour=blue", "unknown key 'colour'"),
        ] {
            let err = translate("fastchess", &line(tail)).err().unwrap().0;
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn fastchess_refuses_more_games_at_once_than_cpus_under_a_clock() {
        let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
        let line = |tail: &str| words(&format!("-engine cmd=a -engine cmd=b {tail}"));
        let over = format!("-each tc=1+0.1 -concurrency {}", cpus + 1);
        let err = translate("fastchess", &line(&over)).err().unwrap().0;
        assert!(err.contains("add -force-concurrency"), "{err}");
        let concurrency = |t: Translation| {
            let at = t.argv.iter().position(|a| a == "--concurrency").unwrap();
            t.argv[at + 1].parse::<usize>().unwrap()
        };
        let forced = translate("fastchess", &line(&format!("{over} -force-concurrency")));
        assert_eq!(concurrency(forced.unwrap()), cpus + 1);
        // cutechess-cli plays it; and without a clock the CPUs decide no game.
        assert_eq!(
            concurrency(translate("cutechess-cli", &line(&over)).unwrap()),
            cpus + 1
        );
        let untimed = format!("-each tc=inf nodes=100 -concurrency {}", cpus + 1);
        assert_eq!(
            concurrency(translate("fastchess", &line(&untimed)).unwrap()),
            cpus + 1
        );
        // fastchess's 0 and below: the CPUs less that many.
        let zero = translate("fastchess", &line("-each tc=1 -concurrency 0")).unwrap();
        assert_eq!(concurrency(zero), cpus);
        let below = translate(
            "fastchess",
            &line(&format!("-each tc=1 -concurrency -{cpus}")),
        );
        assert!(below.err().unwrap().0.contains("at least 1"));
    }

    #[test]
    fn games_are_counted_as_the_tool_whose_syntax_is_used() {
        let games = |program: &str, line: &str| {
            let t = translate(program, &words(line)).unwrap();
            (t.argv[0].clone(), t.argv[1..3].join(" "), t.reading)
        };
        let two = "-engine cmd=a -engine cmd=b -each tc=1";
        // fastchess: -games 2 and -rounds 2 unless told; cutechess-cli: 1 and 1.
        assert_eq!(games("fastchess", two).1, "--games 4");
        assert_eq!(games("cutechess-cli", two).1, "--games 1");
        assert_eq!(
            games("fastchess", &format!("{two} -rounds 5")).1,
            "--games 10"
        );
        assert_eq!(
            games("cutechess-cli", &format!("{two} -rounds 5")).1,
            "--games 5"
        );
        // fastchess swaps -games over 2 into -rounds.
        assert_eq!(
            games("fastchess", &format!("{two} -games 10")).1,
            "--games 20"
        );
        // What the line shows decides without a program name: proto=xboard is cutechess's.
        let (_, n, why) = games("arbiter", &format!("{two} proto=xboard -rounds 10"));
        assert_eq!(n, "--games 10");
        assert!(
            why.contains("cutechess-cli") && why.contains("proto=xboard"),
            "{why}"
        );
        let (_, n, why) = games("arbiter", &format!("{two} -rounds 3 -pgnout file=x.pgn"));
        assert_eq!(n, "--games 6");
        assert!(why.contains("-pgnout file="), "{why}");
        assert_eq!(
            games("arbiter", &format!("{two} -rounds 3 -dialect cutechess")).1,
            "--games 3"
        );
        // Four players, cutechess's manual: -games 2 -rounds 10 is 20 games per pairing.
        let four = "-engine cmd=a -engine cmd=b -engine cmd=c -engine cmd=d -each tc=4";
        let (kind, rounds, _) = games(
            "cutechess-cli",
            &format!("{four} -games 2 -rounds 10 -repeat"),
        );
        assert_eq!(
            (kind.as_str(), rounds.as_str()),
            ("tournament", "--rounds 10")
        );
        // An odd count is cut at the total: 3 per pairing, 6 pairings.
        let t = translate("cutechess-cli", &words(&format!("{four} -rounds 3"))).unwrap();
        assert!(
            t.argv
                .join(" ")
                .starts_with("tournament --rounds 2 --games 18 "),
            "{:?}",
            t.argv
        );
        // Both tools' marks in one line: refused, with the way out.
        let mixed = translate(
            "arbiter",
            &words(&format!("{two} proto=xboard -log file=x")),
        )
        .unwrap_err();
        assert!(mixed.0.contains("-dialect"), "{}", mixed.0);
    }

    #[test]
    fn variant_names_the_game_and_duplicate_names_are_renamed() {
        let t = translate(
            "arbiter",
            &words(
                "-engine cmd=/x/E name=a -engine cmd=/x/E name=b -each depth=2 -games 2 \
                -variant leiserchess",
            ),
        )
        .unwrap();
        let line = t.argv.join(" ");
        assert!(line.contains("--game leiserchess"), "{line}");
        assert_eq!(line.matches("--game ").count(), 1, "{line}");
        let t = translate(
            "fastchess",
            &words("-engine cmd=/usr/games/stockfish -engine cmd=/usr/games/stockfish -each tc=1"),
        )
        .unwrap();
        let line = t.argv.join(" ");
        assert!(line.contains("name=stockfish_2"), "{line}");
    }

    /// fastchess's manual: `-use-affinity [CPUS]`, the list as `"3,5,7-11,13"`.
    #[test]
    fn use_affinity_pins_on_all_cpus_or_on_those_listed() {
        let line = "-engine cmd=a -engine cmd=b -each tc=1 -concurrency 2 -use-affinity";
        let argv = translate("fastchess", &words(line)).unwrap().argv;
        assert!(argv.iter().any(|a| a == "--affinity"), "{argv:?}");
        let argv = translate("fastchess", &words(&format!("{line} 3,5,7-11,13")))
            .unwrap()
            .argv;
        assert!(
            argv.iter().any(|a| a == "--affinity=3,5,7-11,13"),
            "{argv:?}"
        );
    }

    /// fastchess's three waits become arbiter's one, the longest of them, for every engine.
    #[test]
    fn fastchess_waits_become_the_longest_handshake() {
        let line = "-engine cmd=a -engine cmd=b -each tc=1 -startup-ms 20000 -ping-ms 5000 -wait 3";
        let argv = translate("fastchess", &words(line)).unwrap().argv;
        let each = argv.iter().position(|a| a == "--each").unwrap();
        assert!(argv[each..].iter().any(|a| a == "handshake=20"), "{argv:?}");
        assert_eq!(
            argv.iter().filter(|a| a.starts_with("handshake=")).count(),
            1
        );
        let err = translate("fastchess", &words(&format!("{line} -ucinewgame-ms x"))).unwrap_err();
        assert!(err.0.contains("-ucinewgame-ms"), "{}", err.0);
    }

    #[test]
    fn two_sided_resignation_is_kept() {
        let argv = translate(
            "arbiter",
            &words(
                "-engine cmd=a -engine cmd=b -each tc=1 -resign movecount=3 score=400 \
                twosided=true",
            ),
        )
        .unwrap()
        .argv;
        assert!(
            argv.join(" ")
                .ends_with("--resign movecount=3 score=400 twosided=true --check-pvs lines"),
            "{argv:?}"
        );
    }

    #[test]
    fn what_has_no_meaning_here_is_refused_by_name() {
        let argv = translate(
            "fastchess",
            &words("-engine cmd=a -engine cmd=b -tb /syzygy -tbpieces 5 -tbadjudicate WIN_LOSS"),
        )
        .unwrap()
        .argv;
        assert!(
            argv.join(" ")
                .contains("--tablebase path=/syzygy pieces=5 results=win-loss"),
            "{argv:?}"
        );
        let err = translate("arbiter", &words("-engine cmd=a conf=Fruit")).unwrap_err();
        assert!(err.0.contains("conf="), "{}", err.0);
        assert!(is_theirs(&words("-engine cmd=a")));
        assert!(!is_theirs(&words("match --engine cmd=a")));
    }
}
