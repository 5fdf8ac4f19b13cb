//! cutechess-cli and fastchess command lines run as they are, with the bundled engine in place of
//! theirs: the example of fastchess's README, and two lines in the shapes fastchess users write
//! in their scripts (EPD book in random order, a log file, -games 2, an SPRT, -pgnout file=).

mod common;

use common::{arbiter_in, bundled_engine, scratch, stderr, stdout};

/// Positions a few moves into standard openings, as EPD.
const EPD: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - id \"open\";
rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - id \"indian\";
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id \"sicilian\";
rnbqkbnr/pppp1ppp/4p3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id \"french\";
";

fn line(text: &str) -> Vec<String> {
    let e = bundled_engine();
    text.replace("ENGINE", &e)
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn play(dir: &std::path::Path, text: &str) -> std::process::Output {
    let args = line(text);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    arbiter_in(dir, &args)
}

#[test]
fn the_fastchess_readme_example_plays_chess() {
    let dir = scratch("theirs", "readme");
    let out = play(
        &dir,
        "-engine cmd=ENGINE name=Engine1 -engine cmd=ENGINE name=Engine2 -each tc=1+0.01 -rounds 2 -repeat -concurrency 2",
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("Result of Engine1 vs Engine2"), "{text}");
    assert!(text.contains("4 games"), "{text}");
}

#[test]
fn an_epd_book_in_random_order_with_a_log() {
    let dir = scratch("theirs", "epd");
    std::fs::write(dir.join("book.epd"), EPD).unwrap();
    let out = play(
        &dir,
        "-engine cmd=ENGINE name=new -engine cmd=ENGINE name=old -openings file=book.epd format=epd order=random -each tc=1+0.01 -rounds 2 -repeat -concurrency 2 -log file=fastchess.log",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let log = std::fs::read_to_string(dir.join("fastchess.log")).unwrap();
    assert!(
        log.contains("position fen "),
        "the book's positions reach the engines"
    );
}

#[test]
fn an_sprt_with_games_two_and_a_pgn_file() {
    let dir = scratch("theirs", "sprt");
    std::fs::write(dir.join("book.epd"), EPD).unwrap();
    let out = play(
        &dir,
        "-engine name=deep cmd=ENGINE depth=2 -engine name=shallow cmd=ENGINE depth=1 -games 2 -rounds 3 -each proto=uci option.Style=search -openings order=random file=book.epd format=epd -randomseed -concurrency 2 -ratinginterval 10 -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 -pgnout file=out.pgn -recover",
    );
    let text = stdout(&out);
    // Six games cannot decide an SPRT at these bounds: exit 3, undecided, as documented.
    assert_eq!(out.status.code(), Some(3), "{text}{}", stderr(&out));
    assert!(text.contains("SPRT: undecided"), "{text}");
    let pgn = std::fs::read_to_string(dir.join("out.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 6, "{pgn}");
    // And what means nothing here is refused with its name.
    let out = play(
        &dir,
        "-engine cmd=ENGINE -engine cmd=ENGINE -each tc=1 -tb /syzygy",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("-tb: has no equivalent"),
        "{}",
        stderr(&out)
    );
}
