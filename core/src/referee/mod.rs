//! The referee: clocks, adjudication, and the loop that plays one game between two engines.

pub mod adjudication;
pub mod game;
pub mod pv_check;
pub mod record;
pub mod shown;
pub mod tablebase;

pub use crate::clock::{Clock, TimeControl};
pub use adjudication::{Adjudication, DrawRule, ResignRule};
pub use game::{play_game, GameError, GameSpec, Player, Sight, Spectator};
pub use record::{now_for_names, GameRecord, MoveRecord};
