//! Laser Chess (Khet-like), 10x8: `../shared/rules/laser-chess-guide.md` as RULINGS.md rules it.
//!
//! A turn is one action (step, Switch swap, rotation, or aiming the Laser), then the mover's Laser
//! fires. Deflectors and Defenders can be destroyed; Switches and Lasers never; a King hit loses.

use super::beam::{path, walk, BeamEnd, Meet};
use super::mailbox::Mailbox;
use crate::game::drawing::{Figure, Shape, Side, Tint};
use crate::game::{
    Color, Drawing, FenError, History, MoveError, Outcome, Position, Removals, SquareName, Status,
    Termination,
};
use crate::zobrist;

const STRIDE: i32 = 12;
const CELLS: usize = 120;
const FILES: i32 = 10;
const RANKS: i32 = 8;

const EMPTY: u8 = 0;
const OFF: u8 = 0xFF;
const RED: u8 = 0x08;
const KIND: u8 = 0x07;

const LASER: u8 = 1;
const DEFLECTOR: u8 = 2;
const DEFENDER: u8 = 3;
const SWITCH: u8 = 4;
const KING: u8 = 5;
const LETTERS: [u8; 6] = [b'?', b'L', b'B', b'D', b'S', b'K'];

/// Beam directions clockwise from north (toward rank 8).
const DIR: [isize; 4] = [STRIDE as isize, 1, -STRIDE as isize, -1];
const NEIGHBOURS: [i32; 8] = [
    STRIDE - 1,
    STRIDE,
    STRIDE + 1,
    -1,
    1,
    -STRIDE - 1,
    -STRIDE,
    -STRIDE + 1,
];

const KILL: u8 = 4;
const STOP: u8 = 5;
/// `DEFLECT[orientation][beam]`: new direction or KILL. Orientation 0 has its mirror facing
/// south-west: a beam going N turns W, one going E turns S; each +90 turns that clockwise.
const DEFLECT: [[u8; 4]; 4] = [
    [3, 2, KILL, KILL],
    [KILL, 0, 3, KILL],
    [KILL, KILL, 1, 0],
    [1, KILL, KILL, 2],
];
/// `SWITCH_REFLECT[orientation % 2][beam]`: both faces mirror.
const SWITCH_REFLECT: [[u8; 4]; 2] = [[3, 2, 1, 0], [1, 0, 3, 2]];

fn orientation(cell: u8) -> u8 {
    (cell >> 4) & 3
}

fn with_orientation(cell: u8, o: u8) -> u8 {
    let o = if cell & KIND == SWITCH { o & 1 } else { o & 3 };
    (cell & 0x0f) | (o << 4)
}

fn is_piece(cell: u8) -> bool {
    cell != EMPTY && cell != OFF
}

fn color_of(cell: u8) -> Color {
    if cell & RED != 0 {
        Color::Black
    } else {
        Color::White
    }
}

fn color_bit(c: Color) -> u8 {
    match c {
        Color::White => 0,
        Color::Black => RED,
    }
}

const BOARD: Mailbox = Mailbox {
    files: FILES,
    ranks: RANKS,
    stride: STRIDE,
    border: 1,
    first_rank: 1,
};

const fn sq(file: i32, rank: i32) -> usize {
    BOARD.sq(file, rank)
}

const fn file_rank(s: usize) -> (i32, i32) {
    BOARD.file_rank(s)
}

fn square_name(s: usize) -> SquareName {
    BOARD.square_name(s)
}

fn parse_square(text: &str) -> Option<usize> {
    BOARD.parse_square(text)
}

/// A piece in the setup notation: its letter (case is colour), then a `+` per quarter turn
/// clockwise. Returns the cell and the bytes it took.
fn read_token(text: &str) -> Result<(u8, usize), String> {
    let b = text.as_bytes();
    let c = b[0];
    let kind = LETTERS[1..]
        .iter()
        .position(|&l| l == c.to_ascii_uppercase())
        .map(|k| k as u8 + 1)
        .ok_or_else(|| format!("unknown piece '{}'", c as char))?;
    let turns = b[1..].iter().take_while(|&&t| t == b'+').count();
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    let cell = with_orientation(color_bit(color) | kind, (turns % 4) as u8);
    Ok((cell, 1 + turns))
}

/// Checks where a piece of the setup stands (Lasers on their corners, aimed along the board;
/// no piece on the other colour's squares; one King a side) and notes Lasers and Kings.
fn place(cell: u8, s: usize, lasers: &mut [u8; 2], kings: &mut [u8; 2]) -> Result<(), String> {
    let color = color_of(cell);
    let name = square_name(s);
    match cell & KIND {
        LASER => {
            let (home, aims) = match color {
                Color::White => (sq(9, 0), [0, 3]),
                Color::Black => (sq(0, 7), [2, 1]),
            };
            if s != home {
                return Err(format!(
                    "a {} Laser must stand on {}",
                    side(color),
                    square_name(home)
                ));
            }
            if !aims.contains(&orientation(cell)) {
                return Err(format!(
                    "the {} Laser on {name} points off its two directions",
                    side(color)
                ));
            }
            lasers[color.index()] = s as u8;
        }
        _ if !may_enter(color, s) => {
            return Err(format!("a {} piece may not stand on {name}", side(color)));
        }
        KING if kings[color.index()] != 0 => return Err(format!("two {} Kings", side(color))),
        KING => kings[color.index()] = s as u8,
        _ => {}
    }
    Ok(())
}

/// What a piece does to a beam travelling `dir`, by RULINGS.md's tables.
#[inline(always)]
fn meet(cell: u8, dir: usize) -> Meet {
    let o = orientation(cell) as usize;
    let next = match cell & KIND {
        LASER => STOP,
        KING => KILL,
        DEFLECTOR => DEFLECT[o][dir],
        SWITCH => SWITCH_REFLECT[o & 1][dir],
        // Defender: the shield faces `o`; a beam travelling the opposite way meets it.
        _ if dir == (o + 2) % 4 => STOP,
        _ => KILL,
    };
    match next {
        STOP => Meet::Stop,
        KILL => Meet::Destroy,
        d => Meet::Turn(d as usize),
    }
}

/// Who may stand on a square: the helix squares belong to one colour, the Laser corners to Lasers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Both,
    BlueOnly,
    RedOnly,
    LaserOnly,
}

fn access(s: usize) -> Access {
    match file_rank(s) {
        (0, 7) | (9, 0) => Access::LaserOnly,
        (0, 0..=6) | (8, 0) | (8, 7) => Access::RedOnly,
        (9, 1..=7) | (1, 0) | (1, 7) => Access::BlueOnly,
        _ => Access::Both,
    }
}

fn may_enter(c: Color, s: usize) -> bool {
    match access(s) {
        Access::Both => true,
        Access::BlueOnly => c == Color::White,
        Access::RedOnly => c == Color::Black,
        Access::LaserOnly => false,
    }
}

/// What a token looks like: the facing is the way a Laser points, a Deflector's mirror and a
/// Defender's shield face, a Switch's diagonal runs.
fn figure(token: &str) -> Option<Figure> {
    let (cell, used) = read_token(token).ok()?;
    if used != token.len() {
        return None;
    }
    let o = orientation(cell);
    let (shape, facing) = match cell & KIND {
        LASER => (Shape::Laser, 2 * o),
        DEFLECTOR => (Shape::Mirror, (5 + 2 * o) % 8),
        DEFENDER => (Shape::Shield, 2 * o),
        SWITCH => (Shape::Switch, if o & 1 == 0 { 7 } else { 1 }),
        _ => (Shape::Crown, 0),
    };
    Some(Figure::turned(color_of(cell), shape, facing))
}

fn tint(file: i32, rank: i32) -> Tint {
    match access(sq(file, rank)) {
        Access::Both => Tint::Open,
        Access::BlueOnly => Tint::Only(Color::White),
        Access::RedOnly => Tint::Only(Color::Black),
        Access::LaserOnly => Tint::Lasers,
    }
}

/// A Laser Chess action. `turn` is 1 (clockwise, `+`) or 3 (counter-clockwise, `-`) for a
/// rotation or aim; `swap` marks a Switch exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaserChessMove {
    pub from: u8,
    pub to: u8,
    pub turn: u8,
    pub swap: bool,
}

#[derive(Clone, PartialEq, Eq)]
pub struct LaserChess {
    cells: [u8; CELLS],
    lasers: [u8; 2],
    kings: [u8; 2],
    turn: Color,
}

impl std::fmt::Debug for LaserChess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LaserChess({})", self.fen())
    }
}

fn token(cell: u8) -> String {
    let letter = LETTERS[(cell & KIND) as usize] as char;
    let mut s = String::new();
    s.push(if cell & RED != 0 {
        letter.to_ascii_lowercase()
    } else {
        letter
    });
    for _ in 0..orientation(cell) {
        s.push('+');
    }
    s
}

impl LaserChess {
    fn for_each_move(&self, mut f: impl FnMut(LaserChessMove)) {
        if self.board_over() {
            return;
        }
        let us = self.turn;
        for rank in 0..RANKS {
            for file in 0..FILES {
                let from = sq(file, rank);
                let cell = self.cells[from];
                if !is_piece(cell) || color_of(cell) != us {
                    continue;
                }
                let kind = cell & KIND;
                if kind == LASER {
                    // Aim: the one other direction; written as the rotation that reaches it.
                    let o = orientation(cell);
                    let turn = match (us, o) {
                        (Color::White, 0) | (Color::Black, 2) => 3,
                        _ => 1,
                    };
                    f(LaserChessMove {
                        from: from as u8,
                        to: 0,
                        turn,
                        swap: false,
                    });
                    continue;
                }
                for d in NEIGHBOURS {
                    let to = (from as i32 + d) as usize;
                    let target = self.cells[to];
                    if target == EMPTY && may_enter(us, to) {
                        f(LaserChessMove {
                            from: from as u8,
                            to: to as u8,
                            turn: 0,
                            swap: false,
                        });
                    } else if kind == SWITCH
                        && is_piece(target)
                        && matches!(target & KIND, DEFLECTOR | DEFENDER)
                        && may_enter(us, to)
                        && may_enter(color_of(target), from)
                    {
                        f(LaserChessMove {
                            from: from as u8,
                            to: to as u8,
                            turn: 0,
                            swap: true,
                        });
                    }
                }
                f(LaserChessMove {
                    from: from as u8,
                    to: 0,
                    turn: 1,
                    swap: false,
                });
                if kind != SWITCH {
                    f(LaserChessMove {
                        from: from as u8,
                        to: 0,
                        turn: 3,
                        swap: false,
                    });
                }
            }
        }
    }

    fn count_moves(&self) -> u64 {
        let mut n = 0;
        self.for_each_move(|_| n += 1);
        n
    }

    fn board_over(&self) -> bool {
        self.kings.contains(&0)
    }

    /// Fires `shooter`'s Laser; removes and returns what it destroys.
    fn fire(&mut self, shooter: Color) -> Option<(usize, u8)> {
        let laser = self.lasers[shooter.index()] as usize;
        match self.trace(laser, orientation(self.cells[laser]) as usize) {
            BeamEnd::Destroyed(s) => {
                let cell = self.cells[s];
                self.cells[s] = EMPTY;
                if cell & KIND == KING {
                    self.kings[color_of(cell).index()] = 0;
                }
                Some((s, cell))
            }
            BeamEnd::Blocked(_) | BeamEnd::Left(_) => None,
        }
    }

    /// Follows a beam leaving `start` in direction `dir` until something ends it.
    fn trace(&self, start: usize, dir: usize) -> BeamEnd {
        walk(&self.cells, &DIR, OFF, start, dir, meet)
    }

    /// The squares `shooter`'s beam crosses, from its Laser to where it ends.
    fn beam(&self, shooter: Color) -> Vec<usize> {
        let laser = self.lasers[shooter.index()] as usize;
        path(
            &self.cells,
            &DIR,
            OFF,
            laser,
            orientation(self.cells[laser]) as usize,
            meet,
        )
    }

    fn make(&mut self, mv: LaserChessMove) -> Option<(usize, u8)> {
        let mover = self.shift(mv);
        self.fire(mover)
    }

    /// The action without the laser: a piece turned or moved, the turn passed; returns who
    /// acted.
    #[inline]
    fn shift(&mut self, mv: LaserChessMove) -> Color {
        let (from, to) = (mv.from as usize, mv.to as usize);
        if mv.turn != 0 {
            let cell = self.cells[from];
            self.cells[from] = with_orientation(cell, orientation(cell) + mv.turn);
        } else {
            self.cells.swap(from, to);
            for s in [from, to] {
                let cell = self.cells[s];
                if is_piece(cell) && cell & KIND == KING {
                    self.kings[color_of(cell).index()] = s as u8;
                }
            }
        }
        let mover = self.turn;
        self.turn = mover.other();
        mover
    }

    fn describe(cell: u8) -> String {
        let o = orientation(cell) as usize;
        let detail = match cell & KIND {
            LASER => ["n", "e", "s", "w"][o],
            DEFLECTOR => ["sw", "nw", "ne", "se"][o],
            DEFENDER => ["n", "e", "s", "w"][o],
            SWITCH => ["\\", "/"][o & 1],
            _ => "",
        };
        let letter = LETTERS[(cell & KIND) as usize] as char;
        let letter = if cell & RED != 0 {
            letter.to_ascii_lowercase()
        } else {
            letter
        };
        format!("{letter}{detail}")
    }
}

impl Position for LaserChess {
    type Move = LaserChessMove;

    const ID: &'static str = "laserchess";
    const DRAWING: Drawing = Drawing {
        files: 10,
        sides: [
            Side {
                name: "Blue",
                colour: "#3b7dd8",
            },
            Side {
                name: "Red",
                colour: "#d64541",
            },
        ],
        figure,
        tint,
        legend: &[
            ("L", "Laser: fires the way it points"),
            ("B+", "Deflector: a mirror facing out, opaque behind"),
            ("D", "Defender: its shield stops the beam"),
            ("S", "Switch: mirrors on both faces"),
            ("K", "King: zapped, it loses"),
        ],
        lasers: true,
        ..Drawing::STANDARD
    };
    const BENCH_DEPTHS: (u32, u32) = (4, 5);
    const DESCRIPTION: &'static str =
        "Laser Chess (Khet-like), 10x8, Deflectors, Defenders, Switches; setups ace (default), \
            curiosity, grail, mercury, sophie";
    const START_FEN: &'static str =
        "l++3d++kd++b+++2/2b7/3B+6/b++1B1ss+1b+++1B+/b+++1B+1S+S1b++1B/6b+++3/7B++2/2B+DKD3L w";
    const SETUPS: &'static [(&'static str, &'static str)] = &[
        ("ace", Self::START_FEN),
        (
            "curiosity",
            "l++3d++kd++s+2/*/3B+2b++3/b++B2B+++s+2b+++B+/b+++B+2S+b+2b++B/3B2b+++3/*/2S+DKD3L w",
        ),
        (
            "grail",
            "l++3bd++b+++3/5k4/b++3bd++s+3/b+++1s1B+1B+++3/3b+1b+++1S1B+/3S+DB++3B/4K5/3B+DB++3L w",
        ),
        (
            "mercury",
            "l++3bkb+++2S+/5d++b+++3/b+++2s+1d++4/b++3B+3B1/1b++3b+++3B/4D1S+2B+/3B+D5/s+2B+KB++3L \
                w",
        ),
        (
            "sophie",
            "l++3kB+b+++3/3d++1d+3B/b++3bb+++1S+1B+/7s2/2S7/b+++1s+1B+B++3B/b++3D+++1D3/3B+b+++K3L \
                w",
        ),
    ];
    const ZAP_SUFFIX: bool = true;

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        let err = |reason: String| FenError::new(Self::ID, fen, reason);
        let mut fields = fen.split_whitespace();
        let placement = fields.next().ok_or_else(|| err("empty setup".into()))?;
        let turn = match fields.next() {
            Some("w") => Color::White,
            Some("b") => Color::Black,
            Some(other) => return Err(err(format!("side to move must be w or b, not '{other}'"))),
            None => return Err(err("missing side to move (w or b)".into())),
        };
        if let Some(extra) = fields.next() {
            return Err(err(format!("unexpected field '{extra}'")));
        }
        let mut cells: [u8; CELLS] = BOARD.cells(EMPTY, OFF);
        let (mut lasers, mut kings) = ([0u8; 2], [0u8; 2]);
        BOARD
            .read_board(placement, Some(b'*'), |text, s| {
                let (cell, used) = read_token(text)?;
                place(cell, s, &mut lasers, &mut kings)?;
                cells[s] = cell;
                Ok(used)
            })
            .map_err(err)?;
        if lasers.contains(&0) {
            return Err(err(
                "each side needs its Laser (Blue on j1, Red on a8)".into()
            ));
        }
        // One missing King is a finished game; neither is no position of the game.
        if kings == [0, 0] {
            return Err(err("no Kings on the board".into()));
        }
        Ok(LaserChess {
            cells,
            lasers,
            kings,
            turn,
        })
    }

    fn fen(&self) -> String {
        let mut out = BOARD.write_board(Some('*'), |s| {
            (self.cells[s] != EMPTY).then(|| token(self.cells[s]))
        });
        out.push_str(if self.turn == Color::White {
            " w"
        } else {
            " b"
        });
        out
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn generate(&self, out: &mut Vec<LaserChessMove>) {
        self.for_each_move(|mv| out.push(mv));
    }

    fn move_count(&self) -> usize {
        self.count_moves() as usize
    }

    fn play(&mut self, mv: LaserChessMove) -> Removals {
        match self.make(mv) {
            Some((s, cell)) => Removals::one(square_name(s), &token(cell)),
            None => Removals::default(),
        }
    }

    fn parse_move(&self, text: &str) -> Result<LaserChessMove, MoveError> {
        let bad = |why: &str| {
            MoveError::malformed(
                text,
                format!("{why} (a laserchess move looks like j4j3, f4ug3, h2+ or h2-)"),
            )
        };
        let from = text
            .get(..2)
            .and_then(parse_square)
            .ok_or_else(|| bad("expected a square first"))?;
        let rest = &text[2..];
        let mut shape = LaserChessMove {
            from: from as u8,
            to: 0,
            turn: 0,
            swap: false,
        };
        match rest {
            "+" => shape.turn = 1,
            "-" => shape.turn = 3,
            _ => {
                let (swap, target) = match rest.strip_prefix('u') {
                    Some(t) => (true, t),
                    None => (false, rest),
                };
                let to = parse_square(target)
                    .ok_or_else(|| bad(&format!("'{target}' is not a square")))?;
                shape.to = to as u8;
                shape.swap = swap;
            }
        }
        let cell = self.cells[from];
        if shape.turn != 0 && is_piece(cell) && matches!(cell & KIND, SWITCH | LASER) {
            // A Switch looks the same turned either way, and a Laser has one other direction:
            // both signs name the same action, and the generator writes one of them.
            let mut found = None;
            self.for_each_move(|m| {
                if m.from == shape.from && m.turn != 0 {
                    found = Some(m);
                }
            });
            if let Some(m) = found {
                return Ok(m);
            }
        }
        let mut found = false;
        self.for_each_move(|m| found |= m == shape);
        if found {
            return Ok(shape);
        }
        let reason = if !is_piece(cell) {
            "no piece on the first square"
        } else if color_of(cell) != self.turn {
            "the piece on the first square belongs to the opponent"
        } else if self.board_over() {
            "the game is already over"
        } else if shape.swap {
            "only a Switch swaps, with an adjacent Deflector or Defender, and both must be allowed \
                where they land"
        } else if shape.to != 0 {
            "a piece steps to an adjacent empty square its colour may enter (Switches swap with \
                'u')"
        } else {
            "that piece cannot turn"
        };
        Err(MoveError::illegal(text, reason))
    }

    fn move_text(&self, mv: LaserChessMove) -> String {
        let from = square_name(mv.from as usize);
        match (mv.turn, mv.swap) {
            (1, _) => format!("{from}+"),
            (3, _) => format!("{from}-"),
            (_, true) => format!("{from}u{}", square_name(mv.to as usize)),
            _ => format!("{from}{}", square_name(mv.to as usize)),
        }
    }

    fn key(&self) -> u64 {
        let mut h = if self.turn == Color::Black {
            zobrist::SIDE
        } else {
            0
        };
        for f in 0..FILES {
            for r in 0..RANKS {
                let s = sq(f, r);
                let cell = self.cells[s];
                if cell != EMPTY {
                    h ^= zobrist::piece(s, (cell & 0x0f) as usize);
                    h ^= zobrist::piece(s + 128, 16 + orientation(cell) as usize);
                }
            }
        }
        h
    }

    fn perft(&self, depth: u32) -> u64 {
        crate::game::perft::bulk_perft(self, depth)
    }

    fn material(&self) -> i32 {
        let mut balance = 0;
        for cell in self.cells {
            if is_piece(cell) {
                let value = match cell & KIND {
                    DEFLECTOR => 100,
                    DEFENDER => 150,
                    _ => 0,
                };
                balance += if color_of(cell) == self.turn {
                    value
                } else {
                    -value
                };
            }
        }
        balance
    }

    fn board_status(&self) -> Status {
        if self.kings[Color::White.index()] == 0 {
            Status::Over(Outcome::BlackWins, Termination::KingZapped)
        } else if self.kings[Color::Black.index()] == 0 {
            Status::Over(Outcome::WhiteWins, Termination::KingZapped)
        } else {
            Status::Ongoing
        }
    }

    fn judge(history: &History<Self>) -> Status {
        let status = history.current().board_status();
        if status.is_over() {
            status
        } else if history.occurrences_of_current() >= 3 {
            Status::Over(Outcome::Draw, Termination::Repetition)
        } else {
            Status::Ongoing
        }
    }

    fn laser_path_of(&self, mv: LaserChessMove) -> Vec<SquareName> {
        let mut after = self.clone();
        let shooter = after.shift(mv);
        after.beam(shooter).into_iter().map(square_name).collect()
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for rank in (0..RANKS).rev() {
            out.push_str(&format!("{} ", rank + 1));
            for file in 0..FILES {
                let s = sq(file, rank);
                let cell = self.cells[s];
                let text = if cell != EMPTY {
                    Self::describe(cell)
                } else {
                    match access(s) {
                        Access::Both => ".".into(),
                        Access::BlueOnly => "~b".into(),
                        Access::RedOnly => "~r".into(),
                        Access::LaserOnly => "#".into(),
                    }
                };
                out.push_str(&format!("{text:>4}"));
            }
            out.push('\n');
        }
        out.push_str("  ");
        for file in 0..FILES {
            out.push_str(&format!("   {}", (b'a' + file as u8) as char));
        }
        out.push('\n');
        out.push_str(
            "Upper case Blue, lower case Red. L laser: the way it points; B deflector: \
            the way its\n",
        );
        out.push_str(
            "mirror faces; D defender: the way its shield faces; S switch: its mirror \
            (\\ or /); K king.\n",
        );
        out.push_str("~b blue-only, ~r red-only square.\n");
        let mover = if self.turn == Color::White {
            "Blue"
        } else {
            "Red"
        };
        out.push_str(&format!("{mover} to move\n"));
        out
    }
}

fn side(c: Color) -> &'static str {
    match c {
        Color::White => "Blue",
        Color::Black => "Red",
    }
}

impl crate::game::perft::BulkMoves for LaserChess {
    type Move = LaserChessMove;

    fn visit(&self, f: impl FnMut(LaserChessMove)) {
        self.for_each_move(f)
    }

    fn count(&self) -> u64 {
        self.count_moves()
    }

    fn make_move(&mut self, mv: LaserChessMove) {
        self.make(mv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a beam travelling each way (N, E, S, W) does at a piece, in the ruling's words:
    /// a direction letter for a turn, `x` destroyed, `|` stopped.
    fn expected(kind: u8, o: u8) -> [char; 4] {
        let table: &[(u8, u8, &str)] = &[
            // Deflector 0: N->W, E->S, S/W kill; 90: E->N, S->W, N/W kill;
            // 180: S->E, W->N, N/E kill; 270: N->E, W->S, S/E kill.
            (DEFLECTOR, 0, "WSxx"),
            (DEFLECTOR, 1, "xNWx"),
            (DEFLECTOR, 2, "xxEN"),
            (DEFLECTOR, 3, "ExxS"),
            // Switch 0 (=180): N->W, E->S, S->E, W->N; 90 (=270): N->E, E->N, S->W, W->S.
            (SWITCH, 0, "WSEN"),
            (SWITCH, 1, "ENWS"),
            (SWITCH, 2, "WSEN"),
            (SWITCH, 3, "ENWS"),
            // Defender: the shield faces N/E/S/W; a beam arriving at the shield stops.
            (DEFENDER, 0, "xx|x"),
            (DEFENDER, 1, "xxx|"),
            (DEFENDER, 2, "|xxx"),
            (DEFENDER, 3, "x|xx"),
            (KING, 0, "xxxx"),
            (LASER, 0, "||||"),
        ];
        let row = table
            .iter()
            .find(|(k, orient, _)| *k == kind && *orient == o)
            .map(|(_, _, r)| *r)
            .unwrap_or_else(|| panic!("no expectation for kind {kind} orientation {o}"));
        let c: Vec<char> = row.chars().collect();
        [c[0], c[1], c[2], c[3]]
    }

    #[test]
    fn every_face_of_every_piece_meets_the_beam_as_ruled() {
        let target = sq(4, 3);
        let cases = [
            (DEFLECTOR, 0..4),
            (SWITCH, 0..4),
            (DEFENDER, 0..4),
            (KING, 0..1),
            (LASER, 0..1),
        ];
        for (kind, orientations) in cases {
            for o in orientations {
                for (dir, &want) in expected(kind, o).iter().enumerate() {
                    let mut board = LaserChess::from_fen(LaserChess::START_FEN).unwrap();
                    for f in 0..FILES {
                        for r in 0..RANKS {
                            board.cells[sq(f, r)] = EMPTY;
                        }
                    }
                    board.cells[target] = with_orientation(RED | kind, o);
                    let start = (target as isize - 3 * DIR[dir]) as usize;
                    let got = match board.trace(start, dir) {
                        BeamEnd::Destroyed(s) if s == target => 'x',
                        BeamEnd::Blocked(s) if s == target => '|',
                        BeamEnd::Left(d) => ['N', 'E', 'S', 'W'][d],
                        other => panic!("unexpected {other:?}"),
                    };
                    assert_eq!(got, want, "kind {kind} orientation {o} beam {dir}");
                }
            }
        }
    }

    #[test]
    fn access_squares_match_the_ruling() {
        let count = |a: Access| {
            (0..FILES)
                .flat_map(|f| (0..RANKS).map(move |r| sq(f, r)))
                .filter(|&s| access(s) == a)
                .count()
        };
        assert_eq!(count(Access::LaserOnly), 2);
        assert_eq!(count(Access::RedOnly), 9);
        assert_eq!(count(Access::BlueOnly), 9);
    }
}
