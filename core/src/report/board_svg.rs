//! A position drawn as SVG, for `arbiter show --svg`, the live page and the report's viewer:
//! each piece as its game's [`Figure`] says (outline, side colour, facing), squares a game
//! reserves tinted, the last move's squares marked, its laser beam under the pieces, what it
//! removed crossed out, pieces in hand, and a legend.
//!
//! The viewer's script draws frames in the browser from the parts made here ([`Board::head`],
//! [`Board::piece`], [`Board::legend`]) and lays them out as [`Board::frame`] does; the report
//! test compares the two pictures string for string.

use crate::game::drawing::{Figure, Shape, Tint};
use crate::game::{AnyGame, Color, Drawing, GameEntry, PlayError};
use std::fmt::Write;

pub const CELL: i32 = 48;
pub const MARGIN: i32 = 22;
/// Height of one legend line.
pub const LINE: i32 = 22;

const LIGHT: &str = "#e9e5dc";
const DARK: &str = "#b8b09f";
const BEAM: &str = "#e8112d";

/// What a picture marks of the move that led to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// The squares the move's text names (from, to).
    pub moved: Vec<String>,
    /// The laser beam, from the firing piece to where it ended.
    pub beam: Vec<String>,
    /// Squares whose pieces the move removed.
    pub removed: Vec<String>,
}

impl Marks {
    /// Plays `mv` and returns its marks; the beam is walked before the move, while what it
    /// zaps still stands.
    pub fn play(game: &mut dyn AnyGame, mv: &str) -> Result<Marks, PlayError> {
        let beam = game.beam_of(mv);
        let report = game.play(mv)?;
        Ok(Marks {
            moved: Drawing::move_squares(mv),
            beam,
            removed: report
                .removed
                .iter()
                .map(|r| r.square.to_string())
                .collect(),
        })
    }
}

/// The position as an SVG picture with the last move's marks.
pub fn board_svg(game: &GameEntry, fen: &str, marks: &Marks) -> String {
    let board = Board::of(game);
    let mut svg = board.head();
    svg.push_str(&board.frame(fen, marks));
    svg.push_str(&board.legend());
    svg
}

/// One game's board geometry and its drawing.
pub struct Board {
    drawing: Drawing,
    files: i32,
    ranks: i32,
    /// Whether the game keeps pieces in hand (its FEN has a `[hand]`): a line for them.
    hands: bool,
}

impl Board {
    pub fn of(game: &GameEntry) -> Board {
        let drawing = game.drawing;
        let rows = drawing.squares(game.start_fen);
        Board {
            drawing,
            files: rows.iter().map(Vec::len).max().unwrap_or(0) as i32,
            ranks: rows.len() as i32,
            hands: game.start_fen.contains('['),
        }
    }

    /// What the viewer's script needs to lay out a frame as [`Board::frame`] does: files,
    /// ranks, the first rank's number, letters per piece, whether hands are drawn, the hands
    /// line's baseline and the side names.
    pub fn layout_json(&self) -> serde_json::Value {
        serde_json::json!({
            "files": self.files,
            "ranks": self.ranks,
            "first": self.drawing.first_rank,
            "letters": self.drawing.letters,
            "hands": self.hands,
            "handsY": self.board_height() + 14,
            "sides": [self.drawing.sides[0].name, self.drawing.sides[1].name],
        })
    }

    fn width(&self) -> i32 {
        self.files * CELL + 2 * MARGIN
    }

    /// Where the board's picture ends and the lines below it begin.
    fn board_height(&self) -> i32 {
        self.ranks * CELL + 2 * MARGIN
    }

    fn legend_lines(&self) -> i32 {
        let tints = i32::from(self.tints().next().is_some());
        i32::from(self.hands) + 2 + self.drawing.legend.len() as i32 + tints
    }

    fn tints(&self) -> impl Iterator<Item = (i32, i32, Tint)> + '_ {
        let (files, ranks) = (self.files, self.ranks);
        (0..files)
            .flat_map(move |f| (0..ranks).map(move |r| (f, r)))
            .map(|(f, r)| (f, r, (self.drawing.tint)(f, r)))
            .filter(|(_, _, t)| *t != Tint::Open)
    }

    fn centre(&self, file: i32, rank: i32) -> (i32, i32) {
        (
            MARGIN + file * CELL + CELL / 2,
            MARGIN + (self.ranks - 1 - rank) * CELL + CELL / 2,
        )
    }

    fn side_colour(&self, side: Color) -> &'static str {
        self.drawing.sides[side.index()].colour
    }

    /// The picture up to the pieces: its frame, squares, reserved squares, coordinates.
    pub fn head(&self) -> String {
        let (w, h) = (
            self.width(),
            self.board_height() + self.legend_lines() * LINE + 6,
        );
        let mut svg = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"board\" width=\"{w}\" \
                height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\"><rect \
                width=\"{w}\" height=\"{h}\" fill=\"#fbfaf7\"/>"
        );
        for rank in 0..self.ranks {
            for file in 0..self.files {
                let (x, y) = self.corner(file, rank);
                let fill = if (file + rank) % 2 == 0 { DARK } else { LIGHT };
                let _ = write!(
                    svg,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\"/>"
                );
            }
        }
        for (file, rank, tint) in self.tints() {
            let (x, y) = self.corner(file, rank);
            let _ = write!(
                svg,
                "<rect class=\"tint\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" \
                    fill=\"{}\" fill-opacity=\"0.35\"/>",
                self.tint_colour(tint)
            );
        }
        let bottom = self.board_height() - 6;
        for file in 0..self.files {
            let (cx, _) = self.centre(file, 0);
            let _ = write!(
                svg,
                "<text x=\"{cx}\" y=\"{bottom}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
                (b'a' + file as u8) as char
            );
        }
        for rank in 0..self.ranks {
            let (_, cy) = self.centre(0, rank);
            let _ = write!(
                svg,
                "<text x=\"6\" y=\"{}\" font-size=\"12\">{}</text>",
                cy + 4,
                rank + self.drawing.first_rank
            );
        }
        svg
    }

    fn corner(&self, file: i32, rank: i32) -> (i32, i32) {
        (
            MARGIN + file * CELL,
            MARGIN + (self.ranks - 1 - rank) * CELL,
        )
    }

    fn tint_colour(&self, tint: Tint) -> &'static str {
        match tint {
            Tint::Only(side) => self.side_colour(side),
            _ => "#666",
        }
    }

    /// What changes from position to position: the last move's squares, its beam, the
    /// pieces, what it removed, and the pieces in hand.
    pub fn frame(&self, fen: &str, marks: &Marks) -> String {
        let mut svg = String::new();
        for square in &marks.moved {
            if let Some((file, rank)) = self.drawing.coords(square) {
                let (x, y) = self.corner(file, rank);
                let _ = write!(
                    svg,
                    "<rect class=\"last\" data-square=\"{square}\" x=\"{x}\" y=\"{y}\" \
                        width=\"{CELL}\" height=\"{CELL}\" fill=\"#f4d03f\" fill-opacity=\"0.7\"/>"
                );
            }
        }
        let points: Vec<String> = (marks.beam.iter())
            .filter_map(|s| self.drawing.coords(s))
            .map(|(f, r)| {
                let (x, y) = self.centre(f, r);
                format!("{x},{y}")
            })
            .collect();
        if !points.is_empty() {
            let points = points.join(" ");
            let _ = write!(
                svg,
                "<g class=\"beam\" data-end=\"{}\" fill=\"none\" \
                    stroke-linejoin=\"round\"><polyline points=\"{points}\" stroke=\"#fff\" \
                    stroke-width=\"8\" stroke-opacity=\"0.75\"/><polyline points=\"{points}\" \
                    stroke=\"{BEAM}\" stroke-width=\"3\"/></g>",
                marks.beam.last().map(String::as_str).unwrap_or("")
            );
        }
        for (row, cells) in self.drawing.squares(fen).iter().enumerate() {
            let rank = self.ranks - 1 - row as i32;
            for (file, token) in cells.iter().enumerate() {
                let Some(token) = token else { continue };
                let Some(piece) = self.piece(token) else {
                    continue;
                };
                let (cx, cy) = self.centre(file as i32, rank);
                let _ = write!(
                    svg,
                    "<g class=\"piece\" data-square=\"{}{}\" \
                        transform=\"translate({cx},{cy})\">{piece}</g>",
                    (b'a' + file as u8) as char,
                    rank + self.drawing.first_rank
                );
            }
        }
        for square in &marks.removed {
            if let Some((file, rank)) = self.drawing.coords(square) {
                let (cx, cy) = self.centre(file, rank);
                let _ = write!(
                    svg,
                    "<g class=\"removed\" data-square=\"{square}\" stroke=\"{BEAM}\" \
                        stroke-width=\"3\" fill=\"none\"><circle cx=\"{cx}\" cy=\"{cy}\" \
                        r=\"21\"/><path d=\"M{} {}l24 24m0 -24l-24 24\"/></g>",
                    cx - 12,
                    cy - 12
                );
            }
        }
        if self.hands {
            self.hands_text(fen, &mut svg);
        }
        svg
    }

    /// The pieces each side holds in hand, under the board (from the FEN's `[...]`).
    fn hands_text(&self, fen: &str, svg: &mut String) {
        let hand = fen
            .split_whitespace()
            .next()
            .and_then(|board| board.split_once('['))
            .and_then(|(_, rest)| rest.split(']').next())
            .unwrap_or("");
        let of = |side: Color| -> String {
            let pieces: String = (hand.chars())
                .filter(|c| match side {
                    Color::White => c.is_ascii_uppercase(),
                    Color::Black => c.is_ascii_lowercase(),
                })
                .collect();
            if pieces.is_empty() {
                "-".into()
            } else {
                pieces.to_ascii_uppercase()
            }
        };
        let _ = write!(
            svg,
            "<text class=\"hands\" x=\"{MARGIN}\" y=\"{}\" font-size=\"13\">in hand: {} {}, {} \
                {}</text>",
            self.board_height() + 14,
            self.drawing.sides[0].name,
            of(Color::White),
            self.drawing.sides[1].name,
            of(Color::Black)
        );
    }

    /// A piece token drawn around (0, 0), as its figure says; None for a token the game does
    /// not write.
    pub fn piece(&self, token: &str) -> Option<String> {
        (self.drawing.figure)(token).map(|figure| self.figure_svg(&figure))
    }

    fn figure_svg(&self, figure: &Figure) -> String {
        let fill = self.side_colour(figure.side);
        let ink = ink_on(fill);
        let side = match figure.side {
            Color::White => "white",
            Color::Black => "black",
        };
        // Diagonal shapes are drawn facing north-east, the others north.
        let turn = match figure.shape {
            Shape::Mirror | Shape::Switch => (i32::from(figure.facing) + 7) % 8 * 45,
            _ => i32::from(figure.facing) * 45,
        };
        let body = format!("fill=\"{fill}\" stroke=\"#222\" stroke-width=\"1.5\"");
        let mirror = "stroke=\"#d6ecfa\" stroke-width=\"5\" stroke-linecap=\"round\"";
        let outline = match figure.shape {
            Shape::Mirror => format!(
                "<polygon points=\"-16,-16 -16,16 16,16\" {body}/><line x1=\"-16\" y1=\"-16\" \
                    x2=\"16\" y2=\"16\" {mirror}/><line x1=\"-14\" y1=\"-14\" x2=\"14\" y2=\"14\" \
                    stroke=\"#41627a\" stroke-width=\"1\"/>"
            ),
            Shape::Switch => format!(
                "<rect x=\"-16\" y=\"-16\" width=\"32\" height=\"32\" rx=\"5\" {body}/><line \
                    x1=\"-15\" y1=\"15\" x2=\"15\" y2=\"-15\" {mirror}/>"
            ),
            Shape::Shield => format!(
                "<rect x=\"-14\" y=\"-10\" width=\"28\" height=\"26\" rx=\"3\" {body}/><rect \
                    x=\"-18\" y=\"-18\" width=\"36\" height=\"8\" rx=\"2\" fill=\"#cfd8dc\" \
                    stroke=\"#222\" stroke-width=\"1.5\"/>"
            ),
            Shape::Laser => format!(
                "<rect x=\"-15\" y=\"-13\" width=\"30\" height=\"29\" rx=\"4\" {body}/><polygon \
                    points=\"0,-23 -7,-12 7,-12\" fill=\"#222\"/><circle r=\"6\" fill=\"{BEAM}\" \
                    stroke=\"#222\"/>"
            ),
            Shape::LaserKing => format!(
                "<circle r=\"16\" {body}/><polygon points=\"0,-24 -7,-13 7,-13\" fill=\"#222\"/>"
            ),
            Shape::Crown | Shape::Disc => format!("<circle r=\"17\" {body}/>"),
            Shape::Square => format!(
                "<rect x=\"-15\" y=\"-15\" width=\"30\" height=\"30\" \
                {body}/>"
            ),
            Shape::Diamond => format!("<polygon points=\"0,-20 20,0 0,20 -20,0\" {body}/>"),
            Shape::Triangle => format!("<polygon points=\"0,-20 18,15 -18,15\" {body}/>"),
            Shape::Octagon => format!(
                "<polygon points=\"-7,-18 7,-18 18,-7 18,7 7,18 -7,18 -18,7 -18,-7\" {body}/>"
            ),
            Shape::Star => format!(
                "<polygon points=\"0,-20 5,-12 14,-14 12,-5 20,0 12,5 14,14 5,12 0,20 -5,12 -14,14 \
                    -12,5 -20,0 -12,-5 -14,-14 -5,-12\" {body}/>"
            ),
            Shape::Pentagon => {
                format!("<polygon points=\"0,-20 14,-12 17,18 -17,18 -14,-12\" {body}/>")
            }
        };
        // Crowns and letters stay upright whichever way the piece faces.
        let upright = match (figure.shape, figure.letter) {
            (Shape::Crown | Shape::LaserKing, _) => format!(
                "<polygon points=\"-9,6 -10,-6 -4,0 0,-8 4,0 10,-6 9,6\" fill=\"{ink}\"/>"
            ),
            (_, Some(letter)) => format!(
                "<text y=\"5\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\" fill=\"{}\">{letter}</text>",
                match (figure.promoted, ink) {
                    (false, _) => ink,
                    (true, "#fff") => "#ff8080",
                    (true, _) => "#d00",
                }
            ),
            _ => String::new(),
        };
        format!(
            "<g data-side=\"{side}\"><g transform=\"rotate({turn})\">{outline}</g>{upright}</g>"
        )
    }

    /// The lines under the board (the sides, what each piece is, what the marks mean) and the
    /// end of the picture.
    pub fn legend(&self) -> String {
        let mut svg = String::new();
        let mut y = self.board_height() + i32::from(self.hands) * LINE;
        let x = MARGIN;
        let line = |svg: &mut String, y: i32, mark: &str, text: &str| {
            let _ = write!(
                svg,
                "<g transform=\"translate({x},{y})\">{mark}<text x=\"28\" y=\"15\" font-size=\"12\">{text}</text></g>"
            );
        };
        let [first, second] = self.drawing.sides;
        let disc = |colour: &str| {
            format!("<circle cx=\"10\" cy=\"11\" r=\"8\" fill=\"{colour}\" stroke=\"#222\"/>")
        };
        let moves_first = format!("{} (moves first)", first.name);
        svg.push_str(&swatch_row(
            "legend",
            x,
            y,
            &[
                (disc(first.colour), moves_first.as_str()),
                (disc(second.colour), second.name),
            ],
        ));
        y += LINE;
        for (token, what) in self.drawing.legend {
            let piece = self.piece(token).unwrap_or_default();
            line(
                &mut svg,
                y,
                &format!("<g transform=\"translate(10,11) scale(0.45)\">{piece}</g>"),
                what,
            );
            y += LINE;
        }
        let square = |colour: &str, opacity: &str| {
            format!("<rect y=\"2\" width=\"18\" height=\"18\" fill=\"{colour}\" fill-opacity=\"{opacity}\"/>")
        };
        if self.tints().next().is_some() {
            let only = [first.name, second.name].map(|name| format!("{name} only"));
            svg.push_str(&swatch_row(
                "tints",
                x,
                y,
                &[
                    (square(first.colour, "0.35"), only[0].as_str()),
                    (square(second.colour, "0.35"), only[1].as_str()),
                    (square("#666", "0.35"), "Lasers only"),
                ],
            ));
            y += LINE;
        }
        let mut marks = vec![(square("#f4d03f", "0.7"), "last move")];
        if self.drawing.lasers {
            let beam = format!("<line x1=\"0\" y1=\"11\" x2=\"20\" y2=\"11\" stroke=\"{BEAM}\" stroke-width=\"3\"/>");
            marks.push((beam, "its laser beam"));
        }
        let cross =
            format!("<path d=\"M3 5l12 12m0 -12l-12 12\" stroke=\"{BEAM}\" stroke-width=\"3\"/>");
        marks.push((cross, "removed"));
        svg.push_str(&swatch_row("marks", x, y, &marks));
        svg.push_str("</svg>");
        svg
    }
}

/// Width of a legend label at 12 px: wide enough for the widest letters of a sans-serif face.
fn label_width(text: &str) -> i32 {
    7 * text.chars().count() as i32
}

/// Swatches (each drawn in a 20 px box) with their labels in one legend line, each after the
/// last one's label, so that no label runs into the next swatch whatever its length.
fn swatch_row<L: AsRef<str>>(class: &str, x: i32, y: i32, items: &[(String, L)]) -> String {
    let mut svg =
        format!("<g class=\"{class}\" transform=\"translate({x},{y})\" font-size=\"12\">");
    let mut at = 0;
    for (swatch, label) in items {
        let label = label.as_ref();
        let _ = write!(
            svg,
            "<g transform=\"translate({at},0)\">{swatch}</g><text x=\"{}\" y=\"15\">{label}</text>",
            at + 24
        );
        at += 24 + label_width(label) + 18;
    }
    svg.push_str("</g>");
    svg
}

/// Dark ink on a light colour, white on a dark one.
fn ink_on(colour: &str) -> &'static str {
    let channel = |i: usize| {
        colour
            .get(i..i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .map_or(0.0, f64::from)
    };
    let luma = 0.299 * channel(1) + 0.587 * channel(3) + 0.114 * channel(5);
    if luma > 140.0 {
        "#111"
    } else {
        "#fff"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::find_game;

    #[test]
    fn the_beam_ends_on_the_square_it_names_under_the_pieces() {
        let entry = find_game("leiserchess").unwrap();
        let mut game = entry.new_game(None).unwrap();
        let marks = Marks::play(game.as_mut(), "e2e3").unwrap();
        let svg = board_svg(entry, &game.fen(), &marks);
        assert!(svg.contains("class=\"beam\" data-end=\""), "{svg}");
        let beam = svg.find("class=\"beam\"").unwrap();
        let first_piece = svg.find("class=\"piece\"").unwrap();
        assert!(beam < first_piece, "the beam is drawn under the pieces");
        assert_eq!(svg.matches("class=\"last\"").count(), 2, "{svg}");
        assert!(svg.contains("class=\"last\" data-square=\"e2\""));
        assert!(svg.contains("class=\"last\" data-square=\"e3\""));
        assert!(svg.contains("Tangerine (moves first)"));
        assert!(svg.contains("#f28c28") && svg.contains("#a58bd8"));
    }

    #[test]
    fn a_zap_is_crossed_out_where_the_beam_ends() {
        let entry = find_game("leiserchess").unwrap();
        let mut game = entry.new_game(Some("ss7/8/8/8/8/8/7NW/SE6NN W")).unwrap();
        // Tangerine's King fires north into the Pawn's opaque south side.
        let marks = Marks::play(game.as_mut(), "a0a1").unwrap();
        let svg = board_svg(entry, &game.fen(), &marks);
        assert_eq!(marks.beam.last(), marks.removed.first(), "{marks:?}");
        let end = marks.beam.last().unwrap();
        assert!(svg.contains(&format!("class=\"beam\" data-end=\"{end}\"")));
        assert!(svg.contains(&format!("class=\"removed\" data-square=\"{end}\"")));
    }

    #[test]
    fn every_game_draws_both_sides_in_their_own_colours_with_a_legend_line_per_piece() {
        for entry in crate::game::games() {
            let svg = board_svg(entry, entry.start_fen, &Marks::default());
            let board = Board::of(entry);
            let count = |side: &str| svg.matches(&format!("data-side=\"{side}\"")).count();
            let pieces = svg.matches("class=\"piece\"").count();
            assert!(pieces > 0, "{}", entry.id);
            // Every piece on the board and every legend line has its side's picture.
            assert_eq!(
                count("white") + count("black"),
                pieces + entry.drawing.legend.len(),
                "{}",
                entry.id
            );
            assert!(count("black") > 0, "{}", entry.id);
            assert_eq!(board.piece("?!"), None);
            assert!(svg.ends_with("</svg>"));
            // No legend line is wider than the picture, and no label runs into the next swatch.
            let width = board.width();
            for class in ["legend", "tints", "marks"] {
                let Some(row) = svg.split(&format!("<g class=\"{class}\"")).nth(1) else {
                    continue;
                };
                let row = &row[..row.find("</text></g>").map_or(row.len(), |i| i + 11)];
                let texts: Vec<(i32, &str)> = row
                    .split("<text x=\"")
                    .skip(1)
                    .map(|t| {
                        let (at, rest) = t.split_once('"').unwrap();
                        let label = rest.split_once('>').unwrap().1.split('<').next().unwrap();
                        (at.parse().unwrap(), label)
                    })
                    .collect();
                let swatches: Vec<i32> = row
                    .split("<g transform=\"translate(")
                    .skip(2)
                    .map(|t| t.split(',').next().unwrap().parse().unwrap())
                    .collect();
                for (i, (at, label)) in texts.iter().enumerate() {
                    let end = at + label_width(label);
                    assert!(MARGIN + end <= width, "{}: {label} ends at {end}", entry.id);
                    if let Some(next) = swatches.get(i) {
                        assert!(
                            end < *next,
                            "{}: {label} runs into the next swatch",
                            entry.id
                        );
                    }
                }
            }
        }
        let laser = board_svg(
            find_game("laserchess").unwrap(),
            find_game("laserchess").unwrap().start_fen,
            &Marks::default(),
        );
        // The ruling: two Laser corners, nine squares for each side alone.
        assert_eq!(laser.matches("class=\"tint\"").count(), 20);
    }
}
