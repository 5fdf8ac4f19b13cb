//! An engine's stderr: copied into `--log` when there is one, and its last lines kept, so that
//! an engine that fails to start can be shown what it said (a wrapper script's "not found").

use super::log::IoLog;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;

/// The most of one engine process's stderr copied into --log: an engine flooding it is read to
/// its end (so it never blocks on a full pipe) but cannot fill the disk.
const MAX_STDERR_LOGGED: usize = 1 << 20;

/// A line longer than this is cut in the log.
const MAX_LINE: usize = 4096;

/// Bytes kept of the end of an engine's stderr, the lines shown of them, and the most
/// characters of each line shown.
const TAIL_BYTES: usize = 4096;
const TAIL_LINES: usize = 6;
const TAIL_WIDTH: usize = 300;

/// The end of what an engine wrote to stderr, and whether it has closed it.
#[derive(Clone, Debug, Default)]
pub struct Tail {
    bytes: Arc<Mutex<Vec<u8>>>,
    ended: Arc<tokio::sync::Notify>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl Tail {
    /// Keeps the last `TAIL_BYTES` of what was read: a flood costs a copy of each chunk.
    fn keep(&self, chunk: &[u8]) {
        if let Ok(mut bytes) = self.bytes.lock() {
            bytes.extend_from_slice(chunk);
            if bytes.len() > 2 * TAIL_BYTES {
                let cut = bytes.len() - TAIL_BYTES;
                bytes.drain(..cut);
            }
        }
    }

    /// The last lines written, once the engine has closed its stderr (waiting up to `within`
    /// for it: a process that has just died may not have been read to its end yet).
    pub async fn last_lines(&self, within: std::time::Duration) -> Vec<String> {
        let ended = self.ended.notified();
        if !self.done.load(std::sync::atomic::Ordering::Acquire) {
            let _ = tokio::time::timeout(within, ended).await;
        }
        let bytes = self.bytes.lock().map(|b| b.clone()).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .lines()
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.chars().take(TAIL_WIDTH).collect())
            .collect();
        lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec()
    }
}

/// Reads an engine's stderr to its end: each line into `log` (marked `!`, up to
/// `MAX_STDERR_LOGGED` bytes) when there is one, the end of it into `tail`.
pub async fn read(
    mut err: tokio::process::ChildStderr,
    name: String,
    log: Option<IoLog>,
    tail: Tail,
) {
    let mut chunk = [0u8; 8192];
    let mut pending: Vec<u8> = Vec::new();
    let mut logged = 0usize;
    let mut emit = |bytes: &[u8]| {
        if let Some(log) = log.as_ref().filter(|_| logged < MAX_STDERR_LOGGED) {
            logged += bytes.len() + 1;
            let text = String::from_utf8_lossy(bytes);
            log.write(&name, '!', text.trim_end_matches('\r'));
        }
    };
    while let Ok(n) = err.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        tail.keep(&chunk[..n]);
        if log.is_none() {
            continue;
        }
        for &b in &chunk[..n] {
            if b == b'\n' {
                emit(&pending);
                pending.clear();
            } else if pending.len() < MAX_LINE {
                pending.push(b);
            } else {
                emit(&pending);
                pending.clear();
                pending.push(b);
            }
        }
    }
    if !pending.is_empty() {
        emit(&pending);
    }
    tail.done.store(true, std::sync::atomic::Ordering::Release);
    tail.ended.notify_waiters();
}
