//! Board, laser and notation shared by both Leiserchess versions (2018 on 8x8, 2012 on 10x10).
//!
//! The board is a 12x12 mailbox with a sentinel border, so a beam or a step needs no bounds
//! arithmetic: it stops at an `OFF` cell. Both sizes use the same layout; on 8x8 the unused
//! cells are `OFF` too.

use super::beam::{path, walk, BeamEnd, Meet};
use super::mailbox::Mailbox;
use crate::game::drawing::{Figure, Shape, Side};
use crate::game::{Color, Drawing, FenError, MoveError, Removals, SquareName, Status};
use crate::zobrist;

pub const STRIDE: usize = 12;
pub const CELLS: usize = STRIDE * STRIDE;

pub const EMPTY: u8 = 0;
pub const OFF: u8 = 0x80;
pub(super) const PRESENT: u8 = 0x10;
pub(super) const BLACK: u8 = 0x08;
const KING: u8 = 0x04;
const NO_KING: u8 = 0;

/// Beam and facing directions, clockwise from north (toward higher ranks).
pub const DIR_DELTA: [isize; 4] = [STRIDE as isize, 1, -(STRIDE as isize), -1];
/// The eight neighbours of a square.
pub const NEIGHBOURS: [isize; 8] = [13, 12, 11, 1, -1, -11, -12, -13];

const ZAP: u8 = 4;
/// `REFLECT[beam][mirror]`: the beam's new direction, or `ZAP` when it hits the back of the Pawn.
/// Pawn orientations are the way the mirror faces, clockwise: 0 NW, 1 NE, 2 SE, 3 SW.
const REFLECT: [[u8; 4]; 4] = [
    [ZAP, ZAP, 1, 3], // travelling N
    [0, ZAP, ZAP, 2], // travelling E
    [3, 1, ZAP, ZAP], // travelling S
    [ZAP, 0, 2, ZAP], // travelling W
];

const KING_NAMES: [&str; 4] = ["NN", "EE", "SS", "WW"];
const PAWN_NAMES: [&str; 4] = ["NW", "NE", "SE", "SW"];

#[inline]
pub fn is_piece(cell: u8) -> bool {
    cell & PRESENT != 0
}

#[inline]
pub fn is_king(cell: u8) -> bool {
    cell & KING != 0
}

#[inline]
pub fn color_of(cell: u8) -> Color {
    if cell & BLACK != 0 {
        Color::Black
    } else {
        Color::White
    }
}

#[inline]
fn colour_bit(color: Color) -> u8 {
    match color {
        Color::White => 0,
        Color::Black => BLACK,
    }
}

#[inline]
pub fn rotated(cell: u8, quarter_turns: u8) -> u8 {
    (cell & !3) | ((cell + quarter_turns) & 3)
}

pub fn piece_name(cell: u8) -> String {
    let o = (cell & 3) as usize;
    let name = if is_king(cell) {
        KING_NAMES[o]
    } else {
        PAWN_NAMES[o]
    };
    match color_of(cell) {
        Color::White => name.to_string(),
        Color::Black => name.to_ascii_lowercase(),
    }
}

/// How a Leiserchess board (2018 or 2012) is drawn: Kings fire their laser the way they face,
/// Pawns are diagonal mirrors; Tangerine moves first.
pub const fn leiser_drawing(files: usize) -> Drawing {
    Drawing {
        files,
        first_rank: 0,
        letters: 2,
        sides: [
            Side {
                name: "Tangerine",
                colour: "#f28c28",
            },
            Side {
                name: "Lavender",
                colour: "#a58bd8",
            },
        ],
        figure: leiser_figure,
        tint: crate::game::drawing::open,
        legend: &[
            ("NN", "King: fires the laser the way it points"),
            ("NE", "Pawn: a mirror on its diagonal, facing out"),
        ],
        lasers: true,
    }
}

fn leiser_figure(token: &str) -> Option<Figure> {
    let cell = parse_piece(token)?;
    let o = cell & 3;
    let (shape, facing) = if is_king(cell) {
        // NN, EE, SS, WW: quarter turns from north.
        (Shape::LaserKing, 2 * o)
    } else {
        // NW, NE, SE, SW: the diagonal the mirror faces.
        (Shape::Mirror, (2 * o + 7) % 8)
    };
    Some(Figure::turned(color_of(cell), shape, facing))
}

fn parse_piece(pair: &str) -> Option<u8> {
    let upper = pair.to_ascii_uppercase();
    let color = if pair == upper {
        Color::White
    } else if pair == pair.to_ascii_lowercase() {
        Color::Black
    } else {
        return None;
    };
    let (kind, o) = if let Some(o) = KING_NAMES.iter().position(|n| *n == upper) {
        (KING, o)
    } else {
        (0, PAWN_NAMES.iter().position(|n| *n == upper)?)
    };
    Some(PRESENT | colour_bit(color) | kind | o as u8)
}

/// A Leiserchess move: a square, up to two more squares, and a rotation.
///
/// The fields mirror the notation, so a move and its text correspond one to one: rotation `g4L`
/// (from, R/U/L), step `h3g4` (from, to), swap-and-step `d5e4f5` (from, enemy, to), swap-and-rotate
/// `e4d5R` (from, enemy, R/U/L), and the 2012 null move `j0j0` (the King's square twice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaserMove {
    pub from: u8,
    pub second: u8,
    pub third: u8,
    /// Clockwise quarter turns, 0 for none.
    pub turn: u8,
}

impl LaserMove {
    pub const fn rotate(from: usize, turn: u8) -> LaserMove {
        LaserMove {
            from: from as u8,
            second: 0,
            third: 0,
            turn,
        }
    }

    pub const fn step(from: usize, to: usize) -> LaserMove {
        LaserMove {
            from: from as u8,
            second: to as u8,
            third: 0,
            turn: 0,
        }
    }

    pub const fn swap_step(from: usize, enemy: usize, to: usize) -> LaserMove {
        LaserMove {
            from: from as u8,
            second: enemy as u8,
            third: to as u8,
            turn: 0,
        }
    }

    pub const fn swap_rotate(from: usize, enemy: usize, turn: u8) -> LaserMove {
        LaserMove {
            from: from as u8,
            second: enemy as u8,
            third: 0,
            turn,
        }
    }
}

/// A board position of either Leiserchess version. `size` is 8 or 10.
#[derive(Clone, PartialEq, Eq)]
pub struct LaserBoard {
    pub cells: [u8; CELLS],
    /// Each side's King square, or 0 once it was zapped.
    pub kings: [u8; 2],
    pub turn: Color,
    pub size: u8,
}

impl std::fmt::Debug for LaserBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LaserBoard({})", self.fen())
    }
}

pub fn square(file: usize, rank: usize) -> usize {
    (rank + 1) * STRIDE + file + 1
}

/// What a piece does to a beam: Kings are zapped from any side; a Pawn's mirror turns it, its
/// back is zapped.
#[inline(always)]
fn meet(cell: u8, dir: usize) -> Meet {
    if is_king(cell) {
        return Meet::Destroy;
    }
    match REFLECT[dir][(cell & 3) as usize] {
        ZAP => Meet::Destroy,
        next => Meet::Turn(next as usize),
    }
}

/// The board's squares as a mailbox; its ranks count from 0.
pub const fn mailbox(size: u8) -> Mailbox {
    Mailbox {
        files: size as i32,
        ranks: size as i32,
        stride: STRIDE as i32,
        border: 1,
        first_rank: 0,
    }
}

pub fn square_name(sq: usize) -> SquareName {
    mailbox(10).square_name(sq)
}

impl LaserBoard {
    /// All playable squares, rank by rank from rank 0.
    pub fn squares(&self) -> impl Iterator<Item = usize> {
        let n = self.size as usize;
        (0..n).flat_map(move |r| (0..n).map(move |f| square(f, r)))
    }

    pub fn parse_fen(game: &'static str, size: u8, fen: &str) -> Result<LaserBoard, FenError> {
        let err = |reason: String| FenError::new(game, fen, reason);
        let mut fields = fen.split_whitespace();
        let placement = fields.next().ok_or_else(|| err("empty FEN".into()))?;
        let side = fields
            .next()
            .ok_or_else(|| err("missing side to move (W or B) after the board".into()))?;
        if let Some(extra) = fields.next() {
            return Err(err(format!(
                "unexpected field '{extra}' after the side to move"
            )));
        }
        let turn = match side {
            "W" | "w" => Color::White,
            "B" | "b" => Color::Black,
            other => return Err(err(format!("side to move must be W or B, not '{other}'"))),
        };
        let board = mailbox(size);
        let mut cells: [u8; CELLS] = board.cells(EMPTY, OFF);
        let mut kings = [NO_KING; 2];
        board
            .read_board(placement, None, |text, sq| {
                let pair = text.get(..2).ok_or("piece code cut short")?;
                let cell = parse_piece(pair).ok_or_else(|| format!("unknown piece '{pair}'"))?;
                cells[sq] = cell;
                if is_king(cell) {
                    let c = color_of(cell).index();
                    if kings[c] != NO_KING {
                        return Err(format!("two {} Kings", side_name(color_of(cell))));
                    }
                    kings[c] = sq as u8;
                }
                Ok(2)
            })
            .map_err(err)?;
        // One missing King is a finished game (it was zapped), as the FEN of a final position
        // shows; a board with neither King is no position of the game.
        if kings == [NO_KING; 2] {
            return Err(err("no Kings on the board".into()));
        }
        Ok(LaserBoard {
            cells,
            kings,
            turn,
            size,
        })
    }

    pub fn fen(&self) -> String {
        let mut out = mailbox(self.size).write_board(None, |sq| {
            let cell = self.cells[sq];
            (cell != EMPTY).then(|| piece_name(cell))
        });
        out.push_str(match self.turn {
            Color::White => " W",
            Color::Black => " B",
        });
        out
    }

    /// The squares the beam of `shooter`'s King crosses, from the King to where it ends.
    pub fn beam(&self, shooter: Color) -> Vec<SquareName> {
        let king = self.kings[shooter.index()];
        if king == NO_KING {
            return Vec::new();
        }
        let king = king as usize;
        let dir = (self.cells[king] & 3) as usize;
        path(&self.cells, &DIR_DELTA, OFF, king, dir, meet)
            .into_iter()
            .map(square_name)
            .collect()
    }

    /// Fires the laser of `shooter`'s King and removes the first piece it zaps, if any.
    #[inline]
    pub fn fire(&mut self, shooter: Color) -> Option<(usize, u8)> {
        let king = self.kings[shooter.index()] as usize;
        let dir = (self.cells[king] & 3) as usize;
        let end = walk(&self.cells, &DIR_DELTA, OFF, king, dir, meet);
        let BeamEnd::Destroyed(sq) = end else {
            return None;
        };
        let cell = self.cells[sq];
        self.cells[sq] = EMPTY;
        if is_king(cell) {
            self.kings[color_of(cell).index()] = NO_KING;
        }
        Some((sq, cell))
    }

    /// Keeps the King squares right after pieces moved between `a` and `b`.
    #[inline]
    pub fn track_kings(&mut self, a: usize, b: usize) {
        for sq in [a, b] {
            let cell = self.cells[sq];
            if is_piece(cell) && is_king(cell) {
                self.kings[color_of(cell).index()] = sq as u8;
            }
        }
    }

    /// Removal report for a zap.
    pub fn removals(zap: Option<(usize, u8)>) -> Removals {
        match zap {
            Some((sq, cell)) => Removals::one(square_name(sq), &piece_name(cell)),
            None => Removals::default(),
        }
    }

    pub fn board_status(&self) -> Status {
        if self.kings[Color::White.index()] == NO_KING {
            Status::Over(Color::Black.wins(), crate::game::Termination::KingZapped)
        } else if self.kings[Color::Black.index()] == NO_KING {
            Status::Over(Color::White.wins(), crate::game::Termination::KingZapped)
        } else {
            Status::Ongoing
        }
    }

    /// Pawns of the side to move minus the opponent's, at 100 each.
    pub fn material(&self) -> i32 {
        let mut balance = 0;
        for sq in self.squares() {
            let cell = self.cells[sq];
            if is_piece(cell) && !is_king(cell) {
                balance += if color_of(cell) == self.turn {
                    100
                } else {
                    -100
                };
            }
        }
        balance
    }

    pub fn key(&self) -> u64 {
        let mut h = match self.turn {
            Color::White => 0,
            Color::Black => zobrist::SIDE,
        };
        for sq in self.squares() {
            let cell = self.cells[sq];
            if cell != EMPTY {
                h ^= zobrist::piece(sq, (cell & 0x0f) as usize);
            }
        }
        h
    }

    pub fn parse_square(&self, text: &str) -> Option<usize> {
        mailbox(self.size).parse_square(text)
    }

    /// Parses the notation's shape into a move; whether it is legal is for the caller to decide.
    /// `examples` completes the error message: "a <game> move looks like <examples>".
    pub fn parse_move_shape(
        &self,
        game: &str,
        examples: &str,
        text: &str,
    ) -> Result<LaserMove, MoveError> {
        let bad = |why: &str| {
            MoveError::malformed(text, format!("{why} (a {game} move looks like {examples})"))
        };
        if !text.is_ascii() {
            return Err(bad("not ASCII"));
        }
        let mut squares = Vec::with_capacity(3);
        let mut rest = text;
        while rest.len() >= 2 && rest.as_bytes()[0].is_ascii_lowercase() {
            let sq = self
                .parse_square(&rest[..2])
                .ok_or_else(|| bad(&format!("'{}' is not a square of the board", &rest[..2])))?;
            squares.push(sq);
            rest = &rest[2..];
        }
        let turn = match rest {
            "" => 0,
            "R" => 1,
            "U" => 2,
            "L" => 3,
            _ => return Err(bad(&format!("unexpected '{rest}'"))),
        };
        let mv = match (squares.as_slice(), turn) {
            ([from], t) if t != 0 => LaserMove::rotate(*from, t),
            ([from, to], 0) => LaserMove::step(*from, *to),
            ([from, enemy], t) => LaserMove::swap_rotate(*from, *enemy, t),
            ([from, enemy, to], 0) => LaserMove::swap_step(*from, *enemy, *to),
            _ => return Err(bad("wrong number of squares")),
        };
        Ok(mv)
    }

    pub fn move_text(mv: LaserMove) -> String {
        let mut s = String::with_capacity(7);
        for sq in [mv.from, mv.second, mv.third] {
            if sq != 0 {
                s.push_str(square_name(sq as usize).as_str());
            }
        }
        if mv.turn != 0 {
            s.push(b"_RUL"[mv.turn as usize] as char);
        }
        s
    }

    pub fn render(&self, white: &str, black: &str) -> String {
        let n = self.size as usize;
        let mut out = String::new();
        for rank in (0..n).rev() {
            out.push_str(&format!("{rank} "));
            for file in 0..n {
                let cell = self.cells[square(file, rank)];
                out.push(' ');
                if cell == EMPTY {
                    out.push_str(" .");
                } else {
                    out.push_str(&piece_name(cell));
                }
            }
            out.push('\n');
        }
        out.push_str("  ");
        for file in 0..n {
            out.push_str(&format!("  {}", (b'a' + file as u8) as char));
        }
        out.push('\n');
        let mover = match self.turn {
            Color::White => white,
            Color::Black => black,
        };
        out.push_str(&format!("{mover} to move\n"));
        out
    }
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "Tangerine (upper-case)",
        Color::Black => "Lavender (lower-case)",
    }
}

/// Says why a well-formed move is not a move here, in terms a user can act on.
pub fn explain_illegal(board: &LaserBoard, mv: LaserMove) -> &'static str {
    let cell = board.cells[mv.from as usize];
    if !is_piece(cell) {
        "no piece on the first square"
    } else if color_of(cell) != board.turn {
        "the piece on the first square belongs to the opponent"
    } else if board.board_status().is_over() {
        "the game is already over"
    } else {
        "the piece cannot move that way"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_is_reversible() {
        // "If you can see me, I can see you": a beam reflected from d1 to d2 comes back from the
        // reverse of d2 to the reverse of d1.
        for (dir, row) in REFLECT.iter().enumerate() {
            for (mirror, &out) in row.iter().enumerate() {
                if out != ZAP {
                    let back = REFLECT[(out as usize + 2) % 4][mirror];
                    assert_eq!(back as usize, (dir + 2) % 4, "dir {dir} mirror {mirror}");
                }
            }
        }
    }

    #[test]
    fn each_mirror_zaps_on_exactly_two_sides() {
        for mirror in 0..4 {
            let zaps = REFLECT.iter().filter(|row| row[mirror] == ZAP).count();
            assert_eq!(zaps, 2);
        }
    }
}
