//! A run setting is one `RunSpec` field, set by one flag and the TOML key of the same name: this
//! test proves that every field is reached from both (by setting it and seeing the field
//! change), so a setting added to the spec but not to `RunArgs` fails here, not in a user's run.

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

const EVERY_SETTING: &[Reach] = &[
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
        "concurrency",
        "tournament",
        &["--concurrency", "2"],
        Ok("concurrency = 2"),
    ),
    reach(
        "affinity",
        "tournament",
        &["--affinity"],
        Ok("affinity = true"),
    ),
    reach(
        "openings",
        "tournament",
        &["--openings", "/b.txt"],
        Ok("openings = \"/b.txt\""),
    ),
    reach(
        "book_plies",
        "tournament",
        &["--book-plies", "4"],
        Ok("book_plies = 4"),
    ),
    reach(
        "book_format",
        "tournament",
        &["--book-format", "pgn"],
        Ok("book_format = \"pgn\""),
    ),
    reach(
        "no_book",
        "tournament",
        &["--no-book"],
        Ok("no_book = true"),
    ),
    reach(
        "random_openings",
        "tournament",
        &["--random-openings"],
        Ok("random_openings = true"),
    ),
    reach(
        "book_start",
        "tournament",
        &["--book-start", "3"],
        Ok("book_start = 3"),
    ),
    reach(
        "colours",
        "tournament",
        &["--colours", "first-white"],
        Ok("colours = \"first-white\""),
    ),
    reach(
        "games_per_opening",
        "tournament",
        &["--games-per-opening", "1"],
        Ok("games_per_opening = 1"),
    ),
    reach("seed", "tournament", &["--seed", "9"], Ok("seed = 9")),
    reach(
        "max_plies",
        "tournament",
        &["--max-plies", "90"],
        Ok("max_plies = 90"),
    ),
    reach(
        "rules",
        "tournament",
        &["--rules", "repetition=fairy-stockfish"],
        Ok("rules = \"repetition=fairy-stockfish\""),
    ),
    reach(
        "draw",
        "tournament",
        &["--draw", "movenumber=40", "movecount=8", "score=10"],
        Ok("draw = \"movenumber=40 movecount=8 score=10\""),
    ),
    reach(
        "check_pvs",
        "match",
        &["--game", "chess", "--check-pvs", "mates"],
        Ok("game = \"chess\"\ncheck_pvs = \"mates\""),
    ),
    reach(
        "tablebase",
        "match",
        &["--game", "chess", "--tablebase", "path=tests/syzygy", "pieces=4"],
        Ok("game = \"chess\"\ntablebase = \"path=tests/syzygy pieces=4\""),
    ),
    reach(
        "resign",
        "tournament",
        &["--resign", "movecount=3", "score=600"],
        Ok("resign = \"movecount=3 score=600\""),
    ),
    reach("strict", "tournament", &["--strict"], Ok("strict = true")),
    reach(
        "sprt",
        "match",
        &["--sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05"],
        Ok("sprt = \"elo0=0 elo1=5 alpha=0.05 beta=0.05\""),
    ),
    reach(
        "anchor",
        "tournament",
        &["--anchor", "a=100"],
        Ok("anchor = \"a=100\""),
    ),
    reach("name", "tournament", &["--name", "x"], Ok("name = \"x\"")),
    reach("out", "tournament", &["--out", "/x"], Ok("out = \"/x\"")),
    reach(
        "log",
        "tournament",
        &["--log", "/io.log"],
        Ok("log = \"/io.log\""),
    ),
    reach(
        "pgnout",
        "tournament",
        &["--pgnout", "/g.pgn"],
        Ok("pgnout = \"/g.pgn\""),
    ),
    reach(
        "epdout",
        "tournament",
        &["--epdout", "/g.epd"],
        Ok("epdout = \"/g.epd\""),
    ),
    reach(
        "replace_copies",
        "tournament",
        &["--replace-copies"],
        Ok("replace_copies = true"),
    ),
    reach(
        "pgnout_min",
        "tournament",
        &["--pgnout", "/g.pgn", "--pgnout-min"],
        Ok("pgnout = \"/g.pgn\"\npgnout_min = true"),
    ),
    reach(
        "pgn_nodes",
        "match",
        &["--pgn-nodes"],
        Ok("pgn_nodes = true"),
    ),
    reach(
        "pgn_seldepth",
        "match",
        &["--pgn-seldepth"],
        Ok("pgn_seldepth = true"),
    ),
    reach(
        "pgn_line",
        "match",
        &["--pgn-line", "^info string pgncomment .*"],
        Ok("pgn_line = \"^info string pgncomment .*\""),
    ),
    reach(
        "shuffle",
        "match",
        &[],
        Err("this build's way of shuffling a random-order book, kept so that a run resumed by a newer build keeps its order"),
    ),
    reach(
        "copy_base",
        "match",
        &[],
        Err("taken from the files when the run starts: how long --pgnout and --epdout were"),
    ),
    reach(
        "event",
        "tournament",
        &["--event", "E"],
        Ok("event = \"E\""),
    ),
    reach("site", "match", &["--site", "S"], Ok("site = \"S\"")),
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
    reach(
        "viewer_games",
        "tournament",
        &["--viewer-games", "3"],
        Ok("viewer_games = 3"),
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
        "{lines}\n[[engine]]\ncmd = \"/bin/true\"\nname = \"a\"\ndepth = 1\n[[engine]]\ncmd = \"/bin/true\"\nname = \"b\"\ndepth = 1\n"
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
    let listed: Vec<&str> = EVERY_SETTING.iter().map(|r| r.field).collect();
    for field in &fields {
        assert!(
            listed.contains(&field.as_str()),
            "RunSpec::{field} has no flag or TOML key listed in EVERY_SETTING"
        );
    }
    assert_eq!(
        listed.len(),
        fields.len(),
        "a listed field RunSpec does not have"
    );
    let base_toml = of_toml("");
    for r in EVERY_SETTING.iter().filter(|r| !r.flags.is_empty()) {
        let base = of_flags(r.command, &[]);
        let set = of_flags(r.command, r.flags);
        assert_ne!(
            set[r.field], base[r.field],
            "{:?} leaves {} as it was",
            r.flags, r.field
        );
        if let Ok(lines) = r.toml {
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
    for r in EVERY_SETTING.iter().filter(|r| !r.flags.is_empty()) {
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
            EVERY_SETTING.iter().any(|r| r.field == *field),
            "{field} is not a setting"
        );
    }
}
