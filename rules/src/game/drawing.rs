//! What a picture of a game's board needs from its rules: how its FEN writes the squares, how
//! ranks are numbered, what each piece token looks like (whose, what shape, which way it faces),
//! the sides' colours, squares reserved to one side, and a legend. Each game states it on its
//! [`Position`](super::Position); drawing code outside the rules asks the game, never its id.

use super::Color;

/// One side as pictures show it: its name in the rules and a colour that tells it apart.
#[derive(Clone, Copy, Debug)]
pub struct Side {
    pub name: &'static str,
    /// A CSS colour for the side's pieces.
    pub colour: &'static str,
}

/// The outline a piece is drawn with. Drawn facing north, then turned by the figure's facing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A mirror on the diagonal, its reflecting face toward the (diagonal) facing, the opaque
    /// body behind it: a Leiserchess Pawn, a Laser Chess Deflector.
    Mirror,
    /// Mirrors on both faces of a diagonal (a Laser Chess Switch); facing 1 is `/`, 7 is `\`.
    Switch,
    /// A block with a shield on its facing side (a Laser Chess Defender).
    Shield,
    /// A laser that fires the way it faces (a Laser Chess Laser).
    Laser,
    /// A King that fires the laser the way it faces (Leiserchess).
    LaserKing,
    Crown,
    Disc,
    Square,
    Diamond,
    Triangle,
    Octagon,
    Star,
    /// A shogi piece: a pentagon pointing the way it faces (toward the opponent).
    Pentagon,
}

/// What one piece token looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Figure {
    pub side: Color,
    pub shape: Shape,
    /// Eighths of a turn clockwise from north (0 N, 1 NE, 2 E, ... 7 NW).
    pub facing: u8,
    /// The letter written on the piece (upright whatever the facing), if any.
    pub letter: Option<char>,
    /// Promoted (shogi-like games): the letter is drawn red.
    pub promoted: bool,
}

impl Figure {
    /// A figure with no letter on it, turned `facing` eighths from north.
    pub fn turned(side: Color, shape: Shape, facing: u8) -> Figure {
        Figure {
            side,
            shape,
            facing,
            letter: None,
            promoted: false,
        }
    }
}

/// Who may stand on a square, where a game reserves some (Laser Chess).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tint {
    Open,
    Only(Color),
    /// Only a Laser stands there.
    Lasers,
}

/// How one game's board is drawn.
#[derive(Clone, Copy, Debug)]
pub struct Drawing {
    /// Squares per rank: what a `*` (a rank with nothing on it, where the game writes one) means.
    pub files: usize,
    /// The bottom rank's number in square names (`a0` in Leiserchess, `a1` elsewhere).
    pub first_rank: i32,
    /// Letters per piece (Leiserchess writes two, `NW`); other games write one, with `+` signs
    /// after it (Laser Chess's facing) or before it (a promoted Leaperhouse piece).
    pub letters: usize,
    /// White's (who moves first) and Black's names and colours.
    pub sides: [Side; 2],
    /// What a piece token of the FEN looks like; None for a token the game does not write.
    pub figure: fn(&str) -> Option<Figure>,
    /// Who may stand on (file, rank from the bottom, both from 0).
    pub tint: fn(i32, i32) -> Tint,
    /// The legend: a White token of each kind of piece, and what it is.
    pub legend: &'static [(&'static str, &'static str)],
    /// Whether moves fire a laser (the legend then explains the beam).
    pub lasers: bool,
}

/// Tokens as most games write them: a letter, upper case White, lower case Black, a `+`
/// before it when promoted; `shapes` gives each (upper-case) letter its outline.
pub fn lettered(token: &str, shapes: &[(char, Shape)]) -> Option<Figure> {
    let promoted = token.starts_with('+');
    let letter = token.trim_start_matches('+').chars().next()?;
    let upper = letter.to_ascii_uppercase();
    let shape = shapes.iter().find(|(l, _)| *l == upper)?.1;
    let side = if letter.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    Some(Figure {
        side,
        shape,
        facing: if side == Color::White { 0 } else { 4 },
        letter: Some(upper),
        promoted,
    })
}

fn any_letter(token: &str) -> Option<Figure> {
    let letter = token.trim_start_matches('+').chars().next()?;
    lettered(token, &[(letter.to_ascii_uppercase(), Shape::Disc)])
}

/// No square reserved.
pub fn open(_file: i32, _rank: i32) -> Tint {
    Tint::Open
}

impl Drawing {
    /// White and Black as most games name them.
    pub const WHITE_BLACK: [Side; 2] = [
        Side {
            name: "White",
            colour: "#f4f1e8",
        },
        Side {
            name: "Black",
            colour: "#2b2b2b",
        },
    ];

    /// An 8x8 board, ranks from 1, one letter per piece, each drawn as a disc with its letter.
    pub const STANDARD: Drawing = Drawing {
        files: 8,
        first_rank: 1,
        letters: 1,
        sides: Drawing::WHITE_BLACK,
        figure: any_letter,
        tint: open,
        legend: &[],
        lasers: false,
    };

    /// The pieces of a FEN's board field, rank by rank from the top: `None` for an empty square.
    /// What follows the board (side to move, a Leaperhouse hand in brackets) is left out.
    pub fn squares(&self, fen: &str) -> Vec<Vec<Option<String>>> {
        ranks(board_field(fen))
            .map(|rank| {
                let mut cells = Vec::new();
                self.scan_rank(rank, |cell| match cell {
                    Cell::Empty(n) => cells.extend(std::iter::repeat_n(None, n)),
                    Cell::Piece(token) => cells.push(Some(token.to_string())),
                });
                cells
            })
            .collect()
    }

    /// Each piece token of a FEN's board field, as `squares` reads it, without making the board:
    /// the game viewer collects the tokens of every position it shows.
    pub fn each_piece<'f>(&self, fen: &'f str, mut each: impl FnMut(&'f str)) {
        for rank in ranks(board_field(fen)) {
            self.scan_rank(rank, |cell| {
                if let Cell::Piece(token) = cell {
                    each(token)
                }
            });
        }
    }

    /// The piece tokens of `fen`'s board field on the ranks that differ from `before`'s (every
    /// rank without `before`). A viewer that noted every token of the previous position has then
    /// seen every token of this one: a move rewrites a rank or two, and the rest are as they were.
    pub fn each_new_piece<'f>(
        &self,
        before: Option<&str>,
        fen: &'f str,
        mut each: impl FnMut(&'f str),
    ) {
        let mut old = before.map(|b| ranks(board_field(b)));
        for rank in ranks(board_field(fen)) {
            let same = old.as_mut().and_then(Iterator::next) == Some(rank);
            if !same {
                self.scan_rank(rank, |cell| {
                    if let Cell::Piece(token) = cell {
                        each(token)
                    }
                });
            }
        }
    }

    fn scan_rank<'f>(&self, rank: &'f str, mut each: impl FnMut(Cell<'f>)) {
        let bytes = rank.as_bytes();
        // Tokens are cut at byte offsets, so a multi-byte character is one letter, not several.
        let next = |i: usize| i + rank[i..].chars().next().map_or(1, char::len_utf8);
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() {
                let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                each(Cell::Empty(rank[i..i + digits].parse().unwrap_or(0)));
                i += digits;
                continue;
            }
            if bytes[i] == b'*' {
                each(Cell::Empty(self.files));
                i += 1;
                continue;
            }
            let start = i;
            if bytes[i] == b'+' {
                i += 1;
            }
            for _ in 0..self.letters {
                if i < bytes.len() {
                    i = next(i);
                } else {
                    i += 1;
                }
            }
            while self.letters == 1 && i < bytes.len() && bytes[i] == b'+' {
                i += 1;
            }
            each(Cell::Piece(&rank[start..i.min(bytes.len())]));
        }
    }

    /// (file, rank from the bottom) of a square name such as `e4` or `j10`.
    pub fn coords(&self, name: &str) -> Option<(i32, i32)> {
        let (&letter, digits) = name.as_bytes().split_first()?;
        let rank: i32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
        Some((i32::from(letter) - i32::from(b'a'), rank - self.first_rank))
    }

    /// The squares a move's text names, in order (`e2e3` → e2, e3; `P@e5` → e5; `e2L` → e2):
    /// the from and to squares a picture marks. Square names are a small letter then digits.
    pub fn move_squares(text: &str) -> Vec<String> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if b[i].is_ascii_lowercase() && digits > 0 {
                out.push(text[i..i + 1 + digits].to_string());
                i += 1 + digits;
            } else {
                i += 1;
            }
        }
        out
    }
}

/// What `scan_rank` finds: a run of empty squares, or one piece's token.
enum Cell<'f> {
    Empty(usize),
    Piece(&'f str),
}

/// The board field of a FEN: its first word, without a Leaperhouse hand in brackets.
fn board_field(fen: &str) -> &str {
    // The game viewer reads a FEN for every ply it shows. The usual one, printable ASCII up to
    // its first space, is cut there with one pass that checks every byte at once; anything
    // else goes the way `split_whitespace` goes, which decodes each character.
    let bytes = fen.as_bytes();
    let end = bytes.iter().position(|&b| b == b' ').unwrap_or(bytes.len());
    let plain = (bytes[..end].iter()).fold(end > 0, |plain, &b| {
        plain & (b > b' ') & (b < 0x7f) & (b != b'[')
    });
    if plain {
        return &fen[..end];
    }
    let field = fen.split_whitespace().next().unwrap_or("");
    field.split('[').next().unwrap_or("")
}

/// The ranks of a board field, cut at its slashes.
fn ranks(field: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(field);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.bytes().position(|b| b == b'/') {
            Some(i) => {
                rest = Some(&text[i + 1..]);
                Some(&text[..i])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::game::games;

    #[test]
    fn every_games_start_gives_full_ranks_of_its_width() {
        for entry in games() {
            let rows = entry.drawing.squares(entry.start_fen);
            assert!(
                rows.iter().all(|r| r.len() == entry.drawing.files),
                "{}: {rows:?}",
                entry.id
            );
        }
        let laser = crate::game::find_game("laserchess").unwrap().drawing;
        let rows = laser.squares("l++3d++kd++b+++2/*/8/8/8/8/8/7L w");
        assert_eq!(rows[0][0].as_deref(), Some("l++"));
        assert_eq!(rows[1].len(), 10);
        let leiser = crate::game::find_game("leiserchess").unwrap().drawing;
        assert_eq!(leiser.coords("h0"), Some((7, 0)));
        assert_eq!(leiser.squares("ss7/8 W")[0][0].as_deref(), Some("ss"));
    }

    #[test]
    fn board_fields_and_ranks_are_cut_as_the_standard_library_cuts_them() {
        fn old(fen: &str) -> &str {
            let field = fen.split_whitespace().next().unwrap_or("");
            field.split('[').next().unwrap_or("")
        }
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "  \x0b\tss7/8 W",
            "",
            "   ",
            "b+[Pp] w",
            "[Pp]",
            "bé+/ü w",
            "a\u{a0}b/c d",
            "\u{2003}x/y z",
            "x\x0by",
            "x\x1cy/z",
            "//",
            "8/8/",
        ] {
            assert_eq!(super::board_field(fen), old(fen), "{fen:?}");
            let field = old(fen);
            let ours: Vec<&str> = super::ranks(field).collect();
            let theirs: Vec<&str> = field.split('/').collect();
            assert_eq!(ours, theirs, "{fen:?}");
        }
    }

    #[test]
    fn each_piece_finds_the_tokens_of_squares_in_order() {
        let mut fens: Vec<(super::Drawing, String)> = Vec::new();
        for entry in games() {
            let starts = std::iter::once(entry.start_fen).chain(entry.setups.iter().map(|s| s.1));
            fens.extend(starts.map(|f| (entry.drawing, f.to_string())));
        }
        let laser = crate::game::find_game("laserchess").unwrap().drawing;
        let leiser = crate::game::find_game("leiserchess").unwrap().drawing;
        // Odd inputs too: a token cut by the rank's end, letters outside ASCII, a hand.
        for fen in [
            "l++3d++kd++b+++2/*/8/8/8/8/8/7L w",
            "12+",
            "bé+/ü",
            "b+[Pp] w",
        ] {
            fens.push((laser, fen.to_string()));
        }
        for fen in ["ss7/8 W", "nwsé/s", "é", "EE3"] {
            fens.push((leiser, fen.to_string()));
        }
        for (drawing, fen) in fens {
            let mut seen = Vec::new();
            drawing.each_piece(&fen, |t| seen.push(t.to_string()));
            let want: Vec<String> = drawing
                .squares(&fen)
                .into_iter()
                .flatten()
                .flatten()
                .collect();
            assert_eq!(seen, want, "{fen}");
            assert!(!want.is_empty(), "{fen}");
        }
    }

    /// Noting the new tokens of each position of a game finds every token of every position:
    /// random games of every game, each position's tokens checked against what was noted.
    #[test]
    fn new_pieces_since_the_last_position_complete_the_tokens_seen() {
        use std::collections::BTreeSet;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for entry in games() {
            for _ in 0..20 {
                let mut game = entry.new_game(None).unwrap();
                let mut noted = BTreeSet::new();
                let mut before: Option<String> = None;
                let mut skipped = 0;
                for _ in 0..200 {
                    let fen = game.fen();
                    let mut fresh = 0;
                    entry.drawing.each_new_piece(before.as_deref(), &fen, |t| {
                        noted.insert(t.to_string());
                        fresh += 1;
                    });
                    let mut all = 0;
                    entry.drawing.each_piece(&fen, |t| {
                        assert!(noted.contains(t), "{}: {t} of {fen}", entry.id);
                        all += 1;
                    });
                    skipped += all - fresh;
                    before = Some(fen);
                    let moves = game.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    game.play(&crate::game::pick(&mut seed, &moves)).unwrap();
                }
                // The unchanged ranks were passed over.
                assert!(skipped > 100, "{}: {skipped}", entry.id);
            }
        }
    }

    #[test]
    fn every_piece_of_every_start_and_legend_has_a_figure_of_its_side() {
        use super::{Drawing, Shape};
        use crate::game::Color;
        for entry in games() {
            let d = entry.drawing;
            let fens = std::iter::once(entry.start_fen).chain(entry.setups.iter().map(|s| s.1));
            for fen in fens {
                for token in d.squares(fen).into_iter().flatten().flatten() {
                    let figure = (d.figure)(&token)
                        .unwrap_or_else(|| panic!("{}: no figure for {token}", entry.id));
                    let white = token.chars().any(|c| c.is_ascii_uppercase());
                    assert_eq!(figure.side == Color::White, white, "{}: {token}", entry.id);
                }
            }
            for (token, what) in d.legend {
                let figure = (d.figure)(token).unwrap_or_else(|| panic!("{}: {token}", entry.id));
                assert_eq!(figure.side, Color::White, "{}: {token} {what}", entry.id);
            }
            assert_ne!(d.sides[0].colour, d.sides[1].colour, "{}", entry.id);
        }
        let leiser = crate::game::find_game("leiserchess").unwrap().drawing;
        let f = (leiser.figure)("nw").unwrap();
        assert_eq!(
            (f.side, f.shape, f.facing),
            (Color::Black, Shape::Mirror, 7)
        );
        let f = (leiser.figure)("EE").unwrap();
        assert_eq!(
            (f.side, f.shape, f.facing),
            (Color::White, Shape::LaserKing, 2)
        );
        assert!((leiser.figure)("Nw").is_none());
        let laser = crate::game::find_game("laserchess").unwrap().drawing;
        // Deflector orientation 0 faces south-west; a `+` turns it clockwise to north-west.
        assert_eq!((laser.figure)("b").unwrap().facing, 5);
        assert_eq!((laser.figure)("b+").unwrap().facing, 7);
        assert_eq!((laser.figure)("L+").unwrap().facing, 2);
        assert_eq!((laser.tint)(0, 7), super::Tint::Lasers);
        assert_eq!((laser.tint)(9, 3), super::Tint::Only(Color::White));
        let leaper = crate::game::find_game("leaperhouse").unwrap().drawing;
        let guard = (leaper.figure)("+p").unwrap();
        assert_eq!(
            (guard.letter, guard.promoted, guard.facing),
            (Some('G'), true, 4)
        );
        assert_eq!(
            Drawing::move_squares("j10j9"),
            vec!["j10".to_string(), "j9".to_string()]
        );
        assert_eq!(Drawing::move_squares("P@e5"), vec!["e5".to_string()]);
        assert_eq!(Drawing::move_squares("e2R"), vec!["e2".to_string()]);
        assert!(Drawing::move_squares("null").is_empty());
    }
}
