//! Ending games early on the engines' own scores, as cutechess's `-draw` and `-resign` do.

use crate::game::Color;

/// `--draw movenumber=N movecount=N score=CP`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRule {
    pub movenumber: u32,
    pub movecount: u32,
    pub score: i32,
}

/// `--resign movecount=N score=CP`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResignRule {
    pub movecount: u32,
    pub score: i32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adjudication {
    pub draw: Option<DrawRule>,
    pub resign: Option<ResignRule>,
    /// Plies after which the game is drawn ("max plies").
    pub max_plies: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Draw,
    /// This side resigns.
    Resign(Color),
}

fn parse_keys(text: &str, keys: &[&str]) -> Result<Vec<i64>, String> {
    let mut values = vec![None; keys.len()];
    for part in text.split_whitespace().flat_map(|p| p.split(',')) {
        if part.is_empty() {
            continue;
        }
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not key=value"))?;
        let i = keys
            .iter()
            .position(|key| *key == k)
            .ok_or_else(|| format!("unknown key '{k}' (expected {})", keys.join(", ")))?;
        values[i] = Some(
            v.parse::<i64>()
                .map_err(|_| format!("{k}={v} is not a number"))?,
        );
    }
    keys.iter()
        .zip(values)
        .map(|(k, v)| v.ok_or_else(|| format!("missing {k}=")))
        .collect()
}

impl DrawRule {
    pub fn parse(text: &str) -> Result<DrawRule, String> {
        let v = parse_keys(text, &["movenumber", "movecount", "score"])?;
        Ok(DrawRule {
            movenumber: v[0].max(0) as u32,
            movecount: v[1].max(1) as u32,
            score: v[2].abs() as i32,
        })
    }
}

impl ResignRule {
    pub fn parse(text: &str) -> Result<ResignRule, String> {
        let v = parse_keys(text, &["movecount", "score"])?;
        Ok(ResignRule {
            movecount: v[0].max(1) as u32,
            score: v[1].abs() as i32,
        })
    }
}

impl Adjudication {
    /// Looks at the scores so far (each the mover's own view, `None` where it gave none) after
    /// a move by `mover`. `book` plies at the start carry no scores and are skipped.
    pub fn judge(&self, scores: &[Option<i32>], book: usize, mover: Color) -> Option<Verdict> {
        let played = &scores[book.min(scores.len())..];
        if let Some(rule) = self.resign {
            let own: Vec<Option<i32>> = played.iter().rev().step_by(2).copied().collect();
            let n = rule.movecount as usize;
            if own.len() >= n && own[..n].iter().all(|s| s.is_some_and(|s| s <= -rule.score)) {
                return Some(Verdict::Resign(mover));
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
            .contains("not a number"));
    }

    #[test]
    fn resigns_after_enough_hopeless_scores_of_its_own() {
        let rules = Adjudication {
            resign: Some(ResignRule {
                movecount: 2,
                score: 500,
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
