//! Move generation against a second implementation: Debian's fairy-stockfish package (11.1, the
//! large-board build), which `.ci/run` installs and runs this test for with `--ignored`.
//!
//! Of arbiter's games that build plays chess only: leaperhouse's pieces are defined with
//! `customPiece` lines its version does not read (loaded through `VariantPath` it sets up a garbled
//! start position), and the laser games and Ultima are no Fairy-Stockfish variants. So chess it is:
//! positions from random playouts, `go perft 3` with `UCI_Variant chess`, compared move by move
//! with arbiter's divide.

use arbiter::game::find_game;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Fairy {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Fairy {
    fn start() -> Fairy {
        let bin = std::env::var("FAIRY_STOCKFISH")
            .unwrap_or_else(|_| "/usr/games/fairy-stockfish".into());
        assert!(
            std::path::Path::new(&bin).is_file(),
            "no fairy-stockfish at {bin}: install Debian's fairy-stockfish package (as .ci/run \
                does) or set FAIRY_STOCKFISH"
        );
        let mut child = Command::new(&bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("fairy-stockfish starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut fairy = Fairy {
            child,
            input,
            output,
        };
        fairy.send("uci");
        fairy.until(|l| l == "uciok");
        fairy.send("setoption name UCI_Variant value chess");
        fairy.send("isready");
        fairy.until(|l| l == "readyok");
        fairy
    }

    fn send(&mut self, line: &str) {
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
    }

    /// Lines up to and including the first that `end` accepts.
    fn until(&mut self, end: impl Fn(&str) -> bool) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.output.read_line(&mut line).unwrap();
            assert!(n > 0, "fairy-stockfish ended; it said: {lines:?}");
            let line = line.trim().to_string();
            let done = end(&line);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// `go perft` split by first move, and the total it prints.
    fn divide(&mut self, fen: &str, depth: u32) -> (BTreeMap<String, u64>, u64) {
        self.send(&format!("position fen {fen}"));
        self.send(&format!("go perft {depth}"));
        let lines = self.until(|l| l.starts_with("Nodes searched"));
        let total = lines
            .last()
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        let moves = lines
            .iter()
            .filter_map(|l| {
                let (mv, n) = l.split_once(": ").filter(|(mv, _)| !mv.contains(' '))?;
                Some((mv.to_string(), n.parse().ok()?))
            })
            .collect();
        (moves, total)
    }
}

impl Drop for Fairy {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.child.wait();
    }
}

/// Positions along seeded random games from the start and from Kiwipete (castling, en passant
/// and promotions come up in both), every fourth ply.
fn playout_positions(games: u64) -> Vec<String> {
    let chess = find_game("chess").unwrap();
    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut positions = Vec::new();
    for g in 0..games {
        let start = (g % 2 == 1).then_some(kiwipete);
        let mut game = chess.new_game(start).unwrap();
        for ply in 0..120 {
            let legal = game.legal_moves();
            if legal.is_empty() || game.status().is_over() {
                break;
            }
            if ply % 4 == 0 {
                positions.push(game.fen());
            }
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mv = &legal[(seed % legal.len() as u64) as usize];
            game.play(mv).unwrap();
        }
    }
    positions
}

#[test]
#[ignore = "needs fairy-stockfish: .ci/run installs it and runs this with --ignored"]
fn chess_perft_agrees_with_fairy_stockfish_on_random_playouts() {
    let chess = find_game("chess").unwrap();
    let mut fairy = Fairy::start();
    let positions = playout_positions(16);
    assert!(positions.len() > 200, "{} positions", positions.len());
    let mut leaves = 0;
    for fen in &positions {
        let (theirs, total) = fairy.divide(fen, 3);
        let ours: BTreeMap<String, u64> = chess.divide(Some(fen), 3).unwrap().into_iter().collect();
        assert_eq!(ours, theirs, "divide at depth 3 differs in {fen}");
        assert_eq!(ours.values().sum::<u64>(), total, "{fen}");
        leaves += total;
    }
    eprintln!(
        "{} positions, {leaves} leaves at depth 3: the same as fairy-stockfish",
        positions.len()
    );
}

/// Fairy-Stockfish as its users set it up, playing through arbiter in its sandbox: a variants
/// file named by full path in a folder of its own (not the engine's, not the working folder) is
/// read, as the variant list it prints after the file is loaded shows.
#[test]
#[ignore = "needs fairy-stockfish: .ci/run installs it and runs this with --ignored"]
fn fairy_stockfish_reads_its_variant_path_from_inside_its_sandbox() {
    let bin =
        std::env::var("FAIRY_STOCKFISH").unwrap_or_else(|_| "/usr/games/fairy-stockfish".into());
    let shared = std::env::temp_dir().join(format!("arbiter-fsf-shared-{}", std::process::id()));
    let work = std::env::temp_dir().join(format!("arbiter-fsf-work-{}", std::process::id()));
    for d in [&shared, &work] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).unwrap();
    }
    let ini = shared.join("variants.ini");
    std::fs::write(&ini, "[sandboxchess:chess]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args([
            "match", "--game", "chess", "--games", "2", "--out", "run", "--log", "io.log",
        ])
        .args(["--each", "nodes=200", &format!("cmd={bin}")])
        .arg(format!("option.VariantPath={}", ini.display()))
        .args(["--engine", "name=a", "--engine", "name=b"])
        .current_dir(&work)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("sandbox: every engine"), "{said}");
    let log = std::fs::read_to_string(work.join("io.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("UCI_Variant") && l.contains("sandboxchess")),
        "the variants file was not read: {}",
        log.lines()
            .filter(|l| l.contains("UCI_Variant"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    for d in [&shared, &work] {
        let _ = std::fs::remove_dir_all(d);
    }
}
