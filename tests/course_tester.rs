//! The MIT 6.172 course's own tester, side by side: configuration files in its format
//! (`tests/data/course`, written for these tests) run by arbiter, and what arbiter played held
//! to what the course's `Harness.java` and `PlayGame.java` give for them: which pairings play,
//! how often and with which colours, each player's limit, and where its move rule draws.

use crate::common;

use arbiter::game::{Position, Status};
use arbiter::games::leiserchess::Leiserchess;
use common::{arbiter_in, assert_exit, bundled_engine, scratch, stderr, Scratch};
use std::collections::BTreeMap;
use std::path::Path;

/// A course checkout as the tester is run in it: the configs and book in `tests/`, the player
/// in `player/` (the bundled engine, speaking the course player's dialect).
fn course_checkout(name: &str) -> Scratch {
    let dir = scratch("course", name);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/course");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    for entry in std::fs::read_dir(&data).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.join("tests").join(entry.file_name())).unwrap();
    }
    std::fs::create_dir_all(dir.join("player")).unwrap();
    std::fs::copy(bundled_engine(), dir.join("player/leiserchess")).unwrap();
    dir
}

/// A course file's players, in order, with their families (the tester's default family is the
/// player's own name), and its `game_rounds`.
fn players_and_games(text: &str) -> (Vec<(String, String)>, u64) {
    let mut players: Vec<(String, String)> = Vec::new();
    let mut games = 1000;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim().to_string());
        match key {
            "player" => players.push((value.clone(), value)),
            "family" => players.last_mut().unwrap().1 = value,
            "game_rounds" => games = value.parse().unwrap(),
            _ => {}
        }
    }
    (players, games)
}

/// The games `Harness.java` plays, as (White, Black) with their counts: `getNextMatch` takes
/// the pairing of fewest games so far (the first in the file's order on a tie, players of one
/// family never), and gives White to the name that sorts later on the pairing's even games.
fn course_pairings(players: &[(String, String)], games: u64) -> BTreeMap<(String, String), u64> {
    let n = players.len();
    let mut count = vec![vec![0u64; n]; n];
    let mut played = BTreeMap::new();
    for _ in 0..games {
        let mut best: Option<(u64, usize, usize)> = None;
        for a in 0..n {
            for b in a + 1..n {
                if players[a].1 != players[b].1 && best.is_none_or(|(c, ..)| count[a][b] < c) {
                    let (p0, p1) = if players[a].0 > players[b].0 {
                        (a, b)
                    } else {
                        (b, a)
                    };
                    best = Some((count[a][b], p0, p1));
                }
            }
        }
        let (_, p0, p1) = best.unwrap();
        let (w, b) = if count[p0][p1] % 2 == 1 {
            (p1, p0)
        } else {
            (p0, p1)
        };
        count[w][b] += 1;
        count[b][w] += 1;
        *played
            .entry((players[w].0.clone(), players[b].0.clone()))
            .or_insert(0) += 1;
    }
    played
}

/// How `PlayGame.java` ends a game of these moves (`book` of them from the book), if it ends it
/// within them: the ply it ends on and the result. Its move clock starts at 200, is set to 200
/// on each book move and on each zap, and counts down on every other move, the book's included;
/// at zero, or past `adjudicate` moves, the game is drawn.
fn course_ending(moves: &[String], book: usize, adjudicate: usize) -> Option<(usize, String)> {
    let mut position = Leiserchess::from_fen(Leiserchess::START_FEN).unwrap();
    let mut clock = 200;
    for (ply, text) in moves.iter().enumerate() {
        if ply < book {
            clock = 200;
        }
        let mv = position.parse_move(text).unwrap();
        if position.play(mv).is_empty() {
            clock -= 1;
        } else {
            clock = 200;
        }
        if let Status::Over(outcome, _) = position.board_status() {
            return Some((ply + 1, outcome.to_string()));
        }
        if clock <= 0 || ply + 1 >= 2 * adjudicate {
            return Some((ply + 1, "1/2-1/2".to_string()));
        }
    }
    None
}

/// One game of a run's journal: its players, moves (book moves first), result and termination.
struct Played {
    white: String,
    black: String,
    moves: Vec<String>,
    book: usize,
    outcome: String,
    termination: String,
    detail: String,
}

fn journal(run: &Path) -> Vec<Played> {
    let text = std::fs::read_to_string(run.join("journal.jsonl")).unwrap();
    text.lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            let record = &entry["record"];
            let field = |name: &str| record[name].as_str().unwrap().to_string();
            let moves: Vec<&str> = record["moves"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect();
            Played {
                detail: record["detail"].as_str().unwrap_or_default().to_string(),
                white: field("white"),
                black: field("black"),
                book: moves.iter().take_while(|m| !m.contains('@')).count(),
                moves: moves
                    .iter()
                    .map(|m| m.split('@').next().unwrap().to_string())
                    .collect(),
                outcome: field("outcome"),
                termination: field("termination"),
            }
        })
        .collect()
}

/// Every game arbiter ended by the rules ended where the course's tester ends it, with its
/// result; one an engine lost by a fault ended before.
fn assert_ends_as_the_course_ends(games: &[Played], adjudicate: usize) {
    for (i, game) in games.iter().enumerate() {
        let theirs = course_ending(&game.moves, game.book, adjudicate);
        let ours = (game.moves.len(), game.outcome.clone());
        match game.termination.as_str() {
            "king zapped" | "move rule" | "max plies" => {
                assert_eq!(Some(ours), theirs, "game {i}: {}", game.termination)
            }
            _ => assert!(
                theirs.as_ref().is_none_or(|(ply, _)| *ply > ours.0),
                "game {i} ended by {} after the course's tester ends it ({theirs:?})",
                game.termination
            ),
        }
    }
}

fn adjudicate_of(text: &str) -> usize {
    text.lines()
        .find_map(|l| l.strip_prefix("adjudicate = "))
        .map_or(400, |v| v.trim().parse().unwrap())
}

#[test]
fn the_course_files_play_the_testers_pairings_colours_and_endings() {
    let dir = course_checkout("files");
    let tests = dir.join("tests");
    for (file, folder) in [("my_game.txt", "my-game"), ("basic.txt", "basic")] {
        let text = std::fs::read_to_string(tests.join(file)).unwrap();
        let out = arbiter_in(&tests, &["run", file]);
        assert_exit(&out, 0);
        let banner = common::stdout(&out);
        assert!(banner.contains("rules:    move-rule=course"), "{banner}");
        let games = journal(&tests.join("reports").join(folder));
        let (players, count) = players_and_games(&text);
        let mut played = BTreeMap::new();
        for game in &games {
            *played
                .entry((game.white.clone(), game.black.clone()))
                .or_insert(0) += 1;
        }
        assert_eq!(played, course_pairings(&players, count), "{file}");
        assert_ends_as_the_course_ends(&games, adjudicate_of(&text));
    }
    // The tester run again goes on with its file's PGN; arbiter with the file's run.
    let again = arbiter_in(&tests, &["run", "my_game.txt"]);
    assert_exit(&again, 0);
    assert!(
        stderr(&again).contains("--resume reports/my-game implied"),
        "{}",
        stderr(&again)
    );
    assert_eq!(journal(&tests.join("reports/my-game")).len(), 13);
}

/// A quiet game: every move zaps nothing and reaches a position not seen before, so only the
/// move rule (or the adjudication) can end it.
fn quiet_line(plies: usize) -> Vec<String> {
    let mut game = arbiter::game::Game::new(Leiserchess::from_fen(Leiserchess::START_FEN).unwrap());
    let mut seen = std::collections::HashSet::new();
    let mut line = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    while line.len() < plies {
        let mut moves = game.legal_moves();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let turn = seed as usize % moves.len();
        moves.rotate_left(turn);
        let position = game.position().clone();
        let quiet = moves
            .into_iter()
            .find(|&mv| {
                let mut after = position.clone();
                after.play(mv).is_empty()
                    && after.board_status() == Status::Ongoing
                    && !seen.contains(&after.key())
            })
            .expect("a quiet move to a new position");
        line.push(position.move_text(quiet));
        let mut after = position;
        after.play(quiet);
        seen.insert(after.key());
        // The referee's own game would end this at 100 plies; the line goes on past it.
        game = arbiter::game::Game::new(after);
    }
    line
}

/// Where the course's tester and the rule text part: 200 plies without a zap, counted from the
/// book's last move, against 100 counted from the first. Two players that walk one quiet line
/// (a script speaking the course player's protocol) from a book of its first 10 plies.
#[test]
fn the_courses_move_rule_draws_where_the_testers_does() {
    let dir = course_checkout("quiet");
    let tests = dir.join("tests");
    let line = quiet_line(260);
    std::fs::write(tests.join("quiet-book.txt"), line[..10].join(" ") + "\n").unwrap();
    common::script(
        &dir.join("player"),
        "walker",
        &format!(
            "#!/bin/bash\nline=({})\nn=0\nwhile read -r cmd rest; do\n  case $cmd in\n    \
             uci) echo 'id name walker'; echo uciok ;;\n    isready) echo readyok ;;\n    \
             position) n=0; after=; for w in $rest; do [ -n \"$after\" ] && n=$((n+1)); \
             [ \"$w\" = moves ] && after=1; done ;;\n    go) echo \"bestmove ${{line[$n]}}\" \
             ;;\n    \
             quit) exit 0 ;;\n  esac\ndone\n",
            line.join(" ")
        ),
        0o755,
    );
    let config = |rule: &str| {
        format!(
            "book = quiet-book.txt\ngame_rounds = 2\ntitle = quiet {rule}\nadjudicate = 400\n\
             move_rule = {rule}\n\nplayer = north\ninvoke = ../player/walker\ndepth = 1\n\n\
             player = south\ninvoke = ../player/walker\ndepth = 1\n"
        )
    };
    for (rule, plies) in [("course", 209), ("rules", 100)] {
        let file = format!("quiet-{rule}.txt");
        std::fs::write(tests.join(&file), config(rule)).unwrap();
        let out = arbiter_in(&tests, &["run", &file]);
        assert_exit(&out, 0);
        let games = journal(&tests.join(format!("reports/quiet-{rule}")));
        assert_eq!(games.len(), 2);
        for game in &games {
            assert_eq!(
                (
                    game.moves.len(),
                    game.outcome.as_str(),
                    game.termination.as_str()
                ),
                (plies, "1/2-1/2", "move rule"),
                "move_rule = {rule}"
            );
        }
        if rule == "course" {
            assert_ends_as_the_course_ends(&games, 400);
        }
    }
}

/// The course's tester counts every ply from the game's start on the clock: at its first own
/// move after a book of 10 plies, each side has `fis`'s main time plus five increments
/// (`fisMain + fisInc * (ctm / 2)`), where a clock started at the book's end has none. The
/// player answers its first `go` with the move only when it was told 7.5 s, and otherwise with
/// what it was told, which the referee refuses and names.
#[test]
fn book_moves_earn_the_increment_as_the_testers_clock_counts_them() {
    let dir = course_checkout("book-clock");
    let tests = dir.join("tests");
    let line = quiet_line(40);
    std::fs::write(tests.join("clock-book.txt"), line[..10].join(" ") + "\n").unwrap();
    common::script(
        &dir.join("player"),
        "timed",
        &format!(
            "#!/bin/bash\nline=({})\nn=0\nwhile read -r cmd rest; do\n  case $cmd in\n    \
             uci) echo 'id name timed'; echo uciok ;;\n    isready) echo readyok ;;\n    \
             position) n=0; after=; for w in $rest; do [ -n \"$after\" ] && n=$((n+1)); \
             [ \"$w\" = moves ] && after=1; done ;;\n    go) if [ $n -lt 12 ] && \
             [[ \" $rest \" != *\" 7500 \"* ]]; then echo \"bestmove told:${{rest// /_}}\"; \
             else echo \"bestmove ${{line[$n]}}\"; fi ;;\n    quit) exit 0 ;;\n  esac\ndone\n",
            line.join(" ")
        ),
        0o755,
    );
    std::fs::write(
        tests.join("clock.txt"),
        "book = clock-book.txt\ngame_rounds = 2\ntitle = clock\nadjudicate = 30\n\n\
         player = north\ninvoke = ../player/timed\nfis = 5 0.5\n\n\
         player = south\ninvoke = ../player/timed\nfis = 5 0.5\n",
    )
    .unwrap();
    let out = arbiter_in(&tests, &["run", "clock.txt"]);
    assert_exit(&out, 0);
    let games = journal(&tests.join("reports/clock"));
    assert_eq!(games.len(), 2);
    for game in &games {
        assert!(
            game.moves.len() > 12,
            "{}: {}",
            game.termination,
            game.detail
        );
    }
}
