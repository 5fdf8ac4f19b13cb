//! `perft`, `replay`, `show` and `games`: the rules engine at the command line.

use super::Failure;
use arbiter::game::{find_game, game_ids, games, AnyGame, Drawing, GameEntry, MoveError, Status};
use arbiter::report::board_svg::{board_svg, Marks};
use std::io::Write;
use std::time::Instant;

pub fn game_entry(id: &str) -> Result<&'static GameEntry, Failure> {
    find_game(id).ok_or_else(|| {
        Failure::bad_input(format!(
            "unknown game '{id}' (known: {})",
            game_ids().join(", ")
        ))
    })
}

fn new_game(entry: &GameEntry, fen: Option<&str>) -> Result<Box<dyn AnyGame>, Failure> {
    entry
        .new_game(fen)
        .map_err(|e| Failure::bad_input(e.to_string()))
}

/// The game and starting FEN from `--fen` / `--setup` (a setup must be one the game names).
pub fn start(
    id: &str,
    fen: Option<String>,
    setup: Option<String>,
) -> Result<(&'static GameEntry, Option<String>), Failure> {
    let entry = game_entry(id)?;
    let Some(name) = setup else {
        return Ok((entry, fen));
    };
    match entry
        .setups
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&name))
    {
        Some((_, setup)) => Ok((entry, Some(setup.to_string()))),
        None if entry.setups.is_empty() => Err(Failure::bad_input(format!(
            "{} has no named setups; use --fen",
            entry.id
        ))),
        None => Err(Failure::bad_input(format!(
            "unknown setup '{name}' for {} (known: {})",
            entry.id,
            entry
                .setups
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

pub fn perft(
    entry: &'static GameEntry,
    depth: u32,
    fen: Option<&str>,
    divide: bool,
) -> Result<(), Failure> {
    if depth == 0 {
        return Err(Failure::bad_input("depth must be at least 1"));
    }
    let mut out = std::io::stdout().lock();
    if divide {
        let started = Instant::now();
        let rows = entry
            .divide(fen, depth)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        let total: u64 = rows.iter().map(|(_, n)| n).sum();
        for (mv, n) in &rows {
            let _ = writeln!(out, "{mv} {n}");
        }
        let _ = writeln!(out, "total {total}");
        eprintln!(
            "{} moves, {:.3} s",
            rows.len(),
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    // Validate the FEN once before the loop so a bad one fails before any output.
    new_game(entry, fen)?;
    for d in 1..=depth {
        let started = Instant::now();
        let counts = entry
            .perft_at(fen, d)
            .map_err(|e| Failure::bad_input(e.to_string()))?;
        let secs = started.elapsed().as_secs_f64();
        let _ = writeln!(out, "perft {d} {counts}");
        let _ = out.flush();
        eprintln!(
            "depth {d}: {:.3} s, {:.1} M leaves/s",
            secs,
            counts as f64 / secs.max(1e-9) / 1e6
        );
    }
    Ok(())
}

/// Splits arguments into move tokens, dropping move numbers such as `12.` or `12...`.
fn move_tokens(args: &[String]) -> Vec<&str> {
    args.iter()
        .flat_map(|a| a.split_whitespace())
        .filter(|t| {
            !(t.ends_with('.') && t.trim_end_matches('.').chars().all(|c| c.is_ascii_digit()))
        })
        .collect()
}

/// Plays the moves, calling `each` after every ply; a bad move becomes a failure naming its ply.
fn play_all(
    game: &mut dyn AnyGame,
    moves: &[String],
    mut each: impl FnMut(usize, &arbiter::game::PlyReport),
) -> Result<(), Failure> {
    for text in move_tokens(moves) {
        let ply = game.ply_count() + 1;
        match game.play(text) {
            Ok(report) => each(ply, &report),
            Err(e @ MoveError::Malformed { .. }) => {
                return Err(Failure::bad_input(format!("ply {ply}: {e}")))
            }
            Err(e @ MoveError::Illegal { .. }) => {
                return Err(Failure::illegal(format!("ply {ply}: {e}")))
            }
        }
    }
    Ok(())
}

fn result_line(status: Status) -> String {
    match status {
        Status::Ongoing => "result * ongoing".to_string(),
        Status::Over(outcome, why) => format!("result {outcome} {why}"),
    }
}

pub fn replay(entry: &GameEntry, fen: Option<&str>, moves: &[String]) -> Result<(), Failure> {
    let mut game = new_game(entry, fen)?;
    let mut out = std::io::stdout().lock();
    play_all(game.as_mut(), moves, |ply, report| {
        let mut line = format!("ply {ply} {}", report.mv);
        for r in report.removed.iter() {
            line.push_str(&format!(" removed {r}"));
        }
        let _ = writeln!(out, "{line}");
    })?;
    let _ = writeln!(out, "fen {}", game.fen());
    let _ = writeln!(out, "{}", result_line(game.status()));
    Ok(())
}

pub fn show(
    entry: &GameEntry,
    fen: Option<&str>,
    moves: &[String],
    svg: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let mut game = new_game(entry, fen)?;
    let tokens: Vec<String> = move_tokens(moves).iter().map(|t| t.to_string()).collect();
    let (before, last) = tokens.split_at(tokens.len().saturating_sub(1));
    play_all(game.as_mut(), before, |_, _| {})?;
    // Not Marks::play: an illegal last move fails here as any other move does.
    let mut marks = Marks {
        moved: last
            .first()
            .map_or_else(Vec::new, |t| Drawing::move_squares(t)),
        beam: last.first().map(|t| game.beam_of(t)).unwrap_or_default(),
        removed: Vec::new(),
    };
    play_all(game.as_mut(), last, |_, report| {
        marks.removed = (report.removed.iter())
            .map(|r| r.square.to_string())
            .collect();
    })?;
    if let Some(path) = svg {
        let picture = board_svg(entry, &game.fen(), &marks);
        std::fs::write(path, picture)
            .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
    }
    say_inline!("{}", game.render());
    say!("fen {}", game.fen());
    say!("{}", result_line(game.status()));
    Ok(())
}

pub fn list_games() -> Result<(), Failure> {
    for g in games() {
        say!("{:<16} {}", g.id, g.description);
        say!("{:<16} start: {}", "", g.start_fen);
        for (name, setup) in g.setups {
            say!("{:<16} setup {name}: {setup}", "");
        }
    }
    Ok(())
}
