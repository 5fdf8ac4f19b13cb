//! Engines started the ways their users start them, each in the default sandbox: a shell script
//! that runs a program elsewhere, a program lying straight in /tmp, a Python engine in a virtual
//! environment, a Java jar, `nice` and `taskset` in front of the engine; and a wrapper that cannot
//! start, whose error names what it could not see and the setting that shows it.

use crate::common;

use common::{bundled_engine, scratch, script, stderr, stdout};
use std::process::{Command, Output};

/// One game of `engine` (its settings) against the bundled engine, sandboxed, in `dir`.
fn one_game(dir: &std::path::Path, engine: &[String]) -> Output {
    // Each engine's game in a folder named after it.
    let name = engine
        .iter()
        .find_map(|e| e.strip_prefix("name="))
        .unwrap_or("run");
    let mut args: Vec<String> = ["match", "--games", "1", "--each", "depth=1", "--out"]
        .map(String::from)
        .to_vec();
    args.push(format!("run-{name}-{}", engine.len()));
    args.push("--engine".into());
    args.extend(engine.iter().cloned());
    args.push("sandbox=on".into());
    args.extend([
        "--engine".into(),
        format!("cmd={}", bundled_engine()),
        "name=plain".into(),
    ]);
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn played(out: &Output, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: {}{}",
        stdout(out),
        stderr(out)
    );
    assert!(stdout(out).contains("1 games"), "{what}: {}", stdout(out));
}

#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn wrapper_and_interpreter_engines_start_in_the_sandbox() {
    common::needs_bubblewrap();
    let dir = scratch("wrappers", "kinds");
    // A program in a folder of its own, elsewhere, run by a two-line wrapper.
    let elsewhere = scratch("wrappers", "programs");
    let program = elsewhere.join("arbiter-engine");
    std::fs::copy(bundled_engine(), &program).unwrap();
    let wrapper = script(
        &dir,
        "wrapper.sh",
        &format!("#!/bin/sh\nexec {} \"$@\"\n", program.display()),
        0o755,
    );
    played(
        &one_game(&dir, &[format!("cmd={wrapper}"), "name=wrapped".into()]),
        "a wrapper of a program elsewhere",
    );
    // A program lying straight in /tmp: given alone, not with the whole of /tmp.
    let loose = std::env::temp_dir().join(format!("arbiter-engine-loose-{}", std::process::id()));
    let neighbour = std::env::temp_dir().join(format!("arbiter-neighbour-{}", std::process::id()));
    std::fs::copy(bundled_engine(), &loose).unwrap();
    std::fs::write(&neighbour, "another user's file").unwrap();
    // Seeing the file beside its program ends the engine, and the test with it.
    let wrapper = script(
        &dir,
        "loose.sh",
        &format!(
            "#!/bin/sh\n[ -e {} ] && exit 3\nexec {} \"$@\"\n",
            neighbour.display(),
            loose.display()
        ),
        0o755,
    );
    let out = one_game(&dir, &[format!("cmd={wrapper}"), "name=loose".into()]);
    std::fs::remove_file(&loose).unwrap();
    std::fs::remove_file(&neighbour).unwrap();
    played(&out, "a wrapper of a program in /tmp");
    // Python in a virtual environment, the engine it runs named in its text.
    let venv = dir.join("venv");
    let made = Command::new("/usr/bin/python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("Debian's python3 makes a virtual environment");
    assert!(made.success());
    let python = script(
        &dir,
        "engine.py",
        &format!(
            "#!{}/bin/python3\nimport os, sys\nassert sys.prefix != sys.base_prefix, 'not in its \
                venv'\nos.execv('{e}', ['{e}'] + sys.argv[1:])\n",
            venv.display(),
            e = program.display()
        ),
        0o755,
    );
    played(
        &one_game(&dir, &[format!("cmd={python}"), "name=python".into()]),
        "a Python engine in a virtual environment",
    );
    // `nice` in front of the engine, as a command line's words.
    played(
        &one_game(
            &dir,
            &[
                "cmd=nice".into(),
                "arg=-n".into(),
                "arg=5".into(),
                format!("arg={}", program.display()),
                "name=niced".into(),
            ],
        ),
        "nice in front of the engine",
    );
    // `taskset` in front of it, as users keep an engine off the CPUs other work uses.
    played(
        &one_game(
            &dir,
            &[
                "cmd=taskset".into(),
                "arg=-c".into(),
                "arg=0".into(),
                format!("arg={}", program.display()),
                "name=tasksetted".into(),
            ],
        ),
        "taskset in front of the engine",
    );
}

/// A Java engine as users start one: `java -D...=PATH -jar engine.jar`, the jar running a
/// program elsewhere that it is told of by a system property (as GUI-launched Java fronts are).
/// The JDK (`javac`, `jar`) builds the jar here; `.ci/run` installs it.
#[test]
#[ignore = "needs a JDK: .ci/run installs default-jdk-headless and runs this with --ignored"]
fn a_java_jar_starts_in_the_sandbox() {
    let dir = scratch("wrappers", "java");
    let elsewhere = scratch("wrappers", "java-program");
    let program = elsewhere.join("arbiter-engine");
    std::fs::copy(bundled_engine(), &program).unwrap();
    let jar_dir = scratch("wrappers", "java-jar");
    std::fs::write(
        jar_dir.join("Engine.java"),
        "public class Engine { public static void main(String[] a) throws Exception {\n\
         Process p = new ProcessBuilder(System.getProperty(\"engine.program\")).inheritIO().start();\n\
         System.exit(p.waitFor()); } }\n",
    )
    .unwrap();
    std::fs::write(jar_dir.join("manifest.txt"), "Main-Class: Engine\n").unwrap();
    for (tool, args) in [
        ("javac", vec!["-d", ".", "Engine.java"]),
        (
            "jar",
            vec!["cfm", "engine.jar", "manifest.txt", "Engine.class"],
        ),
    ] {
        let made = Command::new(tool)
            .args(&args)
            .current_dir(&jar_dir)
            .status()
            .unwrap_or_else(|e| panic!("{tool} (Debian's default-jdk-headless) runs: {e}"));
        assert!(made.success(), "{tool} {args:?}");
    }
    played(
        &one_game(
            &dir,
            &[
                "cmd=java".into(),
                format!("arg=-Dengine.program={}", program.display()),
                "arg=-jar".into(),
                format!("arg={}", jar_dir.join("engine.jar").display()),
                "name=java".into(),
            ],
        ),
        "a Java jar",
    );
}

#[test]
#[ignore = "needs bubblewrap: .ci/run installs it and runs this with --ignored"]
fn a_wrapper_that_cannot_see_its_program_says_which_and_how_to_show_it() {
    common::needs_bubblewrap();
    let dir = scratch("wrappers", "unseen");
    let elsewhere = scratch("wrappers", "hidden-program");
    let program = elsewhere.join("arbiter-engine");
    std::fs::copy(bundled_engine(), &program).unwrap();
    // The folder is computed at run time: no text names it.
    let wrapper = script(
        &dir,
        "computed.sh",
        "#!/bin/sh\necho \"starting $ENGINE_HOME/arbiter-engine\" >&2\nexec \
            \"$ENGINE_HOME/arbiter-engine\" \"$@\"\n",
        0o755,
    );
    let engine = |extra: Option<String>| {
        let mut e = vec![
            format!("cmd={wrapper}"),
            "name=computed".into(),
            format!("env.ENGINE_HOME={}", elsewhere.display()),
        ];
        e.extend(extra);
        e
    };
    let out = one_game(&dir, &engine(None));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("readable="), "names the setting: {said}");
    assert!(
        said.contains("starting "),
        "shows the engine's stderr: {said}"
    );
    played(
        &one_game(
            &dir,
            &engine(Some(format!("readable={}", elsewhere.display()))),
        ),
        "with readable=",
    );
}

/// An engine that takes 90 ms to set up each position it is given (a wrapper that sleeps on
/// every `position` line before passing it on), on the clock: it reads its position and
/// answers `isready` before its `go` is written, so that setting up is the referee's time, not
/// the engine's. Charged from one write of `position` and `go`, as before, each of its moves
/// would cost it 90 ms and more, and 1 s would not last the game.
#[test]
fn an_engine_sets_up_its_position_off_its_own_clock() {
    let dir = scratch("wrappers", "slow-position");
    // A copy beside the wrapper: the sandbox, where there is one, hides the build's folder.
    let engine = dir.join("arbiter-engine");
    std::fs::copy(bundled_engine(), &engine).unwrap();
    let slow = script(
        &dir,
        "slow.sh",
        &format!(
            "#!/bin/bash\n{{ while IFS= read -r l; do case $l in position*) sleep 0.09 ;; esac; \
             printf '%s\\n' \"$l\"; done; }} | exec {}\n",
            engine.display()
        ),
        0o755,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match",
            "--games",
            "1",
            "--no-book",
            "--each",
            "tc=1+0",
            "depth=1",
        ])
        .args(["--engine", &format!("cmd={slow}"), "name=slow"])
        .args([
            "--engine",
            &format!("cmd={}", engine.display()),
            "name=plain",
        ])
        .args(["--out", "run"])
        .current_dir(&dir)
        .output()
        .unwrap();
    played(&out, "an engine slow to set up its position");
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    let mut slow_moves = Vec::new();
    for line in journal.lines() {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(record) = entry.get("record") else {
            continue;
        };
        assert_ne!(record["termination"], "time forfeit", "{line}");
        // The slow engine's plies: White's when it is White, Black's otherwise.
        let first = usize::from(record["white"] != "slow");
        let moves = record["moves"].as_str().unwrap();
        for word in moves.split_whitespace().skip(first).step_by(2) {
            let us: u64 = word
                .split_once('@')
                .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{word}"));
            slow_moves.push(us);
        }
    }
    assert!(slow_moves.len() >= 4, "{journal}");
    slow_moves.sort_unstable();
    let median = slow_moves[slow_moves.len() / 2];
    assert!(
        median < 45_000,
        "the slow engine was charged a median {median} us a move: {slow_moves:?}"
    );
}
