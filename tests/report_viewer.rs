//! The report's game viewer in a real browser: Debian's chromium (headless), which `.ci/run`
//! installs and runs this test for with `--ignored`. The page's own script draws the board; the
//! test opens a game at the ply where the referee recorded a zap (found by replaying the game
//! through `arbiter replay`, not from the page) and checks the drawn beam ends on that square.

use crate::common;

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
    let out = Command::new(bin)
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
        .expect("chromium runs");
    // A profile is megabytes: a test run starts dozens of browsers.
    let _ = std::fs::remove_dir_all(&profile);
    out
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

/// `arbiter match SETTINGS` between two bundled engines, `a` and `b` (each with its own
/// settings after its name), its report in `dir/out`; the run must succeed.
fn play(dir: &std::path::Path, out: &str, settings: &[&str], a: &[&str], b: &[&str]) {
    let cmd = format!("cmd={}", bundled_engine());
    let mut args = vec!["match"];
    args.extend(settings);
    args.extend(["--engine", &cmd, "name=a"]);
    args.extend(a);
    args.extend(["--engine", &cmd, "name=b"]);
    args.extend(b);
    args.extend(["--out", out, "--quiet"]);
    let run = arbiter_in(dir, &args);
    assert!(run.status.success(), "{out}: {}", stderr(&run));
}

#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn the_viewer_draws_the_beam_to_the_zapped_piece() {
    let dir = scratch("viewer", "beam");
    play(
        &dir,
        "run",
        &["--games", "4"],
        &["depth=2"],
        &["depth=1", "option.Style=greedy"],
    );
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
    let openings = format!("{}/openings/leiserchess.txt", env!("CARGO_MANIFEST_DIR"));
    // Book moves are not timed: the clocks start with the engines' first moves.
    let settings = ["--games", "2", "--openings", &openings];
    let each = ["--each", "tc=5+0.05", "depth=1"];
    play(&dir, "run", &[&settings[..], &each[..]].concat(), &[], &[]);
    let (page, entry) = first_shown(&dir.join("run"));
    let moves = &entry.record.moves;
    assert!(moves[0].book, "the game starts with book moves");
    let ply = moves.len().min(12);
    // Leiserchess from the book: Tangerine moves first, so its plies are the odd ones. The
    // clocks go by the game's names for its sides.
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
        "clocks: Tangerine {} s, Lavender {} s",
        shown(remaining_us[0]),
        shown(remaining_us[1])
    );
    let url = format!("file://{}#g0p{ply}", page.display());
    let dom = stdout(&chromium(&["--dump-dom", &url]));
    let info = between(&dom, "<p id=\"info\">", "</p>").expect("the viewer wrote its info line");
    assert!(info.contains(&expected), "{info} (expected {expected})");
}

/// A report of a five-engine tournament (wide crosstable, LOS matrix and charts) read in the
/// narrowest window Chromium opens (360 pixels asked): nothing runs off the page (tables scroll
/// inside themselves, charts and the board shrink to fit).
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

/// HTML text content as it was before `--dump-dom` escaped it.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Every game's board as the report's viewer draws it in Chromium, at the last ply of a game:
/// the very picture `arbiter show --svg` makes of that position (the page's script and the
/// Rust drawing compared string for string), the two sides' pieces painted in two different
/// colours, the last move's squares marked and visible. A screenshot of each board is left in
/// the scratch folder (`board-<game>.png`) to be looked at.
/// Cause guarded: a chess report's viewer said "the red line is the laser beam of the move".
/// The beam is explained in the games whose moves fire one, and only there.
#[test]
fn the_viewer_speaks_of_a_laser_only_where_moves_fire_one() {
    let dir = scratch("viewer", "beam-words");
    for rules in arbiter::game::games() {
        let game = rules.id;
        play(
            &dir,
            game,
            &[
                "--game", game, "--games", "2", "--each", "depth=1", "tc=inf",
            ],
            &[],
            &[],
        );
        let page = std::fs::read_to_string(dir.join(game).join("report.html")).unwrap();
        assert_eq!(
            page.contains("laser beam"),
            rules.drawing.lasers,
            "{game}: the viewer's words on the beam"
        );
    }
    let lasers = arbiter::game::games()
        .iter()
        .filter(|g| g.drawing.lasers)
        .count();
    assert!(lasers >= 2 && lasers < arbiter::game::games().len());
}

#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn every_games_board_in_the_viewer_is_show_svgs_picture_in_two_colours_with_the_last_move_marked() {
    use arbiter::report::board_svg::{board_svg, Marks};
    let dir = scratch("viewer", "boards");
    for game in arbiter::game::games().iter().map(|g| g.id) {
        let settings = [
            "--game", game, "--games", "2", "--each", "depth=1", "tc=inf",
        ];
        play(&dir, game, &settings, &[], &["option.Style=greedy"]);
        let (page, entry) = first_shown(&dir.join(game));
        let moves: Vec<&str> = entry.record.moves.iter().map(|m| m.text.as_str()).collect();
        let ply = moves.len();
        assert!(ply > 0, "{game}");
        // The position and marks at that ply, as the rules and `show --svg` make them.
        let rules = arbiter::game::find_game(game).unwrap();
        let mut replay = rules.new_game(entry.record.start_fen.as_deref()).unwrap();
        for m in &moves[..ply - 1] {
            replay.play(m).unwrap();
        }
        let marks = Marks::play(replay.as_mut(), moves[ply - 1]).unwrap();
        let expected = board_svg(rules, &replay.fen(), &marks);
        // What the page drew, and what Chromium paints of it.
        let probe =
            "<script>addEventListener('load',()=>{const b=document.getElementById('board');\
            const fill=s=>{const e=b.querySelector(`.piece [data-side=\"${s}\"] > g > \
            :first-child`);\
            return e?getComputedStyle(e).fill:null;};\
            const last=[...b.querySelectorAll('.last')].map(r=>{const q=r.getBoundingClientRect();\
            return [q.width,q.height,getComputedStyle(r).fill];});\
            const pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify({\
            drawn:window.arbiterBoard(0,PLY),shown:b.querySelectorAll('.piece').length,\
            white:fill('white'),black:fill('black'),last});\
            document.body.append(pre);})</script></body>"
                .replace("PLY", &ply.to_string());
        let html = std::fs::read_to_string(&page).unwrap();
        let probed = dir.join(game).join("probe.html");
        std::fs::write(&probed, html.replace("</body>", &probe)).unwrap();
        let url = format!("file://{}#g0p{ply}", probed.display());
        let dom = stdout(&chromium(&["--dump-dom", &url]));
        let text = between(&dom, "<pre id=\"probe\">", "</pre>").unwrap_or_else(|| {
            panic!(
                "{game}: the probe did not run:\n{}",
                &dom[..dom.len().min(2000)]
            )
        });
        let seen: serde_json::Value = serde_json::from_str(&unescape(text)).unwrap();
        assert_eq!(
            seen["drawn"].as_str(),
            Some(expected.as_str()),
            "{game}: the viewer's picture is not show --svg's"
        );
        assert_eq!(
            seen["shown"].as_u64(),
            Some(expected.matches("class=\"piece\"").count() as u64),
            "{game}: pieces on the page's board"
        );
        let (white, black) = (seen["white"].as_str(), seen["black"].as_str());
        assert!(white.is_some() && black.is_some(), "{game}: {seen}");
        assert_ne!(white, black, "{game}: the two sides are painted alike");
        let last = seen["last"].as_array().unwrap();
        assert_eq!(last.len(), marks.moved.len(), "{game}: {seen}");
        assert!(!last.is_empty(), "{game}: the last move is marked");
        for mark in last {
            assert!(
                mark[0].as_f64() > Some(10.0) && mark[1].as_f64() > Some(10.0),
                "{game}: {mark}"
            );
            assert!(
                mark[2].as_str().is_some_and(|f| f.starts_with("rgb")),
                "{game}: {mark}"
            );
        }
        // The board alone, for a person to look at.
        let shot_page = dir.join(game).join("shot.html");
        std::fs::write(
            &shot_page,
            html.replace(
                "</body>",
                "<script>addEventListener('load',()=>{document.body.replaceChildren(\
                 document.getElementById('board'));scrollTo(0,0);})</script></body>",
            ),
        )
        .unwrap();
        let png = dir.join(format!("board-{game}.png"));
        let out = chromium(&[
            "--hide-scrollbars",
            "--window-size=560,820",
            &format!("--screenshot={}", png.display()),
            &format!("file://{}#g0p{ply}", shot_page.display()),
        ]);
        let bytes = std::fs::read(&png)
            .unwrap_or_else(|e| panic!("{game}: no screenshot ({e}): {}", stderr(&out)));
        assert!(bytes.starts_with(b"\x89PNG"), "{game}: not a PNG");
    }
}

/// The `<td>` texts of the table that starts at `start` in `html`, header rows left out.
fn cells(html: &str, start: &str) -> Vec<String> {
    let table = between(html, start, "</table>")
        .unwrap_or_else(|| panic!("no {start} in:\n{}", &html[..html.len().min(3000)]));
    table
        .split("<td>")
        .skip(1)
        .map(|c| c[..c.find("</td>").unwrap()].to_string())
        .collect()
}

/// Kills a child process when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `arbiter watch` on a run while it plays: the page shows the game in progress (its board and
/// the move at each ply as the referee then records it in the journal) within a few seconds,
/// and when the run is over the page's standings are the final report's, cell for cell.
#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn the_live_page_follows_the_run_and_ends_with_the_reports_numbers() {
    use std::io::BufRead;
    let dir = scratch("viewer", "live");
    let e = bundled_engine();
    let run = dir.join("run");
    // Slow enough to watch (0.1 s a move), short enough to finish (120 plies at most); the
    // margin keeps a loaded machine's late move from ending the game on time.
    let mut playing = Killed(
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args([
                "match",
                "--games",
                "4",
                "--max-plies",
                "120",
                "--quiet",
                "--out",
            ])
            .arg(&run)
            .args(["--engine", &format!("cmd={e}"), "name=first"])
            .args(["--engine", &format!("cmd={e}"), "name=second"])
            .args(["--each", "st=0.1", "timemargin=5000"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("arbiter match starts"),
    );
    let started = std::time::Instant::now();
    let deadline = std::time::Duration::from_secs(300);
    while !run.join("run.json").is_file() {
        assert!(started.elapsed() < deadline, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut watching = Killed(
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["watch", run.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("arbiter watch starts"),
    );
    let mut first = String::new();
    std::io::BufReader::new(watching.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no loopback address in {first:?}"))
        .to_string();

    // A game in progress, as the run's live file says it stands, is on the page a few seconds
    // later, at that ply or past it. On a loaded machine the game may have ended before the
    // browser is up: then it must be in the journal, and the next game is watched instead.
    let live = run.join("live").join("game-0.json");
    let (dom, game_no, shown) = loop {
        let on_file = loop {
            assert!(
                started.elapsed() < deadline,
                "no live file in {}",
                run.display()
            );
            if let Some(status) = playing.0.try_wait().unwrap() {
                panic!(
                    "the run ended ({status}) before a game could be watched: {}",
                    std::fs::read_to_string(run.join("journal.jsonl")).unwrap_or_default()
                );
            }
            if let Some(game) = std::fs::read_to_string(&live)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .filter(|g| g["moves"].as_array().is_some_and(|m| m.len() >= 6))
            {
                break game;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let dom = stdout(&chromium(&["--dump-dom", &url]));
        let game_no = on_file["index"].as_u64().unwrap() + 1;
        let on_file_ply = on_file["moves"].as_array().unwrap().len();
        match between(&dom, &format!("data-game=\"{game_no}\" data-ply=\""), "\"") {
            Some(ply) => {
                let shown: usize = ply.parse().unwrap();
                assert!(
                    shown >= on_file_ply,
                    "the page shows ply {shown}, the run was at {on_file_ply}"
                );
                break (dom, game_no, shown);
            }
            // Off the page: the game is over, and its result reaches the journal at the run's
            // next group commit (half a second), or the next game of its worker replaced it.
            None => {
                let recorded = format!("{{\"index\":{},", game_no - 1);
                let waited = std::time::Instant::now();
                while !std::fs::read_to_string(run.join("journal.jsonl"))
                    .unwrap_or_default()
                    .contains(&recorded)
                {
                    assert!(
                        waited.elapsed() < std::time::Duration::from_secs(30),
                        "game {game_no} is neither on the page nor finished:\n{}",
                        &dom[..dom.len().min(3000)]
                    );
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        }
    };
    assert!(
        dom.contains("<svg") && dom.contains("class=\"board\""),
        "no board drawn"
    );
    let at = format!("data-game=\"{game_no}\" data-ply=\"{shown}\"");
    let card = &dom[dom.find(&at).unwrap()..];
    // The clocks go by the game's names for its sides.
    assert!(
        card.contains("clocks: Tangerine "),
        "{}",
        &card[..card.len().min(2000)]
    );
    let last_shown = between(card, &format!("ply {shown}: "), "<")
        .unwrap()
        .trim()
        .to_string();

    // The run ends; the page then holds the final report's standings.
    let status = loop {
        if let Some(status) = playing.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < deadline,
            "the run went on past {deadline:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(status.success(), "the run failed");
    // The move the page showed is the one the referee recorded at that ply.
    let journal = std::fs::read_to_string(run.join("journal.jsonl")).unwrap();
    let entry = journal
        .lines()
        .map(|l| arbiter::tournament::journal::parse_line(l).unwrap().0)
        .find(|e| e.index + 1 == game_no)
        .unwrap();
    assert_eq!(
        entry.record.moves[shown - 1].text,
        last_shown,
        "ply {shown}"
    );
    std::thread::sleep(std::time::Duration::from_secs(1));
    let dom = stdout(&chromium(&["--dump-dom", &url]));
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    let on_page = cells(&dom, "<table id=\"live-standings\">");
    let in_report = cells(&report, "<table id=\"standings\">");
    assert_eq!(on_page.len(), 2 * 9, "{on_page:?}");
    assert_eq!(on_page, in_report);
    assert!(
        dom.contains("finished: 4 of 4 games counted"),
        "{}",
        &dom[..dom.len().min(3000)]
    );
    // The same states stream as server-sent events, for scripts.
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    use std::io::{Read, Write};
    write!(stream, "GET /events HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("\"status\":\"finished\"") {
        let n = stream.read(&mut buffer).expect("the event stream answers");
        assert!(n > 0, "the event stream ended");
        got.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.contains("text/event-stream") && text.contains("event: state"),
        "{text}"
    );
    drop(watching);
}
