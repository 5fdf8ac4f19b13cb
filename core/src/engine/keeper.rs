//! The keeper: a small process between the referee and each engine that holds the engine's whole
//! process tree, so that nothing an engine starts outlives it.
//!
//! A process-group kill misses a child that called `setsid()`, and `PR_SET_PDEATHSIG` reaches
//! only the direct child: after `kill -9` of the referee a grandchild lived on with PPID 1. The
//! keeper closes both gaps. It is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so whatever the
//! engine leaves behind is reparented to it rather than to init, and every descendant can be
//! found from `/proc`; it is told of the referee's death (`PR_SET_PDEATHSIG`, SIGTERM) however
//! the referee dies. It ends every descendant when the engine exits, when the referee asks
//! (SIGTERM), or when the referee is gone. Ending the descendants as soon as the engine exits
//! also closes the engine's stdout for good, so an engine that exits while a child holds its
//! output is seen to crash at once instead of stalling until its deadline.
//!
//! The keeper is the referee's forked child, made in `pre_exec` after `fork()`; it never calls
//! `exec`. In the fork of a multi-threaded process only async-signal-safe calls are allowed: no
//! allocation, no locks. Everything below uses plain system calls and fixed buffers on the stack.

use libc::{c_int, pid_t};
use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;

/// The CPU time in microseconds that this process's keepers have used, each adding its own as
/// it exits. It lives in a page shared with them (mapped before the first fork): a keeper's
/// time otherwise reaches the referee only added to its engine's, and the keepers are the
/// referee's cost, not the engines'.
static SPENT: AtomicPtr<AtomicU64> = AtomicPtr::new(std::ptr::null_mut());

/// Where this process's command line lies in its memory (`/proc/self/stat`'s `arg_start` and
/// `arg_end`), read before any fork: a keeper writes its own name there, so that `ps` and
/// `pgrep -f` show it as what it is, not as a copy of the arbiter command that started it.
static ARGS: std::sync::OnceLock<Option<(usize, usize)>> = std::sync::OnceLock::new();

fn command_line_memory() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the name (which may hold spaces) are numbers; arg_start and arg_end are
    // the 48th and 49th of the line.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let field = |n: usize| fields.get(n - 3)?.trim().parse::<usize>().ok();
    let (start, end) = (field(48)?, field(49)?);
    (start < end).then_some((start, end))
}

/// Writes `title` over this process's command line and names its thread after it (what `ps`
/// and `top` show), cut to what fits; the rest of the line is zeroed.
///
/// # Safety
/// Only in a keeper, after `fork` (the memory written is this process's own copy); plain
/// stores and `prctl`, both safe there.
unsafe fn take_name(title: &[u8]) {
    let mut comm = [0u8; 16];
    let n = title.len().min(15);
    comm[..n].copy_from_slice(&title[..n]);
    libc::prctl(libc::PR_SET_NAME, comm.as_ptr());
    let Some(Some((start, end))) = ARGS.get().copied() else {
        return;
    };
    let room = end - start;
    let line = std::slice::from_raw_parts_mut(start as *mut u8, room);
    let n = title.len().min(room - 1);
    line[..n].copy_from_slice(&title[..n]);
    for byte in &mut line[n..] {
        *byte = 0;
    }
}

/// Maps the shared page that keepers report their CPU time in, and finds where a keeper's name
/// goes; call before starting one.
pub fn prepare() {
    ARGS.get_or_init(command_line_memory);
    if !SPENT.load(Ordering::Acquire).is_null() {
        return;
    }
    // SAFETY: a fresh anonymous shared mapping, never unmapped; an AtomicU64 is valid at any
    // zeroed, page-aligned address.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<AtomicU64>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        return;
    }
    let fresh = page.cast::<AtomicU64>();
    if SPENT
        .compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_err()
    {
        // Another thread mapped one first.
        // SAFETY: the page just mapped, seen by no one else.
        unsafe { libc::munmap(page, std::mem::size_of::<AtomicU64>()) };
    }
}

/// The CPU time (user and system) of the keepers that have exited so far.
pub fn spent() -> Duration {
    let spent = SPENT.load(Ordering::Acquire);
    if spent.is_null() {
        return Duration::ZERO;
    }
    // SAFETY: set once by `prepare` to a mapping that is never unmapped.
    Duration::from_micros(unsafe { &*spent }.load(Ordering::Relaxed))
}

/// Most processes looked at in one scan of `/proc`, and most descendants of one engine.
const MAX_PROCESSES: usize = 8192;
const MAX_TREE: usize = 1024;

/// Runs in the forked child before `exec`. This process becomes the keeper and never returns;
/// the engine is forked from it, and only in the engine does this return (to `exec`).
///
/// `thaw` is the engine's `freezer.state`, when it has one: a frozen process dies only once
/// thawed, so the keeper thaws it before it ends the tree. `title` is the keeper's name in the
/// process list (`arbiter-keeper <engine>`), made before the fork.
///
/// # Safety
/// Only between `fork` and `exec` of a child of the process `referee`.
pub unsafe fn split(referee: pid_t, thaw: Option<&CString>, title: &[u8]) -> std::io::Result<()> {
    // Signals are blocked from the first moment: this process inherited the referee's handlers
    // (tokio's write to a pipe the referee reads), and a signal taken by one of them here would
    // look to the referee like its own.
    let set = keeper_signals();
    libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    if libc::getppid() != referee {
        libc::_exit(1);
    }
    libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    let keeper = libc::getpid();
    match libc::fork() {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            // The engine starts with no signal blocked, as it would without a keeper.
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            // The engine dies with its keeper, even if the keeper is killed outright.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != keeper {
                libc::_exit(1);
            }
            Ok(())
        }
        engine => {
            take_name(title);
            keep(referee, engine, thaw)
        }
    }
}

/// The keeper's life: wait for the engine's exit or a signal to stop, then end the whole tree
/// and exit with the engine's status.
unsafe fn keep(referee: pid_t, engine: pid_t, thaw: Option<&CString>) -> ! {
    // Signals are taken synchronously (blocked since `split`, then waited for), so none is
    // missed between looking and waiting.
    let set = keeper_signals();
    close_all_files();
    let mut code = 128 + libc::SIGTERM;
    // The referee may have died before the signal could be blocked.
    if libc::getppid() == referee {
        'watch: loop {
            loop {
                let mut status: c_int = 0;
                let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if r == engine {
                    code = exit_code(status);
                    break 'watch;
                }
                if r <= 0 {
                    break;
                }
            }
            let signal = libc::sigwaitinfo(&set, std::ptr::null_mut());
            if signal == libc::SIGTERM || signal == libc::SIGINT || signal == libc::SIGHUP {
                break;
            }
        }
    }
    if let Some(state) = thaw {
        super::cgroup::thaw_at(state);
    }
    end_tree(libc::getpid());
    report_spent();
    libc::_exit(code)
}

/// Adds this keeper's own CPU time to the referee's count (`SPENT`): a system call and an
/// atomic addition, both safe here.
unsafe fn report_spent() {
    let spent = SPENT.load(Ordering::Acquire);
    if spent.is_null() {
        return;
    }
    let mut usage: libc::rusage = std::mem::zeroed();
    if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
        return;
    }
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (*spent).fetch_add(
        micros(usage.ru_utime) + micros(usage.ru_stime),
        Ordering::Relaxed,
    );
}

/// The signals the keeper waits for: its child's exit, and being told to stop.
unsafe fn keeper_signals() -> libc::sigset_t {
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    for s in [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        libc::sigaddset(&mut set, s);
    }
    set
}

fn exit_code(status: c_int) -> c_int {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// The keeper holds no file: the engine's pipes must close when the engine's tree is gone, and
/// the referee's error pipe for `exec` must not wait for the keeper.
unsafe fn close_all_files() {
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
        for fd in 0..4096 {
            libc::close(fd);
        }
    }
}

/// Kills every descendant of `me` until none is left, reaping as it goes.
///
/// A keeper without children has no descendant at all: as a subreaper it is the parent of
/// every orphan in its tree, so a live descendant has a live ancestor among its children. That
/// is the common end (the engine exited, and with it its sandbox), known from one `waitpid`
/// without scanning `/proc`, which was most of a keeper's CPU time.
unsafe fn end_tree(me: pid_t) {
    for _ in 0..50 {
        if !reap_all() {
            return;
        }
        let killed = kill_descendants(me);
        if !reap_all() || killed == 0 {
            return;
        }
        // Let the killed ones die, and any child they forked meanwhile show up.
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 2_000_000,
        };
        libc::nanosleep(&pause, std::ptr::null_mut());
    }
}

/// Reaps every child that has ended; whether any child is left.
unsafe fn reap_all() -> bool {
    loop {
        match libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) {
            0 => return true,
            r if r > 0 => continue,
            // ECHILD: none left. Any other failure cannot happen with these arguments; the
            // scan would not find more.
            _ => return *libc::__errno_location() != libc::ECHILD,
        }
    }
}

/// Sends SIGKILL to every live descendant of `me`; returns how many there were.
unsafe fn kill_descendants(me: pid_t) -> usize {
    let mut processes = [(0 as pid_t, 0 as pid_t); MAX_PROCESSES];
    let n = scan_processes(&mut processes);
    let mut tree = [0 as pid_t; MAX_TREE];
    tree[0] = me;
    let mut len = 1;
    loop {
        let mut grew = false;
        for &(pid, parent) in &processes[..n] {
            if len < MAX_TREE && tree[..len].contains(&parent) && !tree[..len].contains(&pid) {
                tree[len] = pid;
                len += 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    for &pid in &tree[1..len] {
        libc::kill(pid, libc::SIGKILL);
    }
    len - 1
}

/// Fills `out` with (pid, parent pid) of every process that is not a zombie; returns the count.
unsafe fn scan_processes(out: &mut [(pid_t, pid_t)]) -> usize {
    let dir = libc::open(
        c"/proc".as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if dir < 0 {
        return 0;
    }
    let mut n = 0;
    let mut buffer = [0u8; 8192];
    loop {
        let got = libc::syscall(libc::SYS_getdents64, dir, buffer.as_mut_ptr(), buffer.len());
        if got <= 0 {
            break;
        }
        let mut at = 0usize;
        while at < got as usize {
            // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
            let reclen = u16::from_ne_bytes([buffer[at + 16], buffer[at + 17]]) as usize;
            let name = &buffer[at + 19..at + reclen];
            if let Some(pid) = parse_pid(name) {
                if let Some(parent) = live_parent(pid) {
                    if n < out.len() {
                        out[n] = (pid, parent);
                        n += 1;
                    }
                }
            }
            at += reclen;
        }
    }
    libc::close(dir);
    n
}

/// A /proc entry's name as a pid (digits up to the NUL), or `None`.
fn parse_pid(name: &[u8]) -> Option<pid_t> {
    let mut pid: pid_t = 0;
    let mut digits = 0;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() || digits >= 9 {
            return None;
        }
        pid = pid * 10 + (b - b'0') as pid_t;
        digits += 1;
    }
    (digits > 0).then_some(pid)
}

/// The parent of `pid` from `/proc/<pid>/stat`, unless it is a zombie or gone.
unsafe fn live_parent(pid: pid_t) -> Option<pid_t> {
    let mut path = [0u8; 32];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut at = prefix.len();
    let mut digits = [0u8; 10];
    let mut count = 0;
    let mut rest = pid;
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for i in (0..count).rev() {
        path[at] = digits[i];
        at += 1;
    }
    let suffix = b"/stat";
    path[at..at + suffix.len()].copy_from_slice(suffix);
    let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return None;
    }
    let mut text = [0u8; 512];
    let got = libc::read(fd, text.as_mut_ptr().cast(), text.len());
    libc::close(fd);
    if got <= 0 {
        return None;
    }
    parse_stat(&text[..got as usize])
}

/// The parent pid in a `stat` line (`pid (comm) S ppid ...`), `None` for a zombie. The command
/// name may hold spaces and parentheses, so fields are counted from the last ')'.
fn parse_stat(text: &[u8]) -> Option<pid_t> {
    let close = text.iter().rposition(|&b| b == b')')?;
    let state = *text.get(close + 2)?;
    if state == b'Z' || state == b'X' {
        return None;
    }
    let mut parent: pid_t = 0;
    let mut any = false;
    for &b in text.get(close + 4..)? {
        if !b.is_ascii_digit() {
            break;
        }
        parent = parent * 10 + (b - b'0') as pid_t;
        any = true;
    }
    any.then_some(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_the_parent_and_skip_zombies() {
        assert_eq!(parse_stat(b"123 (sleep) S 45 123 45 0"), Some(45));
        assert_eq!(parse_stat(b"123 (a (b) c) R 7 1"), Some(7));
        assert_eq!(parse_stat(b"123 (x) Z 45 1"), None);
        assert_eq!(parse_pid(b"4242\0\0"), Some(4242));
        assert_eq!(parse_pid(b"self\0"), None);
    }

    #[test]
    fn this_process_is_found_with_its_parent() {
        let mut processes = vec![(0, 0); MAX_PROCESSES];
        // SAFETY: plain system calls on buffers owned here.
        let n = unsafe { scan_processes(&mut processes) };
        let me = std::process::id() as pid_t;
        // SAFETY: getppid(2) has no preconditions.
        let parent = unsafe { libc::getppid() };
        assert!(
            processes[..n].contains(&(me, parent)),
            "{n} processes scanned"
        );
    }
}
