//! A game the engine was told about, behind one interface for every game of the rules crate.

use crate::eval::Eval;
use crate::search::{choose, Iteration, Limits, Rng, Style};
use arbiter_rules::game::{visit_game, Color, Game, GameVisitor, Position};
use std::sync::atomic::AtomicBool;
use std::sync::RwLock;

/// The position set by `position ...`, ready to search.
pub trait Session: Send {
    /// Sets the position; on a bad FEN or move, says which and leaves the start position set.
    fn set_position(&mut self, fen: Option<&str>, moves: &[&str]) -> Result<(), String>;
    /// Plies played since the `position` command's start.
    fn moves_played(&self) -> usize;
    fn turn(&self) -> Color;
    fn search(
        &self,
        style: Style,
        rng: &mut Rng,
        limits: &Limits,
        eval: &Eval,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Iteration),
    ) -> Option<String>;
    fn boxed(&self) -> Box<dyn Session>;
}

struct GameSession<P: Position> {
    game: Game<P>,
    moves_played: usize,
}

impl<P: Position> Session for GameSession<P> {
    fn set_position(&mut self, fen: Option<&str>, moves: &[&str]) -> Result<(), String> {
        let start = P::from_fen(fen.unwrap_or(P::START_FEN)).map_err(|e| e.to_string())?;
        let mut game = Game::new(start.clone());
        for m in moves {
            if let Err(e) = game.play_text(m) {
                // Like the MIT player: a bad move leaves the position at the start.
                self.game = Game::new(start);
                self.moves_played = 0;
                return Err(format!("Move {m} is illegal ({e})"));
            }
        }
        self.game = game;
        self.moves_played = moves.len();
        Ok(())
    }

    fn moves_played(&self) -> usize {
        self.moves_played
    }

    fn turn(&self) -> Color {
        self.game.position().turn()
    }

    fn search(
        &self,
        style: Style,
        rng: &mut Rng,
        limits: &Limits,
        eval: &Eval,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Iteration),
    ) -> Option<String> {
        choose(&self.game, style, rng, limits, eval, stop, |it| report(it))
            .map(|mv| self.game.position().move_text(mv))
    }

    fn boxed(&self) -> Box<dyn Session> {
        Box::new(GameSession {
            game: self.game.clone(),
            moves_played: self.moves_played,
        })
    }
}

struct NewSession;

impl GameVisitor for NewSession {
    type Output = Box<dyn Session>;

    fn visit<P: Position>(self) -> Box<dyn Session> {
        let start = P::from_fen(P::START_FEN).expect("every game's start FEN parses");
        Box::new(GameSession {
            game: Game::new(start),
            moves_played: 0,
        })
    }
}

/// Sessions of the games added with [`register_game`], by id.
type NewSessionFn = fn() -> Box<dyn Session>;
static ADDED: RwLock<Vec<(&'static str, NewSessionFn)>> = RwLock::new(Vec::new());

/// Teaches these engines a game of another crate, and registers it with the rules crate:
/// a program that calls this before [`run`](crate::run) plays it under its id.
pub fn register_game<P: Position>() {
    arbiter_rules::game::register_game::<P>();
    let mut added = ADDED.write().unwrap_or_else(|e| e.into_inner());
    if !added.iter().any(|(id, _)| id.eq_ignore_ascii_case(P::ID)) {
        added.push((P::ID, || NewSession.visit::<P>()));
    }
}

/// A fresh session for a game id (`UCI_Variant`), or `None` for an unknown game.
pub fn new_session(id: &str) -> Option<Box<dyn Session>> {
    visit_game(id, NewSession).or_else(|| {
        let added = ADDED.read().unwrap_or_else(|e| e.into_inner());
        let (_, new) = added.iter().find(|(g, _)| g.eq_ignore_ascii_case(id))?;
        Some(new())
    })
}
