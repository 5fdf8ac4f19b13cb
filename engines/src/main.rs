//! `arbiter-engine`: the engines bundled with arbiter, for all five games, over UCI.
//!
//! ```text
//! arbiter-engine                      standard UCI (options UCI_Variant, Style, Seed)
//! arbiter-engine --dialect leiserchess   speak like the MIT 6.172 Leiserchess player
//! arbiter-engine --protocol xboard       speak CECP (xboard/WinBoard protocol 2)
//! arbiter-engine --fault crash --fault-after 3   misbehave, for testing referees
//! ```

mod fault;
mod mit;
mod search;
mod session;
mod uci;
mod xboard;

use fault::Fault;
use std::io::BufRead;
use std::sync::mpsc;

const USAGE: &str =
    "usage: arbiter-engine [--dialect uci|leiserchess|xboard] [--protocol uci|xboard] [--fault KIND [--fault-after N]]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dialect = "uci".to_string();
    let mut fault_kind = "none".to_string();
    let mut fault_after = 0u64;
    let mut fault_rate = 0.05f64;
    let mut fault_seed = 1u64;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned();
        match (args[i].as_str(), value) {
            ("--dialect" | "--protocol", Some(v)) => dialect = v,
            ("--fault", Some(v)) => fault_kind = v,
            ("--fault-after", Some(v)) => fault_after = v.parse().unwrap_or(0),
            ("--fault-rate", Some(v)) => fault_rate = v.parse().unwrap_or(0.05),
            ("--fault-seed", Some(v)) => fault_seed = v.parse().unwrap_or(1),
            ("--help" | "-h", _) => {
                println!("{USAGE}\nfaults: {}", Fault::KINDS);
                return;
            }
            (other, _) => {
                eprintln!("arbiter-engine: unexpected argument '{other}'\n{USAGE}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    let Some(fault) = Fault::parse(&fault_kind, fault_after, fault_rate, fault_seed) else {
        eprintln!(
            "arbiter-engine: unknown fault '{fault_kind}' (known: {})",
            Fault::KINDS
        );
        std::process::exit(2);
    };

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
            uci::Engine::new(fault).run(rx)
        }
        "xboard" | "cecp" => {
            fault.set_position(&[]);
            xboard::XboardEngine::new(fault)
                .run(std::io::stdin().lock().lines().map_while(Result::ok))
        }
        "leiserchess" | "mit" => {
            mit::MitPlayer::new().run(std::io::stdin().lock().lines().map_while(Result::ok))
        }
        other => {
            eprintln!("arbiter-engine: unknown dialect '{other}' (uci, leiserchess or xboard)");
            std::process::exit(2);
        }
    }
}
