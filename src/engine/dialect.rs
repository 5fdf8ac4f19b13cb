//! What each engine dialect is sent for a turn: the game so far and the clocks, as UCI or as the
//! MIT Leiserchess player takes them. The referee describes a turn (`Turn`); only this module
//! and the engine process turn it into protocol words.

use super::config::{EngineConfig, Proto};
use crate::game::Color;
use std::time::Duration;

/// One side's clock as the engine is told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockReading {
    pub remaining: Duration,
    pub increment: Duration,
    pub moves_to_go: Option<u32>,
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

/// The `go` command for `cfg` on this turn.
#[cfg(test)]
pub fn go_command(cfg: &EngineConfig, turn: &Turn) -> String {
    let mut go = String::new();
    write_go_command(cfg, turn, &mut go);
    go
}

/// Writes the `go` command for `cfg` on this turn into `go`, emptied first: the same buffer
/// serves every move of a match. Numbers go through itoa rather than the formatter, which is
/// code a match's every ply would fetch again after the engine's search evicted it.
pub fn write_go_command(cfg: &EngineConfig, turn: &Turn, go: &mut String) {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let mut digits = itoa::Buffer::new();
    let mut word = |go: &mut String, name: &str, value: u64| {
        go.push_str(name);
        go.push_str(digits.format(value));
    };
    let own = turn.clocks[turn.side.index()].as_ref();
    let l = &cfg.limits;
    go.clear();
    match cfg.proto {
        Proto::Leiserchess => {
            if let Some(c) = own {
                word(go, "go time ", ms(c.remaining));
                word(go, " inc ", ms(c.increment));
            } else if let Some(st) = l.movetime {
                // The player budgets about 2% of its time: ask for 50 moves' worth.
                word(go, "go time ", ms(st).saturating_mul(50));
                go.push_str(" inc 0");
            } else {
                word(go, "go depth ", u64::from(l.depth.unwrap_or(1)));
            }
        }
        // CECP has no `go` with limits: they are set once a game (`xboard_new_game`).
        Proto::Xboard => go.push_str("go"),
        Proto::Uci => {
            go.push_str("go");
            for (color, time, inc) in [
                (Color::White, " wtime ", " winc "),
                (Color::Black, " btime ", " binc "),
            ] {
                if let Some(c) = &turn.clocks[color.index()] {
                    word(go, time, ms(c.remaining));
                    word(go, inc, ms(c.increment));
                }
            }
            if let Some(m) = own.and_then(|c| c.moves_to_go) {
                word(go, " movestogo ", u64::from(m));
            }
            if let Some(st) = l.movetime {
                word(go, " movetime ", ms(st));
            }
            if let Some(d) = l.depth {
                word(go, " depth ", u64::from(d));
            }
            if let Some(n) = l.nodes {
                word(go, " nodes ", n);
            }
        }
    }
}

/// The commands that start a game on a CECP engine: the variant, force mode (the referee says
/// when to move), thinking output, and the limits, which CECP sets per game rather than per move.
pub fn xboard_new_game(cfg: &EngineConfig, game: &str) -> Vec<String> {
    let mut lines = vec![
        "new".to_string(),
        format!("variant {game}"),
        "force".to_string(),
        "post".to_string(),
    ];
    let l = &cfg.limits;
    if let Some(tc) = l.tc {
        let secs = tc.base.as_secs();
        lines.push(format!(
            "level {} {}:{:02} {}",
            tc.moves.unwrap_or(0),
            secs / 60,
            secs % 60,
            tc.inc.as_secs_f64()
        ));
    }
    if let Some(st) = l.movetime {
        lines.push(format!("st {}", st.as_secs_f64()));
    }
    if let Some(d) = l.depth {
        lines.push(format!("sd {d}"));
    }
    lines
}

/// What a CECP engine has been told of the current game.
#[derive(Clone, Debug, Default)]
pub struct XboardGame {
    board_set: bool,
    moves_sent: usize,
}

impl XboardGame {
    pub fn reset(&mut self) {
        *self = XboardGame::default();
    }

    /// The commands for a turn: back to force mode, the start position once, the moves the
    /// engine has not seen, both clocks in centiseconds, and `go`. The engine's own reply is a
    /// move it has already made on its board.
    pub fn turn(&mut self, turn: &Turn) -> Vec<String> {
        let mut lines = vec!["force".to_string()];
        if !self.board_set {
            if let Some(fen) = turn.start_fen {
                lines.push(format!("setboard {fen}"));
            }
            self.board_set = true;
        }
        let from = self.moves_sent.min(turn.moves.len());
        lines.extend(turn.moves[from..].iter().map(|m| format!("usermove {m}")));
        let cs = |c: &ClockReading| c.remaining.as_millis() / 10;
        if let Some(own) = &turn.clocks[turn.side.index()] {
            lines.push(format!("time {}", cs(own)));
        }
        if let Some(other) = &turn.clocks[turn.side.other().index()] {
            lines.push(format!("otim {}", cs(other)));
        }
        lines.push("go".to_string());
        self.moves_sent = turn.moves.len() + 1;
        lines
    }
}

/// The `position` command of the game so far, grown by the moves played since the last turn
/// rather than rebuilt: rebuilding it every ply would be quadratic in the game's length.
#[derive(Clone, Debug, Default)]
pub struct PositionCommand {
    text: String,
    start: Option<String>,
    moves: usize,
    valid: bool,
}

impl PositionCommand {
    /// Forgets the game: the next turn starts the command afresh.
    pub fn reset(&mut self) {
        self.valid = false;
    }

    pub fn update(&mut self, turn: &Turn) -> &str {
        let same_game =
            self.valid && self.start.as_deref() == turn.start_fen && self.moves <= turn.moves.len();
        if !same_game {
            self.text.clear();
            match turn.start_fen {
                Some(fen) => {
                    self.text.push_str("position fen ");
                    self.text.push_str(fen);
                }
                None => self.text.push_str("position startpos"),
            }
            self.start = turn.start_fen.map(str::to_string);
            self.moves = 0;
            self.valid = true;
        }
        for mv in &turn.moves[self.moves..] {
            if self.moves == 0 {
                self.text.push_str(" moves");
            }
            self.text.push(' ');
            self.text.push_str(mv);
            self.moves += 1;
        }
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn<'a>(start: Option<&'a str>, moves: &'a [String]) -> Turn<'a> {
        Turn {
            start_fen: start,
            moves,
            side: Color::White,
            clocks: [None, None],
        }
    }

    #[test]
    fn the_position_command_grows_and_restarts_with_a_new_game() {
        let mut p = PositionCommand::default();
        let moves: Vec<String> = ["g4g5", "e6e7", "g5g4"].map(String::from).to_vec();
        assert_eq!(p.update(&turn(None, &moves[..0])), "position startpos");
        assert_eq!(
            p.update(&turn(None, &moves[..2])),
            "position startpos moves g4g5 e6e7"
        );
        assert_eq!(
            p.update(&turn(None, &moves)),
            "position startpos moves g4g5 e6e7 g5g4"
        );
        assert_eq!(
            p.update(&turn(Some("F"), &moves[..1])),
            "position fen F moves g4g5"
        );
        p.reset();
        assert_eq!(p.update(&turn(Some("F"), &moves[..0])), "position fen F");
    }

    #[test]
    fn go_commands_carry_both_clocks_or_the_limits() {
        let cfg = EngineConfig::parse(&["cmd=x", "depth=3"], &[]).unwrap();
        let clock = ClockReading {
            remaining: Duration::from_millis(1500),
            increment: Duration::from_millis(20),
            moves_to_go: Some(7),
        };
        let mut t = turn(None, &[]);
        assert_eq!(go_command(&cfg, &t), "go depth 3");
        t.clocks = [Some(clock), Some(clock)];
        assert_eq!(
            go_command(&cfg, &t),
            "go wtime 1500 winc 20 btime 1500 binc 20 movestogo 7 depth 3"
        );
        let mit = EngineConfig::parse(&["cmd=x", "proto=leiserchess", "depth=3"], &[]).unwrap();
        assert_eq!(go_command(&mit, &t), "go time 1500 inc 20");
        t.clocks = [None, None];
        assert_eq!(go_command(&mit, &t), "go depth 3");
        let limits = ["cmd=x", "st=0.25", "nodes=18446744073709551615"];
        let uci = EngineConfig::parse(&limits, &[]).unwrap();
        assert_eq!(
            go_command(&uci, &t),
            "go movetime 250 nodes 18446744073709551615"
        );
        let mit = EngineConfig::parse(&["cmd=x", "proto=leiserchess", "st=0.25"], &[]).unwrap();
        assert_eq!(go_command(&mit, &t), "go time 12500 inc 0");
    }

    #[test]
    fn a_cecp_engine_is_told_each_move_once() {
        let cfg = EngineConfig::parse(&["cmd=x", "proto=xboard", "tc=40/90+0.5"], &[]).unwrap();
        assert_eq!(
            xboard_new_game(&cfg, "ultima"),
            [
                "new",
                "variant ultima",
                "force",
                "post",
                "level 40 1:30 0.5"
            ]
        );
        let mut g = XboardGame::default();
        let moves: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let clock = ClockReading {
            remaining: Duration::from_millis(1234),
            increment: Duration::ZERO,
            moves_to_go: None,
        };
        let mut t = turn(Some("F"), &moves[..1]);
        t.side = Color::Black;
        t.clocks = [Some(clock), None];
        assert_eq!(
            g.turn(&t),
            ["force", "setboard F", "usermove a", "otim 123", "go"]
        );
        // Its own reply "b" is on its board already: only "c" is new.
        let t = turn(Some("F"), &moves[..3]);
        assert_eq!(g.turn(&t), ["force", "usermove c", "go"]);
    }
}
