//! `arbiter compliance ENGINE [ARGS]` (also fastchess's `--compliance ENGINE [ARGS]`, which it
//! reads as it is): a UCI engine taken through what a match asks of it, step by step, each
//! step said as it passes, the first failure with what the engine wrote. Beyond fastchess's
//! steps the referee's own: every `bestmove` must be a legal move in the position it was asked
//! about, and the engine must leave when told `quit`. No step waits for ever: an engine that
//! stalls fails the step it stalls in.

use super::exit::Exit;
use super::Failure;
use arbiter::engine::{each_line, parse_line, EngineLine};
use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a step waits for the engine's answer.
const PATIENCE: Duration = Duration::from_secs(10);
/// Lines of the engine's output shown when a step fails.
const SHOWN_LINES: usize = 40;

/// A middlegame with White to move, and the position after 1.e4 (Black to move).
const MIDDLEGAME: &str = "3r2k1/p5n1/1pq1p2p/2p3p1/2P1P1n1/1P1P2pP/PN1Q2K1/5R2 w - - 0 27";
const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

/// The engine as the checker talks to it: its input, and its output lines as they come.
struct Engine {
    child: Child,
    input: ChildStdin,
    lines: Receiver<String>,
    /// The last of what it wrote, for the report of a failed step.
    stdout: VecDeque<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    id_name: Option<String>,
    id_author: Option<String>,
    /// The last `info` line of the last search.
    last_info: Option<String>,
}

type Step<'a> = (
    &'a str,
    Box<dyn FnMut(&mut Engine) -> Result<(), String> + 'a>,
);

impl Engine {
    fn start(program: &Path, args: &[String]) -> Result<Engine, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{} cannot be started: {e}", program.display()))?;
        let (Some(input), Some(output), Some(errors)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the engine has no pipes".into());
        };
        let (send, lines) = channel();
        std::thread::spawn(move || {
            each_line(output, |line| send.send(line).is_ok());
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            each_line(errors, |line| {
                kept.lock().map(|mut kept| keep(&mut kept, line)).is_ok()
            });
        });
        Ok(Engine {
            child,
            input,
            lines,
            stdout: VecDeque::new(),
            stderr,
            id_name: None,
            id_author: None,
            last_info: None,
        })
    }

    fn send(&mut self, command: &str) -> Result<(), String> {
        writeln!(self.input, "{command}")
            .and_then(|()| self.input.flush())
            .map_err(|e| format!("'{command}' could not be written: {e}"))
    }

    /// Reads lines until one starts with `word`, within `PATIENCE`; returns it.
    fn await_word(&mut self, word: &str) -> Result<String, String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no '{word}' within {} s", PATIENCE.as_secs()))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("the engine's output ended before '{word}'"))
                }
            };
            keep(&mut self.stdout, line.clone());
            match parse_line(&line) {
                EngineLine::IdName(name) => self.id_name = Some(name),
                EngineLine::IdAuthor(author) => self.id_author = Some(author),
                EngineLine::Info(_) => self.last_info = Some(line.clone()),
                _ => {}
            }
            if line.split_ascii_whitespace().next() == Some(word) {
                return Ok(line);
            }
        }
    }

    fn ready(&mut self) -> Result<(), String> {
        self.send("isready")?;
        self.await_word("readyok").map(drop)
    }

    /// Sends `position` and `go`; the reply must be a legal move in that position.
    fn search(&mut self, fen: Option<&str>, moves: &[&str], go: &str) -> Result<(), String> {
        let mut position = match fen {
            Some(fen) => format!("position fen {fen}"),
            None => "position startpos".to_string(),
        };
        if !moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&moves.join(" "));
        }
        self.last_info = None;
        self.send(&position)?;
        self.send(go)?;
        let line = self.await_word("bestmove")?;
        let EngineLine::BestMove(Some(mv)) = parse_line(&line) else {
            return Err(format!("'{line}' names no move"));
        };
        legal_in(fen, moves, &mv)
    }

    fn info_checked(&self, needs_score: bool) -> Result<(), String> {
        let info = self
            .last_info
            .as_deref()
            .ok_or("the search wrote no info line")?;
        check_info(info)?;
        if needs_score && !info.split_ascii_whitespace().any(|w| w == "score") {
            return Err(format!("the last info line has no score: '{info}'"));
        }
        Ok(())
    }

    fn report(&self) {
        eprintln!("The engine's output was:");
        for line in &self.stdout {
            eprintln!("  {line}");
        }
        // Its error output arrives on a thread of its own: a moment for the last of it.
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(errors) = self.stderr.lock() {
            if !errors.is_empty() {
                eprintln!("Its error output was:");
                for line in errors.iter() {
                    eprintln!("  {line}");
                }
            }
        }
    }

    /// `quit`, then up to `PATIENCE` for the engine to leave.
    fn quit(&mut self) -> Result<(), String> {
        self.send("quit")?;
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!(
            "still running {} s after 'quit'",
            PATIENCE.as_secs()
        ))
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Keeps `line` among the last `SHOWN_LINES`.
fn keep(kept: &mut VecDeque<String>, line: String) {
    if kept.len() == SHOWN_LINES {
        kept.pop_front();
    }
    kept.push_back(line);
}

/// Whether the handshake said `what`.
fn said(value: &Option<String>, what: &str) -> Result<(), String> {
    value
        .as_ref()
        .map(drop)
        .ok_or_else(|| format!("no '{what}' before uciok"))
}

/// Whether `mv` is a legal chess move after `moves` from `fen` (the start position if none).
fn legal_in(fen: Option<&str>, moves: &[&str], mv: &str) -> Result<(), String> {
    let chess = arbiter::game::find_game("chess").ok_or("no chess rules")?;
    let mut game = chess.new_game(fen).map_err(|e| e.to_string())?;
    for m in moves {
        game.play(m).map_err(|e| e.to_string())?;
    }
    game.play(mv)
        .map(drop)
        .map_err(|e| format!("bestmove {mv}: {e}"))
}

/// An `info` line whose numbers are whole numbers where UCI says so, and whose score is `cp` or
/// `mate` with a whole number; the first fault named.
fn check_info(line: &str) -> Result<(), String> {
    const WHOLE: &[&str] = &[
        "depth",
        "seldepth",
        "time",
        "nodes",
        "nps",
        "multipv",
        "hashfull",
        "tbhits",
        "currmovenumber",
    ];
    let mut words = line.split_ascii_whitespace().skip(1);
    while let Some(word) = words.next() {
        if word == "pv" || word == "string" {
            break;
        }
        if WHOLE.contains(&word) {
            let value = words.next().unwrap_or("");
            if value.parse::<u64>().is_err() {
                return Err(format!("'{word} {value}' is not a whole number: '{line}'"));
            }
        } else if word == "score" {
            let (kind, value) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            if !matches!(kind, "cp" | "mate") || value.parse::<i64>().is_err() {
                return Err(format!(
                    "'score {kind} {value}' is not cp or mate with a whole number: '{line}'"
                ));
            }
        }
    }
    Ok(())
}

/// The engine's arguments: one word holding spaces is split, as fastchess takes them.
fn arguments(args: &[String]) -> Vec<String> {
    match args {
        [one] if one.contains(char::is_whitespace) => {
            one.split_whitespace().map(str::to_string).collect()
        }
        _ => args.to_vec(),
    }
}

/// A step that searches from `fen` (the start position when none) after `moves`.
fn searching(
    what: &'static str,
    fen: Option<&'static str>,
    moves: &'static [&'static str],
    go: &'static str,
) -> Step<'static> {
    (
        what,
        Box::new(move |e: &mut Engine| e.search(fen, moves, go)),
    )
}

/// Whether an info check also asks for a score.
const SCORED: bool = true;

/// The check of the last search's last info line.
fn last_info(scored: bool) -> Step<'static> {
    let what = if scored {
        "Its last info line is well formed, with a score"
    } else {
        "Its last info line is well formed"
    };
    (what, Box::new(move |e: &mut Engine| e.info_checked(scored)))
}

/// Runs the steps; 0 when all passed, 1 at the first that failed.
/// `--option NAME=VALUE` as the `setoption` lines it sends.
fn setoption_lines(options: &[String]) -> Result<Vec<String>, Failure> {
    let mut settings = Vec::new();
    for option in options {
        let Some((name, value)) = option.split_once('=') else {
            return Err(Failure::bad_input(format!(
                "--option {option}: give it as NAME=VALUE, e.g. UCI_Variant=chess"
            )));
        };
        settings.push(format!(
            "setoption name {} value {}",
            name.trim(),
            value.trim()
        ));
    }
    Ok(settings)
}

/// The steps, in order; the options given are set in the fourth.
fn steps(settings: Vec<String>) -> Vec<Step<'static>> {
    let mut steps: Vec<Step> = vec![
        (
            "Start the engine and send uci",
            Box::new(|e: &mut Engine| {
                e.send("uci")?;
                e.await_word("uciok").map(drop)
            }),
        ),
        (
            "Check id name",
            Box::new(|e: &mut Engine| said(&e.id_name, "id name")),
        ),
        (
            "Check id author",
            Box::new(|e: &mut Engine| said(&e.id_author, "id author")),
        ),
        (
            "Set the options given, then check if engine is ready",
            Box::new(move |e: &mut Engine| {
                for setting in &settings {
                    e.send(setting)?;
                }
                e.ready()
            }),
        ),
        (
            "Send ucinewgame and position startpos, then isready",
            Box::new(|e: &mut Engine| {
                e.send("ucinewgame")?;
                e.send("position startpos")?;
                e.ready()
            }),
        ),
        (
            "Set a position by fen, then isready",
            Box::new(|e: &mut Engine| {
                e.send(&format!("position fen {MIDDLEGAME}"))?;
                e.ready()
            }),
        ),
    ];
    steps.extend(search_steps());
    steps
}

/// The searches, each checked for a legal move, some for a scored `info` before it; then quit.
fn search_steps() -> Vec<Step<'static>> {
    vec![
        searching(
            "go wtime 100: a legal bestmove",
            Some(MIDDLEGAME),
            &[],
            "go wtime 100",
        ),
        last_info(SCORED),
        searching(
            "Black to move, go btime 100: a legal bestmove",
            Some(AFTER_E4),
            &[],
            "go btime 100",
        ),
        last_info(SCORED),
        searching(
            "go wtime 100 winc 100 btime 100 binc 100: a legal bestmove",
            Some(AFTER_E4),
            &[],
            "go wtime 100 winc 100 btime 100 binc 100",
        ),
        last_info(!SCORED),
        searching(
            "go btime 100 binc 100 wtime 100 winc 100: a legal bestmove",
            Some(AFTER_E4),
            &[],
            "go btime 100 binc 100 wtime 100 winc 100",
        ),
        (
            "A new game: ucinewgame, startpos, go wtime 100 btime 100",
            Box::new(|e: &mut Engine| {
                e.send("ucinewgame")?;
                e.search(None, &[], "go wtime 100 btime 100")
            }),
        ),
        searching(
            "position startpos moves e2e4 e7e5: a legal bestmove",
            None,
            &["e2e4", "e7e5"],
            "go wtime 100 btime 100",
        ),
        last_info(!SCORED),
        ("quit: the engine leaves", Box::new(Engine::quit)),
    ]
}

pub fn run(program: &Path, args: &[String], options: &[String]) -> Result<Exit, Failure> {
    let settings = setoption_lines(options)?;
    let mut engine = Engine::start(program, &arguments(args)).map_err(Failure::bad_input)?;
    let steps = steps(settings);
    for (number, (what, mut step)) in steps.into_iter().enumerate() {
        let number = number + 1;
        match step(&mut engine) {
            Ok(()) => println!("Passed step {number}: {what}"),
            Err(why) => {
                println!("Failed step {number}: {what}: {why}");
                engine.report();
                return Ok(Exit::Rejected);
            }
        }
    }
    println!("Engine passed all compliance checks.");
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_need_whole_numbers_and_a_readable_score() {
        let stockfish = "info depth 7 seldepth 8 multipv 1 score cp 34 nodes 214 nps 107000 \
                         hashfull 0 tbhits 0 time 2 pv e2e4 e7e5";
        assert_eq!(check_info(stockfish), Ok(()));
        assert_eq!(
            check_info("info depth 3 score mate -2 upperbound time 1"),
            Ok(())
        );
        // What follows the principal variation or a string is the engine's own text.
        assert_eq!(check_info("info string time is short"), Ok(()));
        for bad in [
            "info depth banana",
            "info time 1.5 nodes 3",
            "info score cp 0.3",
            "info score wdl 3",
            "info nps",
        ] {
            assert!(check_info(bad).is_err(), "{bad}");
        }
        assert!(check_info("info time 1.5")
            .unwrap_err()
            .contains("'time 1.5'"));
    }

    #[test]
    fn only_the_last_lines_are_kept() {
        let mut kept = VecDeque::new();
        for i in 0..SHOWN_LINES + 5 {
            keep(&mut kept, i.to_string());
        }
        assert_eq!(kept.len(), SHOWN_LINES);
        assert_eq!(kept.front().map(String::as_str), Some("5"));
    }

    #[test]
    fn one_argument_with_spaces_is_split_as_fastchess_does() {
        let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            arguments(&words(&["--fault illegal"])),
            words(&["--fault", "illegal"])
        );
        assert_eq!(
            arguments(&words(&["--fault", "illegal"])),
            words(&["--fault", "illegal"])
        );
        assert!(arguments(&[]).is_empty());
    }
}
