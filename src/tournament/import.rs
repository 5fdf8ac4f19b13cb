//! Games from PGN files (arbiter's, cutechess's, the MIT autotester's) as game records, so that
//! `arbiter rate` rates them and reports on them like a run of its own.

use crate::game::{Outcome, Termination};
use crate::pgn::read_games;
use crate::referee::{GameRecord, MoveRecord};
use std::path::Path;
use std::time::Duration;

/// Reads finished games (result `1-0`, `0-1` or `1/2-1/2`) from a PGN file; unfinished ones (`*`)
/// are skipped. A malformed file, or a game without players, is an error naming file and line.
pub fn read_pgn_records(path: &Path) -> Result<Vec<GameRecord>, String> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let games = read_games(&text).map_err(|e| format!("{name}:{e}"))?;
    let mut records = Vec::new();
    for (i, g) in games.iter().enumerate() {
        let (Some(white), Some(black)) = (g.tag("White"), g.tag("Black")) else {
            return Err(format!(
                "{name}:{}: game {} has no White or Black tag",
                g.line,
                i + 1
            ));
        };
        let Some(outcome) = g.outcome() else { continue };
        let termination = g
            .tag("Termination")
            .and_then(|t| Termination::parse(&t.to_ascii_lowercase()))
            .or_else(
                || match g.tag("Termination").map(str::to_ascii_lowercase).as_deref() {
                    Some("time forfeit") => Some(Termination::TimeForfeit),
                    Some("adjudication") => Some(Termination::Adjudication),
                    Some("resignation") => Some(Termination::Resignation),
                    Some("rules infraction") | Some("illegal move") => {
                        Some(Termination::IllegalMove)
                    }
                    _ => None,
                },
            )
            .unwrap_or(Termination::Unrecorded);
        records.push(GameRecord {
            turnaround_us: Vec::new(),
            rules: Vec::new(),
            game: g.tag("Variant").unwrap_or("unknown").to_string(),
            white: white.to_string(),
            black: black.to_string(),
            start_fen: g.tag("FEN").map(str::to_string),
            moves: g
                .moves
                .iter()
                .map(|m| MoveRecord {
                    text: m.clone(),
                    book: false,
                    score: None,
                    depth: None,
                    elapsed: Duration::ZERO,
                    reported_us: None,
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
        });
    }
    Ok(records)
}
