//! Faults the bundled engine can be told to commit (`--fault <kind> [--fault-after <n>]`), so the
//! referee's handling of broken engines is tested against a real process.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    None,
    /// Exit with status 3 when asked for a move.
    Crash,
    /// Never send `uciok`.
    NoUciok,
    /// Never answer `go`.
    Stall,
    /// Answer with a move that is well-formed but illegal.
    Illegal,
    /// Print junk and answer with something that is not a move.
    Garbage,
    /// Think past the end of its clock.
    Overrun,
    /// Stay alive after `quit`.
    IgnoreQuit,
    /// Take `UCI_Variant` without confirming it, as Fairy-Stockfish does with an unknown name.
    NoVariant,
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    /// The fault starts at this `go` (0 = the first).
    pub after: u64,
}

impl Fault {
    pub fn parse(kind: &str, after: u64) -> Option<Fault> {
        let kind = match kind {
            "none" => FaultKind::None,
            "crash" => FaultKind::Crash,
            "nouciok" => FaultKind::NoUciok,
            "stall" => FaultKind::Stall,
            "illegal" => FaultKind::Illegal,
            "garbage" => FaultKind::Garbage,
            "overrun" => FaultKind::Overrun,
            "ignorequit" => FaultKind::IgnoreQuit,
            "novariant" => FaultKind::NoVariant,
            _ => return None,
        };
        Some(Fault { kind, after })
    }

    pub const KINDS: &'static str =
        "none, crash, nouciok, stall, illegal, garbage, overrun, ignorequit, novariant";

    fn active(&self, index: u64) -> bool {
        index >= self.after
    }

    pub fn confirms_variant(&self) -> bool {
        self.kind != FaultKind::NoVariant
    }

    pub fn withholds_uciok(&self) -> bool {
        self.kind == FaultKind::NoUciok
    }

    pub fn obeys_quit(&self) -> bool {
        if self.kind == FaultKind::IgnoreQuit {
            // Keep running until killed.
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        false
    }

    /// Called when `go` arrives; returns true when the fault takes the place of an answer.
    pub fn before_go(&self, index: u64, _go: &str) -> bool {
        if !self.active(index) {
            return false;
        }
        match self.kind {
            FaultKind::Crash => std::process::exit(3),
            FaultKind::Stall => true,
            _ => false,
        }
    }

    /// How long to wait before answering this `go` (past the clock, for `overrun`).
    pub fn delay(&self, index: u64, go: &[&str], white: bool) -> Duration {
        if self.kind != FaultKind::Overrun || !self.active(index) {
            return Duration::ZERO;
        }
        let key = if white { "wtime" } else { "btime" };
        let left = go
            .iter()
            .position(|a| *a == key || *a == "movetime")
            .and_then(|i| go.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1000);
        Duration::from_millis(left + 500)
    }

    pub fn replace_bestmove(&self, index: u64, best: Option<String>) -> Option<String> {
        if !self.active(index) {
            return best;
        }
        match self.kind {
            FaultKind::Illegal => Some("a1a1".into()),
            FaultKind::Garbage => {
                crate::uci::say("#$%&! this is not a UCI line");
                crate::uci::say("info depth banana");
                Some("@@junk@@".into())
            }
            _ => best,
        }
    }
}
