//! SPSA as fishtest runs it, with one rule added so that a tune is a function of its seed and its
//! results, however many workers or machines play it.
//!
//! Per pair `k` (from 1): `c_k = c / k^gamma` and `a_k = a / (A + k)^alpha`, with `c`, `a` and
//! `A` set so that the last pair has `c_end` and `a_end = r_end * c_end^2` (`A` a share of the
//! pairs). Each parameter gets a random flip of +1 or -1; the engine at `theta + c_k * flip`
//! plays the engine at `theta - c_k * flip` a game pair, and `theta` moves by
//! `a_k / c_k * result * flip` (`result` the plus engine's wins minus losses), clamped to the
//! parameter's range.
//!
//! Fishtest moves theta as each worker's result arrives, so two runs never agree. Here the
//! results are applied in pair order, and pair `k` is played from theta after the results of the
//! pairs up to `k - window` (all earlier pairs when `window` is 1): up to `window` pairs are in
//! play at once, and the thetas depend on the results alone, not on who finished first.

use serde::{Deserialize, Serialize};

/// One tuned engine option, in fishtest's `name,start,min,max,c_end,r_end` terms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// The probe's half-width at the last pair.
    pub c_end: f64,
    /// The learning rate at the last pair (`a_end / c_end^2`).
    pub r_end: f64,
    /// Sent to the engine as a whole number (a spin option); else as a decimal.
    #[serde(default)]
    pub integer: bool,
}

impl Param {
    /// Reads `Name=start,min,max,c_end,r_end`.
    pub fn parse(text: &str) -> Result<Param, String> {
        let form = "give Name=start,min,max,c_end,r_end (e.g. Mobility=5,0,50,2,0.002)";
        let (name, numbers) = text
            .split_once('=')
            .ok_or_else(|| format!("'{text}': {form}"))?;
        let name = name.trim();
        if name.is_empty() || name.chars().any(|c| c.is_control()) {
            return Err(format!(
                "'{text}': the option's name is empty or holds control characters"
            ));
        }
        let numbers: Vec<f64> = numbers
            .split(',')
            .map(|n| n.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("'{text}': {form}"))?;
        let [start, min, max, c_end, r_end] = numbers[..] else {
            return Err(format!("'{text}': five numbers after '=': {form}"));
        };
        let param = Param {
            name: name.to_string(),
            start,
            min,
            max,
            c_end,
            r_end,
            integer: false,
        };
        param.check().map(|_| param)
    }

    pub fn check(&self) -> Result<(), String> {
        let name = &self.name;
        let numbers = [self.start, self.min, self.max, self.c_end, self.r_end];
        if numbers.iter().any(|n| !n.is_finite() || n.abs() > 1e15) {
            return Err(format!(
                "{name}: every number must be finite and below 1e15"
            ));
        }
        if self.min >= self.max {
            return Err(format!(
                "{name}: min {} must be below max {}",
                self.min, self.max
            ));
        }
        if !(self.min..=self.max).contains(&self.start) {
            return Err(format!(
                "{name}: start {} is outside {}..{}",
                self.start, self.min, self.max
            ));
        }
        if self.c_end <= 0.0 {
            return Err(format!("{name}: c_end must be above 0"));
        }
        if self.r_end <= 0.0 {
            return Err(format!("{name}: r_end must be above 0"));
        }
        Ok(())
    }

    fn clamp(&self, value: f64) -> f64 {
        value.clamp(self.min, self.max)
    }

    /// The value as the engine is told it.
    pub fn engine_value(&self, value: f64) -> String {
        if self.integer {
            format!("{}", value.round() as i64)
        } else {
            let text = format!("{value:.6}");
            let text = text.trim_end_matches('0').trim_end_matches('.');
            if text == "-0" {
                "0".into()
            } else {
                text.to_string()
            }
        }
    }
}

/// The gain schedule's shape, shared by all parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gains {
    /// Decay of the step size `a_k` (fishtest: 0.602).
    pub alpha: f64,
    /// Decay of the probe width `c_k` (fishtest: 0.101).
    pub gamma: f64,
    /// The stability offset `A` as a share of the pairs (fishtest: 0.1).
    pub a_ratio: f64,
}

impl Default for Gains {
    fn default() -> Gains {
        Gains {
            alpha: 0.602,
            gamma: 0.101,
            a_ratio: 0.1,
        }
    }
}

impl Gains {
    pub fn check(&self) -> Result<(), String> {
        let ok = |v: f64, lo: f64, hi: f64| v.is_finite() && (lo..=hi).contains(&v);
        if !ok(self.alpha, 0.0, 2.0) {
            return Err(format!("alpha {}: from 0 to 2", self.alpha));
        }
        if !ok(self.gamma, 0.0, 2.0) {
            return Err(format!("gamma {}: from 0 to 2", self.gamma));
        }
        if !ok(self.a_ratio, 0.0, 10.0) {
            return Err(format!("a-ratio {}: from 0 to 10", self.a_ratio));
        }
        Ok(())
    }
}

/// What one pair plays: each parameter's value for the plus and the minus engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
}

/// A tune's schedule: which values each pair plays and how its result moves theta.
#[derive(Clone, Debug)]
pub struct Spsa {
    pub params: Vec<Param>,
    pub pairs: u64,
    pub gains: Gains,
    pub seed: u64,
    pub window: u64,
}

/// Keeps the rounding's draws apart from the flips', which use the same seed.
const ROUNDING: u64 = 0x726f_756e_6469_6e67;

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Spsa {
    /// fishtest's `A`: the share of the pairs, a whole number (truncated).
    fn big_a(&self) -> f64 {
        (self.gains.a_ratio * self.pairs as f64).trunc()
    }

    /// The probe's half-width for parameter `i` at pair `k` (from 0).
    pub fn c_k(&self, i: usize, k: u64) -> f64 {
        let n = self.pairs as f64;
        let c = self.params[i].c_end * n.powf(self.gains.gamma);
        c / ((k + 1) as f64).powf(self.gains.gamma)
    }

    /// The step size for parameter `i` at pair `k` (from 0).
    pub fn a_k(&self, i: usize, k: u64) -> f64 {
        let p = &self.params[i];
        let n = self.pairs as f64;
        let a_end = p.r_end * p.c_end * p.c_end;
        let a = a_end * (self.big_a() + n).powf(self.gains.alpha);
        a / (self.big_a() + (k + 1) as f64).powf(self.gains.alpha)
    }

    /// Each parameter's flip at pair `k`: +1 or -1, from the seed alone.
    pub fn flips(&self, k: u64) -> Vec<f64> {
        (0..self.params.len())
            .map(|i| {
                let bits = mix(self.seed ^ mix(k ^ mix(i as u64 + 1)));
                if bits & 1 == 0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect()
    }

    /// How many results (pairs `0..n`, in order) the theta that pair `k` plays from holds.
    pub fn basis(&self, k: u64) -> u64 {
        (k + 1).saturating_sub(self.window.max(1))
    }

    pub fn start(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.start).collect()
    }

    /// The values pair `k` plays, around `theta`.
    pub fn probe(&self, k: u64, theta: &[f64]) -> Probe {
        let flips = self.flips(k);
        let side = |sign: f64| {
            self.params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let value = p.clamp(theta[i] + sign * self.c_k(i, k) * flips[i]);
                    self.whole(i, k, sign, value)
                })
                .collect()
        };
        Probe {
            plus: side(1.0),
            minus: side(-1.0),
        }
    }

    /// A spin option's value rounded as fishtest rounds it, stochastically: up with the
    /// probability of its fraction (`floor(value + u)`, `u` uniform in [0, 1) from the seed, the
    /// pair, the parameter and the side), so that the value sent is the probe on average. Rounded
    /// to the nearest, both sides of a pair get the same value once `c_k` is under 0.5, and the
    /// pair carries no signal. Other values are sent as they are.
    fn whole(&self, i: usize, k: u64, sign: f64, value: f64) -> f64 {
        let p = &self.params[i];
        if !p.integer {
            return value;
        }
        let side = if sign > 0.0 { 0 } else { 1 };
        let bits = mix(self.seed ^ mix(k ^ mix(((i as u64 + 1) << 1 | side) ^ ROUNDING)));
        let u = (bits >> 11) as f64 / (1u64 << 53) as f64;
        p.clamp((value + u).floor())
    }

    /// Moves `theta` by pair `k`'s result (the plus engine's wins minus losses).
    pub fn step(&self, k: u64, theta: &mut [f64], result: i32) {
        let flips = self.flips(k);
        for (i, p) in self.params.iter().enumerate() {
            let move_by = self.a_k(i, k) / self.c_k(i, k) * result as f64 * flips[i];
            theta[i] = p.clamp(theta[i] + move_by);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spsa(window: u64) -> Spsa {
        Spsa {
            params: vec![Param::parse("X=50,0,100,4,0.01").unwrap()],
            pairs: 1000,
            gains: Gains::default(),
            seed: 7,
            window,
        }
    }

    #[test]
    fn gains_end_at_c_end_and_a_end() {
        let s = spsa(1);
        assert!((s.c_k(0, 999) - 4.0).abs() < 1e-9);
        assert!((s.a_k(0, 999) - 0.01 * 16.0).abs() < 1e-9);
        // fishtest's first pair: c = c_end * N^gamma, a = a_end * (A + N)^alpha / (A + 1)^alpha.
        assert!((s.c_k(0, 0) - 4.0 * 1000f64.powf(0.101)).abs() < 1e-9);
        let a = 0.16 * (100.0f64 + 1000.0).powf(0.602) / 101f64.powf(0.602);
        assert!((s.a_k(0, 0) - a).abs() < 1e-9);
    }

    #[test]
    fn a_step_follows_the_winner_and_stays_in_range() {
        let s = spsa(1);
        let flip = s.flips(0)[0];
        let mut theta = vec![50.0];
        s.step(0, &mut theta, 2);
        let expected = 50.0 + s.a_k(0, 0) / s.c_k(0, 0) * 2.0 * flip;
        assert!((theta[0] - expected).abs() < 1e-9);
        let mut theta = vec![99.9];
        for k in 0..50 {
            let f = s.flips(k)[0];
            s.step(k, &mut theta, if f > 0.0 { 2 } else { -2 });
            assert!(theta[0] <= 100.0);
        }
        assert_eq!(theta[0], 100.0);
        let probe = s.probe(3, &[100.0]);
        assert!(probe.plus[0] <= 100.0 && probe.minus[0] <= 100.0);
    }

    /// A spin option whose probe is narrower than a half: rounded to the nearest, both sides
    /// sent the same value; rounded stochastically, they differ about as often as the probe's
    /// width says (2 x 0.4 here), and on average each side is sent its real value.
    #[test]
    fn spin_values_round_stochastically_to_the_probe_on_average() {
        let mut s = spsa(1);
        s.params = vec![Param {
            integer: true,
            ..Param::parse("Focus=100,0,200,0.4,0.5").unwrap()
        }];
        let pairs = 4000;
        let (mut differ, mut plus_sum, mut exact_sum) = (0, 0.0, 0.0);
        for k in 0..pairs {
            let probe = s.probe(k, &[100.0]);
            assert_eq!(probe.plus[0].fract(), 0.0);
            differ += usize::from(probe.plus[0] != probe.minus[0]);
            plus_sum += probe.plus[0];
            exact_sum += 100.0 + s.c_k(0, k) * s.flips(k)[0];
        }
        let share = differ as f64 / pairs as f64;
        assert!(share > 0.5, "sides differ in {share} of the pairs");
        assert!((plus_sum - exact_sum).abs() / (pairs as f64) < 0.05);
        assert_eq!(s.probe(17, &[100.0]), s.probe(17, &[100.0]), "seeded");
    }

    #[test]
    fn flips_are_balanced_and_seeded() {
        let s = spsa(1);
        let plus = (0..10_000).filter(|&k| s.flips(k)[0] > 0.0).count();
        assert!((4_800..5_200).contains(&plus), "{plus}");
        let other = Spsa {
            seed: 8,
            ..s.clone()
        };
        assert_ne!(
            (0..64).map(|k| s.flips(k)[0]).collect::<Vec<_>>(),
            (0..64).map(|k| other.flips(k)[0]).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_window_says_which_results_a_pair_plays_from() {
        assert_eq!(
            (0..4).map(|k| spsa(1).basis(k)).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(
            (0..6).map(|k| spsa(3).basis(k)).collect::<Vec<_>>(),
            [0, 0, 0, 1, 2, 3]
        );
    }

    #[test]
    fn parameters_are_read_and_checked() {
        let p = Param::parse("Mobility=5,0,50,2,0.002").unwrap();
        assert_eq!(
            (p.start, p.min, p.max, p.c_end, p.r_end),
            (5.0, 0.0, 50.0, 2.0, 0.002)
        );
        for bad in [
            "Mobility",
            "M=1,2,3",
            "M=60,0,50,2,0.002",
            "M=5,50,0,2,0.1",
            "M=5,0,50,0,0.1",
            "M=5,0,50,1,nan",
            "=1,0,2,1,1",
        ] {
            assert!(Param::parse(bad).is_err(), "{bad}");
        }
        let mut p = p;
        assert_eq!(p.engine_value(2.5), "2.5");
        assert_eq!(p.engine_value(-0.0000001), "0");
        p.integer = true;
        assert_eq!(p.engine_value(2.6), "3");
    }
}
