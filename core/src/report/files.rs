//! Every file a run's folder holds, in one list: who writes it, whether the HTML report links
//! it, and so which names `--pgnout`, `--epdout` and `--log` may not take there. A new output
//! file is one entry here (with its maker); the test `every_run_file_is_listed` holds the
//! list to what a real run writes.

use super::write::{crosstable_csv, markdown, standings_csv, Tables};
use super::{story::Story, RunInfo};
use crate::tournament::totals::Totals;

/// What a report maker reads: the run's results, worked out once for every file.
pub struct Report<'a> {
    pub totals: &'a Totals,
    pub info: &'a RunInfo<'a>,
    pub tables: &'a Tables,
    pub story: &'a Story,
}

/// Who writes a file of the run's folder.
#[derive(Clone, Copy)]
pub enum Maker {
    /// The run itself, as it plays: its record and the proofs of it.
    Run,
    /// Streamed from the journal game by game (`write_games`), memory not growing with games.
    Games,
    /// Made whole from the results once the games are in.
    Report(fn(&Report) -> std::io::Result<Vec<u8>>),
    /// A page for people, made whole as a report is; not written where another page shows the
    /// games (a bisect's steps).
    Page(fn(&Report) -> std::io::Result<Vec<u8>>),
}

pub struct RunFile {
    pub name: &'static str,
    pub maker: Maker,
    /// Linked from report.html's list of files.
    pub linked: bool,
}

pub const GAMES_PGN: &str = crate::tournament::journal::GAMES_PGN;
pub const GAMES_CSV: &str = "games.csv";
pub const REPORT_HTML: &str = "report.html";

const fn file(name: &'static str, maker: Maker, linked: bool) -> RunFile {
    RunFile {
        name,
        maker,
        linked,
    }
}

pub const RUN_FILES: &[RunFile] = &[
    file(crate::tournament::journal::JOURNAL_FILE, Maker::Run, false),
    file(crate::tournament::spec::SPEC_FILE, Maker::Run, false),
    file(crate::proof::SPEC_PROOF_FILE, Maker::Run, false),
    file(GAMES_PGN, Maker::Games, true),
    file(GAMES_CSV, Maker::Games, true),
    file(
        "standings.csv",
        Maker::Report(|r| standings_csv(&r.tables.rows)),
        true,
    ),
    file(
        "crosstable.csv",
        Maker::Report(|r| crosstable_csv(r.totals)),
        true,
    ),
    file(
        "report.md",
        Maker::Page(|r| Ok(markdown(r.totals, r.info, r.tables).into_bytes())),
        true,
    ),
    file(
        REPORT_HTML,
        Maker::Page(|r| Ok(super::html::html(r.totals, r.info, r.tables, r.story).into_bytes())),
        false,
    ),
];

/// Whether `name` is one of the files of a run's folder.
pub fn is_run_file(name: &str) -> bool {
    RUN_FILES.iter().any(|f| f.name == name)
}

/// The files report.html links, in the list's order.
pub fn linked() -> impl Iterator<Item = &'static str> {
    RUN_FILES.iter().filter(|f| f.linked).map(|f| f.name)
}
