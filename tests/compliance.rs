//! `arbiter compliance` and fastchess's `--compliance ENGINE [ARGS]`, on the bundled engine as
//! it is and misbehaving on purpose: the first failing step is named, with the engine's output.

use crate::common;

use common::{arbiter, assert_exit, bundled_engine, stderr, stdout};

#[test]
fn the_bundled_engine_passes_every_step_in_chess() {
    let engine = bundled_engine();
    let out = arbiter(&["compliance", "--option", "UCI_Variant=chess", &engine]);
    let text = stdout(&out);
    assert_exit(&out, 0);
    assert!(
        text.contains("Engine passed all compliance checks."),
        "{text}"
    );
    assert!(!text.contains("Failed"), "{text}");
    // Every step said as it passed, the referee's own among them.
    assert!(text.contains("Passed step 1: Start the engine"), "{text}");
    assert!(text.contains("a legal bestmove"), "{text}");
    assert!(text.contains("quit: the engine leaves"), "{text}");
}

#[test]
fn an_illegal_move_fails_its_step_in_fastchess_form() {
    // As fastchess's README writes it: the engine's arguments in one word, split on spaces.
    let engine = bundled_engine();
    let out = arbiter(&["--compliance", &engine, "--fault illegal"]);
    let text = stdout(&out);
    assert_exit(&out, 1);
    assert!(
        text.contains("Failed step 7: go wtime 100: a legal bestmove") && text.contains("illegal"),
        "{text}"
    );
    assert!(!text.contains("passed all"), "{text}");
    // What the engine wrote is shown, up to the move refused.
    assert!(stderr(&out).contains("bestmove"), "{}", stderr(&out));
}

#[test]
fn an_engine_in_another_game_or_writing_garbage_fails() {
    // In its own game the bundled engine answers chess positions with no legal chess move.
    let engine = bundled_engine();
    let out = arbiter(&["compliance", &engine]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains("Failed step 7") && text.contains("a chess move looks like"),
        "{text}"
    );
    // `info depth banana` and a bestmove of junk.
    fails_its_first_search("garbage", "malformed move '@@junk@@'");
}

#[test]
fn a_stalled_engine_fails_its_step_instead_of_hanging() {
    fails_its_first_search("stall", "no 'bestmove' within 10 s");
}

#[test]
fn an_engine_that_stays_after_quit_fails_the_last_step() {
    let text = stdout(&in_chess_with("ignorequit", 1));
    assert!(
        text.contains("Failed step 17: quit: the engine leaves: still running 10 s"),
        "{text}"
    );
}

#[test]
fn a_five_megabyte_line_or_a_flood_of_reports_is_no_fault() {
    for fault in ["longline", "infoflood"] {
        let text = stdout(&in_chess_with(fault, 0));
        assert!(
            text.contains("Engine passed all compliance checks."),
            "{fault}: {text}"
        );
    }
}

/// The bundled engine in chess with `--fault <fault>` fails the first search, saying `why`.
fn fails_its_first_search(fault: &str, why: &str) {
    let text = stdout(&in_chess_with(fault, 1));
    assert!(
        text.contains("Failed step 7") && text.contains(why),
        "{text}"
    );
}

/// The check of the bundled engine in chess with `--fault <fault>`, which exits with `code`.
fn in_chess_with(fault: &str, code: i32) -> std::process::Output {
    let engine = bundled_engine();
    let chess = ["compliance", "-o", "UCI_Variant=chess", &engine];
    let out = arbiter(&[&chess[..], &["--fault", fault]].concat());
    assert_exit(&out, code);
    out
}

#[test]
fn a_missing_engine_or_a_bad_option_is_bad_input() {
    let out = arbiter(&["--compliance", "/no/such/engine"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("/no/such/engine"), "{}", stderr(&out));
    let out = arbiter(&["compliance", "-o", "Threads", &bundled_engine()]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("NAME=VALUE"), "{}", stderr(&out));
}
