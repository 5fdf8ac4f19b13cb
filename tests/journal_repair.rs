//! No game lost, none counted twice: a journal cut by a crash, glued by an older resume or mixed
//! with garbage is mended on resume, and a run stopped by a full disk (a real, tiny tmpfs) is
//! finished once space is freed, with every game exactly once.

use crate::common;

use common::{arbiter_in, bundled_engine, scratch, stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

fn match_args<'a>(e: &'a str, games: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "match",
        "--games",
        games,
        "--max-plies",
        "60",
        "--engine",
        e,
        "name=a",
        "option.Style=random",
        "--engine",
        e,
        "name=b",
        "option.Style=greedy",
        "--each",
        "depth=1",
        "--out",
        out,
        "--quiet",
    ]
}

/// The game ids in games.csv, sorted.
fn ids(run: &Path) -> Vec<u64> {
    let mut reader = csv::Reader::from_path(run.join("games.csv")).unwrap();
    let mut ids: Vec<u64> = reader
        .records()
        .map(|r| r.unwrap()[0].parse().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn resume_mends_cut_glued_and_garbage_lines_and_plays_each_game_once() {
    let dir = scratch("repair", "mend");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(&dir, &match_args(&e, "10", "run"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = dir.join("run/journal.jsonl");
    // Sealed without their places, as an older arbiter wrote them: only an older resume glued
    // a line to a cut one, and a line cut in the middle of a journal of this build's is a
    // line deleted (see `a_game_deleted_from_a_journal_or_lines_moved_are_refused`).
    let key = arbiter::proof::Key::for_journal(&journal).unwrap();
    let text: String = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(|l| {
            let mut line = arbiter::proof::unsealed(l).into_bytes();
            key.seal(&mut line);
            String::from_utf8(line).unwrap() + "\n"
        })
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10);
    // Line 5 cut and glued to line 6; garbage after line 2; the last line torn without newline.
    let mut damaged = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 2 {
            damaged.push_str("\u{0}\u{1}garbage{{\n");
        }
        match i {
            4 => damaged.push_str(&l[..l.len() / 2]),
            9 => damaged.push_str(&l[..l.len() / 3]),
            _ => {
                damaged.push_str(l);
                damaged.push('\n');
            }
        }
    }
    std::fs::write(&journal, damaged).unwrap();
    let out = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("its last line was cut off") && err.contains("journal.jsonl.torn-"),
        "{err}"
    );
    assert!(
        err.contains("hold no whole game") && err.contains("glued"),
        "{err}"
    );
    assert_eq!(ids(&dir.join("run")), (1..=10).collect::<Vec<_>>());
    // A resume of the mended journal finds nothing to do and nothing to say.
    let again = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    assert!(!stderr(&again).contains("cut off"), "{}", stderr(&again));
    assert_eq!(ids(&dir.join("run")), (1..=10).collect::<Vec<_>>());
}

/// In a journal of this build's, whose lines seal their places: garbage between lines and a
/// last line torn by a crash are mended as before, and every game is played once.
#[test]
fn resume_mends_garbage_and_a_torn_end_of_placed_lines() {
    let dir = scratch("repair", "placed");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(&dir, &match_args(&e, "6", "run"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = dir.join("run/journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut damaged = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 2 {
            damaged.push_str("garbage{{\n");
        }
        match i {
            5 => damaged.push_str(&l[..l.len() / 2]),
            _ => damaged.push_str(&format!("{l}\n")),
        }
    }
    std::fs::write(&journal, damaged).unwrap();
    let out = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(ids(&dir.join("run")), (1..=6).collect::<Vec<_>>());
    let again = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "cannot mount a tmpfs at {} (this test needs root, as CI has): it does not skip",
            at.display()
        );
        Tmpfs(at.to_path_buf())
    }

    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cannot resize the tmpfs");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_run_stopped_by_a_full_disk_is_finished_after_space_is_freed() {
    let dir = scratch("repair", "full");
    let disk = Tmpfs::mount(&dir.join("disk"), "20k");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(&dir, &match_args(&e, "40", "disk/run"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "the disk filled up: {err}");
    assert!(err.contains("--resume disk/run"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let kept = std::fs::read_to_string(dir.join("disk/run/journal.jsonl")).unwrap();
    assert!(
        kept.lines().count() < 40,
        "the disk was meant to fill before the end"
    );
    disk.resize("8m");
    let out = arbiter_in(&dir, &["match", "--resume", "disk/run", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(ids(&dir.join("disk/run")), (1..=40).collect::<Vec<_>>());
    drop(disk);
}
