//! Other work for `bench --peer --peer-load N`: the mix a shared machine runs beside a match,
//! which busy loops alone do not reproduce (they keep the CPUs busy but never make a harness's
//! thread wait behind a burst of fresh processes with cold caches). In turn: parallel `cc -O2`
//! compiles of a generated C file, another sandboxed arbiter match, and busy loops; seven
//! processes are four compiles, a match and two loops. All are killed, with everything they
//! started, when the bench ends.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Compile,
    Match,
    Loop,
}

/// The kind of the i-th process of other work.
const TURNS: [Kind; 7] = [
    Kind::Compile,
    Kind::Match,
    Kind::Loop,
    Kind::Compile,
    Kind::Compile,
    Kind::Loop,
    Kind::Compile,
];

pub struct Load {
    children: Vec<Child>,
    counts: [u32; 3],
}

impl Load {
    pub fn start(n: u32, stockfish: &Path, root: &Path) -> Load {
        let mut load = Load {
            children: Vec::new(),
            counts: [0; 3],
        };
        let me = std::env::current_exe().ok();
        let cc = ["cc", "gcc"].into_iter().find(|c| on_path(c));
        let source = root.join("load.c");
        let compiles = cc.is_some() && write_source(&source).is_ok();
        for i in 0..n as usize {
            // A compiler or arbiter missing: a busy loop in its place, said by the counts.
            let kind = match TURNS[i % TURNS.len()] {
                Kind::Compile if !compiles => Kind::Loop,
                Kind::Match if me.is_none() => Kind::Loop,
                k => k,
            };
            let mut cmd = match kind {
                Kind::Compile => shell(&format!(
                    "while :; do {} -O2 -c '{}' -o /dev/null; done",
                    cc.unwrap_or("cc"),
                    source.display()
                )),
                Kind::Match => {
                    let sf = format!("cmd={}", stockfish.display());
                    let mut c = Command::new(me.as_deref().unwrap_or(Path::new("arbiter")));
                    c.args(["match", "--game", "chess", "--games", "1000000"])
                        .arg("--no-book")
                        .args(["--engine", &sf, "name=x", "nodes=500"])
                        .args(["--engine", &sf, "name=y", "nodes=500"])
                        .arg("--out")
                        .arg(root.join(format!("load-match-{i}")));
                    c
                }
                Kind::Loop => shell("while :; do :; done"),
            };
            let started = cmd
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn();
            if let Ok(child) = started {
                load.children.push(child);
                load.counts[kind as usize] += 1;
            }
        }
        load
    }

    pub fn describe(&self) -> String {
        format!(
            "{} processes of other work: {} loops of `cc -O2` compiles, {} sandboxed arbiter \
             matches, {} busy loops",
            self.children.len(),
            self.counts[Kind::Compile as usize],
            self.counts[Kind::Match as usize],
            self.counts[Kind::Loop as usize],
        )
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// A file that takes `cc -O2` about a second: many small functions with loops to optimise.
fn write_source(path: &Path) -> std::io::Result<()> {
    let mut text = String::new();
    for i in 0..1500 {
        text += &format!(
            "double f{i}(double x){{double s=0;for(int k=0;k<{};k++){{s+=x*k/(k+{});\
             if(s>1e9)s=0;}}return s*{i}.5;}}\n",
            i % 7 + 3,
            i % 5 + 1
        );
    }
    std::fs::write(path, text)
}

fn shell(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", script]);
    c
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.children {
            // SAFETY: kill(2) of the process group this bench started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}

/// The 1-minute load average, read every second while a harness plays: the least and the
/// most it read, printed beside that harness's row.
pub struct LoadSampler {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Option<(f64, f64)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LoadSampler {
    pub fn start() -> LoadSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(None));
        let (s, w) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(now) = load_average() {
                    let mut w = w.lock().unwrap_or_else(|e| e.into_inner());
                    *w = Some(w.map_or((now, now), |(lo, hi): (f64, f64)| {
                        (lo.min(now), hi.max(now))
                    }));
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        LoadSampler {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    /// The least and the most load average read, as `3.1-4.2`.
    pub fn finish(mut self) -> String {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let seen = *self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match seen {
            Some((lo, hi)) => format!("{lo:.1}-{hi:.1}"),
            None => "?".to_string(),
        }
    }
}

fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}
