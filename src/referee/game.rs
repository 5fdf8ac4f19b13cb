//! One game between two engine processes: every move checked by the rules, clocks kept, draw
//! rules and adjudication applied, and every way an engine can fail turned into a result.

use super::adjudication::{Adjudication, Verdict};
use super::clock::Clock;
use super::record::{today, GameRecord, MoveRecord};
use crate::engine::log::IoLog;
use crate::engine::{EngineConfig, EngineError, EngineProcess, Thought, Turn};
use crate::game::{Color, GameEntry, MoveError, Outcome, Status, Termination};
use std::time::{Duration, Instant};

/// An engine seat: its settings and, while it runs, its process. The process is reused from game
/// to game and started again after it failed.
pub struct Player {
    pub config: EngineConfig,
    process: Option<EngineProcess>,
}

impl Player {
    pub fn new(config: EngineConfig) -> Player {
        Player {
            config,
            process: None,
        }
    }

    /// The running engine, started (and handshaken for `game`) if need be.
    pub async fn ensure(
        &mut self,
        game: &str,
        log: &Option<IoLog>,
    ) -> Result<&mut EngineProcess, EngineError> {
        if self.process.is_none() {
            self.process = Some(EngineProcess::start(&self.config, game, log.clone()).await?);
        }
        Ok(self.process.as_mut().expect("just started"))
    }

    /// Kills the process after a failure; the next game starts a fresh one.
    pub async fn discard(&mut self) {
        if let Some(p) = self.process.take() {
            p.kill().await;
        }
    }

    /// Ends the process politely (`quit`, then kill after a grace period).
    pub async fn shutdown(&mut self) {
        if let Some(p) = self.process.take() {
            p.quit().await;
        }
    }
}

/// What to play: the game, where it starts, and the rules for ending it early.
#[derive(Clone, Debug)]
pub struct GameSpec {
    pub entry: &'static GameEntry,
    /// A FEN (or setup) to start from instead of the standard start.
    pub start_fen: Option<String>,
    /// Book moves played before the engines take over.
    pub opening: Vec<String>,
    /// The opening's number in the book (1-based), 0 for the start position.
    pub opening_number: usize,
    /// The round of the run (1-based), as the PGN Round tag and games.csv say.
    pub round: u64,
    pub adjudication: Adjudication,
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

struct Finish {
    outcome: Outcome,
    termination: Termination,
    detail: String,
}

fn loss(loser: Color, termination: Termination, detail: String) -> Finish {
    Finish {
        outcome: loser.other().wins(),
        termination,
        detail,
    }
}

/// Why a game was not played at all: neither is a result for anyone.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The start position or the book line is not legal.
    #[error("{0}")]
    BadStart(String),
    /// An engine could not be started and made ready for the game. A broken set-up is not a
    /// loss: scoring it would let a test pass against an engine that never played.
    #[error("engine '{engine}' could not start: {reason}")]
    EngineStart { engine: String, reason: String },
}

/// Plays one game. Engine failures once the game is under way never escape: they become the
/// failing side's loss. An error is returned when the game cannot start.
pub async fn play_game(
    spec: &GameSpec,
    white: &mut Player,
    black: &mut Player,
    log: &Option<IoLog>,
) -> Result<GameRecord, GameError> {
    let started = Instant::now();
    let mut game = spec
        .entry
        .new_game(spec.start_fen.as_deref())
        .map_err(|e| GameError::BadStart(e.to_string()))?;
    let start_fen = game.fen();
    let standard_start = start_fen
        == spec
            .entry
            .new_game(None)
            .map(|g| g.fen())
            .unwrap_or_default();
    let mut moves: Vec<MoveRecord> = Vec::new();
    // The moves as the engines are told them.
    let mut played: Vec<String> = Vec::new();
    for (i, mv) in spec.opening.iter().enumerate() {
        let report = game
            .play(mv)
            .map_err(|e| GameError::BadStart(format!("opening move {} '{mv}': {e}", i + 1)))?;
        played.push(report.mv.clone());
        moves.push(MoveRecord {
            text: report.mv,
            book: true,
            score: None,
            depth: None,
            elapsed: Duration::ZERO,
            reported_us: None,
        });
    }
    let book_plies = moves.len();
    let names = [white.config.name.clone(), black.config.name.clone()];
    let mut clocks = [
        white.config.limits.tc.map(Clock::new),
        black.config.limits.tc.map(Clock::new),
    ];
    let mut scores: Vec<Option<i32>> = vec![None; book_plies];
    let game_id = spec.entry.id;

    // Both engines get ready for a new game; one that cannot has not played it.
    for player in [&mut *white, &mut *black] {
        let ready = match player.ensure(game_id, log).await {
            Ok(p) => p.new_game().await,
            Err(e) => Err(e),
        };
        if let Err(e) = ready {
            player.discard().await;
            return Err(GameError::EngineStart {
                engine: player.config.name.clone(),
                reason: e.to_string(),
            });
        }
    }

    let mut finish: Option<Finish> = None;
    while finish.is_none() {
        if let Status::Over(outcome, termination) = game.status() {
            finish = Some(Finish {
                outcome,
                termination,
                detail: match outcome {
                    Outcome::WhiteWins => format!("White wins by {termination}"),
                    Outcome::BlackWins => format!("Black wins by {termination}"),
                    Outcome::Draw => format!("Draw by {termination}"),
                },
            });
            break;
        }
        if spec
            .adjudication
            .max_plies
            .is_some_and(|m| game.ply_count() >= m)
        {
            finish = Some(Finish {
                outcome: Outcome::Draw,
                termination: Termination::MaxPlies,
                detail: format!("drawn after {} plies", game.ply_count()),
            });
            break;
        }
        let side = game.turn();
        let player = if side == Color::White {
            &mut *white
        } else {
            &mut *black
        };
        let cfg = &player.config;
        let (movetime, timemargin) = (cfg.limits.movetime, cfg.timemargin);
        let clock_limited = clocks[side.index()].is_some() || movetime.is_some();
        let allowed = match (&clocks[side.index()], movetime) {
            (Some(c), _) => c.remaining() + timemargin,
            (None, Some(st)) => st + timemargin,
            (None, None) => cfg.stall,
        };
        let engine = match player.ensure(game_id, log).await {
            Ok(e) => e,
            Err(e) => {
                player.discard().await;
                finish = Some(loss(
                    side,
                    Termination::EngineCrash,
                    format!("{} could not restart: {e}", side_name(side)),
                ));
                break;
            }
        };
        let turn = Turn {
            start_fen: (!standard_start).then_some(start_fen.as_str()),
            moves: &played,
            side,
            clocks: [0, 1].map(|i| clocks[i].as_ref().map(Clock::reading)),
        };
        let (text, elapsed, info) = match engine.think(&turn, allowed).await {
            Ok(Thought {
                text,
                elapsed,
                info,
            }) => (text, elapsed, info),
            Err(e) => {
                let who = side_name(side);
                let (termination, detail) = match &e {
                    EngineError::Timeout { .. } if clock_limited => {
                        (Termination::TimeForfeit, format!("{who} ran out of time"))
                    }
                    EngineError::Timeout { .. } => (
                        Termination::EngineStall,
                        format!("{who} sent no move within {:.1} s", allowed.as_secs_f64()),
                    ),
                    _ => (
                        Termination::EngineCrash,
                        format!("{who}'s engine exited: {e}"),
                    ),
                };
                player.discard().await;
                finish = Some(loss(side, termination, detail));
                break;
            }
        };
        // The clock first: a move that comes too late loses even if it is legal.
        let in_time = match (&mut clocks[side.index()], movetime) {
            (Some(c), _) => c.charge(elapsed, timemargin),
            (None, Some(st)) => elapsed <= st + timemargin,
            (None, None) => true,
        };
        if !in_time {
            finish = Some(loss(
                side,
                Termination::TimeForfeit,
                format!(
                    "{} ran out of time ({:.3} s for its move)",
                    side_name(side),
                    elapsed.as_secs_f64()
                ),
            ));
            break;
        }
        let Some(text) = text else {
            finish = Some(loss(
                side,
                Termination::IllegalMove,
                format!("{} claimed to have no legal move", side_name(side)),
            ));
            break;
        };
        let report = match game.play(&text) {
            Ok(r) => r,
            Err(e) => {
                let kind = match e {
                    MoveError::Malformed { .. } => "an unreadable move",
                    MoveError::Illegal { .. } => "an illegal move",
                };
                finish = Some(loss(
                    side,
                    Termination::IllegalMove,
                    format!("{} sent {kind}: {e}", side_name(side)),
                ));
                break;
            }
        };
        played.push(report.mv.clone());
        scores.push(info.score.map(|s| s.as_cp()));
        moves.push(MoveRecord {
            text: report.mv,
            book: false,
            score: info.score,
            depth: info.depth,
            elapsed,
            reported_us: info.time_us,
        });
        if game.status() == Status::Ongoing {
            match spec.adjudication.judge(&scores, book_plies, side) {
                Some(Verdict::Draw) => {
                    finish = Some(Finish {
                        outcome: Outcome::Draw,
                        termination: Termination::Adjudication,
                        detail: "drawn by adjudication: both scores stayed near zero".into(),
                    })
                }
                Some(Verdict::Resign(loser)) => {
                    finish = Some(loss(
                        loser,
                        Termination::Adjudication,
                        format!("{} resigns: its score stayed hopeless", side_name(loser)),
                    ))
                }
                None => {}
            }
        }
    }
    let finish = finish.expect("the loop ends with a result");
    game.set_status(Status::Over(finish.outcome, finish.termination));
    let tags: Vec<String> = [&*white, &*black]
        .iter()
        .map(|p| p.config.time_control_tag())
        .collect();
    Ok(GameRecord {
        game: game_id.to_string(),
        white: names[0].clone(),
        black: names[1].clone(),
        start_fen: (!standard_start).then_some(start_fen),
        moves,
        outcome: finish.outcome,
        termination: finish.termination,
        detail: finish.detail,
        time_control: if tags[0] == tags[1] {
            tags[0].clone()
        } else {
            format!("{}:{}", tags[0], tags[1])
        },
        duration: started.elapsed(),
        opening: spec.opening_number,
        round: spec.round,
        date: today(),
    })
}
