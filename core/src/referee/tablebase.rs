//! Ending chess games by Syzygy tablebases, as fastchess's `-tb` and cutechess-cli's `-tb` do:
//! once a position is in the tables, its result is known, and playing it out only costs time
//! (and, between engines that do not know the tables, gives results the position does not
//! hold). Probed by shakmaty-syzygy, from the WDL files (`*.rtbw`).
//!
//! When a position is probed follows fastchess (matchmaking/syzygy.cpp `canProbeSyzgyWdl`,
//! match/match.hpp `TbAdjudicationTracker`): right after a capture or a pawn move (the
//! half-move clock at 0), with no castling rights, with at most as many pieces as the largest
//! table given holds and, where `pieces` is set, at most that many. A win the fifty-move rule
//! would frustrate ("cursed") is a draw unless `ignore50`, as there.

use crate::game::Outcome;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Position as _};
use shakmaty_syzygy::{Tablebase, Wdl};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Which results end a game (fastchess's `-tbadjudicate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TbResults {
    #[default]
    Both,
    WinLoss,
    Draw,
}

impl TbResults {
    /// fastchess's words: `WIN_LOSS`, `DRAW`, `BOTH` (cli.cpp `parseTbAdjudicate`), or ours.
    pub fn parse(text: &str) -> Result<TbResults, String> {
        match text.to_ascii_lowercase().replace('_', "-").as_str() {
            "both" => Ok(TbResults::Both),
            "win-loss" => Ok(TbResults::WinLoss),
            "draw" => Ok(TbResults::Draw),
            _ => Err(format!(
                "'{text}': expected both, win-loss or draw (fastchess: BOTH, WIN_LOSS, DRAW)"
            )),
        }
    }
}

/// The run's tablebase adjudication.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TbRule {
    /// The folders holding the tables.
    pub paths: Vec<PathBuf>,
    /// At most this many pieces on the board (kings included); 0: as many as the tables hold.
    #[serde(default)]
    pub pieces: u32,
    #[serde(default)]
    pub results: TbResults,
    /// A cursed win is a win, a blessed loss a loss.
    #[serde(default)]
    pub ignore50: bool,
}

impl TbRule {
    /// `path=DIR[;DIR...] [pieces=N] [results=both|win-loss|draw] [ignore50=true]`; a path may
    /// hold spaces (the words up to the next key are its).
    pub fn parse(text: &str) -> Result<TbRule, String> {
        let mut rule = TbRule {
            paths: Vec::new(),
            pieces: 0,
            results: TbResults::Both,
            ignore50: false,
        };
        let mut path: Option<String> = None;
        let mut in_path = false;
        for word in text.split_whitespace() {
            let (key, value) = word.split_once('=').unwrap_or(("", word));
            match key {
                "path" => {
                    path = Some(value.to_string());
                    in_path = true;
                    continue;
                }
                "pieces" => {
                    rule.pieces = value
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (3..=7).contains(n))
                        .ok_or_else(|| format!("pieces={value}: a number of pieces from 3 to 7"))?
                }
                "results" => rule.results = TbResults::parse(value)?,
                "ignore50" => {
                    rule.ignore50 = match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("ignore50={value}: expected true or false")),
                    }
                }
                _ if in_path => {
                    let p = path.get_or_insert_with(String::new);
                    p.push(' ');
                    p.push_str(word);
                    continue;
                }
                _ => {
                    return Err(format!(
                        "'{word}': expected path=, pieces=, results= or ignore50="
                    ))
                }
            }
            in_path = false;
        }
        rule.paths = split_paths(&path.ok_or("missing path= (the tables' folder)")?);
        if rule.paths.is_empty() {
            return Err("path= names no folder".into());
        }
        Ok(rule)
    }
}

/// Paths written as the tools take them: separated by `;` (both tools) or `:` (a Unix path
/// list).
pub fn split_paths(text: &str) -> Vec<PathBuf> {
    text.split([';', ':'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Tables read, by the folders they came from: each set is opened once for the whole run.
type Opened = Mutex<Vec<(Vec<PathBuf>, Arc<Tables>)>>;

pub struct Tables {
    tables: Tablebase<Chess>,
    /// Pieces in the largest table found.
    largest: usize,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tables(up to {} pieces)", self.largest)
    }
}

impl Tables {
    /// The tables in `paths`, opened once per process; a folder that cannot be read, or that
    /// holds no table, is refused by name (a typo would otherwise adjudicate nothing, silently).
    pub fn shared(paths: &[PathBuf]) -> Result<Arc<Tables>, String> {
        static OPENED: OnceLock<Opened> = OnceLock::new();
        let mut opened = OPENED
            .get_or_init(|| Mutex::new(Vec::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, tables)) = opened.iter().find(|(p, _)| p == paths) {
            return Ok(tables.clone());
        }
        let tables = Arc::new(Tables::open(paths)?);
        opened.push((paths.to_vec(), tables.clone()));
        Ok(tables)
    }

    fn open(paths: &[PathBuf]) -> Result<Tables, String> {
        if paths.is_empty() {
            return Err("no tablebase folder given".into());
        }
        let mut tables = Tablebase::new();
        for path in paths {
            let found = tables
                .add_directory(path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if found == 0 || !holds_wdl(path) {
                return Err(format!(
                    "{}: no Syzygy WDL table (*.rtbw) in it",
                    path.display()
                ));
            }
        }
        let largest = tables.max_pieces();
        Ok(Tables { tables, largest })
    }

    /// The game's end by the tables after a move, for the chess position `fen`: the outcome and
    /// its words (fastchess's), or `None` where the position is not probed or the tables do
    /// not hold it.
    pub fn judge(&self, rule: &TbRule, fen: &str, chess960: bool) -> Option<(Outcome, String)> {
        let mut fields = fen.split_whitespace();
        let board = fields.next()?;
        let castling = fields.nth(1)?;
        let halfmove = fields.nth(1).unwrap_or("0");
        let pieces = board.bytes().filter(u8::is_ascii_alphabetic).count();
        if halfmove != "0"
            || castling != "-"
            || pieces > self.largest
            || (rule.pieces != 0 && pieces > rule.pieces as usize)
        {
            return None;
        }
        let mode = match chess960 {
            true => CastlingMode::Chess960,
            false => CastlingMode::Standard,
        };
        let pos: Chess = Fen::from_ascii(fen.as_bytes())
            .ok()?
            .into_position(mode)
            .ok()?;
        let wdl = self.tables.probe_wdl_after_zeroing(&pos).ok()?;
        let mover = pos.turn();
        let wins = |c: Color| match c {
            Color::White => Outcome::WhiteWins,
            Color::Black => Outcome::BlackWins,
        };
        let decisive = |winner: Color| {
            let name = match winner {
                Color::White => "White",
                Color::Black => "Black",
            };
            Some((
                wins(winner),
                format!("{name} wins by adjudication: SyzygyTB"),
            ))
        };
        let draw = || Some((Outcome::Draw, "Draw by adjudication: SyzygyTB".to_string()));
        let takes_decisive = rule.results != TbResults::Draw;
        let takes_draw = rule.results != TbResults::WinLoss;
        match wdl {
            Wdl::Win if takes_decisive => decisive(mover),
            Wdl::Loss if takes_decisive => decisive(mover.other()),
            Wdl::CursedWin if rule.ignore50 && takes_decisive => decisive(mover),
            Wdl::BlessedLoss if rule.ignore50 && takes_decisive => decisive(mover.other()),
            Wdl::CursedWin | Wdl::BlessedLoss if !rule.ignore50 && takes_draw => draw(),
            Wdl::Draw if takes_draw => draw(),
            _ => None,
        }
    }
}

fn holds_wdl(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".rtbw"))
    })
}

/// The rule with its tables opened, as the referee applies it.
#[derive(Clone, Debug)]
pub struct TbAdjudication {
    pub rule: TbRule,
    pub tables: Arc<Tables>,
}

impl PartialEq for TbAdjudication {
    fn eq(&self, other: &TbAdjudication) -> bool {
        self.rule == other.rule
    }
}

impl Eq for TbAdjudication {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables kept for the tests (tests/syzygy: every 3-piece ending and KQvKR).
    fn tables() -> Arc<Tables> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/syzygy");
        Tables::shared(&[dir]).unwrap()
    }

    fn rule(text: &str) -> TbRule {
        TbRule::parse(&format!("path=x {text}")).unwrap()
    }

    #[test]
    fn a_won_a_drawn_and_an_unprobed_position_are_told_apart() {
        let t = tables();
        assert_eq!(t.largest, 4);
        // KRvK, Black to move: lost whatever Black does.
        let (outcome, words) = t
            .judge(&rule(""), "4k3/8/8/8/8/8/4K3/R7 b - - 0 1", false)
            .unwrap();
        assert_eq!(outcome, Outcome::WhiteWins);
        assert_eq!(words, "White wins by adjudication: SyzygyTB");
        // A rook's pawn with the defending king in its corner: drawn.
        let (outcome, words) = t
            .judge(&rule(""), "k7/8/8/8/8/8/P3K3/8 b - - 0 1", false)
            .unwrap();
        assert_eq!(outcome, Outcome::Draw);
        assert_eq!(words, "Draw by adjudication: SyzygyTB");
        // Not right after a capture or pawn move, or with castling rights: not probed, as
        // fastchess does not.
        assert!(t
            .judge(&rule(""), "4k3/8/8/8/8/8/4K3/R7 b - - 3 40", false)
            .is_none());
        assert!(t
            .judge(&rule(""), "4k3/8/8/8/8/8/8/R3K3 b Q - 0 1", false)
            .is_none());
        // KQvKR is in the tables, but not under pieces=3; five pieces are in none.
        let kqkr = "4k3/8/8/8/8/8/1r6/3QK3 b - - 0 1";
        assert!(t.judge(&rule(""), kqkr, false).is_some());
        assert!(t.judge(&rule("pieces=3"), kqkr, false).is_none());
        assert!(t
            .judge(&rule(""), "4k3/8/8/8/8/8/1rn5/3QK3 b - - 0 1", false)
            .is_none());
    }

    #[test]
    fn the_results_asked_for_are_the_only_ones_given() {
        let t = tables();
        let won = "4k3/8/8/8/8/8/4K3/R7 b - - 0 1";
        let drawn = "k7/8/8/8/8/8/P3K3/8 b - - 0 1";
        assert!(t.judge(&rule("results=draw"), won, false).is_none());
        assert!(t.judge(&rule("results=draw"), drawn, false).is_some());
        assert!(t.judge(&rule("results=WIN_LOSS"), won, false).is_some());
        assert!(t.judge(&rule("results=win-loss"), drawn, false).is_none());
    }

    #[test]
    fn rules_read_as_written_and_bad_ones_are_refused() {
        let r =
            TbRule::parse("path=/a b/syzygy;/c pieces=5 results=win-loss ignore50=true").unwrap();
        assert_eq!(r.paths, [PathBuf::from("/a b/syzygy"), PathBuf::from("/c")]);
        assert_eq!(
            (r.pieces, r.results, r.ignore50),
            (5, TbResults::WinLoss, true)
        );
        assert!(TbRule::parse("pieces=5").unwrap_err().contains("path="));
        assert!(TbRule::parse("path=/a pieces=9")
            .unwrap_err()
            .contains("3 to 7"));
        assert!(TbRule::parse("path=/a results=all").is_err());
        let missing = Tables::shared(&[PathBuf::from("/nonexistent/syzygy")]).unwrap_err();
        assert!(missing.contains("/nonexistent/syzygy"), "{missing}");
    }
}
