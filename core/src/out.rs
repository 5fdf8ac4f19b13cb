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
