//! The README's first command, as a newcomer runs it: `arbiter tournament` with no engines given,
//! on a machine busy with other work.

use crate::common;

use common::{scratch, stderr, stdout};
use std::process::Command;

/// Cause guarded: the quick start played `tc=1+0.01`, so on a busy machine the strongest engine
/// lost its games on time and was ranked last, and the reports said nothing of why. Now its
/// engines play by depth, and every report says at its top how many games the clock decided.
#[test]
fn the_quick_start_ranks_search_greedy_random_on_a_busy_machine() {
    let dir = scratch("quick", "busy");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Other work on every CPU, started first, as a shared machine has it.
    let mut busy: Vec<std::process::Child> = (0..2 * cpus)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap()
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["tournament", "--out", "run"])
        .current_dir(&dir)
        .output()
        .unwrap();
    for b in &mut busy {
        let _ = b.kill();
        let _ = b.wait();
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    let order: Vec<&str> = said
        .lines()
        .skip_while(|l| !l.starts_with("Joint ratings"))
        .skip(1)
        .take(3)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(order, ["search", "greedy", "random"], "{said}");
    let md = std::fs::read_to_string(dir.join("run/report.md")).unwrap();
    assert!(md.contains("limits depth=3"), "{md}");
    // A run under a clock says at the top how many games the clock decided.
    let timed = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "tournament",
            "--out",
            "timed",
            "--each",
            "st=0.05",
            "--rounds",
            "1",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(timed.status.code(), Some(0), "{}", stderr(&timed));
    let md = std::fs::read_to_string(dir.join("timed/report.md")).unwrap();
    let top: String = md.lines().take(6).collect::<Vec<_>>().join("\n");
    assert!(top.contains("lost on time"), "the top of report.md: {top}");
    let html = std::fs::read_to_string(dir.join("timed/report.html")).unwrap();
    let standings = html.find("Standings").unwrap_or(html.len());
    assert!(
        html[..standings].contains("lost on time"),
        "report.html says it before the standings"
    );
}
