//! Every exit code arbiter gives, in one place: scripts branch on them, so each has one meaning
//! per command and the help lists them from here.

/// How a command ended, as the process's exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Done; for an SPRT, H1 accepted.
    Success = 0,
    /// An SPRT accepted H0; `replay` and `compliance` found an illegal move or a broken reply.
    Rejected = 1,
    /// Bad input: a flag, a file or a setting that cannot be played; nothing was written.
    BadInput = 2,
    /// Not everything was decided: an SPRT ran out of games, a merge misses games.
    Incomplete = 3,
    /// An engine kept failing to start during the run (the games before are kept).
    EngineStart = 4,
    /// The machine stopped the run (a full disk, a folder gone), not the input.
    Runtime = 5,
    /// A `--strict` run stopped at an engine's fault.
    Strict = 6,
    /// Interrupted (Ctrl-C or SIGTERM): continue with `--resume`.
    Interrupted = 130,
}

impl Exit {
    pub const ALL: [Exit; 8] = [
        Exit::Success,
        Exit::Rejected,
        Exit::BadInput,
        Exit::Incomplete,
        Exit::EngineStart,
        Exit::Runtime,
        Exit::Strict,
        Exit::Interrupted,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    fn meaning(self) -> &'static str {
        match self {
            Exit::Success => "done (for an SPRT: H1 accepted)",
            Exit::Rejected => {
                "an SPRT accepted H0; a bisect found no drop; an illegal move or broken reply found"
            }
            Exit::BadInput => "bad input (flag, file or setting); nothing was written",
            Exit::Incomplete => {
                "an SPRT or a bisect ran out of games undecided; a merge misses games"
            }
            Exit::EngineStart => "an engine kept failing to start (finished games kept)",
            Exit::Runtime => "the machine stopped the run (disk full, folder gone)",
            Exit::Strict => "a --strict run stopped at an engine's fault",
            Exit::Interrupted => "interrupted; continue with --resume",
        }
    }

    /// The table `--help` ends with.
    pub fn help() -> String {
        let mut text = String::from("Exit codes:\n");
        for exit in Exit::ALL {
            text.push_str(&format!("  {:>3}  {}\n", exit.code(), exit.meaning()));
        }
        text
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_is_listed_once() {
        let mut codes: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), Exit::ALL.len());
        assert!(Exit::help().contains("130  interrupted"));
    }
}
