//! A run's life, from a checked spec to its reports: `Run::prepare` resolves into the spec
//! everything that decides the games (the book by absolute path, the book's and programs'
//! contents) before anything is written, `Run::open` makes and locks the folder and starts the
//! engines once, and `OpenRun::play` plays with an observer for progress and writes the copies.
//! The command line only parses flags and prints what happens.

use super::contents::{self, Compare};
use super::folder::{self, MadeBeforeEngines, RunFolder};
use super::openings::{load_book_as, BookFormat, Opening};
use super::{run, Checked, Progress, RunError, RunOptions, RunOutcome, RunSpec};
use crate::game::{find_game, GameEntry};
use std::path::{Path, PathBuf};

/// A run ready to start: its settings complete, its folder chosen, its book loaded.
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
}

/// A folder reports/<kind>-<game>-<date>-<time>[-n] (UTC) not there yet, for a run given no
/// name or folder: runs started one after another in the same second each get their own. (It is
/// created only once the run is accepted; a refused run leaves nothing.)
pub fn default_dir(kind: &str, game: &str) -> PathBuf {
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
pub fn out_dir(spec: &RunSpec, resume: Option<&Path>) -> PathBuf {
    if let Some(dir) = resume {
        return dir.to_path_buf();
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

fn game_entry(id: &str) -> Result<&'static GameEntry, RunError> {
    find_game(id).ok_or_else(|| RunError::Setup(format!("unknown game '{id}'")))
}

/// The default book, openings/<game>.txt in the folder arbiter is started in, when it is there.
fn default_book(entry: &GameEntry) -> Option<PathBuf> {
    let default = PathBuf::from(format!("openings/{}.txt", entry.id));
    default.is_file().then_some(default)
}

/// How a run's book reads: as its spec says, else as its name says.
pub fn book_format(spec: &RunSpec, path: &Path) -> BookFormat {
    spec.book_format
        .unwrap_or_else(|| BookFormat::of_name(path))
}

/// The book a run plays from: its `openings`, else (unless it has none) the default book if
/// it exists.
pub fn book_of(
    spec: &RunSpec,
    entry: &'static GameEntry,
) -> Result<(Option<PathBuf>, Vec<Opening>), RunError> {
    let book = match spec.no_book {
        true => None,
        false => spec.openings.clone().or_else(|| default_book(entry)),
    };
    let openings = match &book {
        Some(path) => load_book_as(path, book_format(spec, path), entry, spec.book_plies)
            .map_err(|e| RunError::Setup(e.to_string()))?,
        None => Vec::new(),
    };
    Ok((book, openings))
}

/// A new run that would play from the default book names it in its settings, by absolute
/// path, so that run.json holds everything that decides its games: `merge` and `--resume` from
/// any folder read the same book.
pub fn record_default_book(spec: &mut RunSpec) -> Result<(), RunError> {
    if spec.openings.is_some() || spec.no_book {
        return Ok(());
    }
    if let Some(default) = default_book(game_entry(&spec.game)?) {
        let absolute = default
            .canonicalize()
            .map_err(|e| RunError::Setup(format!("{}: {e}", default.display())))?;
        spec.openings = Some(absolute);
    }
    Ok(())
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

/// `--pgnout` and `--epdout`: the run's games and final positions, copied out of its folder
/// after what the files held when the run started (`copy_base`), as cutechess-cli and fastchess
/// add to them; written again whole, so a resumed run or a second merge leaves each game once.
pub fn write_copies(run_dir: &Path, spec: &RunSpec) -> Result<(), RunError> {
    let cannot_write = |path: &Path, e: std::io::Error| RunError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let base = spec.copy_base.unwrap_or_default();
    if let Some(path) = &spec.pgnout {
        let games = std::fs::File::open(run_dir.join(crate::report::files::GAMES_PGN));
        games
            .and_then(|games| {
                let mut games = std::io::BufReader::new(games);
                if spec.pgnout_min {
                    write_after(path, base.pgn, &mut crate::pgn::Uncommented::new(games))
                } else {
                    write_after(path, base.pgn, &mut games)
                }
            })
            .map_err(|e| cannot_write(path, e))?;
    }
    if let Some(path) = &spec.epdout {
        crate::report::final_positions(run_dir)
            .and_then(|text| write_after(path, base.epd, &mut text.as_bytes()))
            .map_err(|e| cannot_write(path, e))?;
    }
    Ok(())
}

/// Writes `content` into `path` after its first `base` bytes (fewer if it has been cut since).
fn write_after(path: &Path, base: u64, content: &mut impl std::io::Read) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    let mut file = crate::output::open_own(path, false)?;
    let kept = base.min(file.metadata()?.len());
    file.set_len(kept)?;
    file.seek(std::io::SeekFrom::Start(kept))?;
    let mut out = std::io::BufWriter::new(file);
    std::io::copy(content, &mut out)?;
    out.flush()
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
        // A finished run resumed writes its reports again: its engines may be gone by now.
        let finished = resume.is_some() && super::run::nothing_left(&spec, &dir)?;
        if !finished {
            super::spec::check_programs(&spec.engines).map_err(RunError::Spec)?;
        }
        refuse_outputs_onto_the_run(&spec, &dir)?;
        if resume.is_none() {
            record_default_book(&mut spec)?;
            if spec.shard.is_none() {
                spec.copy_base = Some(super::spec::CopyBase::now(&spec));
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
        let runtime = runtime()?;
        let engines = self.spec.engines_as_played();
        let started = runtime.block_on(super::preflight(&engines, self.entry.id, &hidden));
        match (started, &self.spec.log) {
            (Ok(engines), _) => Ok(Checked::new(engines, runtime)),
            (Err(failed), Some(log)) if failed.log_into(log).is_ok() => {
                made.keep_file(log);
                Err(RunError::Setup(format!(
                    "{}\n  (its stderr is in {} too)",
                    failed.message,
                    log.display()
                )))
            }
            (Err(failed), _) => Err(RunError::Setup(failed.message)),
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
        super::spec::make_output_folders(&self.spec).map_err(RunError::Setup)?;
        let mut made = self.made_before_engines()?;
        let checked = match self.finished {
            true => None,
            false => Some(self.start_engines_once(&mut made)?),
        };
        let folder = RunFolder::open(&self.spec, &self.dir, self.resume)?;
        made.keep();
        let games = self.spec.concurrency.min(total.max(1) as usize);
        let (pinned, unpinned_why) = match (&checked, self.spec.affinity.is_auto()) {
            (Some(checked), true) => match super::claim_free_cpus(
                games,
                checked.each_searches_with_one_cpu(&self.spec.engines),
            ) {
                Ok(claimed) => (Some(claimed), None),
                Err(why) => (None, Some(why)),
            },
            _ => (None, None),
        };
        let held = match checked {
            Some(_) => super::hold_listed(&self.spec.affinity, games),
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
    pinned: Option<super::ClaimedCpus>,
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
            spec.affinity = super::Affinity::Cpus(claimed.cpus.clone());
        }
        let mut opts = RunOptions::of(spec, this.entry, this.openings, folder);
        opts.checked = checked;
        let outcome = runtime.block_on(run(opts, on_game));
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
