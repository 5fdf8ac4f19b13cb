//! Proof that arbiter wrote a run's records. Each journal line ends with a keyed MAC
//! (HMAC-SHA256, cut to 128 bits) under a key made for its run folder and kept there in
//! `run.key`, readable by its owner only; `run.json` has its MAC in `run.proof`. No engine sees
//! the run folder (its sandbox hides it), so none can read the key: a line or setting an engine
//! wrote, or changed, is refused by `--resume` and `merge` with its file and line, forfeits and
//! crashes included, which no replay of the moves could check.
//!
//! A folder without a key was written by an arbiter from before proofs, and is read as it was.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::Path;

/// Where the sealing key of this user's runs is kept: `ARBITER_KEY` (a cluster with a home per
/// node names one file every node reads), else `$XDG_DATA_HOME/arbiter/key`, else
/// `~/.local/share/arbiter/key`. Never inside a run folder: whoever can write the folder could
/// then make a key of their own and seal what they like.
pub fn key_path() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(path) = std::env::var_os("ARBITER_KEY").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("arbiter").join("key"))
}

/// The key's file in a run folder.
pub const KEY_FILE: &str = "run.key";
/// The MAC of the folder's `run.json`.
pub const SPEC_PROOF_FILE: &str = "run.proof";
/// The MAC of a tune folder's `tune.json`.
pub const TUNE_PROOF_FILE: &str = "tune.proof";

/// The file that holds the proof of the settings file `name`.
fn proof_file(name: &str) -> &'static str {
    match name {
        "tune.json" => TUNE_PROOF_FILE,
        _ => SPEC_PROOF_FILE,
    }
}

/// What ends a proven journal line: `,"mac":"<32 hex digits>"}`.
const MARK: &str = ",\"mac\":\"";
const HEX: usize = 32;

#[derive(Clone)]
pub struct Key([u8; 32]);

impl Key {
    /// The key of the run folder `dir`; `None` where it has none.
    pub fn load(dir: &Path) -> Result<Option<Key>, String> {
        let path = dir.join(KEY_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let key: [u8; 32] = bytes
                    .get(..32)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| format!("{}: not a key of arbiter's", path.display()))?;
                Ok(Some(Key(key)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// The key of `dir`, made (from the kernel's random numbers) where it has none.
    pub fn load_or_make(dir: &Path) -> std::io::Result<Key> {
        use std::io::{Read, Write};
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(key) = Key::load(dir).map_err(std::io::Error::other)? {
            return Ok(key);
        }
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        let path = dir.join(KEY_FILE);
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match made {
            Ok(mut file) => {
                file.write_all(&key)?;
                file.sync_all()?;
                Ok(Key(key))
            }
            // Another task of a split run made it first.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Key::load(dir).map_err(std::io::Error::other)?.ok_or(e)
            }
            Err(e) => Err(e),
        }
    }

    fn mac(&self, body: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("any key length");
        mac.update(body);
        let tag = mac.finalize().into_bytes();
        let mut hex = String::with_capacity(HEX);
        for b in &tag[..HEX / 2] {
            hex.push_str(&format!("{b:02x}"));
        }
        hex
    }

    /// Adds the MAC to a JSON object's text (which ends with `}`).
    pub fn seal(&self, json: &mut Vec<u8>) {
        debug_assert_eq!(json.last(), Some(&b'}'));
        let mac = self.mac(json);
        json.pop();
        json.extend_from_slice(MARK.as_bytes());
        json.extend_from_slice(mac.as_bytes());
        json.extend_from_slice(b"\"}");
    }

    /// Whether `line` (a JSON object) ends with the MAC this key gives the rest of it.
    pub fn proves(&self, line: &str) -> bool {
        let Some((body, mac)) = split(line) else {
            return false;
        };
        let mut text = Vec::with_capacity(body.len() + 1);
        text.extend_from_slice(body.as_bytes());
        text.push(b'}');
        constant_time_eq(self.mac(&text).as_bytes(), mac.as_bytes())
    }

    /// The proof of a file's whole content (`run.json`).
    pub fn of_file(&self, bytes: &[u8]) -> String {
        self.mac(bytes)
    }
}

/// A line's text before its MAC, and the MAC.
fn split(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_suffix("\"}")?;
    let at = rest.len().checked_sub(HEX)?;
    let (body, mac) = (rest.get(..at)?, rest.get(at..)?);
    Some((body.strip_suffix(MARK)?, mac))
}

/// A sealed line's JSON object without its MAC (the line itself where it has none).
pub fn unsealed(line: &str) -> String {
    match split(line) {
        Some((body, _)) => format!("{body}}}"),
        None => line.to_string(),
    }
}

/// Whether a line carries a MAC at all (a journal of a folder that has lost its key).
pub fn sealed(line: &str) -> bool {
    split(line).is_some()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Writes the proof of the settings file `name` (`run.json`, `tune.json`) beside it.
pub fn seal_spec(dir: &Path, name: &str, text: &[u8]) -> std::io::Result<()> {
    let key = Key::load_or_make(dir)?;
    let proof = proof_file(name);
    let tmp = dir.join(format!(".{proof}.{}", std::process::id()));
    std::fs::write(&tmp, key.of_file(text) + "\n")?;
    std::fs::rename(&tmp, dir.join(proof))
}

/// Checks the settings file `name`'s text against its proof, where the folder has a key.
pub fn check_spec(dir: &Path, name: &str, text: &[u8]) -> Result<(), String> {
    let Some(key) = Key::load(dir)? else {
        return Ok(());
    };
    let proof_name = proof_file(name);
    let proof = std::fs::read_to_string(dir.join(proof_name)).unwrap_or_default();
    if constant_time_eq(key.of_file(text).as_bytes(), proof.trim().as_bytes()) {
        return Ok(());
    }
    Err(format!(
        "{}: changed since arbiter wrote it (its proof in {proof_name} does not match); \
         refused: an engine or another program may have weakened its settings",
        dir.join(name).display()
    ))
}

/// Checks line `line` of the journal `path`: proven by the folder's key, or, in a folder
/// without one (written before proofs), carrying no proof at all.
pub fn check_line(key: Option<&Key>, text: &str, path: &Path, line: usize) -> Result<(), String> {
    let fine = match key {
        Some(key) => key.proves(text),
        None => !sealed(text),
    };
    if fine {
        return Ok(());
    }
    Err(match key {
        Some(_) => format!(
            "{}:{line}: this line was not written by arbiter for this run (its proof does not match): refused; an engine or another program wrote or changed it",
            path.display()
        ),
        None => format!(
            "{}:{line}: the line carries a proof but the folder's {KEY_FILE} is gone: refused",
            path.display(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_line_is_proven_and_any_change_is_not() {
        let key = Key([7; 32]);
        let mut line = br#"{"index":3,"record":{"outcome":"1-0"}}"#.to_vec();
        key.seal(&mut line);
        let text = String::from_utf8(line).unwrap();
        assert!(key.proves(&text), "{text}");
        assert!(sealed(&text));
        let forged = text.replace("1-0", "0-1");
        assert!(!key.proves(&forged));
        assert!(!Key([8; 32]).proves(&text), "another run's key");
        assert!(!key.proves(r#"{"index":3,"record":{"outcome":"1-0"}}"#));
        // The entry still reads as JSON, the MAC an extra field.
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["index"], 3);
    }
}
