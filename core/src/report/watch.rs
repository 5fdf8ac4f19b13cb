//! What `arbiter watch` shows of a run folder, playing or finished, one machine's or split over
//! tasks: the games counted so far (read from the journals as they grow, each game once), the
//! report they make (the same page the run writes at its end, from the same code), and the
//! games in progress from the run's live files.

use super::board_svg::{board_svg, Marks};
use super::story::Story;
use super::write::{standings, RunInfo, Standing, Tables};
use crate::game::{find_game, GameEntry};
use crate::stats::fixed;
use crate::tournament::journal::{parse_line, Entry, JOURNAL_FILE};
use crate::tournament::ledger::Ledger;
use crate::tournament::live::{read_live, touch_watching, LiveGame};
use crate::tournament::spec::SPEC_FILE;
use crate::tournament::RunSpec;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// A run folder followed as it grows.
pub struct Watched {
    root: PathBuf,
    /// The folders that play: the run's own, or its tasks' (`shard-K-of-N`).
    folders: Vec<PathBuf>,
    spec: RunSpec,
    total: u64,
    /// How far each journal has been read (whole lines only).
    read_to: HashMap<PathBuf, u64>,
    counted: HashSet<u64>,
    ledger: Ledger,
    /// The games counted so far in the schedule's order, as the report lists them: a game
    /// that finished before an earlier one waits in `waiting` for it (a bounded number, so
    /// that a game never played cannot hold the rest back for ever).
    story: Story,
    next_in_order: u64,
    waiting: std::collections::BTreeMap<u64, Entry>,
    /// Bumped whenever a game is counted: the report changes only then.
    pub version: u64,
    /// The standings rows of `version` (the joint ratings behind them are worth computing once
    /// per counted game, not once per look).
    rows: Option<(u64, Vec<serde_json::Value>)>,
}

/// The run's task folders under `root`, or `root` itself when it plays alone.
fn playing_folders(root: &Path) -> Vec<PathBuf> {
    let mut shards: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("shard-"))
        .map(|e| e.path())
        .filter(|p| p.join(SPEC_FILE).is_file())
        .collect();
    shards.sort();
    if root.join(SPEC_FILE).is_file() {
        shards.insert(0, root.to_path_buf());
    }
    shards
}

impl Watched {
    /// Follows the run in `root`: a run's folder, or the folder of a split run's tasks.
    pub fn open(root: &Path) -> Result<Watched, String> {
        let folders = playing_folders(root);
        let Some(first) = folders.first() else {
            return Err(format!(
                "{} is not a run folder (no {SPEC_FILE}, no shard-* folders with one)",
                root.display()
            ));
        };
        let played = RunSpec::load(first)?;
        let spec = played.unsplit();
        let names: Vec<String> = spec.engines.iter().map(|e| e.name.clone()).collect();
        let total = spec.schedule_size();
        // The limits the report states are the run's: a share of the machine for the games it
        // plays at once, not for the watcher's (a split run's report is the merge's, which
        // plays nothing).
        if *first == root {
            crate::engine::sandbox::games_at_once(played.concurrency.min(total.max(1) as usize));
        }
        Ok(Watched {
            root: root.to_path_buf(),
            folders,
            story: Story::new(&names, total),
            ledger: Ledger::new(names, spec.sprt),
            spec,
            total,
            next_in_order: 0,
            waiting: Default::default(),
            read_to: HashMap::new(),
            counted: HashSet::new(),
            version: 0,
            rows: None,
        })
    }

    /// Tells the run (each task) that somebody watches, so that it writes its live files.
    pub fn touch(&self) {
        for folder in &self.folders {
            let _ = touch_watching(folder);
        }
    }

    /// Reads what the journals gained since the last call; returns whether a game was counted.
    pub fn refresh(&mut self) -> bool {
        // Tasks of a split run may start after the watcher.
        let found = playing_folders(&self.root);
        if !found.is_empty() {
            self.folders = found;
        }
        let before = self.version;
        for folder in self.folders.clone() {
            for entry in self.new_entries(&folder.join(JOURNAL_FILE)) {
                if self.counted.insert(entry.index) {
                    self.ledger.count(entry.index, &entry.record);
                    self.waiting.insert(entry.index, entry);
                    self.version += 1;
                }
            }
        }
        self.tell_in_order();
        self.version != before
    }

    /// Adds to the story the games now next in the schedule's order.
    fn tell_in_order(&mut self) {
        /// Games held back at most; past it the earliest goes on, its gap left behind.
        const MOST_WAITING: usize = 256;
        while let Some(&first) = self.waiting.keys().next() {
            if first != self.next_in_order && self.waiting.len() <= MOST_WAITING {
                break;
            }
            let Some(entry) = self.waiting.remove(&first) else {
                break;
            };
            self.next_in_order = entry.index + 1;
            self.story.add(&entry);
        }
    }

    /// Whether the run is over: every game counted, or its SPRT decided and no game left
    /// under way.
    fn over(&self) -> bool {
        self.counted.len() as u64 >= self.total
            || self.ledger.decision.is_some() && self.live_games().is_empty()
    }

    /// The story of every game counted in the schedule's order, read from the journals as the
    /// run's (or the merge's) report reads them at its end.
    fn final_story(&self) -> Story {
        let mut story = Story::new(&self.ledger.totals.names, self.ledger.totals.games);
        story.showcase = super::viewer::Showcase::new(self.spec.viewer_games);
        let journals: Vec<PathBuf> = self.folders.iter().map(|f| f.join(JOURNAL_FILE)).collect();
        if let [only] = journals.as_slice() {
            let _ = crate::tournament::journal::read_in_order(only, |e| story.add(&e));
            return story;
        }
        let mut entries = Vec::new();
        for journal in &journals {
            let _ = crate::tournament::journal::read_in_order(journal, |e| entries.push(e));
        }
        // Stable: of two entries for one game, the first task's comes first, as merge keeps.
        entries.sort_by_key(|e| e.index);
        entries.dedup_by_key(|e| e.index);
        for e in &entries {
            story.add(e);
        }
        story
    }

    fn new_entries(&mut self, path: &Path) -> Vec<Entry> {
        let from = self.read_to.get(path).copied().unwrap_or(0);
        let Ok(mut file) = std::fs::File::open(path) else {
            return Vec::new();
        };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut bytes).is_err() {
            return Vec::new();
        }
        // Whole lines only: the last one may still be being written.
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        self.read_to
            .insert(path.to_path_buf(), from + end as u64 + 1);
        String::from_utf8_lossy(&bytes[..end])
            .lines()
            .filter_map(parse_line)
            .map(|(entry, _)| entry)
            .collect()
    }

    fn info(&self) -> RunInfo<'_> {
        RunInfo::of_run(&self.spec, &self.ledger.llr, false, self.ledger.decision)
    }

    fn standings(&self) -> Vec<Standing> {
        let ratings = self.ledger.totals.ratings(&self.spec.rating_options()).ok();
        standings(&self.ledger.totals, &ratings)
    }

    /// The standings as the report's table writes each cell, for the current version.
    fn standing_rows(&mut self) -> Vec<serde_json::Value> {
        if let Some((version, rows)) = &self.rows {
            if *version == self.version {
                return rows.clone();
            }
        }
        let rows: Vec<serde_json::Value> = self
            .standings()
            .iter()
            .map(|s| {
                let mut row = vec![s.name.clone()];
                row.extend(s.cells());
                serde_json::json!(row)
            })
            .collect();
        self.rows = Some((self.version, rows.clone()));
        rows
    }

    /// The report of the games counted so far, as the run writes it at its end.
    pub fn report_html(&self) -> String {
        let totals = &self.ledger.totals;
        let tables = Tables::of(totals, &self.spec.rating_options());
        let mut story = match self.over() {
            true => self.final_story(),
            false => self.story.clone(),
        };
        story.finish();
        super::html::html(totals, &self.info(), &tables, &story)
    }

    /// The games in progress in every task's folder, those already counted left out.
    pub fn live_games(&self) -> Vec<LiveGame> {
        let mut games: Vec<LiveGame> = self
            .folders
            .iter()
            .flat_map(|f| read_live(f))
            .filter(|g| !self.counted.contains(&g.index))
            .collect();
        games.sort_by_key(|g| g.index);
        games.dedup_by_key(|g| g.index);
        games
    }

    /// Everything the live page shows, as JSON.
    pub fn state_json(&mut self) -> String {
        let rows = self.standing_rows();
        let entry = find_game(&self.spec.game);
        let live: Vec<serde_json::Value> = self
            .live_games()
            .iter()
            .map(|g| live_json(g, entry))
            .collect();
        let done = self.counted.len() as u64;
        let status = if self.ledger.decision.is_some() && live.is_empty() {
            "SPRT decided"
        } else if done >= self.total {
            "finished"
        } else if live.is_empty() {
            "no game in progress"
        } else {
            "playing"
        };
        serde_json::json!({
            "event": self.spec.event(),
            "game": self.spec.game,
            "done": done,
            "total": self.total,
            "status": status,
            "llr": self.ledger.llr.last().map(|v| fixed(*v, 3)),
            "report": self.version,
            "standings": rows,
            "live": live,
        })
        .to_string()
    }
}

/// A game in progress for the page: who, the ply, the last move, the clocks, and the board
/// after it (drawn as `arbiter show --svg` draws it, with the last move's beam).
fn live_json(g: &LiveGame, entry: Option<&'static GameEntry>) -> serde_json::Value {
    let board = entry.and_then(|entry| {
        let mut game = entry.new_game(g.start_fen.as_deref()).ok()?;
        let (before, last) = g.moves.split_at(g.moves.len().saturating_sub(1));
        for m in before {
            game.play(m).ok()?;
        }
        let marks = match last.first() {
            Some(m) => Marks::play(game.as_mut(), m).ok()?,
            None => Marks::default(),
        };
        Some(board_svg(entry, &game.fen(), &marks))
    });
    // The game's own names for its sides (Blue and Red in laser chess), for the clocks.
    let sides = entry.map_or(["White", "Black"], |e| {
        [e.drawing.sides[0].name, e.drawing.sides[1].name]
    });
    serde_json::json!({
        "game": g.index + 1,
        "sides": sides,
        "round": g.round,
        "white": g.white,
        "black": g.black,
        "ply": g.moves.len(),
        "book": g.book_plies,
        "last": g.moves.last(),
        "clocks": g.clocks_ms,
        "age_ms": crate::tournament::live::now_ms().saturating_sub(g.written_ms),
        "svg": board,
    })
}
