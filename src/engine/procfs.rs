//! A process tree as `/proc` shows it: each thread lists the children it forked, each process
//! its threads. Read with ordinary files, so not for the keeper (which may not allocate).

/// The children forked by thread `tid` of process `pid` (a single-threaded process: `pid, pid`).
pub fn children(pid: u32, tid: u32) -> Vec<u32> {
    numbers(&format!("/proc/{pid}/task/{tid}/children"))
}

/// The threads of a process.
pub fn threads(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The command name of a process (`comm`).
pub fn command_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim_end().to_string())
}

fn numbers(path: &str) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}
