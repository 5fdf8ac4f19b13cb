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
pub mod stats;
pub mod tournament;
pub mod tune;

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
}
