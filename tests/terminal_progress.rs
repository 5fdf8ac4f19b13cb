//! What a person sees in a real terminal (tmux, 80 columns): the banner and the bar at 0/N from
//! the first second, lines that fit, and after Ctrl-C a summary with no bar left over.
//! Needs tmux: the ignored kind, which `.ci/run` installs tmux for and runs with --ignored;
//! without tmux it fails, saying so, it does not skip.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux")
        .args(args)
        .output()
        .expect("tmux is needed for this test: apt-get install tmux (.ci/run does)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}

/// The screen, wrapped lines joined (so a line wider than the terminal shows as one long line).
fn screen(session: &str) -> String {
    tmux(&["capture-pane", "-p", "-J", "-t", session])
}

fn wait_for(session: &str, what: &str, limit: Duration) -> String {
    let started = Instant::now();
    loop {
        let text = screen(session);
        if text.contains(what) || started.elapsed() > limit {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "needs tmux: .ci/run installs it and runs this with --ignored"]
fn the_terminal_shows_progress_at_once_and_a_clean_summary_after_ctrl_c() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_arbiter"));
    let engine = exe.with_file_name("arbiter-engine");
    let dir = std::env::temp_dir().join(format!("arbiter-tty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let e = engine.display();
    // Searching engines on a real clock: the first game takes seconds, long after the banner.
    let command = format!(
        "cd {} && {} tournament --rounds 20 --each tc=20+0.2 \
         --engine cmd={e} name=search option.Style=search \
         --engine cmd={e} name=greedy option.Style=greedy \
         --engine cmd={e} name=random option.Style=random; echo EXIT=$?; sleep 60",
        dir.display(),
        exe.display()
    );
    let name = format!("arbiter-test-{}", std::process::id());
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &name,
        "-x",
        "80",
        "-y",
        "30",
        &command,
    ]);
    let session = Session(name);
    let first = wait_for(
        &session.0,
        "waiting for the first game",
        Duration::from_secs(20),
    );
    assert!(
        first.contains("arbiter tournament: leiserchess, round-robin, 3 engines, 120 games"),
        "{first}"
    );
    for expected in [
        "search",
        "greedy",
        "random",
        "tc=20+0.2",
        "output:",
        "0/120",
    ] {
        assert!(
            first.contains(expected),
            "{expected} missing at start:\n{first}"
        );
    }
    let playing = wait_for(&session.0, "leader ", Duration::from_secs(60));
    let bar = playing
        .lines()
        .find(|l| l.contains("/min ETA"))
        .unwrap_or_else(|| panic!("the rate and the time left:\n{playing}"));
    assert!(
        bar.chars().count() < 80,
        "the bar is wider than the terminal: {bar:?}"
    );
    tmux(&["send-keys", "-t", &session.0, "C-c"]);
    let end = wait_for(&session.0, "EXIT=", Duration::from_secs(30));
    assert!(end.contains("EXIT=130"), "{end}");
    assert!(
        end.contains("Interrupted after") && end.contains("--resume"),
        "{end}"
    );
    for line in end.lines() {
        assert!(
            !line.contains("/min ETA") && !line.contains("/120 "),
            "bar left over: {line:?}\n{end}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
