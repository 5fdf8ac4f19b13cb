//! A run's record holds what decides its games by content, not only by path: a resumed run, a
//! task of a split run and a merge refuse a book or an engine program that is not the one the
//! run was played with, naming the file, before they play or prove a game.

use crate::common;

use common::{arbiter_in, book, bundled_engine, deep_against_shallow, scratch, stderr, succeed_in};
use std::path::Path;

/// `deep_against_shallow` with the engine and the book copied into `dir`, so they can change.
fn match_of_copies(dir: &Path, games: u64, out: &str) -> Vec<String> {
    let engine = dir.join("engine-bin");
    let book_copy = dir.join("book.txt");
    if !engine.exists() {
        std::fs::copy(bundled_engine(), &engine).unwrap();
        std::fs::copy(book("leiserchess"), &book_copy).unwrap();
    }
    let mut args = deep_against_shallow(games, 5, out);
    for arg in args.iter_mut() {
        if arg.starts_with("cmd=") {
            *arg = format!("cmd={}", engine.display());
        }
        if arg.ends_with("leiserchess.txt") {
            *arg = book_copy.display().to_string();
        }
    }
    args.push("--quiet".into());
    args
}

fn journal_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .count()
}

/// The journal's first `keep` lines, as a run interrupted there leaves it.
fn cut_journal(dir: &Path, keep: usize) {
    let path = dir.join("journal.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text.lines().take(keep).collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
}

/// Appends a byte: the same path, other content (an ELF program still runs).
fn change(path: &Path) -> Vec<u8> {
    let was = std::fs::read(path).unwrap();
    let mut now = was.clone();
    now.extend_from_slice(b"\n");
    std::fs::write(path, now).unwrap();
    was
}

fn refused_naming(out: &std::process::Output, file: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    let said = stderr(out);
    assert!(
        said.contains(file) && said.contains("is not the one the run was played with"),
        "{said}"
    );
}

#[test]
fn a_resumed_run_refuses_another_program_or_book_at_the_same_path() {
    let dir = scratch("record", "resume");
    succeed_in(&dir, &match_of_copies(&dir, 8, "run"));
    let run = dir.join("run");
    let spec = std::fs::read_to_string(run.join("run.json")).unwrap();
    assert!(spec.contains("\"contents\""), "{spec}");
    cut_journal(&run, 4);

    let engine = dir.join("engine-bin");
    let was = change(&engine);
    let out = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    refused_naming(&out, "engine 'deep': its program");
    assert!(stderr(&out).contains("engine-bin"), "{}", stderr(&out));
    assert_eq!(journal_lines(&run), 4, "nothing is played by another build");
    std::fs::write(&engine, was).unwrap();

    let book_copy = dir.join("book.txt");
    let was = change(&book_copy);
    let out = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    refused_naming(&out, "book.txt");
    assert_eq!(journal_lines(&run), 4);
    std::fs::write(&book_copy, was).unwrap();

    // The run's own files back: it goes on, from another folder too.
    let elsewhere = scratch("record", "resume-elsewhere");
    let run_path = run.display().to_string();
    let out = arbiter_in(&elsewhere, &["match", "--resume", &run_path, "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(journal_lines(&run), 8);
}

#[test]
fn a_task_with_another_build_of_an_engine_cannot_join_its_run() {
    let dir = scratch("record", "task");
    let mut first = match_of_copies(&dir, 8, "split");
    first.extend(["--shard".into(), "1/2".into()]);
    succeed_in(&dir, &first);
    let was = change(&dir.join("engine-bin"));
    let mut second = match_of_copies(&dir, 8, "split");
    second.extend(["--shard".into(), "2/2".into()]);
    let out = arbiter_in(&dir, &second.iter().map(String::as_str).collect::<Vec<_>>());
    refused_naming(&out, "engine 'deep': its program");
    assert!(
        !dir.join("split/shard-2-of-2/journal.jsonl").exists(),
        "a refused task plays nothing"
    );
    // Its own program back, it joins and the run merges whole.
    std::fs::write(dir.join("engine-bin"), was).unwrap();
    succeed_in(&dir, &second);
    let out = arbiter_in(&dir, &["merge", "split", "split"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_merge_refuses_another_book_at_the_run_s_path() {
    let dir = scratch("record", "merge");
    let mut task = match_of_copies(&dir, 4, "split");
    task.extend(["--shard".into(), "1/1".into()]);
    succeed_in(&dir, &task);
    change(&dir.join("book.txt"));
    let out = arbiter_in(&dir, &["merge", "split", "split"]);
    refused_naming(&out, "book.txt");
    assert!(!dir.join("split/journal.jsonl").exists(), "nothing merged");
}

/// The one list of a run's files is what a run writes: every file in a finished run's folder
/// is listed, every listed file is there, and report.html links exactly the linked ones.
#[test]
fn every_run_file_is_listed() {
    use arbiter::report::files::{linked, RUN_FILES};
    let dir = scratch("record", "files");
    succeed_in(&dir, &match_of_copies(&dir, 2, "run"));
    let mut present: Vec<String> = std::fs::read_dir(dir.join("run"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    let mut listed: Vec<String> = RUN_FILES.iter().map(|f| f.name.to_string()).collect();
    listed.sort();
    assert_eq!(present, listed);
    let html = std::fs::read_to_string(dir.join("run/report.html")).unwrap();
    let nav = &html[html.find("<nav>").unwrap()..html.find("</nav>").unwrap()];
    let links: Vec<&str> = nav
        .split("href=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(links, linked().collect::<Vec<_>>());
    assert!(links.contains(&"games.pgn") && !links.contains(&"run.key"));
}
