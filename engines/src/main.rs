//! `arbiter-engine`: the engines bundled with arbiter. The UCI engine arrives with the engines issue;
//! until then this binary only names itself, so the workspace layout is in place.

fn main() {
    let games: Vec<&str> = arbiter::game::game_ids();
    eprintln!(
        "arbiter-engine: no engine yet; the rules library knows {}",
        games.join(", ")
    );
    std::process::exit(2);
}
