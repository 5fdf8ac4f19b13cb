//! The MIT 6.172 Leiserchess player's dialect: UCI's handshake and `position` command, but
//! `go depth N` or `go time T inc I` for its own clock only, no `ucinewgame`, and only the
//! Leiserchess games.

use super::uci::{self, Request};
use super::{millis, push_number, Dialect, Turn};
use crate::engine::config::EngineConfig;
use crate::engine::process::{EngineError, EngineIo};
use crate::engine::protocol::{parse_owned_line, EngineLine};
use std::time::{Duration, Instant};

/// The games the MIT players play.
pub const GAMES: [&str; 2] = ["leiserchess", "leiserchess2012"];

#[derive(Debug, Default)]
pub struct Mit {
    request: Request,
}

impl Dialect for Mit {
    async fn handshake(&mut self, io: &mut EngineIo, game: &str) -> Result<(), EngineError> {
        if !GAMES.contains(&game) {
            return Err(EngineError::Variant {
                name: io.config.name.clone(),
                game: game.to_string(),
                reason: format!(
                    "the leiserchess protocol (the MIT player's) plays only {}",
                    GAMES.join(", ")
                ),
            });
        }
        uci::handshake(io, game).await
    }

    async fn sync(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        uci::ready(io, &[]).await
    }

    async fn new_game(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        self.request.reset();
        uci::ready(io, &[]).await
    }

    async fn ask_move(
        &mut self,
        io: &mut EngineIo,
        turn: &Turn<'_>,
        sync: Option<Duration>,
    ) -> Result<Instant, EngineError> {
        self.request.send(io, turn, write_go_command, sync).await
    }

    fn read_reply(&self, line: String) -> EngineLine {
        parse_owned_line(line)
    }
}

/// `go time T inc I` with the engine's own clock, else `go depth N`.
fn write_go_command(cfg: &EngineConfig, turn: &Turn, go: &mut String) {
    go.clear();
    if let Some(c) = turn.own_clock() {
        push_number(go, "go time ", millis(c.remaining));
        push_number(go, " inc ", millis(c.increment));
    } else if let Some(st) = cfg.limits.movetime {
        // The player budgets about 2% of its time: ask for 50 moves' worth.
        push_number(go, "go time ", millis(st).saturating_mul(50));
        go.push_str(" inc 0");
    } else {
        push_number(go, "go depth ", u64::from(cfg.limits.depth.unwrap_or(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::turn;
    use super::super::ClockReading;
    use super::*;
    use std::time::Duration;

    fn go_command(cfg: &EngineConfig, turn: &Turn) -> String {
        let mut go = String::new();
        write_go_command(cfg, turn, &mut go);
        go
    }

    #[test]
    fn the_player_is_told_its_own_clock_or_a_depth() {
        let clock = ClockReading {
            remaining: Duration::from_millis(1500),
            increment: Duration::from_millis(20),
            moves_to_go: Some(7),
        };
        let mut t = turn(None, &[]);
        t.clocks = [Some(clock), Some(clock)];
        let mit = EngineConfig::parse(&["cmd=x", "proto=leiserchess", "depth=3"], &[]).unwrap();
        assert_eq!(go_command(&mit, &t), "go time 1500 inc 20");
        t.clocks = [None, None];
        assert_eq!(go_command(&mit, &t), "go depth 3");
        let mit = EngineConfig::parse(&["cmd=x", "proto=leiserchess", "st=0.25"], &[]).unwrap();
        assert_eq!(go_command(&mit, &t), "go time 12500 inc 0");
    }

    #[test]
    fn the_games_named_are_the_players_games() {
        for id in GAMES {
            assert!(crate::game::find_game(id).is_some(), "{id}");
        }
    }
}
