//! Engines laid out as users lay them out, each playing its games in the sandbox: a working
//! folder `mktemp -d` made (mode 0700), a checkout under a 0700 home, engines side by side in
//! `./bins/` and `./builds/v1..v8`, a script reading a file beside it, an engine straight in
//! `/tmp` beside another user's private folders, a virtual environment, a program on `PATH`, a
//! path with `..`, a link to the program, `dir=` with a relative `cmd=`, and a folder whose name
//! has spaces.
//!
//! Run by root (whose engines run as nobody) and by a normal user: CI runs this file both ways.
//! Where bubblewrap is missing the engines run as plain processes and the layouts still play.
//!
//! `ARBITER_BIN` names the arbiter to run, for a normal user who cannot reach the build folder
//! (CI copies the binaries out for that user); by default the one this `cargo test` built.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn arbiter_bin() -> PathBuf {
    std::env::var_os("ARBITER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_arbiter")))
}

fn bundled_engine() -> PathBuf {
    arbiter_bin().with_file_name("arbiter-engine")
}

/// A folder of this test's own under the temporary folder, with `mode`; removed on drop unless
/// the test fails.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str, mode: u32) -> Folder {
        let path =
            std::env::temp_dir().join(format!("arbiter-layout-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        set_mode(&path, mode);
        Folder(path.canonicalize().unwrap())
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mkdir(path: &Path, mode: u32) {
    std::fs::create_dir_all(path).unwrap();
    set_mode(path, mode);
}

fn copy_engine(to: &Path) {
    std::fs::copy(bundled_engine(), to).unwrap();
    set_mode(to, 0o755);
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    set_mode(path, 0o755);
}

/// One game each way between `first` and `second` (`--engine` settings), run in `dir` with
/// `path` as the `PATH` when given.
fn play(dir: &Path, first: &[&str], second: &[&str], path: Option<&str>) -> Output {
    let mut cmd = Command::new(arbiter_bin());
    cmd.current_dir(dir)
        .args([
            "match",
            "--game",
            "leiserchess",
            "--games",
            "2",
            "--out",
            "out",
        ])
        .args(["--each", "depth=1"]);
    for engine in [first, second] {
        cmd.arg("--engine").args(engine);
    }
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    cmd.output().expect("arbiter runs")
}

fn assert_played(out: &Output, case: &str) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{case}: {text}");
    let finished = text
        .lines()
        .filter(|l| l.starts_with("Finished game"))
        .count();
    assert_eq!(finished, 2, "{case}: both games are played: {text}");
    for failure in ["crash", "illegal", "cannot start", "disconnect", "stalled"] {
        assert!(!text.contains(failure), "{case}: '{failure}' in {text}");
    }
    assert_sandboxed(&text, case);
}

/// Where bubblewrap is installed, the layouts are played in the sandbox, not beside it.
fn assert_sandboxed(text: &str, case: &str) {
    let bwrap = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file()));
    if bwrap {
        assert!(
            text.contains("sandbox: every engine in its own namespaces"),
            "{case}: the engines ran sandboxed: {text}"
        );
    }
}

#[test]
fn a_working_folder_of_mode_0700_as_mktemp_makes_it() {
    let work = Folder::new("mktemp", 0o700);
    copy_engine(&work.0.join("engine"));
    let out = play(
        &work.0,
        &["cmd=./engine", "name=a"],
        &["cmd=./engine", "name=b"],
        None,
    );
    assert_played(&out, "engines in a 0700 working folder");
}

#[test]
fn a_checkout_under_a_home_of_mode_0700() {
    let root = Folder::new("home", 0o755);
    let home = root.0.join("root");
    let checkout = home.join("qs");
    mkdir(&home, 0o700);
    mkdir(&checkout, 0o755);
    copy_engine(&checkout.join("arbiter-engine"));
    let out = play(
        &checkout,
        &["cmd=./arbiter-engine", "name=search", "option.Style=search"],
        &["cmd=./arbiter-engine", "name=random", "option.Style=random"],
        None,
    );
    assert_played(&out, "a checkout in a 0700 home");
}

#[test]
fn two_engines_side_by_side_in_a_subfolder() {
    let work = Folder::new("bins", 0o755);
    mkdir(&work.0.join("bins"), 0o755);
    copy_engine(&work.0.join("bins/e1"));
    copy_engine(&work.0.join("bins/e2"));
    let out = play(&work.0, &["cmd=./bins/e1"], &["cmd=./bins/e2"], None);
    assert_played(&out, "./bins/e1 against ./bins/e2");
}

/// The bisect guide's example as written: eight builds side by side in `./builds/`.
#[test]
fn the_bisect_guides_builds_folder() {
    let work = Folder::new("builds", 0o700);
    mkdir(&work.0.join("builds"), 0o755);
    let mut args: Vec<String> = [
        "bisect",
        "--elo",
        "200",
        "--concurrency",
        "2",
        "--each",
        "depth=1",
        "--out",
        "bisect-out",
    ]
    .map(String::from)
    .to_vec();
    for v in 1..=8 {
        copy_engine(&work.0.join(format!("builds/v{v}")));
        args.extend([
            "--engine".into(),
            format!("cmd=./builds/v{v}"),
            format!("name=v{v}"),
        ]);
        // The last three lose their strength: the bisect has something to find.
        let style = if v >= 6 { "random" } else { "search" };
        args.push(format!("option.Style={style}"));
    }
    let out = Command::new(arbiter_bin())
        .current_dir(&work.0)
        .args(&args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "bisect of ./builds/v1..v8: {text}"
    );
    for failure in ["crash", "cannot start", "No such file"] {
        assert!(!text.contains(failure), "'{failure}' in {text}");
    }
    assert_sandboxed(&text, "bisect of ./builds/v1..v8");
}

#[test]
fn a_script_that_reads_a_file_beside_it() {
    let work = Folder::new("script", 0o700);
    let player = work.0.join("player");
    mkdir(&player, 0o755);
    copy_engine(&player.join("engine"));
    std::fs::write(player.join("conf.txt"), "search\n").unwrap();
    set_mode(&player.join("conf.txt"), 0o644);
    write_script(
        &player.join("run.sh"),
        "#!/bin/sh\nhere=\"$(dirname \"$0\")\"\nread style < \"$here/conf.txt\" || exit 3\n\
         [ \"$style\" = search ] || exit 4\nexec \"$here/engine\" \"$@\"\n",
    );
    let out = play(
        &work.0,
        &["cmd=./player/run.sh", "name=scripted"],
        &["cmd=./player/engine"],
        None,
    );
    assert_played(&out, "a script reading conf.txt beside it");
}

/// Straight in `/tmp`, beside a private folder of another user's holding an old run, as every
/// real machine's `/tmp` has (`systemd-private-*`, `ssh-*`, any `mktemp -d`).
#[test]
fn an_engine_straight_in_tmp_beside_private_folders() {
    let private = Folder::new("private", 0o700);
    let old_run = private.0.join("one");
    mkdir(&old_run, 0o755);
    std::fs::write(old_run.join("journal.jsonl"), "").unwrap();
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&private.0, Some(12345), Some(12345)).unwrap();
    }
    let loose = std::env::temp_dir().join(format!("arbiter-layout-{}-loose", std::process::id()));
    copy_engine(&loose);
    let loose_cmd = format!("cmd={}", loose.display());
    // Run from /tmp itself too, where the private folders lie in the working folder.
    let out = play(
        &std::env::temp_dir(),
        &[&loose_cmd, "name=a"],
        &[&loose_cmd, "name=b"],
        None,
    );
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join("out"));
    std::fs::remove_file(&loose).unwrap();
    assert_played(&out, "an engine straight in /tmp, run from /tmp");
}

#[test]
fn a_python_engine_in_a_virtual_environment() {
    let work = Folder::new("venv", 0o700);
    let venv = work.0.join("venv");
    let made = Command::new("/usr/bin/python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("/usr/bin/python3 makes a virtual environment");
    assert!(made.success());
    copy_engine(&work.0.join("engine"));
    write_script(
        &work.0.join("engine.py"),
        &format!(
            "#!{}/bin/python3\nimport os, sys\nassert sys.prefix != sys.base_prefix\n\
             e = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'engine')\n\
             os.execv(e, [e] + sys.argv[1:])\n",
            venv.display()
        ),
    );
    let out = play(
        &work.0,
        &["cmd=./engine.py", "name=py"],
        &["cmd=./engine"],
        None,
    );
    assert_played(&out, "a Python engine in a venv");
}

#[test]
fn a_program_named_by_path() {
    let work = Folder::new("path", 0o700);
    let bin = work.0.join("bin dir");
    mkdir(&bin, 0o755);
    copy_engine(&bin.join("myengine"));
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let out = play(
        &work.0,
        &["cmd=myengine", "name=a"],
        &["cmd=myengine", "name=b"],
        Some(&path),
    );
    assert_played(&out, "cmd= found on PATH");
}

#[test]
fn a_relative_path_with_dots_a_link_and_spaces() {
    let work = Folder::new("dots", 0o700);
    let run_here = work.0.join("runs here");
    let engines = work.0.join("my engines");
    mkdir(&run_here, 0o755);
    mkdir(&engines, 0o755);
    copy_engine(&engines.join("real-engine"));
    std::os::unix::fs::symlink(engines.join("real-engine"), engines.join("linked")).unwrap();
    let out = play(
        &run_here,
        &["cmd=../my engines/real-engine", "name=dots"],
        &["cmd=../my engines/linked", "name=link"],
        None,
    );
    assert_played(&out, "a path with .., a symlink, spaces");
}

#[test]
fn dir_with_a_relative_cmd() {
    let work = Folder::new("dir", 0o700);
    let player = work.0.join("player");
    mkdir(&player, 0o700);
    copy_engine(&player.join("engine"));
    let out = play(
        &work.0,
        &["dir=player", "cmd=./engine", "name=a"],
        &["dir=player", "cmd=./engine", "name=b"],
        None,
    );
    assert_played(&out, "dir= with a relative cmd=");
}
