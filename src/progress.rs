//! What a run shows while it plays: a banner at once (what is played, by whom, where the output
//! goes), then a progress bar from 0/N on a terminal, or one line per game elsewhere.

use arbiter::compat::tool_lines::{Printer, TOOL_LINES};
use arbiter::engine::EngineConfig;
use arbiter::stats::{fixed, signed, trinomial_elo, EloEstimate};
use arbiter::tournament::{Colours, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

/// What the banner says about a run.
/// The default a started engine (by its index in the run) gave an option.
pub type OfferedDefault<'a> = dyn Fn(usize, &str) -> Option<String> + 'a;

pub struct Plan<'a> {
    pub kind: &'a str,
    pub game: &'a str,
    pub format: &'a str,
    pub engines: &'a [EngineConfig],
    pub games: u64,
    pub already: u64,
    pub concurrency: usize,
    pub openings: Option<(&'a Path, usize)>,
    /// How the book is walked: in a seeded random order, and from which opening (1-based).
    pub random_order: bool,
    pub book_start: u64,
    pub games_per_opening: u64,
    pub colours: Colours,
    pub out_dir: &'a Path,
    pub sprt: Option<arbiter::stats::Sprt>,
    /// The game's rule options the run chose (`name=value`).
    pub rules: &'a [(String, String)],
    /// The default a started engine (by its index) gave an option.
    pub offered: Box<OfferedDefault<'a>>,
}

pub fn banner(plan: &Plan) -> String {
    let mut text = format!(
        "arbiter {}: {}, {}, {} engines, {} games, {} at a time\n",
        plan.kind,
        plan.game,
        plan.format,
        plan.engines.len(),
        plan.games,
        plan.concurrency
    );
    if let Some(reading) = arbiter::compat::READING.get() {
        text.push_str(&format!("  {reading}\n"));
    }
    if plan.already > 0 {
        text.push_str(&format!(
            "  resuming: {} games already played, {} to go\n",
            plan.already,
            plan.games.saturating_sub(plan.already)
        ));
    }
    for e in plan.engines {
        let program = Path::new(&e.cmd)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| e.cmd.clone());
        let options: Vec<String> = e.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.push_str(&format!(
            "  {:<12} {program} {} {}\n",
            e.name,
            e.limits_summary(),
            options.join(" ")
        ));
    }
    match plan.openings {
        Some((path, n)) => {
            text.push_str(&format!("  openings: {} ({n})", path.display()));
            if plan.random_order {
                text.push_str(", in random order");
            }
            if plan.book_start > 1 {
                text.push_str(&format!(", from opening {}", plan.book_start));
            }
            match plan.games_per_opening {
                2 => {}
                1 => text.push_str(", each game its own"),
                n => text.push_str(&format!(", each for {n} games in a row")),
            }
            text.push('\n');
        }
        None => text.push_str("  openings: the start position\n"),
    }
    for (name, value) in plan.rules {
        let why = match (name.as_str(), value.as_str()) {
            ("move-rule", "course") => {
                " (the MIT course's tester: drawn after 200 plies without a zap, counted from \
                 the book's last move; the rule text says 100)"
            }
            _ => "",
        };
        text.push_str(&format!("  rules:    {name}={value}{why}\n"));
    }
    if plan.colours != Colours::Alternate {
        text.push_str(&format!("  colours:  {}\n", plan.colours.describe()));
    }
    text.push_str(&format!("  output:   {}\n", plan.out_dir.display()));
    text
}

pub struct Reporter {
    bar: Option<ProgressBar>,
    quiet: bool,
    started: Instant,
    already: u64,
    /// Lines of games synced together, written at once after the last of them.
    pending: std::cell::RefCell<String>,
    /// The lines of the tool whose command line this is, printed instead of arbiter's.
    tool: std::cell::RefCell<Option<Printer>>,
}

impl Reporter {
    /// Prints the banner and shows the bar at its starting count at once.
    pub fn start(plan: &Plan, quiet: bool) -> Reporter {
        if !quiet {
            say_inline!("{}", banner(plan));
        }
        let tool = TOOL_LINES.get().map(|lines| {
            Printer::new(
                *lines,
                plan.engines,
                &*plan.offered,
                plan.sprt,
                plan.openings.map(|(book, _)| book),
            )
        });
        let bar = (!quiet && tool.is_none() && std::io::stdout().is_terminal()).then(|| {
            let target =
                ProgressDrawTarget::term_like(Box::new(ShortOfTheEdge(console::Term::stderr())));
            let bar = ProgressBar::with_draw_target(Some(plan.games), target);
            bar.set_style(
                ProgressStyle::with_template("{bar:20} {pos}/{len} {elapsed:>4} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_position(plan.already);
            bar.set_message("waiting for the first game");
            bar.enable_steady_tick(Duration::from_millis(500));
            let drawn = bar.clone();
            arbiter::out::set_notice_hook(Some(std::sync::Arc::new(move |line: &str| {
                drawn.suspend(|| eprintln!("{line}"))
            })));
            bar
        });
        Reporter {
            bar,
            quiet,
            started: Instant::now(),
            already: plan.already,
            pending: std::cell::RefCell::new(String::new()),
            tool: std::cell::RefCell::new(tool),
        }
    }

    /// The tool's closing lines, when its lines are printed.
    pub fn end(&self, llr: Option<f64>) {
        if let Some(printer) = &*self.tool.borrow() {
            if !self.quiet {
                say_inline!("{}", printer.end(llr));
            }
        }
    }

    /// Games per minute since the start, and the time left at that pace.
    fn pace(&self, p: &Progress) -> String {
        let minutes = self.started.elapsed().as_secs_f64() / 60.0;
        let played = p.done.saturating_sub(self.already) as f64;
        if played == 0.0 || minutes <= 0.0 {
            return String::new();
        }
        let per_minute = played / minutes;
        let left = p.total.saturating_sub(p.done) as f64 / per_minute;
        let rate = if per_minute >= 10.0 {
            format!("{per_minute:.0}/min")
        } else {
            format!("{per_minute:.1}/min")
        };
        format!("{rate} ETA {}", short_duration(left * 60.0))
    }

    pub fn game(&self, p: &Progress) {
        let standing = standing(p);
        let llr = p
            .llr
            .map(|v| format!(" LLR {}", fixed(v, 2)))
            .unwrap_or_default();
        match &self.bar {
            Some(bar) => {
                if !p.record.pv_warnings.is_empty() {
                    bar.suspend(|| {
                        for warning in &p.record.pv_warnings {
                            eprintln!("{warning}");
                        }
                    });
                }
                bar.set_position(p.done);
                let used = 20 + 1 + 2 * p.total.to_string().len() + 1 + 1 + 4 + 1;
                let room = terminal_width().saturating_sub(used);
                let message = format!("{} {standing}{llr}", self.pace(p));
                bar.set_message(message.chars().take(room).collect::<String>());
            }
            None if !self.quiet => {
                let r = p.record;
                let mut pending = self.pending.borrow_mut();
                match &mut *self.tool.borrow_mut() {
                    Some(printer) => pending.push_str(&printer.game(p)),
                    None => {
                        for warning in &r.pv_warnings {
                            let _ = writeln!(pending, "{warning}");
                        }
                        let _ = writeln!(
                            pending,
                            "Finished game {} ({} vs {}): {} {{{}}} [{}/{}] {standing}{llr}",
                            p.game, r.white, r.black, r.outcome, r.detail, p.done, p.total
                        );
                    }
                }
                if !p.more_follow {
                    say_inline!("{pending}");
                    pending.clear();
                }
            }
            None => {}
        }
    }

    /// Clears the bar, so the summary after it (or after Ctrl-C) starts on a clean line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            arbiter::out::set_notice_hook(None);
            bar.finish_and_clear();
        }
    }
}

/// For two engines, the first one's Elo and interval; for more, the leader by points and its
/// performance against the field.
fn standing(p: &Progress) -> String {
    let t = p.totals;
    if t.names.len() == 2 {
        let w = t.per_engine[0];
        let elo = labelled(" Elo ", compact(trinomial_elo(w)));
        return format!("{} +{}-{}={}{elo}", t.names[0], w.wins, w.losses, w.draws);
    }
    let best = (0..t.names.len()).max_by(|&a, &b| {
        t.per_engine[a]
            .points()
            .total_cmp(&t.per_engine[b].points())
    });
    best.map(|i| {
        let w = t.per_engine[i];
        let elo = labelled(" Elo vs field ", compact(trinomial_elo(w)));
        format!("leader {} {}/{}{elo}", t.names[i], w.points(), w.games())
    })
    .unwrap_or_default()
}

/// `label` before `text`, or nothing where there is no text.
fn labelled(label: &str, text: String) -> String {
    match text.is_empty() {
        true => text,
        false => format!("{label}{text}"),
    }
}

/// An Elo estimate in a few columns: `+35 [-20,+90]`, `>+131`, `<+84`.
fn compact(e: EloEstimate) -> String {
    let whole = |v: f64| {
        if v.is_infinite() {
            signed(v)
        } else {
            let r = v.round();
            if r == 0.0 {
                "0".into()
            } else {
                format!("{r:+.0}")
            }
        }
    };
    match e {
        EloEstimate::Estimate { elo, lower, upper } => {
            format!("{} [{},{}]", whole(elo), whole(lower), whole(upper))
        }
        // A bound on the other side of zero from the result ("won every game: above -307"
        // after one game) tells a reader nothing the score does not: left out.
        EloEstimate::Perfect {
            won_all: true,
            bound,
        } if bound > 0.0 => format!(">{}", whole(bound)),
        EloEstimate::Perfect {
            won_all: false,
            bound,
        } if bound < 0.0 => format!("<{}", whole(bound)),
        EloEstimate::Perfect { .. } => String::new(),
        EloEstimate::NoGames => String::new(),
    }
}

/// Columns the bar leaves free at the right edge. indicatif pads its line to the full width; a
/// full line wraps when the terminal echoes `^C` after it, and clearing the bar then leaves it
/// on the screen above the summary.
const RIGHT_MARGIN: u16 = 3;

/// The width of the terminal the bar is drawn on, less the margin.
fn terminal_width() -> usize {
    ShortOfTheEdge(console::Term::stderr()).width() as usize
}

/// stderr as indicatif sees it, a few columns narrower than it is.
#[derive(Debug)]
struct ShortOfTheEdge(console::Term);

impl TermLike for ShortOfTheEdge {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(RIGHT_MARGIN).max(20)
    }
    fn height(&self) -> u16 {
        self.0.size().0
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_up(n)
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_down(n)
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_right(n)
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.0.move_cursor_left(n)
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.0.write_line(s)
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.0.write_str(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.0.clear_line()
    }
    fn flush(&self) -> std::io::Result<()> {
        self.0.flush()
    }
}

fn short_duration(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    match secs {
        0..=99 => format!("{secs}s"),
        100..=5999 => format!("{}m", secs.div_ceil(60)),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_estimates_are_short() {
        assert_eq!(short_duration(42.4), "42s");
        assert_eq!(short_duration(600.0), "10m");
        assert_eq!(short_duration(7300.0), "2h01m");
        let e = EloEstimate::Estimate {
            elo: 35.4,
            lower: -20.2,
            upper: 90.0,
        };
        assert_eq!(compact(e), "+35 [-20,+90]");
        assert_eq!(
            compact(EloEstimate::Perfect {
                won_all: true,
                bound: 130.8
            }),
            ">+131"
        );
        let one_win = EloEstimate::Perfect {
            won_all: true,
            bound: -307.0,
        };
        assert_eq!(compact(one_win), "");
    }
}
