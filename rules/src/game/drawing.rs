//! What a picture of a game's board needs from its rules: how its FEN writes the squares, and how
//! its ranks are numbered. Each game states it on its [`Position`](super::Position); drawing code
//! outside the rules asks the game, never its id.

/// How one game's FEN board field reads as squares, and how ranks are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drawing {
    /// Squares per rank: what a `*` (a rank with nothing on it, where the game writes one) means.
    pub files: usize,
    /// The bottom rank's number in square names (`a0` in Leiserchess, `a1` elsewhere).
    pub first_rank: i32,
    /// Letters per piece (Leiserchess writes two, `NW`); other games write one, with `+` signs
    /// after it (Laser Chess's facing) or before it (a promoted Leaperhouse piece).
    pub letters: usize,
}

impl Drawing {
    /// An 8x8 board, ranks from 1, one letter per piece.
    pub const STANDARD: Drawing = Drawing {
        files: 8,
        first_rank: 1,
        letters: 1,
    };

    /// The pieces of a FEN's board field, rank by rank from the top: `None` for an empty square.
    /// What follows the board (side to move, a Leaperhouse hand in brackets) is left out.
    pub fn squares(&self, fen: &str) -> Vec<Vec<Option<String>>> {
        let field = fen.split_whitespace().next().unwrap_or("");
        let field = field.split('[').next().unwrap_or("");
        field
            .split('/')
            .map(|rank| self.rank_squares(rank))
            .collect()
    }

    fn rank_squares(&self, rank: &str) -> Vec<Option<String>> {
        let chars: Vec<char> = rank.chars().collect();
        let mut cells = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_ascii_digit() {
                let digits: String = chars[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                i += digits.len();
                cells.extend(std::iter::repeat_n(None, digits.parse().unwrap_or(0)));
                continue;
            }
            if chars[i] == '*' {
                cells.extend(std::iter::repeat_n(None, self.files));
                i += 1;
                continue;
            }
            let start = i;
            if chars[i] == '+' {
                i += 1;
            }
            i += self.letters;
            while self.letters == 1 && i < chars.len() && chars[i] == '+' {
                i += 1;
            }
            let end = i.min(chars.len());
            cells.push(Some(chars[start..end].iter().collect()));
        }
        cells
    }

    /// (file, rank from the bottom) of a square name such as `e4` or `j10`.
    pub fn coords(&self, name: &str) -> Option<(i32, i32)> {
        let (&letter, digits) = name.as_bytes().split_first()?;
        let rank: i32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
        Some((i32::from(letter) - i32::from(b'a'), rank - self.first_rank))
    }
}

#[cfg(test)]
mod tests {
    use crate::game::games;

    #[test]
    fn every_games_start_gives_full_ranks_of_its_width() {
        for entry in games() {
            let rows = entry.drawing.squares(entry.start_fen);
            assert!(
                rows.iter().all(|r| r.len() == entry.drawing.files),
                "{}: {rows:?}",
                entry.id
            );
        }
        let laser = crate::game::find_game("laserchess").unwrap().drawing;
        let rows = laser.squares("l++3d++kd++b+++2/*/8/8/8/8/8/7L w");
        assert_eq!(rows[0][0].as_deref(), Some("l++"));
        assert_eq!(rows[1].len(), 10);
        let leiser = crate::game::find_game("leiserchess").unwrap().drawing;
        assert_eq!(leiser.coords("h0"), Some((7, 0)));
        assert_eq!(leiser.squares("ss7/8 W")[0][0].as_deref(), Some("ss"));
    }
}
