//! One task of a tune split over machines (Slurm array tasks): pairs are claimed through the
//! shared file system as a split run's game pairs are (`tournament::claims`), each task
//! journals its own pairs in its folder, and every task reads all the tasks' journals, so all
//! of them apply the same results in pair order and reach the same theta.

use super::journal::{PairEntry, PAIRS_FILE};
use super::ledger::Ledger;
use super::TuneSpec;
use crate::tournament::claims::{Blocks, Claims, Heartbeat, Liveness};
use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the other tasks' journals are read while waiting.
const SCAN_EVERY: Duration = Duration::from_millis(100);

pub struct TuneSplit {
    /// The tune's folder, which holds every task's folder.
    root: PathBuf,
    claims: Claims,
    /// Pairs this task holds unfinished, as its heartbeat says.
    open: Arc<AtomicU64>,
    held: BTreeSet<u64>,
    heartbeat: Option<Heartbeat>,
    /// How far each task's journal has been read (bytes of whole lines).
    read: HashMap<PathBuf, u64>,
    last_scan: Option<Instant>,
    pub error: Option<String>,
}

impl TuneSplit {
    /// Joins the split tune whose task folder is `dir`.
    pub fn join(dir: &Path, spec: &TuneSpec) -> Result<TuneSplit, String> {
        let root = dir.parent().unwrap_or(Path::new(".")).to_path_buf();
        let me = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lease = Duration::from_secs(spec.run.lease);
        let claims = Claims::open(&root, &me, &spec.identity(), lease, Blocks::SINGLE)?;
        let open = Arc::new(AtomicU64::new(0));
        let heartbeat = Some(claims.start_heartbeat(open.clone()));
        Ok(TuneSplit {
            root,
            claims,
            open,
            held: BTreeSet::new(),
            heartbeat,
            read: HashMap::new(),
            last_scan: None,
            error: None,
        })
    }

    /// Reads what the tasks journalled since the last look into `ledger`.
    pub fn catch_up(&mut self, ledger: &mut Ledger) {
        if self.last_scan.is_some_and(|t| t.elapsed() < SCAN_EVERY) {
            return;
        }
        self.last_scan = Some(Instant::now());
        let Ok(folders) = std::fs::read_dir(&self.root) else {
            return;
        };
        for folder in folders.flatten() {
            let path = folder.path().join(PAIRS_FILE);
            if !path.is_file() {
                continue;
            }
            let from = self.read.get(&path).copied().unwrap_or(0);
            let Ok((entries, upto)) = read_from(&path, from) else {
                continue;
            };
            self.read.insert(path, upto);
            for e in entries {
                // Only pairs this tune gives those values count (another task's garbage never).
                if e.pair < ledger.spsa.pairs && ledger.played_as_scheduled(&e) != Some(false) {
                    ledger.add(&e);
                }
            }
        }
    }

    /// Whether this task may play pair `k`: claimed now, or taken over from a dead task.
    pub fn claim(&mut self, k: u64) -> bool {
        let mine = match self.claims.owner(k) {
            Ok(None) => self.claims.claim(k).map(|block| block.is_some()),
            Ok(Some(c)) if c.owner == self.claims.me() => Ok(true),
            // A task that ended holding nothing finished what it claimed, and a dead one may
            // have finished the pair before it died: its journal says, even when this task
            // has not read it yet.
            Ok(Some(c)) => match self.claims.look(&c.owner) {
                Liveness::Dead | Liveness::Quit if !self.journalled_by(&c.owner, k) => {
                    self.claims.take_over(k, &c)
                }
                _ => Ok(false),
            },
            Err(e) => Err(e),
        };
        match mine {
            Ok(true) => {
                self.held.insert(k);
                self.open.store(self.held.len() as u64, Ordering::SeqCst);
                true
            }
            Ok(false) => false,
            Err(e) => {
                self.error
                    .get_or_insert(format!("cannot claim pair {}: {e}", k + 1));
                false
            }
        }
    }

    /// Whether `task`'s journal holds pair `k`.
    fn journalled_by(&self, task: &str, k: u64) -> bool {
        read_from(&self.root.join(task).join(PAIRS_FILE), 0)
            .is_ok_and(|(entries, _)| entries.iter().any(|e| e.pair == k))
    }

    pub fn finished(&mut self, k: u64) {
        self.held.remove(&k);
        self.open.store(self.held.len() as u64, Ordering::SeqCst);
    }

    /// Stops the heartbeat; its last beat says what this task left unfinished.
    pub fn end(&mut self) {
        self.heartbeat.take();
    }
}

/// The whole lines of `path` from byte `from` that its folder's key proves, and where the next
/// read starts.
fn read_from(path: &Path, from: u64) -> std::io::Result<(Vec<PairEntry>, u64)> {
    let key = Some(crate::proof::Key::for_journal(path).map_err(std::io::Error::other)?);
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let entries = bytes[..whole]
        .split(|b| *b == b'\n')
        .filter(|line| {
            let text = String::from_utf8_lossy(line);
            crate::proof::check_line(key.as_ref(), &text, path, 0).is_ok()
        })
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    Ok((entries, from + whole as u64))
}
