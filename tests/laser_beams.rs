//! The beam a viewer draws: for every ply of random games of the three laser games, the path
//! starts at the mover's firing piece, steps square by square in straight lines, and ends on the
//! square of the piece the referee removed, when it removed one.

use crate::common;

use arbiter::game::find_game;
use common::{arbiter_in, bundled_engine, scratch, stderr};

fn square(name: &str) -> (i32, i32) {
    let b = name.as_bytes();
    (i32::from(b[0] - b'a'), name[1..].parse().unwrap())
}

#[test]
fn every_beam_is_a_walk_from_the_firing_piece_to_what_it_removed() {
    let mut zaps = 0;
    for id in ["leiserchess", "leiserchess2012", "laserchess"] {
        let entry = find_game(id).unwrap();
        let mut seed = 0x9e37_79b9_u64;
        for _ in 0..20 {
            let mut game = entry.new_game(None).unwrap();
            for _ in 0..120 {
                let moves = game.legal_moves();
                if moves.is_empty() || game.status().is_over() {
                    break;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mv = &moves[(seed % moves.len() as u64) as usize];
                let beam = game.beam_of(mv);
                let report = game.play(mv).unwrap();
                // A piece facing the edge fires straight off the board: its own square only.
                assert!(!beam.is_empty(), "{id}: every move fires a beam");
                for pair in beam.windows(2) {
                    let (a, b) = (square(&pair[0]), square(&pair[1]));
                    let step = (a.0 - b.0).abs() + (a.1 - b.1).abs();
                    assert_eq!(step, 1, "{id}: {beam:?} jumps at {pair:?}");
                }
                let removed: Vec<String> = report
                    .removed
                    .iter()
                    .map(|r| r.square.to_string())
                    .collect();
                if let Some(square) = removed.first() {
                    zaps += 1;
                    assert_eq!(
                        beam.last(),
                        Some(square),
                        "{id}: the beam ends where the referee removed a piece"
                    );
                }
            }
        }
    }
    assert!(zaps > 20, "random games zap pieces: {zaps}");
}

#[test]
fn show_draws_the_position_with_its_beam() {
    let dir = scratch("svg", "show");
    let svg = dir.join("p.svg");
    let out = arbiter_in(&dir, &["show", "laserchess", "--svg", "p.svg", "j1-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    // Blue's Laser on j1, aimed west, fires along the first rank into the side of its own
    // Defender on f1 (its shield faces north): the Defender is removed.
    assert!(text.starts_with("<svg"), "{text}");
    assert!(text.contains("class=\"beam\" data-end=\"f1\""), "{text}");
    assert!(
        text.contains("class=\"removed\" data-square=\"f1\""),
        "{text}"
    );
    assert_eq!(
        text.matches("class=\"piece\"").count(),
        25,
        "26 pieces, one zapped"
    );
}

#[test]
fn the_report_shows_as_many_games_as_asked() {
    let dir = scratch("viewer", "cap");
    let engine = format!("cmd={}", bundled_engine());
    for (cap, expected) in [("1", Some("1 of 2 games shown")), ("0", None)] {
        let out = arbiter_in(
            &dir,
            &[
                "match",
                "--engine",
                &engine,
                "name=a",
                "depth=1",
                "--engine",
                &engine,
                "name=b",
                "depth=1",
                "--viewer-games",
                cap,
                "--out",
                cap,
                "--quiet",
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let html = std::fs::read_to_string(dir.join(cap).join("report.html")).unwrap();
        match expected {
            Some(text) => assert!(html.contains(text), "--viewer-games {cap}"),
            None => assert!(
                !html.contains("id=\"viewer\""),
                "--viewer-games 0 shows none"
            ),
        }
    }
}
