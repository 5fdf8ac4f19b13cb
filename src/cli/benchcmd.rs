//! `arbiter bench`: the flags choose which of the benchmarks in `crate::bench` runs.

use super::exit::Exit;
use super::Failure;
use crate::bench::BenchArgs;

impl From<crate::bench::BenchError> for Failure {
    fn from(e: crate::bench::BenchError) -> Failure {
        Failure::bad_input(e.0)
    }
}

/// Runs the benchmark the flags choose.
pub fn command(args: BenchArgs) -> Result<Exit, Failure> {
    if args.bisect_sim {
        let setup =
            crate::bisect::simulate::Setup::new(args.versions as usize, args.elo, args.alpha);
        return crate::bench::bisect_sim::table(&setup, args.runs.unwrap_or(200))
            .map(|_| Exit::Success)
            .map_err(Failure::from);
    }
    if args.watch_cost {
        return crate::bench::watch_cost(args.runs.unwrap_or(3))
            .map(|_| Exit::Success)
            .map_err(Failure::from);
    }
    if !args.scale.is_empty() {
        return crate::bench::scale_bench(&args.scale)
            .map(|_| Exit::Success)
            .map_err(Failure::from);
    }
    match (&args.sprt_sim, args.shards, &args.peer) {
        (Some(bounds), _, _) => crate::bench::sprt_simulation(bounds, args.runs.unwrap_or(1000)),
        (None, Some(shards), _) => crate::bench::shard_simulation(shards, args.games),
        (None, None, Some(peer)) => {
            let peer = crate::bench::peer::Peer::parse(peer)?;
            let stockfish = args
                .stockfish
                .clone()
                .unwrap_or_else(crate::bench::peer::default_stockfish);
            let work = crate::bench::peer::Work {
                games: args.peer_games,
                nodes: args.peer_nodes,
                affinity: args.peer_affinity,
                unpinned: args.peer_unpinned,
                runs: args.peer_runs,
                load: args.peer_load,
                tc: args.peer_tc.clone(),
                concurrency: args.peer_concurrency,
            };
            crate::bench::peer::peer_bench(&peer, &stockfish, &work)
        }
        (None, None, None) => crate::bench::run_bench(
            args.full,
            args.game.as_deref(),
            args.csv.as_deref(),
            args.referee,
        ),
    }
    .map(|_| Exit::Success)
    .map_err(Failure::from)
}
