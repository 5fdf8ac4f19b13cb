//! cutechess-cli and fastchess command lines run as they are, with the bundled engine in place of
//! theirs: the example of fastchess's README, and two lines in the shapes fastchess users write
//! in their scripts (EPD book in random order, a log file, -games 2, an SPRT, -pgnout file=).

use crate::common;

use common::{arbiter_in, assert_exit, bundled_engine, scratch, stderr, stdout};

/// Positions a few moves into standard openings, as EPD.
const EPD: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - id \"open\";
rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - id \"indian\";
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id \"sicilian\";
rnbqkbnr/pppp1ppp/4p3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id \"french\";
";

fn line(text: &str) -> Vec<String> {
    let e = bundled_engine();
    text.replace("ENGINE", &e)
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn play(dir: &std::path::Path, text: &str) -> std::process::Output {
    let args = line(text);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    arbiter_in(dir, &args)
}

/// A scratch folder holding `EPD` as book.epd.
fn with_book(name: &str) -> common::Scratch {
    let dir = scratch("theirs", name);
    std::fs::write(dir.join("book.epd"), EPD).unwrap();
    dir
}

/// `play`, which must succeed.
fn played(dir: &std::path::Path, text: &str) -> std::process::Output {
    let out = play(dir, text);
    assert_exit(&out, 0);
    out
}

/// Plays an argument list as a script builds it (words may hold spaces), the bundled engine
/// in place of `ENGINE`.
fn play_words(dir: &std::path::Path, words: &[&str]) -> std::process::Output {
    let e = bundled_engine();
    let args: Vec<String> = words.iter().map(|w| w.replace("ENGINE", &e)).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    arbiter_in(dir, &args)
}

/// `play`, which must be refused with exit code 2 and a message saying `says`.
fn refused(dir: &std::path::Path, text: &str, says: &str) {
    let out = play(dir, text);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains(says), "{}", stderr(&out));
}

#[test]
fn the_fastchess_readme_example_plays_chess() {
    let dir = scratch("theirs", "readme");
    let out = play(
        &dir,
        "-engine cmd=ENGINE name=Engine1 -engine cmd=ENGINE name=Engine2 -each tc=1+0.01 -rounds 2 \
            -repeat -concurrency 2",
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    // fastchess's own closing block, as its users' scripts read it.
    assert!(
        text.contains("Results of Engine1 vs Engine2 (1+0.01, NULL, NULL):"),
        "{text}"
    );
    assert!(text.contains("Games: 4, Wins: "), "{text}");
    // Then fastchess's per-player block (tournament.cpp), "Finished match" and its time. A
    // game lost on time at 1+0.01 on a loaded machine is counted there, so the counts vary.
    let block = regex::Regex::new(
        "Tournament finished\n\nPlayer: Engine1\n  Timeouts: [0-4]\n  Crashed: 0\n\
         Player: Engine2\n  Timeouts: [0-4]\n  Crashed: 0\n\nFinished match\nTotal Time: ",
    )
    .unwrap();
    assert!(block.is_match(&text), "{text}");
}

#[test]
fn an_epd_book_in_random_order_with_a_log() {
    let dir = with_book("epd");
    played(
        &dir,
        "-engine cmd=ENGINE name=new -engine cmd=ENGINE name=old -openings file=book.epd \
            format=epd order=random -each tc=1+0.01 -rounds 2 -repeat -concurrency 2 -log \
            file=fastchess.log",
    );
    let log = std::fs::read_to_string(dir.join("fastchess.log")).unwrap();
    assert!(
        log.contains("position fen "),
        "the book's positions reach the engines"
    );
}

#[test]
fn an_sprt_with_games_two_and_a_pgn_file() {
    let dir = with_book("sprt");
    let out = play(
        &dir,
        "-engine name=deep cmd=ENGINE depth=2 -engine name=shallow cmd=ENGINE depth=1 -games 2 \
            -rounds 3 -each proto=uci option.Style=search -openings order=random file=book.epd \
            format=epd -randomseed -concurrency 2 -ratinginterval 10 -sprt elo0=0 elo1=10 \
            alpha=0.05 beta=0.05 -pgnout file=out.pgn -recover",
    );
    let text = stdout(&out);
    // Six games cannot decide an SPRT at these bounds: undecided, and exit code 0 as fastchess
    // gives it (arbiter's own lines give 3).
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let llr = text.lines().find(|l| l.starts_with("LLR: ")).unwrap_or("");
    assert!(llr.ends_with(" (-2.94, 2.94) [0.00, 10.00]"), "{text}");
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 6, "{pgn}");
}

/// fastchess's `-sprt ... model=bayesian`: the LLR of single games under BayesElo's model, as
/// fastchess computes it (the values are checked in `stats::sprt`'s tests); the run records the
/// model, so that `--resume` and merge decide alike.
#[test]
fn a_bayesian_sprt_runs_as_fastchess_runs_it() {
    let dir = with_book("bayesian");
    let out = play(
        &dir,
        "-engine name=deep cmd=ENGINE depth=2 -engine name=greedy cmd=ENGINE depth=1 \
            option.Style=greedy -games 2 -rounds 10 -each proto=uci -openings file=book.epd \
            format=epd -concurrency 2 -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 model=bayesian \
            -pgnout file=out.pgn",
    );
    let text = stdout(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{text}{}",
        stderr(&out)
    );
    assert!(text.lines().any(|l| l.starts_with("LLR: ")), "{text}");
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    assert!(pgn.matches("[Event ").count() >= 2, "{pgn}");
    let specs: Vec<String> = walk(&dir)
        .into_iter()
        .filter(|p| p.ends_with("run.json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        specs.iter().any(|s| s.contains("\"model\": \"bayesian\"")),
        "{specs:?}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// `-site` names the PGN's Site tag, as both tools write it (a script's words may hold spaces).
#[test]
fn the_site_goes_into_the_pgn() {
    let dir = with_book("site");
    let out = play_words(
        &dir,
        &[
            "-engine",
            "cmd=ENGINE",
            "name=a",
            "depth=1",
            "-engine",
            "cmd=ENGINE",
            "name=b",
            "depth=1",
            "-openings",
            "file=book.epd",
            "format=epd",
            "-games",
            "2",
            "-site",
            "Lab 3, MIT",
            "-pgnout",
            "file=out.pgn",
        ],
    );
    assert_exit(&out, 0);
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    let games = pgn.matches("[Event ").count();
    assert!(games >= 1, "{pgn}");
    assert_eq!(pgn.matches("[Site \"Lab 3, MIT\"]").count(), games, "{pgn}");
}

/// A line with several problems names them all in one error, as a user fixing it wants.
#[test]
fn every_problem_of_a_line_is_named_at_once() {
    let dir = scratch("theirs", "problems");
    let out = play(
        &dir,
        "-engine cmd=ENGINE -engine cmd=ENGINE -each tc=1 -maxmoves many -tournament swiss",
    );
    assert_exit(&out, 2);
    let text = stderr(&out);
    for says in ["-maxmoves", "-tournament: 'swiss'"] {
        assert!(text.contains(says), "{says}: {text}");
    }
    assert!(!dir.join("reports").exists(), "nothing is written");
}

/// A fastchess line as OpenBench-style scripts write it: pinned to a CPU, its engines' waits
/// lengthened, and flags that change nothing played (a pause between games, a PGN checksum).
#[test]
fn affinity_and_timeouts_as_fastchess_scripts_give_them() {
    let dir = scratch("theirs", "scripted");
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let text = format!(
        "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -rounds 1 -games 2 \
         -use-affinity {allowed} -startup-ms 20000 -ucinewgame-ms 60000 -ping-ms 90000 -wait 10 \
         -crc32 pgn=true -force-concurrency -testEnv -pgnout file=out.pgn"
    );
    let out = played(&dir, &text);
    assert!(stdout(&out).contains("2 games"), "{}", stdout(&out));
    let run = std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    assert!(spec["affinity"].is_array(), "{}", spec["affinity"]);
    for engine in spec["engines"].as_array().unwrap() {
        // -ping-ms bounds the `isready` before every `go`; the start keeps its own time.
        assert_eq!(engine["ping"]["secs"], 90, "{engine}");
        assert_eq!(engine["sync"], "every", "{engine}");
        assert_ne!(engine["handshake"]["secs"], 90, "{engine}");
    }
}

/// `-epdout`: each game's final position, in the order of the games, as fastchess writes it;
/// the position is the one the game's moves in the PGN lead to.
#[test]
fn epdout_writes_each_games_final_position() {
    let dir = with_book("epdout");
    played(
        &dir,
        "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -openings \
            file=book.epd format=epd -rounds 2 -games 2 -repeat -pgnout file=out.pgn -epdout \
            file=final.epd append=true",
    );
    let epd = std::fs::read_to_string(dir.join("final.epd")).unwrap();
    let lines: Vec<&str> = epd.lines().collect();
    assert_eq!(lines.len(), 4, "{epd}");
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    // The first game, replayed from its FEN tag by `arbiter replay`.
    let first = pgn.split("\n\n[Event").next().unwrap();
    let fen = first
        .lines()
        .find_map(|l| l.strip_prefix("[FEN \"")?.strip_suffix("\"]"))
        .expect("a FEN tag: the game started from the book");
    let movetext = first
        .lines()
        .filter(|l| !l.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    // Comments out, then move numbers and the result.
    let mut bare = String::new();
    let mut in_comment = false;
    for c in movetext.chars() {
        match c {
            '{' => in_comment = true,
            '}' => in_comment = false,
            _ if !in_comment => bare.push(c),
            _ => {}
        }
    }
    let moves: Vec<&str> = bare
        .split_whitespace()
        .filter(|w| !w.ends_with('.'))
        .filter(|w| !["1-0", "0-1", "1/2-1/2", "*"].contains(w))
        .collect();
    let replay = arbiter_in(
        &dir,
        &[&["replay", "chess", "--fen", fen][..], &moves[..]].concat(),
    );
    let replayed = stdout(&replay);
    let final_fen = replayed
        .lines()
        .find_map(|l| l.strip_prefix("fen "))
        .unwrap_or_else(|| panic!("{replayed}{}", stderr(&replay)));
    let f: Vec<&str> = final_fen.split_whitespace().collect();
    assert_eq!(
        lines[0],
        format!(
            "{} {} {} {} hmvc {}; fmvn {};",
            f[0], f[1], f[2], f[3], f[4], f[5]
        )
    );
}

/// A config.json in the shape fastchess saves (its keys, its millisecond limits and enum
/// numbers), with `stats` as given.
fn fastchess_config(engine: &str, stats: &str) -> String {
    let engine_json = |name: &str, depth: u32| {
        format!(
            r#"{{"name": "{name}", "dir": "", "cmd": "{engine}", "args": "", "restart": false,
              "options": [["Style", "search"]],
              "limit": {{"tc": {{"increment": 0, "fixed_time": 0, "time": 0, "moves": 0, "timemargin": 0}},
                         "nodes": 0, "plies": {depth}}}, "variant": 0}}"#
        )
    };
    format!(
        r#"{{
    "resign": {{"move_count": 1, "score": 0, "twosided": false, "enabled": false}},
    "draw": {{"move_number": 0, "move_count": 1, "score": 0, "enabled": false}},
    "maxmoves": {{"move_count": 1, "enabled": false}},
    "tb_adjudication": {{"syzygy_dirs": "", "max_pieces": 0, "ignore_50_move_rule": false, "enabled": false}},
    "opening": {{"file": "book.epd", "format": 0, "order": 1, "plies": -1, "start": 1}},
    "pgn": {{"event_name": "From config", "site": "?", "file": "config.pgn", "notation": 0}},
    "epd": {{"file": "", "append_file": true}},
    "sprt": {{"alpha": 0.0, "beta": 0.0, "elo0": 0.0, "elo1": 0.0, "model": "normalized", "enabled": false}},
    "config_name": "config.json", "seed": 7, "variant": 0, "type": 0,
    "games": 2, "rounds": 3, "concurrency": 2,
    "log": {{"file": "", "level": 3}},
    "engines": [{}, {}],
    "stats": {stats}
}}"#,
        engine_json("deep", 2),
        engine_json("shallow", 1)
    )
}

#[test]
fn a_fastchess_config_file_is_played_as_the_flags_that_made_it() {
    let dir = with_book("config");
    let engine = bundled_engine();
    std::fs::write(dir.join("config.json"), fastchess_config(&engine, "{}")).unwrap();
    let out = play(&dir, "-config file=config.json");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("Results of deep vs shallow ("), "{text}");
    let pgn = std::fs::read_to_string(dir.join("config.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event \"From config\"]").count(), 6, "{pgn}");
    // A flag after the file replaces the file's setting: one round of two games.
    let out = play(
        &dir,
        "-config file=config.json -rounds 1 -pgnout file=one.pgn",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pgn = std::fs::read_to_string(dir.join("one.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 2, "{pgn}");

    // Results fastchess played cannot be continued: refused unless stats=false.
    let stats = r#"{"deep vs shallow": {"wins": 3, "losses": 1, "draws": 2}}"#;
    std::fs::write(dir.join("played.json"), fastchess_config(&engine, stats)).unwrap();
    let out = play(&dir, "-config file=played.json");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("results of 6 games") && stderr(&out).contains("stats=false"),
        "{}",
        stderr(&out)
    );
    // Counts that add up past 2^64 must not wrap to "no results".
    let wrap = r#"{"deep vs shallow": {"wins": 18446744073709551615, "losses": 1, "draws": 0}}"#;
    std::fs::write(dir.join("wrap.json"), fastchess_config(&engine, wrap)).unwrap();
    let out = play(&dir, "-config file=wrap.json");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("stats=false"), "{}", stderr(&out));
    let out = play(&dir, "-config file=played.json stats=false -rounds 1");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A broken file names its line.
    std::fs::write(
        dir.join("broken.json"),
        "{\n  \"rounds\": 3,\n  \"games\": x\n}\n",
    )
    .unwrap();
    let out = play(&dir, "-config file=broken.json");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("broken.json:3:"), "{}", stderr(&out));
}

/// `-variant <game>` names every game arbiter plays (the issue's own line, with the bundled
/// engine): no other flag is needed for a non-chess game.
#[test]
fn variant_names_each_game() {
    let dir = scratch("theirs", "variant");
    for game in [
        "leiserchess",
        "leiserchess2012",
        "laserchess",
        "leaperhouse",
        "ultima",
        "chess",
        "standard",
    ] {
        let out = played(
            &dir,
            &format!(
                "-engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each depth=1 -games 2 \
                -variant {game} -pgnout file={game}.pgn"
            ),
        );
        let text = stdout(&out);
        // fastchess's reading (-pgnout file=): -games 2 of its default 2 rounds.
        assert!(text.contains(", 4 games,"), "{game}: {text}");
        let pgn = std::fs::read_to_string(dir.join(format!("{game}.pgn"))).unwrap();
        let id = if game == "standard" { "chess" } else { game };
        assert_eq!(pgn.matches("[Event ").count(), 4, "{game}: {pgn}");
        assert!(
            text.contains(&format!("arbiter match: {id},")),
            "{game}: {text}"
        );
    }
}

/// Books as other tools and editors write them: an EPD file that starts with a byte order mark,
/// a PGN book with annotation glyphs (`e4!?`, `Nf3?!`).
#[test]
fn books_with_a_bom_or_annotation_glyphs_are_read() {
    let dir = scratch("theirs", "glyphs");
    std::fs::write(dir.join("bom.epd"), format!("\u{feff}{EPD}")).unwrap();
    std::fs::write(
        dir.join("glyphs.pgn"),
        "[Event \"book\"]\n[Result \"*\"]\n\n1. e4!? e5 2. Nf3?! Nc6!! *\n",
    )
    .unwrap();
    played(
        &dir,
        "-engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each depth=1 -openings file=bom.epd \
            format=epd -games 2 -rounds 1 -pgnout file=bom.pgn",
    );
    played(
        &dir,
        "-engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each depth=1 -openings \
            file=glyphs.pgn format=pgn -games 2 -rounds 1 -pgnout file=glyphs.pgn.out",
    );
    let pgn = std::fs::read_to_string(dir.join("glyphs.pgn.out")).unwrap();
    assert_eq!(
        pgn.matches("1. e4 {book} e5 {book} 2. Nf3 {book} Nc6 {book}")
            .count(),
        2,
        "{pgn}"
    );
}

/// Each game of a PGN file: its White player and its start position (FEN without counters).
fn whites_and_starts(pgn: &str) -> Vec<(String, String)> {
    pgn.split("[Event ")
        .skip(1)
        .map(|game| {
            let tag = |name: &str| {
                game.lines()
                    .find_map(|l| l.strip_prefix(&format!("[{name} \""))?.strip_suffix("\"]"))
                    .unwrap_or_else(|| panic!("no {name} tag in {game}"))
                    .to_string()
            };
            let fen = tag("FEN");
            let board: Vec<&str> = fen.split_whitespace().take(4).collect();
            (tag("White"), board.join(" "))
        })
        .collect()
}

/// The book's positions (their first four FEN fields), in its order.
fn book_positions() -> Vec<String> {
    EPD.lines()
        .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .collect()
}

/// `-noswap`, `-reverse` and the book's `start=`, as cutechess-cli's and fastchess's manuals
/// define them: who has White in each game of a pair, and where the book begins (wrapping
/// round to its first opening after its last).
#[test]
fn noswap_reverse_and_a_book_start_play_as_the_peers_play_them() {
    let dir = with_book("colours");
    let book = book_positions();
    let base = "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 \
                -openings file=book.epd format=epd order=sequential start=3 \
                -rounds 3 -games 2 -repeat";
    for (flags, whites) in [
        ("", ["a", "b", "a", "b", "a", "b"]),
        ("-noswap", ["a"; 6]),
        ("-reverse", ["b", "a", "b", "a", "b", "a"]),
        ("-noswap -reverse", ["b"; 6]),
    ] {
        let file = format!("out{}.pgn", flags.replace(' ', ""));
        let out = played(&dir, &format!("{base} {flags} -pgnout file={file}"));
        // The banner says how the book and the colours go.
        let banner = stdout(&out);
        assert!(banner.contains("(4), from opening 3"), "{banner}");
        let says =
            |what: &str| banner.contains(&format!("colours:  the {what} engine White in both"));
        assert_eq!(says("first"), flags == "-noswap", "{banner}");
        assert_eq!(says("second"), flags == "-noswap -reverse", "{banner}");
        let games = whites_and_starts(&std::fs::read_to_string(dir.join(&file)).unwrap());
        let seen: Vec<&str> = games.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(seen, whites, "White in each game with '{flags}'");
        let starts: Vec<&str> = games.iter().map(|(_, s)| s.as_str()).collect();
        let expected = [&book[2], &book[2], &book[3], &book[3], &book[0], &book[0]];
        assert_eq!(starts, expected, "openings 3, 4, then 1 with '{flags}'");
    }
    // The same settings from a config.json fastchess saved.
    let config = fastchess_config(&bundled_engine(), "{}")
        .replace("\"start\": 1", "\"start\": 4")
        .replace(
            "\"type\": 0,",
            "\"type\": 0, \"noswap\": true, \"reverse\": false,",
        );
    std::fs::write(dir.join("config.json"), config).unwrap();
    played(&dir, "-config file=config.json -rounds 2");
    let games = whites_and_starts(&std::fs::read_to_string(dir.join("config.pgn")).unwrap());
    assert_eq!(games.len(), 4);
    assert!(games.iter().all(|(w, _)| w == "deep"), "{games:?}");
    let starts: Vec<&str> = games.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(starts, [&book[3], &book[3], &book[0], &book[0]]);
    // A start before the first opening is refused, naming it.
    refused(
        &dir,
        "-engine cmd=ENGINE -engine cmd=ENGINE -each depth=1 -openings file=book.epd format=epd \
            start=0",
        "start=0",
    );
}

/// A line as a fastchess study script builds it (argument list, not a shell line): `-config
/// outname=` names the state file fastchess would save and loads nothing, the event has spaces,
/// and -pgnout and -log carry the keys fastchess takes.
#[test]
fn a_study_scripts_fastchess_line_plays() {
    let dir = with_book("study");
    let out = play_words(
        &dir,
        &[
            "-engine",
            "cmd=ENGINE",
            "name=low",
            "depth=1",
            "-engine",
            "cmd=ENGINE",
            "name=high",
            "depth=1",
            "-openings",
            "file=book.epd",
            "format=epd",
            "order=random",
            "-srand",
            "7",
            "-rounds",
            "2",
            "-repeat",
            "-concurrency",
            "2",
            "-maxmoves",
            "60",
            "-recover",
            "-config",
            "outname=study/pair.fastchess.json",
            "-event",
            "Study (lane 1): low vs high",
            "-pgnout",
            "file=pair.pgn",
            "notation=san",
            "append=false",
            "nodes=true",
            "seldepth=true",
            "nps=true",
            "hashfull=true",
            "latency=true",
            "-log",
            "file=pair.log",
            "level=info",
            "append=false",
            "engine=false",
        ],
    );
    assert_exit(&out, 0);
    // What arbiter does otherwise is said, not dropped.
    for note in [
        "note: -pgnout nps=true: arbiter's PGN comments hold",
        "note: -pgnout latency=true",
        "note: -log level=info: arbiter's log holds every line",
    ] {
        assert!(stderr(&out).contains(note), "{}", stderr(&out));
    }
    let pgn = std::fs::read_to_string(dir.join("pair.pgn")).unwrap();
    // nodes= is kept, as fastchess keeps it (the bundled engine sends no selective depth).
    assert!(pgn.contains("s, n="), "{pgn}");
    assert_eq!(
        pgn.matches("[Event \"Study (lane 1): low vs high\"]")
            .count(),
        4,
        "{pgn}"
    );
    assert!(dir.join("pair.log").is_file());
    // outname= only names a file: nothing is read from it, and a stats=false without the
    // file it would apply to is refused.
    assert!(!dir.join("study").exists());
    refused(
        &dir,
        "-engine cmd=ENGINE -engine cmd=ENGINE -each depth=1 -config stats=false",
        "stats=false",
    );
}

/// fastchess's `-strict`: the run stops at the first game an engine loses by a fault (here an
/// illegal move at its fifth search), writes its reports and exits with code 6; `--resume`
/// goes on from there, and stops again at the next such game.
#[test]
fn strict_stops_at_the_first_fault_and_resumes() {
    let dir = scratch("theirs", "strict");
    let out = play_words(
        &dir,
        &[
            "-engine",
            "cmd=ENGINE",
            "name=good",
            "-engine",
            "cmd=ENGINE",
            "name=bad",
            "args=--fault illegal --fault-after 5",
            "-each",
            "depth=1",
            "-rounds",
            "4",
            "-repeat",
            "-strict",
            "-pgnout",
            "file=s.pgn",
        ],
    );
    assert_exit(&out, 6);
    let text = stdout(&out);
    assert!(
        text.contains("--strict: game 1 ended by an engine's fault"),
        "{text}"
    );
    // No game starts once a fault is known, however late the run's thread reads it (the
    // faulty engine, kept from game to game, would now lose each game in a few plies): with
    // one game at a time, the run ends with the game the fault ended.
    let pgn = std::fs::read_to_string(dir.join("s.pgn")).unwrap();
    let first = pgn.matches("[Event ").count();
    assert_eq!(first, 1, "no game after the fault: {pgn}");
    assert!(pgn.contains("[Termination \"illegal move\"]"), "{pgn}");
    let run = std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    assert!(run.join("report.html").is_file());
    let run = run.display().to_string();
    let out = arbiter_in(&dir, &["match", "--resume", &run]);
    assert_exit(&out, 6);
    let again = format!("--strict: game {} ", first + 1);
    assert!(stdout(&out).contains(&again), "{}", stdout(&out));
    let journal = std::fs::read_to_string(format!("{run}/journal.jsonl")).unwrap();
    assert!(journal.lines().count() > first, "{journal}");
}

#[test]
fn fastchess_single_dash_version_prints_the_version() {
    let dir = scratch("theirs", "version");
    let out = arbiter_in(&dir, &["-version"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).starts_with("arbiter "), "{}", stdout(&out));
}

/// The numbers of a line `prefix a, b, ...]` or `prefix a - b - c`: the digits runs after
/// `prefix`, as a regular expression's groups would take them.
fn numbers_after(line: &str, prefix: &str) -> Option<Vec<f64>> {
    let rest = line.strip_prefix(prefix)?;
    let numbers: Vec<f64> = rest
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|w| !w.is_empty() && *w != ".")
        .map(|w| w.parse().unwrap())
        .collect();
    Some(numbers)
}

/// fastchess's lines, read as fishtest's worker reads them: each `Games: N, Wins: W, Losses: L,
/// Draws: D, Points: P (` line is followed by a `Ptnml(0-2): [a, b, c, d, e]` line counting
/// exactly the same games in pairs (2 x their sum = N), one block per finished pair with
/// `-ratinginterval 1`, each game's line names its result, and the match ends with "Finished
/// match" after the last block.
#[test]
fn fastchess_lines_read_as_fishtest_reads_them() {
    let dir = with_book("fishtest");
    let out = played(
        &dir,
        "-engine name=New cmd=ENGINE depth=2 -engine name=Base cmd=ENGINE depth=1 -each proto=uci \
            option.Style=search -repeat -games 2 -rounds 3 -ratinginterval 1 -scoreinterval 1 \
            -report penta=true -openings file=book.epd format=epd order=random -srand 5 \
            -concurrency 2",
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(wld) = numbers_after(line, "Games: ") else {
            continue;
        };
        let ptnml = numbers_after(lines[i + 1], "Ptnml(0-2): ").expect("Ptnml after Games");
        let (games, w, l, d, points) = (wld[0], wld[1], wld[2], wld[3], wld[4]);
        assert_eq!(w + l + d, games, "{line}");
        assert_eq!(points, w + d / 2.0, "{line}");
        assert_eq!(
            2.0 * ptnml[..5].iter().sum::<f64>(),
            games,
            "{line}\n{}",
            lines[i + 1]
        );
        blocks.push(games);
    }
    assert_eq!(blocks, vec![2.0, 4.0, 6.0], "{text}");
    let finished: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("Finished game "))
        .collect();
    assert_eq!(finished.len(), 6, "{text}");
    for line in finished {
        let (_, result) = line
            .split_once("): ")
            .expect("Finished game N (A vs B): R {why}");
        assert!(
            ["1-0 {", "0-1 {", "1/2-1/2 {"]
                .iter()
                .any(|r| result.starts_with(r))
                && result.ends_with('}'),
            "{line}"
        );
    }
    let end = lines.iter().position(|l| *l == "Finished match");
    let last_block = lines.iter().rposition(|l| l.starts_with("Games: "));
    assert!(
        end > last_block,
        "Finished match after the last block: {text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l
                .starts_with("Results of New vs Base (2 plies - 1 plies, NULL, NULL, book.epd):")),
        "{text}"
    );
}

/// fishtest's worker reads every line of fastchess's output, both streams, and counts each line
/// that says "on time" or "timeout" as a game lost on time, each that says "disconnect" or
/// "stall" as a crash. Only a game's own line may say so: here more games at once than CPUs
/// under a clock (forced) make arbiter warn, and its warning must not count as a lost game.
#[test]
fn only_a_games_line_says_what_fishtest_counts_as_a_lost_game() {
    let dir = with_book("fishtest-words");
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    let out = played(
        &dir,
        &format!(
            "-engine name=New cmd=ENGINE -engine name=Base cmd=ENGINE -each proto=uci tc=2+0.05 \
             -repeat -games 2 -rounds 1 -ratinginterval 1 -report penta=true -maxmoves 12 \
             -openings file=book.epd format=epd -concurrency {} -force-concurrency -check-mate-pvs",
            cpus + 1
        ),
    );
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains("warning: "),
        "the warning this test is about: {text}"
    );
    for line in text.lines() {
        let counted = ["on time", "timeout", "disconnect", "stall"]
            .iter()
            .any(|w| line.contains(w));
        assert!(
            !counted || line.starts_with("Finished game "),
            "fishtest would count this line as a lost game: {line}"
        );
    }
}

/// cutechess-cli's lines as the scripts around it grep them: a `Score of A vs B: W - L - D
/// [score] N` line after every game, the Elo difference and the SPRT's state at the end, then
/// "Finished match"; fastchess's `-output format=cutechess` prints the same.
#[test]
fn cutechess_lines_as_scripts_grep_them() {
    let dir = with_book("cutechess-lines");
    for line in [
        "-dialect cutechess -engine name=deep cmd=ENGINE depth=2 -engine name=shallow cmd=ENGINE \
            depth=1 -each proto=uci option.Style=search -games 2 -rounds 2 -repeat -openings \
            file=book.epd format=epd order=random -srand 3 -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05",
        "-engine name=deep cmd=ENGINE depth=2 -engine name=shallow cmd=ENGINE depth=1 -each proto=uci option.Style=search -games 2 -rounds 2 -openings file=book.epd format=epd order=random -srand 3 -output format=cutechess -report penta=false -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05",
    ] {
        // Undecided, and exit code 0 as both tools give it (arbiter's own lines give 3).
        let out = play(&dir, line);
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert!(text.contains("SPRT"), "{text}");
        let scores: Vec<Vec<f64>> = text
            .lines()
            .filter_map(|l| numbers_after(l, "Score of deep vs shallow: "))
            .collect();
        assert_eq!(scores.len(), 4, "{text}");
        for (n, s) in scores.iter().enumerate() {
            let (w, l, d, score, games) = (s[0], s[1], s[2], s[3], s[4]);
            assert_eq!(games, (n + 1) as f64, "{text}");
            assert_eq!(w + l + d, games, "{text}");
            assert!((score - (w + d / 2.0) / games).abs() < 0.0005, "{text}");
        }
        assert!(
            text.lines().any(|l| l.starts_with("Score of deep vs shallow: ")
                && l.contains("  [")),
            "two spaces before the score, as cutechess-cli prints it: {text}"
        );
        let elo = text
            .lines()
            .find(|l| l.starts_with("Elo difference: "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(elo.contains(" +/- ") && elo.contains(", LOS: ") && elo.ends_with(" %"), "{elo}");
        let sprt = text.lines().find(|l| l.starts_with("SPRT: llr ")).unwrap_or("");
        assert!(sprt.contains(", lbound -2.94, ubound 2.94"), "{text}");
        assert!(text.contains("\nFinished match\n"), "{text}");
        assert!(!text.contains("Ptnml"), "{text}");
    }
}

/// Both tools add to an existing `-pgnout`/`-epdout` file: three runs into one file leave every
/// game of the three. A run resumed rewrites its own games after what the file held when it
/// started, never twice; fastchess's `append=false` replaces the file.
#[test]
fn pgnout_adds_to_the_file_as_the_tools_do() {
    let dir = scratch("theirs", "append");
    let line = "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -rounds 1 -pgnout file=acc.pgn -epdout file=acc.epd";
    for _ in 0..3 {
        played(&dir, line);
    }
    let games = |file: &str| {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        (text.matches("[Event ").count(), text.lines().count())
    };
    assert_eq!(games("acc.pgn").0, 6);
    assert_eq!(games("acc.epd").1, 6);
    // cutechess-cli's spelling adds too.
    played(&dir, "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -pgnout acc.pgn -dialect cutechess");
    assert_eq!(games("acc.pgn").0, 8);
    // A finished run resumed leaves the copies as they are.
    let run = std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .max()
        .unwrap();
    let out = arbiter_in(&dir, &["match", "--resume", run.to_str().unwrap()]);
    assert_exit(&out, 0);
    assert_eq!(games("acc.pgn").0, 8);
    played(&dir, &format!("{line} append=false"));
    assert_eq!(games("acc.pgn").0, 2);
}

/// `order=random` without `-srand`: both tools draw a seed, so repeated runs pooled afterwards
/// are different samples. arbiter draws one too, says it, and records it in run.json (which
/// `--resume` and `merge` replay).
#[test]
fn a_random_book_order_without_a_seed_draws_one_and_records_it() {
    let dir = with_book("drawn-seed");
    let line = "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -rounds 1 -openings file=book.epd format=epd order=random";
    let mut seeds = Vec::new();
    for _ in 0..2 {
        let text = stdout(&played(&dir, line));
        let seed: u64 = text
            .split("drawn seed ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no drawn seed: {text}"));
        seeds.push(seed);
    }
    assert_ne!(seeds[0], seeds[1]);
    let recorded: Vec<u64> = std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .flatten()
        .map(|e| {
            let spec = std::fs::read_to_string(e.path().join("run.json")).unwrap();
            let value: serde_json::Value = serde_json::from_str(&spec).unwrap();
            value["seed"].as_u64().unwrap()
        })
        .collect();
    for seed in &seeds {
        assert!(recorded.contains(seed), "{seeds:?} {recorded:?}");
    }
    // With -srand the seed is the user's, and nothing is drawn.
    let text = stdout(&played(&dir, &format!("{line} -srand 9")));
    assert!(!text.contains("drawn seed"), "{text}");
}

/// `format=pgn` says how the book reads, whatever its file is called (both tools read it so): a
/// PGN book named `.book` plays from its openings.
#[test]
fn a_book_reads_as_its_format_says_whatever_its_name() {
    let dir = scratch("theirs", "book-format");
    std::fs::write(
        dir.join("lines.book"),
        "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n1. d4 d5 *\n",
    )
    .unwrap();
    played(
        &dir,
        "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -rounds 2 -openings file=lines.book format=pgn -pgnout file=out.pgn",
    );
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 4, "{pgn}");
    assert!(
        pgn.contains("1. e4 {book} e5 {book}") && pgn.contains("1. d4 {book} d5 {book}"),
        "{pgn}"
    );
}

/// cutechess-cli's `stderr=FILE`: the engine's stderr is added to that file (once per run's
/// engine start), never to the referee's output; `ponder` is refused with a sentence.
#[test]
fn an_engines_stderr_goes_to_the_file_its_line_names() {
    let dir = with_book("stderr");
    std::fs::write(dir.join("err.txt"), "before\n").unwrap();
    let out = played(
        &dir,
        "-engine cmd=ENGINE name=loud arg=--fault arg=stderrflood stderr=err.txt depth=1 \
         -engine cmd=ENGINE name=quiet depth=1 -openings file=book.epd format=epd -games 2 \
         -resultformat default",
    );
    let err = std::fs::read(dir.join("err.txt")).unwrap();
    assert!(err.starts_with(b"before\n"), "added to, not replaced");
    // 4 MiB a move: every byte of it reached the file.
    assert!(err.len() > 4 << 20, "{} bytes", err.len());
    assert!(
        !stderr(&out).contains("eeee"),
        "the flood stays out of arbiter's output"
    );
    refused(
        &dir,
        "-engine cmd=ENGINE name=a depth=1 ponder -engine cmd=ENGINE name=b depth=1 -games 2 -resultformat default",
        "ponder: arbiter does not let an engine think on its opponent's time",
    );
    // The engine decides what goes into that file: never one of the run's, nor its program.
    let e = bundled_engine();
    for (target, why) in [
        ("run/journal.jsonl", "into the run's files"),
        (e.as_str(), "over a program"),
    ] {
        let out = play_words(
            &dir,
            &[
                "match",
                "--engine",
                "cmd=ENGINE",
                "name=a",
                "depth=1",
                &format!("stderr={target}"),
                "--engine",
                "cmd=ENGINE",
                "name=b",
                "depth=1",
                "--no-book",
                "--out",
                "run",
            ],
        );
        assert_ne!(out.status.code(), Some(0), "{target}");
        assert!(
            stderr(&out).contains(&format!(
                "stderr={target}: the engine's output would be written"
            )),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
        let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap_or_default();
        assert_eq!(journal, "", "no game was played");
    }
}

/// A cutechess-cli user's line as written (the engine under test built in `./target/release`,
/// the base engine `./main` beside the file its stderr goes to): the file is written where it
/// was named, though the folder is the other engine's too; a name planted as a link is not
/// written through.
#[test]
fn stderr_goes_beside_the_programs_where_the_line_names_it() {
    let dir = with_book("stderr-beside");
    std::fs::create_dir_all(dir.join("target/release")).unwrap();
    std::fs::copy(bundled_engine(), dir.join("target/release/chess-engine")).unwrap();
    std::fs::copy(bundled_engine(), dir.join("main")).unwrap();
    let line = "-engine name=dev cmd=./target/release/chess-engine arg=--fault arg=stderrflood \
                stderr=sprterr.txt -engine name=main cmd=./main -each depth=1 -games 2 \
                -openings file=book.epd format=epd -resultformat default";
    let out = played(&dir, line);
    let written = std::fs::metadata(dir.join("sprterr.txt")).map(|m| m.len());
    assert!(
        written.as_ref().is_ok_and(|&n| n > 0),
        "{written:?} {}",
        stderr(&out)
    );
    std::fs::remove_file(dir.join("sprterr.txt")).unwrap();
    std::os::unix::fs::symlink(dir.join("planted-target"), dir.join("sprterr.txt")).unwrap();
    refused(&dir, line, "stderr=sprterr.txt: it is a link");
    assert!(!dir.join("planted-target").exists());
    // A device is no one's file: `stderr=/dev/null` throws the output away.
    played(
        &dir,
        &line.replace("stderr=sprterr.txt", "stderr=/dev/null"),
    );
}

/// A cutechess-cli user's Python engine, started as its README writes it: `cmd="python3
/// engine.py --threads 2"`, a command line in one word, which cutechess-cli splits.
#[test]
fn a_command_line_in_cmd_starts_as_cutechess_starts_it() {
    let dir = with_book("cmd-line");
    // The program it runs lies beside it, where the sandbox shows it.
    let program = dir.join("uci-engine");
    std::fs::copy(bundled_engine(), &program).unwrap();
    std::fs::write(
        dir.join("engine.py"),
        format!(
            "import os, sys\nassert sys.argv[1:] == ['--threads', '2'], sys.argv\n\
             os.execv({e:?}, [{e:?}])\n",
            e = program.display().to_string()
        ),
    )
    .unwrap();
    let out = play_words(
        &dir,
        &[
            "-engine",
            "cmd=python3 engine.py --threads 2",
            "name=py",
            "-engine",
            "cmd=ENGINE",
            "name=native",
            "-each",
            "depth=1",
            "-games",
            "2",
            "-openings",
            "file=book.epd",
            "format=epd",
        ],
    );
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("Finished game 1 (py vs native)"), "{text}");
}

/// cutechess-cli's `-pgnout FILE min fi`: a minimal PGN (no comments) of the finished games,
/// the same games and moves as the run's own PGN, which keeps the engines' comments.
#[test]
fn a_minimal_pgn_holds_the_moves_without_comments() {
    let dir = with_book("minpgn");
    played(
        &dir,
        "-engine cmd=ENGINE name=a depth=2 -engine cmd=ENGINE name=b depth=2 \
         -openings file=book.epd format=epd -games 2 -resultformat default \
         -pgnout min.pgn min fi",
    );
    let min = std::fs::read_to_string(dir.join("min.pgn")).unwrap();
    assert_eq!(min.matches("[Event ").count(), 2, "{min}");
    assert!(!min.contains('{'), "{min}");
    let full = walk(&dir)
        .into_iter()
        .find(|p| p.ends_with("games.pgn"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    assert!(full.contains('{'), "the run's own PGN keeps the comments");
    let moves = |pgn: &str| -> Vec<Vec<String>> {
        arbiter::pgn::read_games(pgn)
            .unwrap()
            .into_iter()
            .map(|g| g.moves)
            .collect()
    };
    assert_eq!(moves(&min), moves(&full));
}

/// Every game's White and Black, from a PGN.
fn colours_of(pgn: &str) -> Vec<(String, String)> {
    let tag = |game: &str, name: &str| {
        game.lines()
            .find_map(|l| l.strip_prefix(&format!("[{name} \""))?.strip_suffix("\"]"))
            .unwrap_or_else(|| panic!("no {name} tag in {game}"))
            .to_string()
    };
    pgn.split("[Event ")
        .skip(1)
        .map(|game| (tag(game, "White"), tag(game, "Black")))
        .collect()
}

/// cutechess-cli gives each game its own opening unless `-repeat N` says how many games share
/// one; the colours alternate game by game all the same.
#[test]
fn openings_are_repeated_as_often_as_their_tool_repeats_them() {
    let dir = with_book("repeat");
    let book = book_positions();
    let base = "-dialect cutechess -engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b \
                depth=1 -openings file=book.epd format=epd order=sequential -rounds 6";
    for (flags, openings) in [("", [0, 1, 2, 3, 0, 1]), ("-repeat 3", [0, 0, 0, 1, 1, 1])] {
        let file = format!("r{}.pgn", flags.replace(' ', ""));
        let out = played(&dir, &format!("{base} {flags} -pgnout {file}"));
        let each = match flags {
            "" => "each game its own",
            _ => "each for 3 games in a row",
        };
        assert!(stdout(&out).contains(each), "{}", stdout(&out));
        let games = whites_and_starts(&std::fs::read_to_string(dir.join(&file)).unwrap());
        let whites: Vec<&str> = games.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(whites, ["a", "b", "a", "b", "a", "b"], "with '{flags}'");
        let starts: Vec<&str> = games.iter().map(|(_, s)| s.as_str()).collect();
        let expected: Vec<&str> = openings.iter().map(|&o| book[o].as_str()).collect();
        assert_eq!(starts, expected, "the openings with '{flags}'");
    }
}

/// `-seeds 2` in a gauntlet of four: cutechess-cli's two seeds each meet the two others;
/// fastchess's also meet each other.
#[test]
fn a_gauntlets_seeds_meet_whom_their_tool_pairs_them_with() {
    let dir = scratch("theirs", "seeds");
    let four = "-tournament gauntlet -engine cmd=ENGINE name=a -engine cmd=ENGINE name=b \
                -engine cmd=ENGINE name=c -engine cmd=ENGINE name=d -each depth=1 -games 2 -rounds 1 \
                -seeds 2 -concurrency 2";
    let pairings = |dialect: &str| {
        let file = format!("{dialect}.pgn");
        let out = played(
            &dir,
            &format!("-dialect {dialect} {four} -pgnout {file} -maxmoves 20"),
        );
        let mut met: Vec<String> = colours_of(&std::fs::read_to_string(dir.join(&file)).unwrap())
            .into_iter()
            .map(|(w, b)| if w < b { w + &b } else { b + &w })
            .collect();
        met.sort();
        (met, stdout(&out))
    };
    let (met, said) = pairings("cutechess");
    assert_eq!(
        met,
        ["ac", "ac", "ad", "ad", "bc", "bc", "bd", "bd"],
        "{said}"
    );
    let (met, said) = pairings("fastchess");
    assert_eq!(
        met,
        ["ab", "ab", "ac", "ac", "ad", "ad", "bc", "bc", "bd", "bd"],
        "{said}"
    );
}

/// The CRC-32 of `bytes` (IEEE, reflected, as zlib computes it), bit by bit: no table, no
/// crate, so that it checks arbiter's rather than repeating it.
fn crc32_by_hand(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// fishtest's worker passes `-crc32 pgn=true` and uploads the PGN only when the last token of
/// the last `has CRC32:` line equals `hex(zlib.crc32(pgn))` (worker/games.py and worker.py,
/// transcribed): arbiter prints fastchess's line (`File {} has CRC32: {:#x}`,
/// app/src/core/filesystem/file_writer.hpp) with the CRC of the file as written, games added
/// to what it held before included.
#[test]
fn crc32_of_the_pgn_is_said_as_fastchess_says_it_and_fishtest_checks_it() {
    let dir = with_book("crc32");
    std::fs::write(dir.join("acc.pgn"), "[Event \"before\"]\n\n*\n\n").unwrap();
    let out = played(
        &dir,
        "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -rounds 2 -openings file=book.epd format=epd -pgnout file=acc.pgn -crc32 pgn=true",
    );
    let text = stdout(&out);
    // worker/games.py: `if "has CRC32:" in line: pgn_file["CRC"] = line.split()[-1]`
    let said = text
        .lines()
        .rfind(|l| l.contains("has CRC32:"))
        .unwrap_or_else(|| panic!("no CRC32 line: {text}"));
    assert!(said.starts_with("File acc.pgn has CRC32: 0x"), "{said}");
    let expected = said.split_whitespace().last().unwrap();
    // worker.py: `crc_actual = hex(zlib.crc32(file_content))`
    let pgn = std::fs::read(dir.join("acc.pgn")).unwrap();
    assert!(String::from_utf8_lossy(&pgn).starts_with("[Event \"before\"]"));
    let actual = format!("{:#x}", crc32_by_hand(&pgn));
    assert_eq!(expected, actual, "{text}");
    // Before "Finished match", as fastchess prints it when it writes the file.
    let at = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
    assert!(at("has CRC32:") < at("Finished match"), "{text}");
}

/// fastchess with `-output format=cutechess` prints `Score of` after every game, its counts
/// moving only when a pair completes (roundrobin.cpp: `printResult` in each game's `finish`;
/// scoreboard.hpp: `updatePair` counts a pair once both games are in; `nan` before any):
/// chess-tuning-tools counts the lines.
#[test]
fn score_lines_follow_every_game_under_fastchess_cutechess_output() {
    let dir = with_book("score-every-game");
    let out = played(
        &dir,
        "-engine cmd=ENGINE name=deep depth=2 -engine cmd=ENGINE name=shallow depth=1 -each proto=uci -games 2 -rounds 2 -openings file=book.epd format=epd -output format=cutechess",
    );
    let text = stdout(&out);
    let scores: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Score of deep vs shallow: "))
        .collect();
    assert_eq!(scores.len(), 4, "{text}");
    let counted: Vec<u64> = scores
        .iter()
        .map(|l| l.split_whitespace().last().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counted, [0, 2, 2, 4], "{text}");
    assert!(scores[0].ends_with("0 - 0 - 0  [nan] 0"), "{}", scores[0]);
}

/// A cutechess-cli line with a cutechess-only engine key (`stderr=`) is read as cutechess-cli's,
/// whatever else it holds: `-concurrency 6` on this 2-CPU machine plays (cutechess-cli plays it;
/// fastchess alone refuses it), and `stderr=sprterr.txt`, a file beside both programs in the
/// working folder, is written as cutechess-cli writes it.
#[test]
fn a_cutechess_only_key_decides_the_dialect_and_its_stderr_file_beside_the_programs_is_written() {
    let dir = with_book("sprt-sh");
    std::fs::copy(bundled_engine(), dir.join("new")).unwrap();
    std::fs::copy(bundled_engine(), dir.join("base")).unwrap();
    let out = played(
        &dir,
        "-engine cmd=./new name=new stderr=sprterr.txt -engine cmd=./base name=base -each proto=uci depth=1 -games 2 -rounds 2 -concurrency 6 -openings file=book.epd format=epd order=random -repeat -recover",
    );
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("read as a cutechess-cli command line (it uses stderr=)"),
        "{said}"
    );
    assert!(dir.join("sprterr.txt").exists(), "{said}");
    // cutechess-cli's `-openings policy=encounter` decides the same way.
    played(
        &dir,
        "-engine cmd=./new name=new -engine cmd=./base name=base -each proto=uci depth=1 -games 2 -rounds 1 -openings file=book.epd format=epd policy=encounter",
    );
}

/// fastchess's defaults for what a line leaves out (types/draw_adjudication.hpp: movenumber 0,
/// movecount 1, score 0; types/resign_adjudication.hpp: movecount 1, score 0) and its range (any
/// `int`, cli.cpp): `-draw movenumber=100 score=1000` and `-resign score=500000` play.
/// cutechess-cli needs every key (main.cpp: `ok = (numOk && countOk && scoreOk)`), and is refused
/// the same.
#[test]
fn adjudication_keys_left_out_take_fastchess_defaults() {
    let dir = with_book("adjudication-defaults");
    played(
        &dir,
        "-engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -rounds 1 -draw movenumber=100 score=1000 -resign score=500000",
    );
    refused(
        &dir,
        "-dialect cutechess -engine cmd=ENGINE name=a depth=1 -engine cmd=ENGINE name=b depth=1 -each proto=uci -games 2 -rounds 1 -draw movenumber=100 score=1000",
        "missing movecount=",
    );
}

/// OpenBench's client (Client/bench.py and worker.py build the line) ends every fastchess line
/// with `-pgnout file=... seldepth=true nodes=true match_line='^info string pgncomment .*'`:
/// each engine move's comment then holds `n=`, `sd=` and the last matching line of the move,
/// as fastchess's pgn_builder.cpp (`createComment`) and match.cpp (`additional_lines_rgx`,
/// the last line found by `regex_search`) write them.
#[test]
fn openbench_pgnout_keeps_nodes_seldepth_and_the_matching_lines() {
    let dir = scratch("theirs", "openbench");
    // An engine that says a comment line of its own before each move, and its selective depth.
    let engine = common::script(
        &dir,
        "commenting-engine",
        &format!(
            "#!/bin/sh\n{} \"$@\" | sed -u -e 's/^info depth \\([0-9]*\\) /info depth \\1 seldepth 1\\1 /' \
             -e 's/^bestmove/info string pgncomment first\\ninfo string pgncomment last\\nbestmove/'\n",
            bundled_engine()
        ),
        0o755,
    );
    let cmd = format!("cmd={engine}");
    let out = play_words(
        &dir,
        &[
            "-engine",
            &cmd,
            "name=dev",
            "-engine",
            &cmd,
            "name=base",
            "-each",
            "tc=2+0.02",
            "-games",
            "2",
            "-rounds",
            "1",
            "-pgnout",
            "file=o.pgn",
            "seldepth=true",
            "nodes=true",
            "match_line=^info string pgncomment .*",
            // Every move's comment is checked: a few moves a game check as much as a hundred.
            "-maxmoves",
            "10",
        ],
    );
    assert_exit(&out, 0);
    let pgn = std::fs::read_to_string(dir.join("o.pgn")).unwrap();
    let comments: Vec<&str> = pgn
        .split('{')
        .skip(1)
        .filter_map(|c| c.split_once('}').map(|(c, _)| c))
        // Moves' comments: a score or a time first (not `book`, nor the game's end).
        .filter(|c| c.starts_with(['+', '-']) || c.starts_with(|d: char| d.is_ascii_digit()))
        .collect();
    assert!(comments.len() >= 4, "{pgn}");
    for c in &comments {
        let mut fields: Vec<&str> = c.split(", ").collect();
        // A game's last move's comment ends with why the game ended, as fastchess writes it.
        if fields.last().is_some_and(|f| !f.starts_with("line=")) {
            fields.pop();
        }
        assert!(fields.len() >= 3, "{c}");
        assert!(fields[1].starts_with("n="), "{c}");
        assert!(fields[2].starts_with("sd=1"), "{c}");
        assert_eq!(
            fields.last(),
            Some(&"line=\"info string pgncomment last\""),
            "{c}"
        );
    }
}

/// fastchess's `-variant fischerandom` with a book of Chess960 starts (X-FEN and Shredder-FEN
/// castling rights): the games are chess960, each from its position, moves checked by the
/// Chess960 rules, the PGN saying so.
#[test]
fn fischer_random_plays_chess960_from_its_book() {
    let dir = scratch("theirs", "chess960");
    std::fs::write(
        dir.join("frc.epd"),
        "nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w GBgb -\n\
         bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf -\n",
    )
    .unwrap();
    let out = play(
        &dir,
        "-engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each tc=2+0.02 -variant fischerandom \
         -openings file=frc.epd format=epd -rounds 2 -games 2 -pgnout file=frc.pgn -maxmoves 20",
    );
    assert_exit(&out, 0);
    let pgn = std::fs::read_to_string(dir.join("frc.pgn")).unwrap();
    assert_eq!(pgn.matches("[Variant \"chess960\"]").count(), 4, "{pgn}");
    assert_eq!(
        pgn.matches("[FEN \"nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w")
            .count(),
        2,
        "{pgn}"
    );
    // Every game replays by the Chess960 rules, as `rate --check` reads the Variant tag.
    let check = arbiter_in(&dir, &["rate", "--check", "frc.pgn"]);
    assert_exit(&check, 0);
}

/// A Polyglot entry (the format's 16 big-endian bytes) for a move in UCI text.
fn polyglot_entry(key: u64, mv: &str, weight: u16) -> Vec<u8> {
    let b = mv.as_bytes();
    let square = |f: u8, r: u8| u16::from(f - b'a') | (u16::from(r - b'1') << 3);
    let code = square(b[2], b[3]) | (square(b[0], b[1]) << 6);
    let mut out = key.to_be_bytes().to_vec();
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out
}

/// cutechess-cli's `book=FILE bookdepth=N` (chessgame.cpp, `bookMove`: a book move while the
/// plies played are fewer than twice N). The book's keys are the Polyglot format's published
/// ones (its description's examples: the start, 1. e4, 1. e4 d5, 1. e4 d5 2. e5, 2... f5).
#[test]
fn an_engines_polyglot_book_plays_its_moves_within_its_depth() {
    let dir = scratch("theirs", "polyglot");
    let mut book = Vec::new();
    // Out of order on purpose: a book that is not sorted is sorted when read.
    for (key, mv) in [
        (0x22a4_8b5a_8e47_ff78, "e1e2"),
        (0x463b_9618_1691_fc9c, "e2e4"),
        (0x823c_9b50_fd11_4196, "d7d5"),
        (0x0756_b944_61c5_0fb0, "e4e5"),
        (0x662f_afb9_65db_29d4, "f7f5"),
    ] {
        book.extend(polyglot_entry(key, mv, 1));
    }
    std::fs::write(dir.join("book.bin"), book).unwrap();
    let out = play(
        &dir,
        "-engine cmd=ENGINE name=a book=book.bin bookdepth=2 -engine cmd=ENGINE name=b \
         book=book.bin bookdepth=2 -each proto=uci tc=2+0.02 -games 2 -pgnout out.pgn -maxmoves 6",
    );
    assert_exit(&out, 0);
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    let games: Vec<&str> = pgn.split("[Event ").skip(1).collect();
    assert_eq!(games.len(), 2, "{pgn}");
    for game in games {
        let moves = game.split("\n\n").nth(1).unwrap_or_default();
        assert!(
            moves.starts_with("1. e4 {book} d5 {book} 2. e5 {book} f5 {book} 3. "),
            "{game}"
        );
        // The fifth ply is past bookdepth=2: the engine's own, not the book's Ke2.
        assert!(!moves.contains("Ke2 {book}"), "{game}");
    }
    // A book that is no Polyglot file is refused before anything is played.
    std::fs::write(dir.join("bad.bin"), b"not a book").unwrap();
    let out = play(
        &dir,
        "-engine cmd=ENGINE name=a book=bad.bin -engine cmd=ENGINE name=b -each proto=uci tc=1 \
         -games 2",
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("bad.bin: 10 bytes, not a whole number of 16-byte Polyglot entries"),
        "{}",
        stderr(&out)
    );
}

/// cutechess-cli's `conf=NAME` reads Cute Chess's engines.json in the working folder, as
/// cutechesscoreapp.cpp does; keys after it override the file's (main.cpp, `parseEngine`, reads
/// them in order); a name the file lacks is refused with cutechess-cli's words.
#[test]
fn conf_names_an_engine_of_cute_chess_engines_json() {
    let dir = scratch("theirs", "engines-json");
    let engines = serde_json::json!([
        {
            "name": "Bundled",
            "command": bundled_engine(),
            "protocol": "uci",
            "whitepov": false,
            "options": [
                {"name": "Style", "type": "combo", "value": "greedy", "default": "search",
                 "choices": ["random", "greedy", "search"]},
                {"name": "Seed", "type": "spin", "value": 0, "default": 0}
            ]
        }
    ]);
    std::fs::write(dir.join("engines.json"), engines.to_string()).unwrap();
    let out = play(
        &dir,
        "-engine conf=Bundled -engine conf=Bundled name=Other -each tc=2+0.02 -games 2 \
         -pgnout games.pgn",
    );
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("Style=greedy"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("Seed="), "{}", stdout(&out));
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    assert!(
        pgn.contains("[White \"Bundled\"]") && pgn.contains("[White \"Other\"]"),
        "{pgn}"
    );
    refused(
        &dir,
        "-engine conf=Fruit -engine conf=Bundled -each tc=1 -games 2",
        "Unknown engine configuration: Fruit (engines.json holds Bundled)",
    );
}

/// An EPD line with a FEN's two counters (fastchess's opening_books.sh): the half-move clock
/// and the move number reach the PGN's FEN, its move numbers, the engine's `position` line and
/// the fifty-move rule. At 99 half-moves, the first quiet move draws.
#[test]
fn an_epd_keeps_its_move_counters() {
    let dir = scratch("theirs", "epd-counters");
    std::fs::write(dir.join("book.epd"), "8/8/4k3/8/8/3RK3/8/8 w - - 99 80\n").unwrap();
    let out = played(
        &dir,
        "-variant chess -engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each depth=2 \
         -openings file=book.epd format=epd -rounds 1 -games 2 -pgnout file=games.pgn \
         -log file=io.log",
    );
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    assert!(
        pgn.contains("[FEN \"8/8/4k3/8/8/3RK3/8/8 w - - 99 80\"]"),
        "{pgn}"
    );
    assert!(
        pgn.contains("\n80. R"),
        "the moves are numbered from 80: {pgn}"
    );
    assert_eq!(pgn.matches("1/2-1/2\n").count(), 2, "{pgn}");
    assert!(
        pgn.contains("[PlyCount \"1\"]"),
        "drawn at the first quiet move: {pgn}"
    );
    let log = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert!(
        log.contains("position fen 8/8/4k3/8/8/3RK3/8/8 w - - 99 80"),
        "{log}"
    );
    drop(out);
}

/// What fishtest's and OpenBench's workers read from fastchess, under a fastchess line: the
/// illegal-move warning (fishtest stops a run for it), `abandoned` for a crash (OpenBench
/// reports it), the reason inside the last move's comment, and the per-player block.
#[test]
fn the_wrappers_see_every_event_fastchess_shows_them() {
    let dir = scratch("theirs", "wrapper-events");
    let out = play(
        &dir,
        "-variant chess -engine cmd=ENGINE name=New args=--fault=illegal \
         -engine cmd=ENGINE name=Base -each nodes=200 -rounds 1 -games 2 -pgnout file=a.pgn",
    );
    let text = stdout(&out);
    assert!(text.contains("Warning; Illegal move "), "{text}");
    assert!(text.contains(" played by New\n"), "{text}");
    let pgn = std::fs::read_to_string(dir.join("a.pgn")).unwrap();
    assert!(pgn.contains("[Termination \"illegal move\"]"), "{pgn}");
    assert!(
        !pgn.contains("} {"),
        "no comment after the last move's: {pgn}"
    );
    let out = play(
        &dir,
        "-variant chess -engine cmd=ENGINE name=Crasher args=--fault=crash \
         -engine cmd=ENGINE name=Base -each nodes=200 -rounds 1 -games 2 -recover \
         -pgnout file=b.pgn",
    );
    let text = stdout(&out);
    assert!(
        text.contains("Player: Crasher\n  Timeouts: 0\n  Crashed: 2\n"),
        "{text}"
    );
    let pgn = std::fs::read_to_string(dir.join("b.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Termination \"abandoned\"]").count(),
        2,
        "{pgn}"
    );
}

/// An engines.json that came with a downloaded engine, in the working folder: its stderrFile
/// names a file of the author's choosing (`/etc/cron.d/x` would run code as root) and an
/// option names a secret for the engine to read. Neither is taken from the file, and nothing
/// is written; the user's own `stderr=` on the line is.
#[test]
fn a_planted_engines_json_chooses_no_path() {
    let dir = scratch("theirs", "engines-json-planted");
    let victim = dir.join("victim");
    let secret = dir.join("secret");
    std::fs::write(&secret, "s3cret").unwrap();
    let engines = serde_json::json!([
        {
            "name": "Evil",
            "command": bundled_engine(),
            "stderrFile": victim.display().to_string(),
            "options": [
                {"name": "Style", "type": "combo", "value": "greedy", "default": "search"},
            ]
        },
        {
            "name": "Reader",
            "command": bundled_engine(),
            "options": [{"name": "VariantPath", "type": "string",
                         "value": secret.display().to_string()}]
        }
    ]);
    std::fs::write(dir.join("engines.json"), engines.to_string()).unwrap();
    refused(
        &dir,
        "-engine conf=Evil -engine conf=Evil name=B -each tc=2+0.02 -games 2",
        "may have come with the engine",
    );
    assert!(!victim.exists(), "the file's stderrFile was written");
    refused(
        &dir,
        "-engine conf=Reader -engine conf=Evil name=B stderr=mine.txt -each tc=2+0.02 -games 2",
        "option.VariantPath=",
    );
    played(
        &dir,
        "-engine conf=Evil stderr=mine.txt -engine conf=Evil name=B stderr=theirs.txt \
         -each tc=2+0.02 -games 2",
    );
    assert!(!victim.exists(), "the file's stderrFile was written");
    assert!(
        dir.join("mine.txt").exists(),
        "the line's stderr= is the user's own"
    );
}

/// fastchess's and cutechess-cli's `-tb`: games end once their position is in the Syzygy
/// tables (tests/syzygy: every 3-piece ending and KQvKR, checksums as published), probed
/// after a capture or a pawn move as fastchess probes (matchmaking/syzygy.cpp
/// `canProbeSyzgyWdl`), with fastchess's words (match/match.hpp `ADJUDICATION_TB_WIN_MSG`,
/// `ADJUDICATION_TB_DRAW_MSG`) and the PGN's Termination "adjudication". Each start has one
/// legal move, a capture: into KRvK (won) and into a rook's pawn against the king in its
/// corner (drawn). `-tbadjudicate DRAW` leaves the won game to be played out.
#[test]
fn tablebase_adjudication_ends_games_as_fastchess_and_cutechess_end_them() {
    let dir = scratch("theirs", "syzygy");
    std::fs::write(
        dir.join("book.epd"),
        "4k3/8/8/8/8/8/4q3/R3K3 w - - id \"won\";\nk7/8/8/8/8/8/P3q3/4K3 w - - id \"drawn\";\n",
    )
    .unwrap();
    let tables = format!("{}/tests/syzygy", env!("CARGO_MANIFEST_DIR"));
    let games = |pgn: &str| -> Vec<(String, String)> {
        let text = std::fs::read_to_string(dir.join(pgn)).unwrap();
        text.split("[Event ")
            .skip(1)
            .map(|g| {
                let tag = |t: &str| {
                    g.lines()
                        .find_map(|l| l.strip_prefix(&format!("[{t} \"")))
                        .map(|v| v.trim_end_matches("\"]").to_string())
                        .unwrap_or_default()
                };
                (tag("Result"), tag("Termination") + " " + &tag("PlyCount"))
            })
            .collect()
    };
    let out = played(
        &dir,
        &format!(
            "-engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each tc=1+0.01 -rounds 2 -repeat -openings file=book.epd format=epd order=sequential -tb {tables} -tbpieces 4 -pgnout file=fast.pgn"
        ),
    );
    let text = stdout(&out);
    assert_eq!(
        text.matches("{White wins by adjudication: SyzygyTB}")
            .count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.matches("{Draw by adjudication: SyzygyTB}").count(),
        2,
        "{text}"
    );
    assert_eq!(
        games("fast.pgn"),
        [
            ("1-0", "adjudication 1"),
            ("1-0", "adjudication 1"),
            ("1/2-1/2", "adjudication 1"),
            ("1/2-1/2", "adjudication 1")
        ]
        .map(|(r, t)| (r.to_string(), t.to_string()))
    );
    let pgn = std::fs::read_to_string(dir.join("fast.pgn")).unwrap();
    assert!(pgn.contains("1. Kxe2 {"), "{pgn}");
    // The same from cutechess-cli's line (its -pgnout FILE, its -tb).
    played(
        &dir,
        &format!(
            "-engine cmd=ENGINE name=a proto=uci -engine cmd=ENGINE name=b proto=uci -each tc=1+0.01 -rounds 2 -games 2 -openings file=book.epd format=epd order=sequential -tb {tables} -tbpieces 3 -pgnout cute.pgn"
        ),
    );
    // Its games in its own order (cutechess-cli's pairs), the same games.
    let sorted = |mut g: Vec<(String, String)>| {
        g.sort();
        g
    };
    assert_eq!(sorted(games("cute.pgn")), sorted(games("fast.pgn")));
    // Only draws asked for: the won games are played on, here to the move limit.
    played(
        &dir,
        &format!(
            "-engine cmd=ENGINE name=a -engine cmd=ENGINE name=b -each tc=1+0.01 depth=2 -rounds 1 -repeat -openings file=book.epd format=epd order=sequential -tb {tables} -tbadjudicate DRAW -maxmoves 10 -pgnout file=draws.pgn"
        ),
    );
    let draws = std::fs::read_to_string(dir.join("draws.pgn")).unwrap();
    assert!(!draws.contains("wins by adjudication: SyzygyTB"), "{draws}");
    assert!(
        draws.contains("[PlyCount \"20\"]") || draws.contains("checkmate"),
        "{draws}"
    );
    // A folder without tables is refused by name before anything plays.
    let out = play(
        &dir,
        "-engine cmd=ENGINE -engine cmd=ENGINE -each tc=1 -tb /nonexistent/syzygy",
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("/nonexistent/syzygy"),
        "{}",
        stderr(&out)
    );
}

/// fastchess checks every line an engine reports (match.cpp `verifyPvLines`, for each move
/// played) and, with `-check-mate-pvs`, that a mate score's line is that long and ends in mate;
/// its warnings (`pvWarningFormat`) are what fishtest's worker and engine authors grep for. The
/// bundled engine's own lines are clean; behind a wrapper that turns every score into
/// `score mate 3` (its lines are not mates), each move draws fastchess's mate warning, and the
/// moves played are the lines' first, so no bestmove warning.
#[test]
fn reported_lines_are_checked_as_fastchess_checks_them() {
    let dir = scratch("theirs", "pvs");
    let clean = played(
        &dir,
        "-engine cmd=ENGINE name=a depth=3 -engine cmd=ENGINE name=b depth=3 -each tc=2+0.02 -rounds 1 -repeat -maxmoves 12 -check-mate-pvs",
    );
    assert!(!stdout(&clean).contains("Warning;"), "{}", stdout(&clean));
    let engine = common::script(
        &dir,
        "mate-claiming-engine",
        &format!(
            "#!/bin/sh\n{} \"$@\" | sed -u -e 's/score cp -\\?[0-9]*/score mate 3/'\n",
            bundled_engine()
        ),
        0o755,
    );
    let line = |tail: &str| {
        format!(
            "-engine cmd={engine} name=claims depth=3 -engine cmd=ENGINE name=b depth=3 -each tc=2+0.02 -rounds 1 -repeat -maxmoves 6{tail}"
        )
    };
    let out = played(&dir, &line(" -check-mate-pvs"));
    let text = stdout(&out);
    let warned: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Warning; "))
        .collect();
    assert!(!warned.is_empty(), "{text}");
    for w in &warned {
        assert!(
            [
                "Warning; Incomplete mating PV - from claims",
                "Warning; Too long mating PV - from claims",
                "Warning; Mating PV does not end with checkmate - from claims",
            ]
            .contains(w),
            "{w}\n{text}"
        );
    }
    // Each warning is followed by the line, the start and the moves, as fastchess prints them.
    let first = text.find("Warning; ").unwrap();
    let block: Vec<&str> = text[first..].lines().take(4).collect();
    assert!(
        block[1].starts_with("Info; info ") && block[1].contains(" score mate 3 "),
        "{block:?}"
    );
    assert!(block[2].starts_with("Position; "), "{block:?}");
    assert!(block[3].starts_with("Moves; "), "{block:?}");
    // Without -check-mate-pvs the lines are still legal and lead with the move played.
    let out = played(&dir, &line(""));
    assert!(!stdout(&out).contains("Warning;"), "{}", stdout(&out));
}

/// fastchess says when each game starts, and warns that an engine is not responsive when one
/// dies or stalls in a game (its `isready` goes unanswered); fishtest's worker posts that warning
/// to its log. Under a fastchess line arbiter says both, the warning before the game's line.
#[test]
fn a_fastchess_line_says_each_start_and_an_engine_that_stopped_answering() {
    let dir = scratch("theirs", "not-responsive");
    let out = play_words(
        &dir,
        &[
            "-engine",
            "cmd=ENGINE",
            "name=good",
            "-engine",
            "cmd=ENGINE",
            "name=crasher",
            "args=--fault crash --fault-after 3",
            "-each",
            "depth=1",
            "-rounds",
            "1",
            "-games",
            "2",
            "-recover",
        ],
    );
    assert_exit(&out, 0);
    let text = stdout(&out);
    for (game, white, black) in [(1, "good", "crasher"), (2, "crasher", "good")] {
        let started = format!("Started game {game} of 2 ({white} vs {black})");
        let at = text
            .find(&started)
            .unwrap_or_else(|| panic!("{started}: {text}"));
        let finished = text
            .find(&format!("Finished game {game} ("))
            .unwrap_or_else(|| panic!("game {game} finished: {text}"));
        assert!(at < finished, "{text}");
    }
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("Finished game ") && line.contains("disconnects") {
            assert_eq!(
                lines[i - 1],
                "Warning; Engine crasher is not responsive",
                "{text}"
            );
        }
    }
    assert!(text.contains("disconnects"), "{text}");
}

/// fastchess compares the last PV with a move the rules allow only: an illegal move is warned
/// of as one ("Warning; Illegal move", which stops a fishtest run), never first as a move that
/// does not match its PV.
#[test]
fn an_illegal_move_is_warned_of_as_illegal_not_as_a_pv_mismatch() {
    let dir = scratch("theirs", "illegal-pv");
    let out = play_words(
        &dir,
        &[
            "-engine",
            "cmd=ENGINE",
            "name=good",
            "-engine",
            "cmd=ENGINE",
            "name=bad",
            "args=--fault illegal --fault-after 3",
            "-each",
            "depth=2",
            "-rounds",
            "1",
            "-games",
            "1",
            "-check-mate-pvs",
        ],
    );
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("Warning; Illegal move "), "{text}");
    assert!(!text.contains("Bestmove does not match"), "{text}");
}
