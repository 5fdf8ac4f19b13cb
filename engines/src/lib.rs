//! The engines bundled with arbiter, for every game of the rules crate, over UCI, the MIT
//! dialect and CECP; [`register_game`] adds a game of another crate.
//!
//! ```text
//! arbiter-engine                      standard UCI (options UCI_Variant, Style, Seed)
//! arbiter-engine --dialect leiserchess   speak like the MIT 6.172 Leiserchess player
//! arbiter-engine --protocol xboard       speak CECP (xboard/WinBoard protocol 2)
//! arbiter-engine --fault crash --fault-after 3   misbehave, for testing referees
//! ```

mod eval;
mod fault;
mod mit;
mod search;
mod session;

pub use session::register_game;
mod uci;
mod xboard;

use fault::Fault;
use std::io::BufRead;
use std::sync::mpsc;

/// The engines bundled with arbiter, for every game. Reads commands on stdin.
#[derive(clap::Parser, Debug)]
#[command(name = "arbiter-engine", version)]
struct Args {
    /// The protocol spoken: uci (with UCI_Variant), leiserchess (the MIT 6.172 player's dialect)
    /// or xboard (CECP, protocol 2).
    #[arg(long, alias = "dialect", default_value = "uci",
          value_parser = ["uci", "leiserchess", "mit", "xboard", "cecp"])]
    protocol: String,
    /// Misbehave on purpose, to test referees: none, crash, nouciok, stall, illegal, garbage,
    /// overrun, ignorequit, novariant, exitstart, slowstart, longline, infoflood, stderrflood,
    /// fork, escape, orphan, forkstorm, hog, spin, random.
    #[arg(long, default_value = "none")]
    fault: String,
    /// The `go` (or CECP move) from which the fault is committed, 0 for the first.
    #[arg(long, default_value_t = 0)]
    fault_after: u64,
    /// With --fault random: the chance of a fault at each `go`.
    #[arg(long, default_value_t = 0.05)]
    fault_rate: f64,
    /// With --fault random: the seed that makes the faults reproducible.
    #[arg(long, default_value_t = 1)]
    fault_seed: u64,
    /// UCI: behave as Fairy-Stockfish does with a custom variant: UCI_Variant lists only chess
    /// until `setoption name VariantPath value <variants.ini>` names a file whose `[name]`
    /// sections add the games, and an untaught variant is ignored without a word.
    #[arg(long)]
    variants_from_path: bool,
    /// The leiserchess dialect: which game this player plays, leiserchess (the 2018 player) or
    /// leiserchess2012 (the 2012 player, same commands).
    #[arg(long, default_value = "leiserchess", value_parser = ["leiserchess", "leiserchess2012"])]
    game: String,
}

/// The engine's life: reads its arguments and plays until `quit` or the end of its input.
pub fn run() {
    let args = <Args as clap::Parser>::parse();
    let Some(fault) = Fault::parse(
        &args.fault,
        args.fault_after,
        args.fault_rate,
        args.fault_seed,
    ) else {
        eprintln!(
            "arbiter-engine: unknown fault '{}' (known: {})",
            args.fault,
            Fault::KINDS
        );
        std::process::exit(2);
    };
    let dialect = args.protocol;

    fault.at_start();
    match dialect.as_str() {
        "uci" => {
            // A reader thread feeds commands in, so the engine can take `stop` while it searches.
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            uci::Engine::new(fault, args.variants_from_path).run(rx)
        }
        "xboard" | "cecp" => xboard::XboardEngine::new(fault)
            .run(std::io::stdin().lock().lines().map_while(Result::ok)),
        "leiserchess" | "mit" => mit::MitPlayer::new(&args.game)
            .run(std::io::stdin().lock().lines().map_while(Result::ok)),
        other => unreachable!("clap accepts only the known protocols, not '{other}'"),
    }
}
