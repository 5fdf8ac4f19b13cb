//! PGN: writing arbiter's game records, and reading PGN files (arbiter's, the MIT autotester's,
//! cutechess's) back for ratings and checks.

use crate::game::{Outcome, Termination};
use crate::referee::GameRecord;
use thiserror::Error;

/// A tag value as PGN can hold it: quotes and backslashes escaped, and control characters (a
/// newline in an engine's name would end the tag line and break every reader) made spaces.
fn escape_into(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if crate::referee::shown::hidden_meaning(c) => out.push(' '),
            c => out.push(c),
        }
    }
}

/// A move's comment (`{+0.35/12 0.512s}`, `{book}`), written without the formatter: reports
/// write one per move of every game.
fn write_comment(m: &crate::referee::MoveRecord, out: &mut String) {
    if m.book {
        out.push_str("book");
        return;
    }
    let mut digits = itoa::Buffer::new();
    if let Some(score) = m.score {
        // Writing to a String cannot fail.
        let _ = score.write_to(out);
        if let Some(d) = m.depth {
            out.push('/');
            out.push_str(digits.format(d));
        }
        out.push(' ');
    }
    // Milliseconds, rounded half up (a u64 of nanoseconds holds 584 years).
    let nanos = u64::try_from(m.elapsed.as_nanos()).unwrap_or(u64::MAX);
    let ms = nanos.saturating_add(500_000) / 1_000_000;
    out.push_str(digits.format(ms / 1000));
    out.push('.');
    let frac = ms % 1000;
    if frac < 100 {
        out.push('0');
    }
    if frac < 10 {
        out.push('0');
    }
    out.push_str(digits.format(frac));
    out.push('s');
    // fastchess's order and form: `, n=`, `, sd=`, then each `line="..."`.
    if let Some(n) = m.nodes {
        out.push_str(", n=");
        out.push_str(digits.format(n));
    }
    if let Some(sd) = m.seldepth {
        out.push_str(", sd=");
        out.push_str(digits.format(sd));
    }
    for line in &m.lines {
        out.push_str(", line=\"");
        // A `}` would end the comment for every reader; control characters would break it.
        for c in line.chars() {
            match c {
                '}' => out.push(')'),
                c if c.is_control() => out.push(' '),
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// One game as PGN text, ending with a blank line.
pub fn write_game(record: &GameRecord, event: &str, site: &str) -> String {
    let mut out = String::with_capacity(256 + record.moves.len() * 24);
    // Under a fastchess or cutechess-cli line, the PGN reads as theirs: their word for a game
    // an engine left (OpenBench looks for it), and the reason the game ended closing the last
    // move's comment (OpenBench's pgn_util reads no comment after it).
    let tools = crate::out::TOOL_LINES.get().is_some();
    write_tags(record, event, site, tools, &mut out);
    out.push('\n');
    write_movetext(record, tools, &mut out);
    out
}

/// The game's tag pairs, a line each.
fn write_tags(record: &GameRecord, event: &str, site: &str, tools: bool, out: &mut String) {
    let mut tag = |name: &str, value: &str| {
        out.push('[');
        out.push_str(name);
        out.push_str(" \"");
        escape_into(value, out);
        out.push_str("\"]\n");
    };
    tag("Event", event);
    tag("Site", site);
    tag("Date", &record.date);
    let mut digits = itoa::Buffer::new();
    tag("Round", digits.format(record.round));
    tag("White", &record.white);
    tag("Black", &record.black);
    tag("Result", record.outcome.as_str());
    tag("Variant", &record.game);
    if !record.rules.is_empty() {
        tag("Rules", &record.rules.join(" "));
    }
    if let Some(fen) = &record.start_fen {
        tag("SetUp", "1");
        tag("FEN", fen);
    }
    tag("TimeControl", &record.time_control);
    let termination = match record.termination {
        Termination::EngineCrash
        | Termination::EngineStall
        | Termination::MemoryLimit
        | Termination::DiskLimit
            if tools =>
        {
            "abandoned"
        }
        other => other.as_str(),
    };
    tag("Termination", termination);
    tag("PlyCount", digits.format(record.plies()));
}

/// The moves, numbered, each with its comment, then the result; lines within 79 columns.
fn write_movetext(record: &GameRecord, tools: bool, out: &mut String) {
    // Whose move the game starts with: Black when the FEN says so.
    let black_first = record
        .start_fen
        .as_deref()
        .and_then(|f| f.split_whitespace().nth(1))
        .is_some_and(|side| side.eq_ignore_ascii_case("b"));
    // Chess FENs carry the number of the move they start at (`... w - - 7 9`): the movetext
    // counts on from it, as the games' own numbers.
    let first_number = record
        .start_fen
        .as_deref()
        .filter(|_| record.game.starts_with("chess"))
        .and_then(|f| f.split_whitespace().nth(5))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(1);
    let mut line = String::new();
    let mut push = |token: &str, out: &mut String| {
        if !line.is_empty() && line.len() + 1 + token.len() > 79 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(token);
    };
    let mut digits = itoa::Buffer::new();
    let mut token = String::new();
    let texts: Vec<&str> = record.moves.iter().map(|m| m.text.as_str()).collect();
    let converted = crate::game::find_game(&record.game)
        .and_then(|entry| entry.pgn_moves(record.start_fen.as_deref(), &texts));
    let detail = record.detail.replace('}', ")");
    for (i, m) in record.moves.iter().enumerate() {
        let ply = i + usize::from(black_first);
        // A move number stays on the line of its move.
        token.clear();
        if ply % 2 == 0 {
            token.push_str(digits.format(ply / 2 + first_number));
            token.push_str(". ");
        } else if i == 0 {
            token.push_str(digits.format(ply / 2 + first_number));
            token.push_str("... ");
        }
        token.push_str(converted.as_ref().map_or(&m.text, |c| &c[i]));
        push(&token, out);
        token.clear();
        token.push('{');
        write_comment(m, &mut token);
        if tools && i + 1 == record.moves.len() {
            token.push_str(", ");
            token.push_str(&detail);
        }
        token.push('}');
        push(&token, out);
    }
    if !tools || record.moves.is_empty() {
        push(&format!("{{{detail}}}"), out);
    }
    push(record.outcome.as_str(), out);
    out.push_str(&line);
    out.push_str("\n\n");
}

/// A PGN text without its comments (`{...}`), as a minimal PGN holds it: read line by line,
/// so a file of any length passes in constant memory. Tag values keep their braces.
pub struct Uncommented<R> {
    source: R,
    in_comment: bool,
    line: String,
    pending: std::io::Cursor<Vec<u8>>,
}

impl<R: std::io::BufRead> Uncommented<R> {
    pub fn new(source: R) -> Uncommented<R> {
        Uncommented {
            source,
            in_comment: false,
            line: String::new(),
            pending: std::io::Cursor::new(Vec::new()),
        }
    }

    /// The next line without its comments; `false` at the end.
    fn refill(&mut self) -> std::io::Result<bool> {
        self.line.clear();
        if self.source.read_line(&mut self.line)? == 0 {
            return Ok(false);
        }
        let mut kept = String::with_capacity(self.line.len());
        if !self.in_comment && self.line.starts_with('[') {
            kept.push_str(&self.line);
        } else {
            for c in self.line.chars() {
                match c {
                    '{' if !self.in_comment => self.in_comment = true,
                    '}' if self.in_comment => self.in_comment = false,
                    _ if self.in_comment => {}
                    // The space a comment leaves behind is not doubled.
                    ' ' if kept.ends_with(' ') => {}
                    _ => kept.push(c),
                }
            }
            if kept.trim().is_empty() && !self.line.trim().is_empty() {
                kept.clear();
            } else if let Some(body) = kept.strip_suffix('\n') {
                kept = format!("{}\n", body.trim_end());
            }
        }
        self.pending = std::io::Cursor::new(kept.into_bytes());
        Ok(true)
    }
}

impl<R: std::io::BufRead> std::io::Read for Uncommented<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.pending.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            if !self.refill()? {
                return Ok(0);
            }
        }
    }
}

/// A game read from PGN: its tags and its moves, comments and move numbers removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub moves: Vec<String>,
    /// The result token at the end of the movetext, if any.
    pub result: Option<String>,
    /// Line of the file where the game starts.
    pub line: usize,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The result, from the `Result` tag or the movetext.
    pub fn outcome(&self) -> Option<Outcome> {
        self.tag("Result")
            .and_then(Outcome::parse)
            .or_else(|| self.result.as_deref().and_then(Outcome::parse))
    }
}

/// Tags a game is given room for at its first: cutechess-cli and fastchess write 12 – 19.
const TAGS_EXPECTED: usize = 20;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("line {line}: {reason}")]
pub struct PgnError {
    pub line: usize,
    pub reason: String,
}

fn parse_tag(text: &str, line: usize) -> Result<(String, String), PgnError> {
    let err = |reason: &str| PgnError {
        line,
        reason: reason.to_string(),
    };
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.trim_end().strip_suffix(']'))
        .ok_or_else(|| err("a tag must look like [Name \"value\"]"))?;
    // Every byte that splits a tag is ASCII: searched as bytes, not as characters.
    let gap = inner
        .bytes()
        .position(|b| b.is_ascii_whitespace())
        .ok_or_else(|| err("a tag needs a name and a quoted value"))?;
    let (name, rest) = (&inner[..gap], inner[gap..].trim());
    let quoted = rest
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or_else(|| err("a tag value must be in double quotes"))?;
    if !quoted.contains('\\') {
        return Ok((name.to_string(), quoted.to_string()));
    }
    let mut value = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                value.push(next);
            }
        } else {
            value.push(c);
        }
    }
    Ok((name.to_string(), value))
}

/// A finished token of movetext: a result, or a move (its number, if glued on, dropped). A
/// reader of results alone keeps only the result. Returns whether the token was a move, which
/// makes a game of a file without tags a game whether its moves are kept or not.
fn take_token(t: &str, game: &mut PgnGame, moves: bool) -> bool {
    if t.is_empty() {
        return false;
    }
    if matches!(t, "1-0" | "0-1" | "1/2-1/2" | "*") {
        game.result = Some(t.to_string());
        return false;
    }
    // A move number, possibly glued to its move (`12.e2e4`, `12...e7e5`).
    let t = t
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches('.');
    // Annotation glyphs (`e4!?`, `Nf3?!`) say what a reader thought of the move, not the move.
    let t = t.trim_end_matches(['!', '?']);
    let is_move = !t.is_empty() && !t.starts_with('$');
    if is_move && moves {
        game.moves.push(t.to_string());
    }
    is_move
}

/// The games of a PGN file, read through a large buffer, keeping the moves or only what rating
/// needs. One thread reads it: the movetext of a game whose tags give its result is passed over
/// at memory speed, and threads handing blocks to each other cost more CPU than they saved
/// time, idle and beside other work.
pub fn file_games<R: std::io::Read>(
    source: R,
    moves: bool,
) -> impl Iterator<Item = Result<PgnGame, PgnError>> {
    let reader = PgnReader::new(std::io::BufReader::with_capacity(1 << 18, source));
    if moves {
        reader
    } else {
        reader.results_only()
    }
}

/// Reads every game of a PGN text. Comments (`{...}`, `;...`), variations (`(...)`), NAGs and
/// move numbers are skipped; an unclosed comment or a malformed tag is an error naming its line.
pub fn read_games(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    PgnReader::new(text.as_bytes()).collect()
}

/// The games of a PGN source one at a time, as `read_games` reads them: memory holds one game,
/// however long the file.
pub struct PgnReader<R> {
    source: R,
    raw: Vec<u8>,
    at: Progress,
    done: bool,
}

/// Where a reader is in its text: what a line means depends on the lines before it (a comment
/// left open, a game whose moves have begun).
#[derive(Clone, Debug, Default)]
struct Progress {
    line_no: usize,
    current: PgnGame,
    in_moves: bool,
    comment_depth: usize,
    comment_start: usize,
    variation_depth: usize,
    /// Whether the moves are kept; without them a game is its tags and result.
    moves: bool,
    /// Whether the game in progress has a move, kept or not.
    has_move: bool,
    /// Whether its tags decide its outcome (a `Result` tag that parses): then, reading results
    /// alone, its movetext matters only for where its comments end. `None` until asked.
    outcome_tagged: Option<bool>,
}

impl Progress {
    /// The end of the source: the last game, or the comment left open.
    fn finish(&mut self) -> Option<Result<PgnGame, PgnError>> {
        if self.comment_depth > 0 {
            return Some(Err(PgnError {
                line: self.comment_start,
                reason: "a comment '{' is never closed".into(),
            }));
        }
        let last = std::mem::take(&mut self.current);
        (!last.tags.is_empty() || self.has_move).then_some(Ok(last))
    }

    /// The start of a text.
    fn start(moves: bool) -> Progress {
        Progress {
            moves,
            ..Progress::default()
        }
    }
}

impl<R: std::io::BufRead> PgnReader<R> {
    pub fn new(source: R) -> PgnReader<R> {
        PgnReader {
            source,
            raw: Vec::new(),
            at: Progress::start(true),
            done: false,
        }
    }

    /// A reader that skips the moves: what rating a file needs, several times faster.
    pub fn results_only(mut self) -> PgnReader<R> {
        self.at.moves = false;
        self
    }
}

impl Progress {
    /// Reads one line into the game in progress; returns the game a tag line closed.
    fn read_line(&mut self, line: &str) -> Result<Option<PgnGame>, PgnError> {
        let line_no = self.line_no;
        // Most lines start and end with a visible ASCII byte: nothing to trim, no char decoded.
        let line = match line.as_bytes() {
            [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => line,
            _ => line.trim(),
        };
        if self.comment_depth == 0 && line.starts_with('[') {
            let finished = self.in_moves.then(|| std::mem::take(&mut self.current));
            if finished.is_some() {
                self.has_move = false;
            }
            // A variation left open ends with its game.
            self.variation_depth = 0;
            self.outcome_tagged = None;
            self.in_moves = false;
            if self.current.tags.is_empty() {
                self.current.line = line_no;
                // Room for the tags engine games carry, grown once rather than five times.
                self.current.tags.reserve(TAGS_EXPECTED);
            }
            self.current.tags.push(parse_tag(line, line_no)?);
            return Ok(finished);
        }
        if self.comment_depth == 0 && (line.is_empty() || line.starts_with('%')) {
            return Ok(None);
        }
        if self.plain_moves(line) || self.results_through_comments(line) {
            return Ok(None);
        }
        if !self.in_moves && self.current.tags.is_empty() {
            self.current.line = line_no;
        }
        self.in_moves = true;
        // Every character that ends a token is ASCII, so tokens are slices of the line.
        let mut start = None;
        for (i, b) in line.bytes().enumerate() {
            if self.comment_depth > 0 {
                if b == b'}' {
                    self.comment_depth = 0;
                }
                continue;
            }
            let ends_token = matches!(b, b'{' | b';' | b'(' | b')') || b.is_ascii_whitespace();
            if ends_token {
                if let Some(s) = start.take() {
                    self.has_move |= take_token(&line[s..i], &mut self.current, self.moves);
                }
            }
            match b {
                b'{' => {
                    self.comment_depth = 1;
                    self.comment_start = line_no;
                }
                b';' => return Ok(None),
                b'(' => self.variation_depth += 1,
                b')' => self.variation_depth = self.variation_depth.saturating_sub(1),
                _ if ends_token => {}
                _ if self.variation_depth == 0 && start.is_none() => start = Some(i),
                _ => {}
            }
        }
        if let Some(s) = start {
            self.has_move |= take_token(&line[s..], &mut self.current, self.moves);
        }
        Ok(None)
    }

    /// Reads a line of moves the quick way where only its result can matter: results alone, a
    /// game with tags (whether it has moves decides nothing then), outside comments and
    /// variations, and no comment, variation or rest-of-line comment starting on the line. A
    /// result token holds `-` or is `*`: a line with neither has none, and is passed over
    /// without looking at its tokens (most of a file's bytes). Returns whether it was so read.
    fn plain_moves(&mut self, line: &str) -> bool {
        let quick = !self.moves
            && self.comment_depth == 0
            && self.variation_depth == 0
            && !self.current.tags.is_empty();
        let bytes = line.as_bytes();
        if !quick
            || memchr::memchr3(b'{', b';', b'(', bytes).is_some()
            || memchr::memchr(b')', bytes).is_some()
        {
            return false;
        }
        self.in_moves = true;
        if memchr::memchr2(b'-', b'*', bytes).is_some() {
            // The last result on the line is the one kept; it usually ends the line.
            let last = line
                .rsplit(|c: char| c.is_ascii_whitespace())
                .find(|t| matches!(*t, "1-0" | "0-1" | "1/2-1/2" | "*"));
            if let Some(result) = last {
                self.current.result = Some(result.to_string());
            }
        }
        true
    }

    /// Reads a line of moves with comments or variations the quick way where only its result
    /// can matter (results alone, a game with tags): one pass over its bytes steps over the
    /// comments and variations, and only text between them that holds `-` or `*` is looked at
    /// for a result token. The same result and state as the token-by-token read. (The pieces
    /// are a few bytes each: a byte loop beats a `memchr` call per piece.) Returns whether it
    /// was so read.
    fn results_through_comments(&mut self, line: &str) -> bool {
        if self.moves || self.current.tags.is_empty() {
            return false;
        }
        self.in_moves = true;
        let bytes = line.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            if self.comment_depth > 0 {
                i += bytes[i..].iter().position(|&b| b == b'}').unwrap_or(n - i);
                if i == n {
                    return true;
                }
                self.comment_depth = 0;
                i += 1;
                continue;
            }
            let start = i;
            let mut seen = 0;
            while i < n {
                let class = BYTE_CLASS[usize::from(bytes[i])];
                if class == DELIMITER {
                    break;
                }
                seen |= class;
                i += 1;
            }
            if seen == RESULT_MARK {
                self.result_in(&line[start..i]);
            }
            let Some(&b) = bytes.get(i) else {
                break;
            };
            match b {
                b'{' => {
                    self.comment_depth = 1;
                    self.comment_start = self.line_no;
                }
                b';' => return true,
                b'(' => self.variation_depth += 1,
                _ => self.variation_depth = self.variation_depth.saturating_sub(1),
            }
            i += 1;
        }
        true
    }

    /// Keeps the last result token of `text` (moves between comments and variations), if it
    /// has one and lies outside every variation.
    fn result_in(&mut self, text: &str) {
        if self.variation_depth > 0 {
            return;
        }
        let last = text
            .rsplit(|c: char| c.is_ascii_whitespace())
            .find(|t| matches!(*t, "1-0" | "0-1" | "1/2-1/2" | "*"));
        if let Some(result) = last {
            self.current.result = Some(result.to_string());
        }
    }
}

/// What a byte of movetext is to the quick read of results: a delimiter of comments,
/// variations and rest-of-line comments, a mark every result token holds, or other text.
const DELIMITER: u8 = 2;
const RESULT_MARK: u8 = 1;
const BYTE_CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    class[b'{' as usize] = DELIMITER;
    class[b'(' as usize] = DELIMITER;
    class[b')' as usize] = DELIMITER;
    class[b';' as usize] = DELIMITER;
    class[b'-' as usize] = RESULT_MARK;
    class[b'*' as usize] = RESULT_MARK;
    class
};

impl Progress {
    /// Reads one line of the source, its newline included if it has one.
    fn take_line(&mut self, raw: &[u8]) -> Result<Option<PgnGame>, PgnError> {
        self.line_no += 1;
        let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
        if self.movetext_passed_over(raw) {
            return Ok(None);
        }
        let Ok(text) = std::str::from_utf8(raw) else {
            return Err(PgnError {
                line: self.line_no,
                reason: "stream did not contain valid UTF-8".into(),
            });
        };
        let line = if self.line_no == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        self.read_line(line)
    }

    /// Passes over a line of movetext where nothing in it can matter but where its comments
    /// end: reading results alone, of a game whose tags decide its outcome. Without a
    /// rest-of-line comment (`;`), a line left outside a comment ends inside one exactly when
    /// its last `{` has no `}` after it (comments do not nest), so three vectorised searches
    /// read it; its bytes are not even checked to be UTF-8, since none of them is kept.
    /// Returns whether it was so read.
    fn movetext_passed_over(&mut self, raw: &[u8]) -> bool {
        if self.moves {
            return false;
        }
        if self.comment_depth == 0 {
            // A tag, an escape or a blank line, or one that may start with a wide space.
            match raw.iter().find(|&&b| !trimmed(b)) {
                Some(b'[' | b'%') | None => return false,
                Some(b) if !b.is_ascii() => return false,
                Some(_) => {}
            }
        }
        if !self.outcome_tagged() {
            return false;
        }
        let mut rest = raw;
        if self.comment_depth > 0 {
            match memchr::memchr(b'}', rest) {
                Some(end) => rest = &rest[end + 1..],
                None => {
                    self.in_moves = true;
                    return true;
                }
            }
        }
        if memchr::memchr(b';', rest).is_some() {
            return false;
        }
        let ends_inside = ends_in_comment(rest);
        self.in_moves = true;
        self.comment_depth = usize::from(ends_inside);
        if ends_inside {
            self.comment_start = self.line_no;
        }
        true
    }

    /// Passes over the lines of movetext at the start of `text` up to the next line that starts
    /// with `[`, where they can only be plain movetext of a game whose tags decide its outcome
    /// (as `movetext_passed_over` reads them, one search for the run instead of several a
    /// line): the run starts outside a comment and ends outside one, holds no `;`, and none of
    /// its lines starts with a space, `%`, `[` or a byte that is not ASCII. Returns the bytes
    /// passed over, `None` where the run is not such (or no tag line follows in `text`).
    fn movetext_run(&mut self, text: &[u8]) -> Option<usize> {
        let first = *text.first()?;
        if self.moves || self.comment_depth > 0 || plain_start(first).is_none() {
            return None;
        }
        if !self.outcome_tagged() {
            return None;
        }
        let end = next_tag_line(text)?;
        let run = &text[..end];
        if memchr::memchr(b';', run).is_some() {
            return None;
        }
        if ends_in_comment(run) {
            return None;
        }
        let mut lines = 0;
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', run) {
            if start < newline {
                plain_start(run[start])?;
            }
            lines += 1;
            start = newline + 1;
        }
        self.line_no += lines;
        // A run of blank lines alone leaves the tags open to more tags.
        if run.len() > lines {
            self.in_moves = true;
        }
        Some(end)
    }

    /// Whether the game in progress has tags whose `Result` decides its outcome.
    fn outcome_tagged(&mut self) -> bool {
        *self.outcome_tagged.get_or_insert_with(|| {
            !self.current.tags.is_empty()
                && self
                    .current
                    .tag("Result")
                    .and_then(Outcome::parse)
                    .is_some()
        })
    }
}

/// Whether `text`, begun outside a comment and holding no `;`, ends inside one: comments do
/// not nest, so exactly when its last `{` has no `}` after it.
fn ends_in_comment(text: &[u8]) -> bool {
    memchr::memrchr(b'{', text)
        .is_some_and(|opened| memchr::memrchr(b'}', text).is_none_or(|closed| closed < opened))
}

/// Whether `str::trim` takes `byte` off a line's ends: ASCII whitespace and the vertical tab
/// (which `u8::is_ascii_whitespace` leaves out), so a line the full read trims to a tag is a
/// tag to the quick reads too.
fn trimmed(byte: u8) -> bool {
    byte.is_ascii_whitespace() || byte == b'\x0b'
}

/// `Some` where a line starting with `byte` is movetext wherever it lies: not a tag, an escape
/// or blank, and not perhaps starting with a space that is not ASCII.
fn plain_start(byte: u8) -> Option<()> {
    let special = trimmed(byte) || matches!(byte, b'%' | b'[') || !byte.is_ascii();
    (!special).then_some(())
}

/// Where the first line of `text` after its first that starts with `[` begins. A `[` is rare
/// in movetext: a search for it beats a search for the pair.
fn next_tag_line(text: &[u8]) -> Option<usize> {
    let mut from = 1;
    loop {
        let at = from + memchr::memchr(b'[', text.get(from..)?)?;
        if text[at - 1] == b'\n' {
            return Some(at);
        }
        from = at + 1;
    }
}

impl<R: std::io::BufRead> PgnReader<R> {
    /// The next game the source closes; `None` at the source's end, where the game in
    /// progress is left open for whatever text follows. A line held whole in the source's
    /// buffer is read where it lies; one that crosses the buffer's end is gathered first.
    fn next_in_source(&mut self) -> Option<Result<PgnGame, PgnError>> {
        while !self.done {
            let buffer = match self.source.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.done = true;
                    return Some(Err(PgnError {
                        line: self.at.line_no + 1,
                        reason: e.to_string(),
                    }));
                }
            };
            if self.raw.is_empty() {
                if let Some(passed) = self.at.movetext_run(buffer) {
                    self.source.consume(passed);
                    continue;
                }
            }
            let (result, taken) = match memchr::memchr(b'\n', buffer) {
                Some(end) if self.raw.is_empty() => (self.at.take_line(&buffer[..=end]), end + 1),
                Some(end) => {
                    self.raw.extend_from_slice(&buffer[..=end]);
                    (self.at.take_line(&self.raw), end + 1)
                }
                None if buffer.is_empty() && self.raw.is_empty() => return None,
                None if buffer.is_empty() => (self.at.take_line(&self.raw), 0),
                None => {
                    self.raw.extend_from_slice(buffer);
                    let taken = buffer.len();
                    self.source.consume(taken);
                    continue;
                }
            };
            self.source.consume(taken);
            self.raw.clear();
            match result {
                Ok(Some(game)) => return Some(Ok(game)),
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

impl<R: std::io::BufRead> Iterator for PgnReader<R> {
    type Item = Result<PgnGame, PgnError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_in_source();
        if next.is_none() {
            self.done = true;
            return self.at.finish();
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Score;
    use crate::referee::MoveRecord;
    use std::fmt::Write as _;
    use std::time::Duration;

    /// The comment written by hand says what the formatter said: scores of every sign and
    /// size, mates, depths, and times rounded to the millisecond, halves up; the score's
    /// `Display` too.
    #[test]
    fn move_comments_read_as_the_formatter_wrote_them() {
        let scores = [
            None,
            Some(Score::Centipawns(0)),
            Some(Score::Centipawns(7)),
            Some(Score::Centipawns(-7)),
            Some(Score::Centipawns(35)),
            Some(Score::Centipawns(-107)),
            Some(Score::Centipawns(100)),
            Some(Score::Centipawns(i32::MIN)),
            Some(Score::Centipawns(i32::MAX)),
            Some(Score::Mate(3)),
            Some(Score::Mate(-2)),
            Some(Score::Mate(0)),
        ];
        let nanos = [
            0u64,
            499_999,
            500_000,
            1_499_999,
            9_500_000,
            99_500_000,
            512_345_678,
            999_500_000,
            61_007_000_000,
        ];
        for score in scores {
            for depth in [None, Some(0), Some(12)] {
                for &n in &nanos {
                    let m = MoveRecord {
                        text: "e2e4".into(),
                        book: false,
                        score,
                        depth,
                        elapsed: Duration::from_nanos(n),
                        ..MoveRecord::default()
                    };
                    let mut want = String::new();
                    if let Some(s) = score {
                        // The formatter's way, as scores were written before.
                        let _ = match s {
                            Score::Centipawns(cp) => {
                                let sign = if cp < 0 { '-' } else { '+' };
                                let abs = cp.unsigned_abs();
                                write!(want, "{sign}{}.{:02}", abs / 100, abs % 100)
                            }
                            Score::Mate(n) if n >= 0 => write!(want, "+M{n}"),
                            Score::Mate(n) => write!(want, "-M{}", n.unsigned_abs()),
                        };
                        if let Some(d) = depth {
                            let _ = write!(want, "/{d}");
                        }
                        want.push(' ');
                    }
                    let ms = (u128::from(n) + 500_000) / 1_000_000;
                    let _ = write!(want, "{}.{:03}s", ms / 1000, ms % 1000);
                    let mut got = String::new();
                    write_comment(&m, &mut got);
                    assert_eq!(got, want);
                    if let Some(s) = score {
                        assert!(want.starts_with(&s.to_string()), "{want} {s}");
                    }
                }
            }
        }
    }

    /// fastchess's `-pgnout nodes=true seldepth=true match_line=...` form (pgn_builder.cpp,
    /// `createComment`: the fields joined by ", " after score/depth and time).
    #[test]
    fn kept_nodes_seldepth_and_lines_follow_the_time_as_fastchess_writes_them() {
        let m = MoveRecord {
            text: "e2e4".into(),
            score: Some(Score::Centipawns(35)),
            depth: Some(12),
            elapsed: Duration::from_millis(512),
            nodes: Some(12345),
            seldepth: Some(15),
            lines: vec![
                "info string pgncomment eval 0.35".into(),
                "info string a } b\tc".into(),
            ],
            ..MoveRecord::default()
        };
        let mut got = String::new();
        write_comment(&m, &mut got);
        assert_eq!(
            got,
            "+0.35/12 0.512s, n=12345, sd=15, line=\"info string pgncomment eval 0.35\", \
             line=\"info string a ) b c\""
        );
    }

    #[test]
    fn reads_tags_moves_and_results_skipping_comments() {
        let text = "[Event \"t\"]\n[White \"a \\\"q\\\"\"]\n[Result \"0-1\"]\n\n1. g4g5 {1234 5 \
            67} e6e7 ; note\n2. g5g4 (2. x) $1 e7e6 0-1\n\n[Event \"u\"]\n1. f0U *\n";
        let games = read_games(text).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].tag("White"), Some("a \"q\""));
        assert_eq!(games[0].moves, ["g4g5", "e6e7", "g5g4", "e7e6"]);
        assert_eq!(games[0].result.as_deref(), Some("0-1"));
        assert_eq!(games[0].outcome(), Some(Outcome::BlackWins));
        assert_eq!(games[1].moves, ["f0U"]);
        assert_eq!(games[1].result.as_deref(), Some("*"));
        assert_eq!(games[1].line, 8);
    }

    fn record(white: &str, black: &str) -> GameRecord {
        GameRecord {
            turnaround_us: Vec::new(),
            overloaded: false,
            pv_warnings: Vec::new(),
            rules: Vec::new(),
            game: "leiserchess".into(),
            white: white.into(),
            black: black.into(),
            start_fen: None,
            moves: ["g4g5", "e6e7"]
                .iter()
                .map(|m| crate::referee::MoveRecord {
                    text: m.to_string(),
                    book: false,
                    score: None,
                    depth: None,
                    elapsed: std::time::Duration::from_millis(3),
                    ..Default::default()
                })
                .collect(),
            outcome: Outcome::Draw,
            termination: crate::game::Termination::MaxPlies,
            detail: String::new(),
            time_control: "-".into(),
            duration: std::time::Duration::ZERO,
            opening: 0,
            round: 1,
            date: "2026.11.23".into(),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// Whatever the text and wherever the source's buffer ends (a line, a comment or a
        /// run of movetext cut in two), the games, tags, results and error lines are those
        /// read from the text held whole.
        #[test]
        fn a_small_buffer_reads_what_the_whole_text_reads(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("e2e4 "), proptest::strategy::Just("1-0"),
                    proptest::strategy::Just("1/2-1/2"), proptest::strategy::Just("*"),
                    proptest::strategy::Just("{"), proptest::strategy::Just("}"),
                    proptest::strategy::Just("("), proptest::strategy::Just(")"),
                    proptest::strategy::Just(";"), proptest::strategy::Just("\n"),
                    proptest::strategy::Just("\n\n"), proptest::strategy::Just("\r\n"),
                    proptest::strategy::Just("\n[White \"x\"]\n"),
                    proptest::strategy::Just("\n[Result \"1-0\"]\n\n"),
                    proptest::strategy::Just("\n[Bad tag]\n"), proptest::strategy::Just("12."),
                    proptest::strategy::Just("é"), proptest::strategy::Just("\n %\n"),
                    proptest::strategy::Just("\n [Black \"y\"]\n"),
                ],
                0..80,
            ),
            buffer in 1usize..40,
            moves in proptest::bool::ANY,
        ) {
            let text: String = pieces.concat();
            fn read(reader: PgnReader<impl std::io::BufRead>, moves: bool) -> Vec<String> {
                let reader = if moves { reader } else { reader.results_only() };
                reader.map(|g| format!("{g:?}")).collect()
            }
            let small = std::io::BufReader::with_capacity(buffer, text.as_bytes());
            proptest::prop_assert_eq!(
                read(PgnReader::new(small), moves),
                read(PgnReader::new(text.as_bytes()), moves),
                "{:?}", text
            );
        }

        /// Reading results alone finds every game, tag, result and error line that reading
        /// the moves finds, whatever comments, variations, results and tag-like lines the
        /// movetext holds, and whether or not the tags give the result (its quick paths pass
        /// over plain move lines, and over all the movetext of a game whose tags give it).
        #[test]
        fn results_alone_read_what_the_moves_read(
            games in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::prop_oneof![
                        proptest::strategy::Just("e2e4"), proptest::strategy::Just("O-O"),
                        proptest::strategy::Just("1-0"), proptest::strategy::Just("0-1"),
                        proptest::strategy::Just("1/2-1/2"), proptest::strategy::Just("*"),
                        proptest::strategy::Just("{"), proptest::strategy::Just("}"),
                        proptest::strategy::Just("("), proptest::strategy::Just(")"),
                        proptest::strategy::Just(";"), proptest::strategy::Just("\n"),
                        proptest::strategy::Just("\n[Note \
                            \"x\"]\n"), proptest::strategy::Just("12."),
                        proptest::strategy::Just("\n  [Note \"y\"]\n"),
                        proptest::strategy::Just("\n%{\n"), proptest::strategy::Just("\n\u{a0}[N \
                            \"z\"]\n"),
                        proptest::strategy::Just("\n\x0b[Result \"0-1\"]\n"),
                    ],
                    0..24,
                ),
                1..5,
            ),
            glued in proptest::collection::vec(proptest::bool::ANY, 5),
            tagged in proptest::collection::vec(
                proptest::sample::select(vec!["*", "1-0", "1/2-1/2", "?"]), 5),
        ) {
            let mut text = String::new();
            for (i, tokens) in games.iter().enumerate() {
                let result = tagged[i];
                text.push_str(&format!("[White \"w{i}\"]\n[Result \"{result}\"]\n\n"));
                // Tokens glued to their delimiters too (`1-0{`, `}e2e4`), as files have them.
                text.push_str(&tokens.join(if glued[i] { "" } else { " " }));
                text.push_str("\n\n");
            }
            // A game whose tags decide its outcome may keep no result from its movetext.
            type Read = Vec<Result<(Vec<(String, String)>, Option<Outcome>, usize), PgnError>>;
            let read = |reader: PgnReader<&[u8]>| -> Read {
                reader.map(|g| g.map(|g| (g.outcome(), g.tags, g.line)))
                    .map(|g| g.map(|(outcome, tags, line)| (tags, outcome, line)))
                    .collect()
            };
            proptest::prop_assert_eq!(
                read(PgnReader::new(text.as_bytes()).results_only()),
                read(PgnReader::new(text.as_bytes())),
                "{}", text
            );
        }

        /// Whatever the names and event, arbiter's own PGN reads back as one game with the same
        /// moves and result, and the names as written (control characters and direction marks
        /// as spaces).
        #[test]
        fn written_games_read_back(white in ".*", black in "\\PC*[\n\r\"\\\\\\]\\[{};]*", event in ".*") {
            let text = write_game(&record(&white, &black), &event, "arbiter");
            let games = read_games(&text).unwrap();
            proptest::prop_assert_eq!(games.len(), 1);
            let g = &games[0];
            let plain = |s: &str| -> String {
                s.chars()
                    .map(|c| match crate::referee::shown::hidden_meaning(c) {
                        true => ' ',
                        false => c,
                    })
                    .collect()
            };
            proptest::prop_assert_eq!(g.tag("White").map(String::from), Some(plain(&white)));
            proptest::prop_assert_eq!(g.tag("Black").map(String::from), Some(plain(&black)));
            proptest::prop_assert_eq!(g.tag("Event").map(String::from), Some(plain(&event)));
            proptest::prop_assert_eq!(&g.moves, &vec!["g4g5".to_string(), "e6e7".to_string()]);
            proptest::prop_assert_eq!(g.outcome(), Some(Outcome::Draw));
        }
    }

    #[test]
    fn a_newline_in_a_name_does_not_break_the_pgn() {
        let text = write_game(&record("evil\n[Result \"1-0\"]", "b"), "e", "arbiter");
        let games = read_games(&text).unwrap();
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].outcome(), Some(Outcome::Draw));
    }

    #[test]
    fn a_game_without_tags_is_a_game_whether_its_moves_are_kept_or_not() {
        for text in [
            "1. a1a2 b7b6",
            "[Event \"e\"]\n\n1-0\n\n1. a1a2 *",
            "e4 {c}\n",
        ] {
            let full = read_games(text).unwrap();
            let results: Vec<_> = PgnReader::new(text.as_bytes())
                .results_only()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(results.len(), full.len(), "{text}");
            assert!(!full.is_empty());
        }
    }

    #[test]
    fn reports_bad_pgn_with_its_line() {
        assert_eq!(read_games("[Event t]\n").unwrap_err().line, 1);
        assert_eq!(read_games("\n1. a1a2 {open\n").unwrap_err().line, 2);
    }
}
