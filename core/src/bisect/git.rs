//! A bisect over a git range: every commit from `--good` to `--bad` (along the ancestry path),
//! each checked out in a worktree of its own in the bisect's folder (`builds/<commit>/`) and
//! built there by the user's command. A commit whose build fails (or leaves no program) is
//! skipped, as `git bisect skip` would, and said; a built one is kept and not built again when
//! the bisect is started again. Each program is recorded by content hash in its steps' runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where the versions come from.
#[derive(Clone, Debug)]
pub struct GitRange {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    /// Run by `sh -c` in each worktree.
    pub build: String,
    /// The built program, relative to the worktree.
    pub program: PathBuf,
}

/// One version built from the range.
#[derive(Clone, Debug)]
pub struct Built {
    pub commit: String,
    /// The commit's first 8 hex digits, the version's name.
    pub name: String,
    pub program: PathBuf,
}

/// The marker of a finished build in its worktree (its content: the program's path).
const BUILT: &str = ".arbiter-built";

fn git(repo: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The commits of the range in order, the good one first.
pub fn commits(range: &GitRange) -> Result<Vec<String>, String> {
    let resolve = |rev: &str, flag: &str| {
        git(
            &range.repo,
            &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
        )
        .map_err(|e| {
            format!(
                "{flag} {rev}: not a commit of {} ({e})",
                range.repo.display()
            )
        })
    };
    let good = resolve(&range.good, "--good")?;
    let bad = resolve(&range.bad, "--bad")?;
    let after = git(
        &range.repo,
        &[
            "rev-list",
            "--reverse",
            "--ancestry-path",
            &format!("{good}..{bad}"),
        ],
    )?;
    let mut all = vec![good];
    all.extend(after.lines().map(str::to_string));
    if all.len() < 2 {
        return Err(format!(
            "--bad {} does not come after --good {} in {}",
            range.bad,
            range.good,
            range.repo.display()
        ));
    }
    Ok(all)
}

/// Builds each commit of the range (or finds it built) under `out/builds/`; the versions that
/// built, in order. `note` is told of each build and skip. The good commit must build.
pub fn build_all(
    range: &GitRange,
    out: &Path,
    mut note: impl FnMut(&str),
) -> Result<Vec<Built>, String> {
    let commits = commits(range)?;
    let builds = out.join("builds");
    std::fs::create_dir_all(&builds).map_err(|e| format!("{}: {e}", builds.display()))?;
    let builds = builds
        .canonicalize()
        .map_err(|e| format!("{}: {e}", builds.display()))?;
    // The tasks of a bisect split over a cluster build into one folder: one builds, the
    // others wait and find its builds.
    let _builder = lock_builds(&builds)?;
    let mut built = Vec::new();
    for (i, commit) in commits.iter().enumerate() {
        let name = commit[..8.min(commit.len())].to_string();
        let tree = builds.join(commit);
        match build_one(range, commit, &tree) {
            Ok((program, cached)) => {
                if !cached {
                    note(&format!("built {name} ({} of {})", i + 1, commits.len()));
                }
                built.push(Built {
                    commit: commit.clone(),
                    name,
                    program,
                });
            }
            Err(why) if i == 0 => {
                return Err(format!(
                    "--good {}: {why}: a bisect needs its first version",
                    range.good
                ))
            }
            Err(why) => note(&format!("skipped {name}: {why}")),
        }
    }
    if built.len() < 2 {
        return Err("no commit after --good could be built".into());
    }
    Ok(built)
}

/// Holds the builds folder (flock(2), waiting for the process that holds it) until dropped.
fn lock_builds(builds: &Path) -> Result<std::fs::File, String> {
    use std::os::fd::AsRawFd;
    let path = builds.join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("cannot lock {}: {e}", path.display()));
    }
    Ok(file)
}

/// `sh -c <build>` for the worktree `tree`. A commit's build is trusted code: it runs as the
/// caller, with the caller's tools (compilers, `~/.cargo`) and network. Where bubblewrap is
/// installed it runs in a mount namespace of its own in which the owner's key and the bisect's
/// own records (the folder above `builds/`, but for this worktree) are out of sight, so a
/// hostile commit can neither read the key that seals runs nor rewrite the steps' journals.
fn build_command(build: &str, tree: &Path) -> Command {
    let bwrap = crate::engine::sandbox::bubblewrap();
    let records = tree.parent().and_then(Path::parent);
    let (Some(bwrap), Some(records)) = (bwrap, records) else {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(build);
        return sh;
    };
    let mut cmd = Command::new(bwrap);
    cmd.args(["--unshare-user-try", "--unshare-ipc", "--die-with-parent"])
        .args(["--bind", "/", "/", "--dev-bind", "/dev", "/dev"]);
    if let Some(key) = crate::proof::key_path().filter(|k| k.exists()) {
        cmd.arg("--ro-bind").arg("/dev/null").arg(key);
    }
    cmd.arg("--tmpfs").arg(records);
    cmd.arg("--bind").arg(tree).arg(tree);
    cmd.arg("--chdir").arg(tree);
    cmd.args(["sh", "-c", build]);
    cmd
}

/// Checks out and builds one commit in `tree`; its program, and whether it was built before.
fn build_one(range: &GitRange, commit: &str, tree: &Path) -> Result<(PathBuf, bool), String> {
    let program = tree.join(&range.program);
    if tree.join(BUILT).exists() && program.is_file() {
        return Ok((program, true));
    }
    if tree.exists() {
        // A build cut off before it finished: checked out and built again.
        let _ = std::fs::remove_dir_all(tree);
        let _ = git(&range.repo, &["worktree", "prune"]);
    }
    let target = tree.to_string_lossy().into_owned();
    git(
        &range.repo,
        &[
            "worktree", "add", "--detach", "--force", "--quiet", &target, commit,
        ],
    )?;
    let log_path = tree.join("arbiter-build.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let status = build_command(&range.build, tree)
        .current_dir(tree)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .status()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if !status.success() {
        return Err(format!(
            "the build failed ({status}; its output is in {})",
            log_path.display()
        ));
    }
    if !program.is_file() {
        return Err(format!("the build left no {}", range.program.display()));
    }
    std::fs::write(tree.join(BUILT), program.to_string_lossy().as_bytes())
        .map_err(|e| format!("{}: {e}", tree.display()))?;
    Ok((program, false))
}
