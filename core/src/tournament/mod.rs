//! Matches between engines: schedules, opening books, concurrent play, results.

mod affinity;
mod contention;
pub use affinity::{
    allowed_cpus, bring_tree_here, claim_free_cpus, hold_listed, pin_current_thread, Affinity,
    AutoWord, ClaimedCpus,
};
pub mod bookgen;
pub mod claims;
pub mod contents;
pub mod folder;
mod hash_cache;
pub mod import;
pub mod journal;
pub mod launch;
pub(crate) mod ledger;
pub mod live;
pub mod merge;
pub mod openings;
pub mod overload;
mod pooled_sprt;
pub mod rules_check;
pub mod run;
pub mod runner;
pub mod schedule;
pub mod shelf;
pub mod shuffle;
pub mod spec;
mod split;
pub mod totals;
pub mod verify;

use crate::engine::{EngineConfig, EngineError, EngineProcess};
use std::path::PathBuf;
use thiserror::Error;

pub use folder::RunFolder;

pub use run::{run, Progress, RunOptions, RunOutcome};
pub use schedule::{Colours, Format};
pub use spec::{RunKind, RunSpec, SpecError};

#[derive(Debug, Error)]
pub enum RunError {
    #[error("cannot write {path}: {reason}")]
    Output { path: String, reason: String },
    #[error("{0}")]
    Setup(String),
    /// A setting that cannot be played, for the caller to name as the user wrote it.
    #[error("{0}")]
    Spec(SpecError),
    /// An engine could not start, again and again, during the run: no result is reported from
    /// a set-up that does not work. The games finished before it are kept.
    #[error("{0}")]
    EngineStart(String),
}

/// A command given to the engine that is a plain file path must exist; a bare name is looked up
/// on PATH when the engine starts.
pub fn check_engine_command(cfg: &EngineConfig) -> Result<(), String> {
    if cfg.cmd.contains('/') {
        let path = contents::program_of(cfg).unwrap_or_default();
        if !path.is_file() {
            return Err(format!(
                "engine '{}': no such program {}",
                cfg.name,
                path.display()
            ));
        }
    }
    Ok(())
}

/// Which engines the start-up check starts.
#[derive(Clone, Copy)]
pub enum Started<'a> {
    /// One of each way of starting (engines that differ only in name start once).
    Once,
    /// Each engine, to be kept for a run of workers and beyond (`shelf`), but those `running`
    /// already: the indices of engines an earlier run left.
    EachToKeep { running: &'a [usize] },
}

/// Starts every engine once and completes its handshake for `game` (protocol, options, variant):
/// a set-up that cannot play is refused before any game is played or any file is written, with
/// the engine's name and the operating system's or the engine's own error.
///
/// Each engine is started as in the run, in its sandbox with `run` (the run's folder and files)
/// and the other engines' folders out of its sight. The processes are kept, with the index of
/// their engine, to play the run's first games (`Checked`): no engine is started twice.
pub async fn preflight(
    engines: &[EngineConfig],
    game: &str,
    run: &[PathBuf],
    which: Started<'_>,
) -> Result<Vec<(usize, EngineProcess)>, StartFailed> {
    let engines = &crate::engine::sandbox::hide_from_each_other(engines, run);
    let unnamed = |c: &EngineConfig| EngineConfig {
        name: String::new(),
        hidden: Vec::new(),
        ..c.clone()
    };
    let before = (children_cpu(), crate::engine::keeper::spent());
    let mut started = Vec::new();
    for (i, cfg) in engines.iter().enumerate() {
        // Engines that differ only in name start the same way: one check covers them all,
        // unless each is kept to play. One kept running from an earlier run was checked then.
        let covered = match which {
            Started::Once => engines[..i].iter().any(|e| unnamed(e) == unnamed(cfg)),
            Started::EachToKeep { running } => running.contains(&i),
        };
        if covered {
            continue;
        }
        match EngineProcess::start(cfg, game, None).await {
            Ok(engine) => started.push((i, engine)),
            Err(e) => {
                return Err(StartFailed {
                    message: explain_start_failure(&e, cfg, game),
                    engine: cfg.name.clone(),
                    stderr: match e {
                        EngineError::Exited { stderr, .. } => stderr,
                        _ => Vec::new(),
                    },
                })
            }
        }
    }
    // The sandbox's version, for the banner and the report: asked here, so that it counts.
    if engines
        .iter()
        .any(|e| crate::engine::sandbox::decide(e.sandbox.mode).unwrap_or(false))
    {
        crate::engine::sandbox::version();
    }
    // What ended here (the sandbox's version, its probe if a start failed, a failed start's
    // engine); the keepers' share is counted with the other keepers'.
    let engines_cpu = children_cpu()
        .saturating_sub(before.0)
        .saturating_sub(crate::engine::keeper::spent().saturating_sub(before.1));
    PREFLIGHT_US.fetch_add(
        engines_cpu.as_micros() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    Ok(started)
}

/// An engine that could not start or complete its handshake: why, in a sentence for the user,
/// and what it last wrote to stderr (for `--log`).
#[derive(Debug)]
pub struct StartFailed {
    pub message: String,
    pub engine: String,
    pub stderr: Vec<String>,
}

impl StartFailed {
    /// Adds what the engine said on stderr to the I/O log at `path`, as the run would have.
    pub fn log_into(&self, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let mut log = crate::output::open_own(path, true)?;
        for line in &self.stderr {
            writeln!(log, "{:12.6} {} ! {line}", 0.0, self.engine)?;
        }
        let engine = &self.engine;
        writeln!(
            log,
            "{:12.6} {engine} ! (its start failed: the run was not played)",
            0.0
        )
    }
}

/// The engines the start-up check left running, on the runtime that reads their pipes: a
/// current-thread runtime, which the run gives to its first worker to play them.
pub struct Checked {
    engines: Vec<(usize, EngineProcess)>,
    /// Engines of other configurations on the same runtime, kept from an earlier run for a
    /// later one (`shelf`).
    spare: Vec<EngineProcess>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Checked {
    pub fn new(engines: Vec<(usize, EngineProcess)>, runtime: tokio::runtime::Runtime) -> Checked {
        Checked {
            engines,
            spare: Vec::new(),
            runtime: Some(runtime),
        }
    }

    /// With engines of other configurations on the same runtime, to keep.
    pub fn with_spare(mut self, spare: Vec<EngineProcess>) -> Checked {
        self.spare = spare;
        self
    }

    /// The runtime and the engines, the checked ones first, to play.
    pub fn take(mut self) -> (tokio::runtime::Runtime, Vec<EngineProcess>) {
        let runtime = self.runtime.take().expect("taken once");
        let engines = std::mem::take(&mut self.engines)
            .into_iter()
            .map(|(_, e)| e);
        (
            runtime,
            engines.chain(std::mem::take(&mut self.spare)).collect(),
        )
    }

    /// Whether each engine of `configs` searches with one CPU, by its settings and, where they
    /// set no `Threads`, by the default the started engine offered.
    pub fn each_searches_with_one_cpu(&self, configs: &[EngineConfig]) -> bool {
        configs.iter().enumerate().all(|(i, config)| {
            crate::engine::sandbox::cpus_searched(config, self.offered_default(i, "Threads")) == 1
        })
    }

    /// The default the started engine `engine` (its index in the run) gave its option `name`.
    pub fn offered_default(&self, engine: usize, name: &str) -> Option<&str> {
        self.engines
            .iter()
            .filter(|(at, _)| *at == engine)
            .flat_map(|(_, started)| started.offered())
            .find(|o| o.name.eq_ignore_ascii_case(name))
            .and_then(|o| o.default.as_deref())
    }

    /// Ends the engines politely, on their own runtime (not from inside another).
    pub fn quit(self) {
        let (runtime, engines) = self.take();
        runtime.block_on(async {
            for engine in engines {
                engine.quit().await;
            }
        });
    }
}

impl Drop for Checked {
    /// A run that fails before it plays drops the engines (their keepers end them) from inside
    /// its own runtime, where a runtime may not wait for its threads: this one is let go
    /// without waiting.
    fn drop(&mut self) {
        self.engines.clear();
        self.spare.clear();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// CPU time of the processes `preflight` started and ended, in microseconds.
static PREFLIGHT_US: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The CPU time of what the start-up check ran and ended itself (the sandbox's probe after a
/// sandboxed start failed, the engines of a check that failed): the harness's cost, though the
/// kernel counts it with the engines'. The engines it keeps are counted as the engines they are.
pub fn preflight_cpu() -> std::time::Duration {
    std::time::Duration::from_micros(PREFLIGHT_US.load(std::sync::atomic::Ordering::Relaxed))
}

/// User and system time of this process's children that have been waited for.
fn children_cpu() -> std::time::Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// What a program prints when a file it looks for is not there (or not to be opened).
const MISSING_FILE: &[&str] = &[
    "not found",
    "No such file",
    "Permission denied",
    "cannot open",
    "can't open",
    "error while loading shared libraries",
];

/// Why an engine that exited during its handshake did: what it said on stderr, and where its
/// sandbox may be the cause, which file to name with `readable=`.
fn explain_exit(stderr: &[String], cfg: &EngineConfig, game: &str) -> String {
    let mut text = String::from(" during the handshake, before answering");
    if stderr.is_empty() {
        text.push_str(&format!(
            "; is {} an engine that speaks {} for {game}?",
            cfg.cmd,
            cfg.proto.as_str()
        ));
    } else {
        text.push_str(". Its last words on stderr:");
        for line in stderr {
            text.push_str(&format!("\n    {line}"));
        }
    }
    let sandboxed = crate::engine::sandbox::decide(cfg.sandbox.mode).unwrap_or(false);
    let missing = stderr
        .iter()
        .any(|l| MISSING_FILE.iter().any(|m| l.contains(m)));
    if sandboxed && missing {
        text.push_str(
            "\n  It ran in arbiter's sandbox, which shows an engine only the system's programs, \
             its program's folder, its working folder and the files its settings name;\
             \n  a program its wrapper script runs from elsewhere, a book or a network file is \
             hidden. Name it in the engine's settings with readable=PATH\
             \n  (or try sandbox=off to see whether the sandbox is the cause).",
        );
    }
    text
}

fn explain_start_failure(e: &EngineError, cfg: &EngineConfig, game: &str) -> String {
    let hint = match e {
        EngineError::Exited { stderr, .. } => explain_exit(stderr, cfg, game),
        EngineError::Timeout { .. } => {
            " (raise handshake=<seconds> if it is only slow to load)".to_string()
        }
        _ => String::new(),
    };
    format!("engine start-up check failed: {e}{hint}")
}

/// An exclusive lock on a run's folder, held while a run plays in it.
pub struct RunLock {
    _folder: std::fs::File,
}

/// Locks the run folder `dir` (creating it), so that two arbiters never play the same run: the
/// second is refused at once. The lock is the kernel's (`flock`), so it ends with the process,
/// even after `kill -9`.
pub fn lock_run_dir(dir: &std::path::Path) -> Result<RunLock, String> {
    use std::os::fd::AsRawFd;
    if let Some(why) = crate::output::foreign_folder(dir) {
        return Err(why);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let folder =
        std::fs::File::open(dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    if unsafe { libc::flock(folder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.kind() == std::io::ErrorKind::WouldBlock {
            format!(
                "another arbiter is playing the run in {}: wait for it to end (or stop it) first",
                dir.display()
            )
        } else {
            format!("cannot lock {}: {e}", dir.display())
        });
    }
    Ok(RunLock { _folder: folder })
}
