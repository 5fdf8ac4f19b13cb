//! A broken set-up never yields a result: engines that cannot start, unwritable outputs and
//! contradictory resumes are refused before anything is written (exit 2), and an engine that
//! stops starting during a run stops the run (exit 4) instead of losing games it never played.
//! Every case runs the real `arbiter` binary against real files and processes.

use crate::common;

use common::{arbiter_in, bundled_engine, scratch, script, stderr, stdout};
use std::path::Path;

/// Every file under `dir`, except the ones the test itself put there.
fn written(dir: &Path, own: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !own.contains(&name.as_str()) {
            found.push(name);
        }
    }
    found
}

#[test]
fn an_engine_that_cannot_start_is_refused_before_any_game() {
    let dir = scratch("setup", "start");
    let not_executable = script(&dir, "engine.sh", "#!/bin/sh\nexit 0\n", 0o644);
    let good = format!("cmd={}", bundled_engine());
    let cases = [
        (
            format!("cmd={not_executable}"),
            "leiserchess",
            "Permission denied",
        ),
        (
            "cmd=/bin/true".to_string(),
            "leiserchess",
            "exited during the handshake",
        ),
        (
            format!("cmd={} proto=leiserchess", bundled_engine()),
            "ultima",
            "cannot play ultima",
        ),
    ];
    for (bad, game, expected) in cases {
        for sprt in [false, true] {
            let mut args = vec!["match", "--game", game, "--games", "10"];
            args.extend(["--engine", "name=broken"]);
            args.extend(bad.split(' '));
            args.extend(["--engine", &good, "name=good", "--each", "depth=1"]);
            if sprt {
                args.extend(["--sprt", "elo0=0", "elo1=5"]);
            }
            let out = arbiter_in(&dir, &args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{bad}: {err}{}", stdout(&out));
            assert!(
                err.contains("'broken'") && err.contains(expected),
                "{bad}: {err}"
            );
            assert_eq!(written(&dir, &["engine.sh"]), Vec::<String>::new(), "{bad}");
        }
    }
}

#[test]
fn outputs_are_checked_before_the_first_game() {
    let dir = scratch("setup", "outputs");
    let e = format!("cmd={}", bundled_engine());
    std::fs::write(dir.join("afile"), "").unwrap();
    for (flag, path, expected) in [
        ("--pgnout", "afile/games.pgn", "afile is a file"),
        ("--log", "afile/deeper/io.log", "afile is a file"),
        (
            "--log",
            "/proc/arbiter-cannot-write-here.log",
            "cannot write",
        ),
        ("--pgnout", ".", "is a folder"),
    ] {
        let args = [
            "match", "--games", "2", "--engine", &e, "name=a", "--engine", &e, "name=b", "--each",
            "depth=1", flag, path,
        ];
        let out = arbiter_in(&dir, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag} {path}: {err}");
        assert!(err.contains(flag) && err.contains(expected), "{err}");
        assert_eq!(
            written(&dir, &["afile"]),
            Vec::<String>::new(),
            "{flag} {path}"
        );
    }
}

/// `-pgnout file=./games/x.pgn` into a folder not there yet: made when the run starts, as a
/// cutechess-cli or fastchess user expects, and the games land in it.
#[test]
fn output_folders_that_do_not_exist_are_made() {
    let dir = scratch("setup", "mkdir");
    let e = format!("cmd={}", bundled_engine());
    let args = [
        "-engine",
        &e,
        "name=a",
        "-engine",
        &e,
        "name=b",
        "-each",
        "depth=1",
        "-games",
        "2",
        "-variant",
        "ultima",
        "-pgnout",
        "file=./games/sub/x.pgn",
        "-log",
        "file=logs/io.log",
    ];
    let out = arbiter_in(&dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pgn = std::fs::read_to_string(dir.join("games/sub/x.pgn")).unwrap();
    // fastchess's reading (its -log file=): -games 2 with its default -rounds 2.
    assert_eq!(pgn.matches("[Event ").count(), 4, "{pgn}");
    assert!(
        stdout(&out).contains("read as a fastchess command line"),
        "{}",
        stdout(&out)
    );
    assert!(dir.join("logs/io.log").is_file());
}

#[test]
fn resume_refuses_flags_it_would_ignore() {
    let dir = scratch("setup", "resume");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(
        &dir,
        &[
            "tournament",
            "--rounds",
            "1",
            "--engine",
            &e,
            "name=a",
            "--engine",
            &e,
            "name=b",
            "--each",
            "depth=1",
            "--out",
            "run",
            "--quiet",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    for extra in [&["--rounds", "5"][..], &["--each", "tc=10+0.1"]] {
        let mut args = vec!["tournament", "--resume", "run"];
        args.extend(extra);
        let out = arbiter_in(&dir, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(extra[0]) && err.contains("cannot be changed"),
            "{err}"
        );
    }
    // Allowed: how, not what.
    let out = arbiter_in(
        &dir,
        &[
            "tournament",
            "--resume",
            "run",
            "--quiet",
            "--concurrency",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap(),
        journal
    );
}

#[test]
fn an_engine_that_stops_starting_mid_run_stops_the_run_without_a_verdict() {
    let dir = scratch("setup", "midrun");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    // Start 1 works: the start-up check, whose process then plays the first game and crashes
    // after two moves. Every later start fails. The crash is a real loss; the starts that fail
    // are not.
    let flaky = script(
        &dir,
        "flaky.sh",
        &format!(
            "#!/bin/sh\nn=$(cat {state}/starts 2>/dev/null || echo 0)\necho $((n + 1)) > \
                {state}/starts\n\
             [ \"$n\" -ge 1 ] && exit 1\nexec {} --fault crash --fault-after 2\n",
            bundled_engine(),
            state = state.display(),
        ),
        0o755,
    );
    let good = format!("cmd={}", bundled_engine());
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--games",
            "20",
            "--engine",
            &format!("cmd={flaky}"),
            "name=flaky",
            &format!("dir={}", dir.display()),
            // The program the script runs, for the engine's sandbox.
            &format!("readable={}", bundled_engine()),
            // Where it counts its starts: what it writes elsewhere is its process's alone.
            &common::writable(&state),
            "--engine",
            &good,
            "name=good",
            "--each",
            "depth=1",
            "--out",
            "run",
            "--sprt",
            "elo0=0",
            "elo1=5",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}{}", stdout(&out));
    assert!(
        err.contains("'flaky' could not start") && err.contains("3 times in a row"),
        "{err}"
    );
    assert!(err.contains("--resume run"), "{err}");
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    assert_eq!(
        journal.lines().count(),
        1,
        "only the game really played counts"
    );
    assert!(journal.contains("engine crash"), "{journal}");
    assert!(
        dir.join("run/report.html").is_file(),
        "the finished game is reported"
    );
}

/// An engine started through a wrapper script in a folder of its own, as course players are:
/// the program the script names is shown to it in its sandbox. One whose program cannot be
/// read from the script fails at the start, and the error and `--log` carry what it said on
/// stderr and how to let it see the program.
#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn a_wrapper_script_runs_its_program_and_one_that_cannot_says_why() {
    common::needs_bubblewrap();
    let dir = scratch("setup", "wrapper");
    let (bin, work) = (dir.join("player"), dir.join("work"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let engine = bundled_engine();
    let named = script(
        &bin,
        "run.sh",
        &format!("#!/bin/sh\nexec {engine} \"$@\"\n"),
        0o755,
    );
    std::fs::write(bin.join("where"), &engine).unwrap();
    let unnamed = script(
        &bin,
        "indirect.sh",
        &format!("#!/bin/sh\nexec $(cat {}/where) \"$@\"\n", bin.display()),
        0o755,
    );
    let play = |wrapper: &str, readable: &str| {
        arbiter_in(
            &work,
            &[
                "match",
                "--games",
                "2",
                "--max-plies",
                "20",
                "--log",
                "io.log",
                "--engine",
                &format!("cmd={wrapper}"),
                "name=wrapped",
                "sandbox=on",
                readable,
                "--engine",
                &format!("cmd={engine}"),
                "name=plain",
                "--each",
                "depth=1",
            ],
        )
    };
    let out = play(&named, "sandbox=on");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = play(&unnamed, "sandbox=on");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Its last words on stderr:"), "{err}");
    assert!(err.contains("not found"), "{err}");
    assert!(err.contains("readable=PATH"), "{err}");
    let log = std::fs::read_to_string(work.join("io.log")).unwrap();
    assert!(
        log.contains("wrapped ! ") && log.contains("not found"),
        "{log}"
    );
    // Named with readable=, the program is there.
    let out = play(&unnamed, &format!("readable={engine}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
