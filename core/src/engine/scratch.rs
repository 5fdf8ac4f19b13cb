//! An engine's writable space seen from outside its sandbox: its working folder and `/tmp`,
//! each a memory file system of a fixed size. An engine that fills one has spent a limit the
//! run gave it, as surely as one that spends its memory, and loses by it; its opponent and
//! every other game never notice.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `statfs`'s type of a memory file system (linux/magic.h).
const TMPFS_MAGIC: i64 = 0x0102_1994;

/// The engine's writable folders, as the engine sees them, and their size.
#[derive(Debug)]
pub struct Scratch {
    inside: Vec<PathBuf>,
    size: u64,
    /// Each folder opened from outside (through `/proc/<pid>/root` of a process inside the
    /// sandbox) when the engine has started: a look is then one `fstatfs`, no path walked.
    opened: Vec<OwnedFd>,
    calls: u32,
}

/// One look in so many moves: two `fstatfs` calls were a microsecond, half the referee's own
/// median turnaround with instant engines; a bomb still costs its engine the game within
/// eight of its moves.
const LOOK_EVERY: u32 = 8;

impl Scratch {
    pub fn new(inside: Vec<PathBuf>, size: u64) -> Scratch {
        Scratch {
            inside,
            size,
            opened: Vec::new(),
            calls: 0,
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Opens the writable folders from outside, through the process tree under `keeper`:
    /// once, when the engine has started, so that no move pays for a walk of `/proc`.
    pub fn watch(&mut self, keeper: u32) {
        self.opened = self.open(keeper);
    }

    /// Whether one of the engine's writable folders is full, looked at every `LOOK_EVERY`th
    /// call (each of the engine's moves). `false` when they could not be opened: a full folder
    /// is never guessed.
    pub fn filled(&mut self) -> bool {
        self.calls = self.calls.wrapping_add(1);
        self.calls.is_multiple_of(LOOK_EVERY)
            && self
                .opened
                .iter()
                .any(|fd| free_of(fd, self.size).is_some_and(|free| free == 0))
    }

    fn open(&self, keeper: u32) -> Vec<OwnedFd> {
        let Some(pid) = sandboxed_process(keeper) else {
            return Vec::new();
        };
        let root = PathBuf::from(format!("/proc/{pid}/root"));
        self.inside
            .iter()
            .filter_map(|folder| {
                let seen = root.join(folder.strip_prefix("/").unwrap_or(folder));
                let fd = open_path(&seen)?;
                // Only the engine's own memory file system of its own size is watched: a
                // reused pid would show some other file system, never this one.
                free_of(&fd, self.size).map(|_| fd)
            })
            .collect()
    }
}

fn open_path(path: &Path) -> Option<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: open(2) of a valid C string; the fd returned is owned here alone.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The bytes free on the memory file system open at `fd`, when it is one of `size` bytes.
fn free_of(fd: &OwnedFd, size: u64) -> Option<u64> {
    // SAFETY: fstatfs(2) fills the zeroed struct it is given from an open fd.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    let block = st.f_bsize as u64;
    let total = st.f_blocks as u64 * block;
    let is_ours = st.f_type as i64 == TMPFS_MAGIC && total.abs_diff(size) < block.max(4096);
    is_ours.then_some(st.f_bavail as u64 * block)
}
/// A process under `keeper` that lives in another mount namespace than the referee's and
/// than bubblewrap's own (the keeper's child, which has a namespace of its own where root
/// staged what the engine is given): one inside the sandbox.
fn sandboxed_process(keeper: u32) -> Option<u32> {
    let mount_ns = |pid: u32| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    let mut outer = vec![mount_ns(std::process::id())?];
    let mut todo = vec![(keeper, 0)];
    let mut seen = 0;
    while let Some((pid, depth)) = todo.pop() {
        seen += 1;
        if seen > 64 {
            return None;
        }
        let ns = mount_ns(pid);
        match (depth, ns) {
            (1, Some(ns)) => outer.push(ns),
            (2.., Some(ns)) if !outer.contains(&ns) => return Some(pid),
            _ => {}
        }
        for tid in super::procfs::threads(pid) {
            todo.extend(
                super::procfs::children(pid, tid)
                    .into_iter()
                    .map(|c| (c, depth + 1)),
            );
        }
    }
    None
}
