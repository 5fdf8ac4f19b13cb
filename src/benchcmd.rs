//! `arbiter bench`: the flags choose which of the benchmarks in `arbiter::bench` runs.

use super::exit::Exit;
use super::Failure;

impl From<arbiter_bench::BenchError> for Failure {
    fn from(e: arbiter_bench::BenchError) -> Failure {
        Failure::bad_input(e.0)
    }
}

/// Runs the benchmark the flags choose.
pub fn command(args: BenchArgs) -> Result<Exit, Failure> {
    if args.bisect_sim {
        let setup =
            arbiter::bisect::simulate::Setup::new(args.versions as usize, args.elo, args.alpha);
        return arbiter_bench::bisect_sim::table(&setup, args.runs.unwrap_or(200))
            .map(|_| Exit::Success)
            .map_err(Failure::from);
    }
    if args.watch_cost {
        return arbiter_bench::watch_cost(args.runs.unwrap_or(3))
            .map(|_| Exit::Success)
            .map_err(Failure::from);
    }
    if !args.scale.is_empty() {
        return arbiter_bench::scale_bench(&args.scale)
            .map(|_| Exit::Success)
            .map_err(Failure::from);
    }
    match (&args.sprt_sim, args.shards, &args.peer) {
        (Some(bounds), _, _) => arbiter_bench::sprt_simulation(bounds, args.runs.unwrap_or(1000)),
        (None, Some(shards), _) => arbiter_bench::shard_simulation(shards, args.games),
        (None, None, Some(peer)) => {
            let peer = arbiter_bench::peer::Peer::parse(peer)?;
            let stockfish = args
                .stockfish
                .clone()
                .unwrap_or_else(arbiter_bench::peer::default_stockfish);
            let work = arbiter_bench::peer::Work {
                games: args.peer_games,
                nodes: args.peer_nodes,
                affinity: args.peer_affinity,
                unpinned: args.peer_unpinned,
                runs: args.peer_runs,
                load: args.peer_load,
                settle: std::time::Duration::from_secs(args.peer_settle),
                tc: args.peer_tc.clone(),
                concurrency: args.peer_concurrency,
            };
            arbiter_bench::peer::peer_bench(&peer, &stockfish, &work)
        }
        (None, None, None) => arbiter_bench::run_bench(
            args.full,
            args.game.as_deref(),
            args.csv.as_deref(),
            args.referee,
        ),
    }
    .map(|_| Exit::Success)
    .map_err(Failure::from)
}

/// `arbiter bench`'s flags (its help is the subcommand's doc comment).
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Deeper, slower runs (the figures in docs/PERFORMANCE.md).
    #[arg(long)]
    pub full: bool,
    /// Only this game's perft and rules rows.
    #[arg(long, conflicts_with = "referee")]
    pub game: Option<String>,
    /// Only the referee rows (no perft).
    #[arg(long)]
    pub referee: bool,
    /// Also write the table as CSV to this file.
    #[arg(long)]
    pub csv: Option<std::path::PathBuf>,
    /// Simulate SPRTs with these bounds (as for --sprt) instead of timing anything.
    #[arg(long, value_name = "SPRT", conflicts_with_all = ["game", "referee", "full"])]
    pub sprt_sim: Option<String>,
    /// Simulated tests per distribution and hypothesis with --sprt-sim (default 1000), or
    /// simulated bisections per scenario with --bisect-sim (default 200).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Simulate bisections instead of timing anything: series of --versions versions with a drop
    /// of --elo (or none, or two), found by arbiter's posterior search and by an SPRT at each
    /// midpoint; the error rate and games of each, side by side.
    #[arg(long, conflicts_with_all = ["game", "referee", "full", "sprt_sim"])]
    pub bisect_sim: bool,
    /// Versions in each simulated series, with --bisect-sim.
    #[arg(long, default_value_t = 16, requires = "bisect_sim",
          value_parser = clap::value_parser!(u64).range(3..=1000))]
    pub versions: u64,
    /// The drop sought, in Elo, with --bisect-sim.
    #[arg(long, default_value_t = 5.0, requires = "bisect_sim")]
    pub elo: f64,
    /// The error rate allowed, with --bisect-sim.
    #[arg(long, default_value_t = 0.05, requires = "bisect_sim")]
    pub alpha: f64,
    /// Claim the game pairs of a schedule of --games games from this many tasks at once, as the
    /// tasks of a split run do, and check that every pair falls to exactly one (timed, with the
    /// files touched per pair).
    #[arg(long, conflicts_with_all = ["game", "referee", "full", "sprt_sim"])]
    pub shards: Option<u64>,
    /// Measure what a split run of this many games (comma-separated sizes, e.g.
    /// 10000,100000,1000000) costs its last task, `merge` and `--resume`: wall time, CPU and
    /// peak memory of each, the journals filled from a few hundred real games.
    #[arg(long, value_name = "GAMES", value_delimiter = ',',
          conflicts_with_all = ["game", "referee", "full", "sprt_sim", "shards"])]
    pub scale: Vec<u64>,
    /// Measure what watching a run costs it: the same instant match unwatched and watched
    /// (a real `arbiter watch` and a client polling its page as the browser does), in turn,
    /// --runs times each (default 3), and the referee's median turnaround of each.
    #[arg(long, conflicts_with_all = ["game", "referee", "full", "sprt_sim", "shards", "scale"])]
    pub watch_cost: bool,
    /// Games in the schedule split by --shards.
    #[arg(long, default_value_t = 100_000, requires = "shards")]
    pub games: u64,
    /// Compare with another harness: NAME=PATH of a fastchess or cutechess-cli binary.
    /// The same stockfish match (one command line in their syntax, which arbiter also
    /// reads) is played under arbiter and under the peer, and each harness's own CPU per
    /// ply (engines excluded) is printed with the ratio.
    #[arg(long, value_name = "NAME=PATH",
          conflicts_with_all = ["game", "referee", "full", "sprt_sim", "shards"])]
    pub peer: Option<String>,
    /// Games of the --peer match (in colour-reversed pairs).
    #[arg(long, default_value_t = 100, requires = "peer")]
    pub peer_games: u64,
    /// Node limit per move of the --peer match.
    #[arg(long, default_value_t = 200, requires = "peer")]
    pub peer_nodes: u64,
    /// Both harnesses of the --peer match pin each game and its engines to one CPU: the
    /// command line gets fastchess's `-use-affinity`, which arbiter reads as --affinity.
    #[arg(long, requires = "peer")]
    pub peer_affinity: bool,
    /// Neither harness pins anything: arbiter plays the --peer match with `--affinity off`
    /// (its line gets `-use-affinity off`) instead of its default `auto`.
    #[arg(long, requires = "peer", conflicts_with = "peer_affinity")]
    pub peer_unpinned: bool,
    /// Make the --peer comparison this many times in a row (each run: arbiter, the peer, the
    /// bare relay) and print every run's ratio with their median: one run's ratio follows
    /// the machine's load as much as the harnesses.
    #[arg(long, default_value_t = 1, requires = "peer",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub peer_runs: u32,
    /// Keep N processes of other work running through the --peer matches: loops of `cc -O2`
    /// compiles, another sandboxed arbiter match and busy loops (7: four compiles, a match, two
    /// loops). A shared machine's load, under which games lost on time and the delay engines
    /// did not see are compared; each row prints the load average while that harness played.
    #[arg(long, default_value_t = 0, requires = "peer", value_name = "N")]
    pub peer_load: u32,
    /// Seconds the --peer-load work runs before the first match, so that the load average
    /// printed beside each harness has caught up with it.
    #[arg(
        long,
        default_value_t = 60,
        requires = "peer_load",
        value_name = "SECS"
    )]
    pub peer_settle: u64,
    /// Play the --peer match with this clock (cutechess/fastchess `tc=`, e.g. 1+0.01) instead
    /// of the node limit: the "on time" column then counts games lost on time.
    #[arg(long, requires = "peer", value_name = "TC")]
    pub peer_tc: Option<String>,
    /// Games of the --peer match at once (the CPUs: every CPU in use, as most users run).
    #[arg(long, default_value_t = 1, requires = "peer", value_name = "N")]
    pub peer_concurrency: u32,
    /// The stockfish the --peer match plays (default: stockfish on PATH, or /usr/games).
    #[arg(long, requires = "peer")]
    pub stockfish: Option<std::path::PathBuf>,
}
