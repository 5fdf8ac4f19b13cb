//! Tic-tac-toe, kept outside arbiter: the whole of a game is this one rules file. The two
//! programs in `src/bin/` register it and then are arbiter and the bundled engine, playing it.
//!
//! X (White) moves first on a 3x3 board; a move names the square it marks (`b2`). The game
//! ends with three in a row, or with a full board, two endings of its own
//! ([`Position::ENDINGS`]) that no other game has.

use arbiter_rules::game::drawing::{Figure, Shape};
use arbiter_rules::game::{
    Color, Drawing, FenError, History, MoveError, Outcome, Position, Removals, Status, Termination,
};

const THREE_IN_A_ROW: &str = "three in a row";
const FULL_BOARD: &str = "full board";

const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// Squares a1..c3, index = rank * 3 + file; `None` is empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicTacToe {
    cells: [Option<Color>; 9],
    turn: Color,
}

fn square_name(index: usize) -> String {
    format!("{}{}", (b'a' + (index % 3) as u8) as char, index / 3 + 1)
}

impl TicTacToe {
    fn winner(&self) -> Option<Color> {
        LINES.iter().find_map(|line| {
            let first = self.cells[line[0]]?;
            line.iter()
                .all(|&i| self.cells[i] == Some(first))
                .then_some(first)
        })
    }
}

/// Both sides write capitals, so the side is the letter, not its case.
fn figure(token: &str) -> Option<Figure> {
    let side = match token {
        "X" => Color::White,
        "O" => Color::Black,
        _ => return None,
    };
    Some(Figure {
        letter: token.chars().next(),
        ..Figure::turned(side, Shape::Disc, 0)
    })
}

impl Position for TicTacToe {
    type Move = u8;

    const ID: &'static str = "tictactoe";
    const DESCRIPTION: &'static str = "tic-tac-toe, registered at run time by arbiter-tictactoe";
    const START_FEN: &'static str = "3/3/3 w";
    const ENDINGS: &'static [&'static str] = &[THREE_IN_A_ROW, FULL_BOARD];
    const DRAWING: Drawing = Drawing {
        files: 3,
        figure,
        legend: &[("X", "X moves first"), ("O", "O")],
        ..Drawing::STANDARD
    };
    const BENCH_DEPTHS: (u32, u32) = (6, 9);

    fn from_fen(fen: &str) -> Result<Self, FenError> {
        let err = |reason: &str| FenError::new(Self::ID, fen, reason);
        let mut fields = fen.split_whitespace();
        let board = fields.next().ok_or_else(|| err("empty"))?;
        let turn = match fields.next() {
            Some("w") => Color::White,
            Some("b") => Color::Black,
            _ => return Err(err("the side to move must be w or b")),
        };
        if fields.next().is_some() {
            return Err(err("nothing may follow the side to move"));
        }
        let ranks: Vec<&str> = board.split('/').collect();
        if ranks.len() != 3 {
            return Err(err("three ranks are needed"));
        }
        let mut cells = [None; 9];
        // FEN ranks run from the top (rank 3) down.
        for (row, rank) in ranks.iter().enumerate() {
            let mut file = 0;
            for c in rank.chars() {
                match c {
                    '1'..='3' => file += c as usize - '0' as usize,
                    'X' | 'O' if file < 3 => {
                        let side = if c == 'X' { Color::White } else { Color::Black };
                        cells[(2 - row) * 3 + file] = Some(side);
                        file += 1;
                    }
                    _ => return Err(err("a rank holds X, O and digits for three squares")),
                }
            }
            if file != 3 {
                return Err(err("a rank holds X, O and digits for three squares"));
            }
        }
        let count = |side| cells.iter().filter(|&&c| c == Some(side)).count();
        let (x, o) = (count(Color::White), count(Color::Black));
        let expected = if x == o { Color::White } else { Color::Black };
        if !(x == o || x == o + 1) || turn != expected {
            return Err(err("X moves first and the sides take turns"));
        }
        Ok(TicTacToe { cells, turn })
    }

    fn fen(&self) -> String {
        let ranks: Vec<String> = (0..3)
            .rev()
            .map(|rank| {
                let mut text = String::new();
                let mut empty = 0;
                for file in 0..3 {
                    match self.cells[rank * 3 + file] {
                        None => empty += 1,
                        Some(side) => {
                            if empty > 0 {
                                text.push_str(&empty.to_string());
                                empty = 0;
                            }
                            text.push(if side == Color::White { 'X' } else { 'O' });
                        }
                    }
                }
                if empty > 0 {
                    text.push_str(&empty.to_string());
                }
                text
            })
            .collect();
        let turn = if self.turn == Color::White { "w" } else { "b" };
        format!("{} {turn}", ranks.join("/"))
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn generate(&self, out: &mut Vec<u8>) {
        if self.winner().is_none() {
            out.extend((0..9u8).filter(|&i| self.cells[i as usize].is_none()));
        }
    }

    fn play(&mut self, mv: u8) -> Removals {
        self.cells[mv as usize] = Some(self.turn);
        self.turn = self.turn.other();
        Removals::default()
    }

    fn parse_move(&self, text: &str) -> Result<u8, MoveError> {
        let index = (0..9)
            .find(|&i| square_name(i) == text)
            .ok_or_else(|| MoveError::malformed(text, "a move is a square from a1 to c3"))?;
        let mut moves = Vec::new();
        self.generate(&mut moves);
        if moves.contains(&(index as u8)) {
            Ok(index as u8)
        } else {
            Err(MoveError::illegal(
                text,
                "that square is taken, or the game is over",
            ))
        }
    }

    fn move_text(&self, mv: u8) -> String {
        square_name(mv as usize)
    }

    fn key(&self) -> u64 {
        self.cells.iter().fold(self.turn as u64, |key, cell| {
            key * 3 + cell.map_or(0, |side| side as u64 + 1)
        })
    }

    fn board_status(&self) -> Status {
        match self.winner() {
            Some(side) => Status::Over(side.wins(), Termination::Own(THREE_IN_A_ROW)),
            None if self.cells.iter().all(Option::is_some) => {
                Status::Over(Outcome::Draw, Termination::Own(FULL_BOARD))
            }
            None => Status::Ongoing,
        }
    }

    fn judge(history: &History<Self>) -> Status {
        history.current().board_status()
    }

    fn render(&self) -> String {
        (0..3)
            .rev()
            .map(|rank| {
                (0..3)
                    .map(|file| match self.cells[rank * 3 + file] {
                        None => '.',
                        Some(Color::White) => 'X',
                        Some(Color::Black) => 'O',
                    })
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    }
}
