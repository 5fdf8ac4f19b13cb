//! What arbiter prints for people: to a stdout that a closed pipe cannot stop.

/// `println!` that a closed stdout cannot stop (`arbiter match ... | head -3`): what the reader
/// no longer wants is dropped, and the run goes on to write every file.
#[macro_export]
macro_rules! say {
    () => {
        $crate::out::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// A line for people about what a run is doing while it plays (`not frozen: ...`,
/// `unpinned: ...`): to stderr, around the progress bar if one is drawn.
#[macro_export]
macro_rules! notice {
    ($($arg:tt)*) => {
        $crate::out::write_notice(format_args!($($arg)*))
    };
}

/// `print!`, likewise.
#[macro_export]
macro_rules! say_inline {
    ($($arg:tt)*) => {
        $crate::out::write_out(format_args!($($arg)*))
    };
}

/// Writes to stdout, ignoring a reader that went away (EPIPE) or any other write error: stdout
/// is for people, and the run's results are in its files.
pub fn write_out(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args);
    let _ = out.flush();
}

/// How a notice reaches the terminal while a progress bar is drawn there: the bar clears
/// itself, the line is written, the bar is drawn again below it. A line written past the bar
/// would leave the bar's text behind it on the screen.
pub type NoticeHook = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

static NOTICE_HOOK: std::sync::RwLock<Option<NoticeHook>> = std::sync::RwLock::new(None);

/// Sets (or, with `None`, removes) the way notices are written.
pub fn set_notice_hook(hook: Option<NoticeHook>) {
    *NOTICE_HOOK.write().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// Writes a notice line to stderr, through the hook if one is set.
pub fn write_notice(args: std::fmt::Arguments) {
    let hook = NOTICE_HOOK
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    match hook {
        Some(hook) => hook(&args.to_string()),
        None => eprintln!("{args}"),
    }
}

/// What a run prints when its command line was read as cutechess-cli's or fastchess's: their
/// lines (`compat::tool_lines` writes them), and their words where a file differs.
/// Whose lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Cutechess,
    Fastchess,
}

/// Which tool's lines a run prints, and how often.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolLines {
    pub style: Style,
    /// Ratings every this many games (pairs with `penta`); 0: only at the end.
    pub rating_interval: u64,
    /// The score line every this many games.
    pub score_interval: u64,
    /// Statistics over game pairs (fastchess's `-report penta=true`).
    pub penta: bool,
    /// fastchess's `-crc32 pgn=true`: `File <pgn> has CRC32: 0x...` once the PGN is written.
    pub crc32: bool,
}

impl ToolLines {
    /// The tool's defaults: cutechess-cli rates at the end only, fastchess every 10 pairs.
    pub fn defaults(style: Style) -> ToolLines {
        match style {
            Style::Cutechess => ToolLines {
                style,
                rating_interval: 0,
                score_interval: 1,
                penta: false,
                crc32: false,
            },
            Style::Fastchess => ToolLines {
                style,
                rating_interval: 10,
                score_interval: 1,
                penta: true,
                crc32: false,
            },
        }
    }
}

/// Set when the command line was read as a tool's: the run prints its lines.
pub static TOOL_LINES: std::sync::OnceLock<ToolLines> = std::sync::OnceLock::new();

/// Under a tool's line, the line both tools print as a game starts (`Started game 3 of 8 (A
/// vs B)`), which their users' scripts count; written whole by the worker that starts it.
pub fn say_started(game: u64, of: u64, white: &str, black: &str) {
    use std::io::Write;
    if TOOL_LINES.get().is_some() {
        let line = format!("Started game {game} of {of} ({white} vs {black})\n");
        // A closed stdout is no reason to stop a game.
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }
}
