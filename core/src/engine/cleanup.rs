//! Clean-up that outlasts an engine: killing what its killed keeper left behind, and removing its
//! control groups once they are empty, may take a while, so it runs on a thread of its own.
//!
//! Such a thread dies with the process. A run that ends right after an engine is dropped (a
//! start-up check that failed, exit 2 at once) would otherwise leave a child the engine moved to
//! a session of its own running after arbiter has gone: [`settle`] waits for them.

use std::sync::Mutex;
use std::thread::JoinHandle;

static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Runs `work` on a thread that [`settle`] waits for.
pub fn later(name: &str, work: impl FnOnce() + Send + 'static) {
    let Ok(handle) = std::thread::Builder::new().name(name.into()).spawn(work) else {
        return;
    };
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    // A long run starts thousands of engines: only the unfinished are kept.
    pending.retain(|h| !h.is_finished());
    pending.push(handle);
}

/// Waits for every clean-up started so far; call before the process exits.
pub fn settle() {
    let handles = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()));
    for handle in handles {
        let _ = handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn settle_waits_for_the_work_it_was_given() {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        later("test clean-up", move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
        });
        settle();
        assert!(done.load(Ordering::SeqCst));
    }
}
