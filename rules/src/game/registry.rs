//! The list of games arbiter knows, and a notation-level interface to a game in progress that the
//! referee and the CLI use without knowing which game it is.

use super::{perft_divide, Color, FenError, Game, MoveError, Position, Removals, Status};
use crate::games;
use std::sync::RwLock;

/// What one ply did, in the game's own notation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlyReport {
    /// The move as the game writes it (without a zap suffix).
    pub mv: String,
    pub removed: Removals,
}

/// Why a move text could not be played.
pub type PlayError = MoveError;

/// A game in progress, driven by move texts. Implemented for every [`Game`].
///
/// ```
/// use arbiter_rules::game::find_game;
///
/// let leiserchess = find_game("leiserchess").unwrap();
/// let mut game = leiserchess.new_game(None).unwrap();
/// // The reference count of the start position's moves (`tests/leiserchess_rules.rs`).
/// assert_eq!(game.legal_moves().len(), 61);
/// let first = game.legal_moves()[0].clone();
/// game.play(&first).unwrap();
/// assert_eq!(game.moves(), [first]);
/// assert!(game.play("not a move").is_err());
/// ```
pub trait AnyGame: Send {
    fn id(&self) -> &'static str;
    fn fen(&self) -> String;
    fn start_fen(&self) -> String;
    fn turn(&self) -> Color;
    fn ply_count(&self) -> usize;
    fn status(&self) -> Status;
    /// Ends the game for a reason outside the rules (time forfeit, crash, adjudication, move cap).
    fn set_status(&mut self, status: Status);
    /// The legal moves in notation, history rules included.
    fn legal_moves(&self) -> Vec<String>;
    fn play(&mut self, text: &str) -> Result<PlyReport, PlayError>;
    /// The moves played so far, in notation.
    fn moves(&self) -> Vec<String>;
    fn render(&self) -> String;
    /// Material balance for the side to move (see `Position::material`).
    fn material(&self) -> i32;
    fn boxed_clone(&self) -> Box<dyn AnyGame>;
    /// The laser beam the move `text` would fire here, square by square from the firing piece
    /// to the piece it removes or where it ends (laser games; empty otherwise, or for a move
    /// that is not legal here).
    fn beam_of(&self, text: &str) -> Vec<String>;
    /// The opening book's moves are played (see `Game::end_book`).
    fn end_book(&mut self);
}

impl<P: Position> AnyGame for Game<P> {
    fn id(&self) -> &'static str {
        P::ID
    }

    fn end_book(&mut self) {
        Game::end_book(self)
    }

    fn beam_of(&self, text: &str) -> Vec<String> {
        // A game drawn without lasers has no beam: its move is not read twice for nothing (the
        // game viewer asks at every ply).
        if !P::DRAWING.lasers {
            return Vec::new();
        }
        let pos = self.position();
        match pos.parse_move(text) {
            Ok(mv) => pos
                .laser_path_of(mv)
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn fen(&self) -> String {
        self.position().fen()
    }

    fn start_fen(&self) -> String {
        self.history().start().fen()
    }

    fn turn(&self) -> Color {
        self.position().turn()
    }

    fn ply_count(&self) -> usize {
        self.history().ply_count()
    }

    fn status(&self) -> Status {
        Game::status(self)
    }

    fn set_status(&mut self, status: Status) {
        Game::set_status(self, status)
    }

    fn legal_moves(&self) -> Vec<String> {
        let pos = self.position();
        Game::legal_moves(self)
            .into_iter()
            .map(|m| pos.move_text(m))
            .collect()
    }

    fn play(&mut self, text: &str) -> Result<PlyReport, PlayError> {
        let (_, mv, removed) = self.play_text(text)?;
        Ok(PlyReport { mv, removed })
    }

    fn moves(&self) -> Vec<String> {
        let mut pos = self.history().start().clone();
        self.history()
            .plies()
            .iter()
            .map(|ply| {
                let text = pos.move_text(ply.mv);
                pos.play(ply.mv);
                text
            })
            .collect()
    }

    fn render(&self) -> String {
        self.position().render()
    }

    fn material(&self) -> i32 {
        self.position().material()
    }

    fn boxed_clone(&self) -> Box<dyn AnyGame> {
        Box::new(self.clone())
    }
}

/// Leaf counts below each move, with the move's text.
pub type Divide = Vec<(String, u64)>;

/// A new game from a FEN with rule options chosen.
type NewGameWith = fn(&str, &[(String, String)]) -> Result<Box<dyn AnyGame>, FenError>;

/// A registered game: its id and the entry points the CLI and referee need.
#[derive(Debug)]
pub struct GameEntry {
    pub id: &'static str,
    pub description: &'static str,
    pub start_fen: &'static str,
    pub setups: &'static [(&'static str, &'static str)],
    /// Rule options and their values, the default first (see `Position::RULE_OPTIONS`).
    pub rule_options: &'static [(&'static str, &'static [&'static str])],
    /// Endings of this game's own (see `Position::ENDINGS`).
    pub endings: &'static [&'static str],
    /// How a picture of the board reads the FEN (see `Position::DRAWING`).
    pub drawing: super::Drawing,
    /// Perft depths `arbiter bench` times (see `Position::BENCH_DEPTHS`).
    pub bench_depths: (u32, u32),
    /// A final position as a line of `--epdout` (see `Position::position_line`).
    pub position_line: fn(&str) -> String,
    new_game: fn(&str) -> Result<Box<dyn AnyGame>, FenError>,
    new_game_with: NewGameWith,
    perft: fn(&str, u32) -> Result<u64, FenError>,
    divide: fn(&str, u32) -> Result<Divide, FenError>,
    pgn_moves: fn(&str, &[&str]) -> Option<Vec<String>>,
}

impl GameEntry {
    /// The registration of one [`Position`] type.
    pub const fn of<P: Position>() -> GameEntry {
        GameEntry {
            id: P::ID,
            description: P::DESCRIPTION,
            start_fen: P::START_FEN,
            setups: P::SETUPS,
            rule_options: P::RULE_OPTIONS,
            endings: P::ENDINGS,
            drawing: P::DRAWING,
            bench_depths: P::BENCH_DEPTHS,
            position_line: P::position_line,
            new_game: new_game::<P>,
            new_game_with: new_game_with::<P>,
            perft: perft_of::<P>,
            divide: divide_of::<P>,
            pgn_moves: pgn_moves_of::<P>,
        }
    }

    /// Resolves `--fen`: absent means the start position; a setup name selects that setup.
    pub fn resolve_fen<'a>(&self, fen: Option<&'a str>) -> &'a str
    where
        'static: 'a,
    {
        match fen {
            None => self.start_fen,
            Some(f) => self
                .setups
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(f.trim()))
                .map(|(_, setup)| *setup)
                .unwrap_or(f),
        }
    }

    /// A new game from a FEN or setup name (`None`: the start position).
    pub fn new_game(&self, fen: Option<&str>) -> Result<Box<dyn AnyGame>, FenError> {
        (self.new_game)(self.resolve_fen(fen))
    }

    /// Checks rule options (`name=value`) against this game's; the error names what it has.
    pub fn check_rules(&self, rules: &[(String, String)]) -> Result<(), String> {
        for (name, value) in rules {
            let offered: Vec<String> = self
                .rule_options
                .iter()
                .map(|(n, values)| format!("{n}={}", values.join("|")))
                .collect();
            let offered = if offered.is_empty() {
                "none".to_string()
            } else {
                offered.join(", ")
            };
            match self.rule_options.iter().find(|(n, _)| n == name) {
                None => {
                    return Err(format!(
                        "{} has no rule option '{name}' (it has: {offered})",
                        self.id
                    ))
                }
                Some((_, values)) if !values.contains(&value.as_str()) => {
                    return Err(format!("{name}={value}: {} takes {offered}", self.id))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// A new game with rule options chosen (checked with `check_rules` first).
    pub fn new_game_with(
        &self,
        fen: Option<&str>,
        rules: &[(String, String)],
    ) -> Result<Box<dyn AnyGame>, FenError> {
        (self.new_game_with)(self.resolve_fen(fen), rules)
    }

    /// Leaf count at exactly `depth`.
    pub fn perft_at(&self, fen: Option<&str>, depth: u32) -> Result<u64, FenError> {
        (self.perft)(self.resolve_fen(fen), depth)
    }

    /// The moves of a game from `fen` (`None`: the start position) as PGN writes them, when
    /// that is not the game's own notation (chess: SAN).
    pub fn pgn_moves(&self, fen: Option<&str>, moves: &[&str]) -> Option<Vec<String>> {
        (self.pgn_moves)(self.resolve_fen(fen), moves)
    }

    /// Leaf counts below each move at `depth`.
    pub fn divide(&self, fen: Option<&str>, depth: u32) -> Result<Divide, FenError> {
        (self.divide)(self.resolve_fen(fen), depth)
    }
}

/// The moves of a game as PGN writes them, when that differs from the game's own notation
/// (chess: SAN); `None` otherwise, or when the moves do not replay.
fn pgn_moves_of<P: Position>(fen: &str, moves: &[&str]) -> Option<Vec<String>> {
    if !P::SAN_IN_PGN {
        return None;
    }
    let mut pos = P::from_fen(fen).ok()?;
    moves
        .iter()
        .map(|text| {
            let mv = pos.parse_move(text).ok()?;
            Some(pos.play_for_pgn(mv))
        })
        .collect()
}

fn new_game<P: Position>(fen: &str) -> Result<Box<dyn AnyGame>, FenError> {
    Ok(Box::new(Game::new(P::from_fen(fen)?)))
}

fn new_game_with<P: Position>(
    fen: &str,
    rules: &[(String, String)],
) -> Result<Box<dyn AnyGame>, FenError> {
    let mut start = P::from_fen(fen)?;
    for (name, value) in rules {
        start.set_rule(name, value);
    }
    Ok(Box::new(Game::new(start)))
}

fn perft_of<P: Position>(fen: &str, depth: u32) -> Result<u64, FenError> {
    Ok(P::from_fen(fen)?.perft(depth))
}

fn divide_of<P: Position>(fen: &str, depth: u32) -> Result<Divide, FenError> {
    Ok(perft_divide(&P::from_fen(fen)?, depth))
}

/// Code that needs a game's concrete [`Position`] type (a search, a generic tool) implements this
/// and is run with the right type by [`visit_game`].
pub trait GameVisitor {
    type Output;
    fn visit<P: Position>(self) -> Self::Output;
}

/// Declares the built-in games: [`games`] and [`visit_game`] both start from this list.
macro_rules! register_games {
    ($($game:ty),* $(,)?) => {
        /// The games arbiter itself carries.
        static BUILT_IN: &[GameEntry] = &[$(GameEntry::of::<$game>()),*];

        /// Runs `visitor` with the [`Position`] type of built-in game `id` (case-insensitive).
        /// A game added with [`register_game`] has no entry here: its code knows its type.
        pub fn visit_game<V: GameVisitor>(id: &str, visitor: V) -> Option<V::Output> {
            $(
                if <$game as Position>::ID.eq_ignore_ascii_case(id) {
                    return Some(visitor.visit::<$game>());
                }
            )*
            None
        }
    };
}

// Adding a game to arbiter itself: one module in `games/` and its type on this line. A game
// kept outside arbiter calls `register_game` before anything looks games up.
register_games!(
    games::leiserchess::Leiserchess,
    games::leiserchess2012::Leiserchess2012,
    games::laserchess::LaserChess,
    games::leaperhouse::Leaperhouse,
    games::ultima::Ultima,
    games::chess::Chess,
    games::chess::Chess960,
);

/// Games registered at run time, after the built-in ones.
static ADDED: RwLock<Vec<&'static GameEntry>> = RwLock::new(Vec::new());

/// Adds a game of another crate to every list arbiter keeps: `--game`, books, reports, the
/// viewer and `bench` then know it as they know the built-in games. Registering an id again
/// returns the entry first registered under it (case-insensitive), a built-in one included.
pub fn register_game<P: Position>() -> &'static GameEntry {
    if let Some(known) = find_game(P::ID) {
        return known;
    }
    let mut added = ADDED.write().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = added.iter().find(|g| g.id.eq_ignore_ascii_case(P::ID)) {
        return known;
    }
    let entry: &'static GameEntry = Box::leak(Box::new(GameEntry::of::<P>()));
    added.push(entry);
    entry
}

/// Every game: the built-in ones, then those registered.
pub fn games() -> Vec<&'static GameEntry> {
    let added = ADDED.read().unwrap_or_else(|e| e.into_inner());
    BUILT_IN.iter().chain(added.iter().copied()).collect()
}

/// Looks a game up by id (case-insensitive).
pub fn find_game(id: &str) -> Option<&'static GameEntry> {
    if let Some(entry) = BUILT_IN.iter().find(|g| g.id.eq_ignore_ascii_case(id)) {
        return Some(entry);
    }
    let added = ADDED.read().unwrap_or_else(|e| e.into_inner());
    added
        .iter()
        .copied()
        .find(|g| g.id.eq_ignore_ascii_case(id))
}

/// The ids of all games, for error messages and help.
pub fn game_ids() -> Vec<&'static str> {
    games().into_iter().map(|g| g.id).collect()
}
