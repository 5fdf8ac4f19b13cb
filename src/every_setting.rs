//! A run setting is one `RunSpec` field, set by one flag and the TOML key of the same name: this
//! test proves that every field is reached from both (by setting it with the example its
//! declaration in `RunArgs` gives, and seeing the field change), so a setting added to the spec
//! but declared nowhere fails here, not in a user's run.

use super::runargs::RunArgs;
use super::{configcmd, run_job, Cli};
use arbiter::tournament::RunSpec;
use clap::{CommandFactory, FromArgMatches};
use serde_json::Value;
use std::path::Path;

/// How a field is set: the subcommand and flags that set it, and the TOML lines that do (`None`:
/// not a TOML key, with the reason).
struct Reach {
    field: &'static str,
    command: &'static str,
    flags: &'static [&'static str],
    toml: Result<&'static str, &'static str>,
}

/// A `RunArgs` setting's example as the lines of a TOML file: each flag its key, a flag alone
/// `true`, a flag's values one string.
fn toml_of(flags: &[&str]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut key: Option<&str> = None;
    let mut values: Vec<&str> = Vec::new();
    let end = |key: Option<&str>, values: &mut Vec<&str>, lines: &mut Vec<String>| {
        if let Some(key) = key {
            let value = match values.is_empty() {
                true => "true".to_string(),
                false => format!("{:?}", values.join(" ")),
            };
            lines.push(format!("{} = {value}", key.replace('-', "_")));
        }
        values.clear();
    };
    for word in flags {
        match word.strip_prefix("--") {
            Some(flag) => {
                end(key, &mut values, &mut lines);
                key = Some(flag);
            }
            None => values.push(word),
        }
    }
    end(key, &mut values, &mut lines);
    lines.join("\n")
}

/// A run setting as the test reaches it: the subcommand and flags that set its field, and the
/// TOML lines that do (`None`: not a key of the file).
struct Setting {
    field: &'static str,
    command: &'static str,
    flags: &'static [&'static str],
    toml: Option<String>,
}

/// Every run setting: those `RunArgs` declares, reached by their examples' flags and the same as
/// TOML keys, then the others.
fn every_setting() -> Vec<Setting> {
    let declared = RunArgs::SETTINGS.iter().map(|(field, flags)| Setting {
        field,
        command: "tournament",
        flags,
        toml: Some(toml_of(flags)),
    });
    let others = OTHER_SETTINGS.iter().map(|r| Setting {
        field: r.field,
        command: r.command,
        flags: r.flags,
        toml: r.toml.ok().map(String::from),
    });
    declared.chain(others).collect()
}

const fn reach(
    field: &'static str,
    command: &'static str,
    flags: &'static [&'static str],
    toml: Result<&'static str, &'static str>,
) -> Reach {
    Reach {
        field,
        command,
        flags,
        toml,
    }
}

/// The run settings `RunArgs` does not declare: set by a command's own flags, or by none.
const OTHER_SETTINGS: &[Reach] = &[
    reach(
        "folder_format",
        "match",
        &[],
        Err("the folder's format, this build's: `arbiter adopt` upgrades an earlier one"),
    ),
    reach(
        "contents",
        "match",
        &[],
        Err("taken from the files when the run starts: the book's and programs' hashes"),
    ),
    reach(
        "kind",
        "match",
        &[],
        Err("the command: match or tournament; a file is a tournament"),
    ),
    reach(
        "game",
        "tournament",
        &["--game", "chess"],
        Ok("game = \"chess\""),
    ),
    reach(
        "engines",
        "tournament",
        &["--each", "tc=5+0.1"],
        Ok("[each]\ntc = \"5+0.1\""),
    ),
    reach(
        "format",
        "tournament",
        &["--format", "gauntlet"],
        Ok("format = \"gauntlet\""),
    ),
    reach(
        "seeds",
        "tournament",
        &["--format", "gauntlet", "--seeds", "2"],
        Ok("format = \"gauntlet\"\nseeds = 2"),
    ),
    reach(
        "seeds_meet",
        "tournament",
        &["--format", "gauntlet", "--seeds-meet"],
        Ok("format = \"gauntlet\"\nseeds_meet = true"),
    ),
    reach("rounds", "tournament", &["--rounds", "7"], Ok("rounds = 7")),
    reach("games", "tournament", &["--games", "9"], Ok("games = 9")),
    reach(
        "sprt",
        "match",
        &["--sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05"],
        Ok("sprt = \"elo0=0 elo1=5 alpha=0.05 beta=0.05\""),
    ),
    reach(
        "shuffle",
        "match",
        &[],
        Err("the run's way of shuffling a random-order book: a resumed run, or a task joining one, \
            keeps its run's"),
    ),
    reach(
        "copy_base",
        "match",
        &[],
        Err("taken from the files when the run starts: how long --pgnout and --epdout were"),
    ),
    reach(
        "shard",
        "tournament",
        &["--shard", "1/2"],
        Err("per task: `arbiter run FILE --shard K/N`"),
    ),
    reach(
        "lease",
        "tournament",
        &["--lease", "60"],
        Err("per task: `arbiter run FILE --lease S`"),
    ),
];

fn of_flags(command: &str, flags: &[&str]) -> Value {
    let mut argv = vec!["arbiter", command];
    argv.extend([
        "--engine",
        "cmd=/bin/true",
        "name=a",
        "depth=1",
        "--engine",
        "cmd=/bin/true",
        "name=b",
        "depth=1",
    ]);
    argv.extend(flags);
    let matches = Cli::command()
        .try_get_matches_from(&argv)
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let cli = Cli::from_arg_matches(&matches).unwrap();
    let job = run_job(cli.command, &matches).unwrap_or_else(|f| panic!("{argv:?}: {}", f.message));
    serde_json::to_value(job.spec).unwrap()
}

fn of_toml(lines: &str) -> Value {
    let text = format!(
        "{lines}\n[[engine]]\ncmd = \"/bin/true\"\nname = \"a\"\ndepth = 1\n[[engine]]\ncmd = \
            \"/bin/true\"\nname = \"b\"\ndepth = 1\n"
    );
    let job = configcmd::job_of_text(text.clone(), Path::new("/run.toml"), true, None)
        .unwrap_or_else(|f| panic!("{text}: {}", f.message));
    serde_json::to_value(job.spec).unwrap()
}

#[test]
fn every_run_setting_is_reached_from_a_flag_and_a_toml_key() {
    let mut spec = RunSpec::new(arbiter::tournament::RunKind::Match, Vec::new());
    // Left out of run.json when off, so that the runs before it keep their identity.
    spec.no_book = true;
    spec.pgnout_min = true;
    spec.pgn_nodes = true;
    spec.pgn_seldepth = true;
    spec.pgn_line = vec!["x".into()];
    spec.check_pvs = Some(arbiter::referee::pv_check::PvChecks::Lines);
    spec.tablebase = Some(arbiter::referee::tablebase::TbRule::parse("path=x").unwrap());
    spec.games_per_opening = 1;
    spec.seeds = 2;
    spec.seeds_meet = true;
    let fields = serde_json::to_value(spec).unwrap();
    let fields: Vec<&String> = fields.as_object().unwrap().keys().collect();
    let every = every_setting();
    let listed: Vec<&str> = every.iter().map(|r| r.field).collect();
    for field in &fields {
        assert!(
            listed.contains(&field.as_str()),
            "RunSpec::{field} is neither declared in RunArgs nor listed in OTHER_SETTINGS"
        );
    }
    assert_eq!(
        listed.len(),
        fields.len(),
        "a listed field RunSpec does not have"
    );
    let base_toml = of_toml("");
    for r in every.iter().filter(|r| !r.flags.is_empty()) {
        let base = of_flags(r.command, &[]);
        let set = of_flags(r.command, r.flags);
        assert_ne!(
            set[r.field], base[r.field],
            "{:?} leaves {} as it was",
            r.flags, r.field
        );
        if let Some(lines) = &r.toml {
            assert_ne!(
                of_toml(lines)[r.field],
                base_toml[r.field],
                "TOML `{lines}` leaves {} as it was",
                r.field
            );
        }
    }
}

/// Exactly the declared fields may differ between the tasks of one split run: every one of
/// them leaves the run's identity as it was, and changing any other changes it.
#[test]
fn only_the_per_task_settings_may_differ_between_shards() {
    let base = of_flags("tournament", &[]);
    let identity = |v: &Value| {
        serde_json::from_value::<RunSpec>(v.clone())
            .unwrap()
            .identity()
    };
    let every = every_setting();
    for r in every.iter().filter(|r| !r.flags.is_empty()) {
        let changed = of_flags(r.command, r.flags);
        let per_task = RunSpec::PER_TASK.contains(&r.field);
        let mut only_it = base.clone();
        only_it[r.field] = changed[r.field].clone();
        assert_eq!(
            identity(&only_it) == identity(&base),
            per_task,
            "{}: per task is {per_task}",
            r.field
        );
    }
    for field in RunSpec::PER_TASK {
        assert!(
            every.iter().any(|r| r.field == *field),
            "{field} is not a setting"
        );
    }
}
