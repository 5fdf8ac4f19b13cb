//! `arbiter rate`, `arbiter run` and `arbiter book`, and the books committed in openings/.

use crate::common;

use common::{arbiter, arbiter_in, bundled_engine, stderr, stdout};
use std::path::PathBuf;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("tools", name)
}

fn engine() -> String {
    PathBuf::from(env!("CARGO_BIN_EXE_arbiter"))
        .with_file_name("arbiter-engine")
        .display()
        .to_string()
}

/// A PGN as cutechess-cli writes it (standard chess moves: `rate` needs only tags and results).
const CUTECHESS: &str = r#"[Event "?"]
[Site "?"]
[Date "2024.05.01"]
[Round "1"]
[White "Alpha"]
[Black "Beta"]
[Result "1-0"]
[TimeControl "10+0.1"]
[Termination "adjudication"]

1. e4 {+0.30/12 0.51s} e5 {-0.25/11 0.48s} 2. Nf3 {+0.31/12 0.45s} 1-0

[Event "?"]
[Site "?"]
[Date "2024.05.01"]
[Round "2"]
[White "Beta"]
[Black "Alpha"]
[Result "0-1"]

1. d4 d5 0-1

[Event "?"]
[White "Gamma"]
[Black "Alpha"]
[Result "1/2-1/2"]

1. c4 c5 1/2-1/2

[Event "?"]
[White "Beta"]
[Black "Gamma"]
[Result "0-1"]

1. e4 e5 0-1

[Event "?"]
[White "Gamma"]
[Black "Beta"]
[Result "1/2-1/2"]

1. Nf3 * 1/2-1/2
"#;

/// The MIT autotester's PGN: Event..Result headers, `{<ns> <depth> <nodes>}` after each move.
const MIT: &str = "[Event \"basic\"]\n[Site \"6.172\"]\n[Date \"2018.11.20\"]\n[Round \
    \"1\"]\n[White \"reference\"]\n[Black \"candidate\"]\n[Result \"0-1\"]\n\n1. g4g5 {1200340 5 \
    10231} e6e7 {1100230 5 9922} 2. g5g4 {998812 5 8123} e7e6 {1012311 5 8011} 0-1\n\n[Event \
    \"basic\"]\n[White \"candidate\"]\n[Black \"reference\"]\n[Result \"1-0\"]\n\n1. g4g5 {1200340 \
    5 10231} 1-0\n\n[Event \"basic\"]\n[White \"reference\"]\n[Black \"candidate\"]\n[Result \
    \"1/2-1/2\"]\n\n1. f0U {1 1 1} 1/2-1/2\n";

#[test]
fn rate_reads_pgn_written_by_other_tools() {
    let dir = scratch("rate");
    let (a, b) = (dir.join("cutechess.pgn"), dir.join("mit.pgn"));
    std::fs::write(&a, CUTECHESS).unwrap();
    std::fs::write(&b, MIT).unwrap();
    let out = arbiter(&[
        "rate",
        a.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.starts_with("5 games, 3 players"), "{text}");
    let pos = |n: &str| {
        text.find(n)
            .unwrap_or_else(|| panic!("{n} missing:\n{text}"))
    };
    assert!(
        pos("Alpha") < pos("Gamma") && pos("Gamma") < pos("Beta"),
        "{text}"
    );
    let standings = std::fs::read_to_string(dir.join("out/standings.csv")).unwrap();
    assert_eq!(standings.lines().count(), 4);
    // Without --out the ratings are printed, as BayesElo prints them, and nothing is written.
    let bare = dir.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    let out = arbiter_in(&bare, &["rate", a.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.starts_with(&stdout(&out)), "the same ratings");
    assert!(!stdout(&out).contains("Report:"), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_dir(&bare).unwrap().count(),
        0,
        "nothing written"
    );
    let out = arbiter(&[
        "rate",
        b.to_str().unwrap(),
        "--out",
        dir.join("mit").to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(
        text.starts_with("3 games, 2 players"),
        "{text}{}",
        stderr(&out)
    );
    assert!(text.find("candidate") < text.find("reference"), "{text}");
    // Players who never met cannot share one scale: said plainly.
    let both = arbiter(&[
        "rate",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        dir.join("x").to_str().unwrap(),
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(stderr(&both).contains("never met"), "{}", stderr(&both));
    assert!(!dir.join("x").exists(), "a refused rate writes nothing");
    // With an anchor, that player's rating is fixed (arbiter's model) ...
    let out = arbiter(&[
        "rate",
        b.to_str().unwrap(),
        "--anchor",
        "reference=2000",
        "--model",
        "arbiter",
        "--out",
        dir.join("o2").to_str().unwrap(),
    ]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("reference"))
        .unwrap_or_default();
    assert!(line.contains("+2000.0  (+2000.0 .. +2000.0)"), "{text}");
    // ... or everyone is moved so that it has that rating (BayesElo's `offset 2000 reference`).
    let out = arbiter(&[
        "rate",
        b.to_str().unwrap(),
        "--anchor",
        "reference=2000",
        "--out",
        dir.join("o3").to_str().unwrap(),
    ]);
    let text = stdout(&out);
    let row = |name: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.contains(name)).unwrap_or_default();
        line.split_whitespace().map(String::from).collect()
    };
    assert_eq!(row("reference")[2], "2000", "{text}");
    // 60 and -60 before the offset, unrounded 119.x apart.
    assert!(
        ["2119", "2120"].contains(&row("candidate")[2].as_str()),
        "{text}"
    );
}

/// Scholar's mate as cutechess-cli writes chess: SAN, no `Variant` tag.
const MATE: &str = "[Event \"?\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. \
    Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n[Event \"?\"]\n[White \"B\"]\n[Black \"A\"]\n[Result \
    \"1/2-1/2\"]\n\n1. d4 {adjudicated} d5 1/2-1/2\n";

/// `rate --check` replays every game by its rules: a real run's PGN passes with the same
/// ratings as without the check; an illegal move or a result the moves contradict stops the
/// rating (exit code 1) and names the game by file and line.
#[test]
fn rate_check_replays_every_game_by_its_rules() {
    let dir = scratch("check");
    common::succeed_in(&dir, &common::deep_against_shallow(6, 3, "run"));
    let pgn = dir.join("run/games.pgn");
    let plain = arbiter(&["rate", pgn.to_str().unwrap()]);
    let checked = arbiter(&["rate", "--check", pgn.to_str().unwrap()]);
    common::assert_exit(&checked, 0);
    assert_eq!(stdout(&plain), stdout(&checked), "the same ratings");
    assert!(
        stderr(&checked).contains("checked: 6 games replayed by the rules (6 of leiserchess)"),
        "{}",
        stderr(&checked)
    );
    // An illegal move in the second game: named by the line its tags start on.
    let text = std::fs::read_to_string(&pgn).unwrap();
    let second = text.match_indices("[Event ").nth(1).unwrap().0;
    let line = text[..second].lines().count() + 1;
    let moves = second + text[second..].find("\n1. ").unwrap() + 4;
    let end = moves + text[moves..].find(' ').unwrap();
    let forged = dir.join("forged.pgn");
    std::fs::write(&forged, format!("{}a1a1{}", &text[..moves], &text[end..])).unwrap();
    let out = arbiter(&[
        "rate",
        "--check",
        forged.to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    common::assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("1 of 6 games fail their replay by the rules; nothing is rated")
            && err.contains(&format!("forged.pgn:{line}: game 2 (")),
        "{err}"
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(!dir.join("o").exists(), "a refused rate writes nothing");
    // Chess as cutechess-cli writes it: SAN and no Variant tag. Read as arbiter's default game
    // everywhere (leiserchess), it fails, and the failure says how to read it as chess ...
    let mate = dir.join("mate.pgn");
    std::fs::write(&mate, MATE).unwrap();
    let out = arbiter(&["rate", "--check", mate.to_str().unwrap()]);
    common::assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("2 of them name no Variant and were read as leiserchess")
            && stderr(&out).contains("--game chess"),
        "{}",
        stderr(&out)
    );
    let chess = |file: &std::path::Path| {
        arbiter(&["rate", "--check", "--game", "chess", file.to_str().unwrap()])
    };
    let out = chess(&mate);
    common::assert_exit(&out, 0);
    assert!(
        stderr(&out).contains("(2 of chess)")
            && stderr(&out).contains("1 results decided by the rules agree, 1 given outside"),
        "{}",
        stderr(&out)
    );
    // ... where a mate scored for the side mated is refused, as is the wrong game's file.
    std::fs::write(&mate, MATE.replacen("1-0", "0-1", 2)).unwrap();
    let out = chess(&mate);
    common::assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("mate.pgn:1: game 1 (A - B): scored 0-1, where its moves end it 1-0"),
        "{}",
        stderr(&out)
    );
    let out = arbiter(&[
        "rate",
        "--check",
        "--game",
        "leiserchess",
        mate.to_str().unwrap(),
    ]);
    common::assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("2 of 2 games fail")
            && stderr(&out).contains("mate.pgn:1: game 1 (A - B): move 1 (e4): ")
            && !stderr(&out).contains("name no Variant"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn rate_refuses_bad_pgn_with_file_and_line() {
    let dir = scratch("badpgn");
    let bad = dir.join("bad.pgn");
    std::fs::write(
        &bad,
        "[Event \"x\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 {never closed\n",
    )
    .unwrap();
    let out = arbiter(&[
        "rate",
        bad.to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.pgn:line 6"), "{}", stderr(&out));
    assert!(!dir.join("o").exists(), "a refused rate writes nothing");
    let missing = arbiter_in(&dir, &["rate", "/no/such.pgn"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn a_file_is_refused_as_its_command_line_is_with_the_line_at_fault() {
    let dir = scratch("spec");
    let e = engine();
    let cli = arbiter_in(
        &dir,
        &[
            "tournament",
            "--concurrency",
            "0",
            "--engine",
            &format!("cmd={e}"),
            "name=a",
            "depth=1",
            "--engine",
            &format!("cmd={e}"),
            "name=b",
            "depth=1",
        ],
    );
    let toml = dir.join("t.toml");
    let table = |name: &str| format!("[[engine]]\nname = \"{name}\"\ncmd = \"{e}\"\ndepth = 1\n");
    std::fs::write(
        &toml,
        format!(
            "game = \"ultima\"\nconcurrency = 0\n{}{}",
            table("a"),
            table("b")
        ),
    )
    .unwrap();
    let file = arbiter_in(&dir, &["run", toml.to_str().unwrap()]);
    let mit = dir.join("b.txt");
    std::fs::write(
        &mit,
        format!(
            "title = t\ncpus = 0\nplayer = a\ninvoke = {e}\ndepth = 1\nplayer \
        = b\ninvoke = {e}\ndepth = 1\n"
        ),
    )
    .unwrap();
    let autotester = arbiter_in(&dir, &["run", mit.to_str().unwrap()]);
    for (out, place) in [
        (&cli, "--concurrency: ".to_string()),
        (&file, format!("{}:2: concurrency: ", toml.display())),
        (&autotester, format!("{}:2: cpus: ", mit.display())),
    ] {
        let err = stderr(out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("{place}must be at least 1, not 0")),
            "{err}"
        );
    }
    // The duplicate name, once the count is right, is the second engine's.
    std::fs::write(
        &toml,
        format!("concurrency = 1\n{}{}", table("a"), table("a")),
    )
    .unwrap();
    let err = stderr(&arbiter_in(&dir, &["run", toml.to_str().unwrap()]));
    assert!(
        err.contains(&format!(
            "{}:6: engine: two engines are named 'a'",
            toml.display()
        )),
        "{err}"
    );
    assert!(
        !dir.join("reports").exists(),
        "a refused run writes nothing"
    );
}

#[test]
fn run_plays_a_toml_tournament_and_an_mit_autotester_config() {
    let dir = scratch("run");
    let e = engine();
    let toml = dir.join("t.toml");
    std::fs::write(
        &toml,
        format!(
            "game = \"ultima\"\nrounds = 1\nconcurrency = 2\nmax_plies = 60\n[each]\ndepth = \
                1\n[[engine]]\nname = \"a\"\ncmd = \"{e}\"\noptions = {{ Style = \"greedy\" \
                }}\n[[engine]]\nname = \"b\"\ncmd = \"{e}\"\noptions = {{ Style = \"random\" }}\n"
        ),
    )
    .unwrap();
    let out = arbiter_in(&dir, &["run", toml.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        dir.join("reports").is_dir(),
        "the run's report is under the working folder"
    );
    assert!(stdout(&out).contains("Result of a vs b"));
    let mit = dir.join("basic.txt");
    std::fs::write(
        &mit,
        format!(
            "# autotester\ncpus = 2\ngame_rounds = 4\ntitle = basic\nadjudicate = \
            100\n\nplayer = ref\ninvoke = {e} --dialect leiserchess\ndepth = 1\n\nplayer = \
            new\ninvoke = {e} --dialect leiserchess\ndepth = 2\nstyle = 1\n"
        ),
    )
    .unwrap();
    let out = arbiter_in(&dir, &["run", mit.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("Result of ref vs new") && text.contains(", 4 games"),
        "{text}"
    );
    assert!(
        dir.join("reports/basic/report.html").is_file(),
        "title names the folder"
    );
    // game_rounds counts games; a bare book name lies beside the file, not in the working folder.
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("book.dta"), "g4g5 e6e7\n").unwrap();
    let three = conf.join("three.txt");
    std::fs::write(
        &three,
        format!(
            "book = book.dta\ngame_rounds = 3\ntitle = three games\n\nplayer = ref\ninvoke = \
            {e} --dialect leiserchess\ndepth = 1\n\nplayer = new\ninvoke = {e} --dialect \
            leiserchess\ndepth = 1\n"
        ),
    )
    .unwrap();
    let out = arbiter_in(
        &dir,
        &["run", three.to_str().unwrap(), "--quiet", "--out", "three"],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains(", 3 games"), "{text}");
    let games = std::fs::read_to_string(dir.join("three/games.csv")).unwrap();
    assert_eq!(games.lines().count(), 4, "{games}");
    assert!(
        games.contains("g4g5 e6e7"),
        "the book beside the file was used: {games}"
    );
    let out = arbiter_in(&dir, &["run", three.to_str().unwrap(), "--resume", "three"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("three/games.csv")).unwrap(),
        games
    );
    // The folder holds the settings: `--resume` needs no file, as for match and tournament.
    let out = arbiter_in(&dir, &["run", "--resume", "three", "--quiet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("three/games.csv")).unwrap(),
        games
    );
    // The course guide's families: two versions of one program never meet each other.
    let family = conf.join("family.txt");
    std::fs::write(
        &family,
        format!(
            "game_rounds = 4\ntitle = family\n\nplayer = ref\ninvoke = {e} --dialect \
            leiserchess\ndepth = 1\n\nplayer = mine1\ninvoke = {e} --dialect leiserchess\ndepth = \
            1\nfamily = mine\n\nplayer = mine2\ninvoke = {e} --dialect leiserchess\ndepth = \
            1\nfamily = mine\n"
        ),
    )
    .unwrap();
    let out = arbiter_in(
        &dir,
        &[
            "run",
            family.to_str().unwrap(),
            "--quiet",
            "--out",
            "family",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let games = std::fs::read_to_string(dir.join("family/games.csv")).unwrap();
    let pairs: Vec<String> = games
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let mut two = [f[3], f[4]];
            two.sort();
            two.join("-")
        })
        .collect();
    assert_eq!(pairs.len(), 4, "{games}");
    assert!(pairs.iter().all(|p| p != "mine1-mine2"), "{games}");
    assert!(
        pairs.contains(&"mine1-ref".to_string()) && pairs.contains(&"mine2-ref".to_string()),
        "{games}"
    );
    let out = arbiter_in(&dir, &["run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("<FILE>"), "{}", stderr(&out));
    // Mistakes name the file and line.
    std::fs::write(&mit, "cpus = 2\nplayer = x\nfis = 20\n").unwrap();
    let out = arbiter_in(&dir, &["run", mit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("basic.txt:3: fis takes"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        &mit,
        "cpus = 2\nplayer = x\ninvoke = /bin/true\ndepth = deep\n",
    )
    .unwrap();
    let out = arbiter_in(&dir, &["run", mit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("basic.txt:2: player: "),
        "{}",
        stderr(&out)
    );
    std::fs::write(&toml, "game = \"ultima\"\nrounds = \"many\"\n").unwrap();
    let out = arbiter_in(&dir, &["run", toml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("t.toml:2: rounds: invalid value 'many'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn committed_books_are_legal_distinct_and_reproducible() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for game in [
        "leiserchess",
        "leiserchess2012",
        "laserchess",
        "leaperhouse",
        "ultima",
    ] {
        let path = root.join("openings").join(format!("{game}.txt"));
        let entry = arbiter::game::find_game(game).unwrap();
        let openings = arbiter::tournament::openings::load_book(&path, entry, None).unwrap();
        assert!(openings.len() >= 50, "{game}: {}", openings.len());
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        lines.sort_unstable();
        lines.dedup();
        assert_eq!(lines.len(), openings.len(), "{game}: duplicate lines");
        // The header says how the book was made; making it again gives the same file.
        let header = text.lines().next().unwrap();
        let command = header.split("made by: arbiter ").nth(1).unwrap();
        let args: Vec<&str> = command.split_whitespace().collect();
        let out = arbiter(&args);
        assert!(out.status.success(), "{game}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            text,
            "{game}: the book is not what its header makes"
        );
    }
}

#[test]
fn engine_supplied_names_are_escaped_in_the_html_report() {
    let dir = scratch("escape");
    let pgn = dir.join("x.pgn");
    let evil = "<script>alert(1)</script>&\"";
    let mut text = String::new();
    for (w, b, r) in [
        (evil, "plain", "1-0"),
        ("plain", evil, "1/2-1/2"),
        (evil, "plain", "0-1"),
    ] {
        text.push_str(&format!(
            "[White \"{}\"]\n[Black \"{}\"]\n[Result \"{r}\"]\n\n1. e4 {r}\n\n",
            w.replace('"', "\\\""),
            b.replace('"', "\\\"")
        ));
    }
    std::fs::write(&pgn, text).unwrap();
    let out = arbiter(&[
        "rate",
        pgn.to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.join("o/report.html")).unwrap();
    assert!(!html.contains("<script>"), "raw engine name in the HTML");
    // The viewer's data carries the names inside its script: they must not close it.
    assert!(
        html.matches("</script>").count() <= 1,
        "a name closed the viewer's script"
    );
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;"),
        "escaped name missing"
    );
}

#[test]
fn huge_inputs_are_not_echoed_back_whole() {
    let dir = scratch("huge");
    // A flag's value clap refuses: quoted cut, not twice whole.
    let long_shard = "9".repeat(120_000);
    let out = arbiter_in(&dir, &["match", "--shard", &long_shard]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.len() < 1_000, "{} bytes of error", err.len());
    assert!(
        err.contains("--shard") && err.contains("characters cut"),
        "{err}"
    );
    let long_move = "x".repeat(100_000);
    let out = arbiter_in(&dir, &["replay", "leiserchess", "g4g5", &long_move]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.len() < 1_000, "{} bytes of error", err.len());
    assert!(
        err.contains("ply 2") && err.contains("characters cut"),
        "{err}"
    );
    let book = dir.join("book.txt");
    std::fs::write(&book, format!("g4g5\n{}\n", "zz".repeat(150_000))).unwrap();
    let e = engine();
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--openings",
            book.to_str().unwrap(),
            "--engine",
            &format!("cmd={e}"),
            "name=a",
            "depth=1",
            "--engine",
            &format!("cmd={e}"),
            "name=b",
            "depth=1",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.len() < 1_000 && err.contains("book.txt:2:"), "{err}");
}

#[test]
fn a_peer_that_is_not_named_or_not_there_is_refused() {
    for (peer, says) in [
        ("fastchess", "expected NAME=PATH"),
        ("fastchess=/no/such/fastchess", "is not a file"),
    ] {
        let out = arbiter(&["bench", "--peer", peer]);
        assert_eq!(out.status.code(), Some(2), "{peer}");
        assert!(stderr(&out).contains(says), "{peer}: {}", stderr(&out));
    }
    // A stockfish that is not there; a clock it cannot read, refused before anything is played
    // or looked for.
    let twin = format!("twin={}", env!("CARGO_BIN_EXE_arbiter"));
    for (extra, says) in [
        (&[][..], "/no/such/stockfish: not a file"),
        (
            &["--peer-tc", "1+x"][..],
            "--peer-tc: bad time control '1+x'",
        ),
    ] {
        let mut args = vec![
            "bench",
            "--peer",
            &twin,
            "--stockfish",
            "/no/such/stockfish",
        ];
        args.extend_from_slice(extra);
        let out = arbiter(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
}

/// The autotester example shipped in the repository runs as it is, with the engine path and
/// the clock made test-sized: every key it lists is read.
#[test]
fn the_shipped_autotester_example_runs() {
    let dir = scratch("autotester-example");
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/autotester.example.txt"))
        .unwrap()
        .replace("target/release/arbiter-engine", &bundled_engine())
        .replace("openings/", &format!("{root}/openings/"))
        .replace("fis = 20 0.5", "fis = 2 0.02")
        .replace("game_rounds = 12", "game_rounds = 2");
    std::fs::write(dir.join("basic.txt"), text).unwrap();
    let out = arbiter_in(&dir, &["run", "basic.txt", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pgn = std::fs::read_to_string(dir.join("reports/basic/games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event \"basic\"]").count(), 2, "{pgn}");
}
