//! `arbiter bisect` played for real: eight versions of the bundled engine, the last three
//! searching a ply less (a real weakness, worth hundreds of Elo), found from the book's
//! openings; then the same bisect stopped by SIGINT and resumed, to the same answer with no
//! game played twice.

use crate::common;

use common::{bundled_engine, scratch, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn series_args(out: &str) -> Vec<String> {
    common::bisect_series(out)
}

fn result(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("bisect.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The games each step's own games.csv holds, in all.
fn games_in_steps(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("steps"))
        .unwrap()
        .flatten()
        .map(|step| {
            let csv = std::fs::read_to_string(step.path().join("games.csv")).unwrap_or_default();
            csv.lines().count().saturating_sub(1) as u64
        })
        .sum()
}

#[test]
fn a_real_bisect_finds_the_first_weaker_version_and_resumes_after_sigint_to_it() {
    let dir = scratch("bisect", "series");
    let args = series_args("whole");
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(&dir)
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("first worse: v6 (probability"), "{said}");
    let whole = dir.join("whole");
    let json = result(&whole);
    assert_eq!(json["status"], "found", "{json}");
    assert_eq!(json["first_worse"], "v6", "{json}");
    assert!(json["probability"].as_f64().unwrap() >= 0.975, "{json}");
    // The place is settled by the first worse against the version before it.
    let steps = json["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s["version"] == "v6" && s["against"] == "v5"),
        "{json}"
    );
    assert!(whole
        .join("steps")
        .read_dir()
        .unwrap()
        .flatten()
        .any(|s| s.file_name().to_string_lossy().ends_with("-v6-vs-v5")));
    assert_eq!(
        json["games"].as_u64().unwrap(),
        games_in_steps(&whole),
        "{json}"
    );
    // Every step is a run of its own, proven as a run is, with its games; the bisect's page
    // shows them, and links each step's PGN.
    let report = std::fs::read_to_string(whole.join("report.html")).unwrap();
    for step in std::fs::read_dir(whole.join("steps")).unwrap().flatten() {
        for file in ["run.json", "run.proof", "journal.jsonl", "games.pgn"] {
            assert!(
                step.path().join(file).exists(),
                "{}: {file}",
                step.path().display()
            );
        }
        assert!(!step.path().join("report.html").exists());
        let name = step.file_name().to_string_lossy().into_owned();
        assert!(
            report.contains(&format!("steps/{name}/games.pgn")),
            "{name}"
        );
    }
    assert!(report.contains("first worse: v6"), "{report}");
    assert!(report.contains("<svg"), "the posterior is drawn");

    // The same bisect, stopped once its second step has begun.
    let run = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(series_args("cut"))
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cut = dir.join("cut");
    let started = Instant::now();
    while !std::fs::read_dir(cut.join("steps"))
        .map(|d| d.count() >= 2)
        .unwrap_or(false)
    {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no second step"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) of the child just started.
    unsafe { libc::kill(run.id() as i32, libc::SIGINT) };
    let stopped = run.wait_with_output().unwrap();
    let said = format!("{}{}", stdout(&stopped), stderr(&stopped));
    assert_eq!(stopped.status.code(), Some(130), "{said}");
    assert!(said.contains("bisect --resume"), "{said}");
    assert_eq!(result(&cut)["status"], "interrupted");
    let resumed = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["bisect", "--resume", "cut"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&resumed), stderr(&resumed));
    assert_eq!(resumed.status.code(), Some(0), "{said}");
    let json = result(&cut);
    assert_eq!(json["first_worse"], "v6", "{json}");
    // The steps and their games are the uninterrupted bisect's: nothing played twice.
    assert_eq!(json["steps"], result(&whole)["steps"], "{json}");
    assert_eq!(json["games"].as_u64().unwrap(), games_in_steps(&cut));
}

/// The versions' engines are kept running from step to step: each worker starts each version it
/// plays once, however many steps play it, and none is left running once the bisect ends.
#[test]
fn a_bisect_starts_each_version_once_per_worker_and_leaves_none_running() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("bisect", "kept");
    let wrapper = dir.join("engine.sh");
    std::fs::write(
        &wrapper,
        format!(
            // Not exec'd: the shell stays, named by this test's own path, as long as its engine.
            "#!/bin/sh\necho \"started $*\" >&2\n{} \"$@\"\n",
            bundled_engine()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Four versions: the kept engines (four per worker) are never too many.
    let mut args = common::bisect_of("kept", 4, 3, |v| {
        vec![
            format!("cmd={}", wrapper.display()),
            format!("stderr={}", dir.join(format!("v{v}.err")).display()),
        ]
    });
    args.push("--quiet".into());
    common::succeed_in(&dir, &args);
    let json = result(&dir.join("kept"));
    let steps = json["steps"].as_array().unwrap();
    assert!(steps.len() >= 3, "{json}");
    let mut played = std::collections::BTreeSet::new();
    for s in steps {
        played.insert(s["version"].as_str().unwrap().to_string());
        played.insert(s["against"].as_str().unwrap().to_string());
    }
    let starts = |v: &str| {
        std::fs::read_to_string(dir.join(format!("{v}.err")))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("started"))
            .count()
    };
    for v in ["v1", "v2", "v3", "v4"] {
        let expected = if played.contains(v) { 2 } else { 0 };
        assert_eq!(
            starts(v),
            expected,
            "{v}: started {} times over {} steps",
            starts(v),
            steps.len()
        );
    }
    // No engine of the bisect outlives it (its end is asked politely, so given a moment).
    let running = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(wrapper.to_str().unwrap()))
            .collect()
    };
    let ended = Instant::now();
    while !running().is_empty() && ended.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running().is_empty(), "{:?}", running());
}

/// Split by hand over two tasks started at once (as a cluster's array tasks), the bisect plays
/// every step as a split run and each task reaches the answer; `--resume` on one machine then
/// merges each step and writes the files one machine playing it alone writes, to the byte. A
/// task of another bisect given the same folder is refused before it writes anything.
#[test]
fn a_bisect_split_over_two_tasks_writes_the_bytes_of_one_machine() {
    let dir = scratch("bisect", "split");
    common::succeed_in(&dir, &series_args("one"));
    let task = |k: u32| {
        let mut args = series_args("split");
        args.extend(["--shard".into(), format!("{k}/2"), "--quiet".into()]);
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let tasks = [task(1), task(2)];
    for t in tasks {
        let out = t.wait_with_output().unwrap();
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{said}");
        assert!(said.contains("first worse: v6 (probability"), "{said}");
        assert!(said.contains("bisect --resume"), "{said}");
    }
    let split = dir.join("split");
    assert!(
        !split.join("bisect.json").exists(),
        "the tasks leave the bisect's files to one machine"
    );
    // Both tasks played in the steps.
    let played = |k: u32| -> u64 {
        std::fs::read_dir(split.join("steps"))
            .unwrap()
            .flatten()
            .map(|s| {
                let journal = s.path().join(format!("shard-{k}-of-2/journal.jsonl"));
                std::fs::read_to_string(journal)
                    .unwrap_or_default()
                    .lines()
                    .count() as u64
            })
            .sum()
    };
    assert!(
        played(1) > 0 && played(2) > 0,
        "{} and {}",
        played(1),
        played(2)
    );
    let resumed = common::arbiter_in(&dir, &["bisect", "--resume", "split", "--quiet"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let one = dir.join("one");
    assert_eq!(
        std::fs::read_to_string(split.join("bisect.json")).unwrap(),
        std::fs::read_to_string(one.join("bisect.json")).unwrap()
    );
    for step in std::fs::read_dir(one.join("steps")).unwrap().flatten() {
        // A merged step has no page of its own, as one machine's has none.
        let merged = split.join("steps").join(step.file_name());
        assert!(!merged.join("report.html").exists(), "{}", merged.display());
        for file in ["games.csv", "standings.csv"] {
            let theirs = split.join("steps").join(step.file_name()).join(file);
            assert_eq!(
                std::fs::read_to_string(&theirs).unwrap_or_default(),
                std::fs::read_to_string(step.path().join(file)).unwrap(),
                "{}",
                theirs.display()
            );
        }
    }
    // Another question on the same folder: refused, naming what differs.
    let mut other = series_args("split");
    other[2] = "50".into();
    other.extend(["--shard".into(), "1/2".into()]);
    let before = std::fs::read_to_string(split.join("claims/run.json")).unwrap();
    let refused = common::arbiter_in(&dir, &other.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("bisect.elo"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(split.join("claims/run.json")).unwrap(),
        before
    );
}

/// A bisect is refused before anything is written when its question cannot be asked.
#[test]
fn a_bisect_with_one_version_or_a_bad_alpha_is_refused_and_writes_nothing() {
    let dir = scratch("bisect", "refused");
    let e = format!("cmd={}", bundled_engine());
    for (extra, says) in [
        (
            vec!["--alpha", "0.7"],
            "--alpha 0.7 must be between 0 and 0.5",
        ),
        (vec!["--elo=-3"], "--elo -3 must be a positive number"),
    ] {
        let mut args = vec![
            "bisect", "--out", "b", "--each", "depth=1", "--engine", &e, "name=a", "--engine", &e,
            "name=b",
        ];
        args.extend(extra);
        let out = common::arbiter_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(!dir.join("b").exists(), "nothing written");
    }
    let out = common::arbiter_in(
        &dir,
        &[
            "bisect", "--out", "b", "--each", "depth=1", "--engine", &e, "name=a",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a bisect needs at least two versions"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("b").exists());
}

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

/// A git range built by a build command: a tiny engine (a script in front of the bundled
/// engine) whose fourth commit makes it play greedily; the third commit does not build and is
/// skipped. The bisect names the fourth commit, and a second start builds nothing again.
#[test]
fn a_bisect_over_a_git_range_builds_each_commit_skips_a_broken_one_and_finds_the_drop() {
    let dir = scratch("bisect", "git");
    let repo = dir.join("engine-repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet"]);
    let engine = bundled_engine();
    let good = format!("#!/bin/sh\nexec {engine} \"$@\"\n");
    let greedy = format!(
        "#!/bin/sh\n{{ echo 'setoption name Style value greedy'; exec cat; }} | exec {engine} \
            \"$@\"\n"
    );
    let commit = |text: Option<&str>, message: &str| {
        match text {
            Some(text) => std::fs::write(repo.join("engine.sh"), text).unwrap(),
            None => std::fs::remove_file(repo.join("engine.sh")).unwrap(),
        }
        std::fs::write(repo.join("notes.txt"), message).unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "--quiet", "-m", message]);
    };
    commit(Some(&good), "first");
    git(&repo, &["tag", "known-good"]);
    commit(Some(&good), "second");
    commit(None, "broken build");
    commit(Some(&greedy), "greedy");
    commit(Some(&greedy), "later");
    let args = [
        "bisect",
        "--elo",
        "100",
        "--concurrency",
        "2",
        "--openings",
        &common::book("leiserchess"),
        "--each",
        "depth=2",
        "--out",
        "b",
        "--repo",
        "engine-repo",
        "--good",
        "known-good",
        "--bad",
        "HEAD",
        "--build",
        // A hostile commit's build would read the owner's key and the other builds' folders.
        "cp engine.sh built && chmod +x built; cat \"$ARBITER_KEY\" > key.txt; ls .. > seen.txt",
        "--program",
        "built",
    ];
    let key = dir.join("owner.key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .current_dir(&dir)
        .env("ARBITER_KEY", &key)
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{said}");
    let log = Command::new("git")
        .args(["-C", repo.to_str().unwrap(), "log", "--format=%H %s"])
        .output()
        .unwrap();
    let commits = String::from_utf8(log.stdout).unwrap();
    let sha_of = |subject: &str| -> String {
        commits
            .lines()
            .find(|l| l.ends_with(&format!(" {subject}")))
            .unwrap()[..8]
            .to_string()
    };
    assert!(
        said.contains(&format!("skipped {}", sha_of("broken build"))),
        "{said}"
    );
    let json = result(&dir.join("b"));
    assert_eq!(json["first_worse"], sha_of("greedy"), "{json}\n{said}");
    // Where bubblewrap is installed, no build saw the key or another build's folder.
    if common::has_bubblewrap() {
        for tree in std::fs::read_dir(dir.join("b/builds")).unwrap().flatten() {
            let read = |f: &str| std::fs::read_to_string(tree.path().join(f)).unwrap_or_default();
            if !tree.path().join("built").exists() {
                continue;
            }
            assert_eq!(read("key.txt"), "", "the build read the key");
            assert_eq!(read("seen.txt").lines().count(), 1, "{}", read("seen.txt"));
        }
    }
    assert_eq!(json["versions"].as_array().unwrap().len(), 4, "{json}");
    // Started again with the same --out: refused before anything is built, pointing at
    // --resume.
    let again = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .current_dir(&dir)
        .env("ARBITER_KEY", &key)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "the folder holds a bisect");
    let said = stderr(&again);
    assert!(
        said.contains("holds a bisect already: continue it with --resume"),
        "{said}"
    );
    assert!(!said.contains("built "), "{said}");
}
