//! Whether other work crowded a game's CPUs: measured per game, where something can be given
//! up for it (a worker's pinning, its engines' freezing).

use super::affinity::{self, CpuTime};
use std::time::{Duration, Instant};

/// The least time a game must last for what it measured to say anything.
const MEASURED: Duration = Duration::from_millis(200);

/// The share of a game's time other work may take of its pinned CPU before the worker leaves
/// it: beside one busy loop it takes about half; alone the game leaves nothing to others.
const CROWDED: f64 = 0.25;

/// The share of a game's time unpinned engines may wait for a CPU, summed: alone on the
/// machine they hardly wait; beside other work they wait whenever they run.
const CONTENDED: f64 = 0.25;

/// What was read at a game's start.
pub struct Contention {
    at: Instant,
    engines: CpuTime,
    /// For a pinned game: its CPU, the CPU's busy time, and this process's time there.
    pinned: Option<(usize, u64, u64)>,
}

/// What a game measured.
pub enum Crowding {
    /// Other work took this share of the pinned CPU's time during the game.
    PinnedCpu(f64),
    /// The engines waited for a CPU, summed, this share of the game.
    EnginesWaited(f64),
}

impl Contention {
    pub fn start(engines: CpuTime, pinned_cpu: Option<usize>) -> Contention {
        let pinned = pinned_cpu.and_then(|cpu| {
            Some((
                cpu,
                affinity::cpu_busy_ns(cpu)?,
                affinity::own_threads_ran_on(cpu),
            ))
        });
        Contention {
            at: Instant::now(),
            engines,
            pinned,
        }
    }

    /// What other work took from the game, when it took enough to matter.
    ///
    /// Pinned, the CPU's own busy time less what the game ran there is other work: the
    /// engines' waits would also count the engine's own threads queued behind each other
    /// (an input thread woken while its search thread runs: 50 ms a game measured idle).
    pub fn end(self, engines: CpuTime) -> Option<Crowding> {
        let elapsed = self.at.elapsed();
        if elapsed < MEASURED {
            return None;
        }
        let game_ns = elapsed.as_nanos() as f64;
        let used = engines.since(self.engines);
        match self.pinned {
            Some((cpu, busy, own)) => {
                let busy = affinity::cpu_busy_ns(cpu)?.saturating_sub(busy);
                let ours = used.spent + affinity::own_threads_ran_on(cpu).saturating_sub(own);
                let others = busy.saturating_sub(ours) as f64 / game_ns;
                (others > CROWDED).then_some(Crowding::PinnedCpu(others.min(1.0)))
            }
            None => {
                let share = used.waited as f64 / game_ns;
                (share > CONTENDED).then_some(Crowding::EnginesWaited(share))
            }
        }
    }
}
