//! Games from PGN files (arbiter's, cutechess's, the MIT autotester's) as game records, so that
//! `arbiter rate` rates them and reports on them like a run of its own.

use crate::game::{Outcome, Termination};
use crate::pgn::PgnGame;
use crate::referee::{GameRecord, MoveRecord};
use std::path::Path;
use std::time::Duration;

/// How much of each game to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Players and result: what rating needs (the moves are skipped, not parsed).
    Results,
    /// The moves as well, to be replayed or kept.
    Moves,
}

/// A game read from a PGN file, with where it is.
#[derive(Debug)]
pub struct ImportedGame {
    /// The line its first tag is on.
    pub line: usize,
    /// Its place among the file's games (1-based, unfinished ones counted).
    pub number: usize,
    pub record: GameRecord,
}

/// The finished games (result `1-0`, `0-1` or `1/2-1/2`) of a PGN file, one at a time: memory
/// holds one game however many the file has. Unfinished games (`*`) are skipped; a malformed
/// file, or a game without players, is an error naming file and line.
pub fn pgn_records(
    path: &Path,
    detail: Detail,
) -> Result<impl Iterator<Item = Result<ImportedGame, String>>, String> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let games = crate::pgn::file_games(file, detail == Detail::Moves);
    Ok(games.enumerate().filter_map(move |(i, g)| match g {
        Ok(g) => {
            let line = g.line;
            record_of(g, i, &name)
                .map(|r| {
                    r.map(|record| ImportedGame {
                        line,
                        number: i + 1,
                        record,
                    })
                })
                .transpose()
        }
        Err(e) => Some(Err(format!("{name}:{e}"))),
    }))
}

/// The record of the `i`-th game of the file `name`; `None` for an unfinished game. The game's
/// tags are moved into the record, not copied.
fn record_of(g: PgnGame, i: usize, name: &str) -> Result<Option<GameRecord>, String> {
    let line = g.line;
    let outcome = g.outcome();
    let mut tags = Tags(g.tags);
    let (Some(white), Some(black)) = (tags.take("White"), tags.take("Black")) else {
        return Err(format!(
            "{name}:{line}: game {} has no White or Black tag",
            i + 1
        ));
    };
    let Some(outcome) = outcome else {
        return Ok(None);
    };
    let termination = tags
        .take("Termination")
        .map(|t| t.to_ascii_lowercase())
        .and_then(|t| {
            Termination::parse(&t).or(match t.as_str() {
                "time forfeit" => Some(Termination::TimeForfeit),
                "adjudication" => Some(Termination::Adjudication),
                "resignation" => Some(Termination::Resignation),
                "rules infraction" | "illegal move" => Some(Termination::IllegalMove),
                // fastchess's and cutechess-cli's word for a crash or a stall.
                "abandoned" => Some(Termination::EngineCrash),
                _ => None,
            })
        })
        .unwrap_or(Termination::Unrecorded);
    Ok(Some(GameRecord {
        turnaround_us: Vec::new(),
        overloaded: false,
        pv_warnings: Vec::new(),
        rules: tags
            .take("Rules")
            .map(|r| r.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        game: tags.take("Variant").unwrap_or_else(|| "unknown".into()),
        white,
        black,
        start_fen: tags.take("FEN"),
        moves: g
            .moves
            .into_iter()
            .map(|text| MoveRecord {
                text,
                ..MoveRecord::default()
            })
            .collect(),
        outcome,
        termination,
        detail: match outcome {
            Outcome::Draw => "draw (imported)",
            Outcome::WhiteWins => "1-0 (imported)",
            Outcome::BlackWins => "0-1 (imported)",
        }
        .into(),
        time_control: tags.take("TimeControl").unwrap_or_else(|| "-".into()),
        duration: Duration::ZERO,
        opening: 0,
        round: tags
            .take("Round")
            .and_then(|r| r.parse().ok())
            .unwrap_or(i as u64 + 1),
        date: tags.take("Date").unwrap_or_else(|| "????.??.??".into()),
    }))
}

/// A game's tags, each taken out once: the first of a name, as `PgnGame::tag` finds it.
struct Tags(Vec<(String, String)>);

impl Tags {
    fn take(&mut self, name: &str) -> Option<String> {
        let (_, value) = self
            .0
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))?;
        Some(std::mem::take(value))
    }
}
