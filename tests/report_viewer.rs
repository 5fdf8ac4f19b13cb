//! The report's game viewer in a real browser: Debian's chromium (headless), which `.ci/run`
//! installs and runs this test for with `--ignored`. The page's own script draws the board; the
//! test opens a game at the ply where the referee recorded a zap (found by replaying the game
//! through `arbiter replay`, not from the page) and checks the drawn beam ends on that square.

mod common;

use common::{arbiter, arbiter_in, bundled_engine, scratch, stderr, stdout};
use std::process::Command;

fn chromium(args: &[&str]) -> std::process::Output {
    let bin = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&bin).is_file(),
        "no chromium at {bin}: install Debian's chromium package (as .ci/run does) or set CHROMIUM"
    );
    let profile = std::env::temp_dir().join(format!("arbiter-chromium-{}", std::process::id()));
    Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(args)
        .output()
        .expect("chromium runs")
}

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    Some(&text[from..from + text[from..].find(end)?])
}

#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn the_viewer_draws_the_beam_to_the_zapped_piece() {
    let dir = scratch("viewer", "beam");
    let e = bundled_engine();
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--games",
            "4",
            "--engine",
            &format!("cmd={e}"),
            "name=a",
            "depth=2",
            "--engine",
            &format!("cmd={e}"),
            "name=b",
            "depth=1",
            "option.Style=greedy",
            "--out",
            "run",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let page = dir.join("run/report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script src"), "nothing fetched");
    // The first game in the viewer's list, and its moves from the journal.
    let id: u64 = between(&html, "<option value=\"0\">#", " ")
        .unwrap()
        .parse()
        .unwrap();
    let journal = std::fs::read_to_string(dir.join("run/journal.jsonl")).unwrap();
    let entry: serde_json::Value = journal
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["index"].as_u64() == Some(id - 1))
        .unwrap();
    let moves: Vec<String> = entry["record"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect();
    let mut args = vec!["replay".to_string(), "leiserchess".into()];
    args.extend(moves);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let replay = stdout(&arbiter(&args));
    // "ply 45 f5f6L removed NN@f7": the last zap of the game.
    let (ply, square) = replay
        .lines()
        .rev()
        .filter(|l| l.contains(" removed "))
        .find_map(|l| {
            let ply: usize = l.split_whitespace().nth(1)?.parse().ok()?;
            Some((ply, l.rsplit('@').next()?.to_string()))
        })
        .expect("a game that ends has a zap");
    let url = format!("file://{}#g0p{ply}", page.display());
    let dom = stdout(&chromium(&["--dump-dom", &url]));
    let board = between(&dom, "<div id=\"board\">", "</div>").expect("the viewer drew a board");
    assert!(board.contains("class=\"piece\""), "{board}");
    let end = between(board, "class=\"beam\" data-end=\"", "\"").expect("a beam is drawn");
    assert_eq!(end, square, "the beam ends on the zapped piece's square");
    assert!(board.contains(&format!("class=\"removed\" data-square=\"{square}\"")));
    assert!(
        dom.contains(&format!("ply {ply} of ")),
        "the viewer is at ply {ply}"
    );
}
