//! Engines configured as their users configure them: Fairy-Stockfish taught leaperhouse through
//! `VariantPath` (the bundled engine imitating it: its variant list grows once the file is
//! loaded), the MIT player's clock dialect on the 2012 game, `restart=on|off`, a bare `cmd=` in
//! the working folder, and what the errors say.

use crate::common;

use common::{
    arbiter_in, assert_exit, bundled_engine, rule_text, scratch, stderr, stdout, succeed_in,
};

/// A variants.ini that teaches Fairy-Stockfish leaperhouse.
fn variants_ini() -> String {
    common::data("leaperhouse-variants.ini")
}

/// The tests' variants.ini defines leaperhouse as the rule text's own definition does: the same
/// keys with the same values (CI runs this with `--ignored`, where the texts lie).
#[test]
#[ignore = "reads the rule texts in ../shared/rules"]
fn the_tests_variants_ini_is_the_rule_texts_definition() {
    let keys = |text: &str| {
        let mut keys: Vec<(String, String)> = text
            .lines()
            .skip_while(|l| !l.starts_with("[leaperhouse]"))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&variants_ini()), keys(&rule_text("leaperhouse.txt")));
}

#[test]
fn fairy_stockfish_learns_leaperhouse_from_variant_path() {
    let dir = scratch("setups", "variantpath");
    std::fs::write(dir.join("variants.ini"), variants_ini()).unwrap();
    let e = format!("cmd={}", bundled_engine());
    let args = |extra: &'static str| {
        vec![
            "match",
            "--game",
            "leaperhouse",
            "--games",
            "2",
            "--engine",
            &e,
            "name=fsf",
            "arg=--variants-from-path",
            extra,
            "--engine",
            &e,
            "name=plain",
            "--each",
            "depth=1",
            "--log",
            "io.log",
        ]
    };
    // Without the file the engine knows only chess: refused, and the message says what to do.
    let out = arbiter_in(&dir, &args("option.Seed=1"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("offers chess") && stderr(&out).contains("option.VariantPath="),
        "{}",
        stderr(&out)
    );
    // With it, as its users write it: the options go first, the variant list is read again.
    let out = arbiter_in(&dir, &args("option.VariantPath=variants.ini"));
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("2 games"), "{}", stdout(&out));
    let log = std::fs::read_to_string(dir.join("io.log")).unwrap();
    let to_fsf: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("fsf >"))
        .map(|l| l.split("fsf > ").nth(1).unwrap_or(""))
        .collect();
    let path_at = to_fsf
        .iter()
        .position(|l| l.contains("VariantPath"))
        .unwrap();
    let variant_at = to_fsf
        .iter()
        .position(|l| l.contains("UCI_Variant value leaperhouse"))
        .unwrap();
    assert!(path_at < variant_at, "{to_fsf:?}");
    assert_eq!(
        to_fsf[path_at + 1],
        "uci",
        "the list is asked for again: {to_fsf:?}"
    );
    // The file anywhere else, named by its full path, as users of a shared variants.ini do:
    // the engine's sandbox lets it read the file its option names.
    let shared = scratch("setups", "variantpath-shared");
    let elsewhere = shared.join("variants.ini");
    std::fs::write(&elsewhere, variants_ini()).unwrap();
    let named = format!("option.VariantPath={}", elsewhere.display());
    let named: &'static str = Box::leak(named.into_boxed_str());
    let words: Vec<String> = [&args(named)[..], &["--out", "shared"]]
        .concat()
        .iter()
        .map(|w| w.to_string())
        .collect();
    succeed_in(&dir, &words);
}

/// The 2012 MIT player speaks the 2018 player's `go time .. inc ..`: the dialect is allowed on
/// both Leiserchess games, so it can play under a clock.
#[test]
fn the_mit_dialect_plays_leiserchess2012_under_a_clock() {
    let dir = scratch("setups", "mit2012");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--game",
            "leiserchess2012",
            "--games",
            "2",
            "--engine",
            &e,
            "name=mit2012",
            "proto=leiserchess",
            "arg=--dialect",
            "arg=leiserchess",
            "arg=--game",
            "arg=leiserchess2012",
            "--engine",
            &e,
            "name=uci",
            "--each",
            "tc=3+0.1",
            "--log",
            "io.log",
            "--max-plies",
            "20",
        ],
    );
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(!text.contains("time forfeit"), "{text}");
    let log = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("mit2012 > go time ") && l.contains(" inc ")),
        "the clock reaches the player in its words"
    );
}

/// One process plays all of a worker's games unless `restart=on` asks for a new one each game.
#[test]
fn restart_on_starts_a_process_per_game() {
    let dir = scratch("setups", "restart");
    let e = format!("cmd={}", bundled_engine());
    let uci_count = |restart: &'static str, log: &'static str| {
        let out = arbiter_in(
            &dir,
            &[
                "match", "--game", "ultima", "--games", "4", "--engine", &e, "name=a", restart,
                "--engine", &e, "name=b", "--each", "depth=1", "--log", log, "--quiet",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = std::fs::read_to_string(dir.join(log)).unwrap();
        let count = |who: &str| {
            text.lines()
                .filter(|l| l.ends_with(&format!("{who} > uci")))
                .count()
        };
        (count("a"), count("b"))
    };
    assert_eq!(uci_count("restart=on", "on.log"), (4, 1));
    assert_eq!(uci_count("restart=off", "off.log"), (1, 1));
}

/// cutechess-cli and fastchess find `cmd=Engine1.exe` in the working folder (or `dir=`) before
/// PATH; a time control in minutes:seconds, as in cutechess's manual, is read; a bad value in
/// `-each` is blamed on `--each`.
#[test]
fn their_engines_are_found_where_their_tools_look() {
    let dir = scratch("setups", "bare");
    std::os::unix::fs::symlink(bundled_engine(), dir.join("Engine1.exe")).unwrap();
    std::fs::create_dir(dir.join("engines")).unwrap();
    std::os::unix::fs::symlink(bundled_engine(), dir.join("engines/Engine2.exe")).unwrap();
    let line = "-engine cmd=Engine1.exe -engine cmd=Engine2.exe dir=engines -each tc=40/0:02+0.02 \
        -variant ultima -maxmoves 4";
    let args: Vec<&str> = line.split_whitespace().collect();
    let out = arbiter_in(&dir, &args);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    // fastchess's reading (nothing here is only cutechess-cli's): 2 x 2 games, names without
    // the extension.
    assert!(text.contains("read as a fastchess command line"), "{text}");
    assert!(text.contains("Engine1 vs Engine2"), "{text}");
    assert!(text.contains("4 games"), "{text}");

    let bad = "-engine cmd=Engine1.exe -engine cmd=Engine1.exe -each tc=40/1:x -variant ultima";
    let out = arbiter_in(&dir, &bad.split_whitespace().collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--each: engine setting tc=40/1:x"),
        "{}",
        stderr(&out)
    );
}

/// An engine that never finishes its handshake: the message names the whole allowance.
#[test]
fn the_handshake_time_out_names_the_allowance_given() {
    let dir = scratch("setups", "handshake");
    let e = format!("cmd={}", bundled_engine());
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--game",
            "ultima",
            "--engine",
            &e,
            "name=mute",
            "arg=--fault",
            "arg=nouciok",
            "handshake=1",
            "--engine",
            &e,
            "name=b",
            "--each",
            "depth=1",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did not answer 'uci' within 1.0 s"),
        "{}",
        stderr(&out)
    );
}

/// Two Fairy-Stockfish-based engines expect its reading of repetition: a run can choose it, and
/// says so in the report and in every game's PGN.
#[test]
fn a_run_can_take_fairy_stockfishs_reading_of_repetition() {
    let dir = scratch("setups", "rules");
    let e = format!("cmd={}", bundled_engine());
    let args = |game: &'static str, rule: &'static str, out: &'static str| {
        vec![
            "match", "--game", game, "--games", "2", "--engine", &e, "name=a", "--engine", &e,
            "name=b", "--each", "depth=1", "--rules", rule, "--out", out, "--quiet",
        ]
    };
    let out = arbiter_in(
        &dir,
        &args("leaperhouse", "repetition=fairy-stockfish", "run"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Rules \"repetition=fairy-stockfish\"]")
            .count(),
        2,
        "{pgn}"
    );
    let md = std::fs::read_to_string(dir.join("run/report.md")).unwrap();
    assert!(
        md.contains("leaperhouse (rules: repetition=fairy-stockfish)"),
        "{md}"
    );
    for (game, rule, why) in [
        (
            "leaperhouse",
            "repetition=fsf",
            "repetition=prose|fairy-stockfish",
        ),
        (
            "ultima",
            "repetition=fairy-stockfish",
            "ultima has no rule option",
        ),
    ] {
        let out = arbiter_in(&dir, &args(game, rule, "refused"));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
        assert!(!dir.join("refused").exists());
    }
}
