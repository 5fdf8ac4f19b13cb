//! Whether a journal entry belongs to a run: the right game, players and opening for its place
//! in the schedule, and moves and a result the rules stand behind. A journal is a file anyone can
//! edit or copy between runs; `--resume`, `arbiter merge` and a split run's pooled SPRT count a
//! game only once it passes.

use super::journal::Entry;
use super::openings::Opening;
use super::runner::Schedule;
use super::schedule::PairSchedule;
use crate::game::{Color, GameEntry, Status, Termination};
use std::collections::HashMap;

pub struct RunCheck {
    entry: &'static GameEntry,
    names: Vec<String>,
    schedule: PairSchedule,
    rules: Vec<(String, String)>,
    /// The book, when at hand; without it the opening is not checked.
    openings: Option<Vec<Opening>>,
    /// Each opening's start and moves in the game's own notation, as a record holds them.
    normalised: HashMap<usize, (Option<String>, Vec<String>)>,
}

impl RunCheck {
    pub fn new(
        entry: &'static GameEntry,
        names: Vec<String>,
        schedule: PairSchedule,
        rules: Vec<(String, String)>,
        openings: Option<Vec<Opening>>,
    ) -> RunCheck {
        RunCheck {
            entry,
            names,
            schedule,
            rules,
            openings,
            normalised: HashMap::new(),
        }
    }

    /// The schedule's number of games.
    pub fn games(&self) -> u64 {
        self.schedule.len()
    }

    /// Why `e` is not a game of this run, if it is not.
    pub fn check(&mut self, e: &Entry) -> Result<(), String> {
        self.check_place(e)?;
        self.replay(&e.record)
    }

    /// Checks `entries` as `check` does, their moves replayed on every core; the first that is
    /// not a game of the run, by its position in `entries`, and why.
    pub fn check_batch(&mut self, entries: &[Entry]) -> Result<(), (usize, String)> {
        let placed = entries
            .iter()
            .enumerate()
            .find_map(|(i, e)| self.check_place(e).err().map(|why| (i, why)));
        let upto = placed.as_ref().map_or(entries.len(), |(i, _)| *i);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = upto.div_ceil(threads).max(1);
        let this: &RunCheck = self;
        let replayed = std::thread::scope(|scope| {
            let parts: Vec<_> = entries[..upto]
                .chunks(chunk)
                .enumerate()
                .map(|(c, part)| {
                    scope.spawn(move || {
                        part.iter().enumerate().find_map(|(k, e)| {
                            this.replay(&e.record).err().map(|why| (c * chunk + k, why))
                        })
                    })
                })
                .collect();
            parts
                .into_iter()
                .filter_map(|part| part.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .min_by_key(|(i, _)| *i)
        });
        match replayed.or(placed) {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }

    /// Why `e` does not belong where the schedule puts it (players, round, opening), if it
    /// does not; its moves are not replayed.
    fn check_place(&mut self, e: &Entry) -> Result<(), String> {
        let record = &e.record;
        if e.index >= self.schedule.len() {
            return Err(format!(
                "game {} is past the schedule's {} games",
                u128::from(e.index) + 1,
                self.schedule.len()
            ));
        }
        let pairing = self.schedule.pairing(e.index);
        let (white, black) = (&self.names[pairing.white], &self.names[pairing.black]);
        if record.game != self.entry.id {
            return Err(format!("a game of {}, not {}", record.game, self.entry.id));
        }
        if (&record.white, &record.black) != (white, black) {
            return Err(format!(
                "{} against {}, where the schedule has {white} against {black}",
                record.white, record.black
            ));
        }
        if record.round != pairing.round {
            return Err(format!(
                "round {}, where the schedule has {}",
                record.round, pairing.round
            ));
        }
        self.check_opening(record, pairing.opening)
    }

    fn check_opening(
        &mut self,
        record: &crate::referee::GameRecord,
        opening: usize,
    ) -> Result<(), String> {
        // Without the book (a merge on a machine that does not have it) the opening cannot be
        // told, nor which one the schedule gave.
        let Some(book) = &self.openings else {
            return Ok(());
        };
        if book.is_empty() {
            return match record.opening {
                0 if record.start_fen.is_none() && !record.moves.iter().any(|m| m.book) => Ok(()),
                _ => Err("an opening, where the run plays from the start position".into()),
            };
        }
        if record.opening != opening + 1 {
            return Err(format!(
                "opening {}, where the schedule has opening {}",
                record.opening,
                opening + 1
            ));
        }
        let (entry, rules) = (self.entry, &self.rules);
        let expected = self.normalised.entry(opening).or_insert_with(|| {
            let o = &book[opening];
            let mut moves = Vec::new();
            if let Ok(mut game) = entry.new_game_with(o.fen.as_deref(), rules) {
                for mv in &o.moves {
                    match game.play(mv) {
                        Ok(report) => moves.push(report.mv),
                        Err(_) => break,
                    }
                }
            }
            (o.fen.clone(), moves)
        });
        let played: Vec<&str> = record
            .moves
            .iter()
            .take_while(|m| m.book)
            .map(|m| m.text.as_str())
            .collect();
        if record.start_fen != expected.0 || played != expected.1 {
            return Err(format!(
                "its opening ({}) is not the book's opening {}",
                record.opening_text(),
                opening + 1
            ));
        }
        Ok(())
    }

    fn replay(&self, record: &crate::referee::GameRecord) -> Result<(), String> {
        replay(self.entry, &self.rules, record).map(|_| ())
    }
}

/// Who decided a game's result, as its replay shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// Its moves end the game, with the result it is scored.
    ByRules,
    /// Its moves leave the game on: the result was given outside the rules (adjudication, a
    /// forfeit, a resignation), which a replay cannot check beyond the side it falls on.
    Outside,
}

/// Replays a game's moves: every one legal, and the result the rules give when they end the
/// game; a result the referee gave (a forfeit, a resignation) only while the game was on. A
/// game without a recorded termination (a PGN of another tool) is held to its result alone.
pub fn replay(
    entry: &GameEntry,
    rules: &[(String, String)],
    record: &crate::referee::GameRecord,
) -> Result<Decided, String> {
    let mut game = entry
        .new_game_with(record.start_fen.as_deref(), rules)
        .map_err(|e| format!("its start position: {e}"))?;
    for (i, mv) in record.moves.iter().enumerate() {
        if game.status().is_over() {
            return Err(format!(
                "move {} ({}) is played after the game ended",
                i + 1,
                mv.text
            ));
        }
        game.play(&mv.text)
            .map_err(|e| format!("move {} ({}): {e}", i + 1, mv.text))?;
        if mv.book && record.moves.get(i + 1).is_none_or(|next| !next.book) {
            game.end_book();
        }
    }
    let unrecorded = record.termination == Termination::Unrecorded;
    let claimed = (record.outcome, record.termination);
    let mover = game.turn();
    match game.status() {
        Status::Over(outcome, _) if unrecorded && outcome != record.outcome => Err(format!(
            "scored {}, where its moves end it {outcome}",
            record.outcome
        )),
        Status::Over(outcome, termination) if !unrecorded && (outcome, termination) != claimed => {
            Err(format!(
                "scored {} by {}, where its moves end it {} by {}",
                record.outcome, record.termination, outcome, termination
            ))
        }
        Status::Over(..) => Ok(Decided::ByRules),
        Status::Ongoing if ends_by_rule(record.termination) => Err(format!(
            "scored {} by {}, but its moves do not end the game",
            record.outcome, record.termination
        )),
        Status::Ongoing if loses_on_move(record.termination) => {
            if record.outcome == mover.other().wins() {
                Ok(Decided::Outside)
            } else {
                Err(format!(
                    "scored {} by {}, which loses the game for the side to move ({})",
                    record.outcome,
                    record.termination,
                    match mover {
                        Color::White => "white",
                        Color::Black => "black",
                    }
                ))
            }
        }
        Status::Ongoing => Ok(Decided::Outside),
    }
}

/// Terminations only the rules give.
fn ends_by_rule(t: Termination) -> bool {
    matches!(
        t,
        Termination::KingZapped
            | Termination::Checkmate
            | Termination::Stalemate
            | Termination::Campmate
            | Termination::Repetition
            | Termination::MoveRule
            | Termination::InsufficientMaterial
            // A game's own endings are its rules' as much as the built-in ones.
            | Termination::Own(_)
    )
}

/// Terminations that are a loss for the side whose move it was.
fn loses_on_move(t: Termination) -> bool {
    matches!(t, Termination::IllegalMove | Termination::Resignation)
}
