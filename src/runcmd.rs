//! Carrying out a run (`match`, `tournament`, `run`): engines as processes, a schedule of game
//! pairs, results journalled to the run's folder and reported there.

use super::exit::Exit;
use super::progress::{Plan, Reporter};
use super::runargs::RunJob;
use super::Failure;
use arbiter::run::{OpenRun, Run};
use arbiter::tournament::{RunError, RunOutcome, RunSpec};
use std::path::Path;

/// Schedules past these sizes get a warning before they start: they take days, and reports of
/// thousands of engines leave out their square tables.
const LARGE_SCHEDULE: u64 = 1_000_000;
const MANY_ENGINES: usize = 500;

/// How the user can call arbiter again: `arbiter` when that is what is on PATH, else the path
/// this process was started by.
pub fn self_command() -> String {
    let invoked = std::env::args().next().unwrap_or_else(|| "arbiter".into());
    if invoked.contains('/') {
        invoked
    } else {
        "arbiter".into()
    }
}

fn warn_if_huge(total: u64, engines: usize) {
    if total > LARGE_SCHEDULE || engines > MANY_ENGINES {
        eprintln!(
            "warning: {total} games scheduled for {engines} engines; at 10 games a second that is \
             {:.1} days. Joint ratings are left out past {} engines and square tables past {}.",
            total as f64 / 10.0 / 86_400.0,
            arbiter::stats::ratings::MAX_PLAYERS,
            arbiter::report::MATRIX_ENGINES
        );
    }
}

/// How a run that stopped early is reported: each cause with its exit code and what to do.
pub(super) fn run_failure(e: RunError, kind: &str, out_dir: &Path) -> Failure {
    let resume = format!("{} {kind} --resume {}", self_command(), out_dir.display());
    match e {
        RunError::EngineStart(message) => Failure {
            code: Exit::EngineStart,
            message: format!("{message}. Fix the engine, then continue with: {resume}"),
        },
        e @ RunError::Output { .. } => Failure {
            code: Exit::Runtime,
            message: format!(
                "{e}. The games finished before it are kept: free the space (or fix the \
                 folder), then continue with: {resume}"
            ),
        },
        e => Failure::bad_input(e.to_string()),
    }
}

/// A run's failure as `run_failure` says it, with a refused setting named as the user wrote it
/// (`--flag` or `file:line`).
fn job_failure(e: RunError, job: &RunJob, dir: Option<&Path>) -> Failure {
    match e {
        RunError::Spec(e) => job.origin.explain(e),
        e => run_failure(e, job.spec.kind.as_str(), dir.unwrap_or(Path::new("."))),
    }
}

/// What a run checks before it plays: its settings, its book, its output files and its
/// engines' start-up; nothing is written.
pub fn check_before_play(job: &RunJob) -> Result<(), Failure> {
    let run = Run::prepare(job.spec.clone(), job.resume.as_deref())
        .map_err(|e| job_failure(e, job, None))?;
    run.try_engines()
        .map_err(|e| job_failure(e, job, Some(&run.dir)))
}

/// Checks a run, starts its engines once, then plays it; returns the process exit code.
/// A refused run leaves no trace.
pub fn execute(job: RunJob) -> Result<Exit, Failure> {
    let run = Run::prepare(job.spec.clone(), job.resume.as_deref())
        .map_err(|e| job_failure(e, &job, None))?;
    let dir = run.dir.clone();
    let failure = |e| job_failure(e, &job, Some(&dir));
    for note in &run.notes {
        // Said even with --quiet: a task's log should show that it was requeued.
        eprintln!("{note}");
    }
    let total = run.spec.schedule_size();
    if !job.quiet {
        warn_if_huge(total, run.spec.engines.len());
        super::overload::before(&run.spec);
    }
    let opened = run.open().map_err(failure)?;
    if opened.started_engines() && !job.quiet {
        say_confinement(&opened);
    }
    for note in opened.notes() {
        eprintln!("{note}");
    }
    let kind = match opened.run.spec.shard {
        Some(s) => format!("{}, shard {s}", opened.run.spec.kind.as_str()),
        None => opened.run.spec.kind.as_str().to_string(),
    };
    let reporter = Reporter::start(&plan(&opened, &kind), job.quiet);
    let spec = opened.run.spec.clone();
    let out_dir = opened.run.dir.clone();
    let outcome = opened.play(|p| reporter.game(&p));
    reporter.finish();
    let outcome = outcome.map_err(failure)?;
    if spec.shard.is_some() && (spec.pgnout.is_some() || spec.epdout.is_some()) {
        // A shard holds part of the games: every shard writing the one --pgnout would leave
        // whichever finished last. `arbiter merge` writes them, whole.
        say!("--pgnout/--epdout are written by `arbiter merge`, with every shard's games.");
    }
    // A tool's command line ends with the tool's own lines, which its scripts read.
    if let Some(lines) = arbiter::compat::tool_lines::TOOL_LINES.get() {
        if let (true, Some(pgn)) = (lines.crc32, &spec.pgnout) {
            match arbiter::compat::tool_lines::crc32_line(pgn) {
                Ok(line) => say_inline!("{line}"),
                Err(e) => eprintln!("warning: cannot read {} for its CRC32: {e}", pgn.display()),
            }
        }
        super::summary::turnaround(&outcome);
        reporter.end(outcome.llr.last().copied());
    } else {
        let names: Vec<String> = spec.engines.iter().map(|e| e.name.clone()).collect();
        super::summary::print(&outcome, &names, &spec.rating_options(), spec.sprt);
    }
    super::overload::after(&spec, &outcome);
    say!(
        "Report: {}",
        out_dir.join(arbiter::report::files::REPORT_HTML).display()
    );
    Ok(exit_of(&spec, &outcome, &out_dir))
}

/// How the run's engines are confined and pinned, said once they have started.
fn say_confinement(opened: &OpenRun) {
    say!(
        "{}",
        arbiter::engine::sandbox::describe(&opened.run.spec.engines)
    );
    if let Some(cpus) = opened.auto_pinned() {
        say!("{}", describe_auto_pinning(cpus));
    } else if let Some(why) = opened.auto_unpinned_why() {
        say!("not pinned: {why}");
    }
}

/// The exit code of a run played, and how to go on with one that stopped early.
fn exit_of(spec: &RunSpec, outcome: &RunOutcome, out_dir: &Path) -> Exit {
    let kind = spec.kind.as_str();
    if outcome.interrupted {
        say!(
            "Interrupted after {} games; {} still to play. Continue with: {} {kind} --resume {}",
            outcome.totals.games,
            outcome.unplayed,
            self_command(),
            out_dir.display()
        );
        return Exit::Interrupted;
    }
    if let Some((game, said)) = &outcome.fault {
        say!(
            "--strict: game {game} ended by an engine's fault ({said}); {} still to play. \
             Continue with: {} {kind} --resume {}",
            outcome.unplayed,
            self_command(),
            out_dir.display()
        );
        return Exit::Strict;
    }
    super::summary::exit_code(spec.sprt.as_ref(), outcome.decision)
}

/// What the banner shows of a run about to play.
fn plan<'a>(opened: &'a OpenRun, kind: &'a str) -> Plan<'a> {
    let run = &opened.run;
    let spec = &run.spec;
    let total = spec.schedule_size();
    Plan {
        kind,
        game: run.entry.id,
        format: if spec.engines.len() == 2 {
            "match"
        } else {
            spec.format.as_str()
        },
        engines: &spec.engines,
        games: total,
        already: opened.games_before().min(total),
        // As the run will cap it: no more workers than games.
        concurrency: spec.concurrency.min(total.max(1) as usize),
        openings: run.book.as_deref().map(|b| (b, run.openings.len())),
        random_order: spec.random_openings,
        book_start: spec.book_start,
        games_per_opening: spec.games_per_opening,
        colours: spec.colours,
        out_dir: &run.dir,
        sprt: spec.sprt,
        rules: &spec.rules,
        offered: Box::new(|engine, name| opened.offered_default(engine, name)),
    }
}

/// The line that says `--affinity auto` pinned the games, and how not to.
fn describe_auto_pinning(cpus: &[usize]) -> String {
    let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
    let (games, cpu) = match cpus.len() {
        1 => ("the game", "CPU"),
        _ => ("each game", "CPUs"),
    };
    format!(
        "pinned: {games} and its engines on a CPU no other run holds ({cpu} {}); \
         --affinity off leaves them to the scheduler",
        list.join(", ")
    )
}
