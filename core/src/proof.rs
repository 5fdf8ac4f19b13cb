//! Proof that arbiter wrote a run's records. Each journal line ends with a keyed MAC
//! (HMAC-SHA256, cut to 128 bits) under its owner's key, kept outside every run folder
//! (`key_path`, readable by its owner only); `run.json` has its MAC, and the key's fingerprint,
//! in `run.proof`. No engine sees the key (its sandbox hides it), and whoever can write a run
//! folder but not read the key (another user of a shared scratch disk) can neither forge a
//! line nor seal a folder of their own: `--resume` and `merge` refuse, with file and line, a
//! line or setting anything but arbiter wrote, a folder whose proofs are gone, and one sealed
//! with another key.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::Path;

/// Where the sealing key of this user's runs is kept: `ARBITER_KEY` (a cluster with a home per
/// node names one file every node reads), else `$XDG_DATA_HOME/arbiter/key`, else
/// `~/.local/share/arbiter/key`, the home being the password database's where `HOME` is unset
/// (a system service, a bare `env -i`). Never inside a run folder: whoever can write the folder
/// could then make a key of their own and seal what they like.
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
                .map(PathBuf::from)
                .or_else(home_of_this_user)
                .map(|h| h.join(".local/share"))
        })?;
    Some(data.join("arbiter").join("key"))
}

/// This user's home folder as the password database has it.
fn home_of_this_user() -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    let mut found = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes only into `entry` and `buffer`, whose sizes it is given.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() || entry.pw_dir.is_null() {
        return None;
    }
    // SAFETY: pw_dir points into `buffer`, NUL-terminated by getpwuid_r.
    let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
    let dir = std::path::Path::new(std::ffi::OsStr::from_bytes(dir.to_bytes()));
    (dir.is_absolute() && dir != std::path::Path::new("/")).then(|| dir.to_path_buf())
}

/// The key's file in a run folder.
pub const KEY_FILE: &str = "run.key";
/// The MAC of the folder's `run.json`.
pub const SPEC_PROOF_FILE: &str = "run.proof";
/// The MAC of a tune folder's `tune.json`.
pub const TUNE_PROOF_FILE: &str = "tune.proof";
/// The proof of a bisect's settings (`bisect-spec.json`).
pub const BISECT_PROOF_FILE: &str = "bisect-spec.proof";

/// A run's settings, whose proof is `SPEC_PROOF_FILE` (the tournament's `SPEC_FILE`).
const RUN_SPEC_FILE: &str = "run.json";
/// A tune's journal of pairs, bound to the tune's settings (the tune's `PAIRS_FILE`).
const TUNE_PAIRS_FILE: &str = "pairs.jsonl";

/// The file that holds the proof of the settings file `name`.
fn proof_file(name: &str) -> &'static str {
    match name {
        "tune.json" => TUNE_PROOF_FILE,
        "bisect-spec.json" => BISECT_PROOF_FILE,
        _ => SPEC_PROOF_FILE,
    }
}

/// What ends a proven journal line: `,"mac":"<32 hex digits>"}`.
const MARK: &str = ",\"mac\":\"";
/// A journal line's place, sealed with it (see [`Key::seal_at`]).
const AT: &str = ",\"at\":";
const HEX: usize = 32;

#[derive(Clone)]
pub struct Key([u8; 32]);

impl Key {
    /// The key that proves the run folder `dir`: its owner's (see `key_path`). A folder sealed
    /// by an older arbiter, with its key inside (`run.key`), is refused: whoever could write
    /// the folder could have written that key too. Never `None`; an `Option` for the callers
    /// that once read keyless folders.
    pub fn load(dir: &Path) -> Result<Option<Key>, String> {
        let legacy = dir.join(KEY_FILE);
        if legacy.exists() {
            return Err(format!(
                "{}: this folder was sealed by an older arbiter with its key kept inside it, \
                 where anyone who can write the folder could have replaced it and sealed a \
                 forgery: refused. If no one else could write it, this checks its seals with \
                 that key and seals it again with yours:\n  \
                 arbiter adopt {}",
                legacy.display(),
                dir.display()
            ));
        }
        Key::owners().map(Some)
    }

    /// The key new records are sealed with: the owner's, made on first use.
    pub fn load_or_make(_dir: &Path) -> std::io::Result<Key> {
        Key::owners().map_err(std::io::Error::other)
    }

    /// This user's key, read from `key_path` (made there, readable by its owner only, where
    /// there is none yet). A key file that others may read, that is a link, or that belongs
    /// to someone else is refused: a key they could read proves nothing.
    pub fn owners() -> Result<Key, String> {
        static KEY: std::sync::OnceLock<Result<Key, String>> = std::sync::OnceLock::new();
        KEY.get_or_init(|| {
            let path = key_path().ok_or_else(|| {
                "no place for arbiter's key: set HOME, XDG_DATA_HOME or ARBITER_KEY".to_string()
            })?;
            match read_key(&path) {
                Ok(Some(key)) => Ok(key),
                Ok(None) => make_key(&path),
                Err(e) => Err(e),
            }
        })
        .clone()
    }

    /// A key of these bytes (the key an older arbiter kept in a run folder).
    pub fn from_bytes(bytes: [u8; 32]) -> Key {
        Key(bytes)
    }

    /// A short name of the key, recorded in each run folder it seals (never the key).
    pub fn fingerprint(&self) -> String {
        use sha2::Digest;
        let digest = Sha256::new()
            .chain_update(b"arbiter key fingerprint\0")
            .chain_update(self.0)
            .finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
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

    /// Adds a journal line's place (`"at"`: the number of whole lines before it in its
    /// journal) and then the MAC, so that a line deleted or moved shows at the next line.
    pub fn seal_at(&self, json: &mut Vec<u8>, at: u64) {
        debug_assert_eq!(json.last(), Some(&b'}'));
        json.pop();
        json.extend_from_slice(AT.as_bytes());
        json.extend_from_slice(at.to_string().as_bytes());
        json.push(b'}');
        self.seal(json);
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

    /// The proof of a file's whole content (`run.json` of a folder proven before runs had ids).
    pub fn of_file(&self, bytes: &[u8]) -> String {
        self.mac(bytes)
    }

    /// The proof of a settings file, bound to its run's id: a proof with an id cannot be made
    /// into one without, nor the other way, without the key.
    fn of_spec(&self, text: &[u8], id: Option<&str>) -> String {
        match id {
            Some(id) => {
                let mut bound = format!("arbiter run {id}\n").into_bytes();
                bound.extend_from_slice(text);
                self.mac(&bound)
            }
            None => self.mac(text),
        }
    }

    /// The key of one run: this key and the run's id, so that what it seals proves nothing in
    /// another run.
    pub fn of_run(&self, id: Option<&str>) -> Key {
        match id {
            Some(id) => {
                let mut mac =
                    <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("any key length");
                mac.update(format!("arbiter run key {id}").as_bytes());
                let mut derived = [0u8; 32];
                derived.copy_from_slice(&mac.finalize().into_bytes());
                Key(derived)
            }
            None => self.clone(),
        }
    }

    /// The key that seals and proves the journal at `path`: the owner's, bound to the id of
    /// the run whose settings are beside it (`run.json`, or `tune.json` for a tune's pairs), as
    /// their proof names it. A settings file its proof does not prove gives no key: every line
    /// of that folder is refused.
    pub fn for_journal(path: &Path) -> Result<Key, String> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Key::load(dir)?.ok_or("no key")?.bound_to_run_of(path)
    }

    /// This key bound to the run of the journal at `path` (see [`Key::for_journal`]).
    fn bound_to_run_of(self, path: &Path) -> Result<Key, String> {
        let owner = self;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = match path.file_name().and_then(|n| n.to_str()) {
            Some(TUNE_PAIRS_FILE) => "tune.json",
            _ => RUN_SPEC_FILE,
        };
        let proof_path = dir.join(proof_file(name));
        let Ok(proof) = std::fs::read_to_string(&proof_path) else {
            // Nothing here to bind to (a journal with no run beside it): the owner's key
            // proves nothing an engine wrote, and the run's own checks refuse the folder.
            return Ok(owner);
        };
        let (mac, id) = read_proof(&proof);
        let text = std::fs::read(dir.join(name)).unwrap_or_default();
        if !constant_time_eq(
            owner.of_spec(&text, id.as_deref()).as_bytes(),
            mac.as_bytes(),
        ) {
            return Err(format!(
                "{}: changed since arbiter wrote it (its proof in {} does not match your key); \
                 refused, with every game its folder holds",
                dir.join(name).display(),
                proof_path.display()
            ));
        }
        Ok(owner.of_run(id.as_deref()))
    }
}

/// `root` and the folders in it, two levels down: a run's, a split run's with its shards, a
/// tune's or a bisect's with its steps.
pub fn folders_within(root: &Path) -> Vec<std::path::PathBuf> {
    let mut folders = vec![root.to_path_buf()];
    let mut frontier = folders.clone();
    for _ in 0..2 {
        let mut next = Vec::new();
        for dir in &frontier {
            if let Ok(entries) = std::fs::read_dir(dir) {
                let mut found: Vec<_> = entries.flatten().map(|e| e.path()).collect();
                found.retain(|p| p.is_dir() && !p.is_symlink());
                found.sort();
                next.extend(found);
            }
        }
        folders.extend(next.iter().cloned());
        frontier = next;
    }
    folders
}

/// What `adopt` did to one folder.
#[derive(Debug)]
pub struct Adopted {
    pub folder: std::path::PathBuf,
    pub lines: usize,
}

/// Takes over the folders under `root` (itself, its shards, two levels down) that an older
/// arbiter sealed with a key kept inside them: every seal is checked with that key (a line or a
/// settings file it does not prove refuses the whole adoption, naming file and line, and
/// nothing is changed), then every record is sealed again with the owner's key and the folder's
/// key removed. The owner vouches that no one else could write the folder; the key inside it
/// still proves nothing an engine wrote got in, which is what it was made for.
pub fn adopt(root: &Path) -> Result<Vec<Adopted>, String> {
    let legacy: Vec<std::path::PathBuf> = folders_within(root)
        .into_iter()
        .filter(|d| d.join(KEY_FILE).is_file())
        .collect();
    // Whose folder and key it is, first: adopting seals what another user wrote (and could
    // have forged) with the caller's key.
    for dir in &legacy {
        for path in [dir.clone(), dir.join(KEY_FILE)] {
            if let Some(why) = crate::output::not_the_callers(&path) {
                return Err(format!(
                    "cannot adopt {}: {why}, and only its owner may adopt it",
                    path.display()
                ));
            }
        }
    }
    // Everything is checked before anything is written.
    let mut plans = Vec::new();
    for dir in &legacy {
        plans.push(check_legacy(dir)?);
    }
    let mut done = Vec::new();
    for (dir, plan) in legacy.iter().zip(plans) {
        let failed = |e: std::io::Error| format!("{}: {e}", dir.display());
        let mut lines = 0;
        // The settings come first in a plan: sealed, they give the run the id its journals
        // are sealed under.
        for (path, kept) in plan {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                if name == "run.json" || name == "tune.json" {
                    let text = std::fs::read(&path).map_err(failed)?;
                    seal_spec(dir, name, &text).map_err(failed)?;
                    continue;
                }
            }
            let owner = Key::owners()?.bound_to_run_of(&path)?;
            let mut out = Vec::new();
            let mut whole = 0;
            for line in kept {
                match line {
                    Kept::Seal(body) => {
                        let mut sealed = body.into_bytes();
                        owner.seal_at(&mut sealed, whole);
                        whole += 1;
                        out.extend_from_slice(&sealed);
                        lines += 1;
                    }
                    Kept::AsIs(text) => out.extend_from_slice(text.as_bytes()),
                }
                out.push(b'\n');
            }
            crate::output::replace(&path, &out).map_err(failed)?;
        }
        std::fs::remove_file(dir.join(KEY_FILE)).map_err(failed)?;
        done.push(Adopted {
            folder: dir.clone(),
            lines,
        });
    }
    Ok(done)
}

/// One legacy folder's records, checked with its own key: each settings file to seal again,
/// and each journal's lines.
type Plan = Vec<(std::path::PathBuf, Vec<Kept>)>;

/// A journal line as adopted.
enum Kept {
    /// A record the old key proved, without its seal: sealed again.
    Seal(String),
    /// An empty line, or one cut off by a crash (no record at all): the journal's own repair
    /// deals with it when the run is resumed.
    AsIs(String),
}

fn check_legacy(dir: &Path) -> Result<Plan, String> {
    let bytes = std::fs::read(dir.join(KEY_FILE)).map_err(|e| format!("{}: {e}", dir.display()))?;
    let key = Key(bytes
        .get(..32)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| format!("{}: not a key of arbiter's", dir.join(KEY_FILE).display()))?);
    let mut plan: Plan = Vec::new();
    for name in ["run.json", "tune.json"] {
        let path = dir.join(name);
        let Ok(text) = std::fs::read(&path) else {
            continue;
        };
        let proof_path = dir.join(proof_file(name));
        let proof = std::fs::read_to_string(&proof_path).unwrap_or_default();
        let mac = proof.lines().next().unwrap_or("").trim();
        if !constant_time_eq(key.of_file(&text).as_bytes(), mac.as_bytes()) {
            return Err(format!(
                "{}: its proof in {} does not match the folder's key: it was changed, so the \
                 folder cannot be adopted",
                path.display(),
                proof_path.display()
            ));
        }
        plan.push((path, Vec::new()));
    }
    let mut journals: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    journals.sort();
    for path in journals {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut kept = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            let record = serde_json::from_str::<serde_json::Value>(line).is_ok();
            if line.is_empty() || !record {
                kept.push(Kept::AsIs(line.to_string()));
                continue;
            }
            check_line(Some(&key), line, &path, i + 1)
                .map_err(|why| format!("{why}; the folder cannot be adopted"))?;
            kept.push(Kept::Seal(unsealed(line)));
        }
        plan.push((path, kept));
    }
    Ok(plan)
}

/// Reads the key at `path`; `None` where there is none yet.
fn read_key(path: &Path) -> Result<Option<Key>, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path);
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read arbiter's key {}: {e}", path.display())),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{}: arbiter's key must be a file of yours that no one else may read or write \
             (chmod 600); refused",
            path.display()
        ));
    }
    let mut key = [0u8; 32];
    file.read_exact(&mut key)
        .map_err(|_| format!("{}: not a key of arbiter's", path.display()))?;
    Ok(Some(Key(key)))
}

/// Makes this user's key at `path` (its folder readable by its owner only), or reads the one
/// another arbiter made at the same moment.
fn make_key(path: &Path) -> Result<Key, String> {
    use std::io::{Read, Write};
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let failed = |e: std::io::Error| format!("cannot make arbiter's key {}: {e}", path.display());
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
        .map_err(failed)?;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .map_err(failed)?;
    // Written whole under a name of its own, then linked into place: no arbiter ever reads a
    // half-written key, and of two made at once the first wins.
    let tmp = folder.join(format!(".key.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(failed)?;
    file.write_all(&key)
        .and_then(|()| file.sync_all())
        .map_err(failed)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(Key(key)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read_key(path)?.ok_or_else(|| failed(e))
        }
        Err(e) => Err(failed(e)),
    }
}

/// A line's text before its MAC, and the MAC.
fn split(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_suffix("\"}")?;
    let at = rest.len().checked_sub(HEX)?;
    let (body, mac) = (rest.get(..at)?, rest.get(at..)?);
    Some((body.strip_suffix(MARK)?, mac))
}

/// A sealed line's JSON object without its MAC and place (the line itself where it has none).
pub fn unsealed(line: &str) -> String {
    match split(line) {
        Some((body, _)) => {
            let body = placed(body).map_or(body, |(body, _)| body);
            format!("{body}}}")
        }
        None => line.to_string(),
    }
}

/// A sealed body's text before its place, and the place; `None` for a line sealed without one
/// (by an earlier build).
fn placed(body: &str) -> Option<(&str, u64)> {
    let (before, at) = body.rsplit_once(AT)?;
    let digits = !at.is_empty() && at.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| at.parse().ok().map(|at| (before, at)))?
}

/// The place sealed in a journal line, where it has one.
pub fn place(line: &str) -> Option<u64> {
    split(line)
        .and_then(|(body, _)| placed(body))
        .map(|(_, at)| at)
}

/// Checks that line `line` of the journal `path`, whose seal is already proven and gave the
/// place `at`, is where it was written: `whole_before` whole lines precede it. A line sealed
/// without a place (by an earlier build) is where it may be.
pub fn check_place(
    at: Option<u64>,
    whole_before: u64,
    path: &Path,
    line: usize,
) -> Result<(), String> {
    match at {
        Some(at) if at != whole_before => Err(format!(
            "{}:{line}: this line is out of its place: arbiter wrote it after {at} whole line(s) \
             of this journal, and {whole_before} come before it here; refused: a line before it \
             was deleted, or lines were moved",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Whether a line carries a MAC at all.
pub fn sealed(line: &str) -> bool {
    split(line).is_some()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Writes the proof of the settings file `name` (`run.json`, `tune.json`) beside it: its MAC,
/// the fingerprint of the key that made it, and the run's id (see [`run_id`]).
pub fn seal_spec(dir: &Path, name: &str, text: &[u8]) -> std::io::Result<()> {
    seal_spec_as(dir, name, text, run_id(dir, name).as_deref())
}

/// [`seal_spec`] under a run id the caller chose with [`run_id`] (`None`: a folder proven before
/// runs had ids, kept so).
pub fn seal_spec_as(dir: &Path, name: &str, text: &[u8], id: Option<&str>) -> std::io::Result<()> {
    let key = Key::load_or_make(dir)?;
    let proof = proof_file(name);
    let mut body = format!("{}\nkey {}\n", key.of_spec(text, id), key.fingerprint());
    if let Some(id) = id {
        body.push_str(&format!("run {id}\n"));
    }
    crate::output::replace(&dir.join(proof), body.as_bytes())
}

/// The id of the run whose settings file `name` is in `dir`: the one its proof names where the
/// settings there are proven with it (the run goes on), else a new random one (a new run; a
/// proof planted or left by another run names no id this run takes). `None` for a run proven
/// before runs had ids, which goes on so. Every journal line is sealed under a key made from it
/// (see [`Key::for_journal`]), so a line moved in from another run, even one of the same owner
/// and settings, is refused.
pub fn run_id(dir: &Path, name: &str) -> Option<String> {
    let fresh = || {
        use crate::output::random;
        Some(format!("{:016x}{:016x}", random(), random()))
    };
    let (Ok(text), Ok(proof)) = (
        std::fs::read(dir.join(name)),
        std::fs::read_to_string(dir.join(proof_file(name))),
    ) else {
        return fresh();
    };
    let Ok(key) = Key::owners() else {
        return fresh();
    };
    let (mac, id) = read_proof(&proof);
    if constant_time_eq(key.of_spec(&text, id.as_deref()).as_bytes(), mac.as_bytes()) {
        return id;
    }
    fresh()
}

/// A proof file's MAC and the run id it names (none in a proof made before runs had ids).
fn read_proof(proof: &str) -> (String, Option<String>) {
    let mut lines = proof.lines();
    let mac = lines.next().unwrap_or("").trim().to_string();
    let id = lines
        .find_map(|l| l.strip_prefix("run "))
        .map(|id| id.trim().to_string());
    (mac, id)
}

/// Checks the settings file `name`'s text against its proof under the owner's key: a folder
/// whose proof is missing, made with another key, or that does not match is refused.
pub fn check_spec(dir: &Path, name: &str, text: &[u8]) -> Result<(), String> {
    let key = Key::load(dir)?.ok_or("no key")?;
    let proof_name = proof_file(name);
    let proof_path = dir.join(proof_name);
    let proof = match std::fs::read_to_string(&proof_path) {
        Ok(proof) => proof,
        Err(_) => {
            return Err(format!(
                "{}:1: missing: {} carries no proof that arbiter wrote it (its proofs were \
                 removed, or it was written by an arbiter older than proofs); refused",
                proof_path.display(),
                dir.join(name).display()
            ))
        }
    };
    let (mac, id) = read_proof(&proof);
    let sealed_by = proof
        .lines()
        .find_map(|l| l.strip_prefix("key "))
        .map(str::trim);
    let mine = key.fingerprint();
    if let Some(theirs) = sealed_by.filter(|theirs| *theirs != mine) {
        return Err(format!(
            "{}:2: sealed with another key (fingerprint {theirs}; yours, {}, is {mine}): \
             refused. A run from another machine is merged with the key that sealed it \
             (ARBITER_KEY names its file)",
            proof_path.display(),
            key_path().unwrap_or_default().display()
        ));
    }
    if constant_time_eq(key.of_spec(text, id.as_deref()).as_bytes(), mac.as_bytes()) {
        return Ok(());
    }
    Err(format!(
        "{}: changed since arbiter wrote it (its proof in {proof_name} does not match your \
         key); refused: an engine or another program may have weakened its settings, or \
         sealed it again with a key of its own",
        dir.join(name).display()
    ))
}

/// Checks line `line` of the journal `path`: proven by the owner's key. A line without a
/// proof (its seal cut off) is refused like a forged one.
pub fn check_line(key: Option<&Key>, text: &str, path: &Path, line: usize) -> Result<(), String> {
    if key.is_some_and(|key| key.proves(text)) {
        return Ok(());
    }
    Err(match sealed(text) {
        true => format!(
            "{}:{line}: this line was not written by arbiter for this run with your key (its proof \
                does not match): refused; an engine or another program wrote, changed or sealed it",
            path.display()
        ),
        false => format!(
            "{}:{line}: this line carries no proof that arbiter wrote it: refused",
            path.display(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names this module binds journals by are the names the runs and tunes write.
    #[test]
    fn the_files_proven_are_those_runs_and_tunes_write() {
        assert_eq!(RUN_SPEC_FILE, crate::tournament::spec::SPEC_FILE);
        assert_eq!(TUNE_PAIRS_FILE, crate::tune::PAIRS_FILE);
    }

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

    #[test]
    fn a_placed_line_carries_its_place_under_the_seal() {
        let key = Key([7; 32]);
        let body = r#"{"index":3,"record":{"outcome":"1-0"}}"#;
        let mut line = body.as_bytes().to_vec();
        key.seal_at(&mut line, 12);
        let text = String::from_utf8(line).unwrap();
        assert!(key.proves(&text), "{text}");
        assert_eq!(place(&text), Some(12));
        assert_eq!(unsealed(&text), body);
        assert!(
            !key.proves(&text.replace("\"at\":12", "\"at\":11")),
            "the place is sealed"
        );
        let mut legacy = body.as_bytes().to_vec();
        key.seal(&mut legacy);
        assert_eq!(place(&String::from_utf8(legacy).unwrap()), None);
        let path = Path::new("j");
        assert!(check_place(Some(12), 12, path, 13).is_ok());
        assert!(check_place(None, 5, path, 6).is_ok());
        let moved = check_place(Some(12), 11, path, 12).unwrap_err();
        assert!(
            moved.starts_with("j:12: this line is out of its place"),
            "{moved}"
        );
    }
}
