//! What root gives an engine that runs as `nobody`, placed where `nobody` can reach it.
//!
//! bubblewrap runs as the engine's user, so it can bind only what that user can reach: a
//! checkout in root's 0700 home, or in a folder `mktemp -d` made, is out of its reach, though
//! every file in it is readable by all. So root stages what the engine is given first: in a
//! mount namespace of the engine's process alone, a memory file system over `/run` holds one
//! bind of each folder or file (or, for a folder others may not enter, one bind per entry),
//! and bubblewrap binds from there to the paths the engine was given. The modes of the folders
//! above never matter; the mode of what is given still does. Nothing is mounted on the host:
//! the namespace goes with the process.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where the staged copies lie in the engine's own mount namespace. Nothing an engine is given
/// lies under `/run` (a system folder, see `sandbox::is_system`), so covering it hides none of
/// the sources.
const STAGE: &str = "/run";

/// What one staged path is made of.
#[derive(Debug)]
enum Kind {
    /// A folder others may enter, or a file: bound whole.
    Whole { dir: bool },
    /// A folder others may not enter: a folder of its own with each entry bound in it.
    Entries(Vec<Entry>),
}

#[derive(Debug)]
struct Entry {
    name: CString,
    what: EntryKind,
}

#[derive(Debug)]
enum EntryKind {
    Dir,
    File,
    Link(CString),
    /// One the engine must not see: an empty folder or file in its place, for the sandbox's
    /// cover to lie on.
    Blank {
        dir: bool,
    },
}

#[derive(Debug)]
struct Item {
    source: CString,
    at: CString,
    kind: Kind,
}

/// The paths staged for one engine, and the names bubblewrap binds them from.
#[derive(Debug, Default)]
pub struct Stage {
    items: Vec<Item>,
    sources: Vec<PathBuf>,
}

impl Stage {
    /// Stages `source` (absolute, free of links) unless it is already: the path bubblewrap
    /// binds from instead. `skip` are entries of a folder staged entry by entry that the
    /// engine must not see at all.
    pub fn add(&mut self, source: &Path, skip: &[PathBuf]) -> PathBuf {
        if let Some(at) = self.sources.iter().position(|s| s == source) {
            return staged_path(at);
        }
        let index = self.sources.len();
        let at = staged_path(index);
        let meta = std::fs::metadata(source);
        let dir = meta.as_ref().is_ok_and(|m| m.is_dir());
        let kind = match dir && !others_may_enter(source) {
            true => Kind::Entries(entries(source, skip)),
            false => Kind::Whole { dir },
        };
        self.items.push(Item {
            source: c_path(source),
            at: c_path(&at),
            kind,
        });
        self.sources.push(source.to_path_buf());
        at
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Makes the staged view in a mount namespace of this process's own. Only system calls, as
    /// `pre_exec` requires; run as root, before the change of user.
    ///
    /// # Safety
    /// Only between `fork` and `exec`.
    pub unsafe fn enter(&self) -> std::io::Result<()> {
        let fail = || Err(std::io::Error::last_os_error());
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return fail();
        }
        // Nothing mounted here may reach the host's namespace.
        let none = std::ptr::null();
        if libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            none.cast(),
        ) != 0
        {
            return fail();
        }
        if libc::mount(
            c"tmpfs".as_ptr(),
            c"/run".as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=0755,size=1m".as_ptr().cast(),
        ) != 0
        {
            return fail();
        }
        for item in &self.items {
            match &item.kind {
                Kind::Whole { dir } => bind(&item.source, &item.at, *dir)?,
                Kind::Entries(entries) => {
                    if libc::mkdir(item.at.as_ptr(), 0o755) != 0 {
                        return fail();
                    }
                    for entry in entries {
                        stage_entry(item, entry)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// # Safety
/// Only between `fork` and `exec`: no allocation, so the paths are joined in a buffer.
unsafe fn stage_entry(item: &Item, entry: &Entry) -> std::io::Result<()> {
    let mut from = [0u8; 4096];
    let mut to = [0u8; 4096];
    let (Some(from), Some(to)) = (
        join(&mut from, &item.source, &entry.name),
        join(&mut to, &item.at, &entry.name),
    ) else {
        return Ok(());
    };
    match &entry.what {
        EntryKind::Dir => bind(from, to, true),
        EntryKind::File => bind(from, to, false),
        EntryKind::Link(target) => made(libc::symlink(target.as_ptr(), to.as_ptr())),
        EntryKind::Blank { dir: true } => made(libc::mkdir(to.as_ptr(), 0o755)),
        EntryKind::Blank { dir: false } => made(create(to)),
    }
}

fn made(result: libc::c_int) -> std::io::Result<()> {
    match result {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Makes an empty file at `path`: 0, else -1.
///
/// # Safety
/// Only between `fork` and `exec`.
unsafe fn create(path: &std::ffi::CStr) -> libc::c_int {
    let fd = libc::open(
        path.as_ptr(),
        libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
        0o644,
    );
    if fd >= 0 {
        libc::close(fd);
    }
    fd.min(0)
}

/// `folder/name` in `buffer`, NUL-terminated; `None` where it does not fit.
fn join<'a>(buffer: &'a mut [u8], folder: &CString, name: &CString) -> Option<&'a std::ffi::CStr> {
    let (folder, name) = (folder.as_bytes(), name.as_bytes());
    let len = folder.len() + 1 + name.len();
    if len + 1 > buffer.len() {
        return None;
    }
    buffer[..folder.len()].copy_from_slice(folder);
    buffer[folder.len()] = b'/';
    buffer[folder.len() + 1..len].copy_from_slice(name);
    buffer[len] = 0;
    std::ffi::CStr::from_bytes_with_nul(&buffer[..=len]).ok()
}

/// Binds `from` at `to`, making `to` first (a folder, or an empty file).
///
/// # Safety
/// Only between `fork` and `exec`.
unsafe fn bind(from: &std::ffi::CStr, to: &std::ffi::CStr, dir: bool) -> std::io::Result<()> {
    made(match dir {
        true => libc::mkdir(to.as_ptr(), 0o755),
        false => create(to),
    })?;
    let none = std::ptr::null();
    match libc::mount(
        from.as_ptr(),
        to.as_ptr(),
        none,
        libc::MS_BIND | libc::MS_REC,
        none.cast(),
    ) {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn staged_path(index: usize) -> PathBuf {
    Path::new(STAGE).join(index.to_string())
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// Whether users other than the owner and group may enter `folder`: whether `nobody` can.
fn others_may_enter(folder: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(folder).is_ok_and(|m| m.mode() & 0o001 != 0)
}

/// The entries of `folder` to bind one by one, those in `skip` blank; sockets and devices
/// are not given.
fn entries(folder: &Path, skip: &[PathBuf]) -> Vec<Entry> {
    let Ok(list) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    list.flatten()
        .filter_map(|e| {
            let kind = e.file_type().ok()?;
            let what = if skip.contains(&e.path()) {
                EntryKind::Blank { dir: kind.is_dir() }
            } else if kind.is_symlink() {
                EntryKind::Link(c_path(&std::fs::read_link(e.path()).ok()?))
            } else if kind.is_dir() {
                EntryKind::Dir
            } else if kind.is_file() {
                EntryKind::File
            } else {
                return None;
            };
            Some(Entry {
                name: CString::new(e.file_name().as_bytes()).ok()?,
                what,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_joined_in_a_buffer_or_not_at_all() {
        let mut buffer = [0u8; 16];
        let folder = CString::new("/run/3").unwrap();
        let name = CString::new("conf.txt").unwrap();
        assert_eq!(
            join(&mut buffer, &folder, &name).unwrap().to_bytes(),
            b"/run/3/conf.txt"
        );
        let long = CString::new("a-name-too-long").unwrap();
        assert!(join(&mut buffer, &folder, &long).is_none());
    }
}
