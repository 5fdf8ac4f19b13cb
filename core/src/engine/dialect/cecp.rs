//! CECP, the xboard/WinBoard protocol 2: `xboard`/`protover 2` and the engine's `feature` lines,
//! `ping`/`pong`, a game begun with `new`, the variant, force mode and its limits (`level`,
//! `st`, `sd`), and a turn as the moves it has not seen (`usermove`), both clocks and `go`.

use super::{ClockReading, Dialect, Turn};
use crate::engine::config::EngineConfig;
use crate::engine::options::{check_options, OfferedOption};
use crate::engine::process::{EngineError, EngineIo, MAX_OFFERED_OPTIONS};
use crate::engine::protocol::{EngineLine, Info, Score};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct Cecp {
    /// The game it was started for: CECP names the variant at every new game.
    game: String,
    board: Board,
    /// The last `ping` number sent.
    pings: u32,
}

impl Dialect for Cecp {
    /// `xboard`, `protover 2`, the engine's `feature` lines up to `done=1`; the game must be
    /// among its `variants`; options as `option Name=Value`; then `ping` until `pong`.
    async fn handshake(&mut self, io: &mut EngineIo, game: &str) -> Result<(), EngineError> {
        self.game = game.to_string();
        let deadline = Instant::now() + io.config.handshake;
        io.send_lines(&["xboard", "protover 2"]).await?;
        let features = read_features(io, deadline).await?;
        if let Some((_, name)) = features.iter().find(|(k, _)| k == "myname") {
            io.id_name = Some(name.clone());
        }
        let variants = features
            .iter()
            .find(|(k, _)| k == "variants")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        if !variants
            .split(',')
            .any(|v| v.trim().eq_ignore_ascii_case(game))
        {
            return Err(EngineError::Variant {
                name: io.config.name.clone(),
                game: game.to_string(),
                reason: format!("its CECP variants are '{variants}'"),
            });
        }
        let offered: Vec<OfferedOption> = features
            .iter()
            .filter(|(k, _)| k == "option")
            .filter_map(|(_, v)| OfferedOption::from_cecp(v))
            .collect();
        check_options(&offered, &io.config.options).map_err(|reason| EngineError::Option {
            name: io.config.name.clone(),
            reason,
        })?;
        io.offered = offered;
        let mut lines: Vec<String> = features
            .iter()
            .filter(|(k, _)| k != "done")
            .map(|(k, _)| format!("accepted {k}"))
            .collect();
        lines.extend(
            io.config
                .options
                .iter()
                .map(|(name, value)| format!("option {name}={value}")),
        );
        send_all(io, &lines).await?;
        self.ping(io, deadline).await
    }

    async fn sync(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        let deadline = Instant::now() + io.config.handshake;
        self.ping(io, deadline).await
    }

    /// `new`, the variant, force mode and the game's limits.
    async fn new_game(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        self.board = Board::default();
        send_all(io, &new_game_lines(&io.config, &self.game)).await?;
        self.sync(io).await
    }

    async fn ask_move(
        &mut self,
        io: &mut EngineIo,
        turn: &Turn<'_>,
        // Never asked: CECP has no `isready`, and `ping` would answer before a move's search.
        _sync: Option<Duration>,
    ) -> Result<Instant, EngineError> {
        let lines = self.board.turn(turn);
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let sent = Instant::now();
        io.send_lines(&refs).await?;
        Ok(sent)
    }

    fn read_reply(&self, line: String) -> EngineLine {
        parse_line(&line)
    }
}

impl Cecp {
    /// `ping N` until `pong N`.
    async fn ping(&mut self, io: &mut EngineIo, deadline: Instant) -> Result<(), EngineError> {
        self.pings += 1;
        let expected = format!("pong {}", self.pings);
        io.send(&format!("ping {}", self.pings)).await?;
        loop {
            if io.next_line(deadline, "ping").await?.text.trim() == expected {
                return Ok(());
            }
        }
    }
}

async fn send_all(io: &mut EngineIo, lines: &[String]) -> Result<(), EngineError> {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    io.send_lines(&refs).await
}

/// The features up to `done=1`.
async fn read_features(
    io: &mut EngineIo,
    deadline: Instant,
) -> Result<Vec<(String, String)>, EngineError> {
    let mut features: Vec<(String, String)> = Vec::new();
    while !features.iter().any(|(k, v)| k == "done" && v == "1") {
        let line = io.next_line(deadline, "protover").await?;
        for (key, value) in parse_features(&line.text).unwrap_or_default() {
            // A repeated feature replaces the earlier one (options are many, each once):
            // an engine repeating itself cannot grow our memory.
            if key != "option" {
                features.retain(|(k, _)| *k != key);
            }
            if features.len() < MAX_OFFERED_OPTIONS || key == "done" {
                features.push((key, value));
            }
        }
    }
    Ok(features)
}

/// The commands that start a game: the variant, force mode (the referee says when to move),
/// thinking output, and the limits, which CECP sets per game rather than per move.
pub fn new_game_lines(cfg: &EngineConfig, game: &str) -> Vec<String> {
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

/// What the engine has been told of the current game: it keeps its own board.
#[derive(Clone, Debug, Default)]
struct Board {
    set: bool,
    moves_sent: usize,
}

impl Board {
    /// The commands for a turn: back to force mode, the start position once, the moves the
    /// engine has not seen, both clocks in centiseconds, and `go`. The engine's own reply is a
    /// move it has already made on its board.
    fn turn(&mut self, turn: &Turn) -> Vec<String> {
        let mut lines = vec!["force".to_string()];
        if !self.set {
            if let Some(fen) = turn.start_fen {
                lines.push(format!("setboard {fen}"));
            }
            self.set = true;
        }
        let from = self.moves_sent.min(turn.moves.len());
        lines.extend(turn.moves[from..].iter().map(|m| format!("usermove {m}")));
        let cs = |c: &ClockReading| c.remaining.as_millis() / 10;
        if let Some(own) = turn.own_clock() {
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

/// Parses one line of a CECP engine: `move <m>`, `resign`, `pong <n>`, and the thinking output
/// `<ply> <score> <time in centiseconds> <nodes> <pv>` as `Info`.
pub fn parse_line(line: &str) -> EngineLine {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    match words.as_slice() {
        ["move", mv, ..] => EngineLine::BestMove(Some(mv.to_string())),
        ["resign", ..] => EngineLine::Resign,
        ["pong", ..] => EngineLine::ReadyOk,
        [ply, score, cs, nodes, ..] => {
            let ply = ply.trim_end_matches(['.', '&']).parse::<u32>();
            match (
                ply,
                score.parse::<i32>(),
                cs.parse::<u64>(),
                nodes.parse::<u64>(),
            ) {
                (Ok(depth), Ok(cp), Ok(cs), Ok(nodes)) => EngineLine::Info(Info {
                    depth: Some(depth),
                    score: Some(Score::Centipawns(cp)),
                    nodes: Some(nodes),
                    time_us: Some(cs.saturating_mul(10_000)),
                    ..Info::default()
                }),
                _ => EngineLine::Other(line.to_string()),
            }
        }
        _ => EngineLine::Other(line.to_string()),
    }
}

/// The `key=value` pairs of a `feature` line (values may be quoted and hold spaces), or `None`
/// for another line.
pub fn parse_features(line: &str) -> Option<Vec<(String, String)>> {
    let mut rest = line.trim().strip_prefix("feature")?.trim_start();
    let mut features = Vec::new();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().to_string();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.split_once('"') {
                Some((v, n)) => (v.to_string(), n),
                None => (quoted.to_string(), ""),
            },
            None => match after.split_once(char::is_whitespace) {
                Some((v, n)) => (v.to_string(), n),
                None => (after.to_string(), ""),
            },
        };
        features.push((key, value));
        rest = next.trim_start();
    }
    Some(features)
}

#[cfg(test)]
mod tests {
    use super::super::tests::turn;
    use super::*;
    use crate::game::Color;
    use std::time::Duration;

    #[test]
    fn an_engine_is_told_each_move_once() {
        let cfg = EngineConfig::parse(&["cmd=x", "proto=xboard", "tc=40/90+0.5"], &[]).unwrap();
        assert_eq!(
            new_game_lines(&cfg, "ultima"),
            [
                "new",
                "variant ultima",
                "force",
                "post",
                "level 40 1:30 0.5"
            ]
        );
        let mut g = Board::default();
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

    /// Found by the fuzzer (fuzz/corpus/engine_lines/time-overflow-*): an engine's time too
    /// large to hold in microseconds panicked in a debug build and wrapped in a release one.
    #[test]
    fn a_huge_reported_time_saturates() {
        match parse_line(&format!("5 12 {} 100 e2e4", u64::MAX / 100)) {
            EngineLine::Info(info) => assert_eq!(info.time_us, Some(u64::MAX)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lines_and_features() {
        assert_eq!(
            parse_line("move g4g5"),
            EngineLine::BestMove(Some("g4g5".into()))
        );
        assert_eq!(parse_line("resign"), EngineLine::Resign);
        assert_eq!(parse_line("pong 3"), EngineLine::ReadyOk);
        let EngineLine::Info(info) = parse_line("7 -35 120 40000 g4g5 e6e7") else {
            panic!()
        };
        assert_eq!(
            (info.depth, info.score, info.time_us, info.nodes),
            (
                Some(7),
                Some(Score::Centipawns(-35)),
                Some(1_200_000),
                Some(40_000)
            )
        );
        let f = parse_features("feature myname=\"my engine\" usermove=1 variants=\"a,b\" done=1")
            .unwrap();
        assert_eq!(
            f,
            [
                ("myname", "my engine"),
                ("usermove", "1"),
                ("variants", "a,b"),
                ("done", "1")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(parse_features("move e2e4"), None);
    }
}
