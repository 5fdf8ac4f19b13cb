//! CECP (the xboard/WinBoard protocol, version 2), for every game: `protover 2` is answered
//! with `feature` lines (variants, `usermove`, `setboard`, `ping`), moves come as `usermove`,
//! clocks as `time`/`otim` (centiseconds) and `level`/`st`/`sd`, and the engine answers `go` or an
//! opponent's move outside force mode with `move <move>`. Commands are handled one at a time.

use crate::eval::{Eval, TUNABLE};
use crate::fault::Fault;
use crate::search::{Iteration, Limits, Rng, Style};
use crate::session::{new_session, Session};
use crate::uci::say;
use arbiter_rules::game::game_ids;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub struct XboardEngine {
    variant: String,
    session: Box<dyn Session>,
    start_fen: Option<String>,
    moves: Vec<String>,
    force: bool,
    depth: Option<u32>,
    move_time: Option<Duration>,
    /// Own clock and increment (centiseconds, seconds) from `time` and `level`.
    clock_cs: Option<u64>,
    increment: Duration,
    style: Style,
    eval: Eval,
    fault: Fault,
    searches: u64,
}

impl XboardEngine {
    pub fn new(fault: Fault) -> XboardEngine {
        XboardEngine {
            variant: "leiserchess".into(),
            session: new_session("leiserchess").expect("leiserchess is registered"),
            start_fen: None,
            moves: Vec::new(),
            force: false,
            depth: None,
            move_time: None,
            clock_cs: None,
            increment: Duration::ZERO,
            style: Style::Search,
            eval: Eval::default(),
            fault,
            searches: 0,
        }
    }

    fn features() -> String {
        let weights: String = TUNABLE
            .iter()
            .map(|t| {
                format!(
                    " option=\"{} -spin {} {} {}\"",
                    t.name, t.default, t.min, t.max
                )
            })
            .collect();
        format!(
            "feature myname=\"arbiter-engine\" protocol=2 usermove=1 setboard=1 ping=1 sigint=0 \
             sigterm=0 colors=0 time=1 variants=\"{}\" option=\"Style -combo random /// greedy \
             /// *search\"{weights} done=1",
            game_ids().join(",")
        )
    }

    fn reset(&mut self) {
        self.start_fen = None;
        self.moves.clear();
        self.force = false;
    }

    fn variant(&mut self, name: &str) {
        match new_session(name) {
            Some(session) => {
                self.session = session;
                self.variant = name.to_string();
                self.reset();
            }
            None => say(&format!("Error (unknown variant): {name}")),
        }
    }

    fn usermove(&mut self, mv: &str) {
        self.moves.push(mv.to_string());
        let moves: Vec<&str> = self.moves.iter().map(String::as_str).collect();
        if let Err(e) = self.session.set_position(self.start_fen.as_deref(), &moves) {
            self.moves.pop();
            say(&format!("Illegal move ({e}): {mv}"));
            return;
        }
        if !self.force {
            self.think();
        }
    }

    fn limits(&self, started: Instant) -> Limits {
        let deadline = match (self.move_time, self.clock_cs) {
            (Some(st), _) => Some(started + st.saturating_sub(Duration::from_millis(5))),
            (None, Some(cs)) => {
                let left = Duration::from_millis(cs * 10);
                let budget = (left / 30 + self.increment * 3 / 4).min(left / 2);
                Some(started + budget.max(Duration::from_millis(1)))
            }
            (None, None) => None,
        };
        Limits {
            depth: self.depth.or(deadline.is_none().then_some(1)),
            nodes: None,
            deadline,
        }
    }

    /// Searches the current position and plays the move it found, as `move <move>`.
    fn think(&mut self) {
        let started = Instant::now();
        let index = self.searches;
        self.searches += 1;
        if self.fault.before_go(index, "go") {
            return;
        }
        let moves: Vec<&str> = self.moves.iter().map(String::as_str).collect();
        let _ = self.session.set_position(self.start_fen.as_deref(), &moves);
        std::thread::sleep(self.fault.delay(index, &[], true));
        let limits = self.limits(started);
        let mut rng = Rng::new(1 ^ self.moves.len() as u64);
        let stop = AtomicBool::new(false);
        let mut posts = Vec::new();
        let mut report = |it: &Iteration| {
            // CECP thinking output: ply, score, time in centiseconds, nodes, pv.
            posts.push(format!(
                "{} {} {} {} {}",
                it.depth,
                it.score,
                it.elapsed.as_millis() / 10,
                it.nodes,
                it.pv
            ));
        };
        let best = self.session.search(
            self.style,
            &mut rng,
            &limits,
            &self.eval,
            &stop,
            &mut report,
        );
        let best = self.fault.replace_bestmove(index, best);
        match best {
            Some(mv) => {
                posts.push(format!("move {mv}"));
                self.moves.push(mv);
            }
            None => posts.push("resign".into()),
        }
        crate::uci::say_lines(&posts);
    }

    fn level(&mut self, args: &[&str]) {
        let base = args.get(1).copied().unwrap_or("0");
        let (minutes, seconds) = base.split_once(':').unwrap_or((base, "0"));
        let secs =
            minutes.parse::<f64>().unwrap_or(0.0) * 60.0 + seconds.parse::<f64>().unwrap_or(0.0);
        self.clock_cs = Some((secs * 100.0) as u64);
        self.increment =
            Duration::from_secs_f64(args.get(2).and_then(|v| v.parse().ok()).unwrap_or(0.0));
    }

    /// Handles one command; returns false on `quit`.
    fn handle(&mut self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = words.split_first() else {
            return true;
        };
        let first = args.first().copied().unwrap_or("");
        match cmd {
            "xboard" | "accepted" | "rejected" | "post" | "nopost" | "hard" | "easy" | "random"
            | "computer" | "name" | "rating" | "result" | "otim" => {}
            "protover" => say(&Self::features()),
            "new" => {
                let variant = self.variant.clone();
                self.variant(&variant);
            }
            "variant" => self.variant(first),
            "setboard" => {
                let fen = args.join(" ");
                match self.session.set_position(Some(&fen), &[]) {
                    Ok(()) => {
                        self.start_fen = Some(fen);
                        self.moves.clear();
                    }
                    Err(e) => say(&format!("tellusererror Illegal position: {e}")),
                }
            }
            "force" => self.force = true,
            "go" => {
                self.force = false;
                self.think();
            }
            "usermove" => self.usermove(first),
            "time" => self.clock_cs = first.parse().ok(),
            "level" => self.level(args),
            "st" => self.move_time = first.parse::<f64>().ok().map(Duration::from_secs_f64),
            "sd" => self.depth = first.parse().ok(),
            "ping" => say(&format!("pong {first}")),
            "option" => match first.split_once('=') {
                Some(("Style", value)) => {
                    self.style = match value {
                        "random" => Style::Random,
                        "greedy" => Style::Greedy,
                        _ => Style::Search,
                    };
                }
                Some((name, value)) => {
                    self.eval.set(name, value);
                }
                None => {}
            },
            "quit" => return self.fault.obeys_quit(),
            _ => say(&format!("Error (unknown command): {cmd}")),
        }
        true
    }

    pub fn run(mut self, lines: impl Iterator<Item = String>) {
        for line in lines {
            if !self.handle(line.trim()) {
                return;
            }
        }
    }
}
