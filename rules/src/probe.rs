use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
static SUM: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];
static N: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];
thread_local!(static LAST: Cell<Option<std::time::Instant>> = const { Cell::new(None) });
pub fn start() { LAST.with(|l| l.set(Some(std::time::Instant::now()))); }
pub fn at(i: usize) {
    let now = std::time::Instant::now();
    LAST.with(|l| { if let Some(t) = l.get() { SUM[i].fetch_add((now - t).as_nanos() as u64, Ordering::Relaxed); N[i].fetch_add(1, Ordering::Relaxed);} l.set(Some(now)); });
}
pub fn stop() { LAST.with(|l| l.set(None)); }
pub fn dump() { for i in 0..16 { let n = N[i].load(Ordering::Relaxed); if n > 0 { eprintln!("probe {i}: n={n} mean={:.0} ns", SUM[i].load(Ordering::Relaxed) as f64 / n as f64); } } }
