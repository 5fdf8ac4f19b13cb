//! What engines say, parsed: UCI, Fairy-Stockfish's variant confirmation, and the MIT
//! Leiserchess player's `info` layout (`time (microsec)`, score and pv on a separate line).

use super::options::OfferedOption;

/// An engine's evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Score {
    Centipawns(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

/// `+1.23` pawns, or `+M3` / `-M2` for a mate: as PGN comments and reports show it.
impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.write_to(f)
    }
}

impl Score {
    /// Writes the score as `Display` shows it, digits by `itoa` rather than the formatter: the
    /// PGN writes one per move, straight into its text.
    pub fn write_to(self, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        let mut digits = itoa::Buffer::new();
        match self {
            Score::Centipawns(cp) => {
                let abs = cp.unsigned_abs();
                out.write_str(if cp < 0 { "-" } else { "+" })?;
                out.write_str(digits.format(abs / 100))?;
                out.write_str(if abs % 100 < 10 { ".0" } else { "." })?;
                out.write_str(digits.format(abs % 100))
            }
            Score::Mate(n) => {
                out.write_str(if n >= 0 { "+M" } else { "-M" })?;
                out.write_str(digits.format(n.unsigned_abs()))
            }
        }
    }

    /// Centipawns, with mates as large values, for adjudication.
    pub fn as_cp(self) -> i32 {
        match self {
            Score::Centipawns(cp) => cp,
            Score::Mate(n) if n >= 0 => 100_000 - n,
            Score::Mate(n) => -100_000 - n,
        }
    }
}

/// The fields of an `info` line that the referee uses; missing fields are `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    pub depth: Option<u32>,
    pub score: Option<Score>,
    pub nodes: Option<u64>,
    /// Selective depth (UCI's `seldepth`).
    pub seldepth: Option<u32>,
    /// Engine-reported search time in microseconds (UCI sends milliseconds; the MIT player
    /// microseconds, which it says).
    pub time_us: Option<u64>,
    /// `info string ...` text.
    pub string: Option<String>,
    /// The search's output lines that matched the run's `--pgn-line` patterns, the last one
    /// for each pattern, in the patterns' order; set once the search has ended.
    pub lines: Vec<String>,
    /// The search's `info ... pv` lines, in order, where the run checks them (`--check-pvs`).
    pub pv_lines: Vec<String>,
}

/// One line from an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineLine {
    UciOk,
    ReadyOk,
    IdName(String),
    IdAuthor(String),
    /// `option name <name> type <type> ...`.
    Option(OfferedOption),
    Info(Info),
    /// `bestmove <move>`; `None` for `bestmove (none)` or a bare `bestmove`.
    BestMove(Option<String>),
    /// CECP's `resign`: the engine concedes the game.
    Resign,
    Other(String),
}

/// A number from one word of a line, which may hold any bytes, read as `str::parse` reads it:
/// an optional sign (`-` only where the type has one), then ASCII digits, and nothing for
/// anything else or a value out of range. Digit by digit: every ply reads four of them.
fn number<T: TryFrom<i128>>(word: Option<&[u8]>) -> Option<T> {
    let (negative, value) = signed_digits(word?)?;
    // `-0` is not a number of an unsigned type for `parse`, though it is zero.
    if negative && T::try_from(-1).is_err() {
        return None;
    }
    let value = i128::from(value);
    T::try_from(if negative { -value } else { value }).ok()
}

/// A word's sign and the value of its digits (None past `u64`). Kept out of line: the referee
/// runs it every ply with caches its engine emptied, where one copy costs less than one per
/// type and call.
#[inline(never)]
fn signed_digits(word: &[u8]) -> Option<(bool, u64)> {
    let (negative, digits) = match word.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, word),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    for &byte in digits {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some((negative, value))
}

/// The words of a line as bytes, split at ASCII whitespace as `str::split_ascii_whitespace`
/// splits: a search report is read without checking or decoding its text.
fn byte_words(line: &[u8]) -> ByteWords<'_> {
    ByteWords { rest: line }
}

struct ByteWords<'a> {
    rest: &'a [u8],
}

/// `u8::is_ascii_whitespace` as one comparison and one bit test: a report's every byte is
/// looked at.
fn is_space(byte: u8) -> bool {
    const SPACES: u64 = 1 << b'\t' | 1 << b'\n' | 1 << 0x0c | 1 << b'\r' | 1 << b' ';
    byte <= b' ' && SPACES & (1 << byte) != 0
}

impl<'a> Iterator for ByteWords<'a> {
    type Item = &'a [u8];

    /// Out of line, as `signed_digits`: a report's reader calls it from many places.
    #[inline(never)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let bytes = self.rest;
        let mut at = 0;
        while at < bytes.len() && is_space(bytes[at]) {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && !is_space(bytes[at]) {
            at += 1;
        }
        self.rest = &bytes[at..];
        (at > start).then(|| &bytes[start..at])
    }
}

/// Reads the fields after `info`. Called for every search report an engine sends, so it walks
/// the words without collecting them.
fn parse_info<'a>(words: impl Iterator<Item = &'a str>) -> Info {
    let mut words = words.map(str::as_bytes);
    let (mut info, string) = search_fields(&mut words);
    if string {
        let mut text = String::new();
        for word in words {
            if !text.is_empty() {
                text.push(' ');
            }
            // Cut from a `str` at ASCII whitespace: whole characters.
            text.push_str(std::str::from_utf8(word).unwrap_or_default());
        }
        info.string = Some(text);
    }
    info
}

/// The search fields of an `info` line's words, and whether a `string` field follows (its words
/// are left in `words`).
fn search_fields<'a>(words: &mut impl Iterator<Item = &'a [u8]>) -> (Info, bool) {
    let mut info = Info::default();
    let mut pending: Option<&[u8]> = None;
    while let Some(word) = pending.take().or_else(|| words.next()) {
        match word {
            b"depth" => info.depth = number(words.next()),
            b"nodes" => info.nodes = number(words.next()),
            b"seldepth" => info.seldepth = number(words.next()),
            b"time" => match words.next() {
                Some(b"(microsec)") => info.time_us = number(words.next()),
                ms => info.time_us = number::<u64>(ms).map(|ms| ms.saturating_mul(1000)),
            },
            b"score" => {
                let kind = words.next();
                info.score = match (kind, number::<i32>(words.next())) {
                    (Some(b"cp"), Some(v)) => Some(Score::Centipawns(v)),
                    (Some(b"mate"), Some(v)) => Some(Score::Mate(v)),
                    _ => None,
                };
            }
            // The principal variation is not used by the referee: its moves are passed over,
            // to the field that may follow them (`pv e2e4 score cp 0`).
            b"pv" => {
                pending = words.by_ref().find(|w| {
                    matches!(
                        *w,
                        b"score" | b"depth" | b"nodes" | b"seldepth" | b"time" | b"string"
                    )
                });
            }
            b"string" => return (info, true),
            _ => {}
        }
    }
    (info, false)
}

/// An `info` line's search fields, without its `string` text, and whether it has one (such a
/// line, a variant's confirmation, is handed out rather than folded); `None` for any other line.
/// Stockfish starts every search with an `info string`: read this way, it costs no allocation.
/// The line is read as bytes, as it came: its words are compared and its numbers read as they
/// lie, as its text (invalid UTF-8 replaced) would give them.
pub fn search_report(line: &[u8]) -> Option<(Info, bool)> {
    let mut words = byte_words(line);
    (words.next() == Some(b"info")).then(|| search_fields(&mut words))
}

/// Merges an `info` line into what is known of the current search (the MIT player splits its
/// reports over two lines); the latest value of each field wins.
pub fn merge_info(into: &mut Info, from: Info) {
    if from.depth.is_some() {
        into.depth = from.depth;
    }
    if from.score.is_some() {
        into.score = from.score;
    }
    if from.nodes.is_some() {
        into.nodes = from.nodes;
    }
    if from.seldepth.is_some() {
        into.seldepth = from.seldepth;
    }
    if from.time_us.is_some() {
        into.time_us = from.time_us;
    }
}

/// Whether `info` has a value for every field `merge_info` keeps: reports older than the ones
/// it came from can add nothing to it. The selective depth is left out: an engine that never
/// sends one would have every report of a search read back for it on every move; those that
/// send it send it with the others.
pub fn has_every_kept_field(info: &Info) -> bool {
    info.depth.is_some() && info.score.is_some() && info.nodes.is_some() && info.time_us.is_some()
}

/// Parses one line it may keep: a `bestmove` line's move is cut out of the line's own text
/// rather than copied (the referee reads one every ply); anything else as [`parse_line`].
pub fn parse_owned_line(mut line: String) -> EngineLine {
    let mut words = line.split_ascii_whitespace();
    if words.next() != Some("bestmove") {
        return parse_line(&line);
    }
    let Some(mv) = words.next().filter(|m| *m != "(none)") else {
        return EngineLine::BestMove(None);
    };
    // The word's place in the line (a subslice of it).
    let start = mv.as_ptr() as usize - line.as_ptr() as usize;
    let end = start + mv.len();
    line.truncate(end);
    line.drain(..start);
    EngineLine::BestMove(Some(line))
}

/// Parses one line. Never fails: anything unrecognised is `Other`.
pub fn parse_line(line: &str) -> EngineLine {
    let mut words = line.split_ascii_whitespace();
    match words.next() {
        Some("info") => return EngineLine::Info(parse_info(words)),
        Some("bestmove") => {
            return EngineLine::BestMove(words.next().filter(|m| *m != "(none)").map(String::from))
        }
        _ => {}
    }
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    match words.as_slice() {
        ["uciok", ..] => EngineLine::UciOk,
        ["readyok", ..] => EngineLine::ReadyOk,
        ["id", "name", rest @ ..] => EngineLine::IdName(rest.join(" ")),
        ["id", "author", rest @ ..] => EngineLine::IdAuthor(rest.join(" ")),
        ["option", "name", rest @ ..] => EngineLine::Option(OfferedOption::from_uci_words(rest)),
        _ => EngineLine::Other(line.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::options::OptionKind;

    /// Found by the fuzzer (fuzz/corpus/engine_lines/time-overflow-*): an engine's time too
    /// large to hold in microseconds panicked in a debug build and wrapped in a release one.
    #[test]
    fn a_huge_reported_time_saturates() {
        let huge = format!("info depth 1 time {}", u64::MAX);
        match parse_line(&huge) {
            EngineLine::Info(info) => assert_eq!(info.time_us, Some(u64::MAX)),
            other => panic!("{other:?}"),
        }
    }

    proptest::proptest! {
        /// Search reports are read byte by byte; what they read must be what the standard
        /// library reads from the same text: the same words, the same numbers.
        #[test]
        fn words_and_numbers_read_as_the_standard_library_reads_them(
            line in "[ \t\r\x0b\x0c+-]{0,3}([0-9+\\-a \x01\x0b\x1f!é]{0,20}[ \t\r\x0c]{1,2}){0,6}",
            digits in "[+-]?[0-9]{0,21}",
        ) {
            let ours: Vec<&[u8]> = byte_words(line.as_bytes()).collect();
            let theirs: Vec<&[u8]> = line.split_ascii_whitespace().map(str::as_bytes).collect();
            proptest::prop_assert_eq!(ours, theirs);
            for word in line.split_ascii_whitespace().chain([digits.as_str()]) {
                let bytes = Some(word.as_bytes());
                proptest::prop_assert_eq!(number::<u32>(bytes), word.parse::<u32>().ok());
                proptest::prop_assert_eq!(number::<u64>(bytes), word.parse::<u64>().ok());
                proptest::prop_assert_eq!(number::<i32>(bytes), word.parse::<i32>().ok());
            }
        }
    }

    #[test]
    fn spaces_are_the_standard_librarys() {
        for byte in 0..=u8::MAX {
            assert_eq!(is_space(byte), byte.is_ascii_whitespace(), "{byte}");
        }
    }

    #[test]
    fn numbers_at_the_edges_read_as_parse_reads_them() {
        for word in [
            "",
            "+",
            "-",
            "-0",
            "+0",
            "0",
            "007",
            "4294967295",
            "4294967296",
            "-2147483648",
            "-2147483649",
            "2147483647",
            "2147483648",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
            "1 ",
            "1a",
            "--1",
            "+-1",
            "١",
        ] {
            let bytes = Some(word.as_bytes());
            assert_eq!(number::<u32>(bytes), word.parse::<u32>().ok(), "{word:?}");
            assert_eq!(number::<u64>(bytes), word.parse::<u64>().ok(), "{word:?}");
            assert_eq!(number::<i32>(bytes), word.parse::<i32>().ok(), "{word:?}");
        }
        assert_eq!(number::<u32>(None), None);
        assert_eq!(number::<u32>(Some(b"12\xff")), None);
    }

    #[test]
    fn parses_the_handshakes_names() {
        assert_eq!(
            parse_line("id name Stockfish 15.1"),
            EngineLine::IdName("Stockfish 15.1".into())
        );
        assert_eq!(
            parse_line("id author the Stockfish developers (see AUTHORS file)"),
            EngineLine::IdAuthor("the Stockfish developers (see AUTHORS file)".into())
        );
    }

    #[test]
    fn parses_uci_info() {
        let EngineLine::Info(info) = parse_line(
            "info depth 12 seldepth 15 score cp -35 nodes 12345 nps 99 time 512 pv e2e4 e7e5",
        ) else {
            panic!()
        };
        assert_eq!(info.depth, Some(12));
        assert_eq!(info.score, Some(Score::Centipawns(-35)));
        assert_eq!(info.nodes, Some(12345));
        assert_eq!(info.seldepth, Some(15));
        assert_eq!(info.time_us, Some(512_000));
        // fastchess's mock engine puts its score after the line.
        let EngineLine::Info(after) = parse_line("info depth 1 pv e2e4 score cp 7") else {
            panic!()
        };
        assert_eq!(
            (after.depth, after.score),
            (Some(1), Some(Score::Centipawns(7)))
        );
    }

    #[test]
    fn parses_the_mit_players_info_lines() {
        let EngineLine::Info(a) =
            parse_line("info depth 7 move_no 3 time (microsec) 81234 nodes 5000 nps 61000")
        else {
            panic!()
        };
        assert_eq!(
            (a.depth, a.time_us, a.nodes),
            (Some(7), Some(81_234), Some(5000))
        );
        let EngineLine::Info(b) = parse_line("info score cp 112 pv g4L e6e7") else {
            panic!()
        };
        assert_eq!(b.score, Some(Score::Centipawns(112)));
    }

    /// What `search_report` reads is what `parse_line` reads, less the `string` text.
    #[test]
    fn a_search_report_is_read_without_its_string() {
        let lines = [
            "info depth 3 score cp 20 string hello  world",
            "info string NNUE evaluation using nn-ad9b42354671.nnue enabled",
            "info depth 2 pv e2e4 string not a field",
            "info depth 9 seldepth 12 time 31 nodes 200 score mate -2 pv a1a2",
            "info",
            "infostring x",
            "bestmove e2e4",
        ];
        for line in lines {
            match (search_report(line.as_bytes()), parse_line(line)) {
                (Some((fields, has_string)), EngineLine::Info(full)) => {
                    assert_eq!(has_string, full.string.is_some(), "{line}");
                    assert_eq!(
                        fields,
                        Info {
                            string: None,
                            ..full
                        },
                        "{line}"
                    );
                }
                (None, other) => assert!(!matches!(other, EngineLine::Info(_)), "{line}"),
                (some, other) => panic!("{line}: {some:?} {other:?}"),
            }
        }
        let (fields, string) = search_report(lines[0].as_bytes()).unwrap();
        assert_eq!((fields.depth, string), (Some(3), true));
        let EngineLine::Info(full) = parse_line(lines[0]) else {
            panic!()
        };
        assert_eq!(full.string.as_deref(), Some("hello world"));
    }

    /// A report read as bytes says what its text (invalid UTF-8 replaced) says: random lines
    /// of the words that matter, numbers good and bad, odd whitespace and broken characters.
    #[test]
    fn a_report_read_as_bytes_reads_as_its_text() {
        let pool: &[&[u8]] = &[
            b"info",
            b"depth",
            b"nodes",
            b"time",
            b"(microsec)",
            b"score",
            b"cp",
            b"mate",
            b"pv",
            b"string",
            b"12",
            b"-35",
            b"4294967296",
            b"+7",
            b"e2e4",
            b"\xff",
            b"1\xc3",
            b"\xc3\xa9",
            b"\xe2\x82",
            b"in\xffo",
            b"depth\x00",
        ];
        let gaps: &[&[u8]] = &[b" ", b"  ", b"\t", b"\r", b"\x0c", b" \r"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut reports = 0;
        for _ in 0..20_000 {
            let mut line = Vec::new();
            if next(4) > 0 {
                line.extend_from_slice(b"info ");
            }
            for _ in 0..next(12) {
                line.extend_from_slice(pool[next(pool.len())]);
                line.extend_from_slice(gaps[next(gaps.len())]);
            }
            let text = String::from_utf8_lossy(&line);
            let want = search_report(text.as_bytes());
            reports += usize::from(want.as_ref().is_some_and(|(i, _)| *i != Info::default()));
            assert_eq!(search_report(&line), want, "{line:?}");
        }
        assert!(reports > 500, "{reports}");
    }

    /// A line parsed in place says what it says parsed from a copy.
    #[test]
    fn a_line_kept_parses_as_a_line_copied() {
        for line in [
            "bestmove e2e4",
            "bestmove e2e4 ponder e7e5",
            "  bestmove\te7e8q  ",
            "bestmove (none)",
            "bestmove",
            "bestmove é1",
            "info depth 3 score cp 20",
            "readyok",
            "id name Stockfish 17",
            "",
        ] {
            assert_eq!(
                parse_owned_line(line.to_string()),
                parse_line(line),
                "{line:?}"
            );
        }
    }

    #[test]
    fn parses_bestmove_options_and_strings() {
        assert_eq!(
            parse_line("bestmove g4L ponder e6e7"),
            EngineLine::BestMove(Some("g4L".into()))
        );
        assert_eq!(parse_line("bestmove (none)"), EngineLine::BestMove(None));
        assert_eq!(
            parse_line(
                "option name UCI_Variant type combo default chess var chess var leaperhouse"
            ),
            EngineLine::Option(OfferedOption {
                name: "UCI_Variant".into(),
                kind: OptionKind::Combo {
                    vars: vec!["chess".into(), "leaperhouse".into()]
                },
                default: Some("chess".into()),
            })
        );
        let EngineLine::Info(i) =
            parse_line("info string variant leaperhouse files 10 ranks 10 pocket 6")
        else {
            panic!()
        };
        assert_eq!(
            i.string.as_deref(),
            Some("variant leaperhouse files 10 ranks 10 pocket 6")
        );
        assert_eq!(
            parse_line("Illegal command.  Use 'help'"),
            EngineLine::Other("Illegal command.  Use 'help'".into())
        );
        assert_eq!(
            parse_line("info score cp"),
            EngineLine::Info(Info::default())
        );
        assert_eq!(
            parse_line("bestmove w-4"),
            EngineLine::BestMove(Some("w-4".into()))
        );
    }
}
