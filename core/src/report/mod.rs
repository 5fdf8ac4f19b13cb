//! What a run leaves to read: the standings and tables (report.md, CSV), the games (PGN), the
//! HTML report with its charts and game viewer, and the board pictures. Everything here reads
//! the run's journal and totals; nothing here plays.

pub mod board_svg;
pub mod charts;
pub mod files;
mod html;
pub mod story;
pub mod viewer;
pub mod watch;
mod write;

pub use write::*;
