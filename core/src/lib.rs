//! arbiter: a referee and tournament harness for laser-chess and variant engines.
//!
//! The library holds the harness around the reference rules of `arbiter-rules` ([`game`],
//! [`games`]): the referee, runs, tunes and bisects, statistics and reports. It carries no
//! command-line or web dependency; the command line is the `arbiter` crate over it.

#[macro_use]
pub mod out;
pub mod parallel;

pub mod bisect;
pub mod clock;
pub mod compat;
pub mod engine;
pub mod input;
pub mod output;
pub mod pgn;
pub mod proof;
pub mod referee;
pub mod report;
pub mod run;
pub mod stats;
pub mod tournament;
pub mod tune;
pub mod upgrade;

/// The rules live in their own crate (`arbiter-rules`), which the bundled engine uses alone;
/// they are re-exported here so that `arbiter::game` and `arbiter::games` keep working.
pub use arbiter_rules::{game, games, zobrist};

#[cfg(test)]
mod house {
    /// The library is what scripts, a game kept outside and the command line build on: no
    /// command-line parser, terminal drawing or web server comes with it.
    #[test]
    fn the_library_carries_no_command_line_or_web_dependency() {
        let manifest: toml::Table = include_str!("../Cargo.toml").parse().unwrap();
        let deps = manifest["dependencies"].as_table().unwrap();
        assert!(
            deps.contains_key("tokio"),
            "the manifest read is not the library's"
        );
        for kept_out in [
            "clap",
            "indicatif",
            "console",
            "axum",
            "hyper",
            "futures-util",
        ] {
            assert!(
                !deps.contains_key(kept_out),
                "the library depends on {kept_out}"
            );
        }
    }

    /// `cargo test --release` builds what `cargo build --release` built: the release profile
    /// must not abort at a panic (the test harness unwinds), which the shipped binaries do by
    /// their own hook instead.
    #[test]
    fn the_release_profile_unwinds() {
        let manifest: toml::Table = include_str!("../../Cargo.toml").parse().unwrap();
        let release = manifest["profile"]["release"].as_table().unwrap();
        assert_eq!(release.get("panic"), None, "{release:?}");
    }

    /// The code outside `path` (a folder or file of `src`), its tests left out.
    fn code_of(path: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
        let mut files = Vec::new();
        let mut todo = vec![path.to_path_buf()];
        if path.is_file() {
            todo.clear();
            files.push(path.to_path_buf());
        }
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    todo.push(p);
                } else if p.extension().is_some_and(|e| e == "rs") {
                    files.push(p);
                }
            }
        }
        files
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                let code: Vec<&str> = code
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect();
                (f, code.join("\n"))
            })
            .collect()
    }

    /// The layers import downwards only: an engine knows nothing of the games it plays in, a
    /// referee nothing of the run it plays for, the PGN writer nothing of the tools' lines, the
    /// tournament nothing of how its results are shown (a run's life, `run`, writes its
    /// reports), and a bisect's report only what the bisect found, not how it was driven.
    #[test]
    fn no_layer_imports_one_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let rules: &[(&str, &[&str])] = &[
            (
                "engine",
                &[
                    "referee",
                    "tournament",
                    "bisect",
                    "tune",
                    "report",
                    "compat",
                    "pgn",
                ],
            ),
            ("clock", &["engine", "referee", "tournament"]),
            (
                "proof",
                &["engine", "referee", "tournament", "tune", "bisect"],
            ),
            (
                "referee",
                &["tournament", "bisect", "tune", "report", "compat", "pgn"],
            ),
            ("pgn", &["compat", "tournament", "report"]),
            ("tournament", &["report", "run", "tune", "bisect", "compat"]),
            ("report", &["run", "tune", "bisect", "compat"]),
            ("bisect/report.rs", &["bisect::drive"]),
            ("bisect/outcome.rs", &["bisect::drive"]),
        ];
        for (layer, above) in rules {
            let path = match src.join(layer) {
                p if p.exists() => p,
                p => p.with_extension("rs"),
            };
            for (file, code) in code_of(&path) {
                for up in *above {
                    // A file of a folder is named from within it as `super::file`.
                    let mut named = vec![format!("crate::{up}::"), format!("crate::{up};")];
                    if let Some((_, file)) = up.split_once("::") {
                        named.push(format!("super::{file}::"));
                    }
                    if let Some(name) = named.iter().find(|n| code.contains(n.as_str())) {
                        panic!("{} imports {name}, a layer above it", file.display());
                    }
                }
            }
        }
    }
}
