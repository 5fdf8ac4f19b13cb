//! A position drawn as SVG, for `arbiter show --svg` and the report: the board of any of the
//! games from its FEN, read as the game's `Drawing` says (each piece as its FEN token, coloured
//! by side), the last move's laser beam from the firing piece to where it ended, and the squares
//! whose pieces it removed.

use crate::game::{Drawing, GameEntry};
use std::fmt::Write;

const CELL: i32 = 48;
const MARGIN: i32 = 22;

/// The position as an SVG picture, with the beam (square names, from the firing piece) and
/// the removed squares marked.
pub fn board_svg(game: &GameEntry, fen: &str, beam: &[String], removed: &[String]) -> String {
    let drawing = game.drawing;
    let rows = drawing.squares(fen);
    let ranks = rows.len() as i32;
    let files = rows.iter().map(Vec::len).max().unwrap_or(0) as i32;
    let (w, h) = (files * CELL + 2 * MARGIN, ranks * CELL + 2 * MARGIN);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"board\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">"
    );
    // Square (file, rank from the bottom) to its centre.
    let centre = |f: i32, r: i32| {
        (
            MARGIN + f * CELL + CELL / 2,
            MARGIN + (ranks - 1 - r) * CELL + CELL / 2,
        )
    };
    for (row, cells) in rows.iter().enumerate() {
        let r = ranks - 1 - row as i32;
        for f in 0..files {
            let (x, y) = (MARGIN + f * CELL, MARGIN + row as i32 * CELL);
            let fill = if (f + r) % 2 == 0 {
                "#b58863"
            } else {
                "#f0d9b5"
            };
            let _ = write!(
                svg,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\"/>"
            );
            if let Some(Some(token)) = cells.get(f as usize) {
                let white = token.chars().any(|c| c.is_ascii_uppercase());
                let (ink, back) = if white {
                    ("#111", "#fff")
                } else {
                    ("#fff", "#222")
                };
                let (cx, cy) = centre(f, r);
                let _ = write!(
                    svg,
                    "<g class=\"piece\" data-square=\"{}{}\"><circle cx=\"{cx}\" cy=\"{cy}\" r=\"18\" fill=\"{back}\" stroke=\"#555\"/><text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\" fill=\"{ink}\">{}</text></g>",
                    (b'a' + f as u8) as char,
                    r + drawing.first_rank,
                    cy + 5,
                    super::write::html_escape(token)
                );
            }
        }
    }
    for f in 0..files {
        let (cx, _) = centre(f, 0);
        let _ = write!(
            svg,
            "<text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            h - 6,
            (b'a' + f as u8) as char
        );
    }
    for r in 0..ranks {
        let (_, cy) = centre(0, r);
        let _ = write!(
            svg,
            "<text x=\"6\" y=\"{}\" font-size=\"12\">{}</text>",
            cy + 4,
            r + drawing.first_rank
        );
    }
    draw_marks(&mut svg, &drawing, beam, removed, &centre);
    svg.push_str("</svg>");
    svg
}

/// The beam through the centres of its squares, and a cross on each removed piece's square.
fn draw_marks(
    svg: &mut String,
    drawing: &Drawing,
    beam: &[String],
    removed: &[String],
    centre: &dyn Fn(i32, i32) -> (i32, i32),
) {
    let points: Vec<String> = beam
        .iter()
        .filter_map(|s| drawing.coords(s))
        .map(|(f, r)| {
            let (x, y) = centre(f, r);
            format!("{x},{y}")
        })
        .collect();
    if !points.is_empty() {
        let _ = write!(
            svg,
            "<polyline class=\"beam\" data-end=\"{}\" points=\"{}\" fill=\"none\" stroke=\"#e00\" stroke-width=\"4\" stroke-opacity=\"0.8\"/>",
            beam.last().map(String::as_str).unwrap_or(""),
            points.join(" ")
        );
    }
    for square in removed {
        if let Some((f, r)) = drawing.coords(square) {
            let (cx, cy) = centre(f, r);
            let _ = write!(
                svg,
                "<g class=\"removed\" data-square=\"{square}\"><circle cx=\"{cx}\" cy=\"{cy}\" r=\"21\" fill=\"none\" stroke=\"#e00\" stroke-width=\"3\"/><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e00\" stroke-width=\"3\"/></g>",
                cx - 12, cy - 12, cx + 12, cy + 12
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_beam_ends_on_the_square_it_names() {
        let svg = board_svg(
            crate::game::find_game("leiserchess").unwrap(),
            "ss7/8/8/8/8/8/8/7NN W",
            &["h0".into(), "h1".into()],
            &["h1".into()],
        );
        assert!(svg.contains("class=\"beam\" data-end=\"h1\""), "{svg}");
        assert!(
            svg.contains("class=\"removed\" data-square=\"h1\""),
            "{svg}"
        );
    }
}
