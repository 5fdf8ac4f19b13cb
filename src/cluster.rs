//! Runs split over a cluster: `arbiter merge` joins the shard folders, `arbiter slurm` prints
//! the job script that plays the shards as a Slurm job array and merges them after.

use super::exit::Exit;
use super::runargs::RunJob;
use super::Failure;
use arbiter::report::counted;
use arbiter::run::merge;
use arbiter::tournament::merge::MergeError;
use std::path::{Path, PathBuf};

pub fn run_merge(out: &Path, dirs: &[PathBuf], quiet: bool) -> Result<Exit, Failure> {
    let merged = merge(out, dirs).map_err(|e| match e {
        e @ MergeError::Output { .. } => Failure {
            code: Exit::Runtime,
            message: e.to_string(),
        },
        e => Failure::bad_input(e.to_string()),
    })?;
    let shards: Vec<String> = merged.shards.iter().map(u64::to_string).collect();
    say!(
        "Merged {} from {} (shards {}) into {}; {} dropped.",
        counted(merged.games, "game", "games"),
        // The merged run's own journal (games played into it with --resume) is read too, but
        // it is no shard folder.
        counted(
            merged
                .folders
                .iter()
                .filter(|f| f.canonicalize().ok() != out.canonicalize().ok())
                .count() as u64,
            "shard folder",
            "shard folders"
        ),
        shards.join(", "),
        out.display(),
        counted(merged.duplicates, "duplicate entry", "duplicate entries")
    );
    let spec = &merged.spec;
    arbiter::tournament::launch::write_copies(out, spec).map_err(|e| Failure {
        code: Exit::Runtime,
        message: e.to_string(),
    })?;
    let names: Vec<String> = spec.engines.iter().map(|e| e.name.clone()).collect();
    if !quiet {
        super::summary::print(&merged.outcome, &names, &spec.rating_options(), spec.sprt);
    }
    say!(
        "Report: {}",
        out.join(arbiter::report::files::REPORT_HTML).display()
    );
    let decided = merged.outcome.decision.is_some();
    if merged.missing.is_empty() {
        return Ok(Exit::Success);
    }
    let shown: Vec<String> = merged
        .missing
        .iter()
        .take(20)
        .map(|i| (i + 1).to_string())
        .collect();
    let more = merged.missing.len().saturating_sub(20);
    let list = format!(
        "{}{}",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    if decided {
        say!(
            "{} games of the schedule were not played: the SPRT had decided.",
            merged.missing.len()
        );
        return Ok(Exit::Success);
    }
    eprintln!(
        "warning: {} games of the schedule are in no shard folder: {list}. Run their shards \
         again (a shard continues where it stopped) and merge again.",
        merged.missing.len()
    );
    Ok(Exit::Incomplete)
}

/// What the job script does once every array task has ended.
#[derive(Clone, Copy, PartialEq)]
pub enum AfterTasks {
    /// A job merges the tasks' folders into the run's (a run).
    Merge,
    /// A job resumes the bisect on one machine, which merges each step's folders and writes
    /// the bisect's files.
    ResumeBisect,
    /// Nothing: the tasks write the files themselves (a tune).
    Nothing,
}

/// What the job script needs to know besides the run.
pub struct SlurmOptions {
    pub shards: u64,
    pub time: String,
    pub partition: Option<String>,
    pub job_name: Option<String>,
    /// Write the script even where no node of the cluster could run a task.
    pub force: bool,
}

/// A bash script that submits the run as a Slurm job array of `shards` tasks (each a task of the
/// split run, `--shard slurm`, cpus-per-task = the run's concurrency, requeued tasks continue)
/// and the merge as a job that waits for every task, however it ended. Every value from the
/// user is quoted for bash and given to `sbatch` as an argument, never as a `#SBATCH` line or
/// unquoted text: a newline, `;`, `$(...)` or a space in a name or path stays a character.
///
/// The job script for `args` split over `opts.shards` array tasks, then `after`.
pub fn slurm_script(
    job: &RunJob,
    args: &[String],
    opts: &SlurmOptions,
    after: AfterTasks,
) -> Result<String, Failure> {
    let spec = &job.spec;
    check_splittable(job, args)?;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::bad_input(format!("cannot find arbiter's own path: {e}")))?;
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::bad_input(format!("cannot read the working folder: {e}")))?;
    let base = spec
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(spec.name.clone().unwrap_or_default()));
    let base = cwd.join(base);
    if after == AfterTasks::Merge {
        refuse_a_folder_the_tasks_would_refuse(job, &base)?;
    }
    let command = task_command(args);
    let base_text = base.display().to_string();
    let common = sbatch_flags(opts, &spec.game);
    let exe = quote(&exe.display().to_string());
    let (what, after) = after_tasks(after, opts, &common, &exe, &cwd, &base_text);
    Ok(format!(
        r#"#!/bin/bash
# Made by: arbiter slurm --shards {shards}{slurm_flags} -- {shown}
# Submit with: bash <this file>. It submits {shards} array tasks sharing the run (each claims
# game pairs in order), {what} A requeued or resubmitted task continues where it
# stopped; the others play what a task that died left, after its lease.
set -euo pipefail
cd {cwd}
base={base}
mkdir -p "$base"
array=$(sbatch --parsable {common} --array=1-{shards} --cpus-per-task={cpus} --requeue   --open-mode=append --output="$base/slurm-%A_%a.out" <<'ARBITER_TASK'
#!/bin/bash
cd {cwd}
exec {exe} {command}
ARBITER_TASK
)
array=${{array%%;*}}
{after}
"#,
        shards = opts.shards,
        slurm_flags = slurm_flags(opts),
        shown = args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "),
        base = quote(&base_text),
        cwd = quote(&cwd.display().to_string()),
        cpus = spec.concurrency,
        command = command.join(" "),
    ))
}

/// What follows the array tasks, said in the script's comment and done after them: the merge
/// (or a bisect's `--resume`) once every task has ended, or nothing for a tune.
fn after_tasks(
    after: AfterTasks,
    opts: &SlurmOptions,
    common: &str,
    exe: &str,
    cwd: &Path,
    base_text: &str,
) -> (String, String) {
    let merge_command = match after {
        AfterTasks::ResumeBisect => format!(
            "cd {} && {exe} bisect --quiet --resume {}",
            quote(&cwd.display().to_string()),
            quote(base_text)
        ),
        _ => format!(
            "cd {} && {exe} merge {} {}",
            quote(&cwd.display().to_string()),
            quote(base_text),
            quote(base_text)
        ),
    };
    if after != AfterTasks::Nothing {
        (
            "then the merge, which waits for every task (afterany) and writes the\n# run's report \
                into the run's folder."
                .to_string(),
            format!(
                "merge=$(sbatch --parsable {common} \
                    --dependency=afterany:\"$array\"   --output=\"$base/slurm-merge-%j.out\" \
                    --wrap {})\necho \"submitted array job $array ({} tasks) and merge job \
                    $merge\"",
                quote(&merge_command),
                opts.shards
            ),
        )
    } else {
        (
            "each writes the tune's files into its folder once\n# every pair is in.".to_string(),
            format!(
                "echo \"submitted array job $array ({} tasks)\"",
                opts.shards
            ),
        )
    }
}

/// Refuses a script whose every task would be refused: an `--out` folder that holds another
/// run (a split run with other settings, or a run of one machine), or a folder an earlier
/// build sealed with its key inside, which must be adopted first.
fn refuse_a_folder_the_tasks_would_refuse(job: &RunJob, base: &Path) -> Result<(), Failure> {
    use arbiter::proof::KEY_FILE;
    use arbiter::tournament::{claims, journal::JOURNAL_FILE, spec};
    let refused = |why: String| Failure::bad_input(format!("{}: {why}", base.display()));
    let mut folders = vec![base.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(base) {
        folders.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    if folders.iter().any(|d| d.join(KEY_FILE).is_file()) {
        return Err(refused(format!(
            "an earlier arbiter sealed this folder with its key inside, and every task would \
             refuse it; adopt it first:\n  arbiter adopt {}",
            base.display()
        )));
    }
    if base.join(JOURNAL_FILE).is_file() {
        return Err(refused(
            "holds a run of one machine, which the tasks of a split run would not join: give \
             the split run another --out, or continue that run with --resume"
                .into(),
        ));
    }
    let identity = base.join(claims::CLAIMS_DIR).join(claims::IDENTITY_FILE);
    let Ok(theirs) = std::fs::read_to_string(&identity) else {
        return Ok(());
    };
    // What each task adds when it starts (the programs' and the book's hashes, the default
    // book's path) is left out on both sides: the tasks check those themselves.
    let comparable = |mut run: spec::RunSpec| {
        run.contents = None;
        let _ = arbiter::tournament::launch::record_default_book(&mut run);
        run.identity()
    };
    if let Ok(value) = serde_json::from_str(&theirs) {
        spec::check_folder_format(&value, &identity).map_err(Failure::bad_input)?;
    }
    let Ok(theirs) = serde_json::from_str::<spec::RunSpec>(&theirs) else {
        return Ok(());
    };
    // Each task plays the book in the order the run began with (see `RunSpec::join_order_of`).
    let mut mine = job.spec.clone();
    mine.shuffle = theirs.shuffle;
    spec::same_identity(&comparable(theirs), &comparable(mine)).map_err(|how| {
        refused(format!(
            "holds a split run with other settings ({how}), and every task would refuse it: \
             give this run another --out or --name"
        ))
    })
}

/// What each array task runs: the run's command line as a task of a split run, quiet.
fn task_command(args: &[String]) -> Vec<String> {
    let mut command: Vec<String> = args.iter().map(|a| quote(a)).collect();
    command.extend(["--shard".into(), "slurm".into()]);
    if !args.iter().any(|a| a == "--quiet") {
        // A task's log is a file: the final result, not a progress line per game.
        command.push("--quiet".into());
    }
    command
}

/// The `sbatch` flags of both jobs: time, name and partition.
fn sbatch_flags(opts: &SlurmOptions, game: &str) -> String {
    let name = opts
        .job_name
        .clone()
        .unwrap_or_else(|| format!("arbiter-{game}"));
    let mut common = vec![
        format!("--time={}", quote(&opts.time)),
        format!("--job-name={}", quote(&name)),
    ];
    if let Some(p) = &opts.partition {
        common.push(format!("--partition={}", quote(p)));
    }
    common.join(" ")
}

/// The script's own flags besides `--shards`, as the "Made by" line repeats them.
fn slurm_flags(opts: &SlurmOptions) -> String {
    let mut flags = format!(" --time {}", quote(&opts.time));
    if let Some(p) = &opts.partition {
        flags.push_str(&format!(" --partition {}", quote(p)));
    }
    if let Some(j) = &opts.job_name {
        flags.push_str(&format!(" --job-name {}", quote(j)));
    }
    if opts.force {
        flags.push_str(" --force");
    }
    flags
}

/// Refuses a script no node of the cluster (of the partition, when one is named) could run: a
/// task asks for the run's concurrency in CPUs (`--cpus-per-task`), and Slurm accepts an array
/// no node can hold and leaves it pending for ever. Asked of `sinfo` where it is installed;
/// nothing is said where it is not. Where it does not answer in `SINFO_PATIENCE` (a controller
/// that is down: `sinfo` retries it for ten seconds), a note says the nodes were not checked.
/// `--force` writes the script all the same (a cluster whose larger nodes are down now), with a
/// warning.
pub fn refuse_if_no_node_fits(
    cpus: usize,
    partition: Option<&str>,
    force: bool,
) -> Result<(), Failure> {
    let mut sinfo = std::process::Command::new("sinfo");
    sinfo.args(["--noheader", "--format=%c"]);
    if let Some(p) = partition {
        sinfo.arg(format!("--partition={p}"));
    }
    let out = match answer_within(sinfo, SINFO_PATIENCE) {
        Answer::Output(out) => out,
        Answer::NotStarted => return Ok(()),
        Answer::Late => {
            eprintln!(
                "note: sinfo did not answer within {} s: the nodes' CPUs were not checked \
                 against --concurrency",
                SINFO_PATIENCE.as_secs()
            );
            return Ok(());
        }
    };
    let most = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches('+').parse::<usize>().ok())
        .max();
    let Some(most) = most.filter(|&most| out.status.success() && most < cpus) else {
        return Ok(());
    };
    let why = format!(
        "each task asks for {cpus} CPUs (--concurrency {cpus}), and the largest node {} has \
         {most}: Slurm would accept the array and never run it. Give --concurrency {most} or \
         less",
        partition.map_or("here".to_string(), |p| format!("of partition {p}"))
    );
    match force {
        true => {
            eprintln!("warning: {why} (written anyway, as --force asks)");
            Ok(())
        }
        false => Err(Failure::bad_input(format!(
            "arbiter slurm: {why}, or --force to write the script all the same"
        ))),
    }
}

/// How long `sinfo` is given to answer: a controller that answers at all does so well within it.
const SINFO_PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);

/// What a helper program gave in the time it was given.
enum Answer {
    Output(std::process::Output),
    /// It is not installed, or could not be started.
    NotStarted,
    /// It was killed for taking longer.
    Late,
}

fn answer_within(cmd: std::process::Command, patience: std::time::Duration) -> Answer {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Answer::NotStarted;
    };
    runtime.block_on(async {
        let Ok(child) = cmd.spawn() else {
            return Answer::NotStarted;
        };
        match tokio::time::timeout(patience, child.wait_with_output()).await {
            Ok(Ok(out)) => Answer::Output(out),
            Ok(Err(_)) => Answer::NotStarted,
            Err(_) => Answer::Late,
        }
    })
}

fn check_splittable(job: &RunJob, args: &[String]) -> Result<(), Failure> {
    if job.spec.out.is_none() && job.spec.name.is_none() {
        return Err(Failure::bad_input(
            "arbiter slurm: give the run --out <folder> (on the cluster's shared file system) or \
             --name, so that every task writes into one run folder",
        ));
    }
    if job.spec.shard.is_some() || args.iter().any(|a| a.starts_with("--shard")) {
        return Err(Failure::bad_input(
            "arbiter slurm: leave --shard and --shards out; each array task takes its place from \
                Slurm",
        ));
    }
    Ok(())
}

/// A word for bash, quoted only when it needs to be: plain words as they are, control
/// characters (a newline would end a comment or a line) as `$'...'` escapes, anything else in
/// single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+:,@%".contains(c));
    if plain {
        return word.to_string();
    }
    if word.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() && (c as u32) < 0x80 => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}
