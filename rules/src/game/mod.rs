//! The game abstraction every rules module implements, and the history-aware layer the referee
//! uses.
//!
//! A game is a [`Position`]: a value that knows its own board, moves and notation but nothing of
//! the past. Rules that need the past (Ko, repetition, move-count draws) live in [`Game`], which
//! keeps the history and asks the position's [`Position::judge`] hook what it means.

pub mod drawing;
mod history;
pub(crate) mod perft;
mod registry;

/// One of `items`, by a xorshift step of `seed`: the random games of the tests, the same at
/// every run.
#[cfg(test)]
pub(crate) fn pick<T: Clone>(seed: &mut u64, items: &[T]) -> T {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    items[(*seed % items.len() as u64) as usize].clone()
}

pub use drawing::Drawing;
pub use history::{Game, History, PlyRecord, TYPICAL_PLIES};
pub use perft::{perft, perft_divide};
pub use registry::{
    find_game, game_ids, games, register_game, visit_game, AnyGame, GameEntry, GameVisitor,
    PlayError, PlyReport,
};

use std::fmt;
use thiserror::Error;

/// The two sides. `White` always moves first (Tangerine, Blue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    White,
    Black,
}

impl Color {
    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// The result in which this side wins.
    pub fn wins(self) -> Outcome {
        match self {
            Color::White => Outcome::WhiteWins,
            Color::Black => Outcome::BlackWins,
        }
    }
}

/// A finished game's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    WhiteWins,
    BlackWins,
    Draw,
}

impl Outcome {
    /// PGN-style result token.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::WhiteWins => "1-0",
            Outcome::BlackWins => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        match s {
            "1-0" => Some(Outcome::WhiteWins),
            "0-1" => Some(Outcome::BlackWins),
            "1/2-1/2" => Some(Outcome::Draw),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a game ended. The rules decide the first seven; the referee the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Termination {
    KingZapped,
    Checkmate,
    Stalemate,
    Campmate,
    Repetition,
    MoveRule,
    /// Neither side can mate (chess).
    InsufficientMaterial,
    MaxPlies,
    IllegalMove,
    TimeForfeit,
    EngineCrash,
    EngineStall,
    /// The engine's sandbox stopped it for using more memory than its limit.
    MemoryLimit,
    /// The engine filled its writable space (its sandbox's working folder or `/tmp`).
    DiskLimit,
    Adjudication,
    /// The engine conceded (CECP's `resign`).
    Resignation,
    /// A game read from another tool's PGN that does not say why it ended.
    Unrecorded,
    /// An ending a game names itself ([`Position::ENDINGS`]), such as "three in a row".
    Own(&'static str),
}

impl Termination {
    /// The endings every game shares; a game's own are on its entry (`GameEntry::endings`).
    pub const ALL: [Termination; 17] = [
        Termination::KingZapped,
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::Campmate,
        Termination::Repetition,
        Termination::MoveRule,
        Termination::InsufficientMaterial,
        Termination::MaxPlies,
        Termination::IllegalMove,
        Termination::TimeForfeit,
        Termination::EngineCrash,
        Termination::EngineStall,
        Termination::MemoryLimit,
        Termination::DiskLimit,
        Termination::Adjudication,
        Termination::Resignation,
        Termination::Unrecorded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Termination::KingZapped => "king zapped",
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Campmate => "campmate",
            Termination::Repetition => "repetition",
            Termination::MoveRule => "move rule",
            Termination::InsufficientMaterial => "insufficient material",
            Termination::MaxPlies => "max plies",
            Termination::IllegalMove => "illegal move",
            Termination::TimeForfeit => "time forfeit",
            Termination::EngineCrash => "engine crash",
            Termination::EngineStall => "engine stall",
            Termination::MemoryLimit => "memory limit",
            Termination::DiskLimit => "disk limit",
            Termination::Adjudication => "adjudication",
            Termination::Resignation => "resignation",
            Termination::Unrecorded => "unrecorded",
            Termination::Own(name) => name,
        }
    }

    /// An ending the loser's engine caused by failing as a program (an illegal move, its clock,
    /// a crash, silence, its memory or disk space), not by how it played.
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Termination::IllegalMove
                | Termination::TimeForfeit
                | Termination::EngineCrash
                | Termination::EngineStall
                | Termination::MemoryLimit
                | Termination::DiskLimit
        )
    }

    /// The ending named `s`: one of [`Termination::ALL`], or one a registered game names.
    pub fn parse(s: &str) -> Option<Termination> {
        Termination::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .or_else(|| {
                games()
                    .into_iter()
                    .flat_map(|g| g.endings.iter())
                    .find(|&&name| name == s)
                    .map(|name| Termination::Own(name))
            })
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Outcomes and terminations are stored as their text (`1-0`, `king zapped`) in journals.
macro_rules! serde_as_text {
    ($t:ty, $what:literal) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                <$t>::parse(&text)
                    .ok_or_else(|| serde::de::Error::custom(format!("unknown {} '{text}'", $what)))
            }
        }
    };
}

serde_as_text!(Outcome, "result");
serde_as_text!(Termination, "termination");

/// The state of a game after a move: still going, or over with a result and a reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ongoing,
    Over(Outcome, Termination),
}

impl Status {
    pub fn is_over(self) -> bool {
        matches!(self, Status::Over(..))
    }
}

/// A piece that a move removed from the board (zapped by a laser, or captured).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Removal {
    /// Square name in the game's notation, e.g. `f6` or `j10` (at most 3 bytes).
    pub square: SquareName,
    /// The piece in the game's FEN letters, e.g. `NW`, `p`, `+P` (at most 3 bytes).
    pub piece: SquareName,
}

impl fmt::Display for Removal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.piece, self.square)
    }
}

/// A short inline string (square or piece name) so that reporting a removal never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct SquareName {
    len: u8,
    bytes: [u8; 3],
}

impl SquareName {
    pub fn new(s: &str) -> SquareName {
        let mut bytes = [0u8; 3];
        let len = s.len().min(3);
        bytes[..len].copy_from_slice(&s.as_bytes()[..len]);
        SquareName {
            len: len as u8,
            bytes,
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("?")
    }
}

impl fmt::Display for SquareName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SquareName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// What a move removed. Most moves remove nothing; an ultima chameleon can remove several.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Removals {
    len: u8,
    items: [Option<Removal>; 8],
}

impl Removals {
    /// What a move that removed one piece reports.
    pub fn one(square: SquareName, piece: &str) -> Removals {
        let mut out = Removals::default();
        out.push(Removal {
            square,
            piece: SquareName::new(piece),
        });
        out
    }

    pub fn push(&mut self, r: Removal) {
        if (self.len as usize) < self.items.len() {
            self.items[self.len as usize] = Some(r);
            self.len += 1;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn iter(&self) -> impl Iterator<Item = &Removal> {
        self.items[..self.len as usize].iter().flatten()
    }
}

/// A FEN (or setup string) that does not describe a position of the game.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("bad {game} FEN '{fen}': {reason}")]
pub struct FenError {
    pub game: &'static str,
    pub fen: String,
    pub reason: String,
}

impl FenError {
    pub fn new(game: &'static str, fen: &str, reason: impl Into<String>) -> FenError {
        FenError {
            game,
            fen: fen.to_string(),
            reason: reason.into(),
        }
    }
}

/// Reads the chess-style clock fields that end a FEN (halfmove clock, fullmove number; both
/// optional) and refuses anything after them.
pub fn parse_fen_clocks<'a>(
    mut fields: impl Iterator<Item = &'a str>,
    err: impl Fn(String) -> FenError,
) -> Result<(u32, u32), FenError> {
    let mut number = |name: &str, default: u32| -> Result<u32, FenError> {
        match fields.next() {
            None => Ok(default),
            Some(t) => t.parse().map_err(|_| err(format!("bad {name} '{t}'"))),
        }
    };
    let halfmove = number("halfmove clock", 0)?;
    let fullmove = number("fullmove number", 1)?.max(1);
    if let Some(extra) = fields.next() {
        return Err(err(format!("unexpected field '{extra}'")));
    }
    Ok((halfmove, fullmove))
}

/// A move text that is not a move of this game in this position.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum MoveError {
    /// The text does not follow the game's notation at all.
    #[error("malformed move '{text}': {reason}")]
    Malformed { text: String, reason: String },
    /// Well-formed, but the rules forbid it here.
    #[error("illegal move '{text}': {reason}")]
    Illegal { text: String, reason: String },
}

impl MoveError {
    pub fn malformed(text: &str, reason: impl Into<String>) -> MoveError {
        MoveError::Malformed {
            text: text.to_string(),
            reason: reason.into(),
        }
    }

    pub fn illegal(text: &str, reason: impl Into<String>) -> MoveError {
        MoveError::Illegal {
            text: text.to_string(),
            reason: reason.into(),
        }
    }

    /// The same error, quoting `text` (the move as the user wrote it, suffix included).
    pub fn with_text(self, text: &str) -> MoveError {
        match self {
            MoveError::Malformed { reason, .. } => MoveError::malformed(text, reason),
            MoveError::Illegal { reason, .. } => MoveError::illegal(text, reason),
        }
    }
}

/// One game's rules, as a position that knows nothing of its history.
///
/// `generate` yields exactly the moves that the game's perft counts. Rules that depend on the
/// game's past (Ko, repetition, move-count draws) belong in [`Position::judge`] and
/// [`Position::forbidden_by_history`], which [`Game`] calls with the history at hand.
pub trait Position: Clone + Send + Sync + 'static {
    type Move: Copy + Eq + std::hash::Hash + fmt::Debug + Send + Sync;

    /// The game id used on the command line, in files and as `UCI_Variant`.
    const ID: &'static str;
    /// One-line description for `--help` and the README.
    const DESCRIPTION: &'static str;
    /// The start position in this game's FEN.
    const START_FEN: &'static str;
    /// Named start positions besides the default (laserchess setups).
    const SETUPS: &'static [(&'static str, &'static str)] = &[];
    /// Endings this game has beyond the shared [`Termination`]s, as they are written in
    /// journals and reports; `board_status`/`judge` return them as [`Termination::Own`].
    const ENDINGS: &'static [&'static str] = &[];

    fn from_fen(fen: &str) -> Result<Self, FenError>;
    fn fen(&self) -> String;
    fn turn(&self) -> Color;

    /// Appends the moves perft counts from this position (empty when the game is over on the
    /// board).
    fn generate(&self, out: &mut Vec<Self::Move>);

    /// How many moves `generate` would append: an engine's mobility. Games with a bulk count
    /// answer without listing the moves.
    fn move_count(&self) -> usize {
        let mut moves = Vec::new();
        self.generate(&mut moves);
        moves.len()
    }

    /// Plays a move produced by `generate`, returning what it removed from the board.
    fn play(&mut self, mv: Self::Move) -> Removals;

    /// Parses a move in the game's notation and matches it against this position's moves.
    /// A capture/zap suffix the notation allows is checked by [`Game`], not here.
    fn parse_move(&self, text: &str) -> Result<Self::Move, MoveError>;

    /// Writes a move in the game's notation (without an optional zap/capture suffix).
    fn move_text(&self, mv: Self::Move) -> String;

    /// Identity of the position for Ko and repetition: board, side to move, hands.
    fn key(&self) -> u64;

    /// Whether perft counts a move that ends the game as one leaf however deep it was asked to go
    /// (the Leiserchess convention) rather than as a node with no moves below it (chess's).
    const TERMINAL_IS_LEAF: bool = false;

    /// Counts leaves of the move tree; games may override with a faster bulk count.
    fn perft(&self, depth: u32) -> u64 {
        perft::generic_perft(self, depth)
    }

    /// Material balance in centipawns from the side to move's point of view. Not a rule: the
    /// bundled engines' evaluation starts here, and adjudication tests use it.
    fn material(&self) -> i32 {
        0
    }

    /// Whether the side to move is in check (games without check say no). Recorded for every ply
    /// so that repetition rulings can tell a perpetual check.
    fn in_check(&self) -> bool {
        false
    }

    /// Whether a move restarts the count of the move-count draw rule (by default: it removed a
    /// piece).
    fn resets_move_rule(_mv: Self::Move, removed: &Removals) -> bool {
        !removed.is_empty()
    }

    /// Plies already counted toward the move-count rule in this position (a FEN's halfmove clock).
    fn initial_quiet_plies(&self) -> u32 {
        0
    }

    /// The result decided by the board alone (king zapped, mate...), before history is considered.
    fn board_status(&self) -> Status;

    /// Reason a move that `generate` produced is still illegal given the history (Ko, for example).
    fn forbidden_by_history(
        _history: &History<Self>,
        _mv: Self::Move,
        _after: &Self,
        _removed: &Removals,
    ) -> Option<&'static str> {
        None
    }

    /// The game's status after the last move in `history`: board status first, then draw rules.
    fn judge(history: &History<Self>) -> Status;

    /// Rules a run may choose between, each with its values, the default first (leaperhouse:
    /// `repetition` as the prose rules it, or as Fairy-Stockfish scores it).
    const RULE_OPTIONS: &'static [(&'static str, &'static [&'static str])] = &[];

    /// Takes a value of one of `RULE_OPTIONS` (checked by the caller) before the first move.
    fn set_rule(&mut self, _name: &str, _value: &str) {}

    /// Whether the move-count rule starts counting again from the opening book's last move (the
    /// MIT course's tester counts that way; the rule texts count from the first move).
    fn move_rule_counts_from_book(&self) -> bool {
        false
    }

    /// The squares the mover's laser crosses when `mv` is played here, from the firing piece to
    /// the piece it removes or where it ends (laser games; others have none). For drawing games.
    fn laser_path_of(&self, _mv: Self::Move) -> Vec<SquareName> {
        Vec::new()
    }

    /// Whether PGN writes moves in another notation than the game's own (chess: SAN).
    const SAN_IN_PGN: bool = false;

    /// A move as PGN writes it, where `SAN_IN_PGN`.
    fn pgn_move_text(&self, mv: Self::Move) -> String {
        self.move_text(mv)
    }

    /// Plays `mv` and says it as PGN writes it: what writing a whole game's PGN does per move,
    /// which a game may do in one step (chess: SAN's check mark is read off the played position).
    fn play_for_pgn(&mut self, mv: Self::Move) -> String {
        let text = self.pgn_move_text(mv);
        self.play(mv);
        text
    }

    /// Whether the move notation may carry an `x<square>` suffix naming the removed piece.
    const ZAP_SUFFIX: bool = false;

    /// The board as text for `arbiter show`.
    fn render(&self) -> String;

    /// How a picture of the board reads this game's FEN and names its squares.
    const DRAWING: Drawing = Drawing::STANDARD;

    /// Perft depths `arbiter bench` times: (the quick run, `--full`).
    const BENCH_DEPTHS: (u32, u32) = (3, 4);

    /// A final position as one line of `--epdout`: the FEN, or what the game's tools read
    /// instead (chess: EPD with fastchess's `hmvc`/`fmvn` opcodes).
    fn position_line(fen: &str) -> String {
        fen.to_string()
    }
}
