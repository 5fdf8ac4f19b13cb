//! Where a run writes and what it plays from: its folder's default name, its book (the
//! default one recorded by absolute path), and the copies of its games (`--pgnout`,
//! `--epdout`) written after it. `crate::run` is the run's life that uses them.

use super::openings::{load_book_as, BookFormat, Opening};
use super::{RunError, RunSpec};
use crate::game::{find_game, GameEntry};
use std::path::{Path, PathBuf};

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

pub fn game_entry(id: &str) -> Result<&'static GameEntry, RunError> {
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
        let games = std::fs::File::open(run_dir.join(super::journal::GAMES_PGN));
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
        super::journal::final_positions(run_dir)
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
