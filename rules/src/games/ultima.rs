//! Ultima (Baroque chess), Robert Abbott 1962: `../shared/rules/ultima.txt` as RULINGS.md rules it.
//!
//! Every piece captures in its own way and captures are implied by the move, so the generator
//! yields each move with the set of squares it captures. Check is "the King could be captured by
//! any capture method next move", found by generating the opponent's moves.

use super::mailbox::Mailbox;
use crate::game::drawing::{lettered, Figure, Shape};
use crate::game::Drawing;
use crate::game::{
    Color, FenError, History, MoveError, Outcome, Position, Removal, Removals, SquareName, Status,
    Termination,
};
use crate::zobrist;

const STRIDE: i32 = 12;
const BORDER: i32 = 2;
const CELLS: usize = 144;

const EMPTY: u8 = 0;
const OFF: u8 = 0xFF;
const BLACK: u8 = 0x10;

const KING: u8 = 1;
const PAWN: u8 = 2;
const LEAPER: u8 = 3;
const WITHDRAWER: u8 = 4;
const COORDINATOR: u8 = 5;
const IMMOBILIZER: u8 = 6;
const CHAMELEON: u8 = 7;
const LETTERS: [u8; 8] = [b'?', b'K', b'P', b'L', b'W', b'C', b'I', b'S'];

const ORTHOGONAL: [i32; 4] = [STRIDE, 1, -STRIDE, -1];
const ALL_DIRS: [i32; 8] = [
    STRIDE,
    1,
    -STRIDE,
    -1,
    STRIDE + 1,
    STRIDE - 1,
    -STRIDE + 1,
    -STRIDE - 1,
];

/// Plies without a capture before the game is drawn (50 moves by each side).
pub const MOVE_RULE_PLIES: u32 = 100;

const BOARD: Mailbox = Mailbox {
    files: 8,
    ranks: 8,
    stride: STRIDE,
    border: BORDER,
    first_rank: 1,
};

const fn sq(file: i32, rank: i32) -> usize {
    BOARD.sq(file, rank)
}

const fn file_rank(s: usize) -> (i32, i32) {
    BOARD.file_rank(s)
}

/// Bit of a square in a capture set.
fn bit(s: usize) -> u64 {
    let (f, r) = file_rank(s);
    1u64 << (r * 8 + f)
}

fn square_of_bit(i: u32) -> usize {
    sq(i as i32 % 8, i as i32 / 8)
}

fn square_name(s: usize) -> SquareName {
    BOARD.square_name(s)
}

fn color_bit(c: Color) -> u8 {
    match c {
        Color::White => 0,
        Color::Black => BLACK,
    }
}

fn piece_letter(cell: u8) -> char {
    let c = LETTERS[(cell & 7) as usize] as char;
    if cell & BLACK != 0 {
        c.to_ascii_lowercase()
    } else {
        c
    }
}

/// An Ultima move: from and to; a suicide names the same square twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UltimaMove {
    pub from: u8,
    pub to: u8,
}

#[derive(Clone, PartialEq, Eq)]
pub struct Ultima {
    cells: [u8; CELLS],
    kings: [u8; 2],
    turn: Color,
    halfmove: u32,
    fullmove: u32,
}

impl std::fmt::Debug for Ultima {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ultima({})", self.fen())
    }
}

impl Ultima {
    fn is_piece(cell: u8) -> bool {
        cell != EMPTY && cell != OFF
    }

    fn is_color(cell: u8, c: Color) -> bool {
        Self::is_piece(cell) && (cell & BLACK) == color_bit(c)
    }

    fn at(&self, s: i32) -> u8 {
        self.cells[s as usize]
    }

    /// A piece is paralysed next to an enemy immobilizer; an immobilizer also next to an enemy
    /// chameleon (so two immobilizers, or an immobilizer and a chameleon, freeze each other).
    fn immobilized(&self, s: usize) -> bool {
        let cell = self.cells[s];
        let enemy = (cell & BLACK) ^ BLACK;
        ALL_DIRS.iter().any(|&d| {
            let n = self.at(s as i32 + d);
            n == enemy | IMMOBILIZER || (cell & 7 == IMMOBILIZER && n == enemy | CHAMELEON)
        })
    }

    /// Calls `f(move, captured squares)` for every move of `color` that the rules of movement
    /// allow, check not considered. Stops early when `f` returns false; returns false if it
    /// stopped.
    fn for_each_pseudo(&self, color: Color, mut f: impl FnMut(UltimaMove, u64) -> bool) -> bool {
        let own_king = self.kings[color.index()] as usize;
        for rank in 0..8 {
            for file in 0..8 {
                let s = sq(file, rank);
                let cell = self.cells[s];
                if Self::is_color(cell, color)
                    && !self.immobilized(s)
                    && !self.piece_moves(s, color, own_king, &mut f)
                {
                    return false;
                }
            }
        }
        true
    }

    /// The moves of the piece on `s`, each with the squares it captures; `false` once `f` says
    /// to stop.
    fn piece_moves(
        &self,
        s: usize,
        color: Color,
        own_king: usize,
        f: &mut impl FnMut(UltimaMove, u64) -> bool,
    ) -> bool {
        let cell = self.cells[s];
        let mv = |to: usize| UltimaMove {
            from: s as u8,
            to: to as u8,
        };
        match cell & 7 {
            KING => {
                for d in ALL_DIRS {
                    let t = s as i32 + d;
                    let target = self.at(t);
                    let capture = if Self::is_color(target, color.other()) {
                        bit(t as usize)
                    } else {
                        0
                    };
                    if (target == EMPTY || capture != 0) && !f(mv(t as usize), capture) {
                        return false;
                    }
                }
            }
            IMMOBILIZER => {
                for d in ALL_DIRS {
                    let mut t = s as i32 + d;
                    while self.at(t) == EMPTY {
                        if !f(mv(t as usize), 0) {
                            return false;
                        }
                        t += d;
                    }
                }
            }
            kind => {
                let dirs: &[i32] = if kind == PAWN { &ORTHOGONAL } else { &ALL_DIRS };
                for &d in dirs {
                    let mut t = s as i32 + d;
                    while self.at(t) == EMPTY {
                        let caps = self.captures(s, t as usize, d, kind, color, own_king);
                        if !f(mv(t as usize), caps) {
                            return false;
                        }
                        t += d;
                    }
                    // A leap: the long leaper over any enemy piece, the chameleon over an
                    // enemy long leaper, onto the empty square directly beyond.
                    let jumped = self.at(t);
                    let beyond = t + d;
                    let leapable = match kind {
                        LEAPER => Self::is_color(jumped, color.other()),
                        CHAMELEON => jumped == color_bit(color.other()) | LEAPER,
                        _ => false,
                    };
                    if leapable && self.at(beyond) == EMPTY {
                        let mut caps = bit(t as usize);
                        if kind == CHAMELEON {
                            caps |= self.captures(s, beyond as usize, d, kind, color, own_king);
                        }
                        if !f(mv(beyond as usize), caps) {
                            return false;
                        }
                    }
                    // The chameleon takes a King the way a King takes: one step onto it.
                    if kind == CHAMELEON
                        && t == s as i32 + d
                        && jumped == color_bit(color.other()) | KING
                        && !f(mv(t as usize), bit(t as usize))
                    {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Squares captured when a `kind` piece of `color` moves from `from` to `to` in direction `d`
    /// (not counting a leaped piece), looking at the board as it stands after the move.
    fn captures(
        &self,
        from: usize,
        to: usize,
        d: i32,
        kind: u8,
        color: Color,
        own_king: usize,
    ) -> u64 {
        let enemy = color_bit(color.other());
        let after = |s: i32| -> u8 {
            if s == from as i32 {
                EMPTY
            } else if s == to as i32 {
                color_bit(color) | kind
            } else {
                self.at(s)
            }
        };
        let chameleon = kind == CHAMELEON;
        // Which enemy kinds each method may take: the piece itself takes anything (but a
        // chameleon or immobilizer is never taken by a chameleon); a chameleon takes only the
        // kind whose method it imitates.
        let takes = |cell: u8, method: u8| -> bool {
            Self::is_piece(cell) && cell & BLACK == enemy && (!chameleon || cell & 7 == method)
        };
        let mut caps = 0u64;
        let orthogonal = ORTHOGONAL.contains(&d);
        if kind == PAWN || (chameleon && orthogonal) {
            for e in ORTHOGONAL {
                let victim = after(to as i32 + e);
                let partner = after(to as i32 + 2 * e);
                if takes(victim, PAWN) && Self::is_color(partner, color) {
                    caps |= bit((to as i32 + e) as usize);
                }
            }
        }
        if kind == WITHDRAWER || chameleon {
            let behind = from as i32 - d;
            if takes(self.at(behind), WITHDRAWER) {
                caps |= bit(behind as usize);
            }
        }
        if kind == COORDINATOR || chameleon {
            let (tf, tr) = file_rank(to);
            let (kf, kr) = file_rank(own_king);
            for (f, r) in [(tf, kr), (kf, tr)] {
                let s = sq(f, r);
                if takes(after(s as i32), COORDINATOR) {
                    caps |= bit(s);
                }
            }
        }
        caps
    }

    fn apply(&mut self, mv: UltimaMove, caps: u64) -> Removals {
        let mut removed = Removals::default();
        let mut rest = caps;
        while rest != 0 {
            let i = rest.trailing_zeros();
            rest &= rest - 1;
            let s = square_of_bit(i);
            removed.push(Removal {
                square: square_name(s),
                piece: SquareName::new(&piece_letter(self.cells[s]).to_string()),
            });
            if self.cells[s] & 7 == KING {
                self.kings[((self.cells[s] & BLACK) != 0) as usize] = 0;
            }
            self.cells[s] = EMPTY;
        }
        let (from, to) = (mv.from as usize, mv.to as usize);
        if from == to {
            // Suicide of an immobilized piece.
            removed.push(Removal {
                square: square_name(from),
                piece: SquareName::new(&piece_letter(self.cells[from]).to_string()),
            });
            self.cells[from] = EMPTY;
        } else {
            let piece = self.cells[from];
            self.cells[to] = piece;
            self.cells[from] = EMPTY;
            if piece & 7 == KING {
                self.kings[self.turn.index()] = to as u8;
            }
        }
        self.halfmove = if caps != 0 { 0 } else { self.halfmove + 1 };
        if self.turn == Color::Black {
            self.fullmove += 1;
        }
        self.turn = self.turn.other();
        removed
    }

    /// Whether `color`'s King could be captured by the other side's next move, by any method.
    ///
    /// Each capture method is asked directly ("is there a piece that could take the King this
    /// way?"); `king_capturable_by_generation` is the slow definition it is tested against.
    fn king_capturable(&self, color: Color) -> bool {
        let k = self.kings[color.index()] as i32;
        if k == 0 {
            return true;
        }
        let them = color_bit(color.other());
        let active = |s: i32, kind: u8| self.at(s) == them | kind && !self.immobilized(s as usize);
        // The first piece met walking from `start` in direction `d` (OFF at the edge).
        let first = |start: i32, d: i32| -> i32 {
            let mut t = start;
            while self.at(t) == EMPTY {
                t += d;
            }
            t
        };
        for d in ALL_DIRS {
            // Replacement: a King, or a chameleon imitating one, next to ours.
            if active(k + d, KING) || active(k + d, CHAMELEON) {
                return true;
            }
            // Withdrawal: a withdrawer next to the King with room to back away.
            if active(k + d, WITHDRAWER) && self.at(k + 2 * d) == EMPTY {
                return true;
            }
            // Long leap: a leaper with a clear line up to the King and an empty square beyond.
            if self.at(k + d) == EMPTY && active(first(k - d, -d), LEAPER) {
                return true;
            }
        }
        // Interception: a pawn that can slide next to the King, opposite one of its own pieces.
        for e in ORTHOGONAL {
            let landing = k + e;
            let partner = self.at(k - e);
            if self.at(landing) == EMPTY
                && Self::is_piece(partner)
                && partner & BLACK == them
                && ORTHOGONAL
                    .iter()
                    .any(|&g| active(first(landing + g, g), PAWN))
            {
                return true;
            }
        }
        // Coordination: a coordinator that can land on the King's file while its own King shares
        // our King's rank, or on the King's rank while its King shares our King's file.
        let their_king = self.kings[color.other().index()] as usize;
        if their_king != 0 {
            let (kf, kr) = file_rank(k as usize);
            let (tf, tr) = file_rank(their_king);
            if tr == kr || tf == kf {
                for rank in 0..8 {
                    for file in 0..8 {
                        let s = sq(file, rank) as i32;
                        if !active(s, COORDINATOR) {
                            continue;
                        }
                        for d in ALL_DIRS {
                            let mut t = s + d;
                            while self.at(t) == EMPTY {
                                let (xf, xr) = file_rank(t as usize);
                                if (tr == kr && xf == kf) || (tf == kf && xr == kr) {
                                    return true;
                                }
                                t += d;
                            }
                        }
                    }
                }
            }
        }
        false
    }

    /// The definition of check: some move of the opponent's captures the King.
    #[cfg(test)]
    fn king_capturable_by_generation(&self, color: Color) -> bool {
        let king = self.kings[color.index()] as usize;
        if king == 0 {
            return true;
        }
        let target = bit(king);
        !self.for_each_pseudo(color.other(), |_, caps| caps & target == 0)
    }

    /// Whether the side to move may play `mv` with `caps` without leaving its King capturable.
    fn keeps_king_safe(&self, mv: UltimaMove, caps: u64) -> bool {
        let mut after = self.clone();
        after.apply(mv, caps);
        !after.king_capturable(self.turn)
    }

    /// Whether the piece on `s` may commit suicide: an immobilized piece of the side to move,
    /// other than its King.
    fn may_commit_suicide(&self, s: usize) -> bool {
        let cell = self.cells[s];
        Self::is_color(cell, self.turn) && cell & 7 != KING && self.immobilized(s)
    }

    /// Calls `f(move, captures)` for each legal move of the side to move, suicides included,
    /// until `f` says to stop (false); whether it went through them all.
    fn for_each_legal_until(&self, mut f: impl FnMut(UltimaMove, u64) -> bool) -> bool {
        let whole = self.for_each_pseudo(self.turn, |mv, caps| {
            !self.keeps_king_safe(mv, caps) || f(mv, caps)
        });
        if !whole {
            return false;
        }
        for s in (0..8).flat_map(|rank| (0..8).map(move |file| sq(file, rank))) {
            let suicide = UltimaMove {
                from: s as u8,
                to: s as u8,
            };
            if self.may_commit_suicide(s) && self.keeps_king_safe(suicide, 0) && !f(suicide, 0) {
                return false;
            }
        }
        true
    }

    /// Calls `f(move, captures)` for each legal move of the side to move, suicides included.
    fn for_each_legal(&self, mut f: impl FnMut(UltimaMove, u64)) {
        self.for_each_legal_until(|mv, caps| {
            f(mv, caps);
            true
        });
    }

    /// The captures of `mv` if it is legal here. Only the moving piece's moves are made, and
    /// only a match is tried against the King's safety: trying every legal move, as listing
    /// them does, cost each ply several times over.
    fn captures_of(&self, mv: UltimaMove) -> Option<u64> {
        let from = mv.from as usize;
        if mv.from == mv.to {
            return (self.may_commit_suicide(from) && self.keeps_king_safe(mv, 0)).then_some(0);
        }
        if !Self::is_color(self.cells[from], self.turn) || self.immobilized(from) {
            return None;
        }
        let own_king = self.kings[self.turn.index()] as usize;
        let mut found = None;
        self.piece_moves(from, self.turn, own_king, &mut |m, caps| {
            // The last match counts, as when the legal moves are listed.
            if m == mv && self.keeps_king_safe(mv, caps) {
                found = Some(caps);
            }
            true
        });
        found
    }
}

/// Each piece its own outline, its letter on it: the Immobilizer a stop sign.
fn figure(token: &str) -> Option<Figure> {
    lettered(
        token,
        &[
            ('K', Shape::Crown),
            ('P', Shape::Disc),
            ('L', Shape::Triangle),
            ('W', Shape::Diamond),
            ('C', Shape::Square),
            ('I', Shape::Octagon),
            ('S', Shape::Star),
        ],
    )
}

impl Position for Ultima {
    type Move = UltimaMove;

    const ID: &'static str = "ultima";
    const DRAWING: Drawing = Drawing {
        figure,
        legend: &[
            ("K", "King"),
            ("P", "Pawn (pincer)"),
            ("L", "Long leaper"),
            ("W", "Withdrawer"),
            ("C", "Coordinator"),
            ("I", "Immobilizer"),
            ("S", "Chameleon"),
        ],
        ..Drawing::STANDARD
    };
    const DESCRIPTION: &'static str =
        "Ultima (Baroque chess, Abbott 1962), 8x8, a different capture for every piece";
    const START_FEN: &'static str = "clswksli/pppppppp/8/8/8/8/PPPPPPPP/ILSWKSLC w 0 1";

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        let err = |reason: String| FenError::new(Self::ID, fen, reason);
        let mut fields = fen.split_whitespace();
        let placement = fields.next().ok_or_else(|| err("empty FEN".into()))?;
        let mut cells: [u8; CELLS] = BOARD.cells(EMPTY, OFF);
        let mut kings = [0u8; 2];
        BOARD
            .read_board(placement, None, |text, s| {
                let c = text.as_bytes()[0];
                let kind = LETTERS[1..]
                    .iter()
                    .position(|&l| l == c.to_ascii_uppercase())
                    .map(|k| k as u8 + 1)
                    .ok_or_else(|| format!("unknown piece '{}'", c as char))?;
                let color = if c.is_ascii_uppercase() {
                    Color::White
                } else {
                    Color::Black
                };
                cells[s] = color_bit(color) | kind;
                if kind == KING {
                    if kings[color.index()] != 0 {
                        return Err("two Kings of one colour".into());
                    }
                    kings[color.index()] = s as u8;
                }
                Ok(1)
            })
            .map_err(err)?;
        if kings.contains(&0) {
            return Err(err("each side needs exactly one King".into()));
        }
        let turn = match fields.next() {
            Some("w") => Color::White,
            Some("b") => Color::Black,
            Some(other) => return Err(err(format!("side to move must be w or b, not '{other}'"))),
            None => return Err(err("missing side to move (w or b)".into())),
        };
        let (halfmove, fullmove) = crate::game::parse_fen_clocks(fields, err)?;
        let position = Ultima {
            cells,
            kings,
            turn,
            halfmove,
            fullmove,
        };
        // As in chess: with the King of the side not to move in reach, the next move would take
        // it, and the game would go on without one (found by fuzzing).
        if position.king_capturable(turn.other()) {
            return Err(err(
                "the side not to move is in check: its King could be taken at once".into(),
            ));
        }
        Ok(position)
    }

    fn fen(&self) -> String {
        let mut out = BOARD.write_board(None, |s| {
            (self.cells[s] != EMPTY).then(|| piece_letter(self.cells[s]).to_string())
        });
        let side = if self.turn == Color::White { 'w' } else { 'b' };
        out.push_str(&format!(" {side} {} {}", self.halfmove, self.fullmove));
        out
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn generate(&self, out: &mut Vec<UltimaMove>) {
        self.for_each_legal(|mv, _| out.push(mv));
    }

    fn play(&mut self, mv: UltimaMove) -> Removals {
        let caps = self.captures_of(mv).unwrap_or(0);
        self.apply(mv, caps)
    }

    fn parse_move(&self, text: &str) -> Result<UltimaMove, MoveError> {
        let bad = |why: &str| {
            MoveError::malformed(
                text,
                format!("{why} (an ultima move looks like e2e6; a suicide like b1b1)"),
            )
        };
        let b = text.as_bytes();
        if b.len() != 4 {
            return Err(bad("expected two squares"));
        }
        let square = |f: u8, r: u8| -> Option<usize> {
            let (f, r) = (f.wrapping_sub(b'a'), r.wrapping_sub(b'1'));
            (f < 8 && r < 8).then(|| sq(f as i32, r as i32))
        };
        let from = square(b[0], b[1]).ok_or_else(|| {
            bad(&format!(
                "'{}' is not a square",
                String::from_utf8_lossy(&b[..2])
            ))
        })?;
        let to = square(b[2], b[3]).ok_or_else(|| {
            bad(&format!(
                "'{}' is not a square",
                String::from_utf8_lossy(&b[2..])
            ))
        })?;
        let mv = UltimaMove {
            from: from as u8,
            to: to as u8,
        };
        if self.captures_of(mv).is_some() {
            return Ok(mv);
        }
        let cell = self.cells[from];
        let reason = if !Self::is_piece(cell) {
            "no piece on the first square"
        } else if !Self::is_color(cell, self.turn) {
            "the piece on the first square belongs to the opponent"
        } else if from == to {
            "only an immobilized piece other than the King may commit suicide"
        } else if self.immobilized(from) {
            "the piece is immobilized"
        } else {
            "the piece cannot move there, or the move leaves the King in check"
        };
        Err(MoveError::illegal(text, reason))
    }

    fn move_text(&self, mv: UltimaMove) -> String {
        format!(
            "{}{}",
            square_name(mv.from as usize),
            square_name(mv.to as usize)
        )
    }

    fn key(&self) -> u64 {
        let mut h = if self.turn == Color::Black {
            zobrist::SIDE
        } else {
            0
        };
        for f in 0..8 {
            for r in 0..8 {
                let s = sq(f, r);
                if self.cells[s] != EMPTY {
                    h ^= zobrist::piece(s, self.cells[s] as usize);
                }
            }
        }
        h
    }

    fn in_check(&self) -> bool {
        self.king_capturable(self.turn)
    }

    fn material(&self) -> i32 {
        const VALUE: [i32; 8] = [0, 0, 100, 400, 450, 350, 500, 450];
        let mut balance = 0;
        for cell in self.cells {
            if Self::is_piece(cell) {
                let v = VALUE[(cell & 7) as usize];
                balance += if Self::is_color(cell, self.turn) {
                    v
                } else {
                    -v
                };
            }
        }
        balance
    }

    fn board_status(&self) -> Status {
        // Stopped at the first legal move: there is one in almost every position.
        if !self.for_each_legal_until(|_, _| false) {
            Status::Ongoing
        } else if self.in_check() {
            Status::Over(self.turn.other().wins(), Termination::Checkmate)
        } else {
            Status::Over(Outcome::Draw, Termination::Stalemate)
        }
    }

    fn resets_move_rule(mv: UltimaMove, removed: &Removals) -> bool {
        // A suicide removes a piece but is no capture.
        mv.from != mv.to && !removed.is_empty()
    }

    fn initial_quiet_plies(&self) -> u32 {
        self.halfmove
    }

    fn judge(history: &History<Self>) -> Status {
        history.board_then_draws(MOVE_RULE_PLIES)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for rank in (0..8).rev() {
            out.push_str(&format!("{} ", rank + 1));
            for file in 0..8 {
                let cell = self.cells[sq(file, rank)];
                out.push(' ');
                out.push(if cell == EMPTY {
                    '.'
                } else {
                    piece_letter(cell)
                });
            }
            out.push('\n');
        }
        out.push_str("   a b c d e f g h\n");
        out.push_str(
            "K king  P pawn  L long leaper  W withdrawer  C coordinator  I immobilizer  S \
            chameleon\n",
        );
        let mover = if self.turn == Color::White {
            "White"
        } else {
            "Black"
        };
        out.push_str(&format!("{mover} to move\n"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the fuzzer (fuzz/corpus/positions/ultima-non-ascii-move): a four-byte move
    /// text that is not ASCII, as an engine may send, panicked instead of being refused.
    #[test]
    fn a_move_text_that_is_not_ascii_is_refused() {
        let pos = Ultima::from_fen(Ultima::START_FEN).unwrap();
        for text in ["\u{fe}?a", "a\u{e9}a", "\u{20ac}a"] {
            assert_eq!(text.len(), 4);
            assert!(pos.parse_move(text).is_err(), "{text}");
        }
    }

    /// The direct check test must agree with the definition (some opponent move captures the
    /// King) in every position of many random games, for both Kings.
    #[test]
    fn fast_check_test_agrees_with_move_generation() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut positions = 0;
        for _game in 0..60 {
            let mut pos = Ultima::from_fen(Ultima::START_FEN).unwrap();
            for _ply in 0..120 {
                for color in [Color::White, Color::Black] {
                    assert_eq!(
                        pos.king_capturable(color),
                        pos.king_capturable_by_generation(color),
                        "{color:?} in {}",
                        pos.fen()
                    );
                }
                positions += 1;
                let mut moves = Vec::new();
                pos.generate(&mut moves);
                if moves.is_empty() {
                    break;
                }
                pos.play(crate::game::pick(&mut seed, &moves));
            }
        }
        assert!(positions > 1000);
    }

    #[test]
    fn a_move_is_read_as_the_list_of_legal_moves_reads_it() {
        // Random games; at each ply every pair of squares is asked, of the one piece's moves
        // (`captures_of`) and of the whole list, and whether any move is left.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut suicides = 0;
        let squares: Vec<usize> = (0..8)
            .flat_map(|rank| (0..8).map(move |file| sq(file, rank)))
            .collect();
        for _game in 0..40 {
            let mut pos = Ultima::from_fen(Ultima::START_FEN).unwrap();
            for _ply in 0..120 {
                let mut listed = std::collections::HashMap::new();
                pos.for_each_legal(|mv, caps| {
                    listed.insert(mv, caps);
                });
                suicides += listed.keys().filter(|m| m.from == m.to).count();
                for &from in &squares {
                    for &to in &squares {
                        let mv = UltimaMove {
                            from: from as u8,
                            to: to as u8,
                        };
                        assert_eq!(
                            pos.captures_of(mv),
                            listed.get(&mv).copied(),
                            "{mv:?} in {}",
                            pos.fen()
                        );
                    }
                }
                let stopped = !pos.for_each_legal_until(|_, _| false);
                assert_eq!(stopped, !listed.is_empty(), "{}", pos.fen());
                let mut moves: Vec<UltimaMove> = listed.into_keys().collect();
                if moves.is_empty() {
                    break;
                }
                moves.sort_by_key(|m| (m.from, m.to));
                pos.play(crate::game::pick(&mut seed, &moves));
            }
        }
        assert!(suicides > 0, "suicides were asked too");
    }
}
