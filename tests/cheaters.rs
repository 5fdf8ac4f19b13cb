//! Engines that fight back after the start, as a rated match's cheater would: started the plain
//! way (no `dir=`, programs in the working folder beside the run), they wait until the run's
//! files exist, then try to rewrite the run, replace their opponent's program, read what arbiter
//! was given (its environment, a descriptor it inherited) and share a folder with a twin.
//! `.ci/run` installs bubblewrap; without it these tests fail, they never skip.

use crate::common;

use common::{bundled_engine, scratch, script, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The cheat: a wrapper that starts a loop and then plays as the bundled engine. The loop waits
/// for `<report>/now` (made by the test once the run has written a game), then, every 50 ms,
/// tries each attack and says in `<report>/<pid>.log` what it got. `<report>` is the only
/// folder it is given to write (`writable=`), so that the test can read what it did.
fn cheat_script(dir: &Path, report: &Path) -> String {
    let engine = bundled_engine();
    let report = report.display();
    let text = format!(
        r#"#!/bin/bash
log={report}/$(cat /proc/sys/kernel/random/uuid).log
echo "started in $(pwd)" >> $log
env | grep -q ARBITER_TEST_SECRET && echo "environment leaked" >> $log
( echo "fd 7 leaked" >&7 ) 2>/dev/null && echo "fd 7 written" >> $log
(
  while [ ! -e {report}/now ]; do sleep 0.05; done
  for i in $(seq 1 10); do
    [ -e run/run.json ] && echo "run.json seen" >> $log
    cat run/run.key > /dev/null 2>&1 && echo "run key read" >> $log
    sed -i 's/"mode":"auto"/"mode":"off"/' run/run.json 2>/dev/null && grep -q '"mode":"off"' run/run.json 2>/dev/null && echo "run.json rewritten" >> $log
    echo '{{"forged":"CHEAT"}}' >> run/journal.jsonl 2>/dev/null && grep -q CHEAT run/journal.jsonl 2>/dev/null && echo "journal forged" >> $log
    rm -f honest 2>/dev/null; printf '#!/bin/sh\nsleep 1000\n' > honest 2>/dev/null && echo "honest replaced in my view" >> $log
    echo CHEAT > relay.txt 2>/dev/null
    # Once every attack has been tried: on a loaded machine the game may end, and the
    # engine's process tree with it, before all ten rounds are done.
    [ $i = 1 ] && echo "attacked" >> $log
    sleep 0.05
  done
) &
exec {engine} "$@"
"#
    );
    script(dir, "cheat", &text, 0o755)
}

fn sha(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Starts `arbiter` in `dir` with an extra descriptor 7 open for writing on `fd7` (as a shell's
/// `7>file` leaves it) and a variable of its own in its environment.
fn start(dir: &Path, args: &[String], fd7: &Path) -> std::process::Child {
    let exe = env!("CARGO_BIN_EXE_arbiter");
    let mut line = format!("exec 7>>'{}'; exec '{exe}'", fd7.display());
    for a in args {
        line.push_str(&format!(" '{a}'"));
    }
    Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("ARBITER_TEST_SECRET", "hunter2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the run in `dir/run` has a game in its journal (the run's files exist), then
/// lets the cheats loose.
fn release_once_the_run_is_written(dir: &Path, report: &Path, run: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let journal = dir.join("run/journal.jsonl");
    while std::fs::read_to_string(&journal).map_or(true, |j| j.lines().count() == 0) {
        assert!(Instant::now() < deadline, "no game was written");
        if let Some(status) = run.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            run.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("arbiter ended before a game was written: {status}: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(report.join("now"), "").unwrap();
}

fn logs(report: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(report).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "log") {
            all.push_str(&std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    all
}

fn match_args(concurrency: u32) -> Vec<String> {
    let mut args: Vec<String> = [
        "match",
        "--games",
        "4",
        "--each",
        "st=0.05",
        // A loaded machine must not end the games by the clock before the cheat has tried.
        "timemargin=10000",
        "--out",
        "run",
        "--concurrency",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(concurrency.to_string());
    args
}

/// Cause guarded: the run's folder appeared inside an engine's writable working folder after its
/// sandbox was made (the start-up check started engines before the folder existed), and programs
/// in the working folder were writable by every engine, so a cheat could rewrite run.json and the
/// journal and replace its opponent's program; its environment and inherited descriptors leaked.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn a_cheat_that_waits_for_the_run_changes_nothing_of_it_nor_its_opponent() {
    common::needs_bubblewrap();
    let dir = scratch("cheaters", "plain");
    let report = dir.join("report");
    std::fs::create_dir_all(&report).unwrap();
    let fd7 = dir.join("fd7.txt");
    std::fs::write(&fd7, "").unwrap();
    cheat_script(&dir, &report);
    let honest = dir.join("honest");
    std::fs::copy(bundled_engine(), &honest).unwrap();
    let before = sha(&honest);
    let mut args = match_args(2);
    args.extend([
        "--engine".into(),
        "cmd=./cheat".into(),
        "name=cheat".into(),
        common::writable(&report),
        // What the wrapper runs, outside its folder.
        format!("readable={}", bundled_engine()),
        "--engine".into(),
        "cmd=./honest".into(),
        "name=honest".into(),
    ]);
    let mut child = start(&dir, &args, &fd7);
    release_once_the_run_is_written(&dir, &report, &mut child);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = logs(&report);
    let games = std::fs::read_to_string(dir.join("run/games.csv")).unwrap_or_default();
    assert!(
        said.contains("attacked"),
        "the attack never ran: {said}\n{games}\n{}",
        stdout(&out)
    );
    for breach in [
        "environment leaked",
        "fd 7 written",
        "run.json seen",
        "run key read",
        "run.json rewritten",
        "journal forged",
    ] {
        assert!(!said.contains(breach), "{breach}: {said}");
    }
    assert_eq!(std::fs::read_to_string(&fd7).unwrap(), "", "fd 7 reached");
    assert_eq!(sha(&honest), before, "the opponent's program was replaced");
    assert!(!dir.join("relay.txt").exists(), "a cheat wrote the folder");
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    assert!(!journal.contains("CHEAT"), "{journal}");
    assert_eq!(journal.lines().count(), 4, "{}", stdout(&out));
    let spec = std::fs::read_to_string(dir.join("run/run.json")).unwrap();
    assert!(!spec.contains("\"off\""), "{spec}");
    // Each process of the cheat worked in a folder of its own: two at once at concurrency 2.
    let folders: std::collections::BTreeSet<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("started in "))
        .collect();
    assert!(!folders.is_empty(), "{said}");
}

/// Cause guarded: two processes of one engine (both games of a pair at once) shared their
/// `dir=`, so one could relay its opponent's moves to the other through a file.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn two_processes_of_one_engine_share_no_writable_folder() {
    common::needs_bubblewrap();
    let dir = scratch("cheaters", "relay");
    let report = dir.join("report");
    std::fs::create_dir_all(&report).unwrap();
    let shared = dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    // Each process leaves a note in its working folder and says which notes it sees there.
    let relay = script(
        &shared,
        "relay",
        &format!(
            "#!/bin/bash\nid=$(cat /proc/sys/kernel/random/uuid)\necho $id > note-$id.txt\nls \
                note-*.txt | wc -l > {}/$id.seen\nexec {} \"$@\"\n",
            report.display(),
            bundled_engine()
        ),
        0o755,
    );
    let mut args = match_args(2);
    args.extend([
        "--engine".into(),
        format!("cmd={relay}"),
        "name=relay".into(),
        format!("dir={}", shared.display()),
        common::writable(&report),
        format!("readable={}", bundled_engine()),
        "--engine".into(),
        format!("cmd={}", bundled_engine()),
        "name=fair".into(),
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let seen: Vec<String> = std::fs::read_dir(&report)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "seen"))
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .trim()
                .to_string()
        })
        .collect();
    assert!(seen.len() >= 2, "two processes of the engine ran: {seen:?}");
    assert!(
        seen.iter().all(|s| s == "1"),
        "a process saw another's note: {seen:?}"
    );
    assert_eq!(
        std::fs::read_dir(&shared).unwrap().count(),
        1,
        "a note reached the real folder"
    );
}

/// The CPU time (ns, to 10 ms) each process named `name` (its `comm`) has used so far, by pid.
fn cpu_by_name(name: &str, seen: &mut std::collections::BTreeMap<(String, u32), u64>) {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        // utime + stime, which keep the time of threads that have exited (a searcher may
        // search on a thread of its own per move), in clock ticks of 10 ms.
        let ns = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let fields: Vec<u64> = stat[stat.rfind(')')? + 2..]
                    .split_whitespace()
                    .skip(11)
                    .take(2)
                    .filter_map(|f| f.parse().ok())
                    .collect();
                Some(fields.iter().sum::<u64>() * 10_000_000)
            });
        if let Some(ns) = ns {
            let kept = seen.entry((name.to_string(), pid)).or_default();
            *kept = (*kept).max(ns);
        }
    }
}

/// Cause guarded: nothing stopped an engine from computing on its opponent's time (a helper
/// kept busy between its turns took CPU its opponent was searching with). The thief moves in
/// 20 ms and keeps a spinner running all game; its opponent searches 250 ms a move. Frozen
/// between its turns, the spinner gets CPU only on the thief's own turns and the first 5 ms of
/// its opponent's (about as much as the thief searches with); free, about as much as its
/// opponent, ten times more.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn an_engine_gets_no_cpu_on_its_opponents_time() {
    common::needs_bubblewrap();
    let said = thief_is_frozen("thief", None, "on");
    assert!(!said.contains("frozen: "), "{said}");
}

/// Watched rather than frozen from the first turn (the default, here whatever the load): the
/// thief is caught on the first turn of its opponent's after its spinner starts, said so by
/// name, and frozen from then on; its honest opponent is never caught.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn a_watched_engine_is_frozen_once_caught_using_cpu_on_its_opponents_time() {
    common::needs_bubblewrap();
    let said = thief_is_frozen("thief-watched", None, "watch");
    assert!(said.contains("frozen: thief used "), "{said}");
    assert!(!said.contains("frozen: honest"), "{said}");
}

/// The same thief with the engines' groups in the unified hierarchy (cgroup v2, whose
/// `cgroup.freeze` needs no controller): every current distribution's only one. The banner says
/// which protections held.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn an_engine_gets_no_cpu_on_its_opponents_time_under_cgroup_v2() {
    common::needs_bubblewrap();
    let banner = thief_is_frozen("thief-v2", Some("v2"), "watch");
    assert!(
        banner.contains("cgroup v2") && banner.contains("frozen off its turn"),
        "{banner}"
    );
    assert!(banner.contains("frozen: thief used "), "{banner}");
}

/// Plays the thief against an honest engine with `freeze=<freeze>`; the run's stdout and
/// stderr.
fn thief_is_frozen(name: &str, cgroup: Option<&str>, freeze: &str) -> String {
    let dir = scratch("cheaters", name);
    std::fs::copy("/usr/bin/yes", dir.join("thiefspin")).unwrap();
    std::fs::copy(bundled_engine(), dir.join("honestplay")).unwrap();
    std::fs::copy(bundled_engine(), dir.join("thiefplay")).unwrap();
    script(
        &dir,
        "thief",
        // The spinner starts once the games have begun (a second of wall time, frozen or
        // not): what it takes is what it takes from them.
        "#!/bin/bash\n( sleep 1; exec ./thiefspin > /dev/null ) &\nexec ./thiefplay \"$@\"\n",
        0o755,
    );
    let args = [
        "match",
        "--games",
        "2",
        "--max-plies",
        "16",
        "--out",
        "run",
        "--engine",
        "cmd=./thief",
        "name=thief",
        "st=0.02",
        "--engine",
        "cmd=./honestplay",
        "name=honest",
        "st=0.25",
        "--each",
        "timemargin=10000",
        // Frozen however busy the test machine is (by default a busy machine's engines are not).
        &format!("freeze={freeze}"),
    ];
    let mut run = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    run.args(args)
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(version) = cgroup {
        run.env("ARBITER_CGROUP", version);
    }
    let mut run = run.spawn().unwrap();
    let mut seen = std::collections::BTreeMap::new();
    while run.try_wait().unwrap().is_none() {
        cpu_by_name("thiefspin", &mut seen);
        cpu_by_name("thiefplay", &mut seen);
        cpu_by_name("honestplay", &mut seen);
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = run.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let total = |name: &str| -> u64 {
        seen.iter()
            .filter(|((n, _), _)| n == name)
            .map(|(_, ns)| ns)
            .sum()
    };
    let (spun, own, searched) = (total("thiefspin"), total("thiefplay"), total("honestplay"));
    assert!(own > 0 && searched > 0, "{seen:?}");
    eprintln!(
        "spinner {} ms, the thief's own search {} ms, its opponent's {} ms",
        spun / 1_000_000,
        own / 1_000_000,
        searched / 1_000_000
    );
    // Measured against the thief's own search, which a loaded machine slows as it slows the
    // spinner: the opponent's search shrinks with the load while the thief's turns do not. A
    // loaded machine can also squeeze the thief's search more than the spinner's short turns
    // (the other tests here run beside it), so a spinner under a third of the opponent's
    // search passes too: a free one takes about as much as the opponent searches, and fails
    // both.
    assert!(
        spun < own * 4 || spun < searched / 3,
        "the thief's spinner used {} ms of CPU, its own search {} ms (its opponent's {} ms)",
        spun / 1_000_000,
        own / 1_000_000,
        searched / 1_000_000
    );
    format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out))
}

/// Cause guarded: `--affinity` pinned an engine with a mask it could change from inside
/// (`taskset` in its sandbox took it back to every CPU, onto its opponent's). The engine tries
/// once it is pinned: the start-up check's engines start on every CPU and are moved onto their
/// game's when they play. A process that ended before it could read its mask back says nothing.
#[test]
fn a_pinned_engine_cannot_widen_its_cpu_mask() {
    let dir = scratch("cheaters", "mask");
    let report = dir.join("report");
    std::fs::create_dir_all(&report).unwrap();
    let every = (0..std::thread::available_parallelism().unwrap().get())
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",");
    script(
        &dir,
        "widener",
        &format!(
            "#!/bin/bash\n( for i in $(seq 500); do taskset -pc $$ | grep -q ': [0-9]*$' && break; \
                sleep 0.02; done; taskset -apc {every} $$ > /dev/null 2>&1; m=$(taskset -pc $$ \
                2>/dev/null | sed 's/.*: //'); [ -n \"$m\" ] && echo \"$m\" > {}/$(cat \
                /proc/sys/kernel/random/uuid).mask ) &\nexec {} \"$@\"\n",
            report.display(),
            bundled_engine()
        ),
        0o755,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            "--games",
            "2",
            "--max-plies",
            "40",
            "--affinity",
            "0",
            "--out",
            "run",
            "--engine",
            "cmd=./widener",
            "name=widener",
            &common::writable(&report),
            &format!("readable={}", bundled_engine()),
            "--engine",
            &format!("cmd={}", bundled_engine()),
            "name=fair",
            "--each",
            "st=0.02",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let masks: Vec<String> = std::fs::read_dir(&report)
        .unwrap()
        .flatten()
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .trim()
                .to_string()
        })
        .collect();
    assert!(!masks.is_empty(), "the engine never said its mask");
    assert!(
        masks.iter().all(|m| m == "0"),
        "an engine pinned to CPU 0 ran on {masks:?}"
    );
}

/// Cause guarded: an engine set its own sandbox to `off` in run.json while the run played, and
/// the `--resume` after an interruption started it unconfined. Here the cheat attacks while the
/// run plays, the run is interrupted (Ctrl-C), the cheat attacks again while the resume plays,
/// and the resume finishes the run as it was asked; a run.json changed behind arbiter's back (as
/// an engine that could write it would) is refused by the next resume.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn an_interrupted_run_resumes_as_it_was_asked_whatever_the_cheat_did() {
    common::needs_bubblewrap();
    let dir = scratch("cheaters", "resume");
    let report = dir.join("report");
    std::fs::create_dir_all(&report).unwrap();
    let fd7 = dir.join("fd7.txt");
    std::fs::write(&fd7, "").unwrap();
    cheat_script(&dir, &report);
    std::fs::copy(bundled_engine(), dir.join("honest")).unwrap();
    let mut args = match_args(2);
    args[2] = "16".into();
    args.extend([
        "--max-plies".into(),
        "20".into(),
        "--engine".into(),
        "cmd=./cheat".into(),
        "name=cheat".into(),
        common::writable(&report),
        format!("readable={}", bundled_engine()),
        "--engine".into(),
        "cmd=./honest".into(),
        "name=honest".into(),
    ]);
    let mut child = start(&dir, &args, &fd7);
    release_once_the_run_is_written(&dir, &report, &mut child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !logs(&report).contains("attacked") {
        assert!(Instant::now() < deadline, "the attack never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child (bash exec'd arbiter: the same process).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let interrupted = child.wait_with_output().unwrap();
    let played = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    assert!(
        played.lines().count() < 16,
        "the run finished before it was interrupted: {}",
        stderr(&interrupted)
    );
    let spec = std::fs::read_to_string(dir.join("run/run.json")).unwrap();
    assert!(!spec.contains("\"off\""), "{spec}");
    let resumed = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--resume", "run"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let said = logs(&report);
    for breach in [
        "run.json seen",
        "run key read",
        "run.json rewritten",
        "journal forged",
    ] {
        assert!(!said.contains(breach), "{breach}: {said}");
    }
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 16, "{}", stdout(&resumed));
    assert!(!journal.contains("CHEAT"));
    assert!(
        stdout(&resumed).contains("every engine"),
        "the resume did not confine every engine: {}",
        stdout(&resumed)
    );
    // What a cheat that could write run.json would have done: refused, naming the file.
    let spec = std::fs::read_to_string(dir.join("run/run.json")).unwrap();
    std::fs::write(
        dir.join("run/run.json"),
        spec.replacen("\"engines\": [", "\"engines\": [ ", 1),
    )
    .unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--resume", "run"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("run.json: changed since arbiter wrote it"),
        "{}",
        stderr(&refused)
    );
}

/// A bisect keeps its engines running from step to step. The cheat, a version started for the
/// first step, waits until later steps' files exist, then tries to read and forge every step's
/// records: its sandbox hid the bisect's whole `steps/` folder when it started, later steps too.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn a_kept_engine_sees_no_later_step_of_its_bisect() {
    common::needs_bubblewrap();
    let dir = scratch("cheaters", "bisect");
    let report = dir.join("report");
    std::fs::create_dir_all(&report).unwrap();
    let engine = bundled_engine();
    let text = format!(
        r#"#!/bin/bash
log={report}/$(cat /proc/sys/kernel/random/uuid).log
echo "started in $(pwd)" >> $log
(
  while [ ! -e {report}/now ]; do sleep 0.05; done
  for i in $(seq 1 10); do
    ls bisect/steps/*/journal.jsonl > /dev/null 2>&1 && echo "step journal seen" >> $log
    for j in bisect/steps/*/journal.jsonl; do
      echo '{{"forged":"CHEAT"}}' >> "$j" 2>/dev/null && grep -q CHEAT "$j" 2>/dev/null \
        && echo "journal forged" >> $log
    done
    [ $i = 1 ] && echo "attacked" >> $log
    sleep 0.05
  done
) &
exec {engine} "$@"
"#,
        report = report.display()
    );
    script(&dir, "cheat", &text, 0o755);
    let mut args = common::bisect_of("bisect", 4, 3, |_| {
        vec![
            "cmd=./cheat".into(),
            common::writable(&report),
            format!("readable={engine}"),
        ]
    });
    args.extend(["--max-games", "64", "--quiet"].map(String::from));
    let mut run = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Loose once a second step's games are being written: the engines were started before it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let second_step_played = || {
        std::fs::read_dir(dir.join("bisect/steps")).is_ok_and(|steps| {
            steps.flatten().any(|s| {
                s.file_name().to_string_lossy().starts_with("002-")
                    && std::fs::read_to_string(s.path().join("journal.jsonl"))
                        .is_ok_and(|j| !j.is_empty())
            })
        })
    };
    while !second_step_played() {
        assert!(Instant::now() < deadline, "no second step was played");
        assert!(run.try_wait().unwrap().is_none(), "the bisect ended first");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(report.join("now"), "").unwrap();
    let out = run.wait_with_output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", stderr(&out));
    let said = logs(&report);
    assert!(said.contains("attacked"), "the attack never ran: {said}");
    for breach in ["step journal seen", "journal forged"] {
        assert!(!said.contains(breach), "{breach}: {said}");
    }
    for step in std::fs::read_dir(dir.join("bisect/steps"))
        .unwrap()
        .flatten()
    {
        let journal = std::fs::read_to_string(step.path().join("journal.jsonl")).unwrap();
        assert!(!journal.contains("CHEAT"), "{}", step.path().display());
    }
    // The steps were played by kept engines: each worker started each version once.
    let starts = said.lines().filter(|l| l.starts_with("started in")).count();
    assert!(starts <= 8, "{starts} starts: {said}");
}
