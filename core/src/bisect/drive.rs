//! A bisect's life: `Bisect::prepare` checks the series and the question, `Bisect::play` plays
//! step after step until one answer is sure enough or the budget is spent. Each step is a match
//! run of its own (`launch::Run`: sandboxed engines, a journal sealed with the owner's key, its
//! reports) in `steps/NNN-<version>/` of the bisect's folder, between the version the posterior
//! picks and the first version, or in `steps/NNN-<version>-vs-<version before>/` between the
//! version and the one before it. The next matchup depends only on the results before it, so a
//! bisect resumed after Ctrl-C or a crash replays its finished steps from their journals, goes
//! on with the step it was in, and reaches the same answer. A step's folder, once written,
//! decides its matchup: a bisect begun by another build goes on with the steps it played.
//!
//! Split over a cluster (`--shard`), every task plays every step as a task of the step's split
//! run (claims, leases), then reads the whole step from every task's folder, proved as
//! `arbiter merge` proves it (into a scratch copy of its own). Every task so holds the same
//! results and picks the same next step; one machine's `--resume` afterwards merges each
//! step's folders into it and writes the bisect's files, as one machine would have.

pub use super::outcome::{describe, Answer, BisectOutcome, BisectSpec, Step, VersionGames};
use super::posterior::{Leader, Matchup, Posterior};
use crate::report::Pages;
use crate::run::Run;
use crate::tournament::shelf::Shelf;
use crate::tournament::spec::Shard;
use crate::tournament::{RunError, RunKind, RunSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bisect's settings, saved (and sealed) in its folder as `bisect-spec.json`.
pub const SPEC_FILE: &str = "bisect-spec.json";

#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Run(#[from] RunError),
}

/// Told after each game.
pub struct BisectProgress<'a> {
    pub games: u64,
    pub max_games: u64,
    pub step: u64,
    pub playing: &'a str,
    pub leader: Leader,
}

/// A bisect checked and ready to open: it finds, among versions in order, the first weaker
/// than the first by `elo`, playing each step as a match of its own.
///
/// ```no_run
/// use arbiter::bisect::{Bisect, BisectSpec};
/// use arbiter::engine::EngineConfig;
/// use arbiter::tournament::{RunKind, RunSpec};
///
/// let versions = ["v1", "v2", "v3", "v4"].map(|v| {
///     EngineConfig::parse(&[format!("cmd=builds/{v}/engine"), format!("name={v}")], &[])
///         .unwrap()
/// });
/// let spec = BisectSpec {
///     games: RunSpec::new(RunKind::Match, versions.to_vec()),
///     elo: 30.0,
///     alpha: 0.05,
///     max_games: 2_000,
///     step_pairs: 4,
/// };
/// let outcome = Bisect::prepare(Some(spec), None)?.open()?.play(|_| {})?;
/// println!("{:?} after {} games", outcome.answer, outcome.games);
/// # Ok::<(), arbiter::bisect::BisectError>(())
/// ```
pub struct Bisect {
    pub spec: BisectSpec,
    pub dir: PathBuf,
    /// This task's place in a bisect split over a cluster.
    pub shard: Option<Shard>,
}

impl Bisect {
    /// Checks the bisect's settings; nothing is written. `resume`: its folder, whose saved
    /// settings are used.
    pub fn prepare(spec: Option<BisectSpec>, resume: Option<&Path>) -> Result<Bisect, BisectError> {
        let setup = |m: String| BisectError::Setup(m);
        let (spec, dir, shard) = match (spec, resume) {
            (_, Some(dir)) => (load(dir).map_err(setup)?, dir.to_path_buf(), None),
            (Some(mut spec), None) => {
                // The task's place is its own: the bisect's settings are the same in every task.
                let shard = spec.games.shard.take();
                let dir = crate::tournament::launch::out_dir(&spec.games, None);
                if shard.is_none() && dir.join(SPEC_FILE).exists() {
                    return Err(setup(format!(
                        "{} holds a bisect already: continue it with --resume {0}, or give \
                         another --out",
                        dir.display()
                    )));
                }
                (spec, dir, shard)
            }
            (None, None) => return Err(setup("no bisect to play".into())),
        };
        check(&spec).map_err(setup)?;
        // Every step's settings are a match's: checked now, before anything is written.
        step_spec(
            &spec,
            &dir,
            Matchup::against_first(spec.games.engines.len() - 1),
            1,
        )
        .check_all_but_programs()
        .map_err(RunError::Spec)?;
        crate::tournament::spec::check_programs(&spec.games.engines).map_err(RunError::Spec)?;
        Ok(Bisect { spec, dir, shard })
    }

    /// What makes two tasks' bisects the same one: the question and the games' settings, not
    /// the settings of one task (its concurrency, its place).
    pub fn identity(&self) -> String {
        let spec = &self.spec;
        let identity = serde_json::json!({
            "bisect": {
                "elo": spec.elo,
                "alpha": spec.alpha,
                "max_games": spec.max_games,
                "step_pairs": spec.step_pairs,
            },
            "run": spec.games.unsplit(),
        });
        identity.to_string()
    }

    /// Locks the bisect's folder (a second process on the same bisect is refused) and saves its
    /// settings there.
    pub fn open(self) -> Result<OpenBisect, BisectError> {
        std::fs::create_dir_all(self.dir.join("steps")).map_err(|e| output(&self.dir, e))?;
        let Some(shard) = self.shard else {
            let lock = crate::tournament::lock_run_dir(&self.dir).map_err(BisectError::Setup)?;
            if !self.dir.join(SPEC_FILE).exists() {
                save(&self.spec, &self.dir).map_err(|e| output(&self.dir, e))?;
            }
            return Ok(OpenBisect {
                bisect: self,
                _lock: lock,
            });
        };
        // A task of another bisect is refused before it writes anything.
        crate::tournament::claims::join_run(&self.dir, &shard.folder(), &self.identity())
            .map_err(BisectError::Setup)?;
        let lock = crate::tournament::lock_run_dir(&self.dir.join(shard.folder()))
            .map_err(BisectError::Setup)?;
        save_once(&self.spec, &self.dir).map_err(|e| output(&self.dir, e))?;
        Ok(OpenBisect {
            bisect: self,
            _lock: lock,
        })
    }
}

/// A bisect whose folder this process holds.
pub struct OpenBisect {
    bisect: Bisect,
    _lock: crate::tournament::RunLock,
}

impl Bisect {
    /// Step `number`'s matchup and match: the one it began with, where it was begun (resumed,
    /// or another task's), else the posterior's next probe.
    fn next_step(
        &self,
        number: u64,
        names: &[String],
        posterior: &Posterior,
    ) -> Result<(Matchup, RunSpec), BisectError> {
        if self.shard.is_none() {
            merge_split_step(&self.dir, number)?;
        }
        let matchup = match played_step(&self.dir, number, names)? {
            Some(played) => played,
            None => posterior.next_probe(),
        };
        let mut run_spec = step_spec(&self.spec, &self.dir, matchup, number);
        run_spec.shard = self.shard;
        Ok((matchup, run_spec))
    }
}

impl OpenBisect {
    /// Plays until the answer is sure, the budget is spent or a signal stops it; writes
    /// `bisect.json` and `report.html` whatever the end.
    pub fn play(
        self,
        mut on_game: impl FnMut(&BisectProgress),
    ) -> Result<BisectOutcome, BisectError> {
        let this = &self.bisect;
        let spec = &this.spec;
        let names: Vec<String> = spec.games.engines.iter().map(|e| e.name.clone()).collect();
        let mut posterior = Posterior::new(names.len(), spec.elo);
        let mut versions: Vec<VersionGames> = names.iter().map(|n| VersionGames::of(n)).collect();
        let decided = |posterior: &Posterior, games: u64| match posterior.decided(spec.alpha) {
            Some(sure) if sure.version.is_some() => Some(Answer::Found(sure)),
            Some(sure) => Some(Answer::NoDrop(sure)),
            None => (games >= spec.max_games).then(|| Answer::BudgetOut(posterior.leader())),
        };
        let mut steps = Vec::new();
        let mut games = 0;
        // Ctrl-C between steps (the next one's engines starting) stops the bisect as one
        // during a step stops its run: a listener for the whole bisect.
        let stopped = listen_for_stop();
        // The versions' engines are kept running from step to step (each worker's, so as many
        // as the versions a worker played last fit).
        let shelf = Arc::new(Shelf::new(ENGINES_KEPT));
        let answer = loop {
            if let Some(answer) = decided(&posterior, games) {
                break answer;
            }
            let number = steps.len() as u64 + 1;
            let (matchup, run_spec) = this.next_step(number, &names, &posterior)?;
            let folder = run_spec.out.clone().expect("a step's folder");
            let playing = describe(matchup, &names);
            let step = StepPlace {
                folder: &folder,
                shelf: &shelf,
                series: &spec.games.engines,
            };
            let mut outcome = play_step(run_spec, step, |done| {
                on_game(&BisectProgress {
                    games: games + done,
                    max_games: spec.max_games,
                    step: number,
                    playing: &playing,
                    leader: posterior.leader(),
                })
            })?;
            if let (Some(shard), false) = (this.shard, outcome.interrupted) {
                outcome = whole_step(&this.dir, shard, &folder)?;
            }
            count_step(
                &mut posterior,
                &mut versions[matchup.player],
                matchup,
                &outcome,
            );
            games += outcome.totals.games;
            let after = posterior.leader();
            steps.push(Step::played(
                number,
                matchup,
                folder,
                outcome.totals.games,
                after,
            ));
            if outcome.interrupted || stopped.load(std::sync::atomic::Ordering::Relaxed) {
                break Answer::Interrupted(after);
            }
        };
        for (m, pairs) in posterior.matchups() {
            let v = &mut versions[m.player];
            *match m.opponent {
                0 => &mut v.pairs,
                _ => &mut v.previous_pairs,
            } = *pairs;
        }
        let outcome = BisectOutcome {
            answer,
            versions,
            probabilities: posterior.probabilities(),
            steps,
            games,
        };
        // A task's answer is its log's; the bisect's files are written by one machine's
        // `--resume` once every task has ended.
        if this.shard.is_none() {
            super::report::write(&this.dir, spec, &outcome).map_err(|e| output(&this.dir, e))?;
        }
        Ok(outcome)
    }
}

/// A step's games counted: the posterior moved by its pairs, and its results added to the
/// version it played (against the first, or against the version before it).
fn count_step(
    posterior: &mut Posterior,
    version: &mut VersionGames,
    matchup: Matchup,
    outcome: &crate::tournament::RunOutcome,
) {
    let pairing = outcome
        .totals
        .pairings
        .get(&(0, 1))
        .cloned()
        .unwrap_or_default();
    posterior.add(matchup, &pairing.pairs);
    let wdl = match matchup.opponent {
        0 => &mut version.wdl,
        _ => &mut version.previous_wdl,
    };
    wdl.wins += pairing.wdl.wins;
    wdl.draws += pairing.wdl.draws;
    wdl.losses += pairing.wdl.losses;
}

/// Set once SIGINT, SIGTERM or SIGHUP (as a run takes them) has come.
fn listen_for_stop() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let stopped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stopped.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    if let Ok(runtime) = runtime {
        std::thread::spawn(move || {
            runtime.block_on(async {
                crate::tournament::run::StopSignals::install().recv().await;
            });
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }
    stopped
}

fn output(dir: &Path, e: impl std::fmt::Display) -> BisectError {
    BisectError::Run(RunError::Output {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })
}

fn check(spec: &BisectSpec) -> Result<(), String> {
    let n = spec.games.engines.len();
    if n < 2 {
        return Err("a bisect needs at least two versions, the good one first".into());
    }
    if !(spec.elo > 0.0 && spec.elo.is_finite()) {
        return Err(format!(
            "--elo {} must be a positive number of Elo",
            spec.elo
        ));
    }
    if !(spec.alpha > 0.0 && spec.alpha < 0.5) {
        return Err(format!("--alpha {} must be between 0 and 0.5", spec.alpha));
    }
    crate::tournament::spec::check_engine_names(&spec.games.engines).map_err(|e| e.to_string())?;
    if spec.step_pairs == 0 || spec.max_games == 0 {
        return Err("--step-pairs and --max-games must be at least 1".into());
    }
    let g = &spec.games;
    if g.pgnout.is_some() || g.epdout.is_some() || g.log.is_some() {
        return Err(
            "a bisect keeps each step's games, PGN and reports in its steps/ folders: \
             --pgnout, --epdout and --log are not taken"
                .into(),
        );
    }
    Ok(())
}

/// The folder of a step: `NNN-<player>` against the first, `NNN-<player>-vs-<opponent>`.
fn step_folder(dir: &Path, number: u64, matchup: Matchup, names: &[String]) -> PathBuf {
    let name = match matchup.opponent {
        0 => format!("{number:03}-{}", names[matchup.player]),
        o => format!("{number:03}-{}-vs-{}", names[matchup.player], names[o]),
    };
    dir.join("steps").join(name)
}

/// The matchup of step `number` if its folder holds its saved settings already (a resumed
/// bisect): the step goes on as it began, whatever this build would pick.
fn played_step(dir: &Path, number: u64, names: &[String]) -> Result<Option<Matchup>, BisectError> {
    let prefix = format!("{number:03}-");
    let Ok(entries) = std::fs::read_dir(dir.join("steps")) else {
        return Ok(None);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let folder = entry.path();
        if !name.starts_with(&prefix) || !folder.join(crate::tournament::spec::SPEC_FILE).exists() {
            continue;
        }
        let saved = RunSpec::load(&folder).map_err(BisectError::Setup)?;
        let index =
            |e: &crate::engine::config::EngineConfig| names.iter().position(|n| *n == e.name);
        let matchup = match saved.engines.as_slice() {
            [player, opponent] => index(player).zip(index(opponent)).map(|(p, o)| Matchup {
                player: p,
                opponent: o,
            }),
            _ => None,
        };
        return match matchup {
            Some(m) if m.opponent < m.player && step_folder(dir, number, m, names) == folder => {
                Ok(Some(m))
            }
            _ => Err(BisectError::Setup(format!(
                "{}: not a step of this bisect (its engines are not two of its versions, the \
                 later first)",
                folder.display()
            ))),
        };
    }
    Ok(None)
}

/// The match of one step: the matchup's player against its opponent, `step_pairs` pairs, its
/// own seed and the book's next openings.
fn step_spec(spec: &BisectSpec, dir: &Path, matchup: Matchup, number: u64) -> RunSpec {
    let mut run = spec.games.clone();
    let engines = &spec.games.engines;
    let names: Vec<String> = engines.iter().map(|e| e.name.clone()).collect();
    run.kind = RunKind::Match;
    run.engines = vec![
        engines[matchup.player].clone(),
        engines[matchup.opponent].clone(),
    ];
    run.rounds = spec.step_pairs;
    run.games = Some(2 * spec.step_pairs);
    run.sprt = None;
    run.name = None;
    run.seed = spec.games.seed.wrapping_add(number);
    run.book_start = spec
        .games
        .book_start
        .wrapping_add((number - 1) * spec.step_pairs);
    run.out = Some(step_folder(dir, number, matchup, &names));
    run
}

/// Engines kept running between steps, per worker: the first version and the few the search
/// is playing near the drop.
const ENGINES_KEPT: usize = 4;

/// Where a step plays, and what it plays with.
struct StepPlace<'a> {
    folder: &'a Path,
    /// Where the engines of the steps before wait.
    shelf: &'a Arc<Shelf>,
    /// Every version of the bisect, each hidden from the others' engines.
    series: &'a [crate::engine::EngineConfig],
}

/// Plays (or, when finished, reads back) one step's match.
fn play_step(
    spec: RunSpec,
    step: StepPlace,
    mut on_game: impl FnMut(u64),
) -> Result<crate::tournament::RunOutcome, BisectError> {
    let folder = step.folder;
    let saved = folder.join(crate::tournament::spec::SPEC_FILE).exists();
    let run = match saved {
        // A task of a split step: its folder is the task's own, and a requeued task continues
        // it (the step's folder holds the other tasks').
        _ if spec.shard.is_some() => Run::prepare(spec, None)?,
        true => {
            let saved = RunSpec::load(folder).map_err(BisectError::Setup)?;
            Run::prepare(saved, Some(folder))?
        }
        false => {
            // A step cut off before its settings were saved played nothing.
            if folder.exists() {
                let _ = std::fs::remove_dir_all(folder);
            }
            Run::prepare(spec, None)?
        }
    };
    // The bisect's page shows every step's games: a step writes its games and tables only.
    let mut run = Run {
        pages: Pages::Left,
        shelf: Some(step.shelf.clone()),
        ..run
    };
    crate::engine::sandbox::hide_the_series(&mut run.spec.engines, step.series);
    // `done` counts the games a resumed step had played before, as its journal holds them.
    Ok(run.open()?.play(|p| on_game(p.done))?)
}

/// A step every task has played (its play ended, not interrupted: no pair is left to any task),
/// read whole from every task's folder and proved, merged into a scratch folder of this task's.
fn whole_step(
    dir: &Path,
    shard: Shard,
    folder: &Path,
) -> Result<crate::tournament::RunOutcome, BisectError> {
    let name = folder.file_name().unwrap_or_default();
    let scratch = dir.join(shard.folder()).join("steps").join(name);
    if scratch.exists() {
        // Read again from the tasks' folders: a requeued task's copy may be a partial one.
        let _ = std::fs::remove_dir_all(&scratch);
    }
    std::fs::create_dir_all(scratch.parent().unwrap_or(dir)).map_err(|e| output(dir, e))?;
    let merged = crate::run::merge_with(&scratch, &[folder.to_path_buf()], Pages::Left)
        .map_err(|e| BisectError::Setup(format!("{}: {e}", folder.display())))?;
    if !merged.missing.is_empty() {
        return Err(BisectError::Setup(format!(
            "{}: {} of the step's games are in no task's folder although no task holds them; \
             run the bisect's tasks again",
            folder.display(),
            merged.missing.len()
        )));
    }
    Ok(merged.outcome)
}

/// Step `number`'s folder, where it holds a split step's task folders and was not merged yet
/// (a bisect played by a cluster's tasks, resumed on one machine): merged into itself, so that
/// it is read back, or its missing games played, as one machine's step.
fn merge_split_step(dir: &Path, number: u64) -> Result<(), BisectError> {
    let prefix = format!("{number:03}-");
    let Ok(entries) = std::fs::read_dir(dir.join("steps")) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let folder = entry.path();
        let split = std::fs::read_dir(&folder).is_ok_and(|mut inside| {
            inside.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("shard-")))
        });
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix)
            && split
            && !folder.join(crate::tournament::spec::SPEC_FILE).exists()
        {
            crate::run::merge_with(&folder, std::slice::from_ref(&folder), Pages::Left)
                .map_err(|e| BisectError::Setup(format!("{}: {e}", folder.display())))?;
        }
    }
    Ok(())
}

/// Saves the settings unless a task has already (linked into place, so that of tasks starting
/// at once one writes them and seals them).
fn save_once(spec: &BisectSpec, dir: &Path) -> std::io::Result<()> {
    let path = dir.join(SPEC_FILE);
    if path.exists() {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(spec).map_err(std::io::Error::other)? + "\n";
    let tmp = dir.join(format!(".{SPEC_FILE}.{}", std::process::id()));
    crate::output::replace(&tmp, text.as_bytes())?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => crate::proof::seal_spec(dir, SPEC_FILE, text.as_bytes()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

fn save(spec: &BisectSpec, dir: &Path) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(spec).map_err(std::io::Error::other)? + "\n";
    let tmp = dir.join(format!(".{SPEC_FILE}.{}", std::process::id()));
    crate::output::replace(&tmp, text.as_bytes())?;
    crate::proof::seal_spec(dir, SPEC_FILE, text.as_bytes())?;
    std::fs::rename(&tmp, dir.join(SPEC_FILE))
}

fn load(dir: &Path) -> Result<BisectSpec, String> {
    let path = dir.join(SPEC_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot resume {}: {e} (is it a bisect's folder?)",
            dir.display()
        )
    })?;
    crate::proof::check_spec(dir, SPEC_FILE, text.as_bytes())?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::tournament::spec::check_folder_format(&value, &path)?;
    serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))
}
