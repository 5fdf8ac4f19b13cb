//! What watching a run costs it: the same instant match played unwatched and watched, in turn,
//! `runs` times each. A watched run has a real `arbiter watch` on its folder and a client
//! asking for `state.json` every half second, as the live page does; the referee's median
//! turnaround (reading a move to asking for the reply) of each is compared.

use super::{instant_match_in, play, row, Failure, Row};
use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Games of each run: long enough that the watcher's start is a small part of it.
const GAMES: u64 = 60;

pub fn watch_cost(runs: u64) -> Result<(), Failure> {
    let mut unwatched = Vec::new();
    let mut watched = Vec::new();
    let say_row = |r: Row| say!("{:<60} {:>16.2} {}", r.benchmark, r.value, r.unit);
    for run in 1..=runs {
        for watching in [false, true] {
            let median = one_run(run, watching)?;
            let what = if watching { "watched" } else { "unwatched" };
            say_row(row(
                format!("watch cost run {run}: {what} turnaround median"),
                median,
                "us",
            ));
            match watching {
                true => watched.push(median),
                false => unwatched.push(median),
            }
        }
    }
    let (w, u) = (median_of(&mut watched), median_of(&mut unwatched));
    say_row(row(
        format!("watch cost: unwatched turnaround, median of {runs} runs"),
        u,
        "us",
    ));
    say_row(row(
        format!("watch cost: watched turnaround, median of {runs} runs"),
        w,
        "us",
    ));
    say_row(row("watch cost: watched / unwatched", w / u.max(1.0), "x"));
    Ok(())
}

fn median_of(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// The median turnaround of one instant match, in microseconds.
fn one_run(run: u64, watching: bool) -> Result<f64, Failure> {
    let out = std::env::temp_dir().join(format!(
        "arbiter-bench-watch-{}-{run}-{watching}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let spec = instant_match_in(GAMES, 1, false, out.clone(), &[])?;
    let watcher = match watching {
        true => Some(Watcher::start(&out)?),
        false => None,
    };
    let outcome = play(spec, |_| {});
    let shown = watcher.map(Watcher::finish);
    let _ = std::fs::remove_dir_all(&out);
    let outcome = outcome?;
    if shown == Some(0) {
        return Err(Failure::bad_input(
            "the watcher never showed a game in progress: the watched run was not watched",
        ));
    }
    let (median, _, _) = arbiter::stats::percentiles(&outcome.latency_us)
        .ok_or_else(|| Failure::bad_input("the bench's match played no move"))?;
    Ok(median as f64)
}

/// `arbiter watch` on a run's folder and a client polling its page's state.
struct Watcher {
    process: Child,
    stop: Arc<AtomicBool>,
    /// Joined for how many answers showed a game in progress: the proof the run was watched.
    client: Option<std::thread::JoinHandle<u64>>,
}

impl Watcher {
    /// Started before the run, which then finds itself watched from its first game: the
    /// watcher's file is laid in the folder the run will take.
    fn start(out: &std::path::Path) -> Result<Watcher, Failure> {
        let live = out.join(arbiter::tournament::live::LIVE_DIR);
        std::fs::create_dir_all(&live)
            .and_then(|()| arbiter::tournament::live::touch_watching(out))
            .map_err(|e| Failure::bad_input(format!("{}: {e}", live.display())))?;
        let exe = std::env::current_exe().map_err(|e| Failure::bad_input(e.to_string()))?;
        let mut process = Command::new(exe)
            .arg("watch")
            .arg(out)
            .args(["--wait", "60"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Failure::bad_input(format!("cannot start arbiter watch: {e}")))?;
        let stdout = process.stdout.take();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        // The address comes once the run has started; the client asks from then on.
        let client = std::thread::spawn(move || {
            let mut first = String::new();
            if let Some(s) = stdout {
                let _ = std::io::BufReader::new(s).read_line(&mut first);
            }
            let Some(at) = first
                .split_whitespace()
                .find_map(|w| w.strip_prefix("http://"))
                .map(|a| a.trim_end_matches('/').to_string())
            else {
                return 0;
            };
            let mut playing = 0;
            while !stopped.load(Ordering::Relaxed) {
                playing += u64::from(ask_state(&at).contains("\"status\":\"playing\""));
                std::thread::sleep(Duration::from_millis(500));
            }
            playing
        });
        Ok(Watcher {
            process,
            stop,
            client: Some(client),
        })
    }
}

impl Watcher {
    /// Stops the watcher; how many of its answers showed a game in progress.
    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.client.take().and_then(|c| c.join().ok()).unwrap_or(0)
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.process.kill();
        let _ = self.process.wait();
        if let Some(c) = self.client.take() {
            let _ = c.join();
        }
    }
}

/// One request for the page's state, as the page's script makes it; the answer.
fn ask_state(at: &str) -> String {
    let Ok(mut stream) = std::net::TcpStream::connect(at) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = write!(
        stream,
        "GET /state.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    );
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}
