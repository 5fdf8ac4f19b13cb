//! The journal's group commit, on real games of the bundled engine: finished games share their
//! disk syncs, none is counted before it is in the journal, and a game that may end the run (an
//! SPRT's) is synced at once.

use crate::common;

use arbiter::engine::EngineConfig;
use arbiter::game::find_game;
use arbiter::run::run_reported as run;
use arbiter::tournament::{RunFolder, RunKind, RunOptions, RunOutcome, RunSpec};
use common::{bundled_engine, scratch};
use std::path::Path;

fn instant(name: &str) -> EngineConfig {
    EngineConfig::parse(
        &[
            format!("cmd={}", bundled_engine()),
            format!("name={name}"),
            "proto=leiserchess".into(),
            "arg=--dialect".into(),
            "arg=leiserchess".into(),
            "depth=1".into(),
        ],
        &[] as &[String],
    )
    .unwrap()
}

/// Plays `games` quick games into `dir`; each game, as it is counted, must already be a line of
/// the journal. Returns the outcome and how many games were counted.
fn play(dir: &Path, games: u64, sprt: Option<&str>) -> (RunOutcome, u64) {
    let mut spec = RunSpec::new(RunKind::Tournament, vec![instant("a"), instant("b")]);
    spec.rounds = games.div_ceil(2);
    spec.games = Some(games);
    spec.max_plies = 60;
    spec.viewer_games = 0;
    if let Some(bounds) = sprt {
        spec.sprt = Some(arbiter::stats::Sprt::parse(bounds).unwrap());
    }
    let entry = find_game(&spec.game).unwrap();
    let folder = RunFolder::open(&spec, dir, false).unwrap();
    let journal = folder.journal();
    let opts = RunOptions::of(spec, entry, Vec::new(), folder);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut counted = 0;
    let outcome = runtime
        .block_on(run(opts, |p| {
            counted += 1;
            let text = std::fs::read_to_string(&journal).unwrap();
            let needle = format!("{{\"index\":{},", p.game - 1);
            assert!(
                text.lines().any(|l| l.starts_with(&needle)),
                "game {} counted before it was in the journal",
                p.game
            );
        }))
        .unwrap();
    (outcome, counted)
}

#[test]
fn finished_games_share_their_syncs_and_count_only_once_written() {
    let dir = scratch("group-commit", "shared");
    let (outcome, counted) = play(&dir, 24, None);
    assert_eq!(counted, 24);
    assert!(outcome.journal_syncs >= 1);
    // Quick games finish many to a sync window: far fewer syncs than games.
    assert!(
        outcome.journal_syncs < 24,
        "{} syncs for 24 games",
        outcome.journal_syncs
    );
}

#[test]
fn an_sprt_syncs_each_game_at_once() {
    let dir = scratch("group-commit", "sprt");
    // Bounds no 8 games can decide: every game is played and each is synced as it comes.
    let (outcome, counted) = play(&dir, 8, Some("elo0=0 elo1=5 alpha=0.05 beta=0.05"));
    assert_eq!(counted, 8);
    // Synced at once, a game waits only for a sync already under way: on a busy disk the next
    // game may finish meanwhile and share the following one (6 or 7 syncs were seen under load).
    // Waiting for company, these eight quick games (well within one window) would share one.
    assert!(
        (3..=8).contains(&outcome.journal_syncs),
        "{} syncs for 8 games",
        outcome.journal_syncs
    );
}
