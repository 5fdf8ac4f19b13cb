//! `arbiter tune`: the flags become a `TuneSpec`; the engine is asked which options it offers
//! (each tuned one must be there, its range inside the engine's); then the tune plays into its
//! folder, and optionally an SPRT checks the tuned values against the start values.

use super::exit::Exit;
use super::runargs::{key_values, Origin, RunArgs, RunJob};
use super::runcmd::{self, self_command};
use super::Failure;
use crate::engine::options::OptionKind;
use crate::engine::EngineProcess;
use crate::stats::Sprt;
use crate::tournament::{lock_run_dir, RunKind, SpecError};
use crate::tune::report::{self, REPORT_FILE, THETA_CSV, TUNED_FILE};
use crate::tune::spec::{DEFAULT_WINDOW, PAIRS, TUNE_FILE};
use crate::tune::spsa::Param;
use crate::tune::{tune, TuneOptions, TuneSpec, PAIRS_FILE};
use clap::ArgAction;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub struct TuneArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// A parameter to tune, as fishtest writes it: NAME=START,MIN,MAX,C_END,R_END. NAME is an
    /// engine option (UCI setoption, CECP option) the engine offers, with MIN..MAX inside its
    /// range; a spin option gets whole numbers, a string option decimals. C_END is the probe's
    /// half-width at the end (the two sides play at theta ± c; pick it so that 2·C_END costs a
    /// few Elo); R_END the learning rate at the end (each pair moves theta by up to
    /// 2·R_END·C_END at the end, more at the start; fishtest's usual 0.002 needs tens of
    /// thousands of pairs). Repeat for each parameter.
    #[arg(long = "param", value_name = "NAME=START,MIN,MAX,C_END,R_END", action = ArgAction::Append)]
    pub params: Vec<String>,
    /// Game pairs to play: each moves theta once. c and a decay so that they reach C_END and
    /// a_end = R_END·C_END² at the last pair.
    #[arg(long, default_value_t = PAIRS)]
    pub pairs: u64,
    /// Decay of the step size a_k = a / (A + k)^alpha.
    #[arg(long, default_value_t = 0.602)]
    pub alpha: f64,
    /// Decay of the probe width c_k = c / k^gamma.
    #[arg(long, default_value_t = 0.101)]
    pub gamma: f64,
    /// The stability offset A as a share of the pairs (0.1: A is 10% of --pairs).
    #[arg(long, default_value_t = 0.1)]
    pub a_ratio: f64,
    /// Pairs played from one theta before their results move it: pair k plays from theta
    /// after the results of pairs 1..k-WINDOW, so up to WINDOW pairs are in play at once (keep
    /// it at least the concurrency of all machines together, or workers wait). The tune is
    /// then the same, pair for pair, whoever plays it.
    #[arg(long, default_value_t = DEFAULT_WINDOW)]
    pub window: u64,
    /// After tuning, an SPRT of the tuned values against the start values (elo0=0 elo1=5
    /// alpha=0.05 beta=0.05, as for match --sprt), in <out>/verify/. Exit code: the SPRT's.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub verify: Vec<String>,
    /// The most games of the --verify SPRT.
    #[arg(long, default_value_t = 2000)]
    pub verify_games: u64,
}

impl TuneArgs {
    fn spec(&self) -> Result<TuneSpec, SpecError> {
        let params = self
            .params
            .iter()
            .map(|p| Param::parse(p).map_err(|why| SpecError::new("param", why)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut spec = TuneSpec::of_run(self.run.spec(RunKind::Match)?, params, self.pairs);
        spec.gains.alpha = self.alpha;
        spec.gains.gamma = self.gamma;
        spec.gains.a_ratio = self.a_ratio;
        spec.window = self.window;
        spec.verify = key_values("verify", &self.verify, Sprt::parse)?;
        spec.verify_games = self.verify_games;
        Ok(spec)
    }
}

/// A tune to carry out: its spec, and the folder it continues.
pub struct TuneJob {
    pub spec: TuneSpec,
    pub origin: Origin,
    pub quiet: bool,
    pub resume: Option<PathBuf>,
}

pub fn job(args: &TuneArgs, groups: Vec<Vec<String>>) -> Result<TuneJob, Failure> {
    let mut args = args.clone();
    args.run.engine_groups = groups;
    if let Some(dir) = &args.run.resume {
        let spec = TuneSpec::load(dir).map_err(Failure::bad_input)?;
        return Ok(TuneJob {
            spec,
            origin: Origin::Saved(dir.join(TUNE_FILE)),
            quiet: args.run.quiet,
            resume: Some(dir.clone()),
        });
    }
    let origin = Origin::CommandLine;
    let spec = args.spec().map_err(|e| origin.explain(e))?;
    Ok(TuneJob {
        spec,
        origin,
        quiet: args.run.quiet,
        resume: None,
    })
}

/// The tune's folder (`--out`, `reports/<name>`, else a new one), and the folder this process
/// writes: a task's own inside it for a split tune.
fn folders(job: &TuneJob) -> (PathBuf, PathBuf) {
    let spec = &job.spec.run;
    if let Some(dir) = &job.resume {
        return match spec.shard {
            Some(_) => (
                dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
                dir.clone(),
            ),
            None => (dir.clone(), dir.clone()),
        };
    }
    let root = match (&spec.out, &spec.name) {
        (Some(out), _) => out.clone(),
        (None, Some(name)) => Path::new("reports").join(name),
        (None, None) => crate::tournament::launch::default_dir("tune", &spec.game),
    };
    let mine = match spec.shard {
        Some(shard) => root.join(shard.folder()),
        None => root.clone(),
    };
    (root, mine)
}

/// Starts the engine once and checks each parameter against the options it offers; marks the
/// ones it takes as whole numbers.
fn check_engine_options(
    runtime: &tokio::runtime::Runtime,
    spec: &mut TuneSpec,
    game: &str,
) -> Result<(), Failure> {
    let cfg = spec.engine().clone();
    let offered = runtime.block_on(async {
        match EngineProcess::start(&cfg, game, None).await {
            Ok(engine) => {
                let offered = engine.offered().to_vec();
                engine.quit().await;
                Ok(offered)
            }
            Err(e) => Err(Failure::bad_input(format!(
                "engine start-up check failed: {e}"
            ))),
        }
    })?;
    for p in &mut spec.params {
        let refuse = |why: String| Failure::bad_input(format!("--param {}: {why}", p.name));
        let Some(option) = offered
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(&p.name))
        else {
            let names: Vec<&str> = offered.iter().map(|o| o.name.as_str()).collect();
            return Err(refuse(format!(
                "engine '{}' offers no such option (it offers: {})",
                cfg.name,
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )));
        };
        match &option.kind {
            OptionKind::Spin { min, max } => {
                let below = min.is_some_and(|m| p.min < m as f64);
                let above = max.is_some_and(|m| p.max > m as f64);
                if below || above {
                    return Err(refuse(format!(
                        "{}..{} is outside the engine's range {}..{}",
                        p.min,
                        p.max,
                        min.map_or(String::new(), |m| m.to_string()),
                        max.map_or(String::new(), |m| m.to_string())
                    )));
                }
                p.integer = true;
            }
            OptionKind::Text => p.integer = false,
            _ => {
                return Err(refuse(
                    "a tuned option must be a number (spin) or a string the engine reads as one"
                        .into(),
                ))
            }
        }
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::bad_input(format!("cannot start the runtime: {e}")))
}

/// Opens the folder this process writes: locked, a new tune refused over an old one, the spec
/// saved. A requeued task of a split tune continues its own folder.
fn open_folder(job: &TuneJob, mine: &Path) -> Result<crate::tournament::RunLock, Failure> {
    let lock = lock_run_dir(mine).map_err(Failure::bad_input)?;
    let journal = mine.join(PAIRS_FILE);
    let continuing = job.resume.is_some()
        || (job.spec.run.shard.is_some()
            && TuneSpec::load(mine).is_ok_and(|s| s.identity() == job.spec.identity()));
    if journal.exists() && !continuing {
        return Err(Failure::bad_input(format!(
            "{} already holds a tune: continue it with --resume {}, or choose another --name/--out",
            mine.display(),
            mine.display()
        )));
    }
    job.spec
        .save(mine)
        .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", mine.display())))?;
    Ok(lock)
}

/// What a tune checks before it plays (its settings, book and the engine's options), nothing
/// written; the job comes back with each parameter's kind (whole number or decimal) known.
pub fn check_before_play(mut job: TuneJob) -> Result<TuneJob, Failure> {
    // A finished tune resumed only writes its files again: its engine may be gone, and the
    // kinds of its parameters were learnt when it started (tune.json keeps them).
    let finished =
        (job.resume.as_deref()).is_some_and(|dir| crate::tune::nothing_left(&job.spec, dir));
    let checked = if finished {
        job.spec.check_all_but_programs()
    } else {
        job.spec.check()
    };
    checked.map_err(|e| job.origin.explain(e))?;
    let entry = super::rulescmd::game_entry(&job.spec.run.game)?;
    crate::tournament::launch::book_of(&job.spec.run, entry)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    if !finished {
        check_engine_options(&runtime()?, &mut job.spec, entry.id)?;
    }
    Ok(job)
}

/// The tune's book, recorded as a run records it (the default book by absolute path in
/// tune.json), with a warning when there is none.
fn tune_book(
    job: &mut TuneJob,
    entry: &'static crate::game::GameEntry,
) -> Result<(Option<PathBuf>, Vec<crate::tournament::openings::Opening>), Failure> {
    let failed = |e: crate::tournament::RunError| Failure::bad_input(e.to_string());
    if job.resume.is_none() {
        crate::tournament::launch::record_default_book(&mut job.spec.run).map_err(failed)?;
    }
    let (book, openings) =
        crate::tournament::launch::book_of(&job.spec.run, entry).map_err(failed)?;
    if book.is_none() && !job.quiet {
        eprintln!(
            "warning: no book: every pair starts from the start position, and with engines that \
             play the same moves each time a pair's two games only swap sides, so its result \
             says little; give --openings (openings/<game>.txt is used when it is in the folder)"
        );
    }
    Ok((book, openings))
}

pub fn execute(job: TuneJob) -> Result<Exit, Failure> {
    crate::engine::sandbox::games_at_once(job.spec.run.concurrency);
    let mut job = check_before_play(job)?;
    let entry = super::rulescmd::game_entry(&job.spec.run.game)?;
    let (book, openings) = tune_book(&mut job, entry)?;
    let runtime = runtime()?;
    let (root, mine) = folders(&job);
    let _lock = open_folder(&job, &mine)?;
    let spec = job.spec.clone();
    if !job.quiet {
        let from = book
            .as_deref()
            .map_or("the start position".to_string(), |b| {
                format!("{} ({} openings)", b.display(), openings.len())
            });
        banner(&spec, entry.id, &from, &mine);
    }
    let bar = progress_bar(spec.pairs, job.quiet);
    let opts = TuneOptions {
        spec: spec.clone(),
        entry,
        openings,
        dir: mine.clone(),
    };
    let every = (spec.pairs / 20).max(1);
    let outcome = runtime.block_on(tune(opts, |p| {
        bar.set_position(p.done);
        let values = report::flags(&spec, p.theta);
        bar.set_message(values.clone());
        if !job.quiet && bar.is_hidden() && (p.done % every == 0 || p.done == p.total) {
            say!("pair {}/{}: {values}", p.done, p.total);
        }
    }));
    bar.finish_and_clear();
    let outcome = outcome.map_err(|e| runcmd::run_failure(e, "tune", &mine))?;
    say_read_back(&outcome, &mine, job.quiet);
    let finished = !outcome.interrupted;
    report::write(&root, &spec, &outcome.thetas, outcome.score, finished).map_err(|e| {
        Failure::io(format!(
            "cannot write the tune's files in {}: {e}",
            root.display()
        ))
    })?;
    let theta = outcome.thetas.last().cloned().unwrap_or_default();
    say_result(&outcome, &spec, &theta, &root);
    if outcome.interrupted {
        say!(
            "Stopped after {} of {} pairs. Continue with: {} tune --resume {}",
            outcome.done,
            spec.pairs,
            self_command(),
            mine.display()
        );
        return Ok(Exit::Interrupted);
    }
    match spec.verify {
        Some(sprt) if spec.run.shard.is_none() => verify(&spec, &theta, sprt, &root, job.quiet),
        Some(_) => {
            say!("--verify runs on one machine: `arbiter tune --resume {}` runs it once the tune is done.", root.display());
            Ok(Exit::Success)
        }
        None => Ok(Exit::Success),
    }
}

fn banner(spec: &TuneSpec, game: &str, from: &str, folder: &Path) {
    say!(
        "Tuning {} in {} ({}): {} game pairs, {} at a time, from {}; {}",
        spec.engine().name,
        game,
        spec.engine().limits_summary(),
        spec.pairs,
        spec.run.concurrency,
        from,
        folder.display()
    );
}

/// The tune's score, its values (tuned, or so far) and its files.
fn say_result(outcome: &crate::tune::TuneOutcome, spec: &TuneSpec, theta: &[f64], root: &Path) {
    say!(
        "{} pairs: plus side {} wins, {} losses, {} draws",
        outcome.done,
        outcome.score[0],
        outcome.score[1],
        outcome.score[2]
    );
    // Stopped early, theta is where the tune had got to, not its result.
    let label = match outcome.interrupted {
        true => "Values so far (not tuned yet)",
        false => "Tuned values",
    };
    say!("{label}: {}", report::flags(spec, theta));
    say!(
        "Files: {} ({}, {}, {})",
        root.display(),
        TUNED_FILE,
        THETA_CSV,
        REPORT_FILE
    );
}

/// What a resumed tune found in its journal: pairs already played, lines cut off by a kill.
fn say_read_back(outcome: &crate::tune::TuneOutcome, folder: &Path, quiet: bool) {
    if outcome.resumed > 0 && !quiet {
        say!(
            "{} pairs were already played (read back from {}).",
            outcome.resumed,
            PAIRS_FILE
        );
    }
    if !outcome.damaged.is_empty() {
        eprintln!(
            "{}: lines {:?} held no whole pair (cut off by a kill); those pairs were played again",
            folder.join(PAIRS_FILE).display(),
            outcome.damaged
        );
    }
}

/// An SPRT of the tuned values against the start values, as `match --sprt` plays it.
fn verify(
    spec: &TuneSpec,
    theta: &[f64],
    sprt: Sprt,
    root: &Path,
    quiet: bool,
) -> Result<Exit, Failure> {
    let start = spec.spsa().start();
    let mut tuned = spec.seat(true, theta);
    tuned.name = format!("{}-tuned", spec.engine().name);
    let mut untuned = spec.seat(false, &start);
    untuned.name = format!("{}-start", spec.engine().name);
    let mut run = spec.run.clone();
    run.engines = vec![tuned, untuned];
    run.games = Some(spec.verify_games);
    run.rounds = spec.verify_games.div_ceil(2).max(1);
    run.sprt = Some(sprt);
    run.out = Some(root.join("verify"));
    run.name = None;
    run.shard = None;
    if !quiet {
        say!(
            "Verifying: an SPRT of the tuned values against the start values, in {}",
            root.join("verify").display()
        );
    }
    let resume = root
        .join("verify")
        .join(crate::tournament::journal::JOURNAL_FILE)
        .exists();
    runcmd::execute(RunJob {
        spec: run,
        origin: Origin::CommandLine,
        quiet,
        resume: resume.then(|| root.join("verify")),
    })
}

fn progress_bar(total: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} pairs, ETA {eta}  {wide_msg}")
    {
        bar.set_style(style);
    }
    bar
}
