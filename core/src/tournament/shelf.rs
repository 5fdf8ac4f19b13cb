//! Engines kept from one run to the next in one process. A bisect plays its versions step after
//! step, each step a run of its own, and the same versions again and again: an engine's start
//! (its sandbox, and its own set-up, such as a network loaded from disk) would otherwise be paid
//! at every step. An engine's pipes are read by the runtime of the worker that started it, so
//! the engines are kept with that runtime: one place on the shelf per worker.
//!
//! An engine is taken again only by a player of the very configuration it was started with
//! (what it may see from its sandbox included); the others wait on the shelf for a later run.
//! An engine's keeper dies with the thread that started it, so only engines started by the
//! shelf's own thread (the one that plays the runs: their start-up checks start the engines of
//! every worker) are kept; one a worker started again after a crash ends with its run.

use crate::engine::EngineProcess;
use std::sync::Mutex;

/// The engines one worker kept, on the runtime that reads them.
pub struct Place {
    pub runtime: tokio::runtime::Runtime,
    /// The latest used first.
    pub engines: Vec<EngineProcess>,
}

pub struct Shelf {
    places: Mutex<Vec<Place>>,
    /// The thread the engines kept were started on, which outlives the runs.
    owner: std::thread::ThreadId,
    /// Engines kept at most per place: those of the last games of a worker, and the ones before
    /// them as room allows.
    most: usize,
}

impl Shelf {
    pub fn new(most: usize) -> Shelf {
        Shelf {
            places: Mutex::new(Vec::new()),
            owner: std::thread::current().id(),
            most,
        }
    }

    /// A place's runtime and engines, for a worker of the next run.
    pub fn take(&self) -> Option<Place> {
        self.places.lock().ok()?.pop()
    }

    /// Keeps a worker's engines, the latest used first, ending those past the shelf's room and
    /// those that will not outlive the thread that started them. Called from outside any
    /// runtime (a worker's thread once its runtime is done).
    pub fn put(&self, mut place: Place) {
        let (mut kept, mut past): (Vec<_>, Vec<_>) = place
            .engines
            .drain(..)
            .partition(|e| e.started_on() == self.owner);
        past.extend(kept.drain(kept.len().min(self.most)..));
        place.engines = kept;
        if !past.is_empty() {
            place.runtime.block_on(async {
                for engine in past {
                    engine.quit().await;
                }
            });
        }
        if let Ok(mut places) = self.places.lock() {
            places.push(place);
        }
    }
}

impl Drop for Shelf {
    /// Ends the kept engines politely, each on its own runtime.
    fn drop(&mut self) {
        let places = std::mem::take(self.places.get_mut().unwrap_or_else(|e| e.into_inner()));
        for place in places {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Inside a runtime no other may be waited on: the engines are killed as they
                // are dropped.
                drop(place.engines);
                place.runtime.shutdown_background();
                continue;
            }
            place.runtime.block_on(async {
                for engine in place.engines {
                    engine.quit().await;
                }
            });
        }
    }
}
