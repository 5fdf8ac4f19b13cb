//! A game in progress: the position plus everything history-dependent rules need.

use super::{MoveError, Outcome, Position, Removals, Status, Termination};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes a position key, already a uniform random 64-bit value (Zobrist), by one multiply:
/// the map is updated every ply and SipHash's protection against chosen keys buys nothing here.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// Plies most games end within: a game's lists are made with room for this many, so that none
/// grows mid-game (a longer game's grow as usual).
pub const TYPICAL_PLIES: usize = 256;

/// One ply already played.
#[derive(Clone, Debug)]
pub struct PlyRecord<M> {
    pub mv: M,
    /// Key of the position after the move.
    pub key: u64,
    pub removed: Removals,
    /// Whether the move left the opponent in check.
    pub check: bool,
}

/// The positions of a game so far, with the counters draw rules read.
///
/// Repetition counts are kept in a map so that judging a ply costs O(1) however long the game is.
#[derive(Clone, Debug)]
pub struct History<P: Position> {
    start: P,
    current: P,
    start_key: u64,
    plies: Vec<PlyRecord<P::Move>>,
    occurrences: KeyMap<u32>,
    quiet_plies: u32,
}

impl<P: Position> History<P> {
    pub fn new(start: P) -> History<P> {
        let start_key = start.key();
        // Room for a typical game: the map is not rehashed nor the list copied mid-game, at a
        // ply whose caches an engine's search has emptied.
        let mut occurrences = KeyMap::with_capacity_and_hasher(TYPICAL_PLIES, Default::default());
        occurrences.insert(start_key, 1);
        History {
            current: start.clone(),
            quiet_plies: start.initial_quiet_plies(),
            start,
            start_key,
            plies: Vec::with_capacity(TYPICAL_PLIES),
            occurrences,
        }
    }

    pub fn start(&self) -> &P {
        &self.start
    }

    pub fn current(&self) -> &P {
        &self.current
    }

    pub fn plies(&self) -> &[PlyRecord<P::Move>] {
        &self.plies
    }

    pub fn ply_count(&self) -> usize {
        self.plies.len()
    }

    /// Key of the position `back` plies before the current one (0 = current), if the game is that
    /// long.
    pub fn key_back(&self, back: usize) -> Option<u64> {
        let n = self.plies.len();
        if back > n {
            None
        } else if back == n {
            Some(self.start_key)
        } else {
            Some(self.plies[n - 1 - back].key)
        }
    }

    /// How many times the current position has occurred, counting now.
    pub fn occurrences_of_current(&self) -> u32 {
        let key = self.key_back(0).unwrap_or(self.start_key);
        self.occurrences.get(&key).copied().unwrap_or(0)
    }

    pub fn occurrences(&self, key: u64) -> u32 {
        self.occurrences.get(&key).copied().unwrap_or(0)
    }

    /// The status most games judge by: the board's result first, then a third occurrence of the
    /// position, then `move_rule_plies` quiet plies, both draws.
    pub fn board_then_draws(&self, move_rule_plies: u32) -> Status {
        let status = self.current().board_status();
        if status.is_over() {
            status
        } else if self.occurrences_of_current() >= 3 {
            Status::Over(Outcome::Draw, Termination::Repetition)
        } else if self.quiet_plies() >= move_rule_plies {
            Status::Over(Outcome::Draw, Termination::MoveRule)
        } else {
            Status::Ongoing
        }
    }

    /// Plies since the last move that reset the move-count rule (see `Position::resets_move_rule`).
    pub fn quiet_plies(&self) -> u32 {
        self.quiet_plies
    }

    /// Counts the move-count rule's plies from the last move on, as if it had reset the count.
    fn count_quiet_from_last_move(&mut self) {
        self.quiet_plies = self.quiet_plies.min(1);
    }

    fn push(&mut self, mv: P::Move, after: P, removed: Removals) {
        let key = after.key();
        *self.occurrences.entry(key).or_insert(0) += 1;
        self.quiet_plies = if P::resets_move_rule(mv, &removed) {
            0
        } else {
            self.quiet_plies + 1
        };
        let check = after.in_check();
        self.plies.push(PlyRecord {
            mv,
            key,
            removed,
            check,
        });
        self.current = after;
    }
}

/// A game being refereed: every move is checked against the rules and the history.
#[derive(Clone, Debug)]
pub struct Game<P: Position> {
    history: History<P>,
    status: Status,
}

impl<P: Position> Game<P> {
    pub fn new(start: P) -> Game<P> {
        let history = History::new(start);
        let status = P::judge(&history);
        Game { history, status }
    }

    pub fn position(&self) -> &P {
        self.history.current()
    }

    pub fn history(&self) -> &History<P> {
        &self.history
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// Moves the rules allow now, history included; empty once the game is over.
    pub fn legal_moves(&self) -> Vec<P::Move> {
        if self.status.is_over() {
            return Vec::new();
        }
        let mut moves = Vec::new();
        self.position().generate(&mut moves);
        moves.retain(|&mv| self.check(mv).is_ok());
        moves
    }

    /// Plays `mv` after checking it against the history; returns what it removed.
    pub fn play(&mut self, mv: P::Move) -> Result<Removals, &'static str> {
        if self.status.is_over() {
            return Err("the game is already over");
        }
        let mut moves = Vec::new();
        self.position().generate(&mut moves);
        if !moves.contains(&mv) {
            return Err("not a move of this position");
        }
        let (after, removed) = self.check(mv)?;
        self.history.push(mv, after, removed);
        self.status = P::judge(&self.history);
        Ok(removed)
    }

    /// The opening book's moves are played: where the game's rules count the move-count rule
    /// from the book's last move, the count starts again there.
    pub fn end_book(&mut self) {
        if !self.history.plies.is_empty() && self.position().move_rule_counts_from_book() {
            self.history.count_quiet_from_last_move();
        }
    }

    /// Parses and plays a move in the game's notation, including an optional `x<square>` suffix.
    /// Returns the move, its canonical text and what it removed.
    pub fn play_text(&mut self, text: &str) -> Result<(P::Move, String, Removals), MoveError> {
        let (body, claimed) = split_zap_suffix::<P>(text);
        let mv = self
            .position()
            .parse_move(body)
            .map_err(|e| e.with_text(text))?;
        if self.status.is_over() {
            return Err(MoveError::illegal(text, "the game is already over"));
        }
        let (after, removed) = self
            .check(mv)
            .map_err(|reason| MoveError::illegal(text, reason))?;
        if let Some(claimed) = claimed {
            let actual = removed.iter().next().map(|r| r.square);
            if actual.map(|s| s.as_str() != claimed).unwrap_or(true) {
                let what = match actual {
                    Some(sq) => format!("the move removes the piece on {sq}, not {claimed}"),
                    None => format!("the move removes nothing, not a piece on {claimed}"),
                };
                return Err(MoveError::illegal(text, what));
            }
        }
        let canonical = self.position().move_text(mv);
        self.history.push(mv, after, removed);
        self.status = P::judge(&self.history);
        Ok((mv, canonical, removed))
    }

    /// Ends the game for a reason decided outside the rules (time, crash, adjudication, cap).
    pub fn set_status(&mut self, status: Status) {
        self.status = status;
    }

    /// Plays `mv` on a copy and applies the history rules. `mv` must be one `generate` made:
    /// `parse_move` and `legal_moves` guarantee it; `play` checks it first.
    fn check(&self, mv: P::Move) -> Result<(P, Removals), &'static str> {
        let mut after = self.position().clone();
        let removed = after.play(mv);
        match P::forbidden_by_history(&self.history, mv, &after, &removed) {
            Some(reason) => Err(reason),
            None => Ok((after, removed)),
        }
    }
}

/// Splits `c2b1xf6` into (`c2b1`, `Some("f6")`) for games whose notation allows a zap suffix.
/// Only a suffix shaped like a square counts, so `x` inside a malformed move is reported whole.
fn split_zap_suffix<P: Position>(text: &str) -> (&str, Option<&str>) {
    if P::ZAP_SUFFIX {
        if let Some(i) = text.rfind('x') {
            let suffix = &text[i + 1..];
            let b = suffix.as_bytes();
            let square_like = (2..=3).contains(&b.len())
                && b[0].is_ascii_lowercase()
                && b[1..].iter().all(u8::is_ascii_digit);
            if i > 0 && square_like {
                return (&text[..i], Some(suffix));
            }
        }
    }
    (text, None)
}
