//! `arbiter merge` proves what it merges, and writes only where it may: each test is a defect
//! found by doing what the README documents, in an order a user would, with real runs of the
//! bundled engine.

use crate::common;

use common::{arbiter_in, deep_against_shallow, scratch, stderr, stdout, succeed_in};
use std::path::Path;
use std::process::{Command, Stdio};

/// A match of 12 games between depth 2 and depth 1, from the book.
fn small_match(out: &str) -> Vec<String> {
    with(deep_against_shallow(12, 3, out), &["--quiet"])
}

fn with(mut args: Vec<String>, more: &[&str]) -> Vec<String> {
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// The bytes of every file in a folder, by name: what "unchanged" means.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn merge_after_resume_keeps_the_resumed_games() {
    let dir = scratch("merge", "resumed");
    succeed_in(&dir, &small_match("single"));
    succeed_in(&dir, &with(small_match("run"), &["--shard", "1/2"]));
    // A task's games lost: the merge is incomplete, and the README says to continue the merged
    // run with --resume, then merge again.
    let journal = dir.join("run/shard-1-of-2/journal.jsonl");
    let all = lines(&journal);
    std::fs::write(&journal, all[..8].join("\n") + "\n").unwrap();
    let out = arbiter_in(&dir, &["merge", "run", "run"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let resumed = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let out = arbiter_in(&dir, &["merge", "run", "run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Merged 12 games"), "{}", stdout(&out));
    assert_eq!(
        std::fs::read(dir.join("single/games.csv")).unwrap(),
        std::fs::read(dir.join("run/games.csv")).unwrap()
    );
}

#[test]
fn merge_refuses_other_runs_folders_and_changes_nothing() {
    let dir = scratch("merge", "target");
    succeed_in(&dir, &with(small_match("split"), &["--shard", "1/2"]));
    // Into a finished run that is not this one: refused, every file as it was.
    succeed_in(
        &dir,
        &with(deep_against_shallow(12, 4, "other"), &["--quiet"]),
    );
    let before = snapshot(&dir.join("other"));
    let out = arbiter_in(&dir, &["merge", "other", "split"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds another run"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&dir.join("other")), before);
    // Into a folder where a run is playing: refused while it plays, and the run is unharmed.
    let long = deep_against_shallow(400, 3, "playing");
    let mut playing = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(&long)
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = dir.join("playing/journal.jsonl");
    while lines(&journal).len() < 2 {
        assert!(playing.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = arbiter_in(&dir, &["merge", "playing", "split"]);
    let after = lines(&journal).len();
    playing.kill().unwrap();
    playing.wait().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another arbiter is playing"),
        "{}",
        stderr(&out)
    );
    assert!(after >= 2, "the playing run lost its games");
    // `rate --out` onto a run's folder: refused, its journal kept.
    let before = snapshot(&dir.join("other"));
    let pgn = dir.join("other/games.pgn");
    let out = arbiter_in(&dir, &["rate", pgn.to_str().unwrap(), "--out", "other"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("holds a run"), "{}", stderr(&out));
    assert_eq!(snapshot(&dir.join("other")), before);
    // A merge refused for a forged game writes nothing either: not even the run's spec.
    let shard = dir.join("split/shard-1-of-2/journal.jsonl");
    let mut forged = lines(&shard);
    forged[0] = forged[0].replace("\"black\":\"", "\"black\":\"nobody");
    std::fs::write(&shard, forged.join("\n") + "\n").unwrap();
    let out = arbiter_in(&dir, &["merge", "fresh", "split"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        !dir.join("fresh").exists(),
        "a refused merge left {:?}",
        std::fs::read_dir(dir.join("fresh")).map(|d| d.count())
    );
}

/// Rewrites the first journal entry of `path` with `edit`, which must change it.
/// Edits the first line and seals it again with the run's key, as only arbiter could: what
/// the checks of a game's players, opening and moves must refuse even then.
fn forge(path: &Path, edit: impl Fn(&str) -> String) {
    forge_at(path, 0, edit)
}

/// Edits line `at` (from 0) as the run's own key would seal it.
fn forge_at(path: &Path, at: usize, edit: impl Fn(&str) -> String) {
    use arbiter::proof::{unsealed, Key};
    let mut all = lines(path);
    let forged = edit(&unsealed(&all[at]));
    assert_ne!(forged, unsealed(&all[at]), "the forgery changed nothing");
    let key = Key::for_journal(path).expect("the run's key");
    let mut line = forged.into_bytes();
    key.seal(&mut line);
    all[at] = String::from_utf8(line).unwrap();
    std::fs::write(path, all.join("\n") + "\n").unwrap();
}

/// Edits the first line as an engine could: without the run's key.
fn forge_unsealed(path: &Path, edit: impl Fn(&str) -> String) {
    let mut all = lines(path);
    all[0] = edit(&all[0]);
    std::fs::write(path, all.join("\n") + "\n").unwrap();
}

/// A journal line whose first engine move is `a1a1`, scored 1-0 by a zapped king.
fn illegal_move_scored_as_a_zapped_king(l: &str) -> String {
    // The first engine move's text: the token before the first time (`@`).
    let moves = l.find("\"moves\":\"").unwrap() + 9;
    let end = moves + l[moves..].find('@').unwrap();
    let at = l[..end].rfind([' ', '"']).unwrap() + 1;
    let l = format!("{}a1a1{}", &l[..at], &l[end..]);
    let l = l.replacen("\"outcome\":\"0-1\"", "\"outcome\":\"1-0\"", 1);
    let l = l.replacen("\"outcome\":\"1/2-1/2\"", "\"outcome\":\"1-0\"", 1);
    let t = l.find("\"termination\":\"").unwrap() + 15;
    let e = t + l[t..].find('"').unwrap();
    format!("{}king zapped{}", &l[..t], &l[e..])
}

/// A journal line whose black player is one the run does not have.
fn black_a_stranger(l: &str) -> String {
    let at = l.find("\"black\":\"").unwrap() + 9;
    let end = at + l[at..].find('"').unwrap();
    format!("{}stranger{}", &l[..at], &l[end..])
}

/// The games of a run are proved on every core, yet a merge names the first line that is not a
/// game of the run, whether its players or its moves make it so, and wherever the other is.
#[test]
fn merge_names_the_first_line_that_is_no_game_of_the_run() {
    let dir = scratch("merge", "first-forged");
    succeed_in(&dir, &with(small_match("run"), &["--shard", "1/1"]));
    let journal = dir.join("run/shard-1-of-1/journal.jsonl");
    let pristine = std::fs::read(&journal).unwrap();
    let game_at = |at: usize| {
        let line = &lines(&journal)[at];
        let i = line.find("\"index\":").unwrap() + 8;
        let n: String = line[i..].chars().take_while(char::is_ascii_digit).collect();
        n.parse::<u64>().unwrap() + 1
    };
    type Edit = fn(&str) -> String;
    let cases: [(usize, Edit, usize, Edit, usize, &str); 3] = [
        (
            1,
            black_a_stranger,
            8,
            illegal_move_scored_as_a_zapped_king,
            1,
            "stranger",
        ),
        (
            1,
            illegal_move_scored_as_a_zapped_king,
            8,
            black_a_stranger,
            1,
            "(a1a1)",
        ),
        (
            8,
            illegal_move_scored_as_a_zapped_king,
            10,
            illegal_move_scored_as_a_zapped_king,
            8,
            "(a1a1)",
        ),
    ];
    for (first, first_edit, second, second_edit, named, why) in cases {
        std::fs::write(&journal, &pristine).unwrap();
        let game = game_at(named);
        forge_at(&journal, first, first_edit);
        forge_at(&journal, second, second_edit);
        let out = arbiter_in(&dir, &["merge", "merged", "run"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let said = stderr(&out);
        let expected = format!(
            "shard-1-of-1/journal.jsonl:{}: game {game} is not a game of this run",
            named + 1
        );
        assert!(
            said.contains(&expected) && said.contains(why),
            "{expected}: {said}"
        );
        assert!(!dir.join("merged/journal.jsonl").exists(), "nothing merged");
    }
}

/// What a forgery is, the reason a refusal must give, and the edit that makes it.
type Forgery = (&'static str, String, Box<dyn Fn(&str) -> String>);

#[test]
fn forged_journal_lines_are_refused_by_merge_and_resume() {
    let dir = scratch("merge", "forged");
    succeed_in(&dir, &with(small_match("run"), &["--shard", "1/1"]));
    let journal = dir.join("run/shard-1-of-1/journal.jsonl");
    let pristine = std::fs::read(&journal).unwrap();
    let first = lines(&journal)[0].clone();
    let white = if first.contains("\"white\":\"deep\"") {
        "deep"
    } else {
        "shallow"
    };
    let black = if white == "deep" { "shallow" } else { "deep" };
    let forgeries: Vec<Forgery> = vec![
        (
            "unknown black player",
            format!("{white} against stranger, where the schedule has {white} against {black}"),
            Box::new(move |l: &str| {
                l.replace(&format!("\"black\":\"{black}\""), "\"black\":\"stranger\"")
            }),
        ),
        (
            "x against x",
            format!("{white} against {white}, where the schedule has"),
            Box::new(move |l: &str| {
                l.replace(
                    &format!("\"black\":\"{black}\""),
                    &format!("\"black\":\"{white}\""),
                )
            }),
        ),
        (
            "an illegal move scored as a zapped king",
            // The book's moves come first: the forged move is an engine's, so that the
            // refusal is the rules' (an edited book move is refused as another opening).
            "(a1a1):".to_string(),
            Box::new(illegal_move_scored_as_a_zapped_king),
        ),
    ];
    for (what, why, edit) in &forgeries {
        std::fs::write(&journal, &pristine).unwrap();
        forge(&journal, edit);
        let out = arbiter_in(&dir, &["merge", "merged", "run"]);
        assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("shard-1-of-1/journal.jsonl:1: game 1 is not a game of this run")
                && stderr(&out).contains(why.as_str()),
            "{what}: {}",
            stderr(&out)
        );
        let out = arbiter_in(&dir, &["match", "--resume", "run/shard-1-of-1", "--quiet"]);
        assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("entry 1 (game 1) is not a game of this run")
                && stderr(&out).contains(why.as_str()),
            "{what}: {}",
            stderr(&out)
        );
    }
    // Any change without the run's key, a forfeit's winner included, is refused by its proof.
    std::fs::write(&journal, &pristine).unwrap();
    forge_unsealed(&journal, |l: &str| {
        match l.contains("\"outcome\":\"1-0\"") {
            true => l.replacen("\"outcome\":\"1-0\"", "\"outcome\":\"0-1\"", 1),
            false => l.replacen("\"outcome\":\"", "\"outcome\":\"1-0\",\"was\":\"", 1),
        }
    });
    for args in [
        &["merge", "merged", "run"][..],
        &["match", "--resume", "run/shard-1-of-1", "--quiet"],
    ] {
        let out = arbiter_in(&dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("shard-1-of-1/journal.jsonl:1: this line was not written by arbiter"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // The last index there is: named by its number (u64::MAX + 1), not wrapped to "game 0".
    std::fs::write(&journal, &pristine).unwrap();
    forge(&journal, |l: &str| {
        let at = l.find("{\"index\":").unwrap() + 9;
        let end = at + l[at..].find(',').unwrap();
        format!("{}{}{}", &l[..at], u64::MAX, &l[end..])
    });
    let out = arbiter_in(&dir, &["merge", "merged", "run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("game 18446744073709551616") && !stderr(&out).contains("game 0"),
        "{}",
        stderr(&out)
    );
    std::fs::write(&journal, &pristine).unwrap();
    let out = arbiter_in(&dir, &["merge", "merged", "run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A match of depth 2 against depth 1 with an SPRT that decides in a few dozen games.
fn sprt_match(out: &str, seed: u64) -> Vec<String> {
    let args = deep_against_shallow(600, seed, out);
    with(args, &["--quiet", "--sprt", "elo0=0", "elo1=60"])
}

#[test]
fn a_split_sprt_with_a_folder_missing_states_no_verdict() {
    let dir = scratch("merge", "sprt-gap");
    // Two tasks at once, each with two games at a time: their pairs interleave.
    let tasks: Vec<Vec<String>> = (1..=2)
        .map(|k| {
            let task = ["--shard", &format!("{k}/2"), "--concurrency", "2"];
            with(sprt_match("split", 3), &task)
        })
        .collect();
    common::tasks_at_once(&dir, &tasks, 0);
    let whole = arbiter_in(&dir, &["merge", "whole", "split"]);
    assert!(stdout(&whole).contains("H1 accepted"), "{}", stdout(&whole));
    let two = lines(&dir.join("split/shard-2-of-2/journal.jsonl")).len();
    assert!(two > 0, "task 2 played nothing; the test needs both");
    std::fs::remove_dir_all(dir.join("split/shard-2-of-2")).unwrap();
    let out = arbiter_in(&dir, &["merge", "partial", "split"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stdout(&out).contains("H1 accepted"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("H0 accepted"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("in no shard folder"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_task_never_pools_another_runs_folder() {
    let dir = scratch("merge", "pool-identity");
    succeed_in(&dir, &with(sprt_match("other", 3), &["--shard", "1/2"]));
    let mine = sprt_match("mine", 9);
    succeed_in(&dir, &with(mine.clone(), &["--shard", "1/2"]));
    // The other run's task folder put beside this run's, as a careless copy would.
    std::fs::rename(
        dir.join("other/shard-1-of-2"),
        dir.join("mine/shard-2-of-2"),
    )
    .unwrap();
    std::fs::remove_dir_all(dir.join("mine/shard-1-of-2")).unwrap();
    std::fs::remove_dir_all(dir.join("mine/claims")).unwrap();
    let out = succeed_in(&dir, &with(mine, &["--shard", "1/2"]));
    assert!(
        stderr(&out).contains("shard-2-of-2 is not a shard of this run"),
        "{}",
        stderr(&out)
    );
}

/// Cause guarded: `--resume` kept the first record of a game recorded twice and ignored the
/// second whatever it said, where `merge` refused two different results: the same journal read
/// two ways. Now a copy with the same result counts once for both, and a second record with
/// another result (sealed with the run's key, as only arbiter could) is refused by both, naming
/// the entries.
#[test]
fn a_game_recorded_twice_is_read_alike_by_resume_and_merge() {
    use arbiter::proof::{unsealed, Key};
    let dir = scratch("merge", "twice");
    succeed_in(&dir, &with(small_match("run"), &["--shard", "1/1"]));
    let journal = dir.join("run/shard-1-of-1/journal.jsonl");
    let mut all = lines(&journal);
    let games = all.len();
    // Recorded again at the journal's end, as arbiter writes a line there (a verbatim copy
    // would be out of its place, which is refused as a moved line).
    let key = Key::for_journal(&journal).unwrap();
    let mut again = unsealed(&all[0]).into_bytes();
    key.seal_at(&mut again, games as u64);
    all.push(String::from_utf8(again).unwrap());
    std::fs::write(&journal, all.join("\n") + "\n").unwrap();
    succeed_in(
        &dir,
        &with(
            vec![],
            &["match", "--resume", "run/shard-1-of-1", "--quiet"],
        ),
    );
    let merged = succeed_in(&dir, &with(vec![], &["merge", "merged", "run"]));
    assert!(
        std::fs::read_to_string(dir.join("merged/games.csv"))
            .unwrap()
            .lines()
            .count()
            == games + 1,
        "{}",
        stdout(&merged)
    );
    // The same game cut one move short and scored as a time forfeit, which the moves cannot
    // contradict: only the first record says otherwise.
    let first = unsealed(&all[0]);
    let moves = first.find("\"moves\":\"").unwrap() + 9;
    let end = moves + first[moves..].find('"').unwrap();
    let cut = moves + first[moves..end].rfind(' ').unwrap();
    let other = format!("{}{}", &first[..cut], &first[end..]);
    let t = other.find("\"termination\":\"").unwrap() + 15;
    let e = t + other[t..].find('"').unwrap();
    let other = format!("{}time forfeit{}", &other[..t], &other[e..]);
    let mut line = other.into_bytes();
    key.seal_at(&mut line, games as u64);
    *all.last_mut().unwrap() = String::from_utf8(line).unwrap();
    std::fs::write(&journal, all.join("\n") + "\n").unwrap();
    let out = arbiter_in(&dir, &["match", "--resume", "run/shard-1-of-1", "--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "entries 1 and {} give game 1 different results",
            games + 1
        )),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(dir.join("merged")).unwrap();
    let out = arbiter_in(&dir, &["merge", "merged", "run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("game 1 has different results"),
        "{}",
        stderr(&out)
    );
}

/// Cause guarded: a run started in a folder holding `openings/<game>.txt` (the project's own,
/// where the README's quick start runs) played from that default book, but run.json named no
/// book, so `merge` and `--resume` refused every game ("an opening, where the run plays from
/// the start position"). Now the book is recorded, and both work from any folder.
#[test]
fn a_run_from_the_default_book_merges_and_resumes_from_another_folder() {
    let project = scratch("merge", "default-book");
    std::fs::create_dir_all(project.join("openings")).unwrap();
    std::fs::copy(
        common::book("leiserchess"),
        project.join("openings/leiserchess.txt"),
    )
    .unwrap();
    let engine = common::bundled_engine();
    let a = format!("cmd={engine}");
    let args = |out: &str| -> Vec<String> {
        [
            "match",
            "--game",
            "leiserchess",
            "--engine",
            &a,
            "name=a",
            "--engine",
            &a,
            "name=b",
            "option.Style=greedy",
            "--each",
            "depth=1",
            "--games",
            "4",
            "--quiet",
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec()
    };
    succeed_in(&project, &args("runs/d"));
    let spec = std::fs::read_to_string(project.join("runs/d/run.json")).unwrap();
    assert!(spec.contains("openings/leiserchess.txt"), "{spec}");
    let elsewhere = scratch("merge", "default-book-elsewhere");
    let run = project.join("runs/d");
    let merged = elsewhere.join("dm");
    let out = arbiter_in(
        &elsewhere,
        &["merge", merged.to_str().unwrap(), run.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = arbiter_in(
        &elsewhere,
        &["match", "--resume", run.to_str().unwrap(), "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // --no-book in the same folder: the games are those of a folder without a default book,
    // and the run says so in run.json, so that merge and --resume from elsewhere play none.
    let mut no_book = args("runs/n");
    no_book.push("--no-book".into());
    succeed_in(&project, &no_book);
    let spec = std::fs::read_to_string(project.join("runs/n/run.json")).unwrap();
    assert!(
        spec.contains("\"no_book\": true") && !spec.contains("leiserchess.txt"),
        "{spec}"
    );
    succeed_in(&elsewhere, &args("plain"));
    let games = |path: &Path| std::fs::read_to_string(path.join("games.csv")).unwrap();
    assert_eq!(
        games(&project.join("runs/n")),
        games(&elsewhere.join("plain"))
    );
    assert_ne!(games(&project.join("runs/n")), games(&run));
    let run = project.join("runs/n");
    let merged = elsewhere.join("nm");
    succeed_in(
        &elsewhere,
        &["merge", merged.to_str().unwrap(), run.to_str().unwrap()].map(String::from),
    );
    assert_eq!(games(&merged), games(&run));
    succeed_in(
        &elsewhere,
        &["match", "--resume", run.to_str().unwrap(), "--quiet"].map(String::from),
    );
    let mut both = no_book.clone();
    both.extend(["--openings".into(), "openings/leiserchess.txt".into()]);
    let out = arbiter_in(
        &project,
        &both.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `arbiter` with `ARBITER_KEY` naming `key`: another user, or another machine, with a key of
/// their own.
fn arbiter_keyed(dir: &Path, key: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .current_dir(dir)
        .env("ARBITER_KEY", key)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Cause guarded: the key sat in the folder it proved, so whoever could write a run folder on a
/// shared disk could remove every proof, or write a key of their own and seal a forgery with
/// it, and `merge` and `--resume` accepted 10-0 (`--resume` even counted the forged games and
/// left `.tmp` files and a new key behind).
#[test]
fn whoever_writes_the_folder_without_the_owners_key_forges_nothing() {
    let dir = scratch("merge", "foreign-key");
    let owner_key = dir.join("owner.key");
    let thief_key = dir.join("thief.key");
    let run = |args: &[String], key: &Path| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        arbiter_keyed(&dir, key, &args)
    };
    let played = run(&with(small_match("run"), &["--shard", "1/1"]), &owner_key);
    assert_eq!(played.status.code(), Some(0), "{}", stderr(&played));
    // The key lives outside the run folder, readable by its owner only.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&owner_key).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let task = dir.join("run/shard-1-of-1");
    assert!(!task.join("run.key").exists(), "no key in the run folder");
    let proof = std::fs::read_to_string(task.join("run.proof")).unwrap();
    assert!(proof.lines().any(|l| l.starts_with("key ")), "{proof}");
    let pristine = snapshot(&task);
    let restore = || {
        for (name, bytes) in &pristine {
            std::fs::write(task.join(name), bytes).unwrap();
        }
    };
    let refused = |what: &str, said: &str| {
        for args in [
            vec!["merge", "merged", "run"],
            vec!["match", "--resume", "run/shard-1-of-1", "--quiet"],
        ] {
            let out = arbiter_keyed(&dir, &owner_key, &args);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{what}: {args:?}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains(said),
                "{what}: {args:?}: {}",
                stderr(&out)
            );
            assert!(
                !dir.join("merged").exists(),
                "{what}: a refused merge wrote"
            );
            assert!(
                !stdout(&out).contains("Elo") && !stdout(&out).contains("Finished game"),
                "{what}: {args:?} counted the forged games: {}",
                stdout(&out)
            );
            let left: Vec<String> = std::fs::read_dir(&task)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("tmp") || n == "run.key")
                .collect();
            assert!(left.is_empty(), "{what}: {args:?} left {left:?}");
        }
    };
    // 1. Every proof removed, and a result changed.
    let journal = task.join("journal.jsonl");
    let stripped: Vec<String> = lines(&journal)
        .iter()
        .map(|l| arbiter::proof::unsealed(l).replace("\"outcome\":\"0-1\"", "\"outcome\":\"1-0\""))
        .collect();
    std::fs::write(&journal, stripped.join("\n") + "\n").unwrap();
    std::fs::remove_file(task.join("run.proof")).unwrap();
    refused("proofs removed", "run.proof:1: missing");
    restore();
    // 2. A run of the thief's own, sealed with the thief's key, passed off as the owner's.
    let forged = run(
        &with(small_match("forged"), &["--shard", "1/1"]),
        &thief_key,
    );
    assert_eq!(forged.status.code(), Some(0), "{}", stderr(&forged));
    for name in ["run.json", "run.proof", "journal.jsonl"] {
        std::fs::copy(dir.join("forged/shard-1-of-1").join(name), task.join(name)).unwrap();
    }
    refused("sealed again with another key", "sealed with another key");
    restore();
    // 3. A key of the folder's own, as an older arbiter kept it.
    std::fs::write(task.join("run.key"), [7u8; 32]).unwrap();
    let out = arbiter_keyed(&dir, &owner_key, &["merge", "merged", "run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("older arbiter"), "{}", stderr(&out));
    std::fs::remove_file(task.join("run.key")).unwrap();
    // The owner still merges the untouched folder.
    let out = arbiter_keyed(&dir, &owner_key, &["merge", "merged", "run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Makes `dir` as an older arbiter left it: its records sealed with a key kept inside it.
fn as_an_older_build_sealed_it(dir: &Path, key: [u8; 32]) {
    use arbiter::proof::{unsealed, Key};
    let old = Key::from_bytes(key);
    std::fs::write(dir.join("run.key"), key).unwrap();
    let journal = dir.join("journal.jsonl");
    let resealed: Vec<String> = lines(&journal)
        .iter()
        .map(|l| {
            let mut line = unsealed(l).into_bytes();
            old.seal(&mut line);
            String::from_utf8(line).unwrap()
        })
        .collect();
    std::fs::write(&journal, resealed.join("\n") + "\n").unwrap();
    let spec = std::fs::read(dir.join("run.json")).unwrap();
    std::fs::write(dir.join("run.proof"), old.of_file(&spec) + "\n").unwrap();
}

/// A run an older build sealed with a key inside its folder is refused (anyone who could write
/// the folder could have written that key), and `arbiter adopt` takes it over: every seal
/// checked with the folder's key, then sealed again with the owner's. A folder whose records
/// that key does not prove is not adopted, and is left as it was.
#[test]
fn a_folder_an_older_build_sealed_is_adopted_only_when_its_own_key_proves_it() {
    let dir = scratch("merge", "adopt");
    succeed_in(&dir, &small_match("run"));
    let run = dir.join("run");
    as_an_older_build_sealed_it(&run, [5; 32]);
    let refused = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    // The command on a line of its own, which a long path never clips away.
    assert!(
        stderr(&refused)
            .lines()
            .any(|l| l.trim_start().starts_with("arbiter adopt ") && l.ends_with("run")),
        "{}",
        stderr(&refused)
    );
    // A forgery in such a folder: a line sealed with some other key.
    succeed_in(&dir, &small_match("forged"));
    let forged = dir.join("forged");
    as_an_older_build_sealed_it(&forged, [5; 32]);
    {
        use arbiter::proof::{unsealed, Key};
        let journal = forged.join("journal.jsonl");
        let mut all = lines(&journal);
        let mut line = unsealed(&all[1]).into_bytes();
        Key::from_bytes([6; 32]).seal(&mut line);
        all[1] = String::from_utf8(line).unwrap();
        std::fs::write(&journal, all.join("\n") + "\n").unwrap();
    }
    let before = snapshot(&forged);
    let out = arbiter_in(&dir, &["adopt", "forged"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("journal.jsonl:2:") && stderr(&out).contains("cannot be adopted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        snapshot(&forged),
        before,
        "a refused adoption changed the folder"
    );
    // The honest folder is adopted, and then resumes and merges as the owner's.
    let out = arbiter_in(&dir, &["adopt", "run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("records sealed again with your key"),
        "{}",
        stdout(&out)
    );
    assert!(!run.join("run.key").exists());
    let resumed = arbiter_in(&dir, &["match", "--resume", "run", "--quiet"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
}

/// Cause guarded: a seal covered a line's game only, so between two runs of one owner with the
/// same settings, whoever could write both folders moved games from one into the other (each
/// line's bytes and seal intact) and `merge` and `--resume` counted them as the run's own. Now
/// each run's lines are sealed under a key of that run alone (its random id, proven with its
/// settings), and a line from another run is refused with its file and line.
#[test]
fn a_game_moved_in_from_another_run_of_the_same_settings_is_refused() {
    let dir = scratch("merge", "moved-in");
    for name in ["mine", "other"] {
        succeed_in(&dir, &with(small_match("run"), &["--shard", "1/1"]));
        std::fs::rename(dir.join("run"), dir.join(name)).unwrap();
    }
    let mine = dir.join("mine/shard-1-of-1/journal.jsonl");
    let other = lines(&dir.join("other/shard-1-of-1/journal.jsonl"));
    let mut all = lines(&mine);
    let game = |l: &str| l[..l.find(',').unwrap()].to_string();
    let at = all
        .iter()
        .position(|l| game(l) == game(&other[2]))
        .expect("the other run played the same game");
    let own = std::mem::replace(&mut all[at], other[2].clone());
    std::fs::write(&mine, all.join("\n") + "\n").unwrap();
    std::fs::rename(dir.join("mine"), dir.join("run")).unwrap();
    let want = format!("shard-1-of-1/journal.jsonl:{}: ", at + 1);
    let out = arbiter_in(&dir, &["merge", "merged", "run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
    assert!(!dir.join("merged/journal.jsonl").exists(), "nothing merged");
    let out = arbiter_in(&dir, &["match", "--resume", "run/shard-1-of-1", "--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
    // The run's own line put back: the run merges.
    all[at] = own;
    std::fs::write(
        dir.join("run/shard-1-of-1/journal.jsonl"),
        all.join("\n") + "\n",
    )
    .unwrap();
    succeed_in(&dir, &["merge", "merged", "run"].map(String::from));
}

/// Cause guarded: a line's seal covered its game alone, so whoever could write a run's folder
/// could delete the games they disliked from the middle of its journal (`--resume` played them
/// again, a second draw at the result) or move lines about, unseen. Each line now seals its
/// place (the whole lines before it): a line deleted or moved is refused at the next line
/// read, by `--resume` and by `merge`, with its file and line, and the merge does not offer to
/// play the "missing" games again. Only the last lines can go unseen, as a crash leaves them.
#[test]
fn a_game_deleted_from_a_journal_or_lines_moved_are_refused() {
    let dir = scratch("merge", "deleted");
    succeed_in(&dir, &with(small_match("run"), &["--shard", "1/1"]));
    let journal = dir.join("run/shard-1-of-1/journal.jsonl");
    let kept = lines(&journal);
    assert!(kept.len() >= 4, "{kept:?}");
    let refused = |edited: Vec<String>, line: usize| {
        std::fs::write(&journal, edited.join("\n") + "\n").unwrap();
        let want = format!("shard-1-of-1/journal.jsonl:{line}: this line is out of its place");
        for args in [
            &["merge", "merged", "run"][..],
            &["match", "--resume", "run/shard-1-of-1", "--quiet"][..],
        ] {
            let out = arbiter_in(&dir, args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(&want), "{args:?}: {}", stderr(&out));
            assert!(!stderr(&out).contains("again"), "{}", stderr(&out));
            assert!(!dir.join("merged").exists(), "nothing merged");
        }
    };
    // The second game deleted: the third line is found out.
    let mut deleted = kept.clone();
    deleted.remove(1);
    refused(deleted, 2);
    // The second and third swapped.
    let mut swapped = kept.clone();
    swapped.swap(1, 2);
    refused(swapped, 2);
    // A line written twice.
    let mut doubled = kept.clone();
    doubled.insert(2, kept[1].clone());
    refused(doubled, 3);
    // The journal as arbiter wrote it, and as a crash leaves it (its last game gone): both go on.
    let mut cut = kept.clone();
    cut.pop();
    std::fs::write(&journal, cut.join("\n") + "\n").unwrap();
    succeed_in(
        &dir,
        &["match", "--resume", "run/shard-1-of-1", "--quiet"].map(String::from),
    );
    succeed_in(&dir, &["merge", "merged", "run"].map(String::from));
}
