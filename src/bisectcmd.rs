//! `arbiter bisect`: parses the series and the question, shows progress, prints the answer.

use super::exit::Exit;
use super::runargs::{Origin, RunArgs};
use super::Failure;
use arbiter::bisect::{Answer, Bisect, BisectError, BisectSpec};
use arbiter::tournament::RunKind;

#[derive(clap::Args, Debug, Clone)]
pub struct BisectArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The drop sought: the first version at least this many Elo weaker than the first.
    #[arg(long, default_value_t = 5.0)]
    pub elo: f64,
    /// The error rate allowed: the answer is given when it is at least this sure.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Games at most; then the likeliest answer is reported as undecided (exit code 3).
    #[arg(long, default_value_t = 20_000)]
    pub max_games: u64,
    /// Game pairs played at each step (one version against the first); 0: as many as
    /// --concurrency, at least 4.
    #[arg(long, default_value_t = 0)]
    pub step_pairs: u64,
    /// Take the versions from this git repository instead of --engine: every commit from
    /// --good to --bad, each checked out in <out>/builds/<commit> and built with --build; the
    /// engines' settings come from --each.
    #[arg(long, value_name = "DIR", requires_all = ["good", "bad", "build", "program"],
          conflicts_with = "engine")]
    pub repo: Option<std::path::PathBuf>,
    /// The known good revision (with --repo).
    #[arg(long, value_name = "REV", requires = "repo")]
    pub good: Option<String>,
    /// The known (or suspected) worse revision (with --repo).
    #[arg(long, value_name = "REV", requires = "repo")]
    pub bad: Option<String>,
    /// The command that builds a checked-out revision, run by `sh -c` in its worktree (with
    /// --repo); a revision it fails for is skipped and said.
    #[arg(long, value_name = "CMD", requires = "repo")]
    pub build: Option<String>,
    /// The built engine, relative to the worktree (with --repo).
    #[arg(long, value_name = "PATH", requires = "repo")]
    pub program: Option<std::path::PathBuf>,
}

/// With --repo: the range's versions built (in the bisect's folder) as `--engine` entries.
fn versions_from_git(args: &BisectArgs, run: &mut RunArgs) -> Result<Vec<Vec<String>>, Failure> {
    let (Some(repo), Some(good), Some(bad), Some(build), Some(program)) = (
        &args.repo,
        &args.good,
        &args.bad,
        &args.build,
        &args.program,
    ) else {
        return Ok(Vec::new());
    };
    let out = match (&run.out, &run.name) {
        (Some(out), _) => out.clone(),
        (None, Some(name)) => std::path::Path::new("reports").join(name),
        (None, None) => arbiter::tournament::launch::default_dir(
            "bisect",
            run.game.as_deref().unwrap_or(super::runargs::DEFAULT_GAME),
        ),
    };
    let task = run.split.shard.is_some() || run.split.shards.is_some();
    if !task && out.join(arbiter::bisect::drive::SPEC_FILE).exists() {
        return Err(Failure::bad_input(format!(
            "{} holds a bisect already: continue it with --resume {0}, or give another --out",
            out.display()
        )));
    }
    run.out = Some(out.clone());
    let range = arbiter::bisect::git::GitRange {
        repo: repo.clone(),
        good: good.clone(),
        bad: bad.clone(),
        build: build.clone(),
        program: program.clone(),
    };
    let quiet = run.quiet;
    let built = arbiter::bisect::git::build_all(&range, &out, |note| {
        if !quiet {
            eprintln!("{note}");
        }
    })
    .map_err(Failure::bad_input)?;
    Ok(built
        .into_iter()
        .map(|b| {
            vec![
                format!("cmd={}", b.program.display()),
                format!("name={}", b.name),
            ]
        })
        .collect())
}

fn refused(e: BisectError, dir: Option<&std::path::Path>) -> Failure {
    match (e, dir) {
        (BisectError::Run(arbiter::tournament::RunError::Spec(e)), _) => {
            Origin::CommandLine.explain(e)
        }
        (BisectError::Run(e), Some(dir)) => super::runcmd::run_failure(e, "bisect", dir),
        (e, _) => Failure::bad_input(e.to_string()),
    }
}

/// The bisect of the command line, checked; nothing is written (but a git range's builds).
fn prepare(args: &BisectArgs, engine_groups: Vec<Vec<String>>) -> Result<Bisect, Failure> {
    let spec = match &args.run.resume {
        Some(_) => None,
        None => {
            let mut run = args.run.clone();
            run.engine_groups = match args.repo {
                Some(_) => versions_from_git(args, &mut run)?,
                None => engine_groups,
            };
            let games = run
                .spec(RunKind::Match)
                .map_err(|e| Origin::CommandLine.explain(e))?;
            let step_pairs = match args.step_pairs {
                0 => (run.concurrency as u64).max(arbiter::bisect::DEFAULT_STEP_PAIRS),
                n => n,
            };
            Some(BisectSpec {
                games,
                elo: args.elo,
                alpha: args.alpha,
                max_games: args.max_games,
                step_pairs,
            })
        }
    };
    Bisect::prepare(spec, args.run.resume.as_deref()).map_err(|e| refused(e, None))
}

/// `arbiter slurm -- bisect ...`: the bisect checked as each task will check it (every version
/// started once), a git range built; the job the script submits.
pub fn check_for_cluster(
    args: &BisectArgs,
    engine_groups: Vec<Vec<String>>,
) -> Result<super::runargs::RunJob, Failure> {
    if args.run.resume.is_some() {
        return Err(Failure::bad_input(
            "arbiter slurm: a bisect is submitted as it was begun, not with --resume",
        ));
    }
    let bisect = prepare(args, engine_groups)?;
    let mut games = bisect.spec.games.clone();
    games.out = Some(bisect.dir.clone());
    // Every version started once, two at a time (the last with the one before it when they
    // are odd in number): a version that cannot start is refused here, not hours into the job.
    let versions = games.engines.len();
    for first in (0..versions).step_by(2) {
        let first = first.min(versions - 2);
        let mut pair = games.clone();
        pair.engines = games.engines[first..first + 2].to_vec();
        pair.out = None;
        let probe = arbiter::run::Run::prepare(pair, None)
            .map_err(|e| refused(BisectError::Run(e), None))?;
        probe
            .try_engines()
            .map_err(|e| refused(BisectError::Run(e), None))?;
    }
    Ok(super::runargs::RunJob {
        spec: games,
        origin: Origin::CommandLine,
        quiet: args.run.quiet,
        resume: None,
    })
}

/// What the bisect is about to do: its engines' confinement, the series and what is sought.
fn say_banner(spec: &arbiter::bisect::BisectSpec, dir: &std::path::Path) {
    say!(
        "{}",
        arbiter::engine::sandbox::describe(&spec.games.engines)
    );
    let names: Vec<&str> = spec.games.engines.iter().map(|e| e.name.as_str()).collect();
    say!(
        "arbiter bisect: {}, {} versions ({} .. {}), the first at least {} Elo weaker sought \
         at error rate {}, at most {} games\n  output: {}",
        spec.games.game,
        names.len(),
        names[0],
        names[names.len() - 1],
        spec.elo,
        spec.alpha,
        spec.max_games,
        dir.display()
    );
}

pub fn execute(args: &BisectArgs, engine_groups: Vec<Vec<String>>) -> Result<Exit, Failure> {
    let bisect = prepare(args, engine_groups)?;
    let dir = bisect.dir.clone();
    let task = bisect.shard.is_some();
    let quiet = args.run.quiet;
    if !quiet {
        say_banner(&bisect.spec, &dir);
    }
    let names: Vec<String> = bisect
        .spec
        .games
        .engines
        .iter()
        .map(|e| e.name.clone())
        .collect();
    let bar = (!quiet).then(|| {
        let bar = indicatif::ProgressBar::new(bisect.spec.max_games);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}")
                .expect("a fixed template"),
        );
        bar
    });
    let bisect = bisect.open().map_err(|e| refused(e, Some(&dir)))?;
    let outcome = bisect.play(|p| {
        if let Some(bar) = &bar {
            bar.set_position(p.games);
            let leader = match p.leader.version {
                Some(v) => names[v].clone(),
                None => "no drop".into(),
            };
            bar.set_message(format!(
                "step {} plays {}; leading: {leader} ({:.2})",
                p.step, p.playing, p.leader.probability
            ));
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let outcome = outcome.map_err(|e| refused(e, Some(&dir)))?;
    say!("{}", arbiter::bisect::report::answer_line(&outcome));
    match task {
        true => say!(
            "This task's part is played; once every task has ended, {} bisect --resume {} \
             merges the steps and writes the report (an `arbiter slurm` script does it).",
            super::runcmd::self_command(),
            dir.display()
        ),
        false => say!(
            "Report: {}",
            dir.join(arbiter::bisect::report::REPORT_HTML).display()
        ),
    }
    Ok(match outcome.answer {
        Answer::Found(_) => Exit::Success,
        Answer::NoDrop(_) => Exit::Rejected,
        Answer::BudgetOut(_) => Exit::Incomplete,
        Answer::Interrupted(_) => {
            say!(
                "Continue with: {} bisect --resume {}",
                super::runcmd::self_command(),
                dir.display()
            );
            Exit::Interrupted
        }
    })
}
