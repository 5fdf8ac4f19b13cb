//! Standard UCI with `UCI_Variant`: the engine reads commands while it searches, so `stop`,
//! `isready` and `quit` are answered at once.

use crate::eval::{Eval, TUNABLE};
use crate::fault::Fault;
use crate::search::{Iteration, Limits, Rng, Style, MATE};
use crate::session::{new_session, Session};
use arbiter_rules::game::{game_ids, Color};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub fn say(line: &str) {
    say_lines(&[line]);
}

/// Lines produced at the same moment go out in one write: one wake-up of the referee, not one
/// per line.
pub fn say_lines<S: AsRef<str>>(lines: &[S]) {
    let mut text = String::with_capacity(lines.iter().map(|l| l.as_ref().len() + 1).sum());
    for line in lines {
        text.push_str(line.as_ref());
        text.push('\n');
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// How long a search's reports are held back: a search that ends sooner sends them with its
/// `bestmove`, in one write. Longer searches report each iteration as it ends.
const HOLD_REPORTS: Duration = Duration::from_millis(1);

/// A search's `info` output, held back while the search is young (see `HOLD_REPORTS`).
pub struct Reports {
    started: Instant,
    held: Vec<String>,
}

impl Reports {
    pub fn new(started: Instant) -> Reports {
        Reports {
            started,
            held: Vec::new(),
        }
    }

    pub fn push(&mut self, lines: impl IntoIterator<Item = String>) {
        self.held.extend(lines);
        if self.started.elapsed() >= HOLD_REPORTS {
            say_lines(&self.held);
            self.held.clear();
        }
    }

    /// The last lines of the search (its `bestmove`), with whatever is still held.
    pub fn finish(mut self, lines: impl IntoIterator<Item = String>) {
        self.held.extend(lines);
        say_lines(&self.held);
    }
}

fn score_text(score: i32) -> String {
    if score.abs() >= MATE - 1000 {
        let plies = MATE - score.abs();
        let moves = (plies + 1) / 2;
        format!("mate {}", if score > 0 { moves } else { -moves })
    } else {
        format!("cp {score}")
    }
}

/// Reads `go` parameters into search limits, budgeting time for the side to move.
fn limits(args: &[&str], turn: Color, now: Instant) -> Limits {
    let value = |key: &str| -> Option<u64> {
        args.iter()
            .position(|a| *a == key)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<i64>().ok())
            .map(|v| v.max(0) as u64)
    };
    let (time, inc) = match turn {
        Color::White => (value("wtime"), value("winc")),
        Color::Black => (value("btime"), value("binc")),
    };
    let budget_ms = if let Some(ms) = value("movetime") {
        Some(ms.saturating_sub(5).max(1))
    } else {
        time.map(|t| {
            let moves_left = value("movestogo").unwrap_or(30).max(1);
            let inc = inc.unwrap_or(0);
            (t / moves_left + inc * 3 / 4).min(t / 2).max(1)
        })
    };
    Limits {
        depth: value("depth").map(|d| d as u32),
        nodes: value("nodes"),
        deadline: budget_ms.map(|ms| now + Duration::from_millis(ms)),
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Running {
    fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

pub struct Engine {
    variant: String,
    /// The variants UCI_Variant lists. Like Fairy-Stockfish, an engine started with
    /// `--variants-from-path` knows only chess until `VariantPath` names an ini file.
    offered_variants: Vec<String>,
    variants_from_path: bool,
    /// The last `position` command, applied when `go` arrives (inside the timed search).
    pending_position: Option<Vec<String>>,
    /// Hash of the position being searched: with `Seed`, it makes play depend on the position
    /// alone, not on how many searches this process ran before (reproducible tournaments).
    position_key: u64,
    session: Box<dyn Session>,
    style: Style,
    eval: Eval,
    seed: u64,
    searches: u64,
    fault: Fault,
    running: Option<Running>,
}

impl Engine {
    pub fn new(fault: Fault, variants_from_path: bool) -> Engine {
        let offered_variants = if variants_from_path {
            vec!["chess".to_string()]
        } else {
            game_ids().iter().map(|g| g.to_string()).collect()
        };
        Engine {
            variant: "leiserchess".into(),
            offered_variants,
            variants_from_path,
            pending_position: None,
            position_key: 0,
            session: new_session("leiserchess").expect("leiserchess is registered"),
            style: Style::Search,
            eval: Eval::default(),
            seed: 0,
            searches: 0,
            fault,
            running: None,
        }
    }

    fn options(&self) {
        let vars: String = self
            .offered_variants
            .iter()
            .map(|g| format!(" var {g}"))
            .collect();
        let default = &self.offered_variants[0];
        say(&format!(
            "option name UCI_Variant type combo default {default}{vars}"
        ));
        say("option name VariantPath type string default <empty>");
        say("option name Style type combo default search var random var greedy var search");
        say("option name Seed type spin default 0 min 0 max 2147483647");
        for t in &TUNABLE {
            say(&format!(
                "option name {} type spin default {} min {} max {}",
                t.name, t.default, t.min, t.max
            ));
        }
    }

    fn set_option(&mut self, args: &[&str]) {
        // setoption name <name...> value <value...>
        let text = args.join(" ");
        let rest = text.strip_prefix("name ").unwrap_or(&text);
        let (name, value) = match rest.split_once(" value ") {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (rest.trim(), ""),
        };
        match name.to_ascii_lowercase().as_str() {
            // Fairy-Stockfish ignores a variant it was not taught, without a word.
            "uci_variant"
                if self.variants_from_path && !self.offered_variants.iter().any(|v| v == value) => {
            }
            "variantpath" => self.load_variants(value),
            "uci_variant" => match new_session(value) {
                Some(session) => {
                    self.session = session;
                    self.variant = value.to_ascii_lowercase();
                    if self.fault.confirms_variant() {
                        say(&format!("info string variant {}", self.variant));
                    }
                }
                None => say(&format!("info string unknown variant {value}")),
            },
            "style" => match Style::parse(value) {
                Some(style) => self.style = style,
                None => say(&format!("info string unknown style {value}")),
            },
            "seed" => self.seed = value.parse().unwrap_or(0),
            _ if self.eval.set(name, value) => {}
            _ => say(&format!("info string unknown option {name}")),
        }
    }

    /// The games named by `[name]` or `[name:template]` sections of a variants.ini file.
    fn load_variants(&mut self, path: &str) {
        let Ok(text) = std::fs::read_to_string(path) else {
            say(&format!("info string cannot read {path}"));
            return;
        };
        for line in text.lines() {
            let Some(section) = line
                .trim()
                .strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
            else {
                continue;
            };
            let name = section.split(':').next().unwrap_or("").trim();
            if game_ids().contains(&name) && !self.offered_variants.iter().any(|v| v == name) {
                self.offered_variants.push(name.to_string());
            }
        }
    }

    fn apply_pending_position(&mut self) {
        if let Some(args) = self.pending_position.take() {
            self.fault.set_position(&args);
            self.position_key = crate::fault::position_hash(&args);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.position(&args);
        }
    }

    fn position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|a| *a == "moves");
        let head = &args[..moves_at.unwrap_or(args.len())];
        let moves: Vec<&str> = moves_at.map(|i| args[i + 1..].to_vec()).unwrap_or_default();
        let fen = match head.first() {
            Some(&"fen") => Some(head[1..].join(" ")),
            _ => None,
        };
        if let Err(e) = self.session.set_position(fen.as_deref(), &moves) {
            say(&format!("info string {e}"));
        }
    }

    fn go(&mut self, args: &[&str]) {
        self.stop_search();
        let index = self.searches;
        self.searches += 1;
        if self.fault.before_go(index, &args.join(" ")) {
            return;
        }
        let now = Instant::now();
        self.apply_pending_position();
        let limits = limits(args, self.session.turn(), now);
        let session = self.session.boxed();
        let style = self.style;
        let eval = self.eval;
        let mut rng = Rng::new(self.seed ^ self.position_key);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let fault = self.fault.clone();
        let go_words: Vec<&str> = args.to_vec();
        let delay = fault.delay(index, &go_words, self.session.turn() == Color::White);
        let handle = std::thread::spawn(move || {
            std::thread::sleep(delay);
            let mut reports = Reports::new(now);
            let mut deepest = None;
            let mut report = |it: &Iteration| {
                deepest = Some((it.depth, score_text(it.score), it.nodes));
                reports.push([format!(
                    "info depth {} score {} nodes {} time {} nps {} pv {}",
                    it.depth,
                    score_text(it.score),
                    it.nodes,
                    it.elapsed.as_millis(),
                    (it.nodes as f64 / it.elapsed.as_secs_f64().max(1e-6)) as u64,
                    it.pv
                )])
            };
            let best = session.search(style, &mut rng, &limits, &eval, &flag, &mut report);
            let best = fault.replace_bestmove(index, best);
            // The whole thinking time, so a referee can tell its own delay from the engine's;
            // with the deepest iteration's score, as tools that read the last report expect
            // (fastchess's compliance check among them).
            let elapsed = now.elapsed().as_millis();
            let last = match deepest {
                Some((depth, score, nodes)) => {
                    format!("info depth {depth} score {score} nodes {nodes} time {elapsed}")
                }
                None => format!("info time {elapsed}"),
            };
            reports.finish([
                last,
                format!("bestmove {}", best.as_deref().unwrap_or("(none)")),
            ]);
        });
        self.running = Some(Running { stop, handle });
    }

    fn stop_search(&mut self) {
        if let Some(r) = self.running.take() {
            r.finish();
        }
    }

    /// Handles one command; returns false on `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = words.split_first() else {
            return true;
        };
        match cmd {
            "uci" => {
                say("id name arbiter-engine");
                say("id author the arbiter developers");
                self.options();
                if !self.fault.withholds_uciok() {
                    say("uciok");
                }
            }
            "isready" => say("readyok"),
            "setoption" => self.set_option(args),
            "ucinewgame" => {
                self.stop_search();
                self.pending_position = None;
                let _ = self.session.set_position(None, &[]);
            }
            "position" => {
                self.stop_search();
                self.pending_position = Some(args.iter().map(|a| a.to_string()).collect());
            }
            "go" => self.go(args),
            "stop" => self.stop_search(),
            "quit" => {
                self.stop_search();
                return self.fault.obeys_quit();
            }
            _ => say(&format!("info string unknown command {cmd}")),
        }
        true
    }

    pub fn run(mut self, lines: Receiver<String>) {
        while let Ok(line) = lines.recv() {
            if !self.handle(line.trim()) {
                return;
            }
        }
        // End of input: a well-behaved engine exits.
        self.stop_search();
    }
}
