//! Leaperhouse (Daphne Snowmoon), 10x10 with drops: the inventor's Fairy-Stockfish definition in
//! `../shared/rules/leaperhouse.txt`, as RULINGS.md rules it.
//!
//! Only leapers, shogi pawns and Kings: nothing slides, so moving a piece other than the King can
//! never uncover a check. Legality therefore needs no make/unmake: out of check every non-King move
//! is legal; in check a non-King move must capture the (single) checker, and drops never help.

use super::mailbox::Mailbox;
use crate::game::drawing::{lettered, Figure, Shape};
use crate::game::{
    Color, Drawing, FenError, History, MoveError, Outcome, Position, Removals, SquareName, Status,
    Termination,
};
use crate::zobrist;

const STRIDE: i32 = 16;
const BORDER: i32 = 3;
const CELLS: usize = 256;
const N: i32 = 10;

const EMPTY: u8 = 0;
const OFF: u8 = 0xFF;
const BLACK: u8 = 0x10;

// Piece types. `PROMOTED` is the promoted pawn (Fairy-Stockfish's commoner, written `+P`).
const PAWN: u8 = 1;
const PROMOTED: u8 = 2;
const KNIGHT: u8 = 3;
const BULL: u8 = 4;
const CAMEL: u8 = 5;
const ELEPHANT: u8 = 6;
const RAM: u8 = 7;
const KING: u8 = 8;

/// Hand pieces in Fairy-Stockfish's FEN order (descending piece type): U A C E P N.
const HAND_ORDER: [u8; 6] = [BULL, RAM, CAMEL, ELEPHANT, PAWN, KNIGHT];
const LETTERS: [u8; 9] = [b'?', b'P', b'P', b'N', b'U', b'C', b'E', b'A', b'K'];

const BOARD: Mailbox = Mailbox {
    files: N,
    ranks: N,
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

const fn leaps(pairs: &[(i32, i32)]) -> [i32; 16] {
    // Every (a, b) leap in all 8 symmetric directions, deduplicated for a == b or b == 0.
    let mut out = [0i32; 16];
    let mut n = 0;
    let mut i = 0;
    while i < pairs.len() {
        let (a, b) = pairs[i];
        let cands = [
            (a, b),
            (b, a),
            (-a, b),
            (-b, a),
            (a, -b),
            (b, -a),
            (-a, -b),
            (-b, -a),
        ];
        let mut j = 0;
        while j < 8 {
            let (x, y) = cands[j];
            let d = y * STRIDE + x;
            let mut dup = false;
            let mut k = 0;
            while k < n {
                if out[k] == d {
                    dup = true;
                }
                k += 1;
            }
            if !dup {
                out[n] = d;
                n += 1;
            }
            j += 1;
        }
        i += 1;
    }
    out
}

/// Leap offsets by piece type (0-terminated); pawns are handled apart because they are directional.
static LEAPS: [[i32; 16]; 9] = [
    [0; 16],
    [0; 16],
    leaps(&[(1, 0), (1, 1)]), // promoted pawn: one step in 8 directions
    leaps(&[(2, 1)]),
    leaps(&[(2, 0), (2, 2)]),
    leaps(&[(3, 1)]),
    leaps(&[(3, 2)]),
    leaps(&[(3, 0), (3, 3)]),
    leaps(&[(1, 0), (1, 1)]),
];

fn color_bit(c: Color) -> u8 {
    match c {
        Color::White => 0,
        Color::Black => BLACK,
    }
}

fn forward(c: Color) -> i32 {
    match c {
        Color::White => STRIDE,
        Color::Black => -STRIDE,
    }
}

/// Ranks 8..10 for White, 3..1 for Black (0-based ranks 7..9 and 0..2).
fn in_zone(c: Color, rank: i32) -> bool {
    match c {
        Color::White => rank >= 7,
        Color::Black => rank <= 2,
    }
}

fn last_rank(c: Color) -> i32 {
    match c {
        Color::White => N - 1,
        Color::Black => 0,
    }
}

/// A Leaperhouse move: a board move (optionally promoting) or a drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaperMove {
    pub from: u8,
    pub to: u8,
    pub promote: bool,
    /// The dropped piece type, 0 for a board move.
    pub drop: u8,
}

#[derive(Clone, PartialEq, Eq)]
pub struct Leaperhouse {
    cells: [u8; CELLS],
    hands: [[u8; 9]; 2],
    kings: [u8; 2],
    turn: Color,
    halfmove: u32,
    fullmove: u32,
    /// `repetition=fairy-stockfish`: a third occurrence scored as Fairy-Stockfish scores it
    /// (RULINGS.md's documented alternative), not as the prose rules it. Not part of the FEN.
    fairy_repetition: bool,
}

impl std::fmt::Debug for Leaperhouse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Leaperhouse({})", self.fen())
    }
}

fn square_name(s: usize) -> SquareName {
    BOARD.square_name(s)
}

fn piece_text(cell: u8) -> String {
    let t = cell & 0x0f;
    let mut s = String::new();
    if t == PROMOTED {
        s.push('+');
    }
    let c = LETTERS[t as usize] as char;
    s.push(if cell & BLACK != 0 {
        c.to_ascii_lowercase()
    } else {
        c
    });
    s
}

fn parse_square(text: &str) -> Option<usize> {
    BOARD.parse_square(text)
}

fn type_of_letter(c: u8) -> Option<u8> {
    LETTERS[1..]
        .iter()
        .position(|&l| l == c.to_ascii_uppercase())
        .map(|i| i as u8 + 1)
        .filter(|&t| t != PROMOTED)
}

impl Leaperhouse {
    fn color_of(cell: u8) -> Color {
        if cell & BLACK != 0 {
            Color::Black
        } else {
            Color::White
        }
    }

    fn is_piece(cell: u8) -> bool {
        cell != EMPTY && cell != OFF
    }

    /// Whether `color` attacks square `s`.
    fn attacked_by(&self, s: usize, color: Color) -> bool {
        let cb = color_bit(color);
        let pawn_from = (s as i32 - forward(color)) as usize;
        if self.cells[pawn_from] == cb | PAWN {
            return true;
        }
        for t in PROMOTED..=KING {
            let piece = cb | t;
            for &d in LEAPS[t as usize].iter().take_while(|&&d| d != 0) {
                if self.cells[(s as i32 + d) as usize] == piece {
                    return true;
                }
            }
        }
        false
    }

    /// The squares of `color`'s pieces that attack `s` (at most two are needed).
    fn checkers(&self, s: usize, color: Color) -> (usize, Option<usize>) {
        let cb = color_bit(color);
        let mut found = Vec::with_capacity(2);
        let pawn_from = (s as i32 - forward(color)) as usize;
        if self.cells[pawn_from] == cb | PAWN {
            found.push(pawn_from);
        }
        for t in PROMOTED..=KING {
            for &d in LEAPS[t as usize].iter().take_while(|&&d| d != 0) {
                let from = (s as i32 + d) as usize;
                if self.cells[from] == cb | t {
                    found.push(from);
                }
            }
        }
        (
            found.len(),
            found.get(1).copied().or(found.first().copied()),
        )
    }

    fn king_attacked(&self) -> bool {
        self.attacked_by(self.kings[self.turn.index()] as usize, self.turn.other())
    }

    /// The last mover's King stands on its last rank: it has won by campmate.
    fn campmate(&self) -> bool {
        let mover = self.turn.other();
        let (_, rank) = file_rank(self.kings[mover.index()] as usize);
        rank == last_rank(mover)
    }

    /// Calls `f` with every legal move. No legal moves in a finished (campmate) position.
    fn for_each_legal(&self, mut f: impl FnMut(LeaperMove)) {
        if self.campmate() {
            return;
        }
        let us = self.turn;
        let them = us.other();
        let king = self.kings[us.index()] as usize;
        let (n_checkers, checker) = self.checkers(king, them);
        let own = |cell: u8| Self::is_piece(cell) && Self::color_of(cell) == us;

        // King moves: the destination must not be attacked (nothing slides, so the King's own
        // square hides nothing behind it).
        for &d in LEAPS[KING as usize].iter().take_while(|&&d| d != 0) {
            let to = (king as i32 + d) as usize;
            let cell = self.cells[to];
            if cell != OFF && !own(cell) && !self.attacked_by(to, them) {
                f(LeaperMove {
                    from: king as u8,
                    to: to as u8,
                    promote: false,
                    drop: 0,
                });
            }
        }
        if n_checkers >= 2 {
            return;
        }
        // With one checker, a non-King move must capture it.
        let must_capture = (n_checkers == 1).then(|| checker.unwrap_or(0));

        for f_ in 0..N {
            for r_ in 0..N {
                let from = sq(f_, r_);
                let cell = self.cells[from];
                if !own(cell) || cell & 0x0f == KING {
                    continue;
                }
                let t = cell & 0x0f;
                let mut emit = |to: usize| {
                    let target = self.cells[to];
                    if target == OFF || own(target) {
                        return;
                    }
                    if let Some(c) = must_capture {
                        if to != c {
                            return;
                        }
                    }
                    let promote = t == PAWN && (in_zone(us, r_) || in_zone(us, file_rank(to).1));
                    f(LeaperMove {
                        from: from as u8,
                        to: to as u8,
                        promote,
                        drop: 0,
                    });
                };
                if t == PAWN {
                    emit((from as i32 + forward(us)) as usize);
                } else {
                    for &d in LEAPS[t as usize].iter().take_while(|&&d| d != 0) {
                        emit((from as i32 + d) as usize);
                    }
                }
            }
        }
        if must_capture.is_none() {
            // A drop never captures, and leaper checks cannot be blocked.
            self.for_each_drop(&mut f);
        }
    }

    /// Every drop from the hand of the side to move onto an empty square: no pawn on a file
    /// holding an unpromoted pawn of its own, nor on its last rank.
    fn for_each_drop(&self, f: &mut impl FnMut(LeaperMove)) {
        let us = self.turn;
        let hand = &self.hands[us.index()];
        for t in [PAWN, KNIGHT, BULL, CAMEL, ELEPHANT, RAM] {
            if hand[t as usize] == 0 {
                continue;
            }
            for file in 0..N {
                if t == PAWN && self.unpromoted_pawn_on_file(us, file) {
                    continue;
                }
                for rank in 0..N {
                    if t == PAWN && rank == last_rank(us) {
                        continue;
                    }
                    let to = sq(file, rank);
                    if self.cells[to] == EMPTY {
                        f(LeaperMove {
                            from: to as u8,
                            to: to as u8,
                            promote: false,
                            drop: t,
                        });
                    }
                }
            }
        }
    }

    fn unpromoted_pawn_on_file(&self, c: Color, file: i32) -> bool {
        let pawn = color_bit(c) | PAWN;
        (0..N).any(|r| self.cells[sq(file, r)] == pawn)
    }

    fn count_legal(&self) -> u64 {
        let mut n = 0;
        self.for_each_legal(|_| n += 1);
        n
    }

    fn make(&mut self, mv: LeaperMove) -> Option<(usize, u8)> {
        let us = self.turn;
        let cb = color_bit(us);
        let to = mv.to as usize;
        let mut captured = None;
        if mv.drop != 0 {
            self.hands[us.index()][mv.drop as usize] -= 1;
            self.cells[to] = cb | mv.drop;
            // As Fairy-Stockfish counts it: a drop cannot be taken back, so it resets the clock.
            self.halfmove = 0;
        } else {
            let from = mv.from as usize;
            let target = self.cells[to];
            if Self::is_piece(target) {
                let t = match target & 0x0f {
                    PROMOTED => PAWN,
                    t => t,
                };
                self.hands[us.index()][t as usize] += 1;
                captured = Some((to, target));
                self.halfmove = 0;
            } else {
                self.halfmove += 1;
            }
            let mut piece = self.cells[from];
            if mv.promote {
                piece = cb | PROMOTED;
                // Irreversible too, in Fairy-Stockfish's count.
                self.halfmove = 0;
            }
            self.cells[to] = piece;
            self.cells[from] = EMPTY;
            if piece & 0x0f == KING {
                self.kings[us.index()] = to as u8;
            }
        }
        if us == Color::Black {
            self.fullmove += 1;
        }
        self.turn = us.other();
        captured
    }
}

/// A third occurrence as Fairy-Stockfish scores it (`nFoldValue = loss`,
/// `perpetualCheckIllegal = true`): the side to move at the third occurrence loses, unless a
/// side checked perpetually: the mover, when each of its moves back to the first occurrence gave
/// check (then it loses); the side to move, when its last two moves gave check (then it loses);
/// both, a draw.
fn fairy_repetition(history: &History<Leaperhouse>) -> Status {
    let mover = history.current().turn.other();
    let key = history.key_back(0).unwrap_or_default();
    let plies = history.plies();
    // The distance back to the first of the three occurrences.
    let first = (1..=plies.len())
        .filter(|&back| history.key_back(back) == Some(key))
        .nth(1)
        .unwrap_or(plies.len());
    let gave_check = |back: usize| {
        plies
            .len()
            .checked_sub(back + 1)
            .is_some_and(|i| plies[i].check)
    };
    let mover_perpetual = (0..=first).step_by(2).all(gave_check);
    let side_to_move_perpetual = gave_check(1) && gave_check(3);
    match (mover_perpetual, side_to_move_perpetual) {
        (true, true) => Status::Over(Outcome::Draw, Termination::Repetition),
        (true, false) => Status::Over(mover.other().wins(), Termination::Repetition),
        (false, _) => Status::Over(mover.wins(), Termination::Repetition),
    }
}

/// Shogi's pieces: pentagons pointing at the opponent, the letter on them; a promoted Pawn is
/// a Guard, its G drawn red.
fn figure(token: &str) -> Option<Figure> {
    let letter = token
        .trim_start_matches('+')
        .chars()
        .next()?
        .to_ascii_uppercase();
    if !LETTERS[1..].contains(&(letter as u8)) {
        return None;
    }
    let mut figure = lettered(token, &[(letter, Shape::Pentagon)])?;
    if figure.promoted {
        figure.letter = Some('G');
    }
    Some(figure)
}

impl Position for Leaperhouse {
    type Move = LeaperMove;

    const ID: &'static str = "leaperhouse";
    const DRAWING: Drawing = Drawing {
        files: 10,
        figure,
        legend: &[
            ("K", "King"),
            ("P", "Pawn"),
            ("+P", "Guard: a promoted Pawn"),
            ("N", "Knight"),
            ("U", "Bull"),
            ("C", "Camel"),
            ("E", "Elephant"),
            ("A", "Ram"),
        ],
        ..Drawing::STANDARD
    };
    const BENCH_DEPTHS: (u32, u32) = (4, 5);
    const DESCRIPTION: &'static str =
        "Leaperhouse, 10x10 leapers and shogi pawns with drops (Fairy-Stockfish notation)";
    const START_FEN: &'static str =
        "unceakecnu/10/pppppppppp/10/10/10/10/PPPPPPPPPP/10/UNCEKAECNU[] w - - 0 1";
    const RULE_OPTIONS: &'static [(&'static str, &'static [&'static str])] =
        &[("repetition", &["prose", "fairy-stockfish"])];

    fn set_rule(&mut self, name: &str, value: &str) {
        if name == "repetition" {
            self.fairy_repetition = value == "fairy-stockfish";
        }
    }

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        let err = |reason: String| FenError::new(Self::ID, fen, reason);
        let mut fields = fen.split_whitespace();
        let board_field = fields.next().ok_or_else(|| err("empty FEN".into()))?;
        let (placement, hand_text) = match board_field.find('[') {
            Some(i) => {
                let rest = &board_field[i + 1..];
                let end = rest
                    .find(']')
                    .ok_or_else(|| err("hand '[' is not closed by ']'".into()))?;
                if end + 1 != rest.len() {
                    return Err(err("unexpected text after the hand".into()));
                }
                (&board_field[..i], &rest[..end])
            }
            None => (board_field, ""),
        };
        let mut cells: [u8; CELLS] = BOARD.cells(EMPTY, OFF);
        let mut kings = [0u8; 2];
        BOARD
            .read_board(placement, None, |text, s| {
                let b = text.as_bytes();
                let promoted = b[0] == b'+';
                let c = *b.get(promoted as usize).ok_or("'+' at the end of a rank")?;
                let t =
                    type_of_letter(c).ok_or_else(|| format!("unknown piece '{}'", c as char))?;
                if promoted && t != PAWN {
                    return Err(format!("only pawns promote, not '+{}'", c as char));
                }
                let color = if c.is_ascii_uppercase() {
                    Color::White
                } else {
                    Color::Black
                };
                cells[s] = color_bit(color) | if promoted { PROMOTED } else { t };
                if t == KING {
                    if kings[color.index()] != 0 {
                        return Err("two Kings of one colour".into());
                    }
                    kings[color.index()] = s as u8;
                }
                Ok(1 + promoted as usize)
            })
            .map_err(err)?;
        if kings.contains(&0) {
            return Err(err("each side needs exactly one King".into()));
        }
        let mut hands = [[0u8; 9]; 2];
        for c in hand_text.bytes() {
            let t = type_of_letter(c)
                .filter(|&t| t != KING)
                .ok_or_else(|| err(format!("'{}' cannot be in hand", c as char)))?;
            let side = if c.is_ascii_uppercase() { 0 } else { 1 };
            hands[side][t as usize] = hands[side][t as usize].saturating_add(1);
        }
        let turn = match fields.next() {
            Some("w") => Color::White,
            Some("b") => Color::Black,
            Some(other) => return Err(err(format!("side to move must be w or b, not '{other}'"))),
            None => return Err(err("missing side to move (w or b)".into())),
        };
        for name in ["castling", "en passant"] {
            match fields.next() {
                None | Some("-") => {}
                Some(other) => return Err(err(format!("{name} field must be '-', not '{other}'"))),
            }
        }
        let (halfmove, fullmove) = crate::game::parse_fen_clocks(fields, err)?;
        Ok(Leaperhouse {
            cells,
            hands,
            kings,
            turn,
            halfmove,
            fullmove,
            fairy_repetition: false,
        })
    }

    fn fen(&self) -> String {
        let mut out = BOARD.write_board(None, |s| {
            (self.cells[s] != EMPTY).then(|| piece_text(self.cells[s]))
        });
        out.push('[');
        for (side, hand) in self.hands.iter().enumerate() {
            for t in HAND_ORDER {
                let letter = LETTERS[t as usize] as char;
                let letter = if side == 0 {
                    letter
                } else {
                    letter.to_ascii_lowercase()
                };
                for _ in 0..hand[t as usize] {
                    out.push(letter);
                }
            }
        }
        out.push(']');
        let side = if self.turn == Color::White { 'w' } else { 'b' };
        out.push_str(&format!(" {side} - - {} {}", self.halfmove, self.fullmove));
        out
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn generate(&self, out: &mut Vec<LeaperMove>) {
        self.for_each_legal(|mv| out.push(mv));
    }

    fn move_count(&self) -> usize {
        self.count_legal() as usize
    }

    fn play(&mut self, mv: LeaperMove) -> Removals {
        match self.make(mv) {
            Some((s, cell)) => Removals::one(square_name(s), &piece_text(cell)),
            None => Removals::default(),
        }
    }

    fn parse_move(&self, text: &str) -> Result<LeaperMove, MoveError> {
        let bad = |why: &str| {
            MoveError::malformed(
                text,
                format!("{why} (a leaperhouse move looks like e3e4, e7e8+ or P@e5)"),
            )
        };
        let shape = if let Some((piece, square)) = text.split_once('@') {
            let [letter] = piece.as_bytes() else {
                return Err(bad("a drop names one piece letter"));
            };
            let t = type_of_letter(*letter)
                .filter(|&t| t != KING)
                .ok_or_else(|| bad(&format!("'{piece}' cannot be dropped")))?;
            let to =
                parse_square(square).ok_or_else(|| bad(&format!("'{square}' is not a square")))?;
            LeaperMove {
                from: to as u8,
                to: to as u8,
                promote: false,
                drop: t,
            }
        } else {
            let (body, promote) = match text.strip_suffix('+') {
                Some(b) => (b, true),
                None => (text, false),
            };
            // Split between the two squares: the second square starts at the second letter.
            let split = body
                .char_indices()
                .skip(1)
                .find(|(_, c)| c.is_ascii_lowercase())
                .map(|(i, _)| i)
                .ok_or_else(|| bad("expected two squares"))?;
            let from = parse_square(&body[..split])
                .ok_or_else(|| bad(&format!("'{}' is not a square", &body[..split])))?;
            let to = parse_square(&body[split..])
                .ok_or_else(|| bad(&format!("'{}' is not a square", &body[split..])))?;
            LeaperMove {
                from: from as u8,
                to: to as u8,
                promote,
                drop: 0,
            }
        };
        let mut found = false;
        self.for_each_legal(|m| found |= m == shape);
        if found {
            return Ok(shape);
        }
        let reason = if shape.drop != 0 {
            let to = shape.to as usize;
            let (file, rank) = file_rank(to);
            if self.hands[self.turn.index()][shape.drop as usize] == 0 {
                "no such piece in hand"
            } else if self.cells[to] != EMPTY {
                "the square is occupied"
            } else if shape.drop == PAWN && rank == last_rank(self.turn) {
                "a pawn may not be dropped on the last rank"
            } else if shape.drop == PAWN && self.unpromoted_pawn_on_file(self.turn, file) {
                "a pawn may not be dropped on a file that holds an unpromoted own pawn"
            } else {
                "the drop leaves the King in check"
            }
        } else {
            let cell = self.cells[shape.from as usize];
            if !Self::is_piece(cell) {
                "no piece on the first square"
            } else if Self::color_of(cell) != self.turn {
                "the piece on the first square belongs to the opponent"
            } else if cell & 0x0f == PAWN && !shape.promote {
                "the piece cannot move there (a pawn entering, inside or leaving the zone must \
                    promote: add '+')"
            } else {
                "the piece cannot move there, or the move leaves the King in check"
            }
        };
        Err(MoveError::illegal(text, reason))
    }

    fn move_text(&self, mv: LeaperMove) -> String {
        if mv.drop != 0 {
            format!(
                "{}@{}",
                LETTERS[mv.drop as usize] as char,
                square_name(mv.to as usize)
            )
        } else {
            format!(
                "{}{}{}",
                square_name(mv.from as usize),
                square_name(mv.to as usize),
                if mv.promote { "+" } else { "" }
            )
        }
    }

    fn key(&self) -> u64 {
        let mut h = if self.turn == Color::Black {
            zobrist::SIDE
        } else {
            0
        };
        for f in 0..N {
            for r in 0..N {
                let s = sq(f, r);
                let cell = self.cells[s];
                if cell != EMPTY {
                    h ^= zobrist::piece(s, cell as usize);
                }
            }
        }
        // Hands hash on border cells, which never hold a piece.
        for (side, hand) in self.hands.iter().enumerate() {
            for t in HAND_ORDER {
                let n = hand[t as usize] as usize;
                if n > 0 {
                    h ^= zobrist::piece(side * 8 + t as usize, n);
                }
            }
        }
        h
    }

    fn perft(&self, depth: u32) -> u64 {
        crate::game::perft::bulk_perft(self, depth)
    }

    fn material(&self) -> i32 {
        const VALUE: [i32; 9] = [0, 100, 250, 300, 350, 300, 350, 350, 0];
        let mut balance = 0;
        for cell in self.cells {
            if Self::is_piece(cell) {
                let v = VALUE[(cell & 0x0f) as usize];
                balance += if Self::color_of(cell) == self.turn {
                    v
                } else {
                    -v
                };
            }
        }
        for (side, hand) in self.hands.iter().enumerate() {
            let v: i32 = hand
                .iter()
                .enumerate()
                .map(|(t, &n)| VALUE[t] * n as i32 * 9 / 10)
                .sum();
            balance += if side == self.turn.index() { v } else { -v };
        }
        balance
    }

    fn board_status(&self) -> Status {
        if self.campmate() {
            return Status::Over(self.turn.other().wins(), Termination::Campmate);
        }
        if self.count_legal() == 0 {
            let why = if self.king_attacked() {
                Termination::Checkmate
            } else {
                Termination::Stalemate
            };
            // Stalemate loses in Leaperhouse, like checkmate.
            return Status::Over(self.turn.other().wins(), why);
        }
        Status::Ongoing
    }

    fn in_check(&self) -> bool {
        self.king_attacked()
    }

    fn judge(history: &History<Self>) -> Status {
        let status = history.current().board_status();
        if status.is_over() || history.occurrences_of_current() < 3 {
            return status;
        }
        if history.current().fairy_repetition {
            return fairy_repetition(history);
        }
        // A third occurrence loses for the player who made it, unless every move of the opponent
        // since the previous occurrence gave check: then the perpetual checker loses.
        let mover = history.current().turn.other();
        let key = history.key_back(0).unwrap_or_default();
        let plies = history.plies();
        let previous = (1..=plies.len())
            .find(|&back| history.key_back(back) == Some(key))
            .unwrap_or(plies.len());
        // Plies after the previous occurrence, newest first; the opponent's are every second one.
        let opponent_always_checked = plies
            .iter()
            .rev()
            .take(previous)
            .skip(1)
            .step_by(2)
            .all(|p| p.check);
        let loser = if opponent_always_checked {
            mover.other()
        } else {
            mover
        };
        Status::Over(loser.other().wins(), Termination::Repetition)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for rank in (0..N).rev() {
            out.push_str(&format!("{:>2} ", rank + 1));
            for file in 0..N {
                let cell = self.cells[sq(file, rank)];
                let text = if cell == EMPTY {
                    ".".to_string()
                } else {
                    piece_text(cell)
                };
                out.push_str(&format!("{text:>3}"));
            }
            out.push('\n');
        }
        out.push_str("   ");
        for file in 0..N {
            out.push_str(&format!("  {}", (b'a' + file as u8) as char));
        }
        out.push('\n');
        let hand = |side: usize| -> String {
            let mut s = String::new();
            for t in HAND_ORDER {
                for _ in 0..self.hands[side][t as usize] {
                    s.push(LETTERS[t as usize] as char);
                }
            }
            if s.is_empty() {
                "-".into()
            } else {
                s
            }
        };
        out.push_str(&format!(
            "hands: White {}  Black {}\n",
            hand(0),
            hand(1).to_lowercase()
        ));
        let mover = if self.turn == Color::White {
            "White"
        } else {
            "Black"
        };
        out.push_str(&format!("{mover} to move\n"));
        out
    }
}

impl crate::game::perft::BulkMoves for Leaperhouse {
    type Move = LeaperMove;

    fn visit(&self, f: impl FnMut(LeaperMove)) {
        self.for_each_legal(f)
    }

    fn count(&self) -> u64 {
        self.count_legal()
    }

    fn make_move(&mut self, mv: LeaperMove) {
        self.make(mv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leap_tables_have_the_right_sizes() {
        let count = |t: u8| LEAPS[t as usize].iter().take_while(|&&d| d != 0).count();
        assert_eq!(count(KNIGHT), 8);
        assert_eq!(count(BULL), 8);
        assert_eq!(count(CAMEL), 8);
        assert_eq!(count(ELEPHANT), 8);
        assert_eq!(count(RAM), 8);
        assert_eq!(count(KING), 8);
    }
}
