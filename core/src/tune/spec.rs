//! A tune, typed: the engine and how its games are played (a run's settings), the parameters and
//! the schedule. Saved in the tune's folder for `--resume`, and compared between the tasks of a
//! split tune.

use super::spsa::{Gains, Param, Spsa};
use crate::engine::EngineConfig;
use crate::stats::Sprt;
use crate::tournament::{RunKind, RunSpec, SpecError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file in a tune's folder that holds its spec.
pub const TUNE_FILE: &str = "tune.json";

/// The most pairs in one tune: every theta on the way is kept for the chart and the CSV.
pub const MAX_PAIRS: u64 = 1_000_000;

/// The most pairs in play at once.
pub const MAX_WINDOW: u64 = 4096;

pub const MAX_PARAMS: usize = 256;

/// The default number of pairs in a tune.
pub const PAIRS: u64 = 1000;

/// The default number of pairs one theta is played from before its results count.
pub const DEFAULT_WINDOW: u64 = 8;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneSpec {
    /// How the games are played: the one engine (`engines[0]`), game, limits, book, adjudication,
    /// concurrency, folder and split task. Its `games` is two per pair.
    pub run: RunSpec,
    pub params: Vec<Param>,
    pub pairs: u64,
    pub gains: Gains,
    /// Pairs played from one theta before their results count (see `spsa`).
    pub window: u64,
    /// After tuning: an SPRT of the tuned values against the start values.
    pub verify: Option<Sprt>,
    /// The most games of that SPRT.
    pub verify_games: u64,
}

impl TuneSpec {
    /// A tune of `run`'s engine (a match of its two seats) with the other settings at their
    /// defaults, for the sources to fill in. The flags and the TOML file both come through here,
    /// so a setting of `run` a tune has no use for is refused by [`TuneSpec::check`] for both.
    pub fn of_run(mut run: RunSpec, params: Vec<Param>, pairs: u64) -> TuneSpec {
        run.kind = RunKind::Match;
        run.games = Some(pairs.saturating_mul(2));
        run.rounds = pairs.max(1);
        TuneSpec {
            run,
            params,
            pairs,
            gains: Gains::default(),
            window: DEFAULT_WINDOW,
            verify: None,
            verify_games: 2000,
        }
    }

    pub fn engine(&self) -> &EngineConfig {
        &self.run.engines[0]
    }

    /// The engine as the plus or the minus side of the pairs, set to `values`.
    pub fn seat(&self, plus: bool, values: &[f64]) -> EngineConfig {
        let mut cfg = self.engine().clone();
        cfg.name = format!("{}{}", cfg.name, if plus { "+" } else { "-" });
        cfg.options.extend(
            self.params
                .iter()
                .zip(values)
                .map(|(p, v)| (p.name.clone(), p.engine_value(*v))),
        );
        cfg
    }

    pub fn spsa(&self) -> Spsa {
        Spsa {
            params: self.params.clone(),
            pairs: self.pairs,
            gains: self.gains,
            seed: self.run.seed,
            window: self.window,
        }
    }

    /// Every check but whether the engine's program is there: all that resuming a finished
    /// tune needs, which plays nothing and only writes its files again.
    pub fn check_all_but_programs(&self) -> Result<(), SpecError> {
        match self.run.engines.len() {
            1 => {}
            0 => return Err(SpecError::new(
                "engine",
                "give the engine to tune: --engine cmd=<program> ... (TOML: one [[engine]] table)",
            )),
            n => {
                return Err(SpecError::new(
                    "engine",
                    format!(
                        "a tune takes exactly one engine, not {n}: it plays itself at two settings"
                    ),
                ))
            }
        }
        for (setting, given) in [
            ("anchor", self.run.anchor.is_some()),
            ("pgnout", self.run.pgnout.is_some()),
            ("epdout", self.run.epdout.is_some()),
        ] {
            if given {
                return Err(SpecError::new(
                    setting,
                    "not used by a tune (its games are summed up in pairs.jsonl)",
                ));
            }
        }
        if self.run.strict {
            return Err(SpecError::new(
                "strict",
                "a tune does not stop at an engine's fault: the pair's result moves theta like any \
                    other",
            ));
        }
        if self.run.colours != crate::tournament::Colours::Alternate {
            return Err(SpecError::new(
                "colours",
                "a tune plays each pair with colours reversed (each side White once)",
            ));
        }
        if self.pairs == 0 || self.pairs > MAX_PAIRS {
            return Err(SpecError::new(
                "pairs",
                format!("{}: from 1 to {MAX_PAIRS}", self.pairs),
            ));
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return Err(SpecError::new(
                "window",
                format!("{}: from 1 to {MAX_WINDOW}", self.window),
            ));
        }
        if self.params.is_empty() || self.params.len() > MAX_PARAMS {
            return Err(SpecError::new(
                "param",
                format!(
                    "give 1 to {MAX_PARAMS} parameters (--param Name=start,min,max,c_end,r_end), \
                        not {}",
                    self.params.len()
                ),
            ));
        }
        self.check_params()?;
        self.gains
            .check()
            .map_err(|why| SpecError::new("gains", why))?;
        if self.verify.is_some() && self.verify_games < 2 {
            return Err(SpecError::new(
                "verify_games",
                "must be at least 2 when --verify is given",
            ));
        }
        // The games are a match of the engine's two seats: checked as one.
        let mut games = self.run.clone();
        games.engines = vec![self.seat(true, &[]), self.seat(false, &[])];
        games.check_all_but_programs()
    }

    /// Each parameter within its bounds, named once, and not also set as an engine option.
    fn check_params(&self) -> Result<(), SpecError> {
        for (i, p) in self.params.iter().enumerate() {
            p.check().map_err(|why| SpecError::new("param", why))?;
            if self.params[..i]
                .iter()
                .any(|q| q.name.eq_ignore_ascii_case(&p.name))
            {
                return Err(SpecError::new(
                    "param",
                    format!("{} is given twice", p.name),
                ));
            }
            if let Some((name, _)) = self
                .engine()
                .options
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&p.name))
            {
                return Err(SpecError::of_engine(
                    0,
                    format!(
                        "option.{name} is tuned by --param {}: set it in one place",
                        p.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every check a tune passes before anything starts or is written.
    pub fn check(&self) -> Result<(), SpecError> {
        self.check_all_but_programs()?;
        crate::tournament::spec::check_programs(&self.run.engines)
    }

    /// The tune a task of a split tune belongs to, as text: equal for all its tasks.
    pub fn identity(&self) -> String {
        let mut this = self.clone();
        this.run = self.run.unsplit();
        serde_json::to_string(&this).unwrap_or_default()
    }

    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = dir.join(format!(".{TUNE_FILE}.{}", std::process::id()));
        crate::output::replace(&tmp, (text + "\n").as_bytes())?;
        crate::proof::seal_spec(dir, TUNE_FILE, &std::fs::read(&tmp)?)?;
        std::fs::rename(&tmp, dir.join(TUNE_FILE))
    }

    pub fn load(dir: &Path) -> Result<TuneSpec, String> {
        let path = dir.join(TUNE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot resume {}: {e} (is it a tune's folder?)",
                dir.display()
            )
        })?;
        crate::proof::check_spec(dir, TUNE_FILE, text.as_bytes())?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        crate::tournament::spec::check_folder_format(&value, &path)?;
        serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> EngineConfig {
        EngineConfig::parse(&["cmd=/bin/sh", "name=e", "depth=1"], &[] as &[&str]).unwrap()
    }

    #[test]
    fn a_tune_is_refused_for_what_it_cannot_play() {
        let param = |t: &str| Param::parse(t).unwrap();
        let ok = TuneSpec::of_run(
            RunSpec::new(RunKind::Tournament, vec![engine()]),
            vec![param("A=1,0,9,1,0.1")],
            10,
        );
        assert_eq!(ok.check(), Ok(()));
        let mut twice = ok.clone();
        twice.params.push(param("a=2,0,9,1,0.1"));
        assert!(twice.check().unwrap_err().reason.contains("twice"));
        let mut set_twice = ok.clone();
        set_twice.run.engines[0]
            .options
            .push(("A".into(), "3".into()));
        assert!(set_twice.check().unwrap_err().reason.contains("one place"));
        let mut none = ok.clone();
        none.pairs = 0;
        assert_eq!(none.check().unwrap_err().setting, "pairs");
        let mut wide = ok.clone();
        wide.window = 0;
        assert_eq!(wide.check().unwrap_err().setting, "window");
        let mut one_sided = ok.clone();
        one_sided.run.colours = crate::tournament::Colours::FirstWhite;
        assert_eq!(one_sided.check().unwrap_err().setting, "colours");
        let mut strict = ok.clone();
        strict.run.strict = true;
        assert_eq!(strict.check().unwrap_err().setting, "strict");
        let seat = ok.seat(false, &[3.4]);
        assert_eq!(seat.name, "e-");
        assert_eq!(seat.options, vec![("A".to_string(), "3.4".to_string())]);
    }
}
