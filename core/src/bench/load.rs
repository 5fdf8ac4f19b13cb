//! Other work for `bench --peer --peer-load N`: the mix a shared machine runs beside a match,
//! which plain busy loops alone do not reproduce. In turn: a busy loop, a loop of short-lived
//! processes (as a build's compiler invocations), and another sandboxed arbiter match of its
//! own. All are killed, with everything they started, when the bench ends.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct Load {
    children: Vec<Child>,
    kinds: [u32; 3],
}

impl Load {
    pub fn start(n: u32, stockfish: &Path, root: &Path) -> Load {
        let mut load = Load {
            children: Vec::new(),
            kinds: [0; 3],
        };
        let me = std::env::current_exe().ok();
        for i in 0..n {
            // Busy loop, short-lived processes, a match (a busy loop where arbiter is not found).
            let kind = match (i % 3, &me) {
                (1, _) => 1,
                (2, Some(_)) => 2,
                _ => 0,
            };
            let mut cmd = match (kind, &me) {
                (1, _) => shell("while :; do /bin/true; done"),
                (2, Some(me)) => {
                    let sf = format!("cmd={}", stockfish.display());
                    let mut c = Command::new(me);
                    c.args([
                        "match",
                        "--game",
                        "chess",
                        "--games",
                        "1000000",
                        "--no-book",
                    ])
                    .args(["--engine", &sf, "name=x", "nodes=500"])
                    .args(["--engine", &sf, "name=y", "nodes=500"])
                    .arg("--out")
                    .arg(root.join(format!("load-match-{i}")));
                    c
                }
                _ => shell("while :; do :; done"),
            };
            let started = cmd
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn();
            if let Ok(child) = started {
                load.children.push(child);
                load.kinds[kind] += 1;
            }
        }
        load
    }

    pub fn describe(&self) -> String {
        format!(
            "{} processes of other work: {} busy loops, {} loops of short-lived processes (as a \
             build's), {} sandboxed arbiter matches",
            self.children.len(),
            self.kinds[0],
            self.kinds[1],
            self.kinds[2]
        )
    }
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
