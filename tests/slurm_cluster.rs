//! A run on a real Slurm cluster: the script `arbiter slurm` prints is submitted as it is, its
//! job array plays the shards, the dependent job merges them. These tests need Slurm: `.ci/run`
//! installs Debian's slurm-wlm and munge, starts a one-node cluster (`.ci/slurm/start.sh`) and
//! runs them with `--ignored`. Without a cluster they fail, saying so; they never pass unrun.

use crate::common;

use common::{arbiter_in, bundled_engine, scratch, stderr, stdout};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn slurm_answers() {
    let sinfo = Command::new("sinfo").arg("-h").output();
    match sinfo {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "Slurm is installed but does not answer (sinfo: {}): start it with .ci/slurm/start.sh",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "no Slurm here (sinfo: {e}): these tests need the cluster .ci/slurm/start.sh starts"
        ),
    }
}

/// A three-engine round robin of `rounds` rounds (6 games each) with engines limited by depth
/// (`limit` `depth=`) or time (`st=`).
fn tournament(out: &Path, rounds: u32, limit: &str) -> Vec<String> {
    let e = bundled_engine();
    let mut args: Vec<String> = [
        "tournament",
        "--rounds",
        &rounds.to_string(),
        "--seed",
        "11",
        "--random-openings",
        "--openings",
        &format!("{}/openings/leiserchess.txt", env!("CARGO_MANIFEST_DIR")),
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    for (name, style) in [("one", "search"), ("two", "greedy"), ("three", "random")] {
        args.extend([
            "--engine".into(),
            format!("cmd={e}"),
            format!("name={name}"),
            format!("option.Style={style}"),
            limit.to_string(),
        ]);
    }
    args
}

/// Writes the job script for `run` split in `shards`, submits it, and returns the array's and
/// the merge's job ids.
fn submit(dir: &Path, shards: u32, run: &[String]) -> (String, String) {
    let mut args = vec![
        "slurm".to_string(),
        "--shards".into(),
        shards.to_string(),
        "--time".into(),
        "15:00".into(),
        "--".into(),
    ];
    args.extend(run.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let script = arbiter_in(dir, &args);
    assert_eq!(script.status.code(), Some(0), "{}", stderr(&script));
    std::fs::write(dir.join("submit.sh"), &script.stdout).unwrap();
    let submitted = Command::new("bash")
        .arg("submit.sh")
        .current_dir(dir)
        .output()
        .unwrap();
    let said = stdout(&submitted);
    assert!(submitted.status.success(), "{said}{}", stderr(&submitted));
    // "submitted array job <id> (<n> shards) and merge job <id>"
    let words: Vec<&str> = said.split_whitespace().collect();
    (words[3].to_string(), words[words.len() - 1].to_string())
}

fn queued(jobs: &[&str]) -> String {
    let out = Command::new("squeue")
        .args(["-h", "-o", "%i %T", "-j", &jobs.join(",")])
        .output()
        .unwrap();
    stdout(&out)
}

fn wait_for(jobs: &[&str], limit: Duration) {
    let start = Instant::now();
    loop {
        let left = queued(jobs);
        if left.trim().is_empty() {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "Slurm jobs still queued after {limit:?}:\n{left}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn run_here(dir: &Path, args: &[String]) {
    common::succeed_in(dir, args);
}

#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn a_slurm_job_array_merges_to_the_bytes_of_one_machine() {
    slurm_answers();
    let dir = scratch("slurm", "bytes");
    run_here(&dir, &tournament(&dir.join("single"), 4, "depth=2"));
    let started = Instant::now();
    let (array, merge) = submit(&dir, 4, &tournament(&dir.join("cluster"), 4, "depth=2"));
    wait_for(&[&array, &merge], Duration::from_secs(600));
    eprintln!(
        "Slurm: 4 array tasks x 6 games and the merge took {:?}",
        started.elapsed()
    );
    let merged = std::fs::read_to_string(
        std::fs::read_dir(dir.join("cluster"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains("slurm-merge-"))
            .expect("the merge job's log"),
    )
    .unwrap();
    assert!(
        merged.contains("Merged 24 games from 4 shard folders"),
        "{merged}"
    );
    for file in ["games.csv", "standings.csv", "crosstable.csv"] {
        assert_eq!(
            std::fs::read_to_string(dir.join("single").join(file)).unwrap(),
            std::fs::read_to_string(dir.join("cluster").join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn a_cancelled_and_requeued_task_leaves_every_game_once() {
    slurm_answers();
    let dir = scratch("slurm", "requeue");
    let run = dir.join("run");
    // Engines on a clock, so that a task is still playing when it is cancelled: 4 tasks of
    // 20 games each.
    let (array, merge) = submit(&dir, 4, &tournament(&run, 40 / 3 + 1, "st=0.01"));
    let task = format!("{array}_2");
    let journal = run.join("shard-2-of-4/journal.jsonl");
    let start = Instant::now();
    while std::fs::read_to_string(&journal).map_or(0, |j| j.lines().count()) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "task 2 never played"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let cancel = Command::new("scancel").arg(&task).status().unwrap();
    assert!(cancel.success());
    while !queued(&[&task]).trim().is_empty() {
        std::thread::sleep(Duration::from_millis(200));
    }
    let requeue = Command::new("scontrol")
        .args(["requeue", &task])
        .output()
        .unwrap();
    assert!(requeue.status.success(), "{}", stderr(&requeue));
    wait_for(&[&array, &merge], Duration::from_secs(900));
    let log = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with(&format!("slurm-{array}_2.out"))
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap_or_default();
    assert!(log.contains("continuing the shard"), "task 2's log: {log}");
    // The merge job may have run before the requeued task finished: merging again is safe.
    let merged = arbiter_in(&dir, &["merge", "run", "run"]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let mut reader = csv::Reader::from_path(run.join("games.csv")).unwrap();
    let ids: Vec<u64> = reader
        .records()
        .map(|r| r.unwrap()[0].parse().unwrap())
        .collect();
    let total = 6 * (40 / 3 + 1);
    assert_eq!(ids, (1..=total).collect::<Vec<u64>>(), "every game once");
}

/// A match of depth 2 against depth 1 with an SPRT that decides in a few dozen games.
fn sprt_match(out: &Path) -> Vec<String> {
    let mut args = common::deep_against_shallow(2000, 5, &out.display().to_string());
    args.extend(["--sprt", "elo0=0", "elo1=60"].map(String::from));
    args
}

/// The cluster runs fewer tasks at once than were submitted (4 tasks of one CPU each on a node
/// with fewer CPUs): the running tasks claim pairs in order and stop at the pooled decision,
/// and the tasks that start later find it made. Games played: at most one machine's, plus a
/// pair per task (2 x tasks x concurrency).
#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn a_four_task_sprt_on_fewer_cpus_stops_near_one_machine() {
    slurm_answers();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = scratch("slurm", "sprt");
    let single = common::succeed_in(&dir, &sprt_match(&dir.join("single")));
    assert!(
        stdout(&single).contains("H1 accepted"),
        "{}",
        stdout(&single)
    );
    let started = Instant::now();
    let (array, merge) = submit(&dir, 4, &sprt_match(&dir.join("cluster")));
    wait_for(&[&array, &merge], Duration::from_secs(900));
    let merged = arbiter_in(&dir, &["merge", "cluster", "cluster"]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert!(
        stdout(&merged).contains("H1 accepted"),
        "{}",
        stdout(&merged)
    );
    let games = |run: &str| {
        std::fs::read_to_string(dir.join(run).join("games.csv"))
            .unwrap()
            .lines()
            .count()
            - 1
    };
    let (one, split) = (games("single"), games("cluster"));
    let bound = one + 2 * 4;
    eprintln!(
        "Slurm SPRT, 4 tasks on {cpus} CPUs: one machine {one} games, the array {split} \
         (bound {bound}), {:?} in all",
        started.elapsed()
    );
    assert!(
        split <= bound,
        "the array played {split} games, one machine {one}"
    );
}

/// Slurm's pre-emption suspends a job (`scontrol suspend`): the task stops where it is, holding
/// the pair the pooled SPRT waits for. The others wait rather than run on (no task claims more
/// than tasks x concurrency pairs past that pair), so the array stays within one machine's games
/// plus 2 x tasks x concurrency however long the suspension.
#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn a_suspended_task_cannot_carry_an_sprt_past_its_bound() {
    slurm_answers();
    let dir = scratch("slurm", "suspend");
    let single = common::succeed_in(&dir, &sprt_match(&dir.join("single")));
    assert!(
        stdout(&single).contains("H1 accepted"),
        "{}",
        stdout(&single)
    );
    let (array, merge) = submit(&dir, 4, &sprt_match(&dir.join("cluster")));
    let journal = dir.join("cluster/shard-1-of-4/journal.jsonl");
    let started = Instant::now();
    while std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count()) < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "task 1 never played:\n{}",
            queued(&[&array, &merge])
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let task = format!("{array}_1");
    let scontrol = |verb: &str| {
        let out = Command::new("scontrol")
            .args([verb, &task])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scontrol {verb} {task}: {}",
            stderr(&out)
        );
    };
    scontrol("suspend");
    std::thread::sleep(Duration::from_secs(15));
    scontrol("resume");
    wait_for(&[&array, &merge], Duration::from_secs(900));
    let merged = arbiter_in(&dir, &["merge", "cluster", "cluster"]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let games = |run: &str| {
        std::fs::read_to_string(dir.join(run).join("games.csv"))
            .unwrap()
            .lines()
            .count()
            - 1
    };
    let (one, split) = (games("single"), games("cluster"));
    let bound = one + 2 * 4;
    eprintln!(
        "Slurm SPRT, task 1 suspended 15 s: one machine {one} games, the array {split} \
        (bound {bound})"
    );
    assert!(
        split <= bound,
        "the array played {split} games, one machine {one}"
    );
}

/// Three array tasks on a node that runs two at a time tune one theta through the shared
/// folder: the same theta after every pair as one machine playing the same pairs.
#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn a_tune_split_over_a_slurm_array_reaches_the_theta_of_one_machine() {
    slurm_answers();
    let dir = scratch("slurm", "tune");
    run_here(
        &dir,
        &common::focus_tune(&dir.join("single"), 150, 40, 5, &[]),
    );
    // The script `arbiter slurm` writes for the tune, submitted as a user would.
    let cluster = common::focus_tune(&dir.join("cluster"), 150, 40, 5, &[]);
    let mut args = vec!["slurm", "--shards", "3", "--time", "15:00", "--"];
    args.extend(cluster.iter().map(String::as_str));
    let script = arbiter_in(&dir, &args);
    assert_eq!(script.status.code(), Some(0), "{}", stderr(&script));
    assert!(
        !stdout(&script).contains(" merge "),
        "a tune needs no merge job"
    );
    std::fs::write(dir.join("tune.sh"), &script.stdout).unwrap();
    let submitted = Command::new("bash")
        .arg("tune.sh")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(submitted.status.success(), "{}", stderr(&submitted));
    // "submitted array job <id> (3 tasks)"
    let said = stdout(&submitted);
    let job = said.split_whitespace().nth(3).unwrap().to_string();
    wait_for(&[&job], Duration::from_secs(600));
    let theta = |d: &str| std::fs::read_to_string(dir.join(d).join("theta.csv"));
    let logs: Vec<String> = std::fs::read_dir(dir.join("cluster"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("slurm-"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    assert_eq!(
        theta("cluster").unwrap_or_else(|e| panic!("no theta.csv ({e}); logs: {logs:?}")),
        theta("single").unwrap(),
        "logs: {logs:?}"
    );
    let tasks = std::fs::read_dir(dir.join("cluster"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("shard-")
        })
        .count();
    assert_eq!(tasks, 3, "every array task joined the tune");
}

/// `arbiter slurm -- bisect ...`: two array tasks play every step as a split run, the job
/// after them resumes the bisect on one machine, and its files are one machine's to the byte.
#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn a_bisect_on_a_slurm_array_writes_the_bytes_of_one_machine() {
    slurm_answers();
    let dir = scratch("slurm", "bisect");
    let one = dir.join("one").display().to_string();
    run_here(&dir, &common::bisect_series(&one));
    let cluster = dir.join("cluster");
    let (array, resume) = submit(
        &dir,
        2,
        &common::bisect_series(&cluster.display().to_string()),
    );
    wait_for(&[&array, &resume], Duration::from_secs(900));
    let logs: Vec<String> = std::fs::read_dir(&cluster)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("slurm-"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    assert!(
        logs.iter()
            .filter(|l| l.contains("first worse: v6"))
            .count()
            >= 3,
        "both tasks and the resuming job answer: {logs:?}"
    );
    assert_eq!(
        std::fs::read_to_string(cluster.join("bisect.json"))
            .unwrap_or_else(|e| panic!("no bisect.json ({e}): {logs:?}")),
        std::fs::read_to_string(dir.join("one/bisect.json")).unwrap(),
        "{logs:?}"
    );
    for step in std::fs::read_dir(dir.join("one/steps")).unwrap().flatten() {
        let theirs = cluster
            .join("steps")
            .join(step.file_name())
            .join("games.csv");
        assert_eq!(
            std::fs::read_to_string(&theirs).unwrap_or_default(),
            std::fs::read_to_string(step.path().join("games.csv")).unwrap(),
            "{}",
            theirs.display()
        );
    }
}

/// A task that asks for more CPUs than any node has pends for ever once submitted: `arbiter
/// slurm` asks `sinfo` and refuses (exit 2, nothing printed to submit); with `--force` it warns,
/// and the script it prints still records how it was made (`--time` included).
#[test]
#[ignore = "needs Slurm: .ci/run starts a one-node cluster and runs this with --ignored"]
fn a_task_larger_than_every_node_is_refused_unless_forced() {
    slurm_answers();
    let dir = scratch("slurm", "too-wide");
    let run = tournament(&dir.join("run"), 1, "depth=1");
    let with = |force: bool| {
        let mut args = vec!["slurm", "--shards", "2", "--time", "15:00"];
        if force {
            args.push("--force");
        }
        args.push("--");
        args.extend(run.iter().map(String::as_str));
        args.extend(["--concurrency", "64"]);
        arbiter_in(&dir, &args)
    };
    let out = with(false);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("asks for 64 CPUs") && stderr(&out).contains("--force"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "a refused script was printed");
    let out = with(true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("asks for 64 CPUs"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("# Made by: arbiter slurm --shards 2 --time 15:00 --force -- "),
        "{}",
        stdout(&out)
    );
}

/// A split run an earlier build began (`tests/data/format-1`: a random-order book, one task
/// interrupted after 3 of 8 games) is upgraded once with `arbiter adopt`, and the script
/// `arbiter slurm` prints then finishes it: its array tasks join the run in the order it began
/// with, and the merge job writes the games the earlier build played on one machine.
#[test]
#[ignore = "needs a Slurm cluster: .ci/run starts one and runs this with --ignored"]
fn an_earlier_builds_split_run_is_finished_by_a_slurm_array_after_one_upgrade() {
    use common::earlier_format::{earlier_folders, the_run};
    slurm_answers();
    let dir = scratch("slurm", "earlier");
    earlier_folders(&dir);
    let keyed = |program: &str, args: &[String]| {
        let out = Command::new(program)
            .args(args)
            .current_dir(&dir)
            .env("ARBITER_KEY", dir.join("key"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        out
    };
    let arbiter = env!("CARGO_BIN_EXE_arbiter");
    keyed(arbiter, &["adopt".into(), "split".into()]);
    let mut slurm: Vec<String> = ["slurm", "--shards", "2", "--time", "15:00", "--"]
        .map(String::from)
        .to_vec();
    slurm.extend(the_run(&["--out", "split"]));
    let script = keyed(arbiter, &slurm);
    std::fs::write(dir.join("submit.sh"), &script.stdout).unwrap();
    let said = stdout(&keyed("bash", &["submit.sh".into()]));
    let words: Vec<&str> = said.split_whitespace().collect();
    let (array, merge) = (words[3], words[words.len() - 1]);
    wait_for(&[array, merge], Duration::from_secs(600));
    let merged = std::fs::read_dir(dir.join("split"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("slurm-merge-"))
        .expect("the merge job's log");
    let merged = std::fs::read_to_string(merged).unwrap();
    assert!(merged.contains("Merged 8 games"), "{merged}");
    // The same run on one machine, by the earlier build, upgraded and its reports written again.
    keyed(arbiter, &["adopt".into(), "whole".into()]);
    keyed(
        arbiter,
        &[
            "match".into(),
            "--resume".into(),
            "whole".into(),
            "--quiet".into(),
        ],
    );
    for file in ["games.csv", "standings.csv", "crosstable.csv"] {
        assert_eq!(
            std::fs::read_to_string(dir.join("whole").join(file)).unwrap(),
            std::fs::read_to_string(dir.join("split").join(file)).unwrap(),
            "{file}"
        );
    }
}
