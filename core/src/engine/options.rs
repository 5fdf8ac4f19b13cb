//! The options an engine offers (UCI `option name ... type ...`, CECP `feature option="..."`) and
//! the check of a user's `option.Name=value` against them: a misspelt name or a value the engine
//! would refuse must stop the run before the first game, not turn an SPRT into a self-play.

/// What kind of value an option takes, with its bounds or choices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Check,
    Spin { min: Option<i64>, max: Option<i64> },
    Combo { vars: Vec<String> },
    Button,
    Text,
}

/// One option as the engine described it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfferedOption {
    pub name: String,
    pub kind: OptionKind,
    /// The first word of its default value, when it gave one.
    pub default: Option<String>,
}

impl OfferedOption {
    /// The words after `option name` of a UCI line. Names may hold spaces (`Skill Level`); a
    /// combo's values are the words after each `var` (Fairy-Stockfish's variant names).
    pub fn from_uci_words(rest: &[&str]) -> OfferedOption {
        let type_at = rest.iter().position(|w| *w == "type").unwrap_or(rest.len());
        let name = rest[..type_at].join(" ");
        let fields = &rest[(type_at + 1).min(rest.len())..];
        let after = |key: &str| {
            fields
                .iter()
                .position(|w| *w == key)
                .and_then(|i| fields.get(i + 1))
                .and_then(|v| v.parse::<i64>().ok())
        };
        let kind = match fields.first().copied() {
            Some("check") => OptionKind::Check,
            Some("spin") => OptionKind::Spin {
                min: after("min"),
                max: after("max"),
            },
            Some("combo") => OptionKind::Combo {
                vars: fields
                    .iter()
                    .enumerate()
                    .filter(|(_, w)| **w == "var")
                    .filter_map(|(i, _)| fields.get(i + 1).map(|v| v.to_string()))
                    .collect(),
            },
            Some("button") => OptionKind::Button,
            _ => OptionKind::Text,
        };
        let default = fields
            .iter()
            .position(|w| *w == "default")
            .and_then(|i| fields.get(i + 1))
            .map(|v| v.to_string());
        OfferedOption {
            name,
            kind,
            default,
        }
    }

    /// The value of a CECP `feature option="NAME -TYPE ..."`: `-spin DEFAULT MIN MAX`,
    /// `-check 0|1`, `-combo A /// *B /// C`, `-string X`, `-file X`, `-path X`, `-button`.
    pub fn from_cecp(text: &str) -> Option<OfferedOption> {
        let (name, rest) = text.split_once(" -")?;
        let mut words = rest.split_whitespace();
        let mut default = None;
        let kind = match words.next()? {
            "check" => OptionKind::Check,
            "spin" | "slider" => {
                let numbers: Vec<i64> = words.filter_map(|w| w.parse().ok()).collect();
                default = numbers.first().map(i64::to_string);
                OptionKind::Spin {
                    min: numbers.get(1).copied(),
                    max: numbers.get(2).copied(),
                }
            }
            "combo" => OptionKind::Combo {
                vars: rest
                    .trim_start_matches("combo")
                    .split("///")
                    .map(|v| v.trim().trim_start_matches('*').to_string())
                    .filter(|v| !v.is_empty())
                    .collect(),
            },
            "button" | "save" | "reset" => OptionKind::Button,
            _ => OptionKind::Text,
        };
        Some(OfferedOption {
            name: name.trim().to_string(),
            kind,
            default,
        })
    }

    /// Why the engine would not take `value`, if it would not.
    fn refuses(&self, value: &str) -> Option<String> {
        match &self.kind {
            OptionKind::Check if !matches!(value, "true" | "false") => {
                Some("a check option takes true or false".into())
            }
            OptionKind::Spin { min, max } => {
                let Ok(n) = value.parse::<i64>() else {
                    return Some("a spin option takes a whole number".into());
                };
                let below = min.is_some_and(|m| n < m);
                let above = max.is_some_and(|m| n > m);
                (below || above).then(|| {
                    format!(
                        "outside the engine's range {}..{}",
                        min.map_or("".into(), |m| m.to_string()),
                        max.map_or("".into(), |m| m.to_string())
                    )
                })
            }
            OptionKind::Combo { vars } if !vars.iter().any(|v| v.eq_ignore_ascii_case(value)) => {
                Some(format!("not one of its values: {}", vars.join(", ")))
            }
            _ => None,
        }
    }

    fn describe(&self) -> String {
        match &self.kind {
            OptionKind::Check => format!("{} (true/false)", self.name),
            OptionKind::Spin { min, max } => format!(
                "{} ({}..{})",
                self.name,
                min.map_or("".into(), |m| m.to_string()),
                max.map_or("".into(), |m| m.to_string())
            ),
            OptionKind::Combo { vars } => format!("{} ({})", self.name, vars.join("/")),
            OptionKind::Button => format!("{} (button)", self.name),
            OptionKind::Text => format!("{} (text)", self.name),
        }
    }
}

/// Checks each `(name, value)` the user set against what the engine offers; the first that the
/// engine does not know, or whose value it would refuse, is returned as a sentence naming what
/// the engine offers. Names are matched without regard to case, as UCI engines read them.
pub fn check_options(offered: &[OfferedOption], wanted: &[(String, String)]) -> Result<(), String> {
    for (name, value) in wanted {
        let Some(option) = offered.iter().find(|o| o.name.eq_ignore_ascii_case(name)) else {
            let list: Vec<String> = offered.iter().map(OfferedOption::describe).collect();
            let list = if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            };
            return Err(format!(
                "option '{name}' is not one it offers (it offers: {list})"
            ));
        };
        if let Some(why) = option.refuses(value) {
            return Err(format!("option {name}={value}: {why}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uci(line: &str) -> OfferedOption {
        let words: Vec<&str> = line.split_whitespace().collect();
        OfferedOption::from_uci_words(&words[2..])
    }

    #[test]
    fn reads_what_real_engines_print() {
        assert_eq!(
            uci("option name Skill Level type spin default 20 min 0 max 20").kind,
            OptionKind::Spin {
                min: Some(0),
                max: Some(20)
            }
        );
        assert_eq!(
            uci("option name Skill Level type spin default 20 min 0 max 20").name,
            "Skill Level"
        );
        // The MIT player says `value` before its default.
        let mit = uci("option name hash type spin value 16 default 16 min 1 max 4096");
        assert_eq!(mit.name, "hash");
        assert_eq!(mit.default.as_deref(), Some("16"));
        let lc0 = uci("option name Threads type spin default 2 min 0 max 128");
        assert_eq!(lc0.default.as_deref(), Some("2"));
        assert_eq!(uci("option name Clear Hash type button").default, None);
        assert!(mit.refuses("5000").is_some());
        let cecp = OfferedOption::from_cecp("Style -combo random /// greedy /// *search").unwrap();
        assert_eq!(
            cecp.kind,
            OptionKind::Combo {
                vars: vec!["random".into(), "greedy".into(), "search".into()]
            }
        );
        let spin = OfferedOption::from_cecp("Seed -spin 0 0 100").unwrap();
        assert_eq!(spin.default.as_deref(), Some("0"));
        assert!(spin.refuses("101").is_some() && spin.refuses("7").is_none());
    }

    #[test]
    fn refuses_typos_and_values_out_of_range() {
        let offered = vec![
            uci("option name Style type combo default search var random var greedy var search"),
            uci("option name Hash type spin default 16 min 1 max 33554432"),
            uci("option name Ponder type check default false"),
            uci("option name VariantPath type string default <empty>"),
        ];
        let want = |n: &str, v: &str| check_options(&offered, &[(n.into(), v.into())]);
        assert!(want("Style", "greedy").is_ok());
        assert!(
            want("style", "GREEDY").is_ok(),
            "UCI names are read without case"
        );
        assert!(want("VariantPath", "/x/variants.ini").is_ok());
        let typo = want("Stlye", "greedy").unwrap_err();
        assert!(
            typo.contains("'Stlye'") && typo.contains("Style (random/greedy/search)"),
            "{typo}"
        );
        assert!(want("Style", "serch")
            .unwrap_err()
            .contains("random, greedy, search"));
        assert!(want("Hash", "0").unwrap_err().contains("1..33554432"));
        assert!(want("Hash", "lots").is_err());
        assert!(want("Ponder", "yes").is_err());
    }
}
