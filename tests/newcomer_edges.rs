//! The rough edges a newcomer hit, each as they met it: flags after the moves, an SPRT without
//! `--games`, run folders named by epoch seconds, `--help` that left things out.

use crate::common;

use common::{arbiter, arbiter_in, bundled_engine as engine, stderr, stdout};

fn scratch(name: &str) -> common::Scratch {
    common::scratch("edges", name)
}

/// The README writes `show <game> [moves] --svg board.svg`: the flag after the moves.
#[test]
fn flags_work_after_the_moves() {
    let dir = scratch("flags");
    let svg = dir.join("b.svg");
    let o = arbiter(&[
        "show",
        "leiserchess2012",
        "f0U",
        "e5L",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let before = arbiter(&["replay", "laserchess", "--setup", "ace"]);
    let o = arbiter(&["replay", "laserchess", "--setup", "ace", "--fen", "x"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--setup and --fen conflict wherever they stand"
    );
    assert!(before.status.success(), "{}", stderr(&before));
    let _ = std::fs::remove_dir_all(dir);
}

/// `match --sprt` without `--games` used to stop after the default two games, undecided, with
/// exit code 3 and no word why; it now plays until the test decides, and says so.
#[test]
fn an_sprt_without_games_plays_until_it_decides() {
    let dir = scratch("sprt");
    let e = engine();
    let o = arbiter(&[
        "match",
        "--game",
        "leiserchess",
        "--engine",
        &format!("cmd={e}"),
        "name=search",
        "--engine",
        &format!("cmd={e}"),
        "name=random",
        "option.Style=random",
        "--each",
        "depth=2",
        "tc=inf",
        "--concurrency",
        "2",
        "--sprt",
        "elo0=0",
        "elo1=100",
        "--out",
        dir.join("m").to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("SPRT without --games: playing until it decides, at most 100000 games"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0), "H1 accepted: {}", stdout(&o));
    let games = std::fs::read_to_string(dir.join("m").join("games.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert!(games > 2, "it played on past two games ({games})");
    let _ = std::fs::remove_dir_all(dir);
}

/// A run given no --out or --name gets a folder named by a readable UTC date and time.
#[test]
fn run_folders_are_named_by_date_and_time() {
    let dir = scratch("names");
    let e = engine();
    let o = arbiter_in(
        &dir,
        &[
            "match",
            "--engine",
            &format!("cmd={e}"),
            "name=a",
            "--engine",
            &format!("cmd={e}"),
            "name=b",
            "--each",
            "depth=1",
            "tc=inf",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let stamp = names[0].strip_prefix("match-leiserchess-").unwrap();
    // 2026-11-24-124512
    let digits: Vec<&str> = stamp.split('-').collect();
    assert_eq!(
        digits.iter().map(|d| d.len()).collect::<Vec<_>>(),
        [4, 2, 2, 6],
        "{stamp}"
    );
    assert!(digits.iter().all(|d| d.chars().all(|c| c.is_ascii_digit())));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn help_explains_what_it_used_to_leave_out() {
    let help = |args: &[&str]| stdout(&arbiter(args));
    let top = help(&["--help"]);
    for line in top
        .lines()
        .filter(|l| l.starts_with("  merge") || l.starts_with("  slurm"))
    {
        assert!(
            !line.trim_end().ends_with(" a") && !line.trim_end().ends_with(" and"),
            "{line}"
        );
    }
    assert!(top.contains("chess."), "{top}");
    let matched = help(&["match", "--help"]);
    assert!(
        matched.contains("Seeds what is chosen at random"),
        "{matched}"
    );
    assert!(
        matched.contains("alpha and beta default to 0.05"),
        "{matched}"
    );
    assert!(
        matched.contains("with\n          --sprt, until the test decides")
            || matched.contains("until the test decides")
    );
    let book = help(&["book", "--help"]);
    assert!(book.contains("--game <GAME>\n          Game id"), "{book}");
    for command in ["show", "replay"] {
        let text = help(&[command, "--help"]);
        assert!(text.contains("Game id"), "{text}");
    }
    let run = help(&["run", "--help"]);
    assert!(
        !run.contains("needs --out\n          or --name, the same"),
        "{run}"
    );
    assert!(run.contains("the file's out/name"), "{run}");
}

/// More games at once than CPUs under a clock: said before the run starts.
#[test]
fn more_games_than_cpus_under_a_clock_is_warned_of() {
    let dir = scratch("overload");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let e = engine();
    let o = arbiter(&[
        "match",
        "--engine",
        &format!("cmd={e}"),
        "name=a",
        "option.Style=random",
        "--engine",
        &format!("cmd={e}"),
        "name=b",
        "option.Style=random",
        "--each",
        "st=0.05",
        "--games",
        "2",
        "--concurrency",
        &(cpus + 1).to_string(),
        "--out",
        dir.join("m").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: {} games at a time on {cpus} CPUs",
            cpus + 1
        )),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A TOML file whose `game` is not a game's name (a number, a typo) is refused at its line,
/// naming the games there are, before its engines are read as some game's.
#[test]
fn a_toml_game_that_is_no_game_is_refused_at_its_line() {
    let dir = common::scratch("newcomer", "toml-game");
    let engine = common::bundled_engine();
    std::fs::write(
        dir.join("run.toml"),
        format!(
            "game = 3\n[[engine]]\ncmd = \"{engine}\"\nname = \"a\"\n[[engine]]\ncmd = \
                \"{engine}\"\nname = \"b\"\n"
        ),
    )
    .unwrap();
    let out = common::arbiter_in(&dir, &["run", "run.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("run.toml:1: game: '3' is no game arbiter plays"),
        "{}",
        common::stderr(&out)
    );
    assert!(!dir.join("reports").exists(), "nothing written");
}

/// A device or a pipe named as a book (`/dev/zero` claims a size of 0 and never ends; a pipe
/// with no writer never answers): refused at once with exit 2, as is every input file that is
/// not a regular file, before anything is written.
#[test]
fn a_device_or_a_pipe_as_a_book_is_refused_at_once() {
    let dir = common::scratch("edges", "devices");
    let fifo = dir.join("book.fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let engine = common::bundled_engine();
    let fifo = fifo.display().to_string();
    let cases: [(&str, Vec<String>); 3] = [
        (
            "--openings /dev/zero",
            vec!["--openings".into(), "/dev/zero".into()],
        ),
        ("--openings FIFO", vec!["--openings".into(), fifo.clone()]),
        ("book=/dev/zero", vec!["--game".into(), "chess".into()]),
    ];
    for (case, extra) in cases {
        let book = if case.starts_with("book=") {
            "book=/dev/zero"
        } else {
            "name=a"
        };
        let mut args: Vec<String> = ["match", "--games", "2", "--each", "depth=1", "--out", "run"]
            .map(String::from)
            .to_vec();
        args.extend(extra);
        args.extend([
            "--engine".into(),
            format!("cmd={engine}"),
            "name=a".into(),
            book.into(),
            "--engine".into(),
            format!("cmd={engine}"),
            "name=b".into(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::arbiter_in(&dir, &args);
        let said = common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{case}: {said}");
        assert!(said.contains("not a regular file"), "{case}: {said}");
        assert!(!dir.join("run").exists(), "{case}: nothing is written");
    }
}

/// A chess engine's first try, `arbiter match --engine cmd=stockfish --engine cmd=stockfish`
/// with no `--game`: an engine that offers no `UCI_Variant` cannot say it plays the default
/// game, so the run is refused with what to write, before any game is lost by "illegal moves";
/// and the second engine of one program is renamed as the tools rename it.
#[test]
fn a_chess_engine_under_the_default_game_is_told_to_name_it() {
    let dir = scratch("default-game");
    let engine = common::script(
        &dir,
        "chessy",
        "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    uci) echo 'id name \
            chessy'; \
         echo uciok ;;\n    isready) echo readyok ;;\n    go) echo 'bestmove e2e4' ;;\n    \
         quit) exit 0 ;;\n  esac\ndone\n",
        0o755,
    );
    let cmd = format!("cmd={engine}");
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--games",
            "2",
            "--each",
            "nodes=100",
            "--engine",
            &cmd,
            "--engine",
            &cmd,
        ],
    );
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("with --game chess"), "{said}");
    assert!(said.contains("plays as 'chessy_2'"), "{said}");
    assert!(!dir.join("reports").exists(), "nothing written: {said}");
}
