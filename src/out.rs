//! What arbiter prints for people: to a stdout that a closed pipe cannot stop.

/// `println!` that a closed stdout cannot stop (`arbiter match ... | head -3`): what the reader
/// no longer wants is dropped, and the run goes on to write every file.
macro_rules! say {
    () => {
        crate::out::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        crate::out::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!`, likewise.
macro_rules! say_inline {
    ($($arg:tt)*) => {
        crate::out::write_out(format_args!($($arg)*))
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
