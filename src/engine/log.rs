//! `--log <file>`: every line to and from every engine, timestamped from the start of the run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Clone)]
pub struct IoLog {
    inner: Arc<Mutex<BufWriter<File>>>,
    started: Instant,
}

impl IoLog {
    pub fn create(path: &std::path::Path) -> std::io::Result<IoLog> {
        Ok(IoLog {
            inner: Arc::new(Mutex::new(BufWriter::new(File::create(path)?))),
            started: Instant::now(),
        })
    }

    /// `direction` is `>` for a line sent to the engine, `<` for one received.
    pub fn write(&self, engine: &str, direction: char, line: &str) {
        let t = self.started.elapsed().as_secs_f64();
        if let Ok(mut w) = self.inner.lock() {
            let _ = writeln!(w, "{t:12.6} {engine} {direction} {line}");
        }
    }

    pub fn flush(&self) {
        if let Ok(mut w) = self.inner.lock() {
            let _ = w.flush();
        }
    }
}
