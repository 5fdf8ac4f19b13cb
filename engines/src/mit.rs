//! The MIT 6.172 Leiserchess player's dialect, as `../shared/reference/real-engines.md` describes
//! it, so the referee's handling of that engine is tested against a real process:
//! commands are handled one at a time (nothing is read while searching), `go` understands only
//! `depth` and `time/inc`, `info` lines carry microseconds, unknown commands get
//! `Illegal command.`, the first move is answered blind, and end of input does not end it.

use crate::eval::{Eval, TUNABLE};
use crate::search::{Iteration, Limits, Rng, Style};
use crate::session::{new_session, Session};
use crate::uci::{say, Reports};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const OPTIONS: [(&str, i64, i64, i64); 6] = [
    ("hash", 16, 1, 4096),
    ("draw", 0, -1000, 1000),
    ("randomize", 0, 0, 1),
    ("reset_rng", 0, 0, 1),
    ("use_ko", 1, 0, 1),
    ("style", 2, 0, 2),
];

pub struct MitPlayer {
    session: Box<dyn Session>,
    /// The last `position` command, applied when `go` arrives so its cost is inside the
    /// reported search time (a referee measuring its own latency then sees only its own).
    pending_position: Option<Vec<String>>,
    /// leiserchess (the 2018 player) or leiserchess2012.
    game: String,
    style: Style,
    eval: Eval,
    rng: Rng,
}

impl MitPlayer {
    pub fn new(game: &str) -> MitPlayer {
        MitPlayer {
            session: new_session(game).expect("the MIT players' games are registered"),
            game: game.to_string(),
            pending_position: None,
            style: Style::Search,
            eval: Eval::default(),
            rng: Rng::new(1),
        }
    }

    fn set_option(&mut self, args: &[&str]) {
        let name = args.get(1).copied().unwrap_or("");
        let value = args.get(3).copied().unwrap_or("");
        if self.eval.set(name, value) {
            say(&format!("info setting {name} to {value}"));
            return;
        }
        if !OPTIONS.iter().any(|(n, ..)| *n == name) {
            say(&format!("info string {name} not recognized"));
            return;
        }
        match name {
            "reset_rng" => {
                say("Resetting RNG due to setoption command.");
                self.rng = Rng::new(1);
            }
            "style" => {
                self.style = match value {
                    "0" => Style::Random,
                    "1" => Style::Greedy,
                    _ => Style::Search,
                }
            }
            _ => {}
        }
        say(&format!("info setting {name} to {value}"));
    }

    fn position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|a| *a == "moves");
        let head = &args[..moves_at.unwrap_or(args.len())];
        let moves: Vec<&str> = moves_at.map(|i| args[i + 1..].to_vec()).unwrap_or_default();
        let fen = (head.first() == Some(&"fen")).then(|| head[1..].join(" "));
        if let Err(e) = self.session.set_position(fen.as_deref(), &moves) {
            let culprit = e.split_whitespace().nth(1).unwrap_or("?").to_string();
            if e.starts_with("Move ") {
                say(&format!("info string Move {culprit} is illegal"));
            } else {
                eprintln!("{e}");
            }
        }
    }

    fn go(&mut self, args: &[&str]) {
        let started = Instant::now();
        if let Some(position) = self.pending_position.take() {
            let words: Vec<&str> = position.iter().map(String::as_str).collect();
            self.position(&words);
        }
        let value = |key: &str| {
            args.iter()
                .position(|a| *a == key)
                .and_then(|i| args.get(i + 1))
                .and_then(|v| v.parse::<i64>().ok())
        };
        // The 2018 player's opening table: White's first move is answered without looking.
        if self.game == "leiserchess"
            && self.session.moves_played() == 0
            && self.session.turn() == arbiter_rules::game::Color::White
        {
            say("bestmove g4L");
            return;
        }
        let mut limits = Limits::default();
        if let Some(depth) = value("depth") {
            if depth <= 0 {
                say("bestmove w-4");
                return;
            }
            limits.depth = Some(depth as u32);
        } else if let Some(time) = value("time") {
            let inc = value("inc").unwrap_or(0).max(0) as u64;
            let budget = time.max(0) as u64 / 50 + inc * 4 / 5;
            limits.deadline = Some(Instant::now() + Duration::from_millis(budget.max(1)));
        } else {
            // wtime, btime, nodes, movetime...: silently ignored, depth 1 only.
            limits.depth = Some(1);
        }
        let stop = AtomicBool::new(false);
        let mut reports = Reports::new(started);
        let mut report = |it: &Iteration| {
            let us = it.elapsed.as_micros();
            reports.push([
                format!(
                    "info depth {} move_no 1 time (microsec) {} nodes {} nps {}",
                    it.depth,
                    us,
                    it.nodes,
                    (it.nodes as f64 / it.elapsed.as_secs_f64().max(1e-6)) as u64
                ),
                format!("info score cp {} pv {}", it.score, it.pv),
            ]);
        };
        let best = self.session.search(
            self.style,
            &mut self.rng,
            &limits,
            &self.eval,
            &stop,
            &mut report,
        );
        reports.finish([
            format!("info time (microsec) {}", started.elapsed().as_micros()),
            format!("bestmove {}", best.as_deref().unwrap_or("(none)")),
        ]);
    }

    fn perft(&self, args: &[&str]) {
        let depth: u32 = args.first().and_then(|d| d.parse().ok()).unwrap_or(1);
        let entry = arbiter_rules::game::find_game(&self.game).expect("registered");
        for d in 1..=depth {
            let n = entry.perft_at(None, d).unwrap_or(0);
            say(&format!("perft {d:2} {n}"));
        }
    }

    /// Reads commands straight from `lines` on this thread: like the real player, nothing is
    /// read while a search runs.
    pub fn run(mut self, lines: impl Iterator<Item = String>) {
        for line in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some((&cmd, args)) = words.split_first() else {
                continue;
            };
            match cmd {
                "uci" => {
                    say("id name Leiserchess version 1038 (arbiter-engine)");
                    say("id author the arbiter developers");
                    for (name, default, min, max) in OPTIONS {
                        say(&format!(
                            "option name {name} type spin value {default} default {default} min \
                                {min} max {max}"
                        ));
                    }
                    for t in &TUNABLE {
                        say(&format!(
                            "option name {} type spin value {} default {} min {} max {}",
                            t.name, t.default, t.default, t.min, t.max
                        ));
                    }
                    say("uciok");
                }
                "isready" => say("readyok"),
                "setoption" => self.set_option(args),
                "position" => {
                    self.pending_position = Some(args.iter().map(|a| a.to_string()).collect())
                }
                "go" => self.go(args),
                "perft" => self.perft(args),
                "quit" => std::process::exit(0),
                _ => say("Illegal command.  Use 'help' to see possible options."),
            }
        }
        // The real player spins at end of input; this one waits, just as unwilling to exit.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}
