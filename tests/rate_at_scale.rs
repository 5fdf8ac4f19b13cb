//! `arbiter rate` on a file of many games: it reads them one at a time, so its memory does not
//! grow with the games. Alone in its test binary, so that the largest child process it waits
//! for is the rate's.

mod common;
use common::*;

/// A PGN of `games` games of 100 plies between ten players, results drawn from a seeded
/// generator.
fn many_games(games: usize) -> String {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut text = String::new();
    for i in 0..games {
        let white = next() % 10;
        let black = (white + 1 + next() % 9) % 10;
        let result = ["1-0", "0-1", "1/2-1/2", "1/2-1/2"][(next() % 4) as usize];
        text.push_str(&format!(
            "[Event \"season\"]\n[Round \"{}\"]\n[White \"p{white}\"]\n[Black \"p{black}\"]\n\
             [Result \"{result}\"]\n\n",
            i + 1
        ));
        for ply in 0..100 {
            if ply % 2 == 0 {
                text.push_str(&format!("{}. ", ply / 2 + 1));
            }
            text.push_str(["g4g5 ", "e6e7 ", "a1a2 ", "h8h7 "][ply % 4]);
        }
        text.push_str(result);
        text.push_str("\n\n");
    }
    text
}

/// The largest resident set of a child process this test has waited for, in KB.
fn children_peak_kb() -> i64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given and nothing else.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    usage.ru_maxrss
}

#[test]
fn a_large_file_is_rated_in_memory_that_does_not_grow_with_its_games() {
    let dir = scratch("rate", "scale");
    let pgn = dir.join("season.pgn");
    let games = 30_000;
    std::fs::write(&pgn, many_games(games)).unwrap();
    let out = arbiter_in(&dir, &["rate", "season.pgn", "--out", "rated"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(said.starts_with("30000 games, 10 players"), "{said}");
    let csv = std::fs::read_to_string(dir.join("rated/games.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        games + 1,
        "every game is in the report"
    );
    // Holding every game cost about 9 KB each (270 MB here); one game at a time, a few MB.
    let peak_mb = children_peak_kb() / 1024;
    assert!(
        peak_mb < 64,
        "rate's peak memory {peak_mb} MB for {games} games"
    );
    let _ = std::fs::remove_dir_all(dir);
}
