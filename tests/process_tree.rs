//! Nothing an engine starts outlives it: not a child in a session of its own (`setsid`), not a
//! grandchild after `kill -9` of arbiter; and an engine that exits while a child holds its output
//! is seen to crash at once. Real processes, found through /proc by their working folder.

mod common;

use common::{arbiter_in, bundled_engine, scratch, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A folder of its own for the engines of one test: every process they start works in it.
/// The tests of this file one at a time: `--affinity auto` keeps off a CPU where another
/// program's thread is pinned, whatever its lock folder, so one test's pinned game would keep
/// the next test's off the CPU it checks.
/// Waits until the one-minute load average is under `load`, or `patience` has passed.
fn wait_for_load_below(load: f64, patience: Duration) {
    let started = Instant::now();
    let now = || {
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    while now() >= load && started.elapsed() < patience {
        std::thread::sleep(Duration::from_secs(2));
    }
}

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

fn engines_dir(name: &str) -> common::Scratch {
    scratch("tree", name)
}

/// Processes whose working folder is `dir`, with their command lines.
fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if std::fs::read_link(entry.path().join("cwd")).ok().as_deref() == Some(dir) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    found
}

/// Waits (up to 10 s) for every process in `dir` to be gone; returns those still there.
fn gone(dir: &Path) -> Vec<(u32, String)> {
    let started = Instant::now();
    loop {
        let left = processes_in(dir);
        if left.is_empty() || started.elapsed() > Duration::from_secs(10) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn faulty(dir: &Path, name: &str, fault: &str) -> Vec<String> {
    vec![
        "--engine".into(),
        format!("cmd={}", bundled_engine()),
        format!("name={name}"),
        format!("dir={}", dir.display()),
        "arg=--fault".into(),
        format!("arg={fault}"),
    ]
}

#[test]
fn a_child_in_its_own_session_ends_with_its_bundled_engine() {
    let _one_at_a_time = one_at_a_time();
    let dir = engines_dir("setsid");
    let mut args: Vec<String> = ["match", "--games", "2", "--each", "depth=1", "--quiet"]
        .map(String::from)
        .to_vec();
    args.extend(faulty(&dir, "escaper", "escape"));
    args.extend(faulty(&dir, "plain", "none"));
    args.extend(["--out".into(), dir.join("run").display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = arbiter_in(&dir, &refs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(gone(&dir), Vec::new(), "outlived the run");
}

#[test]
fn after_kill_9_of_arbiter_no_engine_descendant_survives() {
    let _one_at_a_time = one_at_a_time();
    let dir = engines_dir("kill9");
    let mut args: Vec<String> = [
        "tournament",
        "--rounds",
        "100",
        "--each",
        "tc=10+0.1",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    args.extend(faulty(&dir, "forker", "fork"));
    args.extend(faulty(&dir, "escaper", "escape"));
    args.extend(["--out".into(), dir.join("run").display().to_string()]);
    let mut arbiter = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until both engines and their children run: two engines, two keepers, two sleeps.
    let started = Instant::now();
    let sleeping = |dir: &Path| {
        processes_in(dir)
            .iter()
            .filter(|(_, c)| c.starts_with("sleep"))
            .count()
    };
    while sleeping(&dir) < 2 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sleeping(&dir), 2, "{:?}", processes_in(&dir));
    arbiter.kill().unwrap(); // SIGKILL: no cleanup of its own
    let _ = arbiter.wait();
    assert_eq!(gone(&dir), Vec::new(), "outlived arbiter");
}

#[test]
fn an_engine_that_exits_while_a_child_holds_its_output_loses_by_crash_not_stall() {
    let _one_at_a_time = one_at_a_time();
    let dir = engines_dir("orphan");
    let mut args: Vec<String> = [
        "match", "--games", "1", "--each", "depth=1", "stall=30", "--quiet",
    ]
    .map(String::from)
    .to_vec();
    args.extend(faulty(&dir, "orphaner", "orphan"));
    args.extend(["arg=--fault-after".into(), "arg=2".into()]);
    args.extend(faulty(&dir, "plain", "none"));
    args.extend(["--out".into(), dir.join("run").display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = arbiter_in(&dir, &refs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.join("run/games.csv")).unwrap();
    assert!(
        csv.contains("engine crash") && !csv.contains("engine stall"),
        "{csv}"
    );
    assert_eq!(gone(&dir), Vec::new(), "outlived the run");
}

/// The keepers, what the start-up check ended and the sandboxes are the harness's own cost, though
/// the kernel counts their CPU time with the engines': a run asked for it (as `bench --peer` asks)
/// says how much it was.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn keepers_and_the_start_up_check_report_their_cpu_time() {
    common::needs_bubblewrap();
    let _one_at_a_time = one_at_a_time();
    let dir = engines_dir("harness-cpu");
    let report = dir.join("harness-cpu.txt");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args([
        "match",
        "--games",
        "2",
        "--each",
        "depth=1",
        "sandbox=on",
        "--quiet",
    ])
    .args(faulty(&dir, "first", "none"))
    .args([
        "--engine",
        &format!("cmd={}", bundled_engine()),
        "name=second",
    ])
    .args(["--out", &dir.join("run").display().to_string()])
    .env("ARBITER_HARNESS_CPU", &report)
    .current_dir(&dir);
    let out = common::output_within_deadline(cmd);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&report).unwrap();
    let numbers: Vec<u64> = text
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let [own_us, keepers_us, check_us, sandboxes_us] = numbers[..] else {
        panic!("{text:?}")
    };
    // Its own time, to the microsecond (a run of two games costs more than one clock tick).
    assert!(own_us > 0, "{text}");
    // Two keepers, each adding its time as it exits (with the start-up check's engines kept to
    // play, the check's own share is only what it ended: the engines of a failed check, the
    // sandbox's probe after a sandboxed start failed; nothing here).
    assert!(keepers_us > 0, "{text}");
    // Each engine ran in a sandbox (bubblewrap), whose start costs milliseconds; its time is
    // read to the nanosecond once the engine has answered.
    assert!(sandboxes_us > 0, "{text}");
    assert!(
        [own_us, keepers_us, check_us, sandboxes_us]
            .iter()
            .all(|&us| us < 10_000_000),
        "implausible: {text}"
    );
}

/// A thread's or process's scheduling policy (0 normal, 3 batch) and the CPUs it may use, from
/// /proc.
fn scheduling(task: &Path) -> (String, String) {
    let stat = std::fs::read_to_string(task.join("stat")).unwrap_or_default();
    // After the name: state is field 3, policy field 41.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let policy = after_name.split_whitespace().nth(41 - 3).unwrap_or("?");
    let status = std::fs::read_to_string(task.join("status")).unwrap_or_default();
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("?")
        .trim();
    (policy.to_string(), cpus.to_string())
}

/// Plays a two-game match with `affinity` (`--affinity` and its CPUs, or fastchess's
/// `-use-affinity` line); returns how its game worker thread and its two engines were
/// scheduled while they played.
fn pinned_match(name: &str, affinity: &[&str]) -> ((String, String), Vec<(String, String)>) {
    pinned_match_in(name, affinity, None)
}

/// As `pinned_match`, with the folder where runs lock the CPUs they pin to (`/tmp/arbiter-cpus`
/// unless `ARBITER_CPU_LOCKS` names another) in `tmp`.
fn pinned_match_in(
    name: &str,
    affinity: &[&str],
    tmp: Option<&Path>,
) -> ((String, String), Vec<(String, String)>) {
    let dir = engines_dir(name);
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut args: Vec<String> = ["match", "--games", "2", "--max-plies", "8", "--quiet"]
        .map(String::from)
        .to_vec();
    args.extend(affinity.iter().map(|a| a.to_string()));
    // A generous margin: on a loaded machine a move over its time would lose the game and
    // start the engine again, which is not what this counts.
    args.extend(["--each".into(), "st=0.4".into(), "timemargin=5000".into()]);
    // The bundled engine behind a script that counts its starts.
    let counted = common::script(
        &dir,
        "counted.sh",
        &format!(
            "#!/bin/sh\necho started >> {}/starts.txt\nengine=$1\nshift\nexec \"$engine\" \"$@\"\n",
            state.display()
        ),
        0o755,
    );
    for name in ["first", "second"] {
        args.extend([
            "--engine".into(),
            format!("cmd={counted}"),
            format!("name={name}"),
            format!("dir={}", dir.display()),
            format!("arg={}", bundled_engine()),
            // What the script counts in outlives the engine's private folder.
            common::writable(&state),
        ]);
    }
    args.extend(["--out".into(), dir.join("run").display().to_string()]);
    let mut arbiter = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    if let Some(tmp) = tmp {
        // A temporary folder of its own, as cluster jobs get: the locks are not looked for there.
        let own_tmp = tmp.join("job-tmp");
        std::fs::create_dir_all(&own_tmp).unwrap();
        arbiter
            .env("ARBITER_CPU_LOCKS", tmp.join("arbiter-cpus"))
            .env("TMPDIR", own_tmp);
    }
    let said = dir.join("stdout.txt");
    let mut arbiter = arbiter
        .args(&args)
        .current_dir(&dir)
        .stdout(std::fs::File::create(&said).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let engines = |dir: &Path| -> Vec<PathBuf> {
        processes_in(dir)
            .into_iter()
            .map(|(pid, _)| PathBuf::from(format!("/proc/{pid}")))
            .filter(|p| {
                std::fs::read_to_string(p.join("comm")).is_ok_and(|c| c.trim() == "arbiter-engine")
            })
            .collect()
    };
    let pid = arbiter.id();
    let worker_thread = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .ok()?
            .flatten()
            .map(|t| t.path())
            .find(|t| {
                std::fs::read_to_string(t.join("comm")).is_ok_and(|c| c.trim() == "game worker 1")
            })
    };
    // The engines the start-up check started play the games: they are seen unpinned at first,
    // then on the worker's CPU once it has taken them.
    let started = Instant::now();
    let (referee, engines) = loop {
        let running = engines(&dir);
        let worker = worker_thread();
        if let (Some(worker), 2) = (&worker, running.len()) {
            let referee = scheduling(worker);
            let engines: Vec<(String, String)> = running.iter().map(|p| scheduling(p)).collect();
            let settled = referee.0 == "3" && engines.iter().all(|e| e.1 == referee.1);
            if settled || started.elapsed() > Duration::from_secs(30) {
                break (referee, engines);
            }
        }
        let ended = matches!(arbiter.try_wait(), Ok(Some(_)));
        if ended || started.elapsed() > Duration::from_secs(60) {
            let _ = arbiter.kill();
            let out = arbiter.wait_with_output().unwrap();
            // Its stdout says whether `auto` pinned, and if not why (another program's thread
            // pinned to a CPU, another run's lock).
            let stdout = std::fs::read_to_string(&said).unwrap_or_default();
            panic!(
                "no game worker and two engines seen: {stdout}{}",
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = arbiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(engines.len(), 2, "engines seen: {engines:?}");
    let starts = std::fs::read_to_string(state.join("starts.txt")).unwrap();
    assert_eq!(
        starts.lines().count(),
        2,
        "each engine started once, the start-up check's kept to play"
    );
    (referee, engines)
}

/// With --affinity a game's referee shares one CPU with its engines and, as a batch thread,
/// lets the engine finish its reply before reading it; the engines keep the normal policy.
#[test]
fn with_affinity_the_referee_is_a_batch_thread_on_its_engines_cpu() {
    let _one_at_a_time = one_at_a_time();
    let (referee, engines) = pinned_match("affinity", &["--affinity"]);
    assert_eq!(referee.0, "3", "the referee's policy (3: SCHED_BATCH)");
    assert!(
        referee.1.parse::<usize>().is_ok(),
        "the referee is pinned to one CPU: {}",
        referee.1
    );
    for engine in &engines {
        assert_eq!(
            engine,
            &("0".to_string(), referee.1.clone()),
            "an engine runs under the normal policy on its referee's CPU"
        );
    }
}

/// A list of CPUs (`--affinity=1`, the form fastchess's `-use-affinity 1` is read as) is where
/// the game plays; CPUs arbiter may not use, and lists it cannot read, are refused before
/// anything starts.
#[test]
fn affinity_with_a_list_pins_the_game_to_the_cpus_listed() {
    let _one_at_a_time = one_at_a_time();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    // The last CPU this test may use: with two or more, not the one a game takes first.
    let last = allowed
        .rsplit([',', '-'])
        .next()
        .unwrap()
        .trim()
        .to_string();
    let (referee, engines) = pinned_match("affinity-list", &[&format!("--affinity={last}")]);
    assert_eq!(referee, ("3".to_string(), last.clone()));
    for engine in &engines {
        assert_eq!(engine, &("0".to_string(), last.clone()));
    }
    let dir = engines_dir("affinity-refused");
    for (list, says) in [
        ("99999", "CPU 99999 is not one arbiter may run on"),
        ("2-x", "a list of CPU numbers"),
    ] {
        let mut args = vec![
            "match",
            "--games",
            "2",
            "--affinity",
            list,
            "--each",
            "depth=1",
        ];
        let engine = format!("cmd={}", bundled_engine());
        args.extend(["--engine", &engine, "name=a", "--engine", &engine, "name=b"]);
        let out = arbiter_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(!dir.join("reports").exists(), "nothing written");
    }
}

/// The CPUs this test may use, in order.
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// Holds the lock a run takes on `cpu` under `--affinity auto`, as another run would.
fn hold_cpu(tmp: &Path, cpu: usize) -> std::fs::File {
    let dir = tmp.join("arbiter-cpus");
    std::fs::create_dir_all(&dir).unwrap();
    let file = std::fs::File::create(dir.join(format!("cpu{cpu}"))).unwrap();
    file.try_lock().unwrap();
    file
}

/// Whether a short match of as many games as this test has CPUs (at least 2), run with `extra`
/// flags in `tmp`, says it pinned its games.
fn says_it_pinned(tmp: &Path, extra: &[&str]) -> bool {
    pinned_line(tmp, extra).is_some()
}

/// The line a short match (as `says_it_pinned` plays) printed when it pinned its games. It runs
/// with `--affinity auto` unless `extra` gives its own `--affinity`, or `no-flag` for none.
fn pinned_line(tmp: &Path, extra: &[&str]) -> Option<String> {
    line_starting(tmp, extra, "pinned: ")
}

/// The first line of the match `pinned_line` plays that starts with `prefix`.
fn line_starting(tmp: &Path, extra: &[&str], prefix: &str) -> Option<String> {
    // A folder of its own for each `tmp`: tests calling this run side by side.
    let own = tmp.file_name().unwrap_or_default().to_string_lossy();
    let dir = engines_dir(&format!("line-{own}"));
    let engine = format!("cmd={}", bundled_engine());
    let games = (allowed_cpus().len().max(2).div_ceil(2) * 2).to_string();
    let mut args = vec![
        "match",
        "--games",
        &games,
        "--max-plies",
        "4",
        "--each",
        "depth=1",
    ];
    if !extra.contains(&"--engine") {
        args.extend(["--engine", &engine, "name=a", "--engine", &engine, "name=b"]);
    }
    if !extra.contains(&"--affinity") && !extra.contains(&"no-flag") {
        args.extend(["--affinity", "auto"]);
    }
    args.extend(extra.iter().filter(|a| **a != "no-flag"));
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(&dir)
        .env("ARBITER_CPU_LOCKS", tmp.join("arbiter-cpus"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    said.lines()
        .find(|l| l.starts_with(prefix))
        .map(String::from)
}

/// Cause guarded: the CPU-lock folder lies in /tmp, where anyone may make it first. Root
/// followed another user's links there (`cpu0` -> a file of root's choosing was created), used
/// a folder that was itself a link, and a folder or lock held by someone else silently lost the
/// run its pinning. Now each is refused and the run says why in one line.
#[test]
fn a_lock_folder_another_user_could_steer_is_refused_and_the_run_says_why() {
    let _one_at_a_time = one_at_a_time();
    use std::os::unix::fs::symlink;
    if allowed_cpus().len() < 2 {
        return;
    }
    let unpinned = |tmp: &Path| line_starting(tmp, &[], "not pinned: ");
    // The folder a link to another.
    let tmp = engines_dir("steer-link");
    let elsewhere = tmp.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, tmp.join("arbiter-cpus")).unwrap();
    let said = unpinned(&tmp).expect("a reason");
    assert!(said.contains("is a link"), "{said}");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "wrote through the link"
    );
    // Each lock a link to a file the attacker wants made.
    let tmp = engines_dir("steer-locks");
    let locks = tmp.join("arbiter-cpus");
    std::fs::create_dir_all(&locks).unwrap();
    for cpu in allowed_cpus() {
        symlink(
            tmp.join(format!("PWNED-cpu{cpu}")),
            locks.join(format!("cpu{cpu}")),
        )
        .unwrap();
    }
    let said = unpinned(&tmp).expect("a reason");
    assert!(said.contains("lock"), "{said}");
    let made: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("PWNED"))
        .collect();
    assert!(made.is_empty(), "a lock's link was followed: {made:?}");
    // Every lock held by someone else: said, not silent.
    let tmp = engines_dir("steer-held");
    let locks = tmp.join("arbiter-cpus");
    std::fs::create_dir_all(&locks).unwrap();
    let held: Vec<std::fs::File> = allowed_cpus()
        .iter()
        .map(|cpu| {
            let file = std::fs::File::create(locks.join(format!("cpu{cpu}"))).unwrap();
            file.lock().unwrap();
            file
        })
        .collect();
    let said = unpinned(&tmp).expect("a reason");
    assert!(said.contains("held by another run"), "{said}");
    drop(held);
    // A folder of another user's (run as root: the engines' user stands in for them).
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let tmp = engines_dir("steer-owner");
        let locks = tmp.join("arbiter-cpus");
        std::fs::create_dir_all(&locks).unwrap();
        std::os::unix::fs::chown(&locks, Some(65534), Some(65534)).unwrap();
        let said = unpinned(&tmp).expect("a reason");
        assert!(said.contains("belongs to another user"), "{said}");
    }
}

/// With `--affinity auto` a game is pinned with its engines to a CPU when that takes nothing
/// from anyone: a CPU another run holds is passed over, one CPU is always left over, and an
/// engine that searches with several threads leaves the game to the scheduler, as a run with
/// `--affinity off` does. `auto` is the default.
#[test]
#[ignore = "needs a machine no other work keeps busy (a minute's load average under its CPUs), \
            which the tests before it do not leave: .ci/run runs it alone"]
fn auto_affinity_pins_a_game_to_a_cpu_no_other_run_holds_when_one_is_spare() {
    let _one_at_a_time = one_at_a_time();
    let tmp = engines_dir("auto-affinity-tmp");
    let cpus = allowed_cpus();
    assert!(!cpus.is_empty());
    if cpus.len() < 2 {
        // No CPU to spare: never pinned.
        assert!(!says_it_pinned(&tmp, &[]));
        return;
    }
    let last = *cpus.last().unwrap();
    let next = cpus[cpus.len() - 2];
    // `auto` never pins on a machine busy with other work (the run says so and plays
    // unpinned); the tests run before this one leave the load average high for a minute.
    wait_for_load_below(cpus.len() as f64 - 0.5, Duration::from_secs(150));
    let (referee, engines) = pinned_match_in("auto-affinity", &["--affinity", "auto"], Some(&tmp));
    assert_eq!(referee, ("3".to_string(), last.to_string()), "the referee");
    for engine in &engines {
        assert_eq!(engine, &("0".to_string(), last.to_string()));
    }
    {
        // Another run holds the last CPU: the next is taken only if one more is left over.
        let _other_run = hold_cpu(&tmp, last);
        let line = pinned_line(&tmp, &[]);
        match cpus.len() {
            2 => assert_eq!(line, None, "no CPU would be left to anyone else"),
            _ => assert!(
                line.as_ref()
                    .is_some_and(|l| l.contains(&format!("(CPU {next})"))),
                "{line:?}"
            ),
        }
    }
    // Each run that should pin waits, as the first did, for a machine not busy with other work.
    let quiet = || wait_for_load_below(cpus.len() as f64 - 0.5, Duration::from_secs(150));
    quiet();
    assert!(says_it_pinned(&tmp, &[]), "a free CPU is taken and said");
    assert!(!says_it_pinned(&tmp, &["--affinity", "off"]));
    quiet();
    assert!(says_it_pinned(&tmp, &["no-flag"]), "auto is the default");
    assert!(!says_it_pinned(&tmp, &["--each", "threads=2"]));
    // An engine that searches with two threads unless told otherwise (as Lc0 offers it).
    let two_threads = common::script(
        &tmp,
        "two-threads.sh",
        &format!(
            "#!/bin/sh\n{} | sed -u 's/^uciok$/option name Threads type spin default 2 min 1 max \
                8\\nuciok/'\n",
            bundled_engine()
        ),
        0o755,
    );
    let engine = format!("cmd={two_threads}");
    let offers_two = ["--engine", &engine, "name=a", "--engine", &engine, "name=b"];
    assert!(!says_it_pinned(&tmp, &offers_two));
    let told_one = [&offers_two[..], &["--each", "option.Threads=1"]].concat();
    quiet();
    assert!(says_it_pinned(&tmp, &told_one), "told to search with one");
    let concurrency = cpus.len().to_string();
    assert!(
        !says_it_pinned(&tmp, &["--concurrency", &concurrency]),
        "no CPU left over"
    );
    let _held: Vec<_> = cpus.iter().map(|&c| hold_cpu(&tmp, c)).collect();
    assert!(
        !says_it_pinned(&tmp, &[]),
        "every CPU is held by other runs"
    );
}

/// A run pinned by `--affinity` holds its CPU while it plays: a run started beside it by default
/// takes another.
#[test]
fn a_run_pinned_by_hand_keeps_auto_runs_off_its_cpu() {
    let _one_at_a_time = one_at_a_time();
    let cpus = allowed_cpus();
    let tmp = engines_dir("held-by-hand-tmp");
    let dir = engines_dir("held-by-hand");
    let last = *cpus.last().unwrap();
    let engine = format!("cmd={}", bundled_engine());
    let pinned = format!("--affinity={last}");
    let mut by_hand = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            "--games",
            "2",
            "--max-plies",
            "20",
            "--quiet",
            &pinned,
        ])
        .args([
            "--each", "st=0.2", "--engine", &engine, "name=a", "--engine", &engine,
        ])
        .args(["name=b"])
        .current_dir(&dir)
        .env("ARBITER_CPU_LOCKS", tmp.join("arbiter-cpus"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lock = tmp.join("arbiter-cpus").join(format!("cpu{last}"));
    let started = Instant::now();
    let held = loop {
        let held = std::fs::File::open(&lock).is_ok_and(|f| f.try_lock().is_err());
        if held || started.elapsed() > Duration::from_secs(30) {
            break held;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let beside = pinned_line(&tmp, &[]);
    let still_playing = by_hand.try_wait().unwrap().is_none();
    let out = by_hand.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(held, "the run pinned by hand holds the lock of CPU {last}");
    assert!(still_playing, "the run beside it ran while it played");
    match beside {
        // With two CPUs, the one left is not spare.
        None => assert!(cpus.len() <= 2, "the run beside it takes a free CPU"),
        Some(line) => assert!(
            !line.contains(&format!("CPU {last})")),
            "the run beside it keeps off CPU {last}: {line}"
        ),
    }
}

/// Cause guarded: without a control group (a user who may make none, `sandbox=off`), an engine
/// that killed its own keeper with SIGKILL left a child in a session of its own running under
/// init after the run. Run as `nobody` when the test runs as root, so that arbiter may make no
/// control group.
#[test]
fn an_engine_that_kills_its_keeper_leaves_nothing_running_without_a_control_group() {
    let _one_at_a_time = one_at_a_time();
    use std::os::unix::fs::PermissionsExt;
    let dir = engines_dir("keeper-killer");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Both programs beside the scripts: `nobody` cannot reach a checkout under a 0700 folder.
    let engine = dir.join("engine");
    std::fs::copy(bundled_engine(), &engine).unwrap();
    let arbiter = dir.join("arbiter");
    std::fs::copy(env!("CARGO_BIN_EXE_arbiter"), &arbiter).unwrap();
    common::script(
        &dir,
        "killer",
        "#!/bin/bash\nkeeper=$PPID\n( sleep 0.5; setsid sleep 1000 < /dev/null > /dev/null 2>&1 & \
            sleep 0.2; kill -9 $keeper ) &\nexec ./engine \"$@\"\n",
        0o755,
    );
    let args = [
        "match",
        "--games",
        "2",
        "--each",
        "st=0.2",
        "sandbox=off",
        "timemargin=10000",
        "--quiet",
        "--engine",
        "cmd=./killer",
        "name=killer",
        "--engine",
        "cmd=./engine",
        "name=fair",
        "--out",
        "run",
    ];
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&arbiter);
        c
    } else {
        Command::new(&arbiter)
    };
    let out = command
        .args(args)
        .current_dir(&dir)
        .env("HOME", &dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    assert!(
        journal.contains("crash"),
        "the keeper was never killed: {journal}"
    );
    assert_eq!(gone(&dir), Vec::new(), "outlived the run");
}

/// Processes kept busy for as long as this lives: other work on the machine.
struct BusyLoops(Vec<std::process::Child>);

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The session (field 6 of /proc/PID/stat) and v1 CPU control group (`None` under cgroup v2
/// alone) of a process.
fn session_and_cpu_group(proc: &Path) -> (String, Option<String>) {
    let stat = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
    // The name, field 2, is in parentheses and may hold spaces: count after it.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let session = after_name
        .split_whitespace()
        .nth(3)
        .unwrap_or("")
        .to_string();
    (session, v1_group(proc, "cpu"))
}

/// The path of a process's group in the cgroup v1 hierarchy of `controller` (`None` under
/// cgroup v2 alone), as /proc/PID/cgroup gives it.
fn v1_group(proc: &Path, controller: &str) -> Option<String> {
    let groups = std::fs::read_to_string(proc.join("cgroup")).unwrap_or_default();
    groups.lines().find_map(|l| {
        let mut fields = l.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_string())
    })
}

/// Cause guarded: on a machine busy with other work, an engine in a scheduling group of its
/// own (its CPU control group, or the autogroup of a session of its own) was woken late on its
/// turn and lost on time, where the same engine run as a plain process did not (3 – 6 of 10
/// games against 0 – 1). Here other work keeps every CPU busy before a clocked match starts:
/// its engines run in arbiter's own session and CPU group, and the run says so.
#[test]
fn on_a_busy_machine_engines_are_plain_processes() {
    let _one = one_at_a_time();
    let dir = engines_dir("busy");
    let _busy = BusyLoops(
        (0..allowed_cpus().len() + 2)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let engine = format!("cmd={}", bundled_engine());
    let place = format!("dir={}", dir.display());
    let arbiter = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--games", "2", "--max-plies", "20", "--quiet"])
        .args(["--each", "tc=4+0.05", &place])
        .args(["--engine", &engine, "name=a", "--engine", &engine, "name=b"])
        .args(["--affinity", "off", "--out", "run"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let own = session_and_cpu_group(Path::new(&format!("/proc/{}", arbiter.id())));
    let started = Instant::now();
    // The start-up check's engines are seen first, then moved by the run that adopts them.
    let mut seen = Vec::new();
    while started.elapsed() < Duration::from_secs(30) {
        seen = processes_in(&dir)
            .into_iter()
            .map(|(pid, _)| PathBuf::from(format!("/proc/{pid}")))
            .filter(|p| {
                std::fs::read_to_string(p.join("comm")).is_ok_and(|c| c.trim() == "arbiter-engine")
            })
            .map(|p| session_and_cpu_group(&p))
            .filter(|(session, _)| !session.is_empty())
            .collect();
        if seen.len() == 2 && seen.iter().all(|e| e == &own) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = arbiter.wait_with_output().unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("compete for the CPUs as plain processes"),
        "the run does not say how its engines are scheduled: {said}"
    );
    assert!(!said.contains("freeze=on"), "{said}");
    // Engines set freeze=on stay frozen whatever the load, and the line does not say otherwise.
    let frozen = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["match", "--games", "2", "--max-plies", "4", "--quiet"])
        .args(["--each", "tc=4+0.05", "freeze=on", &place])
        .args(["--engine", &engine, "name=a", "--engine", &engine, "name=b"])
        .args(["--affinity", "off", "--out", "run-frozen"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let frozen_said = stderr(&frozen);
    assert_eq!(frozen.status.code(), Some(0), "{frozen_said}");
    assert!(
        frozen_said.contains(
            "not frozen between their turns in this run (but those set freeze=on or freeze=watch)"
        ),
        "{frozen_said}"
    );
    assert_eq!(seen.len(), 2, "engines seen: {seen:?}");
    for engine in &seen {
        assert_eq!(
            engine, &own,
            "an engine's session and CPU group against arbiter's"
        );
    }
}

/// Two bundled engines playing 2 games of `plies` in `dir` with `each` for both, stderr piped.
fn bundled_match(dir: &Path, plies: &str, each: &[&str]) -> std::process::Child {
    let engine = |name: &str| {
        [
            "--engine".to_string(),
            format!("cmd={}", bundled_engine()),
            format!("name={name}"),
        ]
    };
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            "--games",
            "2",
            "--max-plies",
            plies,
            "--quiet",
            "--each",
        ])
        .args(each)
        .args(engine("a"))
        .args(engine("b"))
        .arg("--out")
        .arg(dir.join("run"))
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The folder of this process's own group in the cgroup v1 freezer hierarchy, where arbiter
/// makes its engines' freezers; `None` where there is none (cgroup v2 alone).
fn own_v1_freezer() -> Option<PathBuf> {
    let path = v1_group(Path::new("/proc/self"), "freezer")?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut right = right.split(' ');
        let (fstype, _, options) = (right.next()?, right.next()?, right.next()?);
        if fstype != "cgroup" || !options.split(',').any(|o| o == "freezer") {
            return None;
        }
        let fields: Vec<&str> = left.split(' ').collect();
        let (root, mountpoint) = (fields.get(3)?, fields.get(4)?);
        let inside = path.strip_prefix(root.trim_end_matches('/'))?;
        Some(Path::new(mountpoint).join(inside.trim_start_matches('/')))
    })
}

/// Cause guarded: cgroup v1 turns a kernel-wide switch on when a group starts freezing and off
/// when the last one thaws, patching the kernel's code while every CPU waits; an engine frozen
/// and thawed every ply flipped it twice a ply. A run that freezes holds one empty group of its
/// own frozen while it runs (so the switch stays on), and leaves none behind.
#[test]
fn a_run_holds_the_freezing_switch_on_with_one_frozen_group_and_leaves_none() {
    let _one = one_at_a_time();
    let Some(freezer) = own_v1_freezer() else {
        eprintln!("no cgroup v1 freezer on this machine: cgroup v2 has no such switch");
        return;
    };
    let dir = engines_dir("hold");
    // Frozen whatever the machine's load: a busy machine's runs freeze nothing.
    let mut child = bundled_match(&dir, "8", &["st=0.2", "freeze=on"]);
    let hold = freezer.join(format!("arbiter-{}-hold", child.id()));
    let mut seen_frozen = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let state = std::fs::read_to_string(hold.join("freezer.state")).unwrap_or_default();
        seen_frozen |= state.trim() == "FROZEN";
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(
        seen_frozen,
        "no frozen {} while the run played",
        hold.display()
    );
    assert!(!hold.exists(), "{} outlived the run", hold.display());
    // Only the run's own: no other group of it is left either.
    let prefix = format!("arbiter-{}-", child.id());
    let left: Vec<String> = std::fs::read_dir(&freezer)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// Cause guarded: freezing an engine that thinks costs each of its opponent's threads two
/// wake-ups a ply (stockfish at `tc=1+0.01` on an idle machine: most of the referee's CPU), for
/// nothing where the opponent uses no CPU off its turn. Watched (the default), an engine that
/// rests between its turns is frozen only while it waits for its first turn, never after; set
/// `freeze=on`, the same engines are frozen on each turn of their opponent's.
#[test]
fn a_watched_engine_that_rests_off_its_turn_is_never_frozen_there() {
    let _one = one_at_a_time();
    let Some(freezer) = own_v1_freezer() else {
        eprintln!("no cgroup v1 freezer on this machine: the v2 freezer is tested in cheaters.rs");
        return;
    };
    let refrozen = |freeze: &str| -> Vec<String> {
        let dir = engines_dir(&format!("watched-{freeze}"));
        // Thinking past the 5 ms grace, whatever the machine's load.
        let mut child = bundled_match(&dir, "12", &["st=0.04", &format!("freeze={freeze}")]);
        let prefix = format!("arbiter-{}-", child.id());
        let hold = format!("{prefix}hold");
        // Each engine group's states as sampled, in order.
        let mut states: std::collections::BTreeMap<String, Vec<bool>> = Default::default();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            for entry in std::fs::read_dir(&freezer).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.starts_with(&prefix) || name == hold {
                    continue;
                }
                let state = std::fs::read_to_string(entry.path().join("freezer.state"));
                if let Ok(state) = state {
                    let frozen = state.trim() != "THAWED";
                    let seen = states.entry(name).or_default();
                    if seen.last() != Some(&frozen) {
                        seen.push(frozen);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(status.success(), "{err}");
        assert!(states.len() >= 2, "no engine group seen: {states:?}");
        assert!(!err.contains("frozen: "), "{err}");
        // Frozen more than once: on a turn of its opponent's (the once is while it waits for
        // its first turn, after the start-up check).
        eprintln!("freeze={freeze}: {states:?}");
        states
            .into_iter()
            .filter(|(_, seen)| seen.iter().filter(|f| **f).count() > 1)
            .map(|(name, _)| name)
            .collect()
    };
    assert_eq!(refrozen("watch"), Vec::<String>::new());
    assert!(!refrozen("on").is_empty(), "freeze=on froze no engine");
}

/// The parent of a process, from `/proc/<pid>/status`.
fn parent_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|p| p.trim().parse().ok())
}

/// Cause guarded: each engine's keeper (a fork of arbiter that never execs) carried arbiter's
/// whole command line, so `ps` and `pgrep -f 'arbiter tournament'` took it for a second copy of
/// the run. It names itself after what it keeps.
#[test]
fn each_keeper_is_named_for_the_engine_it_keeps() {
    let _one_at_a_time = one_at_a_time();
    let dir = engines_dir("keeper-names");
    let mut args: Vec<String> = [
        "tournament",
        "--rounds",
        "100",
        "--each",
        "tc=10+0.1",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    args.extend(faulty(&dir, "north", "none"));
    args.extend(faulty(&dir, "south", "none"));
    args.extend(["--out".into(), dir.join("run").display().to_string()]);
    let mut arbiter = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let keepers = || {
        let mut names: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
            .filter(|&pid| parent_of(pid) == Some(arbiter.id()))
            .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .trim_end_matches('\0')
                    .to_string()
            })
            .collect();
        names.sort();
        names
    };
    let started = Instant::now();
    let want = vec!["arbiter-keeper north", "arbiter-keeper south"];
    while keepers() != want && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = keepers();
    arbiter.kill().unwrap();
    let _ = arbiter.wait();
    assert_eq!(seen, want);
    assert_eq!(gone(&dir), Vec::new(), "outlived arbiter");
}
