//! Ending games early on the engines' own scores, as cutechess's `-draw` and `-resign` do.

use crate::game::Color;

/// `--draw movenumber=N movecount=N score=CP`
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DrawRule {
    pub movenumber: u32,
    pub movecount: u32,
    pub score: i32,
}

/// `--resign movecount=N score=CP [twosided=true]`
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResignRule {
    pub movecount: u32,
    pub score: i32,
    /// Both engines must agree: the loser's last N scores at most -CP and the winner's at
    /// least +CP (cutechess's and fastchess's `twosided=true`).
    #[serde(default)]
    pub twosided: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Adjudication {
    pub draw: Option<DrawRule>,
    pub resign: Option<ResignRule>,
    /// Plies after which the game is drawn ("max plies").
    pub max_plies: Option<usize>,
    /// Chess games ended by Syzygy tablebases.
    pub tablebase: Option<super::tablebase::TbAdjudication>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Draw,
    /// This side resigns.
    Resign(Color),
}

/// A key, and the range its value must lie in.
type Key = (&'static str, i64, i64);

/// Longest a move count may be (a game is drawn long before) and largest score, in centipawns,
/// that still means something: anything outside is a typo, not a setting.
const MAX_MOVES: i64 = 10_000;
/// fastchess takes any score an `int` holds (cli.cpp, `parseScalar<int>`): `score=500000`
/// means "never, short of a mate score past it".
const MAX_SCORE: i64 = i32::MAX as i64;

fn parse_keys(text: &str, keys: &[Key]) -> Result<Vec<i64>, String> {
    let mut values = vec![None; keys.len()];
    for part in text.split_whitespace().flat_map(|p| p.split(',')) {
        if part.is_empty() {
            continue;
        }
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not key=value"))?;
        let names: Vec<&str> = keys.iter().map(|key| key.0).collect();
        let i = names
            .iter()
            .position(|key| *key == k)
            .ok_or_else(|| format!("unknown key '{k}' (expected {})", names.join(", ")))?;
        let (_, min, max) = keys[i];
        let value = v
            .parse::<i64>()
            .map_err(|_| format!("{k}={v} is not a whole number"))?;
        if !(min..=max).contains(&value) {
            return Err(format!(
                "{k}={v} is out of range: it must be {min} to {max}"
            ));
        }
        values[i] = Some(value);
    }
    keys.iter()
        .zip(values)
        .map(|(k, v)| v.ok_or_else(|| format!("missing {}=", k.0)))
        .collect()
}

impl DrawRule {
    pub fn parse(text: &str) -> Result<DrawRule, String> {
        let v = parse_keys(
            text,
            &[
                ("movenumber", 0, MAX_MOVES),
                ("movecount", 1, MAX_MOVES),
                ("score", 0, MAX_SCORE),
            ],
        )?;
        Ok(DrawRule {
            movenumber: v[0] as u32,
            movecount: v[1] as u32,
            score: v[2] as i32,
        })
    }
}

impl ResignRule {
    pub fn parse(text: &str) -> Result<ResignRule, String> {
        let mut twosided = false;
        let mut numbers = Vec::new();
        for part in text.split_whitespace().flat_map(|p| p.split(',')) {
            match part.strip_prefix("twosided=") {
                Some("true") => twosided = true,
                Some("false") => twosided = false,
                Some(v) => return Err(format!("twosided={v}: expected true or false")),
                None => numbers.push(part),
            }
        }
        let v = parse_keys(
            &numbers.join(" "),
            &[("movecount", 1, MAX_MOVES), ("score", 0, MAX_SCORE)],
        )?;
        Ok(ResignRule {
            movecount: v[0] as u32,
            score: v[1] as i32,
            twosided,
        })
    }

    /// Who resigns, given each side's last scores (newest first, each its own view): the mover's
    /// and its opponent's.
    fn verdict(
        &self,
        mover: &[Option<i32>],
        opponent: &[Option<i32>],
        side: Color,
    ) -> Option<Color> {
        let n = self.movecount as usize;
        let last = |scores: &[Option<i32>], ok: &dyn Fn(i32) -> bool| {
            scores.len() >= n && scores[..n].iter().all(|s| s.is_some_and(ok))
        };
        let losing = |s: i32| s <= -self.score;
        let winning = |s: i32| s >= self.score;
        if !self.twosided {
            return last(mover, &losing).then_some(side);
        }
        if last(mover, &losing) && last(opponent, &winning) {
            Some(side)
        } else if last(mover, &winning) && last(opponent, &losing) {
            Some(side.other())
        } else {
            None
        }
    }
}

impl Adjudication {
    /// Looks at the scores so far (each the mover's own view, `None` where it gave none) after
    /// a move by `mover`. `book` plies at the start carry no scores and are skipped.
    pub fn judge(&self, scores: &[Option<i32>], book: usize, mover: Color) -> Option<Verdict> {
        let played = &scores[book.min(scores.len())..];
        if let Some(rule) = self.resign {
            // Only each side's last `movecount` scores matter: a long game is not copied whole
            // at every ply.
            let n = rule.movecount as usize;
            let own: Vec<Option<i32>> = played.iter().rev().step_by(2).take(n).copied().collect();
            let theirs: Vec<Option<i32>> = played
                .iter()
                .rev()
                .skip(1)
                .step_by(2)
                .take(n)
                .copied()
                .collect();
            if let Some(loser) = rule.verdict(&own, &theirs, mover) {
                return Some(Verdict::Resign(loser));
            }
        }
        if let Some(rule) = self.draw {
            let n = 2 * rule.movecount as usize;
            let move_number = scores.len() / 2 + 1;
            if move_number >= rule.movenumber as usize
                && played.len() >= n
                && played[played.len() - n..]
                    .iter()
                    .all(|s| s.is_some_and(|s| s.abs() <= rule.score))
            {
                return Some(Verdict::Draw);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rules() {
        assert_eq!(
            DrawRule::parse("movenumber=40 movecount=8 score=10").unwrap(),
            DrawRule {
                movenumber: 40,
                movecount: 8,
                score: 10
            }
        );
        assert!(DrawRule::parse("movenumber=40 movecount=8")
            .unwrap_err()
            .contains("score"));
        assert!(ResignRule::parse("movecount=3 score=x")
            .unwrap_err()
            .contains("not a whole number"));
    }

    #[test]
    fn out_of_range_values_are_refused_not_cast() {
        for bad in [
            "movecount=1 score=4294967295",
            "movecount=0 score=300",
            "movecount=-2 score=300",
            "movecount=3 score=-300",
            "movecount=99999999999 score=300",
        ] {
            let err = ResignRule::parse(bad).unwrap_err();
            assert!(err.contains("out of range"), "{bad}: {err}");
        }
        let err = DrawRule::parse("movenumber=-1 movecount=8 score=10").unwrap_err();
        assert!(err.contains("movenumber=-1 is out of range"), "{err}");
        assert!(DrawRule::parse("movenumber=0 movecount=1 score=0").is_ok());
    }

    #[test]
    fn resigns_after_enough_hopeless_scores_of_its_own() {
        let rules = Adjudication {
            resign: Some(ResignRule {
                movecount: 2,
                score: 500,
                twosided: false,
            }),
            ..Default::default()
        };
        // White's scores are at even indices; the last mover is Black (index 3).
        let scores = [Some(0), Some(-600), Some(700), Some(-900)];
        assert_eq!(
            rules.judge(&scores, 0, Color::Black),
            Some(Verdict::Resign(Color::Black))
        );
        let one_bad = [Some(0), Some(-100), Some(700), Some(-900)];
        assert_eq!(rules.judge(&one_bad, 0, Color::Black), None);
    }

    #[test]
    fn two_sided_resignation_needs_the_winner_to_agree() {
        let rules = Adjudication {
            resign: Some(ResignRule::parse("movecount=2 score=500 twosided=true").unwrap()),
            ..Default::default()
        };
        // Black (odd indices) thinks it is lost; White must think it is winning too.
        let agreed = [Some(600), Some(-600), Some(700), Some(-900)];
        assert_eq!(
            rules.judge(&agreed, 0, Color::Black),
            Some(Verdict::Resign(Color::Black))
        );
        let white_unsure = [Some(100), Some(-600), Some(700), Some(-900)];
        assert_eq!(rules.judge(&white_unsure, 0, Color::Black), None);
        // After White's move, the loser can be the side that did not move.
        let after_white = [Some(-600), Some(600), Some(-700), Some(900), Some(-800)];
        assert_eq!(
            rules.judge(&after_white, 0, Color::White),
            Some(Verdict::Resign(Color::White))
        );
        let black_loses = [Some(600), Some(-600), Some(700), Some(-900), Some(800)];
        assert_eq!(
            rules.judge(&black_loses, 0, Color::White),
            Some(Verdict::Resign(Color::Black))
        );
        assert!(ResignRule::parse("movecount=2 score=500 twosided=maybe")
            .unwrap_err()
            .contains("twosided"));
    }

    #[test]
    fn draws_after_quiet_scores_past_the_move_number() {
        let rules = Adjudication {
            draw: Some(DrawRule {
                movenumber: 2,
                movecount: 1,
                score: 20,
            }),
            ..Default::default()
        };
        assert_eq!(
            rules.judge(&[Some(5), Some(-3)], 0, Color::Black),
            Some(Verdict::Draw)
        );
        assert_eq!(rules.judge(&[Some(5), Some(-30)], 0, Color::Black), None);
        assert_eq!(rules.judge(&[Some(5), None], 0, Color::Black), None);
    }
}
