//! The `arbiter` command line: a thin layer over the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
