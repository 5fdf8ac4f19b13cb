//! The dialects engines speak, one file each behind `Dialect`: how the handshake, a new game and
//! a turn are said to an engine, and how its replies read. `uci.rs` (UCI, with Fairy-Stockfish's
//! variants), `mit.rs` (the MIT Leiserchess player's), `cecp.rs` (xboard/WinBoard protocol 2).
//! The referee describes a turn (`Turn`); the process layer (`process.rs`) spawns the engine and
//! writes and reads its lines, and knows no protocol word.
//!
//! A new dialect is a file here, its `Proto` entry and its arm in `Speaker`.

pub mod cecp;
pub mod mit;
pub mod uci;

use super::process::{EngineError, EngineIo};
use super::protocol::EngineLine;
use crate::game::Color;
use std::time::{Duration, Instant};

/// The protocol an engine speaks (`proto=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// UCI, with `UCI_Variant` when the engine offers it (Fairy-Stockfish, the bundled engine).
    Uci,
    /// The MIT 6.172 Leiserchess player: `go depth`/`go time .. inc ..`, no `ucinewgame`.
    Leiserchess,
    /// CECP, the xboard/WinBoard protocol 2: `usermove`, `time`/`otim`, `level`/`st`/`sd`.
    Xboard,
}

/// Each protocol with the name `proto=` gives it first and the other names it takes.
const NAMES: [(Proto, &str, &[&str]); 3] = [
    (Proto::Uci, "uci", &[]),
    (Proto::Leiserchess, "leiserchess", &["mit"]),
    (Proto::Xboard, "xboard", &["cecp"]),
];

impl Proto {
    pub fn as_str(self) -> &'static str {
        NAMES
            .iter()
            .find(|(p, _, _)| *p == self)
            .map_or("uci", |(_, name, _)| name)
    }

    /// The protocol `proto=` names, by any of its names.
    pub fn from_name(name: &str) -> Option<Proto> {
        NAMES
            .iter()
            .find(|(_, first, others)| *first == name || others.contains(&name))
            .map(|(p, _, _)| *p)
    }

    /// Each protocol's first name, as `proto=` lists them.
    pub fn names() -> Vec<&'static str> {
        NAMES.iter().map(|(_, name, _)| *name).collect()
    }

    /// `uci, leiserchess or xboard`: the names an error lists.
    pub fn choices() -> String {
        let names = Proto::names();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// Whether the engine can be told to stop after a number of nodes.
    pub fn takes_nodes(self) -> bool {
        self == Proto::Uci
    }

    /// What speaks this protocol to one engine process, fresh.
    pub(super) fn speaker(self) -> Speaker {
        match self {
            Proto::Uci => Speaker::Uci(uci::Uci::default()),
            Proto::Leiserchess => Speaker::Mit(mit::Mit::default()),
            Proto::Xboard => Speaker::Cecp(cecp::Cecp::default()),
        }
    }
}

/// What a dialect says to an engine and how it reads its replies. The engine's process (`io`)
/// writes and reads lines; everything a dialect remembers of the game is its own.
pub(super) trait Dialect {
    /// From the spawn to an engine ready to play `game`: its name and options learnt into
    /// `io.id_name` and `io.offered`, the configured options set, the variant chosen.
    async fn handshake(&mut self, io: &mut EngineIo, game: &str) -> Result<(), EngineError>;
    /// Waits until the engine has read everything sent so far.
    async fn sync(&mut self, io: &mut EngineIo) -> Result<(), EngineError>;
    /// Readies the engine for a new game, and waits until it is.
    async fn new_game(&mut self, io: &mut EngineIo) -> Result<(), EngineError>;
    /// Writes the request for a move on this turn: returns the moment from which the engine's
    /// time runs. With `sync`, the engine is first made to read the position and answer
    /// `isready` within that limit, and its time runs from the moment `go` is written;
    /// without, from just before the one write of both.
    async fn ask_move(
        &mut self,
        io: &mut EngineIo,
        turn: &Turn<'_>,
        sync: Option<Duration>,
    ) -> Result<Instant, EngineError>;
    /// One line the engine wrote while searching.
    fn read_reply(&self, line: String) -> EngineLine;
}

/// The dialect of one engine process.
pub(super) enum Speaker {
    Uci(uci::Uci),
    Mit(mit::Mit),
    Cecp(cecp::Cecp),
}

macro_rules! each {
    ($speaker:expr, $dialect:ident => $call:expr) => {
        match $speaker {
            Speaker::Uci($dialect) => $call,
            Speaker::Mit($dialect) => $call,
            Speaker::Cecp($dialect) => $call,
        }
    };
}

impl Dialect for Speaker {
    async fn handshake(&mut self, io: &mut EngineIo, game: &str) -> Result<(), EngineError> {
        each!(self, d => d.handshake(io, game).await)
    }

    async fn sync(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        each!(self, d => d.sync(io).await)
    }

    async fn new_game(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        each!(self, d => d.new_game(io).await)
    }

    async fn ask_move(
        &mut self,
        io: &mut EngineIo,
        turn: &Turn<'_>,
        sync: Option<Duration>,
    ) -> Result<Instant, EngineError> {
        each!(self, d => d.ask_move(io, turn, sync).await)
    }

    fn read_reply(&self, line: String) -> EngineLine {
        each!(self, d => d.read_reply(line))
    }
}

/// One side's clock as the engine is told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockReading {
    pub remaining: Duration,
    pub increment: Duration,
    pub moves_to_go: Option<u32>,
}

impl ClockReading {
    /// The clock as an engine is told it.
    pub fn of(clock: &crate::clock::Clock) -> ClockReading {
        ClockReading {
            remaining: clock.remaining(),
            increment: clock.increment(),
            moves_to_go: clock.moves_to_go(),
        }
    }
}

/// An engine's turn: where the game started, every move since (book moves included), who is to
/// move, and both clocks (`None` for a side without a clock).
#[derive(Clone, Copy, Debug)]
pub struct Turn<'a> {
    pub start_fen: Option<&'a str>,
    pub moves: &'a [String],
    pub side: Color,
    pub clocks: [Option<ClockReading>; 2],
}

impl Turn<'_> {
    /// The clock of the side to move.
    pub fn own_clock(&self) -> Option<&ClockReading> {
        self.clocks[self.side.index()].as_ref()
    }
}

/// Whole milliseconds, as the dialects count time.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Appends `name` and `value` to a command. Numbers go through itoa rather than the formatter,
/// which is code a match's every ply would fetch again after the engine's search evicted it.
fn push_number(command: &mut String, name: &str, value: u64) {
    command.push_str(name);
    command.push_str(itoa::Buffer::new().format(value));
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn turn<'a>(start: Option<&'a str>, moves: &'a [String]) -> Turn<'a> {
        Turn {
            start_fen: start,
            moves,
            side: Color::White,
            clocks: [None, None],
        }
    }

    #[test]
    fn every_protocol_has_its_names() {
        for (proto, name, others) in NAMES {
            assert_eq!(proto.as_str(), name);
            for n in others.iter().chain([&name]) {
                assert_eq!(Proto::from_name(n), Some(proto));
            }
        }
        assert_eq!(Proto::from_name("usi"), None);
        assert_eq!(Proto::choices(), "uci, leiserchess or xboard");
    }
}
