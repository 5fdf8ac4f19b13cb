//! The script `arbiter slurm` prints, run by bash against a stand-in `sbatch` that records what
//! it is given: hostile values in names and paths stay text, and a run that would fail in
//! every task is refused before anything is printed. (The real cluster is tests/slurm_cluster.rs.)

use crate::common;

use common::{arbiter_in, bundled_engine, scratch, script, stderr, stdout};
use std::process::Command;

/// `sbatch --parsable` as far as the script needs it: each call's arguments, one per line,
/// and its standard input are recorded; it answers with a job id.
const FAKE_SBATCH: &str = r#"#!/bin/bash
n=$(ls "$SBATCH_LOG"/*.args 2>/dev/null | wc -l)
for a in "$@"; do printf '%s\n' "$a"; done > "$SBATCH_LOG/call-$n.args"
if [ ! -t 0 ]; then cat > "$SBATCH_LOG/call-$n.stdin"; fi
echo "$((1000 + n))"
"#;

fn run_args(out: &str, event: &str, book: &str) -> Vec<String> {
    let e = bundled_engine();
    [
        "match",
        "--games",
        "4",
        "--openings",
        book,
        "--engine",
        &format!("cmd={e}"),
        "name=a",
        "depth=1",
        "--engine",
        &format!("cmd={e}"),
        "name=b",
        "depth=1",
        "--event",
        event,
        "--out",
        out,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn hostile_names_and_paths_stay_text_in_the_job_script() {
    let dir = scratch("slurm-script", "hostile");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(&bin, "sbatch", FAKE_SBATCH, 0o755);
    let log = dir.join("log");
    std::fs::create_dir_all(&log).unwrap();
    let book = format!("{}/openings/leiserchess.txt", env!("CARGO_MANIFEST_DIR"));
    let event = "x\ntouch PWNED_EVENT\n$(touch PWNED_SUBST)'\"`touch PWNED_TICK`";
    let job_name = "a;touch PWNED_NAME";
    let out_dir = "runs/with space";
    let mut args: Vec<String> = [
        "slurm",
        "--shards",
        "3",
        "--job-name",
        job_name,
        "--partition",
        "p q",
        "--",
    ]
    .map(String::from)
    .to_vec();
    args.extend(run_args(out_dir, event, &book));
    let printed = arbiter_in(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(printed.status.code(), Some(0), "{}", stderr(&printed));
    let text = stdout(&printed);
    let path = dir.join("submit.sh");
    std::fs::write(&path, &text).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(syntax.status.success(), "{}\n{text}", stderr(&syntax));
    let submitted = Command::new("bash")
        .arg(&path)
        .current_dir(&dir)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("SBATCH_LOG", &log)
        .output()
        .unwrap();
    assert!(
        submitted.status.success(),
        "{}{}\n{text}",
        stdout(&submitted),
        stderr(&submitted)
    );
    for pwned in ["PWNED_EVENT", "PWNED_SUBST", "PWNED_TICK", "PWNED_NAME"] {
        assert!(
            !dir.join(pwned).exists(),
            "the script ran `touch {pwned}`\n{text}"
        );
    }
    let array = std::fs::read_to_string(log.join("call-0.args")).unwrap();
    let lines: Vec<&str> = array.lines().collect();
    assert!(
        lines.contains(&format!("--job-name={job_name}").as_str()),
        "{array}"
    );
    assert!(lines.contains(&"--partition=p q"), "{array}");
    assert!(lines.contains(&"--array=1-3"), "{array}");
    // A requeued task adds to its log, which keeps what its first attempt said.
    assert!(lines.contains(&"--open-mode=append"), "{array}");
    let output = format!("--output={}/{out_dir}/slurm-%A_%a.out", dir.display());
    assert!(lines.contains(&output.as_str()), "{array}");
    // The task script runs the run as given, as one task of the split run.
    let task = std::fs::read_to_string(log.join("call-0.stdin")).unwrap();
    assert!(task.contains("--shard slurm"), "{task}");
    let exec = task.lines().find(|l| l.starts_with("exec ")).unwrap();
    let words = Command::new("bash")
        .args([
            "-c",
            &format!("for a in {}; do printf '%s\\0' \"$a\"; done", &exec[5..]),
        ])
        .output()
        .unwrap();
    let words: Vec<String> = String::from_utf8(words.stdout)
        .unwrap()
        .split('\0')
        .map(String::from)
        .collect();
    assert!(words.contains(&event.to_string()), "{words:?}");
    let merge = std::fs::read_to_string(log.join("call-1.args")).unwrap();
    assert!(merge.contains("--dependency=afterany:1000"), "{merge}");
    assert!(dir.join(out_dir).is_dir());
}

/// `arbiter slurm -- <run>` refused (exit 2) with no script printed; its standard error.
fn refused_before_the_script(dir: &std::path::Path, run: Vec<String>) -> String {
    let mut args: Vec<String> = ["slurm", "--shards", "2", "--"].map(String::from).to_vec();
    args.extend(run);
    let out = arbiter_in(dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).is_empty(),
        "a script was printed: {}",
        stdout(&out)
    );
    stderr(&out)
}

#[test]
fn a_run_every_task_would_refuse_is_refused_before_the_script() {
    let dir = scratch("slurm-script", "checked");
    let said = refused_before_the_script(&dir, run_args("run", "e", "no-such-book.txt"));
    assert!(said.contains("no-such-book.txt"), "{said}");
}

/// Where Slurm's controller is down, `sinfo` retries it for about ten seconds: `arbiter slurm`
/// waits for it no more than a few, kills it, prints the script and says what it did not check.
#[test]
fn a_sinfo_that_does_not_answer_neither_holds_the_script_nor_outlives_it() {
    let dir = scratch("slurm-script", "late-sinfo");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let started = dir.join("sinfo-started");
    script(
        &bin,
        "sinfo",
        &format!(
            "#!/bin/sh
echo $$ > {}
exec sleep 60
",
            started.display()
        ),
        0o755,
    );
    let book = common::book("leiserchess");
    let mut args: Vec<String> = ["slurm", "--shards", "2", "--"].map(String::from).to_vec();
    args.extend(run_args("late", "e", &book));
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(&dir)
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("sbatch"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("sinfo did not answer within 3 s"),
        "{}",
        stderr(&out)
    );
    let pid = std::fs::read_to_string(&started).expect("the late sinfo was asked");
    // Gone, or a zombie left for init to reap: not sleeping on. Killed, it dies when next
    // scheduled, which a busy machine may put off past arbiter's exit.
    let alive = || {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with(['Z', 'X']))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !alive(),
        "sinfo (pid {}) outlived arbiter slurm",
        pid.trim()
    );
}

/// An `--out` folder every task would refuse is refused before the script: one that holds a
/// split run with other settings, or a run of one machine. A folder of the same split run (a
/// resubmission, after a task was requeued) gets its script.
#[test]
fn an_out_folder_every_task_would_refuse_is_refused_before_the_script() {
    let dir = scratch("slurm-script", "folder");
    let book = common::book("leiserchess");
    let mut task = run_args("split", "e", &book);
    task.extend(["--shard".into(), "1/2".into(), "--quiet".into()]);
    let started = arbiter_in(&dir, &task.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(started.status.code(), Some(0), "{}", stderr(&started));
    let said = refused_before_the_script(&dir, run_args("split", "other event", &book));
    assert!(
        said.contains("holds a split run with other settings") && said.contains("event"),
        "{said}"
    );
    let mut args: Vec<String> = ["slurm", "--shards", "2", "--"].map(String::from).to_vec();
    args.extend(run_args("split", "e", &book));
    let again = arbiter_in(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).contains("sbatch"), "{}", stdout(&again));
    let one = run_args("single", "e", &book);
    let played = arbiter_in(&dir, &one.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(played.status.code(), Some(0), "{}", stderr(&played));
    let said = refused_before_the_script(&dir, one);
    assert!(said.contains("holds a run of one machine"), "{said}");
}

/// A bisect's versions are all started before the script is printed: a version that cannot
/// start would otherwise fail its step hours into the job, when the search first reaches it.
/// Versions are started two at a time, so both a version inside a pair and the last of an odd
/// number (started with the one before it) are tried.
#[test]
fn a_bisect_with_a_version_that_cannot_start_is_refused_before_the_script() {
    let dir = scratch("slurm-script", "bisect");
    let broken = script(&dir, "broken-engine", "#!/bin/sh\nexit 3\n", 0o755);
    for (versions, bad) in [(8, "v5"), (7, "v7")] {
        let mut series = common::bisect_series("series");
        // Each version is `--engine cmd=... name=vN depth=N`.
        series.truncate(series.len() - 4 * (8 - versions));
        let at = series
            .iter()
            .position(|a| *a == format!("name={bad}"))
            .unwrap();
        series[at - 1] = format!("cmd={broken}");
        let said = refused_before_the_script(&dir, series);
        assert!(said.contains(&format!("engine '{bad}'")), "{said}");
        assert!(!dir.join("series").join("bisect.json").exists());
    }
}
