//! A run's life, from a checked spec to its reports: `Run::prepare` resolves into the spec
//! everything that decides the games (the book by absolute path, the book's and programs'
//! contents) before anything is written, `Run::open` makes and locks the folder and starts the
//! engines once, and `OpenRun::play` plays with an observer for progress and writes the copies.
//! The command line only parses flags and prints what happens.

use crate::game::GameEntry;
use crate::report::{write_made, Pages, RunInfo};
use crate::tournament::contents::{self, Compare};
use crate::tournament::folder::{self, MadeBeforeEngines, RunFolder};
use crate::tournament::launch::{book_of, game_entry, out_dir, record_default_book, write_copies};
use crate::tournament::merge::{MergeError, Merged};
use crate::tournament::openings::Opening;
use crate::tournament::shelf::{Place, Shelf};
use crate::tournament::{run, Checked, Progress, RunError, RunOptions, RunOutcome, RunSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A run ready to start: its settings complete, its folder chosen, its book loaded.
///
/// A run goes `prepare` (checked, nothing written) → `open` (folder made and locked, engines
/// started) → `play` (games, then reports). Two bundled engines, four games:
///
/// ```no_run
/// use arbiter::engine::EngineConfig;
/// use arbiter::run::Run;
/// use arbiter::tournament::{RunKind, RunSpec};
///
/// let engine = |name: &str| {
///     let settings = [format!("cmd=target/release/arbiter-engine"), format!("name={name}")];
///     EngineConfig::parse(&settings, &["depth=2".to_string()]).unwrap()
/// };
/// let mut spec = RunSpec::new(RunKind::Match, vec![engine("a"), engine("b")]);
/// spec.rounds = 4;
/// let outcome = Run::prepare(spec, None)?.open()?.play(|p| println!("game {}", p.game))?;
/// assert_eq!(outcome.totals.games, 4);
/// # Ok::<(), arbiter::tournament::RunError>(())
/// ```
pub struct Run {
    pub spec: RunSpec,
    /// Where it writes: the run's folder, or a split run's task folder in it.
    pub dir: PathBuf,
    /// It continues the run already in `dir`.
    pub resume: bool,
    /// Every game is played (or its SPRT decided): only the reports are written again, and
    /// its engines need not be on this machine.
    pub finished: bool,
    pub entry: &'static GameEntry,
    /// The book it plays from, and its openings (none: the start position).
    pub book: Option<PathBuf>,
    pub openings: Vec<Opening>,
    /// What was found on the way, for the user (a requeued task continued).
    pub notes: Vec<String>,
    /// Whether its pages for people are written with its games and tables.
    pub pages: Pages,
    /// Where engines left running by an earlier run in this process are kept, and where this
    /// run leaves its own (a bisect's steps); none: every engine is started and ended here.
    pub shelf: Option<Arc<Shelf>>,
}

/// Refuses an output file that is one of the run's own (`--pgnout R/games.pgn --out R` copied
/// the PGN onto itself and left it empty; `--pgnout R/journal.jsonl` replaced the journal).
fn refuse_outputs_onto_the_run(spec: &RunSpec, out_dir: &Path) -> Result<(), RunError> {
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
            return Err(RunError::Setup(format!(
                "{flag} {}: that is a file of the run itself (in {}); write it elsewhere",
                path.display(),
                out_dir.display()
            )));
        }
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError::Setup(format!("cannot start the runtime: {e}")))
}

impl Run {
    /// Checks `spec` and completes it: for a new run the default book by absolute path and the
    /// contents of its files; for a resumed one (`resume`: its folder), its files compared with
    /// the contents it recorded. Nothing is written.
    pub fn prepare(mut spec: RunSpec, resume: Option<&Path>) -> Result<Run, RunError> {
        spec.check_all_but_programs().map_err(RunError::Spec)?;
        let dir = out_dir(&spec, resume);
        if let (None, Some(_), Some(run_dir)) = (resume, spec.shard, dir.parent()) {
            spec.join_order_of(run_dir).map_err(RunError::Setup)?;
        }
        // A finished run resumed writes its reports again: its engines may be gone by now.
        let finished = resume.is_some() && crate::tournament::run::nothing_left(&spec, &dir)?;
        if !finished {
            crate::tournament::spec::check_programs(&spec.engines).map_err(RunError::Spec)?;
        }
        refuse_outputs_onto_the_run(&spec, &dir)?;
        if resume.is_none() {
            record_default_book(&mut spec)?;
            if spec.shard.is_none() {
                spec.copy_base = Some(crate::tournament::spec::CopyBase::now(&spec));
            }
            spec.contents = Some(contents::of(&spec).map_err(RunError::Setup)?);
        } else {
            let compare = match finished {
                true => Compare::BookOnly,
                false => Compare::BookAndPrograms,
            };
            contents::check(&spec, spec.contents.as_ref(), compare).map_err(RunError::Setup)?;
        }
        // A task of a split run started again in its own folder (a requeued cluster task)
        // continues what it had played.
        let mut notes = Vec::new();
        let continued = resume.is_none() && folder::continues_task(&spec, &dir)?;
        if continued {
            notes.push(format!("continuing the shard already in {}", dir.display()));
        }
        let entry = game_entry(&spec.game)?;
        let (book, openings) = book_of(&spec, entry)?;
        Ok(Run {
            spec,
            dir,
            resume: resume.is_some() || continued,
            finished,
            entry,
            book,
            openings,
            notes,
            pages: Pages::Written,
            shelf: None,
        })
    }

    /// The run's folder and log, made before its engines start so that their sandboxes hide
    /// them (a task's folder makes its split run's, which is what they hide).
    fn made_before_engines(&self) -> Result<MadeBeforeEngines, RunError> {
        MadeBeforeEngines::make(&self.dir, self.spec.log.as_deref()).map_err(RunError::Setup)
    }

    /// Every engine started and its handshake completed once, before anything is written; the
    /// processes are kept on a runtime of their own to play the first games.
    /// An engine that fails it leaves what it said on stderr in `--log`, which is kept.
    fn start_engines_once(&self, made: &mut MadeBeforeEngines) -> Result<Checked, RunError> {
        let hidden = crate::engine::sandbox::run_files(
            &self.dir,
            self.spec.shard.is_some(),
            self.spec.log.as_deref(),
        );
        let engines = self.spec.engines_as_played();
        let Some(shelf) = &self.shelf else {
            let runtime = runtime()?;
            let started = runtime.block_on(crate::tournament::preflight(
                &engines,
                self.entry.id,
                &hidden,
                crate::tournament::Started::Once,
            ));
            return match started {
                Ok(started) => Ok(Checked::new(started, runtime)),
                Err(failed) => Err(self.refused(failed, made)),
            };
        };
        // Engines kept between runs are started here, every worker's, on the thread that plays
        // the runs (a worker's thread ends with its run, and its engines with it). Those an
        // earlier run left play again where they are of this run's very configurations; the
        // others stay for a later run, on the runtime that reads them all.
        let confined = crate::engine::sandbox::hide_from_each_other(&engines, &hidden);
        let workers = self
            .spec
            .concurrency
            .min(self.spec.schedule_size().max(1) as usize);
        let mut places = Vec::new();
        for _ in 0..workers.max(1) {
            places.push(match shelf.take() {
                Some(place) => place,
                None => Place {
                    runtime: runtime()?,
                    engines: Vec::new(),
                },
            });
        }
        let mut first = None;
        for place in places {
            let mut spare = place.engines;
            let mut again = Vec::new();
            for (i, config) in confined.iter().enumerate() {
                if let Some(k) = spare.iter().position(|e| e.config() == config) {
                    again.push((i, spare.remove(k)));
                }
            }
            let running: Vec<usize> = again.iter().map(|(i, _)| *i).collect();
            let started = place.runtime.block_on(crate::tournament::preflight(
                &engines,
                self.entry.id,
                &hidden,
                crate::tournament::Started::EachToKeep { running: &running },
            ));
            let mut started = started.map_err(|failed| self.refused(failed, made))?;
            started.extend(again);
            let checked = Checked::new(started, place.runtime).with_spare(spare);
            match first {
                None => first = Some(checked),
                Some(_) => {
                    let (runtime, engines) = checked.take();
                    shelf.put(Place { runtime, engines });
                }
            }
        }
        Ok(first.expect("one worker at least"))
    }

    /// The run refused for an engine that failed its start: what it said on stderr is kept in
    /// `--log`, if there is one.
    fn refused(
        &self,
        failed: crate::tournament::StartFailed,
        made: &mut MadeBeforeEngines,
    ) -> RunError {
        match &self.spec.log {
            Some(log) if failed.log_into(log).is_ok() => {
                made.keep_file(log);
                RunError::Setup(format!(
                    "{}\n  (its stderr is in {} too)",
                    failed.message,
                    log.display()
                ))
            }
            _ => RunError::Setup(failed.message),
        }
    }

    /// What a run checks before it plays, and nothing more: its engines started once and ended.
    /// Nothing is left behind.
    pub fn try_engines(&self) -> Result<(), RunError> {
        let mut made = self.made_before_engines()?;
        self.start_engines_once(&mut made)?.quit();
        Ok(())
    }

    /// Makes the run's folders, starts its engines once (unless it is finished) and opens its
    /// folder: locked, its spec saved, its journal mended. A run refused here leaves no trace.
    pub fn open(self) -> Result<OpenRun, RunError> {
        let runtime = runtime()?;
        let total = self.spec.schedule_size();
        crate::engine::sandbox::games_at_once(self.spec.concurrency.min(total.max(1) as usize));
        crate::tournament::spec::make_output_folders(&self.spec).map_err(RunError::Setup)?;
        let mut made = self.made_before_engines()?;
        let checked = match self.finished {
            true => None,
            false => Some(self.start_engines_once(&mut made)?),
        };
        let folder = RunFolder::open(&self.spec, &self.dir, self.resume)?;
        made.keep();
        let games = self.spec.concurrency.min(total.max(1) as usize);
        let (pinned, unpinned_why) = match (&checked, self.spec.affinity.is_auto()) {
            (Some(checked), true) => match crate::tournament::claim_free_cpus(
                games,
                checked.each_searches_with_one_cpu(&self.spec.engines),
            ) {
                Ok(claimed) => (Some(claimed), None),
                Err(why) => (None, Some(why)),
            },
            _ => (None, None),
        };
        let held = match checked {
            Some(_) => crate::tournament::hold_listed(&self.spec.affinity, games),
            None => Vec::new(),
        };
        Ok(OpenRun {
            run: self,
            folder,
            checked,
            runtime,
            pinned,
            unpinned_why,
            _held: held,
        })
    }
}

/// A run whose folder is held and whose engines are started, ready to play.
pub struct OpenRun {
    pub run: Run,
    folder: RunFolder,
    checked: Option<Checked>,
    runtime: tokio::runtime::Runtime,
    /// The CPUs `--affinity auto` took for the games, held while they play.
    pinned: Option<crate::tournament::ClaimedCpus>,
    /// Why `--affinity auto` left the games unpinned.
    unpinned_why: Option<String>,
    /// The locks of the CPUs `--affinity` gave the games, for `auto` runs to keep off them.
    _held: Vec<std::fs::File>,
}

impl OpenRun {
    /// The default engine `engine` (its index in the run) gave its option `name` when the
    /// start-up check started it, or started the same program for another engine (none when
    /// nothing was started: a run with nothing left).
    pub fn offered_default(&self, engine: usize, name: &str) -> Option<String> {
        let checked = self.checked.as_ref()?;
        let engines = &self.run.spec.engines;
        let wanted = engines.get(engine)?;
        let same_program = |e: &crate::engine::EngineConfig| {
            (&e.cmd, &e.args, &e.dir, e.proto)
                == (&wanted.cmd, &wanted.args, &wanted.dir, wanted.proto)
        };
        (0..engines.len())
            .filter(|&j| same_program(&engines[j]))
            .find_map(|j| checked.offered_default(j, name))
            .map(String::from)
    }

    /// Games already in the journal.
    pub fn games_before(&self) -> u64 {
        self.folder.games_before
    }

    /// What opening the folder found and mended (a torn journal, a requeued task).
    pub fn notes(&self) -> &[String] {
        &self.folder.notes
    }

    /// Why `--affinity auto` did not pin the games, where it did not.
    pub fn auto_unpinned_why(&self) -> Option<&str> {
        self.unpinned_why.as_deref()
    }

    /// The CPUs the games were given by `--affinity auto`, if it pinned them.
    pub fn auto_pinned(&self) -> Option<&[usize]> {
        self.pinned.as_ref().map(|p| p.cpus.as_slice())
    }

    /// Whether engines were started (a finished run starts none).
    pub fn started_engines(&self) -> bool {
        self.checked.is_some()
    }

    /// Plays what is left, telling `on_game` after each game, then writes the reports and, for a
    /// whole run with games to play, the copies (`--pgnout`, `--epdout`; a split run's are
    /// written by `merge`).
    pub fn play(self, on_game: impl FnMut(Progress)) -> Result<RunOutcome, RunError> {
        let OpenRun {
            run: this,
            folder,
            checked,
            runtime,
            pinned,
            unpinned_why: _,
            _held,
        } = self;
        let mut spec = this.spec.clone();
        if let Some(claimed) = &pinned {
            spec.affinity = crate::tournament::Affinity::Cpus(claimed.cpus.clone());
        }
        let mut opts = RunOptions::of(spec, this.entry, this.openings, folder);
        opts.checked = checked;
        opts.shelf = this.shelf.clone();
        let outcome = runtime.block_on(run_made(opts, this.pages, on_game));
        drop((pinned, _held));
        let outcome = outcome?;
        // A finished run resumed has its copies in place already (and other runs may have
        // added to the files since).
        if this.spec.shard.is_none() && !this.finished {
            write_copies(&this.dir, &this.spec)?;
        }
        Ok(outcome)
    }
}

/// Plays `opts` (`tournament::run`), then writes its reports, whatever the end: a run an
/// engine stopped has its reports, then its error.
pub async fn run_reported(
    opts: RunOptions,
    on_game: impl FnMut(Progress),
) -> Result<RunOutcome, RunError> {
    run_made(opts, Pages::Written, on_game).await
}

/// `run_reported`, its pages written only where `pages` says.
async fn run_made(
    opts: RunOptions,
    pages: Pages,
    on_game: impl FnMut(Progress),
) -> Result<RunOutcome, RunError> {
    let dir = opts.folder.dir.clone();
    let spec = opts.spec.clone();
    let mut outcome = run(opts, on_game).await?;
    write_reports_of(&dir, &spec, &outcome, pages)?;
    match outcome.stopped.take() {
        Some(e) => Err(e),
        None => Ok(outcome),
    }
}

/// Writes the reports of a run's games, as they ended, into its folder `dir`.
pub fn write_reports_of(
    dir: &Path,
    spec: &RunSpec,
    outcome: &RunOutcome,
    pages: Pages,
) -> Result<(), RunError> {
    let info = RunInfo::of_run(spec, &outcome.llr, outcome.interrupted, outcome.decision);
    write_made(dir, &outcome.totals, &info, pages).map_err(|e| RunError::Output {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })
}

/// Merges the folders of a split run into `out` (`tournament::merge`), then writes the merged
/// run's reports.
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    merge_with(out, dirs, Pages::Written)
}

/// `merge`, its pages written only where `pages` says.
pub fn merge_with(out: &Path, dirs: &[PathBuf], pages: Pages) -> Result<Merged, MergeError> {
    let merged = crate::tournament::merge::merge(out, dirs)?;
    write_reports_of(out, &merged.spec, &merged.outcome, pages)
        .map_err(|e| MergeError::Input(e.to_string()))?;
    Ok(merged)
}
