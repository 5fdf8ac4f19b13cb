//! A process tree as `/proc` shows it: each thread lists the children it forked, each process
//! its threads. Read with ordinary files, so not for the keeper (which may not allocate).

/// The children forked by thread `tid` of process `pid` (a single-threaded process: `pid, pid`).
pub fn children(pid: u32, tid: u32) -> Vec<u32> {
    numbers(&format!("/proc/{pid}/task/{tid}/children"))
}

/// Every process the machine shows in /proc.
pub fn processes() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
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

/// The unit of /proc's CPU times (`utime`, `/proc/stat`).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64
}

/// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces), the
/// first being the state (field 3 of proc(5)).
pub fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// A process's own CPU time (user and system, every thread it ran, ended ones too), and the
/// CPU time of the children it waited for, in ticks.
pub fn process_ticks(pid: u32) -> Option<(u64, u64)> {
    let fields = stat_fields(pid)?;
    let at = |field: usize| fields.get(field - 4).copied().unwrap_or(0);
    Some((at(14) + at(15), at(16) + at(17)))
}

fn numbers(path: &str) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}
