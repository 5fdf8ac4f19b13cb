//! The `arbiter` command line: the library's [`arbiter::cli`], run.

use std::process::ExitCode;

/// Games read by worker threads are freed by the thread that rates them; glibc's allocator
/// takes a lock for each such free, mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    arbiter::cli::run()
}
