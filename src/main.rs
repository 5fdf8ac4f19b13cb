//! The `arbiter` command line: [`arbiter_cli::run`].

use std::process::ExitCode;

/// Games read by worker threads are freed by the thread that rates them; glibc's allocator
/// takes a lock for each such free, mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    arbiter_cli::abort_on_panic();
    arbiter_cli::run()
}
