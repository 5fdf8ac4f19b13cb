//! The folders an earlier build wrote (`tests/data/format-1`), and the run they hold.

use super::bundled_engine;
use std::path::Path;
use std::process::Command;

/// The fixture copied into `dir`, with the bundled engine beside its wrapper and its key.
pub fn earlier_folders(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format-1");
    let copied = Command::new("cp")
        .arg("-R")
        .arg(from.join("."))
        .arg(dir)
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::copy(bundled_engine(), dir.join("arbiter-engine")).unwrap();
    for (file, mode) in [("key", 0o600), ("engine.sh", 0o755)] {
        std::fs::set_permissions(dir.join(file), std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

/// The run the fixture's folders hold, as typed: `more` added.
pub fn the_run(more: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "match",
        "--games",
        "8",
        "--seed",
        "3",
        "--random-openings",
        "--openings",
        "book.txt",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    for (name, depth) in [("deep", 2), ("shallow", 1)] {
        args.extend([
            "--engine".to_string(),
            "cmd=./engine.sh".to_string(),
            format!("name={name}"),
            format!("depth={depth}"),
            "option.Style=search".to_string(),
        ]);
    }
    args.extend(more.iter().map(|s| s.to_string()));
    args
}
