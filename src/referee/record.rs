//! The record of one refereed game: what PGN, CSV and the statistics are made from.

use crate::game::{Outcome, Termination};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Durations stored as whole microseconds.
mod micros {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_micros() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_micros(u64::deserialize(d)?))
    }
}

/// One move as played: its text, and what the engine said about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub text: String,
    /// From the opening book rather than an engine.
    pub book: bool,
    /// The engine's score (centipawns, its own point of view) and depth, if it said.
    pub score: Option<crate::engine::Score>,
    pub depth: Option<u32>,
    /// Thinking time as the referee measured it.
    #[serde(with = "micros")]
    pub elapsed: Duration,
    /// Thinking time as the engine reported it (microseconds), if it did.
    pub reported_us: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub game: String,
    pub white: String,
    pub black: String,
    /// The start position when it is not the game's standard start.
    pub start_fen: Option<String>,
    pub moves: Vec<MoveRecord>,
    pub outcome: Outcome,
    pub termination: Termination,
    /// A sentence for people: who did what ("Black sent an illegal move: a1a1 ...").
    pub detail: String,
    pub time_control: String,
    #[serde(with = "micros")]
    pub duration: Duration,
    /// The opening's number in the book (1-based; 0 for the start position).
    pub opening: usize,
    pub round: u64,
    pub date: String,
    /// The game's rule options when not its defaults (`repetition=fairy-stockfish`), as the
    /// PGN's `Rules` tag names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// The referee's own time between reading one engine's move and having asked the other
    /// for its reply (microseconds), per engine move after the first: what arbiter adds to a
    /// game. Measured only while playing; not kept in the journal.
    #[serde(skip)]
    pub turnaround_us: Vec<u32>,
}

impl GameRecord {
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// The position the game ended in, replayed by the rules up to the first move that does
    /// not replay (None if the game or its start is unknown).
    pub fn final_fen(&self) -> Option<String> {
        let mut game = crate::game::find_game(&self.game)?
            .new_game(self.start_fen.as_deref())
            .ok()?;
        for mv in &self.moves {
            if game.play(&mv.text).is_err() {
                break;
            }
        }
        Some(game.fen())
    }

    /// The opening as a book line: `fen <FEN> moves ...` from a set position, else the book
    /// moves; empty for the standard start without book moves.
    pub fn opening_text(&self) -> String {
        let book: Vec<&str> = self
            .moves
            .iter()
            .take_while(|m| m.book)
            .map(|m| m.text.as_str())
            .collect();
        match &self.start_fen {
            Some(fen) if book.is_empty() => format!("fen {fen}"),
            Some(fen) => format!("fen {fen} moves {}", book.join(" ")),
            None => book.join(" "),
        }
    }
}

/// Today's date as `YYYY.MM.DD` (PGN's format), from the system clock, in UTC.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Civil-from-days (proleptic Gregorian), after Howard Hinnant's published algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}
