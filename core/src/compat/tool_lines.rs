//! The lines cutechess-cli and fastchess print while they play, printed the same way when a
//! command line is read as theirs: programs that drive those tools (fishtest's worker, CI
//! scripts, test servers) read them from standard output. Field order, spacing and number
//! formats are the tools' own; the statistics are the usual ones (a score's 95% interval mapped
//! to Elo, nElo from the score's spread, LOS from the normal distribution).

use crate::engine::EngineConfig;
use crate::game::{Outcome, Termination};
use crate::referee::GameRecord;
use crate::stats::Sprt;
use crate::tournament::Progress;
use std::collections::HashMap;
use std::fmt::Write as _;

pub use crate::out::{say_started, Style, ToolLines, TOOL_LINES};

const Z95: f64 = 1.959963984540054;

/// A sample of results (value, count): a game's 1, ½, 0, or a pair's 1, ¾, ½, ¼, 0.
struct Sample {
    n: f64,
    score: f64,
    /// The spread of one result.
    variance: f64,
}

impl Sample {
    fn of(results: &[(f64, u64)]) -> Sample {
        let n: u64 = results.iter().map(|r| r.1).sum();
        let n = n as f64;
        let score = results.iter().map(|&(v, c)| v * c as f64).sum::<f64>() / n;
        let variance = results
            .iter()
            .map(|&(v, c)| c as f64 * (v - score).powi(2))
            .sum::<f64>()
            / n;
        Sample { n, score, variance }
    }

    fn elo(score: f64) -> f64 {
        -400.0 * (1.0 / score - 1.0).log10()
    }

    fn bounds(&self) -> (f64, f64) {
        let half = Z95 * (self.variance / self.n).sqrt();
        (self.score - half, self.score + half)
    }

    /// The Elo difference and half its 95% interval.
    fn elo_and_error(&self) -> (f64, f64) {
        let (lo, hi) = self.bounds();
        (Self::elo(self.score), (Self::elo(hi) - Self::elo(lo)) / 2.0)
    }

    /// Normalized Elo and half its interval; `spread` is the variance's factor (2 for pairs).
    fn nelo_and_error(&self, spread: f64) -> (f64, f64) {
        let nelo = |s: f64| {
            (s - 0.5) / (spread * self.variance).sqrt() * (800.0 / std::f64::consts::LN_10)
        };
        let (lo, hi) = self.bounds();
        (nelo(self.score), (nelo(hi) - nelo(lo)) / 2.0)
    }

    fn los(&self) -> f64 {
        let z = (self.score - 0.5) / (2.0 * self.variance / self.n).sqrt();
        (1.0 + statrs::function::erf::erf(z)) / 2.0
    }
}

/// The first engine's results against the second, as the tools count them.
#[derive(Default)]
struct Count {
    wins: u64,
    losses: u64,
    draws: u64,
    /// Pairs by the first engine's points: LL, LD, WL, DD, WD, WW.
    ll: u64,
    ld: u64,
    wl: u64,
    dd: u64,
    wd: u64,
    ww: u64,
}

impl Count {
    fn add(&mut self, points: f64) {
        if points == 1.0 {
            self.wins += 1;
        } else if points == 0.0 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    fn games(&self) -> u64 {
        self.wins + self.losses + self.draws
    }

    fn pairs(&self) -> u64 {
        self.ll + self.ld + self.wl + self.dd + self.wd + self.ww
    }

    fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    fn games_sample(&self) -> Sample {
        Sample::of(&[(1.0, self.wins), (0.5, self.draws), (0.0, self.losses)])
    }

    fn pairs_sample(&self) -> Sample {
        Sample::of(&[
            (1.0, self.ww),
            (0.75, self.wd),
            (0.5, self.wl + self.dd),
            (0.25, self.ld),
            (0.0, self.ll),
        ])
    }
}

/// Prints a run's progress as the tool prints it.
pub struct Printer {
    lines: ToolLines,
    names: Vec<String>,
    sprt: Option<Sprt>,
    /// `(tc, threads, hash[, book])` of fastchess's "Results of" line.
    setup: String,
    count: Count,
    /// Pairs with one game in: the first engine's points in it.
    open_pairs: HashMap<u64, f64>,
    pairs_rated: u64,
    games_rated: u64,
    /// Games finished when the last score line was printed, and now.
    scored_at: u64,
    finished: u64,
    /// fastchess's per-player count of games lost on time and by a crash or a stall, in the
    /// order the players were first counted.
    losses: Vec<(String, u64, u64)>,
    started: std::time::Instant,
}

impl Printer {
    /// `offered(engine, option)` is the default the started engine gave an option, which
    /// fastchess shows where the line sets none.
    pub fn new(
        lines: ToolLines,
        engines: &[EngineConfig],
        offered: &dyn Fn(usize, &str) -> Option<String>,
        sprt: Option<Sprt>,
        book: Option<&std::path::Path>,
    ) -> Printer {
        let both = |f: &dyn Fn(usize) -> String| {
            let (a, b) = (
                f(0),
                if engines.len() > 1 {
                    f(1)
                } else {
                    String::new()
                },
            );
            if a == b {
                a
            } else {
                format!("{a} - {b}")
            }
        };
        let option = |name: &'static str, unit: &'static str| {
            move |i: usize| {
                engines[i]
                    .options
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| offered(i, name))
                    .map(|v| format!("{v}{unit}"))
                    .unwrap_or_else(|| "NULL".into())
            }
        };
        let mut setup = format!(
            "{}, {}, {}",
            both(&|i| time_control(&engines[i])),
            both(&option("Threads", "t")),
            both(&option("Hash", "MB"))
        );
        if let Some(name) = book.and_then(|b| b.file_name()) {
            let _ = write!(setup, ", {}", name.to_string_lossy());
        }
        Printer {
            lines,
            names: engines.iter().map(|e| e.name.clone()).collect(),
            sprt,
            setup,
            count: Count::default(),
            open_pairs: HashMap::new(),
            pairs_rated: 0,
            games_rated: 0,
            scored_at: 0,
            finished: 0,
            losses: engines.iter().map(|e| (e.name.clone(), 0, 0)).collect(),
            started: std::time::Instant::now(),
        }
    }

    /// The lines after a finished game: the game, then the score and the ratings when due.
    pub fn game(&mut self, p: &Progress) -> String {
        let r = p.record;
        // fastchess warns as the moves come; they are said before the game's line here.
        let mut out: String = r.pv_warnings.iter().map(|w| format!("{w}\n")).collect();
        let loser = match r.outcome {
            Outcome::WhiteWins => Some(&r.black),
            Outcome::BlackWins => Some(&r.white),
            Outcome::Draw => None,
        };
        if let (Style::Fastchess, Some(loser)) = (self.lines.style, loser) {
            // fastchess's warning (match.cpp), which fishtest's worker stops a run for.
            if r.termination == Termination::IllegalMove {
                let mv = quoted(&r.detail).unwrap_or("<none>");
                out += &format!("Warning; Illegal move {mv} played by {loser}\n");
            }
            // fastchess finds a dead or stalled engine by an `isready` it does not answer
            // (uci_engine.cpp), and says so; fishtest's worker logs it.
            if matches!(
                r.termination,
                Termination::EngineCrash | Termination::EngineStall
            ) {
                out += &format!("Warning; Engine {loser} is not responsive\n");
            }
            self.count_loss(loser, r.termination);
        }
        out += &format!(
            "Finished game {} ({} vs {}): {} {{{}}}\n",
            p.game,
            r.white,
            r.black,
            r.outcome,
            annotation(r)
        );
        if self.names.len() != 2 {
            return out;
        }
        self.count_game(p.game - 1, r);
        let all = p.done >= p.total;
        let games = self.count.games();
        // After every game (each -scoreinterval'th), whether its pair is complete or not: over
        // pairs the counts move only when one is, and fastchess prints them anyway
        // (roundrobin.cpp, `printResult` in the game's `finish`); scripts count the lines.
        if self.lines.style == Style::Cutechess
            && p.done > self.scored_at
            && (all || p.done.is_multiple_of(self.lines.score_interval.max(1)))
        {
            out.push_str(&self.score_line());
            self.scored_at = p.done;
        }
        self.finished = p.done;
        let interval = self.lines.rating_interval;
        let due = if self.lines.penta {
            let pairs = self.count.pairs();
            let due = interval > 0 && pairs > self.pairs_rated && pairs.is_multiple_of(interval);
            self.pairs_rated = pairs;
            due
        } else {
            let due = interval > 0 && games > self.games_rated && games.is_multiple_of(interval);
            self.games_rated = games;
            due
        };
        if due && !all {
            out.push_str(&self.ratings(p.llr));
        }
        out
    }

    /// The lines a finished run ends with: the ratings, then "Finished match".
    pub fn end(&self, llr: Option<f64>) -> String {
        let mut out = String::new();
        if self.names.len() == 2 && self.count.games() > 0 {
            if self.lines.style == Style::Cutechess && self.scored_at != self.finished {
                out.push_str(&self.score_line());
            }
            out.push_str(&self.ratings(llr));
        }
        if self.lines.style == Style::Fastchess {
            out.push_str("Tournament finished\n");
            // fastchess's tracker (tournament.cpp), printed as its tournament ends.
            out.push('\n');
            for (name, timeouts, crashes) in &self.losses {
                let _ = write!(
                    out,
                    "Player: {name}\n  Timeouts: {timeouts}\n  Crashed: {crashes}\n"
                );
            }
            out.push('\n');
        }
        out.push_str("Finished match\n");
        if self.lines.style == Style::Fastchess {
            let s = self.started.elapsed().as_secs();
            let _ = writeln!(
                out,
                "Total Time: {:02}:{:02}:{:02} (hours:minutes:seconds)",
                s / 3600,
                s / 60 % 60,
                s % 60
            );
        }
        out
    }

    /// Counts a game `loser` lost on time, or by a crash or a stall (fastchess's
    /// `report_timeout` and `report_disconnect`).
    fn count_loss(&mut self, loser: &str, termination: Termination) {
        let (timeout, crash) = match termination {
            Termination::TimeForfeit => (1, 0),
            Termination::EngineCrash
            | Termination::EngineStall
            | Termination::MemoryLimit
            | Termination::DiskLimit => (0, 1),
            _ => return,
        };
        match self.losses.iter_mut().find(|(n, _, _)| n == loser) {
            Some(entry) => {
                entry.1 += timeout;
                entry.2 += crash;
            }
            None => self.losses.push((loser.to_string(), timeout, crash)),
        }
    }

    /// Counts a game for the first engine. Over pairs (`penta`), a game counts once its pair is
    /// complete, as the tools count it: every `Games:` line is then twice its `Ptnml` pairs.
    fn count_game(&mut self, index: u64, r: &GameRecord) {
        let first_white = r.white == self.names[0];
        let points = match (r.outcome, first_white) {
            (Outcome::Draw, _) => 0.5,
            (Outcome::WhiteWins, true) | (Outcome::BlackWins, false) => 1.0,
            _ => 0.0,
        };
        if !self.lines.penta {
            self.count.add(points);
            return;
        }
        let pair = index / 2;
        let Some(first) = self.open_pairs.remove(&pair) else {
            self.open_pairs.insert(pair, points);
            return;
        };
        let c = &mut self.count;
        c.add(first);
        c.add(points);
        match (first, points) {
            (a, b) if a + b == 2.0 => c.ww += 1,
            (a, b) if a + b == 1.5 => c.wd += 1,
            (a, b) if a == 0.5 && b == 0.5 => c.dd += 1,
            (a, b) if a + b == 1.0 => c.wl += 1,
            (a, b) if a + b == 0.5 => c.ld += 1,
            _ => c.ll += 1,
        }
    }

    fn score_line(&self) -> String {
        let c = &self.count;
        // No pair complete yet: fastchess divides by zero and prints `nan`.
        let score = match c.games() {
            0 => "nan".to_string(),
            n => format!("{:.3}", c.points() / n as f64),
        };
        format!(
            "Score of {} vs {}: {} - {} - {}  [{score}] {}\n",
            self.names[0],
            self.names[1],
            c.wins,
            c.losses,
            c.draws,
            c.games()
        )
    }

    fn ratings(&self, llr: Option<f64>) -> String {
        match self.lines.style {
            Style::Cutechess => self.cutechess_ratings(llr),
            Style::Fastchess => self.fastchess_ratings(llr),
        }
    }

    fn cutechess_ratings(&self, llr: Option<f64>) -> String {
        let sample = self.count.games_sample();
        let (elo, error) = sample.elo_and_error();
        let draws = self.count.draws as f64 / self.count.games() as f64;
        let mut out = format!(
            "Elo difference: {elo:.1} +/- {error:.1}, LOS: {:.1} %, DrawRatio: {:.1} %\n",
            sample.los() * 100.0,
            draws * 100.0
        );
        if let (Some(sprt), Some(llr)) = (self.sprt, llr) {
            let (lower, upper) = sprt.bounds();
            let share = if llr < 0.0 { llr / lower } else { llr / upper };
            let verdict = if llr >= upper {
                " - H1 was accepted"
            } else if llr < lower {
                " - H0 was accepted"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "SPRT: llr {llr:.2} ({:.1}%), lbound {lower:.2}, ubound {upper:.2}{verdict}",
                share * 100.0
            );
        }
        out
    }

    fn fastchess_ratings(&self, llr: Option<f64>) -> String {
        let c = &self.count;
        let rule = "--------------------------------------------------\n";
        let (sample, spread) = match self.lines.penta && c.pairs() > 0 {
            true => (c.pairs_sample(), 2.0),
            false => (c.games_sample(), 1.0),
        };
        let (elo, error) = sample.elo_and_error();
        let (nelo, nerror) = sample.nelo_and_error(spread);
        let mut out = format!(
            "{rule}Results of {} vs {} ({}):\nElo: {elo:.2} +/- {error:.2}, nElo: {nelo:.2} +/- \
                {nerror:.2}\n",
            self.names[0], self.names[1], self.setup
        );
        let games = c.games() as f64;
        if self.lines.penta {
            let pairs = c.pairs() as f64;
            let _ = writeln!(
                out,
                "LOS: {:.2} %, DrawRatio: {:.2} %, PairsRatio: {:.2}",
                sample.los() * 100.0,
                (c.wl + c.dd) as f64 / pairs * 100.0,
                (c.ww + c.wd) as f64 / (c.ld + c.ll) as f64
            );
        } else {
            let _ = writeln!(
                out,
                "LOS: {:.2} %, DrawRatio: {:.2} %",
                sample.los() * 100.0,
                c.draws as f64 / games * 100.0
            );
        }
        let _ = writeln!(
            out,
            "Games: {}, Wins: {}, Losses: {}, Draws: {}, Points: {:.1} ({:.2} %)",
            c.games(),
            c.wins,
            c.losses,
            c.draws,
            c.points(),
            c.points() / games * 100.0
        );
        if self.lines.penta {
            let _ = writeln!(
                out,
                "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {:.2}",
                c.ll,
                c.ld,
                c.wl + c.dd,
                c.wd,
                c.ww,
                c.wl as f64 / c.dd as f64
            );
        }
        if let (Some(sprt), Some(llr)) = (self.sprt, llr) {
            let (lower, upper) = sprt.bounds();
            let share = if llr >= 0.0 {
                llr / upper
            } else {
                -llr / lower
            };
            let _ = writeln!(
                out,
                "LLR: {llr:.2} ({:.1}%) ({lower:.2}, {upper:.2}) [{:.2}, {:.2}]",
                share * 100.0,
                sprt.elo0,
                sprt.elo1
            );
        }
        out.push_str(rule);
        // fastchess's {fmt} writes an undefined ratio (0/0) as `nan`, Rust as `NaN`; the names
        // on the block's first line are left as they are.
        let header = out.find("):\n").map_or(0, |i| i + 3);
        let (head, figures) = out.split_at(header);
        format!("{head}{}", figures.replace("NaN", "nan"))
    }
}

/// fastchess's time control text: `moves/base+inc`, `N/move`, `N nodes`, `N plies`.
fn time_control(e: &EngineConfig) -> String {
    let l = &e.limits;
    if let Some(tc) = l.tc {
        return tc.pgn();
    }
    if let Some(st) = l.movetime {
        return format!("{}/move", st.as_secs_f64());
    }
    if let Some(depth) = l.depth {
        return format!("{depth} plies");
    }
    l.nodes.map(|n| format!("{n} nodes")).unwrap_or_default()
}

/// Why a game ended, in the words the tools use where scripts look for them ("on time",
/// "disconnects", "stalls", "illegal move"), else arbiter's own.
/// The first `'...'` of a sentence: the move an illegal-move detail names.
fn quoted(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('\'')?;
    rest.split_once('\'').map(|(inside, _)| inside)
}

fn annotation(r: &GameRecord) -> String {
    let loser = match r.outcome {
        Outcome::WhiteWins => "Black",
        Outcome::BlackWins => "White",
        Outcome::Draw => {
            // Both tools' words (fastchess's match.hpp, cutechess-cli's result.cpp).
            return match r.termination {
                Termination::Repetition => "Draw by 3-fold repetition".into(),
                Termination::MoveRule => "Draw by fifty moves rule".into(),
                Termination::InsufficientMaterial => "Draw by insufficient mating material".into(),
                Termination::Stalemate => "Draw by stalemate".into(),
                Termination::Adjudication if !by_tables(r) => "Draw by adjudication".into(),
                _ => r.detail.clone(),
            };
        }
    };
    match r.termination {
        Termination::TimeForfeit => match overrun_ms(&r.detail) {
            Some(ms) => format!("{loser} loses on time ({ms}ms overrun)"),
            None => format!("{loser} loses on time"),
        },
        Termination::EngineCrash | Termination::MemoryLimit | Termination::DiskLimit => {
            format!("{loser} disconnects")
        }
        Termination::EngineStall => format!("{loser}'s connection stalls"),
        Termination::IllegalMove => format!("{loser} makes an illegal move"),
        Termination::Checkmate => {
            let winner = if loser == "Black" { "White" } else { "Black" };
            format!("{winner} mates")
        }
        Termination::Adjudication if !by_tables(r) => {
            let winner = if loser == "Black" { "White" } else { "Black" };
            format!("{winner} wins by adjudication")
        }
        _ => r.detail.clone(),
    }
}

/// Whether the tablebases adjudicated the game (their words are already the tools').
fn by_tables(r: &GameRecord) -> bool {
    r.detail.ends_with("SyzygyTB")
}

/// The milliseconds a time forfeit's move took beyond the clock, as the referee's detail says
/// them (`... 12 ms over)`).
fn overrun_ms(detail: &str) -> Option<u64> {
    let head = detail.strip_suffix(" ms over)")?;
    head.rsplit(' ').next()?.parse().ok()
}

/// fastchess's line for a checksummed PGN (`file_writer.hpp`: `File {} has CRC32: {:#x}`, the
/// file's name as given, the CRC-32 of the whole file as written), which fishtest's worker
/// compares with `hex(zlib.crc32(...))` of the file before it uploads it.
pub fn crc32_line(pgn: &std::path::Path) -> std::io::Result<String> {
    let mut hasher = crc32fast::Hasher::new();
    let mut file = std::fs::File::open(pgn)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = std::io::Read::read(&mut file, &mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!(
        "File {} has CRC32: {:#x}\n",
        pgn.display(),
        hasher.finalize()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_are_the_usual_ones() {
        // 60 wins, 20 draws, 20 losses: score 0.7.
        let s = Sample::of(&[(1.0, 60), (0.5, 20), (0.0, 20)]);
        assert!((s.score - 0.7).abs() < 1e-12);
        let (elo, error) = s.elo_and_error();
        assert!((elo - 147.19).abs() < 0.01, "{elo}");
        assert!(error > 50.0 && error < 90.0, "{error}");
        assert!(s.los() > 0.999);
    }

    fn game(white: &str, outcome: Outcome, termination: Termination, detail: &str) -> GameRecord {
        GameRecord {
            game: "chess".into(),
            white: white.into(),
            black: if white == "a" { "b" } else { "a" }.into(),
            start_fen: None,
            moves: Vec::new(),
            outcome,
            termination,
            detail: detail.into(),
            time_control: "-".into(),
            duration: std::time::Duration::ZERO,
            opening: 0,
            round: 1,
            date: "2026.12.06".into(),
            rules: Vec::new(),
            turnaround_us: Vec::new(),
            overloaded: false,
            pv_warnings: Vec::new(),
        }
    }

    #[test]
    fn an_undefined_ratio_is_nan_as_fastchess_prints_it() {
        let engines: Vec<EngineConfig> = ["a", "b"]
            .iter()
            .map(|n| EngineConfig::parse(&["cmd=x", "depth=1", &format!("name={n}")], &[]).unwrap())
            .collect();
        let lines = ToolLines::defaults(Style::Fastchess);
        let mut printer = Printer::new(lines, &engines, &|_, _| None, None, None);
        let totals = crate::tournament::totals::Totals::new(vec!["a".into(), "b".into()]);
        for (i, white) in ["a", "b"].iter().enumerate() {
            let record = game(white, Outcome::Draw, Termination::Repetition, "");
            printer.game(&Progress {
                game: i as u64 + 1,
                done: i as u64 + 1,
                total: 2,
                record: &record,
                totals: &totals,
                llr: None,
                more_follow: false,
            });
        }
        let end = printer.end(None);
        assert!(end.contains("PairsRatio: nan"), "{end}");
        assert!(!end.contains("NaN"), "{end}");
    }

    #[test]
    fn endings_are_told_in_the_tools_words() {
        let ended = |outcome, termination, detail: &str| {
            annotation(&game("a", outcome, termination, detail))
        };
        let draw = |t| ended(Outcome::Draw, t, "Draw by it");
        assert_eq!(draw(Termination::MoveRule), "Draw by fifty moves rule");
        assert_eq!(draw(Termination::Repetition), "Draw by 3-fold repetition");
        assert_eq!(
            draw(Termination::InsufficientMaterial),
            "Draw by insufficient mating material"
        );
        assert_eq!(draw(Termination::Adjudication), "Draw by adjudication");
        let tables = "Draw by adjudication: SyzygyTB";
        assert_eq!(
            ended(Outcome::Draw, Termination::Adjudication, tables),
            tables
        );
        assert_eq!(
            ended(
                Outcome::BlackWins,
                Termination::Adjudication,
                "White resigns"
            ),
            "Black wins by adjudication"
        );
        let late = "white ran out of time (0.212 s for its move, 12 ms over)";
        assert_eq!(
            ended(Outcome::BlackWins, Termination::TimeForfeit, late),
            "White loses on time (12ms overrun)"
        );
        assert_eq!(
            ended(Outcome::WhiteWins, Termination::TimeForfeit, "late"),
            "Black loses on time"
        );
    }
}
