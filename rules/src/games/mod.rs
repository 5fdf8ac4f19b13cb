//! The rules of each game, one module per game.

mod beam;
pub mod chess;
mod chess_lines;
mod laser_bits;
mod laser_board;
pub mod laserchess;
pub mod leaperhouse;
pub mod leiserchess;
pub mod leiserchess2012;
mod mailbox;
pub mod ultima;
