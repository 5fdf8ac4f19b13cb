//! An engine option the engine does not offer, or a value it would refuse, stops the run before
//! the first game (exit 2, nothing written), from every place options are written: `--engine`,
//! `--each`, a TOML file, the MIT autotester's `.txt`, fastchess's `config.json`, and CECP.
//! Otherwise a typo (`option.Stlye=greedy`) turns an SPRT into an engine against itself.

use crate::common;

use common::{arbiter_in, bundled_engine, scratch, stderr};
use std::path::Path;

/// What is in `dir` besides the files the test put there.
fn written(dir: &Path, own: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !own.contains(&n.as_str()))
        .collect()
}

/// Runs `args` in `dir`, which must be refused with exit 2 and a message holding every one of
/// `expected`, leaving nothing behind.
fn refused(dir: &Path, args: &[&str], own: &[&str], expected: &[&str]) {
    let out = arbiter_in(dir, args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for e in expected {
        assert!(err.contains(e), "{args:?}: expected '{e}' in: {err}");
    }
    assert_eq!(written(dir, own), Vec::<String>::new(), "{args:?}");
}

#[test]
fn command_line_options_are_checked_against_what_the_engine_offers() {
    let dir = scratch("options", "flags");
    let e = format!("cmd={}", bundled_engine());
    let base = |extra: &'static str| {
        vec![
            "match", "--games", "2", "--engine", &e, "name=new", extra, "--engine", &e, "name=old",
            "--each", "depth=1", "--out", "run",
        ]
    };
    refused(
        &dir,
        &base("option.Stlye=greedy"),
        &[],
        &["engine 'new'", "'Stlye'", "Style (random/greedy/search)"],
    );
    refused(
        &dir,
        &base("option.Style=serch"),
        &[],
        &["Style=serch", "random, greedy, search"],
    );
    refused(
        &dir,
        &base("option.Seed=4294967296"),
        &[],
        &["Seed=4294967296", "0..2147483647"],
    );
    // In --each, every engine is at fault: the first one is named.
    let mut each = base("option.Style=search");
    each.insert(each.len() - 2, "option.Sed=3");
    refused(&dir, &each, &[], &["engine 'new'", "'Sed'"]);
    // Names are read without case, as UCI engines read them; a right value plays.
    let mut fine = base("option.style=greedy");
    fine.retain(|a| *a != "--out" && *a != "run");
    let out = arbiter_in(&dir, &[&fine[..], &["--quiet", "--out", "ok"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn cecp_options_are_checked_too() {
    let dir = scratch("options", "cecp");
    let e = format!("cmd={}", bundled_engine());
    refused(
        &dir,
        &[
            "match",
            "--game",
            "ultima",
            "--games",
            "2",
            "--engine",
            &e,
            "arg=--protocol",
            "arg=xboard",
            "proto=xboard",
            "name=x",
            "option.Style=serch",
            "--engine",
            &e,
            "name=u",
            "--each",
            "depth=1",
        ],
        &[],
        &["engine 'x'", "Style=serch", "random, greedy, search"],
    );
}

#[test]
fn a_toml_file_with_a_misspelt_option_is_refused() {
    let dir = scratch("options", "toml");
    let e = bundled_engine();
    let toml = format!(
        "game = \"ultima\"\nrounds = 1\n[each]\ndepth = 1\n\n[[engine]]\nname = \"a\"\ncmd = \
            \"{e}\"\noptions = {{ Stlye = \"greedy\" }}\n\n[[engine]]\nname = \"b\"\ncmd = \
            \"{e}\"\n"
    );
    std::fs::write(dir.join("t.toml"), toml).unwrap();
    refused(
        &dir,
        &["run", "t.toml"],
        &["t.toml"],
        &["engine 'a'", "'Stlye'"],
    );
}

/// The autotester's `.txt`: every key it does not know becomes `setoption`, so a misspelt key
/// used to be sent and ignored. The MIT player's options are its own (`style` is 0..2).
#[test]
fn an_autotester_file_with_an_option_the_player_lacks_is_refused() {
    let dir = scratch("options", "mit");
    let e = bundled_engine();
    let player = |extra: &str| {
        format!(
            "title = typo\ngame_rounds = 2\n\nplayer = ref\ninvoke = {e} --dialect \
                leiserchess\ndepth = 1\n\nplayer = new\ninvoke = {e} --dialect leiserchess\ndepth \
                = 1\n{extra}\n"
        )
    };
    std::fs::write(dir.join("a.txt"), player("Style = greedy")).unwrap();
    refused(
        &dir,
        &["run", "a.txt", "--out", "r"],
        &["a.txt"],
        &["engine 'new'", "Style=greedy", "whole number"],
    );
    std::fs::write(dir.join("b.txt"), player("stlye = 1")).unwrap();
    refused(
        &dir,
        &["run", "b.txt", "--out", "r"],
        &["a.txt", "b.txt"],
        &["engine 'new'", "'stlye'", "style (0..2)"],
    );
}

#[test]
fn a_fastchess_config_with_an_unknown_option_is_refused() {
    let dir = scratch("options", "config");
    let e = bundled_engine();
    let engine = |name: &str, option: &str| {
        format!(
            r#"{{"name": "{name}", "dir": "", "cmd": "{e}", "args": "", "restart": false,
              "options": [["{option}", "search"]],
              "limit": {{"tc": {{"increment": 0, "fixed_time": 0, "time": 0, "moves": 0, "timemargin": 0}},
                         "nodes": 0, "plies": 1}}, "variant": 0}}"#
        )
    };
    let json = format!(
        r#"{{"games": 2, "rounds": 1, "concurrency": 1, "seed": 1, "variant": 0, "type": 0,
            "engines": [{}, {}]}}"#,
        engine("good", "Style"),
        engine("typo", "Stlye")
    );
    std::fs::write(dir.join("config.json"), json).unwrap();
    refused(
        &dir,
        &["-config", "file=config.json"],
        &["config.json"],
        &["engine 'typo'", "'Stlye'"],
    );
}
