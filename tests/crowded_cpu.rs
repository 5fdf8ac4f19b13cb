//! A CPU crowded by other work after a run pinned its games there. Alone in its own test
//! binary: its busy loops would crowd the CPU of every pinned test running beside it.

mod common;

use arbiter::tournament::allowed_cpus;
use common::{bundled_engine, scratch, stderr};
use std::process::{Command, Stdio};
use std::time::Duration;

fn engines_dir(name: &str) -> common::Scratch {
    scratch("crowded", name)
}

/// Cause guarded: `auto` pinned a game to a CPU it judged free by locks alone; another run
/// whose locks lay in another folder (a job's private /tmp) pinned to the same CPU, other work
/// crowded it, and the pinned games lost nearly every game on time. Now a run keeps off a CPU
/// where another program's thread is pinned, whatever its locks say, and a worker whose CPU ran
/// other programs a quarter of a game leaves it, says so, and plays on
/// every CPU; a run that stays pinned loses no game on time.
#[test]
fn two_runs_with_different_lock_folders_never_share_a_cpu_and_leave_it_when_work_crowds_it() {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let last = *cpus.last().unwrap();
    let engine = format!("cmd={}", bundled_engine());
    let start = |name: &str| {
        let dir = engines_dir(name);
        let child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args([
                "match",
                "--games",
                "6",
                "--out",
                "run",
                "--engine",
                &engine,
                "name=a",
                "--engine",
                &engine,
                "name=b",
                "--each",
                "tc=1+0.01",
                // The pinning alone is tested: frozen however busy the machine was before.
                "freeze=on",
            ])
            .current_dir(&dir)
            .env("ARBITER_CPU_LOCKS", dir.join("own-locks"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        (dir, child)
    };
    let first = start("crowded-1");
    // The second starts once the first plays pinned, as a job queued after it would.
    std::thread::sleep(Duration::from_millis(1000));
    let runs = [first, start("crowded-2")];
    // The work that crowds their CPU comes after they started, as other users' jobs do.
    std::thread::sleep(Duration::from_millis(1500));
    let busy: Vec<std::process::Child> = (0..2)
        .map(|_| {
            Command::new("taskset")
                .args(["-c", &last.to_string(), "sh", "-c", "while :; do :; done"])
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<(common::Scratch, std::process::Output)> = runs
        .into_iter()
        .map(|(dir, child)| (dir, child.wait_with_output().unwrap()))
        .collect();
    for mut b in busy {
        let _ = b.kill();
        let _ = b.wait();
    }
    let mut pinned_to_last = 0;
    for (dir, out) in &outputs {
        let said = format!("{}{}", common::stdout(out), stderr(out));
        assert_eq!(out.status.code(), Some(0), "{said}");
        eprintln!("{}: {said}", dir.display());
        if said.contains(&format!(
            "pinned: the game and its engines on a CPU no other run holds (CPU {last})"
        )) {
            pinned_to_last += 1;
        }
        let forfeits = std::fs::read_to_string(dir.join("run/games.csv"))
            .unwrap()
            .matches("time forfeit")
            .count();
        // Pinning must never cost a game: a run that stayed on the crowded CPU may do so only
        // where the crowding cost it nothing.
        assert!(
            !said.contains("pinned: the game")
                || said.contains(&format!("unpinned: CPU {last} is busy with other work"))
                || forfeits == 0,
            "{forfeits} time forfeits, and the run stayed on its crowded CPU: {said}"
        );
    }
    assert_eq!(
        pinned_to_last, 1,
        "the first run pins to CPU {last}, the second keeps off it though its locks are apart"
    );
    let second = format!("{}{}", common::stdout(&outputs[1].1), stderr(&outputs[1].1));
    assert!(
        second.contains(&format!("CPU {last} runs a thread of process")),
        "the second run says why it keeps off CPU {last}: {second}"
    );
}
