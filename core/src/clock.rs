//! Time controls in cutechess syntax and the clock that enforces them.

use std::time::Duration;
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error(
    "bad time control '{text}': {reason} (expected [moves/]seconds[+increment], e.g. 40/60, \
    10+0.1)"
)]
pub struct TimeControlError {
    pub text: String,
    pub reason: String,
}

/// `[moves/]base[+inc]`, seconds: `base` every `moves` moves (or once), `inc` after every move.
/// `moves/base:moves2/base2` (as a PGN `TimeControl` tag writes two periods): `base` for the
/// first `moves`, then `base2` more for every `moves2` after them (the MIT course's
/// `tc = 40 60 20 30`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimeControl {
    pub moves: Option<u32>,
    pub base: Duration,
    pub inc: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<Period>,
}

/// The period that follows the first and repeats: `base` more for every `moves` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Period {
    pub moves: u32,
    pub base: Duration,
}

/// `40/60:20/30` as its first period and its second, where the text has two; `40/1:30` (a
/// minutes:seconds base) is one.
fn two_periods(text: &str) -> Option<(&str, &str)> {
    text.match_indices(':').map(|(i, _)| i).find_map(|i| {
        let (first, second) = (&text[..i], &text[i + 1..]);
        let (moves, _) = second.split_once('/')?;
        (first.contains('/') && !moves.is_empty() && moves.bytes().all(|b| b.is_ascii_digit()))
            .then_some((first, second))
    })
}

pub fn parse_seconds(text: &str) -> Option<Duration> {
    let secs: f64 = text.parse().ok()?;
    (0.0..1e9)
        .contains(&secs)
        .then(|| Duration::from_secs_f64(secs))
}

/// Seconds as fastchess also takes them, with their unit (`2+0.02s`, its `parseDuration`).
fn without_unit(text: &str) -> &str {
    match text.strip_suffix('s') {
        Some(number) if !number.is_empty() => number,
        _ => text,
    }
}

/// A base time as cutechess writes it: seconds (`90`, `0.5`), `minutes:seconds` (`1:30`) or
/// `hours:minutes:seconds`.
fn parse_clock_time(text: &str) -> Option<Duration> {
    let mut parts = text.rsplit(':');
    let seconds = parse_seconds(without_unit(parts.next()?))?;
    let mut whole = 0u64;
    for (part, scale) in parts.zip([60u64, 3600]) {
        let n: u64 = part.parse().ok()?;
        whole = whole.checked_add(n.checked_mul(scale)?)?;
    }
    if text.matches(':').count() > 2 || whole >= 1_000_000_000 {
        return None;
    }
    Some(seconds + Duration::from_secs(whole))
}

impl TimeControl {
    pub fn parse(text: &str) -> Result<TimeControl, TimeControlError> {
        let err = |reason: &str| TimeControlError {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        if let Some((first, second)) = two_periods(text) {
            let mut tc = TimeControl::parse(first).map_err(|e| err(&e.reason))?;
            let later = TimeControl::parse(second).map_err(|e| err(&e.reason))?;
            return match (tc.moves, later.moves, later.inc.is_zero(), later.then) {
                (Some(_), Some(moves), true, None) => {
                    tc.then = Some(Period {
                        moves,
                        base: later.base,
                    });
                    Ok(tc)
                }
                _ => Err(err(
                    "two periods are moves/seconds:moves/seconds, the increment on the first",
                )),
            };
        }
        let (moves, rest) = match text.split_once('/') {
            Some((m, rest)) => {
                let m: u32 = m
                    .parse()
                    .map_err(|_| err("the move count is not a number"))?;
                // cutechess-cli and fastchess read `0/` as no move count: one period for the game.
                ((m > 0).then_some(m), rest)
            }
            None => (None, text),
        };
        let (base, inc) = match rest.split_once('+') {
            Some((b, i)) => (b, Some(i)),
            None => (rest, None),
        };
        let base = parse_clock_time(base)
            .ok_or_else(|| err("the base time is not seconds or minutes:seconds"))?;
        let inc = match inc {
            Some(i) => parse_seconds(without_unit(i))
                .ok_or_else(|| err("the increment is not a number of seconds"))?,
            None => Duration::ZERO,
        };
        if base.is_zero() && inc.is_zero() {
            return Err(err("no time at all"));
        }
        Ok(TimeControl {
            moves,
            base,
            inc,
            then: None,
        })
    }

    /// PGN `TimeControl` tag value: `40/60`, `10+0.1`.
    pub fn pgn(&self) -> String {
        let secs = |d: Duration| {
            let s = d.as_secs_f64();
            if s.fract() == 0.0 {
                format!("{}", s as u64)
            } else {
                format!("{s}")
            }
        };
        let mut out = String::new();
        if let Some(m) = self.moves {
            out.push_str(&format!("{m}/"));
        }
        out.push_str(&secs(self.base));
        if !self.inc.is_zero() {
            out.push_str(&format!("+{}", secs(self.inc)));
        }
        if let Some(then) = self.then {
            out.push_str(&format!(":{}/{}", then.moves, secs(then.base)));
        }
        out
    }
}

/// One side's clock.
#[derive(Clone, Debug)]
pub struct Clock {
    tc: TimeControl,
    remaining: Duration,
    moves_made: u32,
    /// Whether a move's own increment counts toward the time it may take. cutechess-cli adds
    /// it before it looks for a flag, and fastchess holds it on the clock in advance, so an
    /// engine's time manager, written against them, may plan to spend it; a harness that
    /// forfeits such a move decides games those tools would let be played. The MIT course's
    /// tester, as FIDE's rules, adds it only after the move.
    increment_first: bool,
}

impl Clock {
    /// A clock as cutechess-cli and fastchess keep it: a move loses on time only when it took
    /// longer than the time left plus its increment.
    pub fn new(tc: TimeControl) -> Clock {
        Clock {
            tc,
            remaining: tc.base,
            moves_made: 0,
            increment_first: true,
        }
    }

    /// A clock as the MIT course's tester keeps it: the increment comes after the move, which
    /// must fit in the time left.
    pub fn increment_after(tc: TimeControl) -> Clock {
        Clock {
            increment_first: false,
            ..Clock::new(tc)
        }
    }

    /// The longest a move may take before it loses on time (a margin aside).
    pub fn allowance(&self) -> Duration {
        match self.increment_first {
            true => self.remaining + self.tc.inc,
            false => self.remaining,
        }
    }

    pub fn remaining(&self) -> Duration {
        self.remaining
    }

    pub fn increment(&self) -> Duration {
        self.tc.inc
    }

    /// Moves left until the next time control, for `go movestogo`.
    pub fn moves_to_go(&self) -> Option<u32> {
        let first = self.tc.moves?;
        Some(match self.tc.then {
            Some(then) if self.moves_made >= first => {
                then.moves - (self.moves_made - first) % then.moves
            }
            Some(_) => first - self.moves_made,
            None => first - self.moves_made % first,
        })
    }

    /// `moves_to_go` on the first move of a new period (none without a move count).
    fn moves_to_go_at_start_of_period(&self) -> Option<u32> {
        match (self.tc.moves, self.tc.then) {
            (None, _) => Some(0),
            (Some(_), Some(then)) => Some(then.moves),
            (Some(first), None) => Some(first),
        }
    }

    /// Charges a move's thinking time. Returns false, leaving the clock at zero, if the time ran
    /// out by more than `margin`.
    pub fn charge(&mut self, elapsed: Duration, margin: Duration) -> bool {
        if elapsed > self.allowance() + margin {
            self.remaining = Duration::ZERO;
            return false;
        }
        self.remaining = match self.increment_first {
            true => (self.remaining + self.tc.inc).saturating_sub(elapsed),
            false => self.remaining.saturating_sub(elapsed) + self.tc.inc,
        };
        self.moves_made += 1;
        if self.moves_to_go() == self.moves_to_go_at_start_of_period() {
            self.remaining += self.tc.then.map_or(self.tc.base, |then| then.base);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_count_of_zero_is_none_as_the_tools_read_it() {
        assert_eq!(
            TimeControl::parse("0/10+0.1").unwrap(),
            TimeControl::parse("10+0.1").unwrap()
        );
    }

    #[test]
    fn parses_cutechess_time_controls() {
        let tc = TimeControl::parse("40/60+0.5").unwrap();
        assert_eq!(tc.moves, Some(40));
        assert_eq!(tc.base, Duration::from_secs(60));
        assert_eq!(tc.inc, Duration::from_millis(500));
        assert_eq!(tc.pgn(), "40/60+0.5");
        assert_eq!(TimeControl::parse("2+0.02").unwrap().pgn(), "2+0.02");
        // fastchess's e2e scripts write seconds with their unit.
        assert_eq!(TimeControl::parse("2+0.02s").unwrap().pgn(), "2+0.02");
        assert_eq!(TimeControl::parse("10s+0.1s").unwrap().pgn(), "10+0.1");
        assert!(TimeControl::parse("s+0.1").is_err());
        assert_eq!(TimeControl::parse("10").unwrap().inc, Duration::ZERO);
        // cutechess's minutes:seconds, as in its manual's `tc=40/1:30+1`.
        let tc = TimeControl::parse("40/1:30+1").unwrap();
        assert_eq!(
            (tc.moves, tc.base, tc.inc),
            (Some(40), Duration::from_secs(90), Duration::from_secs(1))
        );
        assert_eq!(
            TimeControl::parse("1:00:05").unwrap().base,
            Duration::from_secs(3605)
        );
        for bad in [
            "", "abc", "10+x", "-5", "0+0", "x/10", "1:2:3:4", ":5", "1::5",
        ] {
            assert!(TimeControl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn clock_adds_increment_and_new_periods() {
        let mut c = Clock::new(TimeControl::parse("2/10+1").unwrap());
        assert_eq!(c.moves_to_go(), Some(2));
        assert!(c.charge(Duration::from_secs(3), Duration::ZERO));
        assert_eq!(c.remaining(), Duration::from_secs(8));
        assert_eq!(c.moves_to_go(), Some(1));
        assert!(c.charge(Duration::from_secs(3), Duration::ZERO));
        assert_eq!(c.remaining(), Duration::from_secs(16));
        // 16 s left and the move's own 1 s of increment.
        assert!(!c.charge(Duration::from_secs(18), Duration::ZERO));
        // Two periods: 10 s for the first 2 moves, then 5 s more for every 3 after them.
        let mut two = Clock::new(TimeControl::parse("2/10:3/5").unwrap());
        assert_eq!(TimeControl::parse("2/10:3/5").unwrap().pgn(), "2/10:3/5");
        let mut seen = Vec::new();
        for _ in 0..8 {
            seen.push((two.moves_to_go(), two.remaining().as_secs()));
            assert!(two.charge(Duration::from_secs(1), Duration::ZERO));
        }
        let expected = [
            (2, 10),
            (1, 9),
            (3, 13),
            (2, 12),
            (1, 11),
            (3, 15),
            (2, 14),
            (1, 13),
        ];
        let expected: Vec<_> = expected.iter().map(|&(m, r)| (Some(m), r)).collect();
        assert_eq!(seen, expected);
        for bad in ["2/10:3/5+1", "10:3/5", "2/10:x/5", "2/10:3/5:4/6"] {
            assert!(TimeControl::parse(bad).is_err(), "{bad}");
        }
        let mut m = Clock::new(TimeControl::parse("1").unwrap());
        assert!(
            m.charge(Duration::from_millis(1050), Duration::from_millis(100)),
            "within the margin"
        );
    }

    /// cutechess-cli and fastchess count a move's own increment toward it; the course's tester
    /// adds it only after the move.
    #[test]
    fn a_moves_increment_counts_toward_it_but_on_the_courses_clock() {
        let tc = TimeControl::parse("1+0.01").unwrap();
        let over = Duration::from_millis(1005);
        let mut theirs = Clock::new(tc);
        assert_eq!(theirs.allowance(), Duration::from_millis(1010));
        assert!(theirs.charge(over, Duration::ZERO));
        assert_eq!(theirs.remaining(), Duration::from_millis(5));
        assert!(!theirs.charge(Duration::from_millis(16), Duration::ZERO));
        let mut course = Clock::increment_after(tc);
        assert_eq!(course.allowance(), Duration::from_secs(1));
        assert!(!course.charge(over, Duration::ZERO));
    }
}
