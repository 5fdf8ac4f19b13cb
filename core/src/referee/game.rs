//! One game between two engine processes: every move checked by the rules, clocks kept, draw
//! rules and adjudication applied, and every way an engine can fail turned into a result.

use super::adjudication::{Adjudication, Verdict};
use super::record::{today, GameRecord, MoveRecord};
use crate::clock::Clock;
use crate::engine::cgroup::Freezer;
use crate::engine::log::IoLog;
use crate::engine::{ClockReading, EngineConfig, EngineError, EngineProcess, Info, Thought, Turn};
use crate::game::{AnyGame, Color, GameEntry, MoveError, Outcome, Status, Termination};
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

    /// Plays with an engine already started with this player's configuration (the start-up
    /// check's).
    /// The engine process playing, if one is running.
    pub fn process(&self) -> Option<&EngineProcess> {
        self.process.as_ref()
    }

    pub fn adopt(&mut self, engine: EngineProcess) {
        debug_assert!(*engine.config() == self.config && self.process.is_none());
        self.process = Some(engine);
    }

    /// The running engine's freezer, for its opponent's turns.
    pub fn idle_freezer(&self) -> Option<&Freezer> {
        self.process
            .as_ref()
            .and_then(EngineProcess::idle_freezer)
            .map(|f| &**f)
    }

    /// Freezes the engine no more between its turns, in this process and any started later
    /// (unless `freeze=on` asked for it whatever the machine's load).
    pub fn stop_freezing(&mut self) {
        if self.config.sandbox.freezing_kept_under_load() {
            return;
        }
        self.config.sandbox.unfrozen = true;
        if let Some(p) = self.process.as_mut() {
            p.stop_freezing();
        }
    }

    /// On a machine busy with other work: the engine, in this process and any started later,
    /// is scheduled as a plain process (see `Confinement::plain_cpu`) and frozen no more
    /// between its turns (unless `freeze=on`).
    pub fn share_a_busy_machine(&mut self) {
        self.config.sandbox.plain_cpu = true;
        if let Some(p) = self.process.as_mut() {
            p.leave_cpu_group();
        }
        self.stop_freezing();
    }

    /// Says once that the engine was caught using CPU on its opponent's time, and freezes every
    /// process of it started from now on as its running one is: on each turn of its opponent's.
    fn note_if_caught(&mut self) {
        if self.config.sandbox.caught {
            return;
        }
        let Some(used) = self.idle_freezer().and_then(Freezer::caught) else {
            return;
        };
        self.config.sandbox.caught = true;
        crate::notice!(
            "frozen: {} used {:.1} ms of CPU on a turn of its opponent's (it ponders, or its \
             runtime works between its moves); it is frozen on every turn of its opponent's from \
             now on (freeze=off lets it run)",
            self.config.name,
            used.as_secs_f64() * 1e3
        );
    }

    /// Whether the engine is frozen between its turns.
    pub fn freezes(&self) -> bool {
        self.idle_freezer().is_some()
    }

    /// The running engine, taken to be kept for a later run (it is this player's no more).
    pub fn take_process(&mut self) -> Option<EngineProcess> {
        self.process.take()
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
    /// Chess: the engines' reported lines checked (`--check-pvs`), their faults warned of.
    pub check_pvs: Option<super::pv_check::PvChecks>,
    /// The game's rule options chosen for the run (`repetition=fairy-stockfish`).
    pub rules: Vec<(String, String)>,
    /// Clocks as the MIT course's tester keeps them: each book move earns its side the increment
    /// and counts toward a move-count period (it counts every ply from the start), and a move's
    /// increment comes only after it (`Clock::increment_after`). Otherwise the clocks start
    /// when the book ends, and keep time as cutechess-cli and fastchess do.
    pub course_clock: bool,
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

/// The game as it stands: the rules' position, the moves as engines are told them and as they
/// are recorded, the engines' scores (for adjudication) and both clocks.
struct Table {
    game: Box<dyn AnyGame>,
    /// The start position's FEN when it is not the game's standard start.
    start_fen: Option<String>,
    /// The moves' texts, as engines are told them; the records get theirs when the game ends
    /// (one copy a move, not two).
    played: Vec<String>,
    moves: Vec<MoveRecord>,
    scores: Vec<Option<i32>>,
    book_plies: usize,
    clocks: [Option<Clock>; 2],
    /// When the last engine move was read, and the referee's time from each such reading to
    /// the next request written.
    last_read: Option<Instant>,
    turnaround_us: Vec<u32>,
    /// What draws an engine book's moves: the game's round and opening, so that a game played
    /// again (resumed, or by another task of a split run) draws the same moves.
    book_draw: u64,
    /// The PV checks of a chess game, and whether it is Chess960.
    check_pvs: Option<(super::pv_check::PvChecks, bool)>,
    /// What they found, each warning as fastchess prints it (its lines joined by newlines).
    pv_warnings: Vec<String>,
}

impl Table {
    /// The start position with the book moves played; an illegal one is a bad start, not a
    /// result.
    fn sight(&self, started: Instant) -> Sight<'_> {
        Sight {
            at: self.last_read.unwrap_or(started),
            start_fen: self.start_fen.as_deref(),
            moves: &self.played,
            book_plies: self.book_plies,
            clocks: self
                .clocks
                .each_ref()
                .map(|c| c.as_ref().map(Clock::remaining)),
        }
    }

    fn set_up(spec: &GameSpec, configs: [&EngineConfig; 2]) -> Result<Table, GameError> {
        let game = spec
            .entry
            .new_game_with(spec.start_fen.as_deref(), &spec.rules)
            .map_err(|e| GameError::BadStart(e.to_string()))?;
        let standard = spec.entry.new_game(None).map(|g| g.fen()).ok();
        let fen = game.fen();
        // Room for a typical game from the start: no list grows mid-game, when each growth
        // copies it (cold, after an engine's search).
        let room = crate::game::TYPICAL_PLIES;
        let mut table = Table {
            start_fen: (standard.as_deref() != Some(fen.as_str())).then_some(fen),
            game,
            played: Vec::with_capacity(room),
            moves: Vec::with_capacity(room),
            scores: Vec::with_capacity(room),
            book_plies: 0,
            clocks: configs.map(|c| {
                let clock = match spec.course_clock {
                    true => Clock::increment_after,
                    false => Clock::new,
                };
                c.limits.tc.map(clock)
            }),
            last_read: None,
            turnaround_us: Vec::with_capacity(room),
            book_draw: spec.round.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ spec.opening_number as u64,
            check_pvs: spec.check_pvs.zip(chess_kind(spec.entry.id)),
            pv_warnings: Vec::new(),
        };
        for (i, mv) in spec.opening.iter().enumerate() {
            let side = table.game.turn();
            let report = table
                .game
                .play(mv)
                .map_err(|e| GameError::BadStart(format!("opening move {} '{mv}': {e}", i + 1)))?;
            table.record(report.mv, true, Duration::ZERO, Info::default());
            if spec.course_clock {
                if let Some(clock) = &mut table.clocks[side.index()] {
                    clock.charge(Duration::ZERO, Duration::ZERO);
                }
            }
        }
        table.book_plies = table.moves.len();
        if table.book_plies > 0 {
            table.game.end_book();
        }
        Ok(table)
    }

    fn record(&mut self, text: String, book: bool, elapsed: Duration, info: Info) {
        self.played.push(text);
        self.scores.push(info.score.map(|s| s.as_cp()));
        self.moves.push(MoveRecord {
            text: String::new(),
            book,
            score: info.score,
            depth: info.depth,
            elapsed,
            reported_us: info.time_us,
            nodes: info.nodes,
            seldepth: info.seldepth,
            lines: info.lines,
        });
    }

    /// The end the rules or the ply limit give, if the game is over.
    fn natural_end(&self, spec: &GameSpec) -> Option<Finish> {
        if let Status::Over(outcome, termination) = self.game.status() {
            let detail = match outcome {
                Outcome::WhiteWins => format!("White wins by {termination}"),
                Outcome::BlackWins => format!("Black wins by {termination}"),
                Outcome::Draw => format!("Draw by {termination}"),
            };
            return Some(Finish {
                outcome,
                termination,
                detail,
            });
        }
        let plies = self.game.ply_count();
        spec.adjudication
            .max_plies
            .is_some_and(|m| plies >= m)
            .then(|| Finish {
                outcome: Outcome::Draw,
                termination: Termination::MaxPlies,
                detail: format!("drawn after {plies} plies"),
            })
    }

    /// The move the engine's own book plays for it here (cutechess-cli's `book=`, in plies up to
    /// twice `bookdepth=`), if any.
    fn engine_book_move(&self, cfg: &EngineConfig, game_id: &str) -> Option<String> {
        let path = cfg.book.as_deref()?;
        let plies = self.game.ply_count();
        if cfg.bookdepth.is_some_and(|d| plies >= 2 * d as usize) {
            return None;
        }
        let chess960 = chess_kind(game_id)?;
        let book = crate::engine::book::shared(path).ok()?;
        // A draw of its own at every ply, from the game's.
        let draw = (self.book_draw ^ plies as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        book.pick(&self.game.fen(), chess960, draw >> 17)
    }

    fn turn(&self, side: Color) -> Turn<'_> {
        Turn {
            start_fen: self.start_fen.as_deref(),
            moves: &self.played,
            side,
            clocks: [0, 1].map(|i| self.clocks[i].as_ref().map(ClockReading::of)),
        }
    }

    /// Asks the side to move for its move and plays it; any failure is that side's loss.
    async fn engine_move(
        &mut self,
        player: &mut Player,
        idle: Option<&Freezer>,
        side: Color,
        game_id: &str,
        log: &Option<IoLog>,
    ) -> Result<(), Finish> {
        if let Some(text) = self.engine_book_move(&player.config, game_id) {
            if let Ok(report) = self.game.play(&text) {
                self.record(report.mv, true, Duration::ZERO, Info::default());
                return Ok(());
            }
        }
        let cfg = &player.config;
        let (movetime, timemargin) = (cfg.limits.movetime, cfg.timemargin);
        let clock_limited = self.clocks[side.index()].is_some() || movetime.is_some();
        let allowed = match (&self.clocks[side.index()], movetime) {
            (Some(c), _) => c.allowance() + timemargin,
            (None, Some(st)) => st + timemargin,
            (None, None) => cfg.stall,
        };
        let engine = match player.ensure(game_id, log).await {
            Ok(e) => e,
            Err(e) => {
                player.discard().await;
                let detail = format!("{} could not restart: {e}", side_name(side));
                return Err(loss(side, Termination::EngineCrash, detail));
            }
        };
        let thought = match engine.think(&self.turn(side), allowed, idle).await {
            Ok(t) => t,
            Err(e) => {
                player.discard().await;
                return Err(failure(side, &e, clock_limited, allowed));
            }
        };
        if let Some(size) = engine.filled_scratch() {
            player.discard().await;
            let detail = format!(
                "{} filled its writable space ({})",
                side_name(side),
                crate::engine::sandbox::show_size(size)
            );
            return Err(loss(side, Termination::DiskLimit, detail));
        }
        if let Some(read) = self.last_read {
            let us = thought.asked_at.saturating_duration_since(read).as_micros();
            self.turnaround_us
                .push(u32::try_from(us).unwrap_or(u32::MAX));
        }
        self.last_read = Some(thought.read_at);
        // The clock first: a move that comes too late loses even if it is legal.
        let allowed = self.clocks[side.index()]
            .as_ref()
            .map(Clock::allowance)
            .or(movetime);
        let in_time = match (&mut self.clocks[side.index()], movetime) {
            (Some(c), _) => c.charge(thought.elapsed, timemargin),
            (None, Some(st)) => thought.elapsed <= st + timemargin,
            (None, None) => true,
        };
        if !in_time {
            let over = thought.elapsed.saturating_sub(allowed.unwrap_or_default());
            let detail = format!(
                "{} ran out of time ({:.3} s for its move, {} ms over)",
                side_name(side),
                thought.elapsed.as_secs_f64(),
                over.as_millis()
            );
            return Err(loss(side, Termination::TimeForfeit, detail));
        }
        let name = player.config.name.clone();
        self.play_engine_move(side, thought, &name)
    }

    /// Checks the engine's move against the rules and plays it.
    fn play_engine_move(
        &mut self,
        side: Color,
        thought: Thought,
        name: &str,
    ) -> Result<(), Finish> {
        if thought.resigned {
            let detail = format!("{} resigned", side_name(side));
            return Err(loss(side, Termination::Resignation, detail));
        }
        let Some(text) = thought.text else {
            let detail = format!("{} claimed to have no legal move", side_name(side));
            return Err(loss(side, Termination::IllegalMove, detail));
        };
        // The lines are checked against the position searched; a move the rules refuse is
        // not compared with them (as fastchess compares only a legal one).
        let searched = self.check_pvs.map(|_| self.game.fen());
        let played = self.game.play(&text);
        if let (Some((checks, chess960)), Some(fen)) = (self.check_pvs, searched) {
            let legal = if played.is_ok() { text.as_str() } else { "" };
            self.check_lines(&fen, &thought.info.pv_lines, legal, name, checks, chess960);
        }
        match played {
            Ok(report) => {
                self.record(report.mv, false, thought.elapsed, thought.info);
                Ok(())
            }
            Err(e) => {
                let kind = match e {
                    MoveError::Malformed { .. } => "an unreadable move",
                    MoveError::Illegal { .. } => "an illegal move",
                };
                // The engine's bytes are shown, not obeyed: control characters and direction
                // marks are written as escapes in the PGN, the reports and the journal.
                let shown = super::shown::shown(&e.to_string());
                let detail = format!("{} sent {kind}: {shown}", side_name(side));
                Err(loss(side, Termination::IllegalMove, detail))
            }
        }
    }

    /// Checks the lines an engine reported for the move `played` against the position it
    /// searched, keeping fastchess's warnings with the game's start and moves.
    fn check_lines(
        &mut self,
        searched: &str,
        lines: &[String],
        played: &str,
        name: &str,
        checks: super::pv_check::PvChecks,
        chess960: bool,
    ) {
        if lines.is_empty() {
            return;
        }
        let mates = checks == super::pv_check::PvChecks::Mates;
        let found = super::pv_check::check(searched, chess960, lines, played, name, mates);
        for (warning, info) in found {
            let position = match &self.start_fen {
                Some(fen) => format!("Position; fen {fen}"),
                None => "Position; startpos".to_string(),
            };
            self.pv_warnings.push(format!(
                "{warning}\n{info}\n{position}\nMoves; {}",
                self.played.join(" ")
            ));
        }
    }

    /// Ends the game early by the tablebases or on the engines' scores after `side` moved, if
    /// the rules say so.
    fn adjudicate(
        &self,
        adjudication: &Adjudication,
        side: Color,
        game_id: &str,
    ) -> Option<Finish> {
        if self.game.status() != Status::Ongoing {
            return None;
        }
        // The tables first: they know the result, the scores only guess it.
        if let (Some(tb), Some(chess960)) = (&adjudication.tablebase, chess_kind(game_id)) {
            if let Some((outcome, detail)) = tb.tables.judge(&tb.rule, &self.game.fen(), chess960) {
                return Some(Finish {
                    outcome,
                    termination: Termination::Adjudication,
                    detail,
                });
            }
        }
        match adjudication.judge(&self.scores, self.book_plies, side)? {
            Verdict::Draw => Some(Finish {
                outcome: Outcome::Draw,
                termination: Termination::Adjudication,
                detail: "drawn by adjudication: both scores stayed near zero".into(),
            }),
            Verdict::Resign(loser) => Some(loss(
                loser,
                Termination::Adjudication,
                format!("{} resigns: its score stayed hopeless", side_name(loser)),
            )),
        }
    }
}

/// For chess, whether it is Chess960; `None` for any other game.
fn chess_kind(game_id: &str) -> Option<bool> {
    match game_id {
        "chess" => Some(false),
        "chess960" => Some(true),
        _ => None,
    }
}

/// The result of an engine that failed to answer: out of time, stalled, or gone.
fn failure(side: Color, e: &EngineError, clock_limited: bool, allowed: Duration) -> Finish {
    let who = side_name(side);
    let (termination, detail) = match e {
        EngineError::Timeout { .. } if clock_limited => {
            (Termination::TimeForfeit, format!("{who} ran out of time"))
        }
        EngineError::Timeout { .. } => (
            Termination::EngineStall,
            format!("{who} sent no move within {:.1} s", allowed.as_secs_f64()),
        ),
        EngineError::Stalled { .. } => (
            Termination::EngineStall,
            format!("{who} stopped answering 'isready' between its moves"),
        ),
        EngineError::OverMemory { limit, .. } => (
            Termination::MemoryLimit,
            format!("{who} exceeded its memory limit ({limit})"),
        ),
        _ => (
            Termination::EngineCrash,
            format!("{who}'s engine exited: {e}"),
        ),
    };
    loss(side, termination, detail)
}

/// Starts (if need be) and readies an engine for a new game; one that cannot has not played it.
async fn ready(player: &mut Player, game_id: &str, log: &Option<IoLog>) -> Result<(), GameError> {
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
    Ok(())
}

/// The game as it stands, shown to a spectator after each move (the live page's feed).
pub struct Sight<'a> {
    /// When the position arose (the last move read, or the game's start): a spectator needs
    /// no clock reading of its own at every move.
    pub at: Instant,
    /// The start position when it is not the game's standard start.
    pub start_fen: Option<&'a str>,
    /// The moves so far, book moves first.
    pub moves: &'a [String],
    pub book_plies: usize,
    /// Each side's time left, when it plays with a clock.
    pub clocks: [Option<Duration>; 2],
}

/// Told the game after each move; `&mut |_| {}` for nobody.
pub type Spectator<'s> = dyn FnMut(&Sight<'_>) + Send + 's;

/// Plays one game. Engine failures once the game is under way never escape: they become the
/// failing side's loss. An error is returned when the game cannot start.
pub async fn play_game(
    spec: &GameSpec,
    white: &mut Player,
    black: &mut Player,
    log: &Option<IoLog>,
    spectator: &mut Spectator<'_>,
) -> Result<GameRecord, GameError> {
    let started = Instant::now();
    let mut table = Table::set_up(spec, [&white.config, &black.config])?;
    let game_id = spec.entry.id;
    ready(white, game_id, log).await?;
    ready(black, game_id, log).await?;
    spectator(&table.sight(started));
    let finish = loop {
        if let Some(end) = table.natural_end(spec) {
            break end;
        }
        let side = table.game.turn();
        let (player, opponent) = if side == Color::White {
            (&mut *white, &mut *black)
        } else {
            (&mut *black, &mut *white)
        };
        let idle = opponent.idle_freezer();
        let moved = table.engine_move(player, idle, side, game_id, log).await;
        opponent.note_if_caught();
        if let Err(end) = moved {
            break end;
        }
        spectator(&table.sight(started));
        if let Some(end) = table.adjudicate(&spec.adjudication, side, game_id) {
            break end;
        }
    };
    table
        .game
        .set_status(Status::Over(finish.outcome, finish.termination));
    let tags = [&*white, &*black].map(|p| p.config.time_control_tag());
    Ok(GameRecord {
        game: game_id.to_string(),
        white: white.config.name.clone(),
        black: black.config.name.clone(),
        start_fen: table.start_fen,
        moves: (table.moves.into_iter())
            .zip(table.played)
            .map(|(record, text)| MoveRecord { text, ..record })
            .collect(),
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
        rules: spec
            .rules
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect(),
        turnaround_us: table.turnaround_us,
        overloaded: false,
        pv_warnings: table.pv_warnings,
    })
}
