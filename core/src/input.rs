//! Reading a file a user names (a book, a configuration): only a regular file, and never more
//! bytes than a cap, counted as they are read. A device (`/dev/zero`) or a pipe claims a size
//! of 0 and would otherwise be read forever, or hang the run waiting for a writer.

use std::io::Read;
use std::path::Path;

/// The bytes of `path`, a regular file of at most `cap` bytes; the reason otherwise, ready to
/// follow the path in a message.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let file = open_regular(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(format!("more than {} MiB, the most read", cap >> 20));
    }
    Ok(bytes)
}

/// `path` opened for reading, where it is a regular file; an error that says what it is
/// otherwise.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking, so that opening a pipe with no writer returns at once to be refused.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "not a regular file (a {}): arbiter reads only files",
                kind(&meta)
            ),
        ));
    }
    Ok(file)
}

/// As `read_capped`, as UTF-8 text.
pub fn read_text_capped(path: &Path, cap: u64) -> Result<String, String> {
    String::from_utf8(read_capped(path, cap)?).map_err(|_| "not UTF-8 text".to_string())
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "folder"
    } else if t.is_fifo() {
        "pipe"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_pipes_and_folders_are_refused_and_files_capped() {
        let zero = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(zero.contains("device"), "{zero}");
        let folder = read_capped(Path::new("/"), 1 << 20).unwrap_err();
        assert!(folder.contains("folder"), "{folder}");
        let dir = std::env::temp_dir().join(format!("arbiter-input-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let pipe = read_capped(&fifo, 1 << 20).unwrap_err();
        assert!(pipe.contains("pipe"), "{pipe}");
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
        assert!(read_capped(&big, 1 << 20).unwrap_err().contains("1 MiB"));
        std::fs::write(&big, "e2e4\n").unwrap();
        assert_eq!(read_text_capped(&big, 1 << 20).unwrap(), "e2e4\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
