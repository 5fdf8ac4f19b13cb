//! A PGN file read by several threads at once. It is cut into blocks where a game's tags
//! begin, each block is read by a worker as if it started a file, and the games come back in
//! the file's order. A block whose cut the one-thread reader would not have read as a fresh
//! start (inside a comment or a variation, between two tag sections of one game) is read again
//! from where the block before it left off, so the games, results and error lines are always
//! those `PgnReader` finds. Memory holds a bounded window of blocks, however long the file.

use super::{PgnError, PgnGame, PgnReader, Progress};
use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

/// What a worker made of a block, read from a fresh start with its own line numbers.
struct BlockRead {
    bytes: Vec<u8>,
    games: Vec<Result<PgnGame, PgnError>>,
    end: Progress,
}

/// A block in the file's order: its reading to come, or the error that ended the file.
enum Slot {
    Block(Receiver<BlockRead>),
    Failed(std::io::Error),
}

/// The games of a PGN source, read in parallel; the same games, in the same order, as
/// `PgnReader` reads.
pub struct ParallelPgn {
    slots: Receiver<Slot>,
    ready: VecDeque<Result<PgnGame, PgnError>>,
    /// Where the text read so far leaves the reader, its lines numbered in the whole file.
    at: Progress,
    started: bool,
    done: bool,
}

/// Blocks of about this size: large enough that a worker's hand-over is rare, small enough
/// that the window of blocks in flight stays a few MB.
const BLOCK: usize = 1 << 18;

impl ParallelPgn {
    /// Reads `source` with as many workers as the machine has CPUs (at most four), keeping the
    /// moves or only tags and results.
    pub fn new<R: Read + Send + 'static>(source: R, moves: bool) -> ParallelPgn {
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4);
        ParallelPgn::with_blocks(source, moves, BLOCK, workers)
    }

    /// Reads `source` in blocks of about `block` bytes with `workers` threads.
    pub fn with_blocks<R: Read + Send + 'static>(
        source: R,
        moves: bool,
        block: usize,
        workers: usize,
    ) -> ParallelPgn {
        let workers = workers.max(1);
        let (slot_tx, slots) = mpsc::sync_channel(workers + 1);
        let (work_tx, work_rx) = mpsc::sync_channel::<(Vec<u8>, mpsc::Sender<BlockRead>)>(workers);
        let work_rx = Arc::new(Mutex::new(work_rx));
        for _ in 0..workers {
            let work_rx = Arc::clone(&work_rx);
            std::thread::spawn(move || loop {
                // The lock is held only to take the next block, never while reading one.
                let next = work_rx.lock().map(|rx| rx.recv());
                let Ok(Ok((bytes, done))) = next else {
                    return;
                };
                let read = read_block(bytes, Progress::start(moves));
                let _ = done.send(read);
            });
        }
        std::thread::spawn(move || cut_blocks(source, block, &slot_tx, &work_tx));
        ParallelPgn {
            slots,
            ready: VecDeque::new(),
            at: Progress::start(moves),
            started: false,
            done: false,
        }
    }

    /// Takes in the next block's games; `false` at the end of the source.
    fn take_block(&mut self) -> bool {
        let read = match self.slots.recv() {
            Ok(Slot::Block(read)) => read.recv().expect("a block's worker answers"),
            Ok(Slot::Failed(e)) => {
                self.ready.push_back(Err(PgnError {
                    line: self.at.line_no + 1,
                    reason: e.to_string(),
                }));
                self.done = true;
                return true;
            }
            Err(_) => return false,
        };
        if !self.started || self.at.fresh_before_tags() {
            self.started = true;
            // The block's first line, a tag, closes the game in progress, unless it could
            // not be read.
            let first_failed = matches!(read.games.first(), Some(Err(e)) if e.line == 1);
            if self.at.in_moves && !first_failed {
                self.ready
                    .push_back(Ok(std::mem::take(&mut self.at.current)));
            }
            let base = self.at.line_no;
            for game in read.games {
                let game = game
                    .map(|mut g| {
                        g.line += base;
                        g
                    })
                    .map_err(|mut e| {
                        e.line += base;
                        e
                    });
                self.done |= game.is_err();
                self.ready.push_back(game);
            }
            self.at = read.end.numbered_from(base);
        } else {
            // The cut fell where the text before it decides what the block's lines mean.
            let at = std::mem::take(&mut self.at);
            let read = read_block(read.bytes, at);
            self.done |= read.games.iter().any(Result::is_err);
            self.ready.extend(read.games);
            self.at = read.end;
        }
        true
    }
}

impl Iterator for ParallelPgn {
    type Item = Result<PgnGame, PgnError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(game) = self.ready.pop_front() {
                if game.is_err() {
                    // Nothing after an error is read, as with `PgnReader`.
                    self.ready.clear();
                }
                return Some(game);
            }
            if self.done {
                return None;
            }
            if !self.take_block() {
                self.done = true;
                return self.at.finish();
            }
        }
    }
}

/// Reads a block from `at` to its end, the game in progress left open.
fn read_block(bytes: Vec<u8>, at: Progress) -> BlockRead {
    let mut reader = PgnReader::resume(&bytes[..], at);
    let mut games = Vec::new();
    while let Some(game) = reader.next_in_source() {
        let failed = game.is_err();
        games.push(game);
        if failed {
            break;
        }
    }
    let end = reader.progress();
    BlockRead { bytes, games, end }
}

/// Reads the source and hands it to the workers in blocks, each but the first starting at a
/// tag line that follows a line that is not a tag (where one game's tags begin).
fn cut_blocks<R: Read>(
    mut source: R,
    block: usize,
    slots: &SyncSender<Slot>,
    work: &SyncSender<(Vec<u8>, mpsc::Sender<BlockRead>)>,
) {
    let mut buffer: Vec<u8> = Vec::with_capacity(block * 2);
    let mut ended = false;
    while !ended {
        // Read into the buffer's spare room as it is: zeroing it first cost more than the
        // reading of results.
        buffer.reserve_exact(block);
        match (&mut source).take(block as u64).read_to_end(&mut buffer) {
            Ok(n) => ended = n < block,
            Err(e) => {
                hand_over(std::mem::take(&mut buffer), slots, work);
                let _ = slots.send(Slot::Failed(e));
                return;
            }
        }
        let cut = if ended {
            Some(buffer.len())
        } else {
            last_game_start(&buffer)
        };
        // No game starts in the buffer: one game longer than a block, read on.
        let Some(cut) = cut else { continue };
        let rest = buffer.split_off(cut);
        if !hand_over(std::mem::replace(&mut buffer, rest), slots, work) {
            return;
        }
    }
}

/// Gives a block to the workers, its place kept in the order; `false` once nobody reads.
fn hand_over(
    bytes: Vec<u8>,
    slots: &SyncSender<Slot>,
    work: &SyncSender<(Vec<u8>, mpsc::Sender<BlockRead>)>,
) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let (done, read) = mpsc::channel();
    slots.send(Slot::Block(read)).is_ok() && work.send((bytes, done)).is_ok()
}

/// The last place in `text` where a tag line follows a line that is not one; failing that,
/// the last tag line at all. `None` where no line but the first starts with a tag.
fn last_game_start(text: &[u8]) -> Option<usize> {
    let mut any = None;
    for newline in memchr::memmem::rfind_iter(text, b"\n[").take(64) {
        let start = newline + 1;
        any.get_or_insert(start);
        let previous_start = memchr::memrchr(b'\n', &text[..newline]).map_or(0, |p| p + 1);
        let previous = &text[previous_start..newline];
        let first = previous.iter().find(|b| !b.is_ascii_whitespace());
        if first != Some(&b'[') {
            return Some(start);
        }
    }
    any
}

impl Progress {
    /// Whether a tag line read from here starts the reading afresh: no comment or variation
    /// open, and no game whose tags the line would add to.
    fn fresh_before_tags(&self) -> bool {
        self.comment_depth == 0
            && self.variation_depth == 0
            && (self.in_moves || (self.current == PgnGame::default() && !self.has_move))
    }

    /// This progress, read from a block, with its lines numbered in the whole file.
    fn numbered_from(mut self, base: usize) -> Progress {
        self.line_no += base;
        self.comment_start += base;
        if self.current != PgnGame::default() || self.has_move || self.in_moves {
            self.current.line += base;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str, moves: bool, block: usize) -> (Vec<String>, Vec<String>) {
        let one = PgnReader::resume(text.as_bytes(), Progress::start(moves));
        let many = ParallelPgn::with_blocks(
            std::io::Cursor::new(text.as_bytes().to_vec()),
            moves,
            block,
            3,
        );
        let show = |g: Result<PgnGame, PgnError>| format!("{g:?}");
        (one.map(show).collect(), many.map(show).collect())
    }

    #[test]
    fn a_long_file_reads_as_one_thread_reads_it() {
        let mut text = String::from("\u{feff}");
        for i in 0..300 {
            text.push_str(&format!(
                "[White \"w{i}\"]\n[Black \"b\"]\n\n1. e2e4 {{a\n[Fake \"tag\"]\n\n}} e7e5 (1... d5\n\n) 1-0\n\n"
            ));
        }
        for block in [7, 64, 1000, 1 << 20] {
            let (one, many) = both(&text, false, block);
            assert_eq!(one.len(), 300);
            assert_eq!(one, many, "blocks of {block}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Whatever the text and wherever the blocks are cut, the games, tags, results and
        /// error lines are those the one-thread reader finds.
        #[test]
        fn blocks_read_what_one_reader_reads(
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
            block in 1usize..40,
            moves in proptest::bool::ANY,
        ) {
            let text: String = pieces.concat();
            let (one, many) = both(&text, moves, block);
            proptest::prop_assert_eq!(one, many, "{:?}", text);
        }
    }
}
