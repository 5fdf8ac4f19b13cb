//! Carrying out a run (`match`, `tournament`, `run`): engines as processes, a schedule of game
//! pairs, results journalled to the run's folder and reported there.

use super::exit::Exit;
use super::progress::{Plan, Reporter};
use super::runargs::RunJob;
use super::Failure;
use crate::report::write_final_positions;
use crate::tournament::contents::Compare;
use crate::tournament::folder::{self, MadeBeforeEngines, RunFolder};
use crate::tournament::openings::{load_book, Opening};
use crate::tournament::{run, RunError, RunOptions, RunSpec};
use std::path::{Path, PathBuf};

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

/// A folder reports/<kind>-<game>-<date>-<time>[-n] (UTC) not there yet, for a run given no --name or
/// --out: runs started one after another in the same second each get their own. (It is
/// created only once the run is accepted; a refused run leaves nothing.)
pub(super) fn default_dir(kind: &str, game: &str) -> PathBuf {
    let base = format!("{kind}-{game}-{}", crate::referee::now_for_names());
    let reports = Path::new("reports");
    (1..1000)
        .map(|n| match n {
            1 => reports.join(&base),
            _ => reports.join(format!("{base}-{n}")),
        })
        .find(|dir| !dir.exists())
        .unwrap_or_else(|| reports.join(base))
}

/// Where a run writes: a shard of a split run into its own folder of the run's folder.
fn out_dir(job: &RunJob) -> PathBuf {
    let spec = &job.spec;
    if let Some(dir) = &job.resume {
        return dir.clone();
    }
    let base = match (&spec.out, &spec.name) {
        (Some(out), _) => out.clone(),
        (None, Some(name)) => Path::new("reports").join(name),
        (None, None) => default_dir(spec.kind.as_str(), &spec.game),
    };
    match spec.shard {
        Some(shard) => base.join(shard.folder()),
        None => base,
    }
}

/// A task of a split run started again in its own folder (a requeued cluster task) continues
/// what it had played.
fn continue_shard(job: &mut RunJob, out_dir: &Path) -> Result<(), Failure> {
    if job.resume.is_some() {
        return Ok(());
    }
    if folder::continues_task(&job.spec, out_dir).map_err(|e| Failure::bad_input(e.to_string()))? {
        // Said even with --quiet: a task's log should show that it was requeued.
        eprintln!("continuing the shard already in {}", out_dir.display());
        job.resume = Some(out_dir.to_path_buf());
    }
    Ok(())
}

fn warn_if_huge(total: u64, engines: usize) {
    if total > LARGE_SCHEDULE || engines > MANY_ENGINES {
        eprintln!(
            "warning: {total} games scheduled for {engines} engines; at 10 games a second that is \
             {:.1} days. Joint ratings are left out past {} engines and square tables past {}.",
            total as f64 / 10.0 / 86_400.0,
            crate::stats::ratings::MAX_PLAYERS,
            crate::report::MATRIX_ENGINES
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

/// A new run that would play from the default book (openings/<game>.txt in the folder it is
/// started in) names it in its settings, by absolute path, so that run.json holds everything
/// that decides its games: `merge` and `--resume` from any folder read the same book.
fn record_default_book(spec: &mut RunSpec) -> Result<(), Failure> {
    if spec.openings.is_some() {
        return Ok(());
    }
    let entry = super::rulescmd::game_entry(&spec.game)?;
    let default = PathBuf::from(format!("openings/{}.txt", entry.id));
    if default.is_file() {
        let absolute = default
            .canonicalize()
            .map_err(|e| Failure::bad_input(format!("{}: {e}", default.display())))?;
        spec.openings = Some(absolute);
    }
    Ok(())
}

/// The book a run plays from: `openings`, else openings/<game>.txt if it exists.
pub(super) fn openings(
    spec: &RunSpec,
    entry: &'static crate::game::GameEntry,
) -> Result<(Option<PathBuf>, Vec<Opening>), Failure> {
    let book = spec.openings.clone().or_else(|| {
        let default = PathBuf::from(format!("openings/{}.txt", entry.id));
        default.is_file().then_some(default)
    });
    let openings = match &book {
        Some(path) => load_book(path, entry, spec.book_plies)
            .map_err(|e| Failure::bad_input(e.to_string()))?,
        None => Vec::new(),
    };
    Ok((book, openings))
}

/// Refuses an output file that is one of the run's own (`--pgnout R/games.pgn --out R` copied
/// the PGN onto itself and left it empty; `--pgnout R/journal.jsonl` replaced the journal).
fn refuse_outputs_onto_the_run(spec: &RunSpec, out_dir: &Path) -> Result<(), Failure> {
    // The folder as an absolute path: the file system's answer when it exists (links
    // resolved), else the path's own words with `.` and `..` resolved.
    let absolute = |p: &Path| -> Option<PathBuf> {
        if let Ok(real) = std::fs::canonicalize(p) {
            return Some(real);
        }
        let mut out = std::env::current_dir().ok()?;
        for part in p.components() {
            match part {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        Some(out)
    };
    let folder = |p: &Path| {
        let parent = p.parent().filter(|p| !p.as_os_str().is_empty());
        absolute(parent.unwrap_or(Path::new(".")))
    };
    let run_folder = absolute(out_dir);
    for (flag, path) in [
        ("--pgnout", &spec.pgnout),
        ("--epdout", &spec.epdout),
        ("--log", &spec.log),
    ] {
        let Some(path) = path else { continue };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let inside = run_folder.is_some() && folder(path) == run_folder;
        if inside
            && name
                .as_deref()
                .is_some_and(crate::report::files::is_run_file)
        {
            return Err(Failure::bad_input(format!(
                "{flag} {}: that is a file of the run itself (in {}); write it elsewhere",
                path.display(),
                out_dir.display()
            )));
        }
    }
    Ok(())
}

/// `--pgnout` and `--epdout`: the run's games and final positions, copied out of its folder.
pub fn write_copies(
    run_dir: &Path,
    pgnout: Option<&Path>,
    epdout: Option<&Path>,
) -> Result<(), Failure> {
    let cannot_write = |path: &Path, e: std::io::Error| Failure {
        code: Exit::Runtime,
        message: format!("cannot write {}: {e}", path.display()),
    };
    if let Some(path) = pgnout {
        std::fs::copy(run_dir.join(crate::report::files::GAMES_PGN), path)
            .map_err(|e| cannot_write(path, e))?;
    }
    if let Some(path) = epdout {
        write_final_positions(run_dir, path).map_err(|e| cannot_write(path, e))?;
    }
    Ok(())
}

/// What a run checks before it plays: its settings, its book, its output files and its
/// engines' start-up; nothing is written.
pub fn check_before_play(job: &RunJob) -> Result<(), Failure> {
    let spec = &job.spec;
    spec.check().map_err(|e| job.origin.explain(e))?;
    refuse_outputs_onto_the_run(spec, &out_dir(job))?;
    let entry = super::rulescmd::game_entry(&spec.game)?;
    openings(spec, entry)?;
    let _made = made_before_engines(job)?;
    start_engines_once(job, entry)?.quit();
    Ok(())
}

/// The run's folder and log, made before its engines start so that their sandboxes hide them
/// (a task's folder makes its split run's, which is what they hide).
fn made_before_engines(job: &RunJob) -> Result<MadeBeforeEngines, Failure> {
    MadeBeforeEngines::make(&out_dir(job), job.spec.log.as_deref()).map_err(Failure::bad_input)
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::bad_input(format!("cannot start the runtime: {e}")))
}

/// Every engine started and its handshake completed once, before anything is written; the
/// processes are kept on a runtime of their own to play the first games.
fn start_engines_once(
    job: &RunJob,
    entry: &crate::game::GameEntry,
) -> Result<crate::tournament::Checked, Failure> {
    let hidden = crate::engine::sandbox::run_files(
        &out_dir(job),
        job.spec.shard.is_some(),
        job.spec.log.as_deref(),
    );
    let runtime = runtime()?;
    let engines = runtime
        .block_on(crate::tournament::preflight(
            &job.spec.engines,
            entry.id,
            &hidden,
        ))
        .map_err(Failure::bad_input)?;
    Ok(crate::tournament::Checked::new(engines, runtime))
}

/// Checks a run, starts its engines once, then plays it; returns the process exit code.
/// A refused run leaves no trace.
pub fn execute(mut job: RunJob) -> Result<Exit, Failure> {
    job.spec
        .check_all_but_programs()
        .map_err(|e| job.origin.explain(e))?;
    let out_dir = out_dir(&job);
    // A finished run resumed writes its reports again: its engines may be gone by now.
    let finished = job.resume.is_some()
        && crate::tournament::run::nothing_left(&job.spec, &out_dir)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
    if !finished {
        crate::tournament::spec::check_programs(&job.spec.engines)
            .map_err(|e| job.origin.explain(e))?;
    }
    refuse_outputs_onto_the_run(&job.spec, &out_dir)?;
    if job.resume.is_none() {
        record_default_book(&mut job.spec)?;
        job.spec.contents =
            Some(crate::tournament::contents::of(&job.spec).map_err(Failure::bad_input)?);
    } else {
        let compare = match finished {
            true => Compare::BookOnly,
            false => Compare::BookAndPrograms,
        };
        crate::tournament::contents::check(&job.spec, job.spec.contents.as_ref(), compare)
            .map_err(Failure::bad_input)?;
    }
    continue_shard(&mut job, &out_dir)?;
    let spec = &job.spec;
    let kind = spec.kind.as_str();
    let entry = super::rulescmd::game_entry(&spec.game)?;
    let (book, openings) = openings(spec, entry)?;
    // A task of a split run plays what it claims, up to the whole schedule.
    let total = spec.schedule_size();
    let shown_kind = match spec.shard {
        Some(s) => format!("{kind}, shard {s}"),
        None => kind.to_string(),
    };
    if !job.quiet {
        warn_if_huge(total, spec.engines.len());
        super::overload::before(spec);
    }
    let runtime = runtime()?;
    crate::engine::sandbox::games_at_once(spec.concurrency.min(total.max(1) as usize));
    crate::tournament::spec::make_output_folders(spec).map_err(Failure::bad_input)?;
    let made = made_before_engines(&job)?;
    let checked = if finished {
        None
    } else {
        let checked = start_engines_once(&job, entry)?;
        if !job.quiet {
            say!("{}", crate::engine::sandbox::describe(&spec.engines));
        }
        Some(checked)
    };
    let opened = RunFolder::open(spec, &out_dir, job.resume.is_some())
        .map_err(|e| run_failure(e, kind, &out_dir))?;
    made.keep();
    for note in &opened.notes {
        eprintln!("{note}");
    }
    let already = opened.games_before;
    let reporter = Reporter::start(
        &Plan {
            kind: &shown_kind,
            game: entry.id,
            format: if spec.engines.len() == 2 {
                "match"
            } else {
                spec.format.as_str()
            },
            engines: &spec.engines,
            games: total,
            already: already.min(total),
            // As the run will cap it: no more workers than games.
            concurrency: spec.concurrency.min(total.max(1) as usize),
            openings: book.as_deref().map(|b| (b, openings.len())),
            random_order: spec.random_openings,
            book_start: spec.book_start,
            colours: spec.colours,
            out_dir: &out_dir,
        },
        job.quiet,
    );
    let mut opts = RunOptions::of(spec.clone(), entry, openings, opened);
    opts.checked = checked;
    let outcome = runtime.block_on(run(opts, |p| reporter.game(&p)));
    reporter.finish();
    let outcome = outcome.map_err(|e| run_failure(e, kind, &out_dir))?;
    if spec.shard.is_some() {
        // A shard holds part of the games: every shard writing the one --pgnout would leave
        // whichever finished last. `arbiter merge` writes them, whole.
        if spec.pgnout.is_some() || spec.epdout.is_some() {
            say!("--pgnout/--epdout are written by `arbiter merge`, with every shard's games.");
        }
    } else {
        write_copies(&out_dir, spec.pgnout.as_deref(), spec.epdout.as_deref())?;
    }
    let names: Vec<String> = spec.engines.iter().map(|e| e.name.clone()).collect();
    super::summary::print(&outcome, &names, &spec.rating_options(), spec.sprt);
    super::overload::after(spec, &outcome);
    say!(
        "Report: {}",
        out_dir.join(crate::report::files::REPORT_HTML).display()
    );
    if outcome.interrupted {
        say!(
            "Interrupted after {} games; {} still to play. Continue with: {} {kind} --resume {}",
            outcome.totals.games,
            outcome.unplayed,
            self_command(),
            out_dir.display()
        );
        return Ok(Exit::Interrupted);
    }
    if let Some((game, said)) = &outcome.fault {
        say!(
            "--strict: game {game} ended by an engine's fault ({said}); {} still to play. \
             Continue with: {} {kind} --resume {}",
            outcome.unplayed,
            self_command(),
            out_dir.display()
        );
        return Ok(Exit::Strict);
    }
    Ok(super::summary::exit_code(
        spec.sprt.as_ref(),
        outcome.decision,
    ))
}
