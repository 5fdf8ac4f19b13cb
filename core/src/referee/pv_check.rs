//! The lines an engine reports checked against the position it searched, as fastchess checks
//! them (match/match.cpp `checkParsedPvLine`, `verifyPvLines`, `pvWarningFormat`), for chess:
//! every move of every `info ... pv` line of a move legal and played in a game still on; with
//! the mate check (`-check-mate-pvs`), a `score mate N` line N moves long (2N − 1 plies when
//! winning, 2N when losing) and ending in checkmate; and the move played the first of the
//! last principal line. The warnings are fastchess's, word for word, since fishtest's worker
//! and engine authors' scripts read them; nothing here changes a game.
//!
//! A repetition is seen within the line and against the searched position only, not against
//! the game's earlier positions (fastchess's board carries the game's history).

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

/// Which checks a run makes (`--check-pvs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PvChecks {
    /// Every line legal, and the move played its last principal line's first (what fastchess
    /// always checks).
    Lines,
    /// And mate scores proved by their lines (fastchess's `-check-mate-pvs`).
    Mates,
}

impl PvChecks {
    pub fn parse(text: &str) -> Result<PvChecks, String> {
        match text {
            "lines" => Ok(PvChecks::Lines),
            "mates" => Ok(PvChecks::Mates),
            _ => Err(format!("'{text}': expected lines or mates")),
        }
    }
}

/// The warnings for one move: `lines`, the move's `info` lines that carry a `pv`, in order;
/// `played`, the move sent; `who`, the engine's name. Each warning is its first line
/// (`Warning; ...`) and the `Info; <line>` it was found in.
pub fn check(
    fen: &str,
    chess960: bool,
    lines: &[String],
    played: &str,
    who: &str,
    mates: bool,
) -> Vec<(String, String)> {
    let mode = match chess960 {
        true => CastlingMode::Chess960,
        false => CastlingMode::Standard,
    };
    let Some(start) = Fen::from_ascii(fen.as_bytes())
        .ok()
        .and_then(|f| f.into_position::<Chess>(mode).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut last_main: Option<(&String, Report)> = None;
    let mut replayed = Replayed::from(start);
    for line in lines {
        let report = Report::read(line);
        if report.pv.is_empty() {
            continue;
        }
        if let Some(warning) = replayed.line_warning(&report, mates) {
            let text = match warning {
                (what, Some(mv)) => format!("Warning; {what} - move {mv} from {who}"),
                (what, None) => format!("Warning; {what} - from {who}"),
            };
            out.push((text, format!("Info; {line}")));
        }
        if report.multipv.is_none_or(|n| n == 1) {
            last_main = Some((line, report));
        }
    }
    if let Some((line, report)) = last_main {
        if !played.is_empty() && !report.bound && report.pv[0] != played {
            out.push((
                format!(
                    "Warning; Bestmove does not match beginning of last PV - move {played} from \
                        {who}"
                ),
                format!("Info; {line}"),
            ));
        }
    }
    out
}

/// What of an `info` line the checks read.
#[derive(Default)]
struct Report<'a> {
    pv: Vec<&'a str>,
    mate: Option<i64>,
    bound: bool,
    multipv: Option<u32>,
}

/// A chess move in UCI's long notation: `e2e4`, `e7e8q`.
fn is_uci_move(word: &str) -> bool {
    let b = word.as_bytes();
    let square = |f: u8, r: u8| (b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r);
    matches!(b.len(), 4 | 5)
        && square(b[0], b[1])
        && square(b[2], b[3])
        && (b.len() == 4 || b"qrbn".contains(&b[4]))
}

impl<'a> Report<'a> {
    fn read(line: &'a str) -> Report<'a> {
        let mut report = Report::default();
        // Bytes, not chars: every report of every move is read.
        let mut words = line.split_ascii_whitespace().peekable();
        while let Some(word) = words.next() {
            match word {
                // The line is its moves; a field may follow them (`pv e2e4 score cp 0`), as
                // fastchess reads it (uci_engine.cpp `parseInfo`).
                "pv" => {
                    while let Some(mv) = words.next_if(|w| is_uci_move(w)) {
                        report.pv.push(mv);
                    }
                }
                "string" => break,
                "lowerbound" | "upperbound" => report.bound = true,
                "multipv" => report.multipv = words.next().and_then(|n| n.parse().ok()),
                "score" => {
                    if let (Some("mate"), Some(n)) = (words.next(), words.next()) {
                        report.mate = n.parse().ok();
                    }
                }
                _ => {}
            }
        }
        report
    }
}

/// The moves of the last line checked that were legal, with the position after each and the
/// hashes of the positions from the start: an engine's next report mostly repeats the last
/// one's first moves (a deeper search of the same line), which are then not played again.
struct Replayed<'a> {
    moves: Vec<&'a str>,
    /// `positions[i]`: after `moves[..i]`; `positions[0]` is the position searched.
    positions: Vec<Chess>,
    hashes: Vec<Zobrist64>,
}

impl<'a> Replayed<'a> {
    fn from(start: Chess) -> Replayed<'a> {
        let hash = start.zobrist_hash(EnPassantMode::Legal);
        Replayed {
            moves: Vec::new(),
            positions: vec![start],
            hashes: vec![hash],
        }
    }

    /// The first fault of one line: its words and, where it is about a move, the move. Each
    /// move's legality is tested alone (no move list), the hash kept up move by move, and the
    /// moves listed only where none was legal, to say why.
    fn line_warning(
        &mut self,
        report: &Report<'a>,
        mates: bool,
    ) -> Option<(&'static str, Option<&'a str>)> {
        let shared = self
            .moves
            .iter()
            .zip(&report.pv)
            .take_while(|(a, b)| a == b)
            .count();
        self.moves.truncate(shared);
        self.positions.truncate(shared + 1);
        self.hashes.truncate(shared + 1);
        for &mv in &report.pv[shared..] {
            let pos = self.positions.last().expect("the position searched");
            let hash = *self.hashes.last().expect("its hash");
            if self.hashes.iter().filter(|&&h| h == hash).count() >= 3 {
                return Some(("PV continues after threefold repetition", Some(mv)));
            }
            let legal = UciMove::from_ascii(mv.as_bytes())
                .ok()
                .and_then(|u| u.to_move(pos).ok());
            let Some(legal) = legal else {
                let why = if pos.is_checkmate() {
                    "PV continues after checkmate"
                } else if pos.is_stalemate() {
                    "PV continues after stalemate"
                } else if pos.halfmoves() >= 100 {
                    "PV continues after fifty-move rule"
                } else {
                    "Illegal PV move"
                };
                return Some((why, Some(mv)));
            };
            // A legal move: neither mate nor stalemate here, but the fifty moves may be over.
            if pos.halfmoves() >= 100 {
                return Some(("PV continues after fifty-move rule", Some(mv)));
            }
            let mut after = pos.clone();
            after.play_unchecked(legal);
            let hash = pos
                .update_zobrist_hash(hash, legal, EnPassantMode::Legal)
                .unwrap_or_else(|| after.zobrist_hash(EnPassantMode::Legal));
            self.moves.push(mv);
            self.positions.push(after);
            self.hashes.push(hash);
        }
        let pos = self.positions.last().expect("the position searched");
        let n = report.mate.filter(|_| mates && !report.bound)?;
        // An engine's number: any i64 it sends is read without overflowing.
        let plies = match n > 0 {
            true => n.saturating_mul(2) - 1,
            false => n.saturating_mul(-2),
        };
        let plies = usize::try_from(plies).unwrap_or(usize::MAX);
        if report.pv.len() < plies {
            return Some(("Incomplete mating PV", None));
        }
        if report.pv.len() > plies {
            return Some(("Too long mating PV", None));
        }
        if !pos.is_checkmate() {
            return Some(("Mating PV does not end with checkmate", None));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    /// White mates in one (Qh5xf7#) after 1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6.
    const MATE_IN_ONE: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";

    fn warnings(fen: &str, lines: &[&str], played: &str, mates: bool) -> Vec<String> {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        check(fen, false, &lines, played, "eng", mates)
            .into_iter()
            .map(|(w, _)| w)
            .collect()
    }

    #[test]
    fn a_legal_line_says_nothing_and_an_illegal_move_is_named() {
        let good = "info depth 3 score cp 20 pv e2e4 e7e5 g1f3";
        assert!(warnings(START, &[good], "e2e4", true).is_empty());
        let bad = "info depth 3 score cp 20 pv e2e4 e2e4";
        assert_eq!(
            warnings(START, &[bad], "e2e4", false),
            ["Warning; Illegal PV move - move e2e4 from eng"]
        );
        // Deeper reports repeating a line's first moves: each is still checked whole.
        let deeper = [
            "info depth 1 score cp 20 pv e2e4",
            "info depth 2 score cp 20 pv e2e4 e7e5",
            "info depth 3 score cp 20 pv e2e4 e7e5 e4e5",
            "info depth 4 score cp 20 pv d2d4 d7d5 c1f4",
            "info depth 5 score cp 20 pv e2e4 e7e5 g1f3 g1f3",
        ];
        assert_eq!(
            warnings(START, &deeper, "e2e4", false),
            [
                "Warning; Illegal PV move - move e4e5 from eng",
                "Warning; Illegal PV move - move g1f3 from eng",
            ]
        );
        // The move played is not the last principal line's first.
        assert_eq!(
            warnings(START, &[good], "d2d4", false),
            ["Warning; Bestmove does not match beginning of last PV - move d2d4 from eng"]
        );
    }

    #[test]
    fn a_line_past_a_repetition_or_fifty_moves_is_named() {
        // Knights out and back twice: the start stands a third time before 5. e4.
        let line = "info depth 9 score cp 0 pv g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 e2e4";
        assert_eq!(
            warnings(START, &[line], "g1f3", false),
            ["Warning; PV continues after threefold repetition - move e2e4 from eng"]
        );
        let fifty = "4k3/8/8/8/8/8/8/R3K3 w - - 100 80";
        assert_eq!(
            warnings(fifty, &["info depth 1 score cp 500 pv a1a7"], "a1a7", false),
            ["Warning; PV continues after fifty-move rule - move a1a7 from eng"]
        );
    }

    #[test]
    fn mating_lines_are_checked_only_when_asked() {
        let trailing = "info depth 1 pv e2e4 score cp 0";
        assert!(
            warnings(START, &[trailing], "e2e4", false).is_empty(),
            "the fields after the line are no moves"
        );
        let short = "info depth 5 score mate 2 pv h5f7";
        assert!(warnings(MATE_IN_ONE, &[short], "h5f7", false).is_empty());
        assert_eq!(
            warnings(MATE_IN_ONE, &[short], "h5f7", true),
            ["Warning; Incomplete mating PV - from eng"]
        );
        let right = "info depth 5 score mate 1 pv h5f7";
        assert!(warnings(MATE_IN_ONE, &[right], "h5f7", true).is_empty());
        let not_mate = "info depth 5 score mate 1 pv h5h7";
        assert_eq!(
            warnings(MATE_IN_ONE, &[not_mate], "h5h7", true),
            ["Warning; Mating PV does not end with checkmate - from eng"]
        );
        let long = "info depth 5 score mate 1 pv h5f7 e8e7";
        assert_eq!(
            warnings(MATE_IN_ONE, &[long], "h5f7", true),
            ["Warning; PV continues after checkmate - move e8e7 from eng"]
        );
        // Any number an engine sends is read, none overflows.
        for n in ["9223372036854775807", "-9223372036854775808", "0"] {
            let line = format!("info depth 5 score mate {n} pv h5f7");
            assert!(!warnings(MATE_IN_ONE, &[&line], "h5f7", true).is_empty());
        }
        // A bound is no proven mate.
        let bound = "info depth 5 score mate 2 lowerbound pv h5f7";
        assert!(warnings(MATE_IN_ONE, &[bound], "h5f7", true).is_empty());
    }
}
