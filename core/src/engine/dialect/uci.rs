//! UCI: `uci`/`uciok` with the engine's options, `setoption`, the variant through `UCI_Variant`
//! (confirmed by Fairy-Stockfish's `info string variant <name>`), `isready`/`readyok`,
//! `ucinewgame`, and a turn as `position ... moves ...` and `go` with both clocks.

use super::{millis, push_number, Dialect, Turn};
use crate::engine::config::EngineConfig;
use crate::engine::options::{check_options, OfferedOption, OptionKind};
use crate::engine::process::{EngineError, EngineIo, MAX_OFFERED_OPTIONS};
use crate::engine::protocol::{parse_line, parse_owned_line, EngineLine};
use crate::game::Color;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct Uci {
    request: Request,
}

impl Dialect for Uci {
    async fn handshake(&mut self, io: &mut EngineIo, game: &str) -> Result<(), EngineError> {
        handshake(io, game).await
    }

    async fn sync(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        ready(io, &[]).await
    }

    async fn new_game(&mut self, io: &mut EngineIo) -> Result<(), EngineError> {
        self.request.reset();
        // One write for both, as for every game: the engine wakes once.
        ready(io, &["ucinewgame"]).await
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

/// A turn's two commands, `position` and `go`, their buffers kept from turn to turn.
#[derive(Debug, Default)]
pub(super) struct Request {
    position: PositionCommand,
    go: String,
}

impl Request {
    pub(super) fn reset(&mut self) {
        self.position.reset();
    }

    /// Writes both, the `go` command as `go_words` words it; see `Dialect::ask_move`.
    pub(super) async fn send(
        &mut self,
        io: &mut EngineIo,
        turn: &Turn<'_>,
        go_words: fn(&EngineConfig, &Turn, &mut String),
        sync: Option<Duration>,
    ) -> Result<Instant, EngineError> {
        go_words(&io.config, turn, &mut self.go);
        let position = self.position.update(turn);
        let Some(limit) = sync else {
            let sent = Instant::now();
            io.send_lines(&[position, &self.go]).await?;
            return Ok(sent);
        };
        // `position` and `isready` in one write: one round trip, after which the engine is
        // awake and has set the position up (replaying a long game's moves) on the referee's
        // time, not its own. fastchess takes two (`isready`, `position`, `isready`).
        ready_before(io, &[position], limit).await?;
        io.send_lines(&[&self.go]).await?;
        Ok(Instant::now())
    }
}

/// Writes the `go` command for `cfg` on this turn into `go`, emptied first: the same buffer
/// serves every move of a match.
pub fn write_go_command(cfg: &EngineConfig, turn: &Turn, go: &mut String) {
    let l = &cfg.limits;
    go.clear();
    go.push_str("go");
    for (color, time, inc) in [
        (Color::White, " wtime ", " winc "),
        (Color::Black, " btime ", " binc "),
    ] {
        if let Some(c) = &turn.clocks[color.index()] {
            push_number(go, time, millis(c.remaining));
            push_number(go, inc, millis(c.increment));
        }
    }
    if let Some(m) = turn.own_clock().and_then(|c| c.moves_to_go) {
        push_number(go, " movestogo ", u64::from(m));
    }
    if let Some(st) = l.movetime {
        push_number(go, " movetime ", millis(st));
    }
    if let Some(d) = l.depth {
        push_number(go, " depth ", u64::from(d));
    }
    if let Some(n) = l.nodes {
        push_number(go, " nodes ", n);
    }
}

/// `uci` and the options; the configured options set; the variant chosen and confirmed; then
/// `isready`.
pub(super) async fn handshake(io: &mut EngineIo, game: &str) -> Result<(), EngineError> {
    let deadline = Instant::now() + io.config.handshake;
    let offered = set_options(io, deadline).await?;
    let variants = offered.iter().find_map(|o| match &o.kind {
        OptionKind::Combo { vars } if o.name.eq_ignore_ascii_case("UCI_Variant") => {
            Some(vars.clone())
        }
        _ => None,
    });
    io.offered = offered;
    let variant_error = |io: &EngineIo, reason: String| EngineError::Variant {
        name: io.config.name.clone(),
        game: game.to_string(),
        reason,
    };
    // Chess960 is chess to an engine without it among its variants (Stockfish, Fairy-Stockfish),
    // with `UCI_Chess960` on.
    let offers = |name: &str| {
        variants
            .as_ref()
            .is_some_and(|vars| vars.iter().any(|v| v.eq_ignore_ascii_case(name)))
    };
    let fischer_random = game.eq_ignore_ascii_case("chess960") && !offers(game);
    let asked = if fischer_random && offers("chess") {
        "chess"
    } else {
        game
    };
    if variants.is_none() && crate::engine::config::game_defaulted() && !asked.starts_with("chess")
    {
        return Err(variant_error(
            io,
            format!(
                "it offers no UCI_Variant, so nothing says it plays {asked}, the game arbiter \
                 plays unless told: a chess engine (stockfish) plays with --game chess; name \
                 the game it plays with --game"
            ),
        ));
    }
    let mut need_confirmation = false;
    if let Some(vars) = &variants {
        if !vars.is_empty() && !offers(asked) {
            return Err(variant_error(
                io,
                format!(
                    "its UCI_Variant offers {} (for Fairy-Stockfish, load the variant with \
                    option.VariantPath=<variants.ini>)",
                    vars.join(", ")
                ),
            ));
        }
        io.send(&format!("setoption name UCI_Variant value {asked}"))
            .await?;
        need_confirmation = true;
    }
    if fischer_random {
        let has_option = io
            .offered
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case("UCI_Chess960"));
        if !has_option {
            return Err(variant_error(
                io,
                "it offers no UCI_Chess960 option, which tells a UCI engine that castling is \
                 Chess960's"
                    .into(),
            ));
        }
        io.send("setoption name UCI_Chess960 value true").await?;
    }
    // Fairy-Stockfish ignores an unknown variant silently and stays on chess: only its
    // `info string variant <name>` line shows that the variant was taken.
    let confirmed = ready_collecting(io, deadline, asked, &[], false).await?;
    if need_confirmation && !confirmed {
        return Err(variant_error(
            io,
            format!(
                "it did not confirm the variant with 'info string variant {asked}' (for \
                Fairy-Stockfish, load the variant with option.VariantPath=<variants.ini>)"
            ),
        ));
    }
    Ok(())
}

/// `uci`, the options it offers checked against those asked and set; what it offers once
/// they are.
async fn set_options(
    io: &mut EngineIo,
    deadline: Instant,
) -> Result<Vec<OfferedOption>, EngineError> {
    io.send("uci").await?;
    let offered = read_options(io, deadline).await?;
    check_options(&offered, &io.config.options).map_err(|reason| EngineError::Option {
        name: io.config.name.clone(),
        reason,
    })?;
    for (name, value) in io.config.options.clone() {
        io.send(&format!("setoption name {name} value {value}"))
            .await?;
    }
    // Fairy-Stockfish learns its variants from the file VariantPath names, and lists them in
    // UCI_Variant only when asked again: a second `uci` before the variant is chosen.
    let options = &io.config.options;
    if options
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("VariantPath"))
    {
        io.send("uci").await?;
        return read_options(io, deadline).await;
    }
    Ok(offered)
}

/// The `option` lines up to `uciok`, and the engine's `id name`.
async fn read_options(
    io: &mut EngineIo,
    deadline: Instant,
) -> Result<Vec<OfferedOption>, EngineError> {
    let mut offered: Vec<OfferedOption> = Vec::new();
    loop {
        match parse_line(&io.next_line(deadline, "uci").await?.text) {
            EngineLine::UciOk => return Ok(offered),
            EngineLine::IdName(name) => io.id_name = Some(name),
            // An engine repeating an option is not allowed to grow our memory with it.
            EngineLine::Option(o) if offered.len() < MAX_OFFERED_OPTIONS => {
                offered.retain(|x| !x.name.eq_ignore_ascii_case(&o.name));
                offered.push(o);
            }
            _ => {}
        }
    }
}

/// `isready` until `readyok` within the handshake time, `before` written in the same write.
pub(super) async fn ready(io: &mut EngineIo, before: &[&str]) -> Result<(), EngineError> {
    let limit = io.config.handshake;
    ready_before(io, before, limit).await
}

/// `isready`, `before` written in the same write, until `readyok` within `limit`.
async fn ready_before(
    io: &mut EngineIo,
    before: &[&str],
    limit: Duration,
) -> Result<(), EngineError> {
    let deadline = Instant::now() + limit;
    ready_collecting(io, deadline, "", before, true)
        .await
        .map(|_| ())
}

/// `isready` until `readyok`; reports whether `info string variant <game>` was seen.
async fn ready_collecting(
    io: &mut EngineIo,
    deadline: Instant,
    game: &str,
    before: &[&str],
    soon: bool,
) -> Result<bool, EngineError> {
    // Whatever goes before `isready` shares its write: one wake-up of the engine.
    let mut lines = before.to_vec();
    lines.push("isready");
    io.send_lines(&lines).await?;
    let mut confirmed = false;
    loop {
        // A started engine answers soon; one just started (loading its network, say) may
        // not, and its handshake may share the runtime with another's.
        let line = if soon {
            io.next_line_soon(deadline, "isready").await?
        } else {
            io.next_line(deadline, "isready").await?
        };
        match parse_line(&line.text) {
            EngineLine::ReadyOk => return Ok(confirmed),
            EngineLine::Info(info) => {
                if let Some(s) = info.string {
                    let mut words = s.split_whitespace();
                    if words.next() == Some("variant")
                        && words.next().is_some_and(|v| v.eq_ignore_ascii_case(game))
                    {
                        confirmed = true;
                    }
                }
            }
            _ => {}
        }
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
    use super::super::tests::turn;
    use super::super::ClockReading;
    use super::*;
    use std::time::Duration;

    pub(crate) fn go_command(cfg: &EngineConfig, turn: &Turn) -> String {
        let mut go = String::new();
        write_go_command(cfg, turn, &mut go);
        go
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
        t.clocks = [None, None];
        let limits = ["cmd=x", "st=0.25", "nodes=18446744073709551615"];
        let uci = EngineConfig::parse(&limits, &[]).unwrap();
        assert_eq!(
            go_command(&uci, &t),
            "go movetime 250 nodes 18446744073709551615"
        );
    }
}
