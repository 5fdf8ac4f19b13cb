//! `arbiter tune`: the flags become a `TuneSpec`, the library's `Tune` is prepared (the engine
//! asked which options it offers), opened and played while its progress is drawn; then
//! optionally an SPRT checks the tuned values against the start values.

use super::exit::Exit;
use super::runargs::{key_values, Origin, RunArgs, RunJob};
use super::runcmd::{self, self_command};
use super::Failure;
use arbiter::stats::Sprt;
use arbiter::tournament::{RunKind, SpecError};
use arbiter::tune::report::{self, REPORT_FILE, THETA_CSV, TUNED_FILE};
use arbiter::tune::spec::{DEFAULT_WINDOW, PAIRS, TUNE_FILE};
use arbiter::tune::spsa::Param;
use arbiter::tune::{Tune, TuneSpec, PAIRS_FILE};
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
    #[arg(long = "param", value_name = "NAME=START,MIN,MAX,C_END,R_END",
          action = ArgAction::Append)]
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

/// A tune's failure, named as the user wrote the setting where it is one.
fn refused(e: arbiter::tune::TuneError, origin: &Origin, folder: &Path) -> Failure {
    match e {
        arbiter::tournament::RunError::Spec(e) => origin.explain(e),
        e => runcmd::run_failure(e, "tune", folder),
    }
}

/// What a tune checks before it plays (its settings, book and the engine's options), nothing
/// written: the tune, prepared.
pub fn check_before_play(job: &TuneJob) -> Result<Tune, Failure> {
    Tune::prepare(job.spec.clone(), job.resume.as_deref())
        .map_err(|e| refused(e, &job.origin, Path::new(".")))
}

pub fn execute(job: TuneJob) -> Result<Exit, Failure> {
    arbiter::engine::sandbox::games_at_once(job.spec.run.concurrency);
    let tune = check_before_play(&job)?;
    let spec = tune.spec().clone();
    let mine = tune.folder().to_path_buf();
    if tune.book().0.is_none() && !job.quiet {
        eprintln!(
            "warning: no book: every pair starts from the start position, and with engines that \
             play the same moves each time a pair's two games only swap sides, so its result \
             says little; give --openings (openings/<game>.txt is used when it is in the folder)"
        );
    }
    if !job.quiet {
        let from = match tune.book() {
            (Some(book), openings) => format!("{} ({openings} openings)", book.display()),
            (None, _) => "the start position".to_string(),
        };
        banner(&spec, &spec.run.game, &from, &mine);
    }
    let tune = tune.open().map_err(|e| refused(e, &job.origin, &mine))?;
    let root = tune.root().to_path_buf();
    let bar = progress_bar(spec.pairs, job.quiet);
    let every = (spec.pairs / 20).max(1);
    let outcome = tune.play(|p| {
        bar.set_position(p.done);
        let values = report::flags(&spec, p.theta);
        bar.set_message(values.clone());
        if !job.quiet && bar.is_hidden() && (p.done % every == 0 || p.done == p.total) {
            say!("pair {}/{}: {values}", p.done, p.total);
        }
    });
    bar.finish_and_clear();
    let outcome = outcome.map_err(|e| refused(e, &job.origin, &mine))?;
    say_read_back(&outcome, &mine, job.quiet);
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
        Some(_) if spec.run.shard.is_none() => verify(&spec, &theta, &root, job.quiet),
        Some(_) => {
            say!(
                "--verify runs on one machine: `arbiter tune --resume {}` runs it once the tune \
                is done.",
                root.display()
            );
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
fn say_result(outcome: &arbiter::tune::TuneOutcome, spec: &TuneSpec, theta: &[f64], root: &Path) {
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
fn say_read_back(outcome: &arbiter::tune::TuneOutcome, folder: &Path, quiet: bool) {
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
fn verify(spec: &TuneSpec, theta: &[f64], root: &Path, quiet: bool) -> Result<Exit, Failure> {
    let (run, resume) = arbiter::tune::verify_run(spec, theta, root);
    if !quiet {
        say!(
            "Verifying: an SPRT of the tuned values against the start values, in {}",
            root.join("verify").display()
        );
    }
    runcmd::execute(RunJob {
        spec: run,
        origin: Origin::CommandLine,
        quiet,
        resume,
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
