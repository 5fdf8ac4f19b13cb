//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod earlier_format;

use arbiter::game::{Game, Position, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A file of the tests' own data (`tests/data/<name>`): the sample games' moves, variant files.
pub fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `../shared/rules/<name>`: the original rule texts, where they lie beside the repository (as
/// in CI). Only ignored tests read them, to check the tests' own data against the texts.
pub fn rule_text(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/rules")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; the rule texts are the folder shared/ beside the repository",
            path.display()
        )
    })
}

/// The moves of a recorded game: every line that is a move number `N.` followed by moves.
pub fn recorded_moves(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let mut tokens = line.split_whitespace();
            let first = tokens.next()?;
            let number = first.strip_suffix('.')?;
            number.parse::<u32>().ok()?;
            let moves: Vec<String> = tokens.map(str::to_string).collect();
            let move_like = |m: &String| {
                let b = m.as_bytes();
                b.len() >= 3 && b[0].is_ascii_lowercase() && b[1].is_ascii_digit()
            };
            (!moves.is_empty() && moves.iter().all(move_like)).then_some(moves)
        })
        .flatten()
        .collect()
}

/// The longest any one arbiter command of a test may take: a hang fails the test (and names
/// the command) instead of holding CI until its own time-out.
pub const COMMAND_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs `cmd` to its end, with its output, failing the test if it outlives `COMMAND_DEADLINE`.
pub fn output_within_deadline(cmd: Command) -> Output {
    output_within(cmd, COMMAND_DEADLINE)
}

/// Runs `arbiter` for a long piece of work (thousands of games of debug-built engines, which a
/// loaded machine slows several times over): a hang is still caught, after `deadline`.
pub fn arbiter_long(args: &[&str], deadline: std::time::Duration) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(args);
    output_within(cmd, deadline)
}

/// Runs `cmd` to its end, with its output, failing the test if it outlives `deadline`.
fn output_within(mut cmd: Command, deadline: std::time::Duration) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = r.read_to_end(&mut bytes);
            bytes
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the command can be waited for") {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran over {deadline:?} and was killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Runs the `arbiter` binary.
pub fn arbiter(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(args);
    output_within_deadline(cmd)
}

/// Runs the `arbiter` binary in `dir`, so that default outputs (`reports/...`) land there.
pub fn arbiter_in(dir: &std::path::Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(args).current_dir(dir);
    output_within_deadline(cmd)
}

/// Runs `arbiter` in `dir` with owned arguments and insists that it succeeds.
pub fn succeed_in(dir: &std::path::Path, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = arbiter_in(dir, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Plays a pseudo-random game guided by `choices`, checking at every ply that FEN writes and
/// parses back to the same position and key, and that every move prints and parses to itself.
pub fn check_playout<P: Position>(start: &str, choices: &[usize]) {
    let mut game = Game::new(P::from_fen(start).expect("start FEN parses"));
    for &choice in choices {
        let pos = game.position().clone();
        let fen = pos.fen();
        let reparsed = P::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_eq!(reparsed.fen(), fen);
        assert_eq!(
            reparsed.key(),
            pos.key(),
            "key differs after FEN round trip of {fen}"
        );
        let mut moves = Vec::new();
        pos.generate(&mut moves);
        for &mv in &moves {
            let text = pos.move_text(mv);
            assert_eq!(pos.parse_move(&text), Ok(mv), "{text} in {fen}");
        }
        let legal = game.legal_moves();
        if legal.is_empty() || game.status() != Status::Ongoing {
            break;
        }
        let mv = legal[choice % legal.len()];
        let mut copy = pos.clone();
        copy.play(mv);
        game.play(mv).expect("a legal move plays");
        assert_eq!(game.position().key(), copy.key());
        assert_eq!(game.position().fen(), copy.fen());
    }
}

/// Fails the test, saying why, where bubblewrap is missing: the sandbox's own tests are the
/// ignored kind, which `.ci/run` runs with `--ignored` once it has installed bubblewrap.
pub fn needs_bubblewrap() {
    assert!(
        has_bubblewrap(),
        "bubblewrap (bwrap) is missing: .ci/run installs it (apt-get install bubblewrap)"
    );
}

/// Whether bubblewrap is on `PATH` (arbiter then sandboxes engines and builds).
pub fn has_bubblewrap() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file()))
}

/// The bundled engine, built beside the `arbiter` binary by the same `cargo test`.
pub fn bundled_engine() -> String {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_arbiter")).with_file_name("arbiter-engine");
    assert!(
        path.is_file(),
        "{} is missing: run the whole workspace's tests (cargo test)",
        path.display()
    );
    path.display().to_string()
}

/// Writes a script (an engine of a test's own making) into `dir` with the given permission
/// bits; returns its path.
pub fn script(dir: &std::path::Path, name: &str, text: &str, mode: u32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.display().to_string()
}

/// An empty folder of this test process's own, for one test: `<tmp>/arbiter-<kind>-<pid>-<name>`.
/// It is removed when the test passes (a test may leave hundreds of megabytes: an engine's
/// flooded stderr, a long run's games); a failing test keeps it, to be looked at.
pub fn scratch(kind: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("arbiter-{kind}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Canonical: engines see the folder through its real path, whatever links TMPDIR takes.
    Scratch(dir.canonicalize().unwrap())
}

/// A test's folder, removed on drop unless the test is failing.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The opening book shipped for `game`.
pub fn book(game: &str) -> String {
    format!("{}/openings/{game}.txt", env!("CARGO_MANIFEST_DIR"))
}

/// A leiserchess match of `games` games from the book: the bundled engine at depth 2 ("deep")
/// against depth 1 ("shallow"), deterministic for a `seed`, into `out`.
pub fn deep_against_shallow(games: u64, seed: u64, out: &str) -> Vec<String> {
    let e = bundled_engine();
    let mut args: Vec<String> = vec![
        "match".into(),
        "--games".into(),
        games.to_string(),
        "--seed".into(),
        seed.to_string(),
        "--openings".into(),
        book("leiserchess"),
        "--out".into(),
        out.into(),
    ];
    for (name, depth) in [("deep", 2), ("shallow", 1)] {
        args.extend([
            "--engine".to_string(),
            format!("cmd={e}"),
            format!("name={name}"),
            format!("depth={depth}"),
            "option.Style=search".to_string(),
        ]);
    }
    args
}

/// Asserts that arbiter exited with `code`, showing what it printed if not.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}{}",
        stdout(out),
        stderr(out)
    );
}

/// Runs arbiter once per argument list, all at once in `dir` (as a cluster runs array tasks),
/// and asserts each exits with `code`; returns their outputs.
pub fn tasks_at_once(dir: &std::path::Path, tasks: &[Vec<String>], code: i32) -> Vec<Output> {
    let children: Vec<_> = tasks
        .iter()
        .map(|args| {
            Command::new(env!("CARGO_BIN_EXE_arbiter"))
                .args(args)
                .current_dir(dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("arbiter starts")
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("arbiter ends");
            assert_exit(&out, code);
            out
        })
        .collect()
}

/// `arbiter tune` of the bundled engine's `Focus` fixture (best at exactly 100) at depth 1 in
/// chess, from `start`, into `out`.
pub fn focus_tune(
    out: &std::path::Path,
    start: u32,
    pairs: u32,
    seed: u64,
    extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = [
        "tune",
        "--game",
        "chess",
        "--openings",
        &book("chess"),
        "--random-openings",
        "--engine",
        &format!("cmd={}", bundled_engine()),
        "name=e",
        "--each",
        "depth=1",
        "tc=inf",
        "--param",
        &format!("Focus={start},0,200,8,0.5"),
        "--pairs",
        &pairs.to_string(),
        "--seed",
        &seed.to_string(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// `writable=FOLDER` for an engine, with the folder given to the engines' user: run by root,
/// arbiter runs every sandboxed engine as `nobody`, which may write only what is its own.
#[allow(dead_code)]
pub fn writable(folder: &Path) -> String {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(folder, Some(65534), Some(65534)).unwrap();
    }
    format!("writable={}", folder.display())
}

/// A bisect of eight versions of the bundled engine into `out`: v1..v5 search 2 plies, v6..v8
/// one (a real weakness, worth hundreds of Elo), `--elo 100`, from the book's openings.
pub fn bisect_series(out: &str) -> Vec<String> {
    bisect_of(out, 8, 6, |_| vec![format!("cmd={}", bundled_engine())])
}

/// A bisect into `out` of `versions` versions, v1 first: those from `weak_from` on search one ply
/// where the others search two, each also set as `engine` says (its program at least).
/// `--elo 100`, two games at once, from the book's openings.
pub fn bisect_of(
    out: &str,
    versions: u32,
    weak_from: u32,
    engine: impl Fn(u32) -> Vec<String>,
) -> Vec<String> {
    let mut args: Vec<String> = [
        "bisect",
        "--elo",
        "100",
        "--concurrency",
        "2",
        "--openings",
        &book("leiserchess"),
        "--out",
        out,
    ]
    .map(String::from)
    .to_vec();
    for v in 1..=versions {
        let depth = if v >= weak_from { 1 } else { 2 };
        // `--engine <its own settings> name=vN depth=N`, as tests that edit a version find it.
        args.push("--engine".to_string());
        args.extend(engine(v));
        args.extend([format!("name=v{v}"), format!("depth={depth}")]);
    }
    args
}
