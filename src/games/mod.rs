//! The rules of each game, one module per game.

mod laser_board;
pub mod leiserchess;
pub mod leiserchess2012;
