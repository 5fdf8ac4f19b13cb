//! A tune's life, in the shape of a run's (`launch::Run`) and a bisect's: prepared (settings,
//! book and the engine's options checked, nothing written), opened (its folder locked, its
//! settings saved), played, and its files written whatever the end. The command line only parses
//! and prints around it.

use super::journal::PAIRS_FILE;
use super::play::{nothing_left, TuneOptions, TuneOutcome, TuneProgress};
use super::spec::TuneSpec;
use super::TuneError;
use crate::engine::options::OptionKind;
use crate::engine::EngineProcess;
use crate::game::GameEntry;
use crate::tournament::openings::Opening;
use crate::tournament::{launch, lock_run_dir, RunLock, RunSpec};
use std::path::{Path, PathBuf};

/// A tune checked and ready to open: nothing written yet. It goes `prepare` → `open` →
/// `play`, as a run and a bisect do; here with the settings another tune kept (`tune.json`),
/// in a folder of its own:
///
/// ```no_run
/// use arbiter::tune::{Tune, TuneSpec};
///
/// let text = std::fs::read_to_string("reports/old-tune/tune.json").unwrap();
/// let mut spec: TuneSpec = serde_json::from_str(&text).unwrap();
/// spec.run.out = Some("reports/new-tune".into());
/// let outcome = Tune::prepare(spec, None)?.open()?.play(|_| {})?;
/// # let _ = outcome;
/// # Ok::<(), arbiter::tune::TuneError>(())
/// ```
pub struct Tune {
    spec: TuneSpec,
    resume: Option<PathBuf>,
    entry: &'static GameEntry,
    book: Option<PathBuf>,
    openings: Vec<Opening>,
    /// The tune's folder, and the one this process writes (a task's own, inside it, for a split
    /// tune).
    root: PathBuf,
    mine: PathBuf,
}

/// A tune whose folder this process holds.
pub struct OpenTune {
    tune: Tune,
    _lock: RunLock,
}

impl Tune {
    /// Checks the tune's settings, its book, and (unless it is finished) each tuned parameter
    /// against the options the engine offers, starting the engine once; each parameter learns
    /// there whether it is a whole number. `resume`: the folder it continues.
    pub fn prepare(mut spec: TuneSpec, resume: Option<&Path>) -> Result<Tune, TuneError> {
        // A finished tune resumed only writes its files again: its engine may be gone, and the
        // kinds of its parameters were learnt when it started (tune.json keeps them).
        let finished = resume.is_some_and(|dir| nothing_left(&spec, dir));
        match finished {
            true => spec.check_all_but_programs(),
            false => spec.check(),
        }
        .map_err(TuneError::Spec)?;
        let entry = crate::game::find_game(&spec.run.game)
            .ok_or_else(|| TuneError::Setup(format!("unknown game '{}'", spec.run.game)))?;
        if resume.is_none() {
            launch::record_default_book(&mut spec.run)?;
        }
        let (book, openings) = launch::book_of(&spec.run, entry)?;
        if !finished {
            learn_engine_options(&mut spec, entry.id)?;
        }
        let (root, mine) = folders(&spec.run, resume);
        Ok(Tune {
            spec,
            resume: resume.map(Path::to_path_buf),
            entry,
            book,
            openings,
            root,
            mine,
        })
    }

    pub fn spec(&self) -> &TuneSpec {
        &self.spec
    }

    /// The book the pairs open from (None: the start position), and its openings.
    pub fn book(&self) -> (Option<&Path>, usize) {
        (self.book.as_deref(), self.openings.len())
    }

    /// The folder this process writes.
    pub fn folder(&self) -> &Path {
        &self.mine
    }

    /// Locks the folder this process writes and saves the settings there; a new tune is refused
    /// over an old one. A requeued task of a split tune continues its own folder.
    pub fn open(self) -> Result<OpenTune, TuneError> {
        let mine = &self.mine;
        let lock = lock_run_dir(mine).map_err(TuneError::Setup)?;
        let continuing = self.resume.is_some()
            || (self.spec.run.shard.is_some()
                && TuneSpec::load(mine).is_ok_and(|s| s.identity() == self.spec.identity()));
        if mine.join(PAIRS_FILE).exists() && !continuing {
            return Err(TuneError::Setup(format!(
                "{} already holds a tune: continue it with --resume {}, or choose another \
                 --name/--out",
                mine.display(),
                mine.display()
            )));
        }
        self.spec.save(mine).map_err(|e| TuneError::Output {
            path: mine.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(OpenTune {
            tune: self,
            _lock: lock,
        })
    }
}

impl OpenTune {
    /// Plays the tune's pairs until they are done or a signal stops it, then writes its files
    /// (in the tune's folder) whatever the end.
    pub fn play(self, on_pair: impl FnMut(TuneProgress)) -> Result<TuneOutcome, TuneError> {
        let tune = &self.tune;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TuneError::Setup(format!("cannot start the runtime: {e}")))?;
        let opts = TuneOptions {
            spec: tune.spec.clone(),
            entry: tune.entry,
            openings: tune.openings.clone(),
            dir: tune.mine.clone(),
        };
        let outcome = runtime.block_on(super::tune(opts, on_pair))?;
        super::report::write(
            &tune.root,
            &tune.spec,
            &outcome.thetas,
            outcome.score,
            !outcome.interrupted,
        )
        .map_err(|e| TuneError::Output {
            path: tune.root.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(outcome)
    }

    /// The tune's own folder (where its files are; a split tune's, not the task's).
    pub fn root(&self) -> &Path {
        &self.tune.root
    }
}

/// The match that verifies a tune: an SPRT of the values `theta` against the start values, as
/// `match --sprt` plays it, in `<root>/verify`; with the folder to resume when it was begun.
pub fn verify_run(spec: &TuneSpec, theta: &[f64], root: &Path) -> (RunSpec, Option<PathBuf>) {
    let mut tuned = spec.seat(true, theta);
    tuned.name = format!("{}-tuned", spec.engine().name);
    let mut untuned = spec.seat(false, &spec.spsa().start());
    untuned.name = format!("{}-start", spec.engine().name);
    let mut run = spec.run.clone();
    run.engines = vec![tuned, untuned];
    run.games = Some(spec.verify_games);
    run.rounds = spec.verify_games.div_ceil(2).max(1);
    run.sprt = spec.verify;
    let dir = root.join("verify");
    run.out = Some(dir.clone());
    run.name = None;
    run.shard = None;
    let begun = dir.join(crate::tournament::journal::JOURNAL_FILE).exists();
    (run, begun.then_some(dir))
}

/// The tune's folder (`--out`, `reports/<name>`, else a new one), and the folder this process
/// writes: a task's own inside it for a split tune.
fn folders(spec: &RunSpec, resume: Option<&Path>) -> (PathBuf, PathBuf) {
    if let Some(dir) = resume {
        return match spec.shard {
            Some(_) => (
                dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
                dir.to_path_buf(),
            ),
            None => (dir.to_path_buf(), dir.to_path_buf()),
        };
    }
    let root = match (&spec.out, &spec.name) {
        (Some(out), _) => out.clone(),
        (None, Some(name)) => Path::new("reports").join(name),
        (None, None) => launch::default_dir("tune", &spec.game),
    };
    let mine = match spec.shard {
        Some(shard) => root.join(shard.folder()),
        None => root.clone(),
    };
    (root, mine)
}

/// Starts the engine once and checks each parameter against the options it offers; marks the
/// ones it takes as whole numbers.
fn learn_engine_options(spec: &mut TuneSpec, game: &str) -> Result<(), TuneError> {
    let cfg = spec.engine().clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TuneError::Setup(format!("cannot start the runtime: {e}")))?;
    let offered = runtime.block_on(async {
        match EngineProcess::start(&cfg, game, None).await {
            Ok(engine) => {
                let offered = engine.offered().to_vec();
                engine.quit().await;
                Ok(offered)
            }
            Err(e) => Err(TuneError::Setup(format!(
                "engine start-up check failed: {e}"
            ))),
        }
    })?;
    for p in &mut spec.params {
        let refuse = |why: String| TuneError::Setup(format!("--param {}: {why}", p.name));
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
