//! The `arbiter` command line: the library's [`arbiter::cli`], run.

use std::process::ExitCode;

fn main() -> ExitCode {
    arbiter::cli::run()
}
