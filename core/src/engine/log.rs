//! `--log <file>`: every line to and from every engine, timestamped from the start of the run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The most an engine's own lines (its output and stderr) may take of the log: one flooding
/// `info` lines grew a log by 250 MB in 14 s. Past it, the log says so once and keeps only
/// what is sent to that engine.
pub const MAX_PER_ENGINE: u64 = 64 << 20;

#[derive(Clone)]
pub struct IoLog {
    inner: Arc<Mutex<Writer>>,
    started: Instant,
}

struct Writer {
    out: BufWriter<File>,
    /// Bytes of each engine's own lines written so far.
    written: std::collections::HashMap<String, u64>,
}

impl IoLog {
    pub fn create(path: &std::path::Path) -> std::io::Result<IoLog> {
        Ok(IoLog {
            inner: Arc::new(Mutex::new(Writer {
                out: BufWriter::new({
                    let file = crate::output::open_own(path, false)?;
                    file.set_len(0)?;
                    file
                }),
                written: std::collections::HashMap::new(),
            })),
            started: Instant::now(),
        })
    }

    /// `direction` is `>` for a line sent to the engine, `<` for one received, `!` for its
    /// stderr.
    pub fn write(&self, engine: &str, direction: char, line: &str) {
        let t = self.started.elapsed().as_secs_f64();
        let Ok(mut w) = self.inner.lock() else {
            return;
        };
        if direction != '>' {
            let before = *w.written.get(engine).unwrap_or(&0);
            if before >= MAX_PER_ENGINE {
                return;
            }
            // The whole line as written: time, name, direction and text.
            let after = before + (line.len() + engine.len() + 17) as u64;
            w.written.insert(engine.to_string(), after);
            if after >= MAX_PER_ENGINE {
                let _ = writeln!(
                    w.out,
                    "{t:12.6} {engine} ! arbiter: {engine} wrote more than {} MiB; its lines are \
                        not logged from here on",
                    MAX_PER_ENGINE >> 20
                );
                return;
            }
        }
        let _ = writeln!(w.out, "{t:12.6} {engine} {direction} {line}");
    }

    pub fn flush(&self) {
        if let Ok(mut w) = self.inner.lock() {
            let _ = w.out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_flooding_the_log_is_cut_at_its_share_and_the_log_says_so() {
        let path = std::env::temp_dir().join(format!("arbiter-log-{}", std::process::id()));
        let log = IoLog::create(&path).unwrap();
        let line = "info depth 1 ".repeat(80);
        for _ in 0..(MAX_PER_ENGINE as usize / line.len() + 100) {
            log.write("flood", '<', &line);
        }
        log.write("flood", '>', "go depth 1");
        log.write("fair", '<', "bestmove e2e4");
        log.flush();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < MAX_PER_ENGINE + (1 << 20), "{size}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("flood wrote more than 64 MiB"));
        assert!(text.contains("flood > go depth 1") && text.contains("fair < bestmove e2e4"));
        std::fs::remove_file(&path).unwrap();
    }
}
