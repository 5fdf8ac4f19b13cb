//! The search engine's evaluation and its weights, offered as engine options in every protocol so
//! that `arbiter tune` can tune them.

use arbiter_rules::game::Position;

/// One tunable weight as the engine offers it.
pub struct Tunable {
    pub name: &'static str,
    pub default: i64,
    pub min: i64,
    pub max: i64,
}

/// The weights, as offered: name, default and range.
pub const TUNABLE: [Tunable; 3] = [
    // Percent of the game's material count (100: a pawn is worth 100).
    Tunable {
        name: "Material",
        default: 100,
        min: 0,
        max: 1000,
    },
    // Centipawns per legal move the side to move has more than its opponent had a ply before.
    Tunable {
        name: "Mobility",
        default: 0,
        min: 0,
        max: 200,
    },
    // A test fixture for tuners, not a weight: every evaluation is blurred by a pseudo-random
    // amount of up to 10 centipawns per unit of distance from 100, so the engine plays its best
    // at exactly 100 and worse the further it is set from it. A tuner started elsewhere must
    // find 100.
    Tunable {
        name: "Focus",
        default: 100,
        min: 0,
        max: 200,
    },
];

/// Where the `Focus` fixture gives the engine its best play.
pub const FOCUS_BEST: i64 = 100;

/// Centipawns of blur per unit of `Focus` away from its best.
const BLUR_PER_UNIT: i64 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eval {
    material: i32,
    mobility: i32,
    /// Largest blur in centipawns (0: none).
    blur: i32,
}

impl Default for Eval {
    fn default() -> Eval {
        let mut eval = Eval {
            material: 0,
            mobility: 0,
            blur: 0,
        };
        for t in &TUNABLE {
            eval.set(t.name, &t.default.to_string());
        }
        eval
    }
}

impl Eval {
    /// Sets a weight by its option name (any case); false for a name that is not a weight or a
    /// value that is not a whole number in its range.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let Some(t) = TUNABLE.iter().find(|t| t.name.eq_ignore_ascii_case(name)) else {
            return false;
        };
        let Some(v) = value
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|v| (t.min..=t.max).contains(v))
        else {
            return false;
        };
        match t.name {
            "Material" => self.material = v as i32,
            "Mobility" => self.mobility = v as i32,
            _ => self.blur = ((v - FOCUS_BEST).abs() * BLUR_PER_UNIT) as i32,
        }
        true
    }

    /// The score of a quiet leaf for its side to move; `their_moves` is how many moves the
    /// opponent had in the position before.
    pub fn leaf<P: Position>(&self, pos: &P, their_moves: usize) -> i32 {
        let mut score = pos.material() * self.material / 100;
        if self.mobility != 0 {
            score += self.mobility * (pos.move_count() as i32 - their_moves as i32);
        }
        if self.blur != 0 {
            score += blur(pos.key(), self.blur);
        }
        score
    }
}

/// A pseudo-random amount in `-most..=most` that depends on the position alone.
fn blur(key: u64, most: i32) -> i32 {
    let mut z = key ^ 0x5851_F42D_4C95_7F2D;
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^= z >> 33;
    (z % (2 * most as u64 + 1)) as i32 - most
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_set_by_name_within_their_ranges() {
        let mut eval = Eval::default();
        assert_eq!((eval.material, eval.mobility, eval.blur), (100, 0, 0));
        assert!(eval.set("mobility", "7") && eval.mobility == 7);
        assert!(eval.set("Focus", "90") && eval.blur == 100);
        assert!(!eval.set("Material", "1001") && eval.material == 100);
        assert!(!eval.set("Hash", "1"));
        for key in 0..1000 {
            assert!(blur(key, 40).abs() <= 40);
        }
    }
}
