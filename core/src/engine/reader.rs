//! Reading an engine's output on the referee's own thread: lines cut at `MAX_LINE`, each
//! timestamped when the read that completed it returned, `info` lines folded into the next line
//! that matters so that the referee handles a move once, however many reports came before it.
//!
//! No thread and no channel sit between the pipe and the referee. A quick reply is waited for
//! with `ppoll` on the worker's thread itself (`next_blocking`), a slow one on the runtime
//! (`next`); either way each write of the engine wakes the referee once, and each line is read
//! once and parsed in place. Timestamps stay honest as long as nothing blocks the thread, which
//! is why the journal's disk syncs run elsewhere.

use super::log::IoLog;
use super::protocol::{has_every_kept_field, merge_info, search_report, Info};
use super::watchdog;
use std::borrow::Cow;
use std::future::poll_fn;
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;
use tokio::io::{AsyncRead, ReadBuf};

/// Longest line kept from an engine; the rest of a longer line is dropped.
pub const MAX_LINE: usize = 1 << 20;
/// One read takes at most this much; a move with its search reports fits many times over.
const CHUNK: usize = 1 << 16;

/// A line from the engine and the moment the referee read it, with what the `info` lines before
/// it said.
#[derive(Clone, Debug)]
pub struct Line {
    pub at: Instant,
    pub text: String,
    pub info: Info,
}

pub struct LineReader<R> {
    source: R,
    chunk: Box<[u8]>,
    /// `chunk[start..end]` is read but not yet cut into lines.
    start: usize,
    end: usize,
    /// When the bytes in `chunk` were read.
    read_at: Instant,
    /// The beginning of a line that spans reads (capped at `MAX_LINE`).
    partial: Vec<u8>,
    ended: bool,
    lines: Lines,
    /// A blocking descriptor of the same pipe, for `next_blocking` (None inside: there is
    /// none; None outside: not looked for yet).
    twin: Option<Option<OwnedFd>>,
}

/// What happens to each complete line: logged, then folded or handed out.
struct Lines {
    /// What `info` lines since the last line handed out said, up to the ones in `reports`.
    pending: Info,
    /// The search reports after those, as they were read, each ending in a newline: parsed
    /// only when the next line is handed out, and then from the latest back, until each field
    /// has its value (stockfish's last report before `bestmove` usually has them all).
    reports: Vec<u8>,
    /// Whether `info string` lines are folded too (during a search, where nothing in their
    /// text is used) rather than handed out (the handshake reads a variant's confirmation).
    in_search: bool,
    name: String,
    log: Option<IoLog>,
    /// Whether the selective depth is kept (`--pgn-seldepth`): looked for, it may send the
    /// search back through every report of an engine that never says it.
    seldepth: bool,
    /// The run's `--pgn-line` patterns, and for each the last line of this search it matched.
    patterns: Vec<regex::bytes::Regex>,
    matched: Vec<Option<String>>,
    /// Whether each search's `info ... pv` lines are kept (`--check-pvs`), and those kept.
    keep_pvs: bool,
    pv_lines: Vec<String>,
}

/// Principal lines kept of one search at most: an engine reporting without end is checked on
/// its first ones.
const MAX_PV_LINES: usize = 1024;

/// Reports kept unparsed at most: an engine that reports without end is folded as it goes.
const MAX_REPORTS: usize = 1 << 16;

impl Lines {
    /// Keeps a search report to fold (`None`) or hands the line out with the reports before
    /// it. The last line of the output is never folded.
    fn emit(&mut self, at: Instant, bytes: &[u8], last: bool) -> Option<Line> {
        if let Some(log) = &self.log {
            log.write(&self.name, '<', &line_text(bytes));
        }
        if self.in_search && !self.patterns.is_empty() {
            self.match_patterns(bytes);
        }
        if self.keep_pvs
            && self.in_search
            && is_info(bytes)
            && self.pv_lines.len() < MAX_PV_LINES
            && has_pv(bytes)
        {
            self.pv_lines.push(line_text(bytes).into_owned());
        }
        let folded = if self.in_search {
            is_info(bytes)
        } else {
            is_search_report(bytes)
        };
        if !last && folded {
            if self.reports.len() + bytes.len() >= MAX_REPORTS {
                self.pending = self.take_info();
            }
            self.reports.extend_from_slice(bytes);
            self.reports.push(b'\n');
            return None;
        }
        Some(Line {
            at,
            text: line_text(bytes).into_owned(),
            info: self.take_info(),
        })
    }

    /// What the reports since the last line handed out said, each field from the latest
    /// report that has it.
    fn take_info(&mut self) -> Info {
        let mut latest = Info::default();
        // From the latest report back, each found by the newline before it (every report ends
        // in one): usually only the last is read.
        let mut rest: &[u8] = &self.reports;
        while let Some(ended) = rest.strip_suffix(b"\n") {
            let start = memchr::memrchr(b'\n', ended).map_or(0, |i| i + 1);
            let line = &ended[start..];
            rest = &ended[..start];
            if line.is_empty() {
                continue;
            }
            if let Some((mut older, _)) = search_report(line) {
                merge_info(&mut older, latest);
                latest = older;
            }
            if has_every_kept_field(&latest) && (latest.seldepth.is_some() || !self.seldepth) {
                break;
            }
        }
        self.reports.clear();
        let mut info = std::mem::take(&mut self.pending);
        merge_info(&mut info, latest);
        if !self.seldepth {
            info.seldepth = None;
        }
        info
    }

    /// Keeps the line for each pattern it matches, as fastchess keeps the last matching line
    /// of a move's output (a search in the line, not a match of all of it).
    fn match_patterns(&mut self, bytes: &[u8]) {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        for (pattern, matched) in self.patterns.iter().zip(&mut self.matched) {
            if pattern.is_match(bytes) {
                *matched = Some(line_text(bytes).into_owned());
            }
        }
    }

    fn forget(&mut self) {
        self.pending = Info::default();
        self.reports.clear();
        self.matched.iter_mut().for_each(|m| *m = None);
        self.pv_lines.clear();
    }
}

/// Appends to a line being assembled, dropping what goes past `MAX_LINE`.
fn append_capped(partial: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_LINE.saturating_sub(partial.len());
    partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// Calls `take` with each line of a blocking `output`, as `LineReader` cuts them (a trailing
/// `\r` dropped, invalid UTF-8 replaced, a line cut at `MAX_LINE`), until the output ends or
/// `take` says to stop: for a tool that reads an engine on a thread of its own.
pub fn each_line(output: impl std::io::Read, mut take: impl FnMut(String) -> bool) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(output);
    let mut line = Vec::new();
    let mut hand_out = |line: &mut Vec<u8>| take(line_text(&std::mem::take(line)).into_owned());
    while let Ok(buf) = reader.fill_buf() {
        if buf.is_empty() {
            if !line.is_empty() {
                hand_out(&mut line);
            }
            break;
        }
        let (piece, used, ends) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        append_capped(&mut line, piece);
        reader.consume(used);
        if ends && !hand_out(&mut line) {
            break;
        }
    }
}

/// Whether a line is a search report to fold rather than hand out (`info string` lines, such
/// as a variant's confirmation, are handed out). Most are known by their first bytes, without
/// being read as text.
fn is_search_report(bytes: &[u8]) -> bool {
    // Built once: a finder made for every line costs more than the search through it.
    static STRING: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"string"));
    let plain = bytes.starts_with(b"info ") && STRING.find(bytes).is_none();
    plain || matches!(search_report(bytes), Some((_, false)))
}

/// Whether a report carries a principal line (the searcher built once, not per line).
fn has_pv(bytes: &[u8]) -> bool {
    static PV: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" pv "));
    PV.find(bytes).is_some()
}

/// Whether a line's first word is `info`.
fn is_info(bytes: &[u8]) -> bool {
    bytes
        .strip_prefix(b"info")
        .is_some_and(|rest| rest.first().is_none_or(u8::is_ascii_whitespace))
}

/// A line's text: a trailing `\r` dropped, invalid UTF-8 replaced, borrowed where it can be.
fn line_text(bytes: &[u8]) -> Cow<'_, str> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    // The strict check is the fast one for the ASCII that engines send.
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(source: R, name: String, log: Option<IoLog>) -> LineReader<R> {
        LineReader {
            source,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            read_at: Instant::now(),
            partial: Vec::new(),
            ended: false,
            twin: None,
            lines: Lines {
                pending: Info::default(),
                reports: Vec::new(),
                in_search: false,
                name,
                log,
                seldepth: false,
                patterns: Vec::new(),
                matched: Vec::new(),
                keep_pvs: false,
                pv_lines: Vec::new(),
            },
        }
    }

    /// The selective depth is read from the reports (`Line::info`), and lines of each search
    /// matching any of `patterns` are kept, for [`Self::take_matched`].
    pub fn keep(&mut self, seldepth: bool, patterns: Vec<regex::bytes::Regex>, pvs: bool) {
        self.lines.keep_pvs = pvs;
        self.lines.seldepth = seldepth;
        self.lines.matched = vec![None; patterns.len()];
        self.lines.patterns = patterns;
    }

    /// The `info ... pv` lines since the last call, in order (with `keep`'s `pvs`).
    pub fn take_pv_lines(&mut self) -> Vec<String> {
        std::mem::take(&mut self.lines.pv_lines)
    }

    /// The lines the patterns matched since the last call, the last for each pattern that
    /// matched one, in the patterns' order.
    pub fn take_matched(&mut self) -> Vec<String> {
        self.lines
            .matched
            .iter_mut()
            .filter_map(Option::take)
            .collect()
    }

    /// Whether the lines read from now on answer a search: then `info string` lines are folded
    /// with the other reports instead of being handed out.
    pub fn set_in_search(&mut self, on: bool) {
        self.lines.in_search = on;
    }

    /// The next line that is not a folded search report; `None` once the output has ended.
    /// Cancel-safe: a line half read when the future is dropped is finished by the next call.
    pub async fn next(&mut self) -> Option<Line> {
        loop {
            if let Some(line) = self.take_buffered() {
                return Some(line);
            }
            if self.ended {
                return None;
            }
            let n = poll_fn(|cx| self.poll_fill(cx)).await;
            if n == 0 {
                if let Some(last) = self.end_of_output() {
                    return Some(last);
                }
            }
        }
    }

    /// Marks the output ended; a last line without its newline still counts.
    fn end_of_output(&mut self) -> Option<Line> {
        self.ended = true;
        if self.partial.is_empty() {
            return None;
        }
        let bytes = std::mem::take(&mut self.partial);
        self.lines.emit(self.read_at, &bytes, true)
    }

    /// Drops every complete line already read, and whatever the engine has written that can be
    /// read without waiting: late reports from a search that has ended.
    pub fn discard_ready(&mut self) {
        loop {
            while self.take_buffered().is_some() {}
            if self.ended {
                break;
            }
            let mut cx = Context::from_waker(Waker::noop());
            match self.poll_fill(&mut cx) {
                Poll::Ready(0) => self.ended = true,
                Poll::Ready(_) => continue,
                Poll::Pending => break,
            }
        }
        self.lines.forget();
    }

    /// Reads into the (fully consumed) chunk; 0 at the end of output or on a read error.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<usize> {
        debug_assert_eq!(self.start, self.end);
        let mut buf = ReadBuf::new(&mut self.chunk);
        loop {
            match Pin::new(&mut self.source).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Poll::Ready(Err(_)) => return Poll::Ready(0),
                Poll::Ready(Ok(())) => break,
            }
        }
        let n = buf.filled().len();
        self.read_at = Instant::now();
        self.start = 0;
        self.end = n;
        Poll::Ready(n)
    }

    /// Cuts the next complete line out of what has been read, folding search reports.
    fn take_buffered(&mut self) -> Option<Line> {
        while self.start < self.end {
            let rest = &self.chunk[self.start..self.end];
            let Some(i) = memchr::memchr(b'\n', rest) else {
                append_capped(&mut self.partial, rest);
                self.start = self.end;
                return None;
            };
            let piece = &self.chunk[self.start..self.start + i];
            self.start += i + 1;
            let emitted = if self.partial.is_empty() {
                // The common case: the whole line came in one read, and is looked at where
                // it lies.
                self.lines.emit(self.read_at, piece, false)
            } else {
                append_capped(&mut self.partial, piece);
                let bytes = std::mem::take(&mut self.partial);
                self.lines.emit(self.read_at, &bytes, false)
            };
            if emitted.is_some() {
                return emitted;
            }
        }
        None
    }
}

/// What waiting on the thread itself came to.
#[derive(Debug)]
pub enum Waited {
    Line(Line),
    /// The output has ended.
    Ended,
    /// Nothing complete before the time given (or the pipe said something only the runtime
    /// should handle): wait on the runtime instead.
    NotYet,
}

impl<R: AsyncRead + AsRawFd + Unpin> LineReader<R> {
    /// The next line that is not a folded search report, waited for on this thread, without
    /// the runtime, until `until`.
    ///
    /// A reply of a few search reports then costs the referee one plain wake-up per line
    /// instead of an `epoll_wait` with a timer and a pass of the runtime's scheduler: at
    /// stockfish's five lines a move that was most of the referee's CPU. The caller keeps
    /// `until` short, since nothing else on this thread runs meanwhile (cancellation, the
    /// keeper's exit), and goes on with `next` after `NotYet`. Reading past the runtime is safe
    /// with its edge-triggered registration: no readiness event is taken from it, so at worst
    /// it tries a read that finds the pipe empty.
    ///
    /// With `slack` (the caller can wait up to a `watchdog::TICK` past `until`), the wait is a
    /// plain blocking `read` of a blocking twin of the pipe, which the watchdog interrupts
    /// (see `watchdog`); without it, or where that cannot be set up, `ppoll` and then `read`,
    /// which end at `until` exactly.
    pub fn next_blocking(&mut self, until: Instant, slack: bool) -> Waited {
        let fd = self.source.as_raw_fd();
        if slack && self.twin.is_none() {
            self.twin = Some(watchdog::blocking_twin(fd));
        }
        let mut twin = match &self.twin {
            Some(Some(twin)) if slack => Some(twin.as_raw_fd()),
            _ => None,
        };
        loop {
            if let Some(line) = self.take_buffered() {
                return Waited::Line(line);
            }
            if self.ended {
                return Waited::Ended;
            }
            let n = match twin {
                Some(fd) => match watchdog::read_until(fd, &mut self.chunk, until) {
                    watchdog::Read::Bytes(n) => n,
                    watchdog::Read::TimedOut => return Waited::NotYet,
                    // No watchdog, or a read the twin cannot make: `ppoll` from now on.
                    watchdog::Read::Failed => {
                        self.twin = Some(None);
                        twin = None;
                        continue;
                    }
                },
                None => match watchdog::poll_then_read(fd, &mut self.chunk, until) {
                    Some(n) => n,
                    None => return Waited::NotYet,
                },
            };
            self.read_at = Instant::now();
            self.start = 0;
            self.end = n;
            if n == 0 {
                if let Some(last) = self.end_of_output() {
                    return Waited::Line(last);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_lines_are_cut_as_the_reader_cuts_them() {
        let mut input = b"uciok\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend(b"\nbad \xff byte\nlast without end");
        let mut lines = Vec::new();
        each_line(&input[..], |line| {
            lines.push(line);
            true
        });
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "uciok");
        assert_eq!(lines[1].len(), MAX_LINE);
        assert_eq!(lines[2], "bad \u{fffd} byte");
        assert_eq!(lines[3], "last without end");
        // A reader told to stop stops.
        let mut seen = 0;
        each_line(&b"a\nb\nc\n"[..], |_| {
            seen += 1;
            false
        });
        assert_eq!(seen, 1);
    }
    use crate::engine::Score;
    use tokio::io::AsyncWriteExt;

    fn reader(bytes: &'static [u8]) -> LineReader<impl AsyncRead + Unpin> {
        LineReader::new(bytes, "t".into(), None)
    }

    #[tokio::test]
    async fn folds_reports_into_the_next_line() {
        let mut r = reader(b"info depth 3 score cp 12\ninfo string hello\r\nbestmove a1\n");
        let s = r.next().await.unwrap();
        assert_eq!(s.text, "info string hello");
        assert_eq!(s.info.depth, Some(3));
        let m = r.next().await.unwrap();
        assert_eq!(m.text, "bestmove a1");
        assert_eq!(m.info.depth, None);
        assert!(r.next().await.is_none());
    }

    /// Stockfish opens every search with an `info string`: during a search it is folded with
    /// the reports (what precedes `string` still counts), so the move is the only line handed
    /// out; outside one (a variant's confirmation) it is handed out as before.
    #[tokio::test]
    async fn a_search_folds_its_info_strings() {
        let text = b"info string NNUE evaluation using nn.bin\ninfo depth 2 string x\ninfo\tdepth \
            4 score cp 9\ninfo\ninformation\nbestmove a1\n";
        let mut r = reader(text);
        r.set_in_search(true);
        let m = r.next().await.unwrap();
        assert_eq!(
            m.text, "information",
            "only a first word `info` is a report"
        );
        assert_eq!(
            (m.info.depth, m.info.score),
            (Some(4), Some(Score::Centipawns(9)))
        );
        let m = r.next().await.unwrap();
        assert_eq!(m.text, "bestmove a1");
        let mut r = reader(text);
        r.set_in_search(false);
        assert_eq!(
            r.next().await.unwrap().text,
            "info string NNUE evaluation using nn.bin"
        );
        assert_eq!(r.next().await.unwrap().text, "info depth 2 string x");
    }

    /// Reports read when the next line is handed out, from the latest back, say what reading
    /// each in turn would have said: split reports (the MIT player's), reports with strings,
    /// invalid bytes, odd spacing, and more reports than are kept unparsed.
    #[tokio::test]
    async fn reports_folded_late_say_what_reports_folded_in_turn_say() {
        let pool: [&[u8]; 12] = [
            b"info depth 3 score cp 12",
            b"info nodes 200 time 7",
            b"info depth 5 seldepth 9 score mate 2 nodes 900 nps 1 time 31 pv e2e4 e7e5",
            b"info string hello",
            b"info depth 4 string kept out",
            b"info depth 6 pv a1a2 string not a field",
            b"info\tdepth 8 score cp -3",
            b"info  score cp 5 \xff\xfe",
            b"info",
            b"infox depth 1",
            b"bestmove a1",
            b"readyok",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut bytes = Vec::new();
        for i in 0..7_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // A long stretch of reports passes the unparsed cap; only its first says the
            // nodes and time.
            let line = if i == 2_000 {
                pool[1]
            } else if (2_000..5_000).contains(&i) {
                [pool[0], pool[6]][(seed % 2) as usize]
            } else if i == 5_000 {
                pool[10]
            } else {
                pool[(seed % pool.len() as u64) as usize]
            };
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        assert!(bytes.len() > 2 * MAX_REPORTS);
        // Read with and without the selective depth (kept only where a run asks for it).
        for seldepth in [false, true] {
            let mut want = Vec::new();
            let mut pending = Info::default();
            for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let text = String::from_utf8_lossy(line).into_owned();
                match search_report(text.as_bytes()) {
                    Some((info, false)) => merge_info(&mut pending, info),
                    _ => {
                        let mut info = std::mem::take(&mut pending);
                        if !seldepth {
                            info.seldepth = None;
                        }
                        want.push((text, info));
                    }
                }
            }
            let mut r = LineReader::new(&bytes[..], "t".into(), None);
            r.keep(seldepth, Vec::new(), false);
            let mut got = Vec::new();
            while let Some(line) = r.next().await {
                got.push((line.text, line.info));
            }
            assert!(want.len() > 1_000, "{}", want.len());
            assert!(want.iter().any(|(_, i)| i.seldepth.is_some()) == seldepth);
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "line {i}, seldepth kept: {seldepth}");
            }
        }
    }

    #[tokio::test]
    async fn cuts_long_lines_and_keeps_an_unterminated_last_line() {
        let long =
            Box::leak(format!("{}\nlast", "x".repeat(MAX_LINE + CHUNK * 3 + 5)).into_boxed_str());
        let mut r = reader(long.as_bytes());
        assert_eq!(r.next().await.unwrap().text.len(), MAX_LINE);
        assert_eq!(r.next().await.unwrap().text, "last");
        assert!(r.next().await.is_none());
    }

    #[tokio::test]
    async fn lines_split_across_reads_are_joined_and_a_dropped_read_loses_nothing() {
        let (mut w, rd) = tokio::io::duplex(64);
        let mut r = LineReader::new(rd, "t".into(), None);
        w.write_all(b"readyo").await.unwrap();
        // Nothing complete yet: the wait is cut short, as a deadline would.
        let waited = tokio::time::timeout(std::time::Duration::from_millis(20), r.next()).await;
        assert!(waited.is_err());
        w.write_all(b"k\ninfo depth 9\n").await.unwrap();
        assert_eq!(r.next().await.unwrap().text, "readyok");
        r.discard_ready();
        w.write_all(b"bestmove b2\n").await.unwrap();
        drop(w);
        let m = r.next().await.unwrap();
        assert_eq!(m.text, "bestmove b2");
        assert_eq!(
            m.info.depth, None,
            "the discarded report is not carried over"
        );
        assert!(r.next().await.is_none());
    }

    /// A shell running `script`, and a reader of its output (a pipe, as an engine's is).
    fn shell_output(
        script: &str,
    ) -> (
        tokio::process::Child,
        LineReader<tokio::process::ChildStdout>,
    ) {
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let reader = LineReader::new(child.stdout.take().unwrap(), "t".into(), None);
        (child, reader)
    }

    /// The wait on the thread and the runtime's share one pipe: a quick reply is read on the
    /// thread, a late line after `NotYet` on the runtime, and the end by either; with `slack`,
    /// through the blocking twin that the watchdog interrupts.
    async fn a_reply_waited_for_on_the_thread_then_on_the_runtime(slack: bool) {
        use std::time::Duration;
        let (mut child, mut r) = shell_output(
            "printf 'info depth 1\\ninfo depth 2 score cp 5\\nbestmove e2e4\\n'; sleep 1; printf \
                'late\\nlast'",
        );
        let soon = || Instant::now() + Duration::from_secs(5);
        let Waited::Line(best) = r.next_blocking(soon(), slack) else {
            panic!("no reply read on the thread")
        };
        assert_eq!(best.text, "bestmove e2e4");
        assert_eq!(best.info.depth, Some(2));
        assert_eq!(matches!(r.twin, Some(Some(_))), slack);
        let asked = Instant::now();
        assert!(matches!(
            r.next_blocking(asked + Duration::from_millis(50), slack),
            Waited::NotYet
        ));
        assert!(asked.elapsed() >= Duration::from_millis(50));
        assert_eq!(r.next().await.unwrap().text, "late");
        let Waited::Line(last) = r.next_blocking(soon(), slack) else {
            panic!("the unterminated last line was lost")
        };
        assert_eq!(last.text, "last");
        assert!(matches!(r.next_blocking(soon(), slack), Waited::Ended));
        child.wait().await.unwrap();
    }

    /// A twin that cannot read (here a descriptor open only for writing) is given up for
    /// `ppoll`, and the line is still read.
    #[tokio::test]
    async fn a_twin_that_fails_is_given_up_for_ppoll() {
        let (mut child, mut r) = shell_output("printf 'bestmove e2e4\\n'");
        let unreadable = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        r.twin = Some(Some(unreadable.into()));
        let soon = Instant::now() + std::time::Duration::from_secs(5);
        let Waited::Line(best) = r.next_blocking(soon, true) else {
            panic!("the reply was not read")
        };
        assert_eq!(best.text, "bestmove e2e4");
        assert!(matches!(r.twin, Some(None)));
        child.wait().await.unwrap();
    }

    #[tokio::test]
    async fn a_reply_waited_for_with_ppoll_then_on_the_runtime() {
        a_reply_waited_for_on_the_thread_then_on_the_runtime(false).await;
    }

    #[tokio::test]
    async fn a_reply_waited_for_with_a_blocking_read_then_on_the_runtime() {
        a_reply_waited_for_on_the_thread_then_on_the_runtime(true).await;
    }
}
