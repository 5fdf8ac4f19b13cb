//! Content hashes of files hashed before, kept between runs (as git's index keeps them): an
//! engine's program is tens of megabytes, and hashing it at every run's start was most of a
//! short match's own CPU.
//!
//! A hash is reused only for the same file (device and inode) with the same size, modification
//! and status-change times to the nanosecond. Writing a file changes its status-change time, and
//! no program can set that time back, so a file changed since it was hashed is hashed again. A
//! file changed within two seconds of being hashed is not remembered at all: a write in the same
//! clock tick as the hash could leave its times unchanged.
//!
//! The cache is `$ARBITER_HASH_CACHE`, else `$XDG_CACHE_HOME/arbiter/hashes`, else
//! `~/.cache/arbiter/hashes`; `ARBITER_HASH_CACHE=off` hashes every file every time. A cache
//! that cannot be read or written only costs the time of hashing.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Files remembered; the oldest are forgotten first.
const KEPT: usize = 256;

/// Changed this recently, a file's times may not yet tell a later write.
const SETTLED: Duration = Duration::from_secs(2);

fn cache_file() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ARBITER_HASH_CACHE") {
        return (path != "off").then(|| PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("arbiter").join("hashes"))
}

/// What identifies one state of a file: device, inode, size, modification and status-change
/// times.
fn stamp(meta: &std::fs::Metadata) -> String {
    format!(
        "{} {} {} {}.{:09} {}.{:09}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    )
}

/// One line of the cache: `<hash> <stamp> <path>`.
struct Entry {
    hash: String,
    stamp: String,
    path: String,
}

fn parse(line: &str) -> Option<Entry> {
    let mut fields = line.splitn(7, ' ');
    let hash = fields.next()?.to_string();
    let stamp: Vec<&str> = (0..5).map(|_| fields.next()).collect::<Option<_>>()?;
    let path = fields.next()?.to_string();
    (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then(|| Entry {
        hash,
        stamp: stamp.join(" "),
        path,
    })
}

fn entries(cache: &Path) -> Vec<Entry> {
    std::fs::read_to_string(cache)
        .unwrap_or_default()
        .lines()
        .filter_map(parse)
        .collect()
}

/// The file's key in the cache: its absolute path, when it has one a line can hold.
fn key(path: &Path) -> Option<(String, std::fs::Metadata)> {
    let path = std::fs::canonicalize(path).ok()?;
    let text = path.to_str().filter(|t| !t.contains('\n'))?.to_string();
    let meta = std::fs::metadata(&path).ok()?;
    Some((text, meta))
}

/// The hash remembered for `path` as it is now, if any.
pub fn lookup(path: &Path) -> Option<String> {
    lookup_in(&cache_file()?, path)
}

/// Remembers `hash` for `path` as it is now, unless it changed too recently to be sure.
pub fn remember(path: &Path, hash: &str) {
    if let Some(cache) = cache_file() {
        remember_in(&cache, path, hash);
    }
}

fn lookup_in(cache: &Path, path: &Path) -> Option<String> {
    let (path, meta) = key(path)?;
    let stamp = stamp(&meta);
    entries(cache)
        .into_iter()
        .rev()
        .find(|e| e.path == path && e.stamp == stamp)
        .map(|e| e.hash)
}

fn remember_in(cache: &Path, path: &Path, hash: &str) {
    let Some((path, meta)) = key(path) else {
        return;
    };
    let changed = SystemTime::UNIX_EPOCH
        + Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec() as u32);
    match SystemTime::now().duration_since(changed) {
        Ok(age) if age >= SETTLED => {}
        _ => return,
    }
    let mut kept: Vec<Entry> = entries(cache)
        .into_iter()
        .filter(|e| e.path != path)
        .collect();
    kept.push(Entry {
        hash: hash.to_string(),
        stamp: stamp(&meta),
        path,
    });
    let skip = kept.len().saturating_sub(KEPT);
    let text: String = kept[skip..]
        .iter()
        .map(|e| format!("{} {} {}\n", e.hash, e.stamp, e.path))
        .collect();
    // Written aside and renamed: runs starting together each leave a whole file.
    let Some(dir) = cache.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let aside = dir.join(format!(".hashes.{}", std::process::id()));
    if std::fs::write(&aside, text).is_ok() && std::fs::rename(&aside, cache).is_err() {
        let _ = std::fs::remove_file(&aside);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_with_spaces_in_its_path() {
        let hash = "ab".repeat(32);
        let line = format!("{hash} 2049 77 10 5.000000001 6.000000002 /a b/c d");
        let entry = parse(&line).unwrap();
        assert_eq!(entry.hash, hash);
        assert_eq!(entry.stamp, "2049 77 10 5.000000001 6.000000002");
        assert_eq!(entry.path, "/a b/c d");
        assert!(parse("nothex 1 2 3 4 5 /p").is_none());
        assert!(parse(&format!("{hash} 1 2 3 /p")).is_none());
    }

    /// A file is remembered once its times have settled, and a file rewritten to the same size
    /// with its modification time put back is not taken for the one remembered.
    #[test]
    fn a_rewritten_file_is_not_taken_for_the_remembered_one() {
        let dir = std::env::temp_dir().join(format!("arbiter-hash-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cache = dir.join("cache").join("hashes");
        let file = dir.join("engine");
        std::fs::write(&file, "version 1").unwrap();
        remember_in(&cache, &file, &"11".repeat(32));
        assert_eq!(
            lookup_in(&cache, &file),
            None,
            "remembered while its times may still move"
        );

        std::thread::sleep(SETTLED + Duration::from_millis(100));
        remember_in(&cache, &file, &"11".repeat(32));
        assert_eq!(lookup_in(&cache, &file), Some("11".repeat(32)));

        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, "version 2").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            modified
        );
        assert_eq!(
            lookup_in(&cache, &file),
            None,
            "the rewritten file was taken as hashed"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
