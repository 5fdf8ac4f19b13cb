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
    let games = crate::pgn::ParallelPgn::new(file, detail == Detail::Moves);
    Ok(games.enumerate().filter_map(move |(i, g)| match g {
        Ok(g) => record_of(&g, i, &name)
            .map(|r| {
                r.map(|record| ImportedGame {
                    line: g.line,
                    number: i + 1,
                    record,
                })
            })
            .transpose(),
        Err(e) => Some(Err(format!("{name}:{e}"))),
    }))
}

/// The record of the `i`-th game of the file `name`; `None` for an unfinished game.
fn record_of(g: &PgnGame, i: usize, name: &str) -> Result<Option<GameRecord>, String> {
    let (Some(white), Some(black)) = (g.tag("White"), g.tag("Black")) else {
        return Err(format!(
            "{name}:{}: game {} has no White or Black tag",
            g.line,
            i + 1
        ));
    };
    let Some(outcome) = g.outcome() else {
        return Ok(None);
    };
    let termination = g
        .tag("Termination")
        .and_then(|t| Termination::parse(&t.to_ascii_lowercase()))
        .or_else(
            || match g.tag("Termination").map(str::to_ascii_lowercase).as_deref() {
                Some("time forfeit") => Some(Termination::TimeForfeit),
                Some("adjudication") => Some(Termination::Adjudication),
                Some("resignation") => Some(Termination::Resignation),
                Some("rules infraction") | Some("illegal move") => Some(Termination::IllegalMove),
                // fastchess's and cutechess-cli's word for a crash or a stall.
                Some("abandoned") => Some(Termination::EngineCrash),
                _ => None,
            },
        )
        .unwrap_or(Termination::Unrecorded);
    Ok(Some(GameRecord {
        turnaround_us: Vec::new(),
        overloaded: false,
        pv_warnings: Vec::new(),
        rules: g
            .tag("Rules")
            .map(|r| r.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        game: g.tag("Variant").unwrap_or("unknown").to_string(),
        white: white.to_string(),
        black: black.to_string(),
        start_fen: g.tag("FEN").map(str::to_string),
        moves: g
            .moves
            .iter()
            .map(|m| MoveRecord {
                text: m.clone(),
                ..MoveRecord::default()
            })
            .collect(),
        outcome,
        termination,
        detail: match outcome {
            Outcome::Draw => "draw (imported)".into(),
            _ => format!("{outcome} (imported)"),
        },
        time_control: g.tag("TimeControl").unwrap_or("-").to_string(),
        duration: Duration::ZERO,
        opening: 0,
        round: g
            .tag("Round")
            .and_then(|r| r.parse().ok())
            .unwrap_or(i as u64 + 1),
        date: g.tag("Date").unwrap_or("????.??.??").to_string(),
    }))
}
