//! Writing files where other users may have been first: every file arbiter writes is opened so
//! that a name planted beside it (a link to `/etc/passwd`, a file of another user's) cannot
//! redirect it, and a run's folder must be the caller's own.
//!
//! A new file is made under a random name with `O_CREAT | O_EXCL | O_NOFOLLOW` (a name that
//! already exists, a link included, fails rather than being followed), then renamed into place
//! (`rename` replaces a link at the target; it never writes through one).

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// `path`'s content replaced by `bytes`, whole or not at all.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (tmp, mut file) = create_beside(path, 0o644)?;
    let written = file.write_all(bytes);
    drop(file);
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A new file of a random name beside `path` (`.<name>.<random>`), made by this call alone.
pub fn create_beside(path: &Path, mode: u32) -> std::io::Result<(PathBuf, std::fs::File)> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for _ in 0..16 {
        let tmp = path.with_file_name(format!(".{name}.{:016x}", random()));
        match create_new(&tmp, mode) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temporary name"))
}

/// `path` made as a new file, never through a link nor over one that exists.
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

pub(crate) fn random() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom(2) fills the buffer it is given, up to its length.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        return now ^ u64::from(std::process::id()).rotate_left(32);
    }
    u64::from_ne_bytes(bytes)
}

/// A file the user named (`--pgnout`, `--log`) opened to write: made where there is none, never
/// through a link, and refused where it is another user's file or a second name of one (a hard
/// link planted in a shared folder), as a planted name would redirect what arbiter writes.
/// `append` adds to it; otherwise it is opened at its start, to be cut where the caller says.
pub fn open_own(path: &Path, append: bool) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    match append {
        true => options.append(true),
        false => options.write(true),
    };
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => std::io::Error::other(format!(
            "{} is a link: arbiter does not write through one (another user may have \
                planted              it); give another file",
            path.display()
        )),
        _ => e,
    })?;
    let meta = file.metadata()?;
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    let why = if meta.uid() != me && meta.file_type().is_file() {
        Some(format!("it belongs to another user (uid {})", meta.uid()))
    } else if meta.file_type().is_file() && meta.nlink() > 1 {
        Some("it has another name (a hard link)".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(std::io::Error::other(format!(
            "{}: {why}, which another user could have planted to redirect what arbiter writes; \
             give a file of your own",
            path.display()
        ))),
        None => Ok(file),
    }
}

/// Refuses a folder arbiter is to write a run into that is not the caller's own: another
/// user's (who could plant links in it, or swap its files), or one others may write, or a
/// link. `None` where it is the caller's, or does not exist yet.
pub fn foreign_folder(dir: &Path) -> Option<String> {
    let why = not_the_callers(dir)?;
    Some(format!(
        "{}: arbiter writes a run only into a folder of its caller's own, and {why}, who could \
         plant links or forge its files there: choose another --out",
        dir.display()
    ))
}

/// Why `path` is not the caller's own (a link, another user's, writable by every user), if
/// it is not; `None` where it is, or does not exist.
pub fn not_the_callers(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.file_type().is_symlink() {
        Some("it is a link".to_string())
    } else if meta.uid() != me {
        Some(format!("it belongs to another user (uid {})", meta.uid()))
    } else if meta.mode() & 0o002 != 0 {
        Some("every user may write in it".to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_not_written_through() {
        let dir = std::env::temp_dir().join(format!("arbiter-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "root's").unwrap();
        let out = dir.join("game-1.json");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        replace(&out, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "{}");
        let planted = dir.join("planted");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(
            create_new(&planted, 0o600).is_err(),
            "a link is never opened"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
        assert!(foreign_folder(&dir).is_none());
        // A file the user named: never through a link, nor a second name of another file.
        let named = open_own(&planted, true).unwrap_err().to_string();
        assert!(named.contains("is a link"), "{named}");
        let second = dir.join("second");
        std::fs::hard_link(&victim, &second).unwrap();
        let named = open_own(&second, false).unwrap_err().to_string();
        assert!(named.contains("hard link"), "{named}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
        let mine = dir.join("mine");
        writeln!(open_own(&mine, true).unwrap(), "kept").unwrap();
        writeln!(open_own(&mine, true).unwrap(), "added").unwrap();
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "kept\nadded\n");
        assert!(foreign_folder(&planted).unwrap().contains("a link"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
