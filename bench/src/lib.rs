//! `arbiter bench`, a tool beside the library rather than part of it: perft speed of every game,
//! and the referee's own cost with engines that reply at once: CPU per ply and per game (engines
//! excluded), throughput, latency, peak memory; SPRT and claim simulations; and the comparison with
//! another harness (`peer`).

#[macro_use]
extern crate arbiter;

pub mod bisect_sim;
pub mod cold;
mod latency;
mod load;
pub mod peer;
mod relay_floor;
mod scale;
mod watch_cost;
pub use scale::scale_bench;
pub use watch_cost::watch_cost;

/// Why a benchmark cannot run: bad input, named.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BenchError(pub String);

impl BenchError {
    pub fn bad_input(message: impl Into<String>) -> BenchError {
        BenchError(message.into())
    }
}

type Failure = BenchError;

use arbiter::engine::EngineConfig;
use arbiter::game::{find_game, games, GameEntry};
use arbiter::run::Run;
use arbiter::stats::percentiles;
use arbiter::tournament::{Progress, RunKind, RunOutcome, RunSpec};
use std::io::Write;
use std::time::Instant;

pub struct Row {
    pub(crate) benchmark: String,
    pub(crate) value: f64,
    pub(crate) unit: &'static str,
}

pub(crate) fn row(benchmark: impl Into<String>, value: f64, unit: &'static str) -> Row {
    Row {
        benchmark: benchmark.into(),
        value,
        unit,
    }
}

fn perft_rows(entry: &'static GameEntry, full: bool) -> Result<Vec<Row>, Failure> {
    let (short, deep) = entry.bench_depths;
    let depth = if full { deep } else { short };
    let started = Instant::now();
    let leaves = entry
        .perft_at(None, depth)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    let secs = started.elapsed().as_secs_f64();
    Ok(vec![
        row(
            format!("perft {} depth {depth}: leaves", entry.id),
            leaves as f64,
            "leaves",
        ),
        row(format!("perft {} depth {depth}: time", entry.id), secs, "s"),
        row(
            format!("perft {} depth {depth}: speed", entry.id),
            leaves as f64 / secs.max(1e-9) / 1e6,
            "M leaves/s",
        ),
    ])
}

/// CPU time of this process alone (all its threads; child processes are not included), to the
/// microsecond (`/proc` counts clock ticks).
pub(crate) use arbiter::engine::overhead::own_cpu;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

/// A match of two instant engines (the bundled engine in the MIT dialect at depth 1, which
/// reports microseconds) from the start position, to be played into `out`, with these settings
/// for both engines (`sandbox=off`, `freeze=off`).
fn instant_match_in(
    games: u64,
    concurrency: usize,
    affinity: bool,
    out: std::path::PathBuf,
    extra: &[&str],
) -> Result<RunSpec, Failure> {
    let engine = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("arbiter-engine")))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            Failure::bad_input("bench needs arbiter-engine next to arbiter: build the workspace")
        })?;
    let cfg = |name: &str| {
        let mut settings = vec![
            format!("cmd={}", engine.display()),
            format!("name={name}"),
            "proto=leiserchess".into(),
            "arg=--dialect".into(),
            "arg=leiserchess".into(),
            "option.style=0".into(),
            "depth=1".into(),
        ];
        settings.extend(extra.iter().map(|s| s.to_string()));
        EngineConfig::parse(&settings, &[] as &[String])
            .map_err(|e| Failure::bad_input(e.to_string()))
    };
    let mut spec = RunSpec::new(RunKind::Tournament, vec![cfg("a")?, cfg("b")?]);
    spec.rounds = games.div_ceil(2);
    spec.games = Some(games);
    spec.concurrency = concurrency;
    spec.affinity = arbiter::tournament::Affinity::Pinned(affinity);
    spec.max_plies = 300;
    spec.event = Some("bench".into());
    spec.viewer_games = 0;
    // The same games wherever the bench is started, a default book in its folder or not.
    spec.no_book = true;
    spec.out = Some(out);
    Ok(spec)
}

/// Plays a run as `arbiter match` does: prepared (checked, completed, nothing written), opened
/// (engines started, folder locked) and played, telling `on_game` after each game.
fn play(spec: RunSpec, on_game: impl FnMut(Progress)) -> Result<RunOutcome, Failure> {
    let failed = |e: arbiter::tournament::RunError| Failure::bad_input(e.to_string());
    Run::prepare(spec, None)
        .and_then(Run::open)
        .map_err(failed)?
        .play(on_game)
        .map_err(failed)
}

fn referee_rows(games: u64, concurrency: usize, affinity: bool) -> Result<Vec<Row>, Failure> {
    referee_rows_with(games, concurrency, affinity, &[])
}

/// The referee rows with more settings for both engines, named in the rows' labels.
fn referee_rows_with(
    games: u64,
    concurrency: usize,
    affinity: bool,
    extra: &[&str],
) -> Result<Vec<Row>, Failure> {
    let out = std::env::temp_dir().join(format!(
        "arbiter-bench-{}-{concurrency}-{games}-{affinity}-{}",
        std::process::id(),
        extra.join("-")
    ));
    let _ = std::fs::remove_dir_all(&out);
    let mut settings = vec!["sandbox=auto"];
    settings.extend_from_slice(extra);
    let spec = instant_match_in(games, concurrency, affinity, out.clone(), &settings)?;
    let mut plies = 0u64;
    let cpu_before = own_cpu();
    let started = Instant::now();
    let outcome = play(spec.clone(), |p| plies += p.record.plies() as u64)?;
    let wall = started.elapsed().as_secs_f64();
    let cpu = (own_cpu() - cpu_before).as_secs_f64();
    let report_cpu = report_cpu(spec, &out)?;
    let _ = std::fs::remove_dir_all(&out);
    let pinned = if affinity { " pinned" } else { "" };
    let with: String = extra.iter().map(|e| format!(" {e}")).collect();
    let label = |what: &str| format!("referee c={concurrency}{pinned}{with} {games} games: {what}");
    let mut rows = vec![
        row(label("plies"), plies as f64, "plies"),
        row(
            label("own CPU per ply"),
            cpu / plies.max(1) as f64 * 1e6,
            "us",
        ),
        row(label("own CPU per game"), cpu / games as f64 * 1e3, "ms"),
        row(
            label("reports rebuilt from the journal, CPU per 1000 games"),
            report_cpu / games as f64 * 1e6,
            "ms",
        ),
        row(label("throughput"), games as f64 / wall, "games/s"),
        row(
            label("journal syncs"),
            outcome.journal_syncs as f64,
            "syncs",
        ),
        row(
            label("time forfeits"),
            outcome.time_forfeits as f64,
            "games",
        ),
    ];
    if let Some((median, p99, max)) = percentiles(&outcome.latency_us) {
        rows.push(row(label("turnaround median"), median as f64, "us"));
        rows.push(row(label("turnaround p99"), p99 as f64, "us"));
        rows.push(row(label("turnaround max"), max as f64, "us"));
    }
    rows.push(row(label("peak RSS so far"), peak_rss_mib(), "MiB"));
    Ok(rows)
}

/// The CPU time of writing a finished run's reports again from its journal, as `--resume` of a
/// finished run or `merge` does, the game viewer included (the run itself showed none).
fn report_cpu(mut spec: RunSpec, dir: &std::path::Path) -> Result<f64, Failure> {
    spec.viewer_games = arbiter::report::viewer::MAX_SHOWN;
    let failed = |e: arbiter::tournament::RunError| Failure::bad_input(e.to_string());
    let before = own_cpu();
    Run::prepare(spec, Some(dir))
        .and_then(Run::open)
        .map_err(failed)?
        .play(|_| {})
        .map_err(failed)?;
    Ok((own_cpu() - before).as_secs_f64())
}

/// What the sandbox costs: an engine's start (to the end of its handshake, then `quit`), and
/// the wall time per ply of an instant match, with the sandbox and without.
fn sandbox_rows(games: u64) -> Result<Vec<Row>, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    let mut rows = Vec::new();
    for mode in ["off", "on"] {
        let out = std::env::temp_dir().join(format!(
            "arbiter-bench-sandbox-{}-{mode}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&out);
        let spec = instant_match_in(games, 1, false, out.clone(), &[&format!("sandbox={mode}")])?;
        let engine = spec.engines[0].clone();
        let mut starts = Vec::new();
        for _ in 0..20 {
            let started = Instant::now();
            let process = runtime
                .block_on(arbiter::engine::EngineProcess::start(
                    &engine,
                    "leiserchess",
                    None,
                ))
                .map_err(|e| Failure::bad_input(e.to_string()))?;
            starts.push(started.elapsed().as_micros() as u64);
            runtime.block_on(process.quit());
        }
        starts.sort_unstable();
        let mut plies = 0u64;
        let started = Instant::now();
        play(spec, |p| plies += p.record.plies() as u64)?;
        let wall = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&out);
        let label = |what: &str| format!("sandbox={mode}: {what}");
        rows.push(row(
            label("engine start to ready, median of 20"),
            starts[10] as f64 / 1e3,
            "ms",
        ));
        rows.push(row(
            label(&format!("wall per ply, {games} instant games")),
            wall / plies.max(1) as f64 * 1e6,
            "us",
        ));
    }
    Ok(rows)
}

/// `only`: perft of one game and nothing else; `referee_only`: the referee rows alone.
pub fn run_bench(
    full: bool,
    only: Option<&str>,
    csv: Option<&std::path::Path>,
    referee_only: bool,
) -> Result<(), Failure> {
    let selected: Vec<&'static GameEntry> = match only {
        _ if referee_only => Vec::new(),
        Some(id) => {
            vec![find_game(id).ok_or_else(|| Failure::bad_input(format!("unknown game '{id}'")))?]
        }
        None => games(),
    };
    let referee = only.is_none();
    let mut rows = Vec::new();
    let print = |r: &Row| say!("{:<60} {:>16.2} {}", r.benchmark, r.value, r.unit);
    for entry in selected {
        let perft = perft_rows(entry, full)?;
        for r in perft.into_iter().chain(cold::rules_rows(entry, full)?) {
            print(&r);
            rows.push(r);
        }
    }
    if referee {
        let games = if full { 1000 } else { 40 };
        for affinity in [false, true] {
            for concurrency in [1, 2] {
                for r in referee_rows(games, concurrency, affinity)? {
                    print(&r);
                    rows.push(r);
                }
            }
        }
        // What watching (and freezing) the engine that is not on move costs the referee: the
        // same match with the engines left alone between their turns.
        for affinity in [false, true] {
            for r in referee_rows_with(games, 1, affinity, &["freeze=off"])? {
                print(&r);
                rows.push(r);
            }
        }
        for r in sandbox_rows(games)? {
            print(&r);
            rows.push(r);
        }
        if full {
            for r in referee_rows(10_000, 2, true)? {
                print(&r);
                rows.push(r);
            }
        }
    }
    if let Some(path) = csv {
        let mut text = String::from("benchmark,value,unit\n");
        for r in &rows {
            text.push_str(&format!(
                "\"{}\",{:.3},{}\n",
                r.benchmark.replace('"', "'"),
                r.value,
                r.unit
            ));
        }
        let mut f = std::fs::File::create(path)
            .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
        f.write_all(text.as_bytes())
            .map_err(|e| Failure::bad_input(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// `arbiter bench --sprt-sim`: measured error rates and average sample numbers of an SPRT.
pub fn sprt_simulation(bounds: &str, runs: u64) -> Result<(), Failure> {
    use arbiter::stats::simulate::{at_elo, simulate, standard_error, SHAPES};
    let sprt = arbiter::stats::Sprt::parse(bounds)
        .map_err(|e| Failure::bad_input(format!("--sprt-sim: {e}")))?;
    if runs == 0 {
        return Err(Failure::bad_input("--runs must be at least 1"));
    }
    if sprt.model == arbiter::stats::SprtModel::Bayesian {
        return Err(Failure::bad_input(
            "--sprt-sim simulates game pairs, which the logistic and normalized models read; \
             the Bayesian model reads single games",
        ));
    }
    say!(
        "SPRT elo0={} elo1={} alpha={} beta={} model={:?}, {runs} simulated tests per row, \
         stopped at 1,000,000 pairs",
        sprt.elo0,
        sprt.elo1,
        sprt.alpha,
        sprt.beta,
        sprt.model
    );
    say!(
        "{:<26} {:>6} {:>16} {:>12} {:>10}",
        "pair distribution",
        "Elo",
        "accepts H1",
        "accepts H0",
        "mean pairs"
    );
    for (k, shape) in SHAPES.iter().enumerate() {
        for elo in [sprt.elo0, sprt.elo1] {
            let probs = at_elo(shape, sprt.model, elo);
            let o = simulate(
                &sprt,
                &probs,
                runs,
                1_000_000,
                7919 * k as u64 + elo.to_bits(),
            );
            let rate = |p: f64| format!("{:.3} ± {:.3}", p, standard_error(p, runs));
            say!(
                "{:<26} {:>6} {:>16} {:>12} {:>10.0}",
                shape.name,
                elo,
                rate(o.rate_h1()),
                rate(o.rate_h0()),
                o.mean_pairs
            );
        }
    }
    say!(
        "A sound test accepts H1 at elo0 at most alpha = {} of the time and H0 at elo1 at most \
         beta = {} (± the sampling error shown).",
        sprt.alpha,
        sprt.beta
    );
    Ok(())
}

/// `bench --shards N --games M`: N tasks (threads here, each with its own claims as a cluster
/// task has) claim the M/2 game pairs of a schedule in a scratch folder, as a split run's tasks
/// do. Every pair must be claimed by exactly one task; timed, with the files touched per pair
/// (the claim protocol's cost on a shared file system).
pub fn shard_simulation(shards: u64, games: u64) -> Result<(), Failure> {
    use arbiter::tournament::claims::{owner_in, Blocks, CLAIMS_DIR};
    use arbiter::tournament::spec::MAX_SHARDS;
    if games == 0 || shards == 0 || shards > MAX_SHARDS {
        return Err(Failure::bad_input(
            "--shards and --games must be at least 1 (shards at most 100,000)",
        ));
    }
    let pairs = games.div_ceil(2);
    let root = std::env::temp_dir().join(format!("arbiter-claims-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let failed = |e: String| Failure::bad_input(format!("claims bench: {e}"));
    let blocks = Blocks::of_run(pairs, false);
    let started = Instant::now();
    let tasks: Vec<_> = (1..=shards)
        .map(|k| {
            let (root, me) = (root.clone(), format!("shard-{k}-of-{shards}"));
            std::thread::spawn(move || claim_all_one_can(&root, &me, blocks))
        })
        .collect();
    let mut owner = vec![0u64; pairs as usize];
    let (mut touched, mut counts) = (0u64, Vec::new());
    for (k, task) in tasks.into_iter().enumerate() {
        let (mine, files) = task
            .join()
            .map_err(|_| failed("a task panicked".into()))?
            .map_err(failed)?;
        touched += files;
        counts.push(mine.len() as u64);
        for pair in mine {
            if owner[pair as usize] != 0 {
                return Err(failed(format!("pair {pair} was claimed twice")));
            }
            owner[pair as usize] = k as u64 + 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(p) = owner.iter().position(|&o| o == 0) {
        return Err(failed(format!("pair {p} was never claimed")));
    }
    // The files agree with what the tasks said they hold, for a sample.
    for pair in (0..pairs).step_by((pairs / 1000).max(1) as usize) {
        let named = owner_in(&root, pair);
        let expected = format!("shard-{}-of-{shards}", owner[pair as usize]);
        if named.as_deref() != Some(expected.as_str()) {
            return Err(failed(format!("pair {pair}'s claim names {named:?}")));
        }
    }
    let (files, bytes) = folder_size(&root.join(CLAIMS_DIR));
    let _ = std::fs::remove_dir_all(&root);
    let (min, max) = (
        counts.iter().min().copied().unwrap_or(0),
        counts.iter().max().copied().unwrap_or(0),
    );
    say!(
        "claims: {pairs} game pairs ({games} games) claimed by {shards} tasks in {elapsed:.3} s \
         ({:.0} pairs/s)",
        pairs as f64 / elapsed.max(1e-9)
    );
    say!("  every pair claimed by exactly one task: checked; pairs per task {min} to {max}");
    say!(
        "  claims folder: {files} files, {bytes} bytes allocated ({} pairs a claim)",
        blocks.size
    );
    say!(
        "  claim files touched: {:.2} per pair ({touched} in all: list, create, hint)",
        touched as f64 / pairs as f64
    );
    Ok(())
}

/// One task of the claims bench: claims blocks until none is left. Returns its pairs and the
/// files it touched.
fn claim_all_one_can(
    root: &std::path::Path,
    me: &str,
    blocks: arbiter::tournament::claims::Blocks,
) -> Result<(Vec<u64>, u64), String> {
    std::fs::create_dir_all(root.join(me)).map_err(|e| e.to_string())?;
    let lease = std::time::Duration::from_secs(60);
    let mut claims = arbiter::tournament::claims::Claims::open(root, me, "{bench}", lease, blocks)?;
    let (mut cursor, mut mine) = (0, Vec::new());
    while let Some(block) = claims
        .claim_lowest(&mut cursor, blocks.pairs, |_| false)
        .map_err(|e| e.to_string())?
    {
        mine.extend(block);
    }
    Ok((mine, claims.touched))
}

/// The files in `dir` and the bytes the file system allocated to them.
fn folder_size(dir: &std::path::Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let Ok(list) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    list.flatten()
        .filter_map(|e| e.metadata().ok())
        .fold((0, 0), |(n, b), m| (n + 1, b + m.blocks() * 512))
}
