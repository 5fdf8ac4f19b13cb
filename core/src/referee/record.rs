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

/// A game's moves in a journal as one line of text, a token per move separated by spaces, so
/// that a 100-ply game takes about 1.5 KB rather than 5 KB of JSON objects:
///
/// - a book move is its text alone: `e2e4`;
/// - an engine move is `TEXT@ELAPSED`, the referee's measured thinking time in microseconds,
///   then, when the engine said them, `:SCORE` (centipawns from its point of view, or `#N` for
///   a mate in N, negative when being mated), `/DEPTH` and `~REPORTED` (its own time, in
///   microseconds): `d6e5@1834:-12/7~1000`.
///
/// Moves that cannot be written so (a move text holding one of ` @:/~#`, a book move after an
/// engine move, or a book move with a time or score) keep the whole list as JSON objects, which
/// is also what older journals hold: both are read.
mod compact_moves {
    use super::MoveRecord;
    use crate::engine::Score;
    use serde::de::{self, SeqAccess, Visitor};
    use serde::{Deserializer, Serialize, Serializer};
    use std::time::Duration;

    const RESERVED: &[char] = &[' ', '@', ':', '/', '~', '#'];

    fn writable(moves: &[MoveRecord]) -> bool {
        let book_prefix = moves.iter().take_while(|m| m.book).count();
        moves.iter().all(|m| {
            !m.text.is_empty() && !m.text.contains(RESERVED) && !m.text.contains(char::is_control)
        }) && moves[book_prefix..].iter().all(|m| !m.book)
            && moves[..book_prefix].iter().all(|m| {
                m.elapsed.is_zero()
                    && m.score.is_none()
                    && m.depth.is_none()
                    && m.reported_us.is_none()
            })
            // What only some runs ask to keep goes in the long form: its lines are any text.
            && moves
                .iter()
                .all(|m| m.nodes.is_none() && m.seldepth.is_none() && m.lines.is_empty())
    }

    pub fn serialize<S: Serializer>(moves: &Vec<MoveRecord>, s: S) -> Result<S::Ok, S::Error> {
        if !writable(moves) {
            return moves.serialize(s);
        }
        let mut text = String::with_capacity(moves.len() * 16);
        // Numbers through itoa rather than the formatter: every finished game is written so.
        let mut digits = itoa::Buffer::new();
        for (i, m) in moves.iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(&m.text);
            if m.book {
                continue;
            }
            text.push('@');
            text.push_str(digits.format(m.elapsed.as_micros()));
            match m.score {
                Some(Score::Centipawns(cp)) => {
                    text.push(':');
                    text.push_str(digits.format(cp));
                }
                Some(Score::Mate(n)) => {
                    text.push_str(":#");
                    text.push_str(digits.format(n));
                }
                None => {}
            }
            if let Some(d) = m.depth {
                text.push('/');
                text.push_str(digits.format(d));
            }
            if let Some(r) = m.reported_us {
                text.push('~');
                text.push_str(digits.format(r));
            }
        }
        s.serialize_str(&text)
    }

    /// One token back into a move. The marks after the time are found in one pass: the first
    /// `~` ends the rest, the first `/` before it starts the depth, the first `:` before that
    /// the score (journals are read whole on every report and resume; this is their hot loop).
    fn token(t: &str) -> Result<MoveRecord, String> {
        let bad = || format!("move token '{t}' is not TEXT[@US[:SCORE][/DEPTH][~US]]");
        // A byte search: `str::find` sets up a char searcher, which costs more than these few
        // bytes (a move's text) take to look at.
        let Some(at) = t.bytes().position(|b| b == b'@') else {
            return Ok(MoveRecord {
                text: t.to_string(),
                book: true,
                ..MoveRecord::default()
            });
        };
        let (text, rest) = (&t[..at], &t[at + 1..]);
        let (mut colon, mut slash, mut tilde) = (None, None, rest.len());
        for (i, &b) in rest.as_bytes().iter().enumerate() {
            match b {
                b'~' => {
                    tilde = i;
                    break;
                }
                b'/' if slash.is_none() => slash = Some(i),
                b':' if colon.is_none() && slash.is_none() => colon = Some(i),
                _ => {}
            }
        }
        let reported = match rest.get(tilde + 1..) {
            Some(n) if tilde < rest.len() => Some(n.parse::<u64>().map_err(|_| bad())?),
            _ => None,
        };
        let end = slash.unwrap_or(tilde);
        let depth = match slash {
            Some(at) => Some(rest[at + 1..tilde].parse::<u32>().map_err(|_| bad())?),
            None => None,
        };
        let (elapsed, score) = match colon {
            Some(at) => {
                let sc = &rest[at + 1..end];
                let score = match sc.strip_prefix('#') {
                    Some(n) => Score::Mate(n.parse().map_err(|_| bad())?),
                    None => Score::Centipawns(sc.parse().map_err(|_| bad())?),
                };
                (&rest[..at], Some(score))
            }
            None => (&rest[..end], None),
        };
        Ok(MoveRecord {
            text: text.to_string(),
            book: false,
            score,
            depth,
            elapsed: Duration::from_micros(elapsed.parse().map_err(|_| bad())?),
            reported_us: reported,
            ..MoveRecord::default()
        })
    }

    /// The old three-split reading, kept to hold the one-pass reading to it.
    #[cfg(test)]
    pub(super) fn token_by_splits(t: &str) -> Option<MoveRecord> {
        let Some((text, rest)) = t.split_once('@') else {
            return token(t).ok();
        };
        let (rest, reported) = match rest.split_once('~') {
            Some((r, n)) => (r, Some(n.parse::<u64>().ok()?)),
            None => (rest, None),
        };
        let (rest, depth) = match rest.split_once('/') {
            Some((r, n)) => (r, Some(n.parse::<u32>().ok()?)),
            None => (rest, None),
        };
        let (elapsed, score) = match rest.split_once(':') {
            Some((e, sc)) => {
                let score = match sc.strip_prefix('#') {
                    Some(n) => Score::Mate(n.parse().ok()?),
                    None => Score::Centipawns(sc.parse().ok()?),
                };
                (e, Some(score))
            }
            None => (rest, None),
        };
        Some(MoveRecord {
            text: text.to_string(),
            book: false,
            score,
            depth,
            elapsed: Duration::from_micros(elapsed.parse().ok()?),
            reported_us: reported,
            ..MoveRecord::default()
        })
    }

    #[cfg(test)]
    pub(super) fn token_for_test(t: &str) -> Option<MoveRecord> {
        token(t).ok()
    }

    struct Moves;

    impl<'de> Visitor<'de> for Moves {
        type Value = Vec<MoveRecord>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string of move tokens, or a list of moves")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            let mut moves = Vec::with_capacity(v.bytes().filter(|&b| b == b' ').count() + 1);
            for t in v.split(' ').filter(|t| !t.is_empty()) {
                moves.push(token(t).map_err(E::custom)?);
            }
            Ok(moves)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut moves = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(m) = seq.next_element::<MoveRecord>()? {
                moves.push(m);
            }
            Ok(moves)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<MoveRecord>, D::Error> {
        d.deserialize_any(Moves)
    }
}

/// One move as played: its text, and what the engine said about it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Nodes searched and selective depth, kept where the run asks (`--pgn-nodes`,
    /// `--pgn-seldepth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seldepth: Option<u32>,
    /// The engine's output lines the run's `--pgn-line` patterns matched during the search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub game: String,
    pub white: String,
    pub black: String,
    /// The start position when it is not the game's standard start.
    pub start_fen: Option<String>,
    /// In a journal, one string of move tokens (see `compact_moves`).
    #[serde(with = "compact_moves")]
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
    /// Played on a machine overloaded for its clock (`tournament::overload`): kept, so that
    /// every report of the run can say so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overloaded: bool,
    /// fastchess's warnings on the lines the engines reported (`--check-pvs`), printed as the
    /// game ends; not kept in the journal.
    #[serde(skip)]
    pub pv_warnings: Vec<String>,
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
    let (year, month, day) = civil_date(now_secs() / 86_400);
    format!("{year:04}.{month:02}.{day:02}")
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The date (UTC) `days` after 1970-01-01: civil-from-days (proleptic Gregorian), after Howard
/// Hinnant's published algorithm.
fn civil_date(days: u64) -> (i64, i64, i64) {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Now (UTC) as a folder name reads it: `2026-11-24-124512`.
pub fn now_for_names() -> String {
    name_of_time(now_secs())
}

fn name_of_time(secs: u64) -> String {
    let (year, month, day) = civil_date(secs / 86_400);
    let t = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}-{:02}{:02}{:02}",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

#[cfg(test)]
mod time_name_tests {
    #[test]
    fn folder_names_read_as_dates_and_times() {
        assert_eq!(super::name_of_time(0), "1970-01-01-000000");
        assert_eq!(super::name_of_time(1_795_449_125), "2026-11-23-155205");
    }
}

#[cfg(test)]
mod journal_form_tests {
    use super::*;
    use crate::engine::Score;

    fn mv(
        text: &str,
        book: bool,
        score: Option<Score>,
        depth: Option<u32>,
        us: u64,
        rep: Option<u64>,
    ) -> MoveRecord {
        MoveRecord {
            text: text.into(),
            book,
            score,
            depth,
            elapsed: Duration::from_micros(us),
            reported_us: rep,
            ..MoveRecord::default()
        }
    }

    fn record(moves: Vec<MoveRecord>) -> GameRecord {
        GameRecord {
            game: "chess".into(),
            white: "a".into(),
            black: "b".into(),
            start_fen: None,
            moves,
            outcome: Outcome::Draw,
            termination: Termination::MaxPlies,
            detail: String::new(),
            time_control: "-".into(),
            duration: Duration::from_micros(5),
            opening: 0,
            round: 1,
            date: "2026.11.23".into(),
            rules: Vec::new(),
            turnaround_us: Vec::new(),
            overloaded: false,
            pv_warnings: Vec::new(),
        }
    }

    #[test]
    fn moves_are_one_line_of_tokens_and_read_back_exactly() {
        let game = record(vec![
            mv("e2e4", true, None, None, 0, None),
            mv("e7e5", true, None, None, 0, None),
            mv(
                "g1f3",
                false,
                Some(Score::Centipawns(-12)),
                Some(7),
                1834,
                Some(1000),
            ),
            mv("b8c6", false, Some(Score::Mate(-3)), None, 5, None),
            mv("f1b5", false, None, Some(2), 0, Some(0)),
            mv(
                "a7a6",
                false,
                Some(Score::Mate(4)),
                Some(30),
                123456789,
                None,
            ),
        ]);
        let line = serde_json::to_string(&game).unwrap();
        assert!(
            line.contains(r#""moves":"e2e4 e7e5 g1f3@1834:-12/7~1000 b8c6@5:#-3 f1b5@0/2~0 a7a6@123456789:#4/30""#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<GameRecord>(&line).unwrap(), game);
        // A move text the tokens cannot hold keeps the objects, read back as well.
        let odd = record(vec![mv("P@e4", false, None, None, 3, None)]);
        let line = serde_json::to_string(&odd).unwrap();
        assert!(line.contains(r#""moves":[{"text":"P@e4""#), "{line}");
        assert_eq!(serde_json::from_str::<GameRecord>(&line).unwrap(), odd);
        // So do moves with what `--pgn-nodes`, `--pgn-seldepth` and `--pgn-line` keep: any text.
        let mut kept = mv("g1f3", false, None, Some(7), 1834, None);
        kept.nodes = Some(12345);
        kept.seldepth = Some(11);
        kept.lines = vec!["info string pgncomment a b@c:d/e~f \"q\"".into()];
        let kept = record(vec![mv("e2e4", true, None, None, 0, None), kept]);
        let line = serde_json::to_string(&kept).unwrap();
        assert!(
            line.contains(r#""nodes":12345,"seldepth":11,"lines":["#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<GameRecord>(&line).unwrap(), kept);
        // An older journal's objects are read as they were written.
        let old = r#"{"game":"chess","white":"a","black":"b","start_fen":null,"moves":[{"text":"e2e4","book":false,"score":{"Centipawns":5},"depth":1,"elapsed":249,"reported_us":null}],"outcome":"1/2-1/2","termination":"max plies","detail":"","time_control":"-","duration":5,"opening":0,"round":1,"date":"2026.11.23"}"#;
        let read = serde_json::from_str::<GameRecord>(old).unwrap();
        assert_eq!(
            read.moves,
            vec![mv(
                "e2e4",
                false,
                Some(Score::Centipawns(5)),
                Some(1),
                249,
                None
            )]
        );
        let bad = old.replace(r#"[{"text":"e2e4","book":false,"score":{"Centipawns":5},"depth":1,"elapsed":249,"reported_us":null}]"#, r#""e2e4@x""#);
        assert!(serde_json::from_str::<GameRecord>(&bad).is_err());
    }
}

#[cfg(test)]
mod token_reading_tests {
    use proptest::prelude::*;

    proptest! {
        /// The one-pass reading of a move token agrees with reading it by three splits, on
        /// tokens made of the marks, digits, signs and letters in any order.
        #[test]
        fn one_pass_reads_as_the_splits_did(t in "[a-h1-8@:/~#+-]{0,14}") {
            prop_assert_eq!(
                super::compact_moves::token_for_test(&t),
                super::compact_moves::token_by_splits(&t)
            );
        }
    }

    #[test]
    fn a_full_token_reads_every_field() {
        let m = super::compact_moves::token_for_test("g1f3@1834:-12/7~1000").unwrap();
        assert_eq!(m.text, "g1f3");
        assert_eq!(m.elapsed.as_micros(), 1834);
        assert_eq!(m.score, Some(crate::engine::Score::Centipawns(-12)));
        assert_eq!((m.depth, m.reported_us), (Some(7), Some(1000)));
        let mate = super::compact_moves::token_for_test("a7a6@5:#-3").unwrap();
        assert_eq!(mate.score, Some(crate::engine::Score::Mate(-3)));
    }
}
