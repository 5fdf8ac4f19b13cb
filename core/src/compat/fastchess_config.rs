//! fastchess's `-config file=config.json`: the JSON fastchess saves of a tournament (engines,
//! limits, book, adjudication, SPRT, output files), read back as the fastchess flags that would
//! have made it, so that it goes through the same translation as a typed command line.
//!
//! Its `stats` (results of games already played by fastchess) cannot be continued here: arbiter
//! continues only runs it journaled itself. A file with results is refused unless `stats=false`
//! says to start afresh, as fastchess's own option means.

use super::Refused;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    engines: Vec<Engine>,
    rounds: u64,
    games: u64,
    concurrency: u64,
    seed: Option<u64>,
    variant: u8,
    /// 0 round robin, 1 gauntlet.
    #[serde(rename = "type")]
    kind: u8,
    opening: Opening,
    pgn: Output,
    epd: Output,
    log: Output,
    sprt: Sprt,
    draw: Draw,
    resign: Resign,
    maxmoves: MaxMoves,
    tb_adjudication: TbAdjudication,
    stats: BTreeMap<String, Stats>,
    noswap: bool,
    reverse: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Engine {
    name: String,
    dir: String,
    cmd: String,
    args: String,
    options: Vec<(String, String)>,
    limit: Limit,
    variant: u8,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Limit {
    tc: Tc,
    nodes: u64,
    plies: u64,
}

/// Milliseconds, as fastchess keeps them.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Tc {
    increment: u64,
    fixed_time: u64,
    time: u64,
    moves: u64,
    timemargin: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Opening {
    file: String,
    /// 0 EPD, 1 PGN, 2 none.
    format: u8,
    /// 0 random, 1 sequential.
    order: u8,
    plies: i64,
    start: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Output {
    file: String,
    event_name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Sprt {
    enabled: bool,
    alpha: f64,
    beta: f64,
    elo0: f64,
    elo1: f64,
    model: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Draw {
    enabled: bool,
    move_number: u64,
    move_count: u64,
    score: i64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Resign {
    enabled: bool,
    move_count: u64,
    score: i64,
    twosided: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MaxMoves {
    enabled: bool,
    move_count: u64,
}

/// types/tb_adjudication.hpp: the fields its JSON holds (the result kind is not among them:
/// fastchess's default, both, applies).
#[derive(Deserialize, Default)]
#[serde(default)]
struct TbAdjudication {
    enabled: bool,
    syzygy_dirs: String,
    max_pieces: i64,
    ignore_50_move_rule: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Stats {
    wins: u64,
    losses: u64,
    draws: u64,
}

/// A flag and its words, as a user would have typed them.
pub type TheirFlag = (String, Vec<String>);

fn flag(name: &str, values: impl IntoIterator<Item = String>) -> TheirFlag {
    (name.to_string(), values.into_iter().collect())
}

fn seconds(ms: u64) -> String {
    format!("{}", ms as f64 / 1000.0)
}

fn engine_flag(e: &Engine) -> TheirFlag {
    let mut words = vec![format!("name={}", e.name)];
    let cmd = if e.dir.is_empty() {
        e.cmd.clone()
    } else {
        format!("{}/{}", e.dir.trim_end_matches('/'), e.cmd)
    };
    words.push(format!("cmd={cmd}"));
    if !e.args.is_empty() {
        words.push(format!("args={}", e.args));
    }
    let tc = &e.limit.tc;
    if tc.time > 0 || tc.increment > 0 {
        let moves = if tc.moves > 0 {
            format!("{}/", tc.moves)
        } else {
            String::new()
        };
        words.push(format!(
            "tc={moves}{}+{}",
            seconds(tc.time),
            seconds(tc.increment)
        ));
    }
    if tc.fixed_time > 0 {
        words.push(format!("st={}", seconds(tc.fixed_time)));
    }
    if tc.timemargin > 0 {
        words.push(format!("timemargin={}", tc.timemargin));
    }
    if e.limit.nodes > 0 {
        words.push(format!("nodes={}", e.limit.nodes));
    }
    if e.limit.plies > 0 {
        words.push(format!("depth={}", e.limit.plies));
    }
    words.extend(e.options.iter().map(|(k, v)| format!("option.{k}={v}")));
    flag("-engine", words)
}

/// What `file` holds is refused for: results it cannot
/// continue.
fn refusal(c: &Config, keep_stats: bool) -> Option<String> {
    // Saturating: counts near 2^64 must not wrap to 0 and pass for "no results".
    let played: u64 = c
        .stats
        .values()
        .map(|s| s.wins.saturating_add(s.losses).saturating_add(s.draws))
        .fold(0, u64::saturating_add);
    if keep_stats && played > 0 {
        Some(format!(
            "it holds the results of {played} games fastchess played, which arbiter cannot \
             continue (it resumes only its own runs, with --resume); add stats=false to start \
             afresh with its settings"
        ))
    } else {
        None
    }
}

/// `-openings` as the file's book settings give it, if it names a book.
fn opening_flag(o: &Opening) -> Option<TheirFlag> {
    if o.file.is_empty() || o.format == 2 {
        return None;
    }
    let mut words = vec![
        format!("file={}", o.file),
        format!("format={}", if o.format == 1 { "pgn" } else { "epd" }),
        format!(
            "order={}",
            if o.order == 0 { "random" } else { "sequential" }
        ),
    ];
    if o.plies > 0 {
        words.push(format!("plies={}", o.plies));
    }
    if o.start > 1 {
        words.push(format!("start={}", o.start));
    }
    Some(flag("-openings", words))
}

/// `-sprt`, `-draw`, `-resign` and `-maxmoves`, those the file enables.
fn decision_flags(c: &Config) -> Vec<TheirFlag> {
    let mut out = Vec::new();
    if c.sprt.enabled {
        let s = &c.sprt;
        let mut words = vec![
            format!("elo0={}", s.elo0),
            format!("elo1={}", s.elo1),
            format!("alpha={}", s.alpha),
            format!("beta={}", s.beta),
        ];
        if !s.model.is_empty() {
            words.push(format!("model={}", s.model));
        }
        out.push(flag("-sprt", words));
    }
    if c.draw.enabled {
        let d = &c.draw;
        out.push(flag(
            "-draw",
            vec![
                format!("movenumber={}", d.move_number),
                format!("movecount={}", d.move_count),
                format!("score={}", d.score),
            ],
        ));
    }
    if c.resign.enabled {
        let r = &c.resign;
        out.push(flag(
            "-resign",
            vec![
                format!("movecount={}", r.move_count),
                format!("score={}", r.score),
                format!("twosided={}", r.twosided),
            ],
        ));
    }
    if c.maxmoves.enabled {
        out.push(flag("-maxmoves", vec![c.maxmoves.move_count.to_string()]));
    }
    let tb = &c.tb_adjudication;
    if tb.enabled {
        out.push(flag("-tb", vec![tb.syzygy_dirs.clone()]));
        out.push(flag("-tbpieces", vec![tb.max_pieces.to_string()]));
        if tb.ignore_50_move_rule {
            out.push(flag("-tbignore50", Vec::new()));
        }
    }
    out
}

/// The tournament's shape, book, output files and decisions as flags.
fn tournament_flags(c: &Config) -> Vec<TheirFlag> {
    let mut out = Vec::new();
    for (name, n) in [
        ("-rounds", c.rounds),
        ("-games", c.games),
        ("-concurrency", c.concurrency),
    ] {
        if n > 0 {
            out.push(flag(name, [n.to_string()]));
        }
    }
    if c.kind == 1 {
        out.push(flag("-tournament", ["gauntlet".to_string()]));
    }
    // fastchess's VariantType: 0 standard, 1 Fischer random (the run's or an engine's).
    if c.variant != 0 || c.engines.iter().any(|e| e.variant != 0) {
        out.push(flag("-variant", ["fischerandom".to_string()]));
    }
    if let Some(seed) = c.seed {
        out.push(flag("-srand", [seed.to_string()]));
    }
    out.extend(opening_flag(&c.opening));
    for (name, on) in [("-noswap", c.noswap), ("-reverse", c.reverse)] {
        if on {
            out.push(flag(name, []));
        }
    }
    for (name, output) in [("-pgnout", &c.pgn), ("-epdout", &c.epd), ("-log", &c.log)] {
        if !output.file.is_empty() {
            out.push(flag(name, [format!("file={}", output.file)]));
        }
    }
    if !c.pgn.event_name.is_empty() {
        out.push(flag("-event", [c.pgn.event_name.clone()]));
    }
    out.extend(decision_flags(c));
    out
}

/// The flags `-config file=F [stats=false] [discard=] [outname=]` stands for; `None` when it
/// loads no file (`-config outname=F` only names the file fastchess would save its state to,
/// which arbiter keeps in its own run.json).
pub fn config_flags(values: &[&str]) -> Result<Option<Vec<TheirFlag>>, Refused> {
    let refuse = |why: String| Refused(format!("-config: {why}"));
    let mut file = None;
    let mut keep_stats = true;
    for v in values {
        match v.split_once('=') {
            Some(("file", f)) => file = Some(f),
            Some(("stats", s)) => keep_stats = s != "false",
            // arbiter saves its own run.json in the run folder, never a config.json to discard.
            Some(("discard" | "outname", _)) => {}
            _ => {
                return Err(refuse(format!(
                    "unknown key '{v}' (file= stats= discard= outname=)"
                )))
            }
        }
    }
    let Some(file) = file else {
        if !keep_stats {
            return Err(refuse(
                "stats=false goes with the file=config.json it applies to".into(),
            ));
        }
        return Ok(None);
    };
    let text = std::fs::read_to_string(file).map_err(|e| refuse(format!("{file}: {e}")))?;
    flags_of_json(&text, file, keep_stats).map(Some)
}

/// The flags a fastchess `config.json` (its text, read from `file`) stands for.
pub fn flags_of_json(text: &str, file: &str, keep_stats: bool) -> Result<Vec<TheirFlag>, Refused> {
    let refuse = |why: String| Refused(format!("-config: {why}"));
    let config: Config =
        serde_json::from_str(text).map_err(|e| refuse(format!("{file}:{}: {e}", e.line())))?;
    if let Some(why) = refusal(&config, keep_stats) {
        return Err(refuse(format!("{file}: {why}")));
    }
    if config.engines.is_empty() {
        return Err(refuse(format!("{file}: it names no engines")));
    }
    let mut flags: Vec<TheirFlag> = config.engines.iter().map(engine_flag).collect();
    flags.extend(tournament_flags(&config));
    Ok(flags)
}
