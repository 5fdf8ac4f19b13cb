//! What every board of these games shares: squares in a padded array (a border of off-board
//! cells, so that a step off the board lands on one), algebraic square names, and the FEN board
//! field — ranks from the top, `/` between them, runs of empty squares as numbers.

use crate::game::SquareName;

/// A `files` x `ranks` board stored rank by rank in rows of `stride` cells, `border` cells of
/// padding before the first file and below the first rank.
#[derive(Clone, Copy, Debug)]
pub struct Mailbox {
    pub files: i32,
    pub ranks: i32,
    pub stride: i32,
    pub border: i32,
    /// The number the bottom rank is called by: 1 in chess-like games, 0 in Leiserchess.
    pub first_rank: i32,
}

impl Mailbox {
    #[inline(always)]
    pub const fn sq(self, file: i32, rank: i32) -> usize {
        ((rank + self.border) * self.stride + file + self.border) as usize
    }

    #[inline(always)]
    pub const fn file_rank(self, s: usize) -> (i32, i32) {
        (
            s as i32 % self.stride - self.border,
            s as i32 / self.stride - self.border,
        )
    }

    /// Every square of the board, rank by rank from the bottom.
    pub fn squares(self) -> impl Iterator<Item = usize> {
        (0..self.ranks).flat_map(move |r| (0..self.files).map(move |f| self.sq(f, r)))
    }

    /// `a1`, `j10`, or `a0` where ranks count from 0.
    pub fn square_name(self, s: usize) -> SquareName {
        let (f, r) = self.file_rank(s);
        SquareName::new(&format!(
            "{}{}",
            (b'a' + f as u8) as char,
            r + self.first_rank
        ))
    }

    /// A square's name as `square_name` writes it; anything else (a leading zero, a square off
    /// the board) is `None`.
    pub fn parse_square(self, text: &str) -> Option<usize> {
        let (&letter, digits) = text.as_bytes().split_first()?;
        let digits = std::str::from_utf8(digits).ok()?;
        let well_formed = letter.is_ascii_lowercase()
            && (1..=2).contains(&digits.len())
            && digits.bytes().all(|d| d.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        if !well_formed {
            return None;
        }
        let file = (letter - b'a') as i32;
        let rank = digits.parse::<i32>().ok()? - self.first_rank;
        ((0..self.files).contains(&file) && (0..self.ranks).contains(&rank))
            .then(|| self.sq(file, rank))
    }

    /// A padded array with every board square `empty` and every other cell `off`.
    pub fn cells<const N: usize>(self, empty: u8, off: u8) -> [u8; N] {
        let mut cells = [off; N];
        for s in self.squares() {
            cells[s] = empty;
        }
        cells
    }

    /// Reads a FEN board field. Runs of empty squares are decimal numbers (and `ten`, where the
    /// game writes ten empty squares as one character); anything else starts a piece, read by
    /// `piece(text, square)` from the rest of the rank: it places the piece and says how many
    /// bytes it took. Errors name the rank.
    pub fn read_board(
        self,
        placement: &str,
        ten: Option<u8>,
        mut piece: impl FnMut(&str, usize) -> Result<usize, String>,
    ) -> Result<(), String> {
        let rows: Vec<&str> = placement.split('/').collect();
        if rows.len() != self.ranks as usize {
            return Err(format!(
                "{} ranks given, the board has {}",
                rows.len(),
                self.ranks
            ));
        }
        for (i, row) in rows.iter().enumerate() {
            let rank = self.ranks - 1 - i as i32;
            let name = rank + self.first_rank;
            let too_many = || format!("rank {name} has more than {} squares", self.files);
            let (mut file, mut j) = (0i32, 0usize);
            while j < row.len() {
                let b = row.as_bytes()[j];
                if b.is_ascii_digit() || Some(b) == ten {
                    let run = if Some(b) == ten {
                        j += 1;
                        10
                    } else {
                        let digits = row[j..].bytes().take_while(u8::is_ascii_digit).count();
                        let text = &row[j..j + digits];
                        j += digits;
                        match text.parse::<i32>() {
                            Ok(n) if (1..=self.files).contains(&n) => n,
                            _ => {
                                return Err(format!(
                                    "bad empty-square count '{text}' on rank {name}"
                                ))
                            }
                        }
                    };
                    file += run;
                } else {
                    if file >= self.files {
                        return Err(too_many());
                    }
                    let used = piece(&row[j..], self.sq(file, rank))
                        .map_err(|why| format!("{why} on rank {name}"))?;
                    j += used.max(1);
                    file += 1;
                }
                if file > self.files {
                    return Err(too_many());
                }
            }
            if file != self.files {
                return Err(format!(
                    "rank {name} has {file} squares, not {}",
                    self.files
                ));
            }
        }
        Ok(())
    }

    /// Writes the FEN board field: `piece(square)` names what stands there, `None` when empty.
    pub fn write_board(self, ten: Option<char>, piece: impl Fn(usize) -> Option<String>) -> String {
        let mut out = String::with_capacity(90);
        let flush = |out: &mut String, empty: &mut i32| {
            match (*empty, ten) {
                (0, _) => {}
                (10, Some(c)) => out.push(c),
                (n, _) => out.push_str(&n.to_string()),
            }
            *empty = 0;
        };
        for rank in (0..self.ranks).rev() {
            let mut empty = 0;
            for file in 0..self.files {
                match piece(self.sq(file, rank)) {
                    None => empty += 1,
                    Some(text) => {
                        flush(&mut out, &mut empty);
                        out.push_str(&text);
                    }
                }
            }
            flush(&mut out, &mut empty);
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN: Mailbox = Mailbox {
        files: 10,
        ranks: 10,
        stride: 12,
        border: 1,
        first_rank: 1,
    };

    #[test]
    fn squares_are_named_and_read_back() {
        for s in TEN.squares() {
            let name = TEN.square_name(s);
            assert_eq!(
                TEN.parse_square(name.as_str()),
                Some(s),
                "{}",
                name.as_str()
            );
        }
        for bad in ["a0", "a01", "k1", "a11", "A1", "a", "", "a1x"] {
            assert_eq!(TEN.parse_square(bad), None, "{bad}");
        }
        let zero_based = Mailbox {
            first_rank: 0,
            ..TEN
        };
        assert_eq!(zero_based.parse_square("a0"), Some(zero_based.sq(0, 0)));
        assert_eq!(zero_based.parse_square("j10"), None);
    }

    #[test]
    fn a_board_field_reads_and_writes_back() {
        let field = "10/k9/10/10/10/10/10/10/10/4K5";
        let mut cells: [u8; 144] = TEN.cells(0, 0xff);
        TEN.read_board(field, None, |text, s| {
            cells[s] = text.as_bytes()[0];
            Ok(1)
        })
        .unwrap();
        let written = TEN.write_board(None, |s| {
            (cells[s] != 0).then(|| (cells[s] as char).to_string())
        });
        assert_eq!(written, field);
        let starred = TEN.write_board(Some('*'), |s| {
            (cells[s] != 0).then(|| (cells[s] as char).to_string())
        });
        assert!(starred.starts_with("*/k9/*/"), "{starred}");
        let err = |f: &str| TEN.read_board(f, Some(b'*'), |_, _| Ok(1)).unwrap_err();
        assert_eq!(err("10/10"), "2 ranks given, the board has 10");
        assert!(err("11/*/*/*/*/*/*/*/*/*").contains("'11' on rank 10"));
        assert!(err("*/*/*/*/*/*/*/*/*/9kk").contains("rank 1 has more than 10"));
        assert!(err("*/*/*/*/*/*/*/*/*/9").contains("rank 1 has 9 squares, not 10"));
    }
}
