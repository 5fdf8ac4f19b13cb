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
    // One profile per browser: two Chromiums on one profile refuse each other.
    static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let profile = std::env::temp_dir().join(format!("arbiter-chromium-{}-{n}", std::process::id()));
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

/// The run's report page and the journal's entry of the first game in its viewer's list, read
/// as arbiter reads its journal.
fn first_shown(run: &std::path::Path) -> (std::path::PathBuf, arbiter::tournament::journal::Entry) {
    let page = run.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script src"), "nothing fetched");
    let id: u64 = between(&html, "<option value=\"0\">#", " ")
        .unwrap()
        .parse()
        .unwrap();
    let journal = std::fs::read_to_string(run.join("journal.jsonl")).unwrap();
    let entry = journal
        .lines()
        .map(|l| arbiter::tournament::journal::parse_line(l).unwrap().0)
        .find(|e| e.index == id - 1)
        .unwrap();
    (page, entry)
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
    let (page, entry) = first_shown(&dir.join("run"));
    let moves: Vec<String> = entry.record.moves.iter().map(|m| m.text.clone()).collect();
    // The list of shown games links the game's last ply.
    let html = std::fs::read_to_string(&page).unwrap();
    let listed = between(&html, "<table id=\"shown-games\">", "</table>").expect("a game list");
    assert!(
        listed.contains(&format!("<a href=\"#g0p{}\">last move</a>", moves.len())),
        "{listed}"
    );
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

/// Both clocks as the referee kept them, shown at a ply: the test rebuilds them from the
/// journal's measured times (base plus increments minus thinking time; book moves untimed).
#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn the_viewer_shows_both_clocks_as_the_referee_kept_them() {
    let dir = scratch("viewer", "clocks");
    let e = bundled_engine();
    let out = arbiter_in(
        &dir,
        &[
            "match",
            "--games",
            "2",
            // Book moves are not timed: the clocks start with the engines' first moves.
            "--openings",
            &format!("{}/openings/leiserchess.txt", env!("CARGO_MANIFEST_DIR")),
            "--each",
            "tc=5+0.05",
            "depth=1",
            "--engine",
            &format!("cmd={e}"),
            "name=a",
            "--engine",
            &format!("cmd={e}"),
            "name=b",
            "--out",
            "run",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (page, entry) = first_shown(&dir.join("run"));
    let moves = &entry.record.moves;
    assert!(moves[0].book, "the game starts with book moves");
    let ply = moves.len().min(12);
    // Leiserchess from the book: white moves first, so white's plies are the odd ones.
    let mut remaining_us = [5_000_000u64, 5_000_000];
    for (i, m) in moves[..ply].iter().enumerate() {
        if !m.book {
            let used = m.elapsed.as_micros() as u64;
            let side = &mut remaining_us[i % 2];
            *side = side.saturating_sub(used) + 50_000;
        }
    }
    let shown = |us: u64| format!("{:.2}", (us / 1000) as f64 / 1000.0);
    let expected = format!(
        "clocks: white {} s, black {} s",
        shown(remaining_us[0]),
        shown(remaining_us[1])
    );
    let url = format!("file://{}#g0p{ply}", page.display());
    let dom = stdout(&chromium(&["--dump-dom", &url]));
    let info = between(&dom, "<p id=\"info\">", "</p>").expect("the viewer wrote its info line");
    assert!(info.contains(&expected), "{info} (expected {expected})");
}

/// A report of a five-engine tournament (wide crosstable, LOS matrix and charts) read in the
/// narrowest window Chromium opens (360 pixels asked): nothing runs off the page (tables scroll inside themselves, charts and the
/// board shrink to fit).
#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn the_report_fits_a_narrow_window() {
    let dir = scratch("viewer", "narrow");
    let e = bundled_engine();
    let mut args: Vec<String> = ["tournament", "--rounds", "1", "--each", "depth=1", "tc=inf"]
        .map(String::from)
        .to_vec();
    for (name, style) in [
        ("search-engine-with-a-long-name", "search"),
        ("greedy-engine-with-a-long-name", "greedy"),
        ("random-one", "random"),
        ("random-two", "random"),
        ("random-three", "random"),
    ] {
        args.extend([
            "--engine".to_string(),
            format!("cmd={e}"),
            format!("name={name}"),
            format!("option.Style={style}"),
        ]);
    }
    args.extend(["--out", "run", "--quiet"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = arbiter_in(&dir, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    // The page as it is, with a line that writes the page's width where --dump-dom shows it.
    let html = std::fs::read_to_string(dir.join("run").join("report.html")).unwrap();
    let probe = html.replace(
        "</body>",
        "<script>addEventListener('load',()=>document.body.setAttribute('data-width',\
         document.documentElement.scrollWidth+' '+innerWidth))</script></body>",
    );
    let page = dir.join("run").join("narrow.html");
    std::fs::write(&page, probe).unwrap();
    let url = format!("file://{}", page.display());
    let dom = stdout(&chromium(&["--window-size=360,800", "--dump-dom", &url]));
    let widths: Vec<u32> = between(&dom, "data-width=\"", "\"")
        .unwrap_or_else(|| panic!("no width in the page:\n{}", &dom[..dom.len().min(2000)]))
        .split(' ')
        .map(|w| w.parse().unwrap())
        .collect();
    // Chromium keeps a window at least 500 pixels wide (its minimum), whatever is asked: the
    // page must fit the window it got, as narrow as that is.
    let (page_width, window) = (widths[0], widths[1]);
    assert!(window <= 500, "the window is {window} pixels wide");
    assert!(
        page_width <= window,
        "the page is {page_width} pixels wide in a {window}-pixel window"
    );
}
