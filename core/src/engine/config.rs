//! How to run an engine: `--engine cmd=./player name=new tc=10+0.1 option.Hash=64 ...`.

pub use super::dialect::Proto;
use super::sandbox::{parse_size, Confinement, SandboxMode};
use crate::clock::{parse_seconds, TimeControl};
use std::time::Duration;
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "engine setting '{0}' is not key=value (keys: cmd name arg dir proto tc st depth nodes \
        timemargin stall handshake restart sandbox memory processes threads readable writable \
        env.<NAME> option.<Name>)"
    )]
    NotKeyValue(String),
    #[error(
        "unknown engine setting '{0}' (keys: cmd name arg dir proto tc st depth nodes \
        timemargin stall handshake restart sandbox memory processes threads readable writable \
        env.<NAME> option.<Name>)"
    )]
    UnknownKey(String),
    #[error("engine setting {key}={value}: {reason}")]
    BadValue {
        key: String,
        value: String,
        reason: String,
    },
    /// A setting of `--each` (or TOML `[each]`) that every engine shares was refused.
    #[error("{0} (given in --each, for every engine)")]
    FromEach(Box<ConfigError>),
    #[error("an engine has no cmd= (the program to run)")]
    NoCommand,
    #[error("engine '{0}' has no limit: give tc=, st=, depth= or nodes=")]
    NoLimit(String),
    #[error(
        "engine '{0}': the leiserchess and xboard protocols have no node limit (use depth=, \
        st= or tc=)"
    )]
    NodesUnsupported(String),
}

/// How an engine is limited per move. Several may be combined, as in cutechess.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SearchLimits {
    pub tc: Option<TimeControl>,
    /// Fixed time per move (`st=`).
    pub movetime: Option<Duration>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
}

/// Whether the run's game is the default one, not named on the command line (see
/// `note_game_defaulted`).
static GAME_DEFAULTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that the run's game was not named but taken by default: a UCI engine that cannot say
/// it plays it (no `UCI_Variant`, as a chess engine) is then refused at its start.
pub fn note_game_defaulted(defaulted: bool) {
    GAME_DEFAULTED.store(defaulted, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the run's game was taken by default.
pub fn game_defaulted() -> bool {
    GAME_DEFAULTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// `sync=`: when an engine is made to read its position and answer `isready` before its `go`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncBeforeGo {
    /// `on`: before a `go` on the clock, so that a sleeping engine is woken, and sets its
    /// position up, on the referee's time.
    #[default]
    Clocked,
    /// `off`: never (an engine slow to answer `isready`, or a measurement of what it gives).
    Never,
    /// `every`: before every `go`, as fastchess pings: an engine that stops answering between
    /// its moves is caught as stalled even where no clock runs.
    Every,
}

impl SyncBeforeGo {
    pub fn is_default(&self) -> bool {
        *self == SyncBeforeGo::default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineConfig {
    pub name: String,
    pub cmd: String,
    pub args: Vec<String>,
    pub dir: Option<String>,
    pub proto: Proto,
    pub options: Vec<(String, String)>,
    pub limits: SearchLimits,
    /// Overrun of the clock tolerated before a time forfeit.
    pub timemargin: Duration,
    /// How long a move may take when nothing else bounds it (depth= and nodes= searches).
    pub stall: Duration,
    /// How long the engine may take to answer `uci`, `isready` and the like.
    pub handshake: Duration,
    /// A fresh process for every game (`restart=on`); by default one process plays all of a
    /// worker's games, as in cutechess-cli (`auto`) and fastchess (`off`), and is replaced only
    /// after it failed.
    #[serde(default)]
    pub restart: bool,
    /// How long the engine may take to answer the `isready` before a `go` (`ping=`,
    /// fastchess's `-ping-ms`); by default `handshake=`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<Duration>,
    /// When the engine answers `isready` before its `go` (see `EngineProcess::think`).
    #[serde(default, skip_serializing_if = "SyncBeforeGo::is_default")]
    pub sync: SyncBeforeGo,
    /// A file the engine's stderr is added to (`stderr=`, as cutechess-cli's), instead of the
    /// run's `--log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<std::path::PathBuf>,
    /// The sandbox and resource limits (`sandbox=`, `memory=`, `processes=`, `threads=`).
    #[serde(default, skip_serializing_if = "Confinement::is_default")]
    pub sandbox: Confinement,
    /// Engines of one family never meet (`family=`, the MIT autotester's key): versions of one
    /// program tested against others, not against each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// The engine's own Polyglot opening book (`book=`, cutechess-cli's): in chess, its moves
    /// are played for the engine while the game is in the book, for the first `bookdepth=`
    /// moves of each side (all of them without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub book: Option<std::path::PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bookdepth: Option<u32>,
    /// Folders this engine must not see from its sandbox (the run's, the other engines'): set by
    /// the run, not a setting.
    #[serde(skip)]
    pub hidden: Vec<std::path::PathBuf>,
    /// How many of `hidden`, from the first, are the run's own files (the rest are the other
    /// engines' folders): set by the run.
    #[serde(skip)]
    pub hidden_run: usize,
    /// What of each search the run's PGN keeps besides score, depth and time: set by the run,
    /// not a setting.
    #[serde(skip)]
    pub recorded: Recorded,
}

/// What of each search a run keeps for its PGN comments besides score, depth and time
/// (`--pgn-nodes`, `--pgn-seldepth`, `--pgn-line`, fastchess's `-pgnout nodes=true
/// seldepth=true match_line=...`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    pub nodes: bool,
    pub seldepth: bool,
    /// Patterns (regular expressions) searched for in each line the engine writes during a
    /// search; the last line matching each is kept.
    pub lines: Vec<String>,
    /// Every `info ... pv` line of each search, for the PV checks (`--check-pvs`).
    pub pvs: bool,
}

impl Recorded {
    /// The patterns, compiled; the first that is no regular expression, with the reason.
    pub fn patterns(&self) -> Result<Vec<regex::bytes::Regex>, String> {
        self.lines
            .iter()
            .map(|p| regex::bytes::Regex::new(p).map_err(|e| format!("'{p}': {e}")))
            .collect()
    }
}

/// The largest `timemargin=` (ms): an hour.
const MAX_TIMEMARGIN_MS: u64 = 3_600_000;

/// Stall timeout when only depth or nodes limit a search: generous, but finite.
pub const DEFAULT_STALL: Duration = Duration::from_secs(60);
/// Time allowed for `uci`/`uciok`, `isready`/`readyok` and variant selection.
pub const DEFAULT_HANDSHAKE: Duration = Duration::from_secs(10);

/// One `key=value` setting, and how its value reads.
struct Setting<'a> {
    key: &'a str,
    value: &'a str,
}

impl Setting<'_> {
    fn bad(&self, reason: &str) -> ConfigError {
        ConfigError::BadValue {
            key: self.key.to_string(),
            value: self.value.to_string(),
            reason: reason.to_string(),
        }
    }

    fn positive(&self) -> Result<u64, ConfigError> {
        self.value
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| self.bad("expected a positive whole number"))
    }

    fn positive_u32(&self) -> Result<u32, ConfigError> {
        u32::try_from(self.positive()?).map_err(|_| self.bad("expected a positive whole number"))
    }

    fn seconds(&self) -> Result<Duration, ConfigError> {
        parse_seconds(self.value).ok_or_else(|| self.bad("expected seconds"))
    }

    fn on_off(&self) -> Result<bool, ConfigError> {
        match self.value {
            "on" => Ok(true),
            "off" => Ok(false),
            _ => Err(self.bad("expected on or off")),
        }
    }
}

/// A command line's words as Qt's `QProcess` splits one (cutechess-cli's `cmd=`): at spaces,
/// with double or single quotes holding a word together.
pub(crate) fn command_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quote, mut started) = (None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

impl EngineConfig {
    /// Builds a config from `key=value` settings; `each` (from `--each`) comes first, so an
    /// engine's own settings override it.
    pub fn parse<S: AsRef<str>>(settings: &[S], each: &[S]) -> Result<EngineConfig, ConfigError> {
        let mut cfg = EngineConfig {
            name: String::new(),
            cmd: String::new(),
            args: Vec::new(),
            dir: None,
            proto: Proto::Uci,
            options: Vec::new(),
            limits: SearchLimits::default(),
            timemargin: Duration::ZERO,
            stall: DEFAULT_STALL,
            handshake: DEFAULT_HANDSHAKE,
            restart: false,
            sync: SyncBeforeGo::default(),
            ping: None,
            stderr: None,
            sandbox: Confinement::default(),
            family: None,
            book: None,
            bookdepth: None,
            hidden: Vec::new(),
            hidden_run: 0,
            recorded: Recorded::default(),
        };
        let shared = each.iter().map(|s| (s, true));
        for (setting, from_each) in shared.chain(settings.iter().map(|s| (s, false))) {
            let setting = setting.as_ref();
            let applied = setting
                .split_once('=')
                .ok_or_else(|| ConfigError::NotKeyValue(setting.to_string()))
                .and_then(|(key, value)| cfg.set(key, value));
            match applied {
                Err(e) if from_each => return Err(ConfigError::FromEach(Box::new(e))),
                other => other?,
            }
        }
        cfg.finish()
    }

    /// Applies one `key=value` setting.
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let v = Setting { key, value };
        // An engine reads lines: a newline in an option would send it a command of our
        // choosing (`quit`, `uci`), and names end up in PGN tags and report tables.
        if (key == "name" || key.starts_with("option."))
            && (key.chars().chain(value.chars())).any(char::is_control)
        {
            return Err(v.bad(
                "holds a control character (a newline or the like), which would reach \
                the engine or the PGN as a line of its own",
            ));
        }
        match key {
            "cmd" => self.cmd = value.to_string(),
            "name" => self.name = value.to_string(),
            "arg" => self.args.push(value.to_string()),
            "dir" => self.dir = Some(value.to_string()),
            "proto" => {
                self.proto = Proto::from_name(value)
                    .ok_or_else(|| v.bad(&format!("expected {}", Proto::choices())))?;
            }
            // cutechess and fastchess: no clock; another limit (nodes=, depth=, st=) must stop
            // the search.
            "tc" if value == "inf" => self.limits.tc = None,
            "tc" => self.limits.tc = Some(TimeControl::parse(value).map_err(|e| v.bad(&e.reason))?),
            "st" => self.limits.movetime = Some(v.seconds()?),
            "depth" => self.limits.depth = Some(v.positive_u32()?),
            "nodes" => self.limits.nodes = Some(v.positive()?),
            "timemargin" => {
                // Bounded: a margin of centuries would wait forever on a stalled engine.
                let ms: u64 = value
                    .parse()
                    .ok()
                    .filter(|&ms| ms <= MAX_TIMEMARGIN_MS)
                    .ok_or_else(|| v.bad("expected milliseconds, at most 3600000 (an hour)"))?;
                self.timemargin = Duration::from_millis(ms);
            }
            "stall" => self.stall = v.seconds()?,
            "handshake" => self.handshake = v.seconds()?,
            "ping" => self.ping = Some(v.seconds()?),
            "stderr" if !value.is_empty() => self.stderr = Some(value.into()),
            "family" if !value.is_empty() => self.family = Some(value.into()),
            "book" if !value.is_empty() => {
                crate::engine::book::shared(std::path::Path::new(value))
                    .map_err(|why| v.bad(&why))?;
                self.book = Some(value.into());
            }
            "bookdepth" => self.bookdepth = Some(v.positive_u32()?),
            "restart" if value == "auto" => self.restart = false,
            "restart" => self.restart = v.on_off()?,
            "sync" => {
                self.sync = match value {
                    "on" => SyncBeforeGo::Clocked,
                    "off" => SyncBeforeGo::Never,
                    "every" => SyncBeforeGo::Every,
                    _ => return Err(v.bad("expected on, off or every")),
                }
            }
            _ => match key.strip_prefix("option.") {
                Some(name) if !name.is_empty() => {
                    self.options.retain(|(n, _)| n != name);
                    self.options.push((name.to_string(), value.to_string()));
                }
                Some(_) => return Err(ConfigError::UnknownKey(key.to_string())),
                None => return self.set_confinement(&v),
            },
        }
        Ok(())
    }

    /// Applies one setting of the sandbox and its limits.
    fn set_confinement(&mut self, v: &Setting) -> Result<(), ConfigError> {
        let (key, value) = (v.key, v.value);
        let sandbox = &mut self.sandbox;
        match key {
            "sandbox" => {
                sandbox.mode = match value {
                    "auto" => SandboxMode::Auto,
                    "on" => SandboxMode::On,
                    "off" => SandboxMode::Off,
                    _ => return Err(v.bad("expected auto, on or off")),
                }
            }
            "memory" => {
                sandbox.memory = Some(
                    parse_size(value)
                        .ok_or_else(|| v.bad("expected a size of at least 1M, like 512M or 2G"))?,
                )
            }
            "freeze" => {
                let (unfrozen, always_frozen, always_watched) = match value {
                    "on" => (false, true, false),
                    "watch" => (false, false, true),
                    "off" => (true, false, false),
                    _ => return Err(v.bad("expected on, watch or off")),
                };
                sandbox.unfrozen = unfrozen;
                sandbox.always_frozen = always_frozen;
                sandbox.always_watched = always_watched;
            }
            "locks" => sandbox.locks = v.on_off()?,
            "readable" => sandbox.readable.push(value.to_string()),
            "writable" => sandbox.writable.push(value.to_string()),
            "processes" => sandbox.processes = Some(v.positive_u32()?),
            "threads" => {
                sandbox.threads = Some(
                    u32::try_from(v.positive()?)
                        .ok()
                        .filter(|&n| n <= 1024)
                        .ok_or_else(|| v.bad("expected CPU cores, 1 to 1024"))?,
                )
            }
            _ => match key.strip_prefix("env.") {
                Some(name) => {
                    let fine = !name.is_empty()
                        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if !fine {
                        return Err(v.bad("expected env.NAME=value, NAME of letters, digits and _"));
                    }
                    sandbox.env.retain(|(n, _)| n != name);
                    sandbox.env.push((name.to_string(), value.to_string()));
                }
                None => return Err(ConfigError::UnknownKey(key.to_string())),
            },
        }
        Ok(())
    }

    /// The checks that need every setting: a program, a name, a limit the protocol can express.
    fn finish(mut self) -> Result<EngineConfig, ConfigError> {
        if self.cmd.is_empty() {
            return Err(ConfigError::NoCommand);
        }
        // cutechess-cli runs `cmd="python3 engine.py --model m.pt"` as a command line (Qt
        // splits it): a command with spaces that names no program is split the same way.
        if self.cmd.contains(char::is_whitespace) && !self.names_a_program() {
            let mut words = command_words(&self.cmd);
            if !words.is_empty() {
                self.cmd = words.remove(0);
                words.append(&mut self.args);
                self.args = words;
            }
        }
        if self.name.is_empty() {
            self.name = std::path::Path::new(&self.cmd)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| self.cmd.clone());
        }
        let l = &self.limits;
        if l.tc.is_none() && l.movetime.is_none() && l.depth.is_none() && l.nodes.is_none() {
            return Err(ConfigError::NoLimit(self.name));
        }
        if !self.proto.takes_nodes() && l.nodes.is_some() {
            return Err(ConfigError::NodesUnsupported(self.name));
        }
        Ok(self)
    }

    /// Whether `cmd` as written is a program's path (from `dir`, or found on `PATH`).
    fn names_a_program(&self) -> bool {
        use std::path::Path;
        if self.cmd.contains('/') {
            let dir = Path::new(self.dir.as_deref().unwrap_or("."));
            return dir.join(&self.cmd).exists();
        }
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(&self.cmd).is_file()))
    }

    /// The limits as the settings that give them: `tc=2+0.02`, `st=0.5`, `depth=3 nodes=1000`.
    pub fn limits_summary(&self) -> String {
        let l = &self.limits;
        let mut parts = Vec::new();
        if let Some(tc) = l.tc {
            parts.push(format!("tc={}", tc.pgn()));
        }
        if let Some(st) = l.movetime {
            parts.push(format!("st={}", st.as_secs_f64()));
        }
        if let Some(d) = l.depth {
            parts.push(format!("depth={d}"));
        }
        if let Some(n) = l.nodes {
            parts.push(format!("nodes={n}"));
        }
        parts.join(" ")
    }

    pub fn time_control_tag(&self) -> String {
        let l = &self.limits;
        if let Some(tc) = l.tc {
            tc.pgn()
        } else if let Some(st) = l.movetime {
            format!("{}/move", st.as_secs_f64())
        } else {
            "-".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_settings_with_each_overridden() {
        let cfg = EngineConfig::parse(
            &["cmd=/bin/engine", "arg=--x", "option.Hash=64", "tc=5+0.1"],
            &["tc=1+0", "option.Threads=1", "timemargin=50"],
        )
        .unwrap();
        assert_eq!(cfg.name, "engine");
        assert_eq!(cfg.args, ["--x"]);
        assert_eq!(cfg.limits.tc.unwrap().pgn(), "5+0.1");
        assert_eq!(cfg.options.len(), 2);
        assert_eq!(cfg.timemargin, Duration::from_millis(50));
    }

    #[test]
    fn rejects_bad_settings_clearly() {
        let err = |s: &[&str]| EngineConfig::parse(s, &[]).unwrap_err().to_string();
        assert!(err(&["name=x", "tc=1"]).contains("no cmd="));
        assert!(err(&["cmd=x"]).contains("no limit"));
        assert!(err(&["cmd=x", "tc=fast"]).contains("tc=fast"));
        assert!(err(&["cmd=x", "tc=inf"]).contains("no limit"));
        assert!(err(&["cmd=x", "depth=0"]).contains("positive"));
        assert!(err(&["cmd=x", "colour=red"]).contains("unknown engine setting 'colour'"));
        assert!(err(&["cmd=x", "depth"]).contains("not key=value"));
        assert!(err(&["cmd=x", "nodes=5", "proto=leiserchess"]).contains("no node limit"));
        // cutechess-cli's command lines in cmd=, split as Qt splits them, before arg=.
        let split = EngineConfig::parse(
            &[
                "cmd=python3 'my engine.py' --threads 2",
                "arg=-v",
                "depth=1",
            ],
            &[],
        )
        .unwrap();
        assert_eq!(split.cmd, "python3");
        assert_eq!(split.args, ["my engine.py", "--threads", "2", "-v"]);
        // A program whose path holds a space is that program.
        let dir =
            std::env::temp_dir().join(format!("arbiter-cmd-{}/with space", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("engine"), "").unwrap();
        let path = format!("cmd={}/engine", dir.display());
        let kept = EngineConfig::parse(&[path.as_str(), "depth=1"], &[]).unwrap();
        assert_eq!(kept.cmd, path["cmd=".len()..]);
        assert!(kept.args.is_empty());
        let _ = std::fs::remove_dir_all(dir.parent().unwrap());
        assert!(err(&["cmd=x", "depth=1", "option.Style=a\nquit"]).contains("control character"));
        assert!(err(&["cmd=x", "depth=1", "option.A\nquit=1"]).contains("control character"));
        assert!(err(&["cmd=x", "depth=1", "name=evil\n[Result"]).contains("control character"));
    }
}
