//! `arbiter bench`: move-generation speed of every game, as a table (and optionally CSV).

use super::Failure;
use arbiter::game::{GameEntry, GAMES};
use std::io::Write;
use std::time::Instant;

/// (short depth, full depth) per game, chosen so a short run takes well under a second per game
/// and a full run a few seconds.
fn depths(id: &str) -> (u32, u32) {
    match id {
        "leiserchess" => (4, 5),
        "leiserchess2012" => (4, 5),
        "laserchess" => (4, 5),
        "leaperhouse" => (4, 5),
        "ultima" => (3, 4),
        _ => (3, 4),
    }
}

struct Row {
    game: &'static str,
    depth: u32,
    leaves: u64,
    seconds: f64,
}

fn measure(entry: &'static GameEntry, depth: u32) -> Result<Row, Failure> {
    let started = Instant::now();
    let leaves = entry
        .perft_at(None, depth)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    Ok(Row {
        game: entry.id,
        depth,
        leaves,
        seconds: started.elapsed().as_secs_f64(),
    })
}

pub fn run(full: bool, only: Option<&str>, csv: Option<&std::path::Path>) -> Result<(), Failure> {
    let selected: Vec<&'static GameEntry> = match only {
        Some(id) => vec![super::rules::game_entry(id)?],
        None => GAMES.iter().collect(),
    };
    println!(
        "{:<16} {:>5} {:>14} {:>9} {:>12}",
        "game", "depth", "leaves", "seconds", "Mleaves/s"
    );
    let mut rows = Vec::new();
    for entry in selected {
        let (short, deep) = depths(entry.id);
        let row = measure(entry, if full { deep } else { short })?;
        println!(
            "{:<16} {:>5} {:>14} {:>9.3} {:>12.1}",
            row.game,
            row.depth,
            row.leaves,
            row.seconds,
            row.leaves as f64 / row.seconds.max(1e-9) / 1e6
        );
        rows.push(row);
    }
    if let Some(path) = csv {
        let mut text = String::from("benchmark,game,depth,leaves,seconds,leaves_per_second\n");
        for r in &rows {
            text.push_str(&format!(
                "perft,{},{},{},{:.6},{:.0}\n",
                r.game,
                r.depth,
                r.leaves,
                r.seconds,
                r.leaves as f64 / r.seconds.max(1e-9)
            ));
        }
        let mut f = std::fs::File::create(path)
            .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
        f.write_all(text.as_bytes())
            .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}
