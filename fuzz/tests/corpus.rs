//! Every input in the corpus (the seeds, and whatever AFL++ found worth keeping and was
//! committed), replayed through its target without AFL: a regression test of past findings.

fn replay(target: &str, run: fn(&[u8])) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut n = 0;
    for file in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = file.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let caught = std::panic::catch_unwind(|| run(&data));
        assert!(caught.is_ok(), "{} fails its target", path.display());
        n += 1;
    }
    assert!(n > 0, "{} holds no inputs", dir.display());
}

#[test]
fn engine_lines() {
    replay("engine_lines", arbiter_fuzz::engine_lines);
}

#[test]
fn positions() {
    replay("positions", arbiter_fuzz::positions);
}

#[test]
fn books() {
    replay("books", arbiter_fuzz::books);
}

#[test]
fn journal_lines() {
    replay("journal_lines", arbiter_fuzz::journal_lines);
}

#[test]
fn run_specs() {
    replay("run_specs", arbiter_fuzz::run_specs);
}

#[test]
fn pgn() {
    replay("pgn", arbiter_fuzz::pgn);
}

#[test]
fn configs() {
    replay("configs", arbiter_fuzz::configs);
}
