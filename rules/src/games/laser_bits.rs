//! Bitboards of a Leiserchess board (2018 or 2012), for counting the last ply's moves in a few
//! dozen instructions instead of visiting every square's neighbours.
//!
//! Bit `i` stands for mailbox cell `i + A1`, so a rank is 12 bits wide as in the mailbox. At
//! most 10 of them are squares: a step off the side of the board lands on a border bit that
//! no set holds, instead of wrapping onto the next rank. Steps off the top or the bottom fall
//! out of the 128 bits.

use super::laser_board::{LaserBoard, BLACK, PRESENT, STRIDE};
use crate::game::Color;

/// The mailbox cell of bit 0: file 0 of rank 0.
const A1: usize = STRIDE + 1;
/// Bit distances of the eight neighbours: each one up and down.
const STEPS: [u32; 4] = [13, 12, 11, 1];

/// Which squares hold a piece of the side to move, and of its opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bits {
    pub own: u128,
    pub enemy: u128,
    /// Every square of the board.
    pub board: u128,
}

impl Bits {
    /// The bits of a board `SIZE` squares wide (8 or 10), known when compiled so that the
    /// ranks are gathered without a loop.
    #[inline]
    pub fn of<const SIZE: usize>(board: &LaserBoard) -> Bits {
        debug_assert_eq!(board.size as usize, SIZE);
        let (mut white, mut black) = (0u128, 0u128);
        for rank in 0..SIZE {
            let first = A1 + rank * STRIDE;
            let (w, b) = rank_bits::<SIZE>(&board.cells, first);
            white |= (w as u128) << (rank * STRIDE);
            black |= (b as u128) << (rank * STRIDE);
        }
        let (own, enemy) = match board.turn {
            Color::White => (white, black),
            Color::Black => (black, white),
        };
        Bits {
            own,
            enemy,
            board: board_bits(SIZE),
        }
    }

    pub fn empty(&self) -> u128 {
        self.board & !(self.own | self.enemy)
    }
}

/// Runs `count` compiled for the processor's population-count instruction where it has one
/// (every x86-64 since about 2008, but not the default target's baseline, which counts bits
/// with a dozen shifts and masks); as compiled elsewhere.
#[inline(always)]
pub fn counting(count: impl FnOnce() -> u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt") {
        #[target_feature(enable = "popcnt")]
        unsafe fn with_popcnt(count: impl FnOnce() -> u32) -> u32 {
            count()
        }
        // SAFETY: the processor was just seen to have the instruction.
        return unsafe { with_popcnt(count) };
    }
    count()
}

/// Every square next to one in `set` (on the board or not).
#[inline]
pub fn around(set: u128) -> u128 {
    STEPS
        .iter()
        .fold(0, |acc, &s| acc | (set << s) | (set >> s))
}

/// How many (square of `from`, neighbouring square of `to`) pairs there are.
#[inline]
pub fn adjacent_pairs(from: u128, to: u128) -> u32 {
    STEPS
        .iter()
        .map(|&s| ((from << s) & to).count_ones() + ((from >> s) & to).count_ones())
        .sum()
}

/// The neighbours of the square of bit `i`.
#[inline]
pub fn neighbours(i: u32) -> u128 {
    NEIGHBOURS[i as usize]
}

/// One rank's squares (`SIZE` cells from `first`) as bits of White's pieces and Black's. Ten
/// cells are read as two overlapping eights.
#[inline]
fn rank_bits<const SIZE: usize>(cells: &[u8], first: usize) -> (u32, u32) {
    let eight = |at: usize| {
        let bytes: [u8; 8] = cells[at..at + 8].try_into().expect("eight cells");
        gather8(u64::from_le_bytes(bytes))
    };
    let (white, black) = eight(first);
    if SIZE == 8 {
        return (white, black);
    }
    // Files 2..=9; their top two are files 8 and 9.
    let (w, b) = eight(first + 2);
    let top = |bits: u32| (bits >> 6) << 8;
    (white | top(w), black | top(b))
}

/// Eight cells' presence and colour flags packed into eight bits each: the flag of each byte
/// is moved to its lowest bit, and one multiplication gathers the eight lowest bits into the
/// top byte (no two partial products meet, so nothing carries).
#[inline]
fn gather8(cells: u64) -> (u32, u32) {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let present = (cells >> PRESENT.trailing_zeros()) & LOW;
    let black = (cells >> BLACK.trailing_zeros()) & LOW;
    let pack = |bytes: u64| (bytes.wrapping_mul(GATHER) >> 56) as u32;
    (pack(present & !black), pack(present & black))
}

/// The squares of a board `size` squares wide.
const fn board_bits(size: usize) -> u128 {
    let mut bits = 0u128;
    let mut rank = 0;
    while rank < size {
        let mut file = 0;
        while file < size {
            bits |= 1 << (rank * STRIDE + file);
            file += 1;
        }
        rank += 1;
    }
    bits
}

const NEIGHBOURS: [u128; 128] = {
    let mut table = [0u128; 128];
    let mut i = 0;
    while i < 128 {
        let bit = 1u128 << i;
        let mut k = 0;
        while k < STEPS.len() {
            table[i] |= (bit << STEPS[k]) | (bit >> STEPS[k]);
            k += 1;
        }
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::laser_board::{color_of, is_piece, NEIGHBOURS as CELL_NEIGHBOURS};

    fn bit(sq: usize) -> u128 {
        1 << (sq - A1)
    }

    #[test]
    fn bits_hold_each_sides_pieces_and_neighbours_are_the_mailboxs() {
        for (size, fen) in [
            (8, "ss7/3nwse3/2nwse4/1nwse3NW1/1se3NWSE1/4NWSE2/3NWSE3/7NN B"),
            (
                10,
                <crate::games::leiserchess2012::Leiserchess2012 as crate::game::Position>::START_FEN,
            ),
        ] {
            let board = LaserBoard::parse_fen("t", size, fen).unwrap();
            let bits = if size == 8 {
                Bits::of::<8>(&board)
            } else {
                Bits::of::<10>(&board)
            };
            let mut own = 0;
            let mut enemy = 0;
            for sq in board.squares() {
                let cell = board.cells[sq];
                if is_piece(cell) {
                    if color_of(cell) == board.turn {
                        own |= bit(sq);
                    } else {
                        enemy |= bit(sq);
                    }
                }
                let mailbox = CELL_NEIGHBOURS
                    .iter()
                    .map(|d| (sq as isize + d) as usize)
                    .filter(|&n| board.cells[n] != super::super::laser_board::OFF)
                    .fold(0, |acc, n| acc | bit(n));
                assert_eq!(neighbours((sq - A1) as u32) & bits.board, mailbox, "{sq}");
            }
            assert_eq!((bits.own, bits.enemy), (own, enemy), "{fen}");
            assert_eq!(bits.board.count_ones() as usize, size as usize * size as usize);
        }
    }

    /// The counts on bitboards against the moves listed one by one, along random games of
    /// both versions: every position of 300 games of up to 120 plies.
    #[test]
    fn counted_moves_are_the_listed_moves_along_random_games() {
        use crate::game::perft::BulkMoves;
        use crate::game::Position;
        use crate::games::{leiserchess::Leiserchess, leiserchess2012::Leiserchess2012};

        fn walk<P: BulkMoves>(start: &P, seed: u64) -> usize {
            let mut state = seed;
            let mut checked = 0;
            for _ in 0..300 {
                let mut pos = start.clone();
                for _ in 0..120 {
                    let mut moves = Vec::new();
                    pos.visit(|m| moves.push(m));
                    assert_eq!(pos.count(), moves.len() as u64);
                    checked += 1;
                    if moves.is_empty() {
                        break;
                    }
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    pos.make_move(moves[(state >> 33) as usize % moves.len()]);
                    if pos.is_leaf() {
                        break;
                    }
                }
            }
            checked
        }
        let old = Leiserchess::from_fen(Leiserchess::START_FEN).unwrap();
        let new = Leiserchess2012::from_fen(Leiserchess2012::START_FEN).unwrap();
        assert!(walk(&old, 1) > 10_000);
        assert!(walk(&new, 2) > 10_000);
    }
}
