//! Folders an earlier build wrote (`tests/data/format-1`, made by the build of the commit tagged
//! `format-1`): refused with the one command that upgrades them, and after `arbiter adopt` a split
//! run with a random-order book goes on with `--shard` and `arbiter slurm`, and merges to the
//! bytes of the same run played on one machine.

use crate::common;

use common::earlier_format::{earlier_folders, the_run};
use common::{assert_exit, scratch, stderr, stdout};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn arbiter(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .current_dir(dir)
        .env("ARBITER_KEY", dir.join("key"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn run(dir: &Path, more: &[&str]) -> Output {
    let args = the_run(more);
    arbiter(dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The upgrade command, on a line of its own (no clip of the message cuts it).
fn names_the_upgrade(out: &Output, folder: &str) {
    let err = stderr(out);
    assert!(err.contains("earlier arbiter"), "{err}");
    assert!(
        err.lines().any(|l| {
            let l = l.trim();
            l.starts_with("arbiter adopt ") && Path::new(&l[14..]).ends_with(folder)
        }),
        "{err}"
    );
}

const COMPARED: [&str; 3] = ["games.csv", "standings.csv", "crosstable.csv"];

#[test]
fn an_earlier_builds_split_run_goes_on_after_one_upgrade_and_merges_to_one_machines_bytes() {
    let dir = scratch("format", "split");
    earlier_folders(&dir);
    // Every path refuses the earlier format, naming the one command.
    let joined = run(&dir, &["--out", "split", "--shard", "2/2"]);
    assert_exit(&joined, 2);
    names_the_upgrade(&joined, "split");
    let slurm = {
        let mut args = vec![
            "slurm".to_string(),
            "--shards".into(),
            "2".into(),
            "--".into(),
        ];
        args.extend(the_run(&["--out", "split"]));
        args
    };
    let slurm: Vec<&str> = slurm.iter().map(String::as_str).collect();
    let refused = arbiter(&dir, &slurm);
    assert_exit(&refused, 2);
    names_the_upgrade(&refused, "split");
    let resumed = arbiter(&dir, &["match", "--resume", "whole"]);
    assert_exit(&resumed, 2);
    names_the_upgrade(&resumed, "whole");

    let adopted = arbiter(&dir, &["adopt", "split"]);
    assert_exit(&adopted, 0);
    assert!(
        stdout(&adopted).contains("upgraded split/claims/run.json to folder format"),
        "{}",
        stdout(&adopted)
    );
    let again = arbiter(&dir, &["adopt", "split"]);
    assert_exit(&again, 2);
    assert!(
        stderr(&again).contains("nothing to upgrade"),
        "{}",
        stderr(&again)
    );

    let script = arbiter(&dir, &slurm);
    assert_exit(&script, 0);
    assert!(
        stdout(&script).contains("--shard slurm"),
        "{}",
        stdout(&script)
    );
    // A new task joins, and the interrupted one continues.
    assert_exit(&run(&dir, &["--out", "split", "--shard", "2/2"]), 0);
    assert_exit(&run(&dir, &["--out", "split", "--shard", "1/2"]), 0);
    let merged = arbiter(&dir, &["merge", "merged", "split"]);
    assert_exit(&merged, 0);
    assert!(
        stdout(&merged).contains("Merged 8 games"),
        "{}",
        stdout(&merged)
    );

    // The same run on one machine, by the earlier build, upgraded and its reports written again.
    assert_exit(&arbiter(&dir, &["adopt", "whole"]), 0);
    assert_exit(
        &arbiter(&dir, &["match", "--resume", "whole", "--quiet"]),
        0,
    );
    for file in COMPARED {
        let (one, split) = (
            std::fs::read_to_string(dir.join("whole").join(file)).unwrap(),
            std::fs::read_to_string(dir.join("merged").join(file)).unwrap(),
        );
        assert!(
            one == split,
            "{file}: the merged split run is not the run of one machine (if the bundled engine \
             now plays other moves at depths 1 and 2, make tests/data/format-1 again as its \
             README says):\n{one}\n---\n{split}"
        );
    }
    // The earlier order was kept: this build's own order plays other openings.
    assert_exit(&run(&dir, &["--out", "fresh"]), 0);
    let order = |d: &str| {
        let text = std::fs::read_to_string(dir.join(d).join("games.pgn")).unwrap();
        // The book's moves, each marked `{book}` in the movetext.
        let words: Vec<&str> = text.split_whitespace().collect();
        words
            .windows(2)
            .filter(|w| w[1] == "{book}")
            .map(|w| w[0].to_string())
            .collect::<Vec<_>>()
    };
    assert_ne!(order("fresh"), order("merged"));
}

#[test]
fn an_upgrade_checks_every_seal_first_and_changes_nothing_it_cannot_prove() {
    let dir = scratch("format", "forged");
    earlier_folders(&dir);
    let spec = dir.join("split/shard-1-of-2/run.json");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.replace("\"seed\": 3", "\"seed\": 4")).unwrap();
    let before = std::fs::read(dir.join("split/claims/run.json")).unwrap();
    let out = arbiter(&dir, &["adopt", "split"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("nothing was upgraded"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(dir.join("split/claims/run.json")).unwrap(),
        before
    );
}

/// A bisect the earlier build stopped after three steps: refused with the upgrade command, and
/// after one `arbiter adopt` resumed to its budget. The steps it played are read back as they
/// were, none is played again, and the rest are this build's.
#[test]
fn an_earlier_builds_bisect_goes_on_after_one_upgrade_from_the_steps_it_played() {
    let dir = scratch("format", "bisect");
    earlier_folders(&dir);
    let resume = ["bisect", "--resume", "bisect", "--quiet"];
    let refused = arbiter(&dir, &resume);
    assert_exit(&refused, 2);
    names_the_upgrade(&refused, "bisect");
    let json = |file: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("bisect").join(file)).unwrap())
            .unwrap()
    };
    let before = json("bisect.json");
    assert_eq!(before["status"], "interrupted");
    let played = before["steps"].as_array().unwrap().clone();
    assert_eq!(played.len(), 3);
    let journals = |steps: &[serde_json::Value]| -> Vec<String> {
        steps
            .iter()
            .map(|s| {
                let folder = dir.join("bisect").join(s["folder"].as_str().unwrap());
                std::fs::read_to_string(folder.join("journal.jsonl")).unwrap()
            })
            .collect()
    };
    let kept = journals(&played);

    let adopted = arbiter(&dir, &["adopt", "bisect"]);
    assert_exit(&adopted, 0);
    let said = stdout(&adopted);
    for file in [
        "bisect/bisect-spec.json",
        "bisect/steps/001-v5/run.json",
        "bisect/steps/003-v3/run.json",
    ] {
        assert!(said.contains(&format!("upgraded {file}")), "{said}");
    }
    // Out of the budget of 48 games, the 24 left are played.
    assert_exit(&arbiter(&dir, &resume), 3);
    let after = json("bisect.json");
    assert_eq!(after["status"], "budget", "{after}");
    assert_eq!(after["games"], 48, "{after}");
    let steps = after["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6, "{after}");
    // As they were, in everything the earlier build said of them (this build says more).
    for (now, then) in steps.iter().zip(&played) {
        for (key, value) in then.as_object().unwrap() {
            assert_eq!(&now[key], value, "{key} of {then}");
        }
    }
    assert_eq!(
        journals(&steps[..3]),
        kept,
        "no game of them was played again"
    );
    assert_exit(&arbiter(&dir, &["adopt", "bisect"]), 2);
}
