//! A run moves arbiter's code onto huge pages before it starts its engines (core/src/huge_text.rs):
//! the real `arbiter` binary, looked at through `/proc/<pid>/smaps` while it waits for an
//! engine that never answers its handshake.

mod common;

use common::{bundled_engine, scratch, script};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One executable mapping of a process: its `/proc/<pid>/smaps` header line and how much of it
/// is on anonymous huge pages.
#[derive(Debug)]
struct CodeMapping {
    header: String,
    bytes: u64,
    huge_kb: u64,
}

fn code_mappings(pid: u32) -> Vec<CodeMapping> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut found: Vec<CodeMapping> = Vec::new();
    let mut in_code = false;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16))
            else {
                continue;
            };
            in_code = words.next() == Some("r-xp");
            if in_code {
                found.push(CodeMapping {
                    header: line.to_string(),
                    bytes: hi - lo,
                    huge_kb: 0,
                });
            }
        } else if in_code && first == "AnonHugePages:" {
            if let Some(m) = found.last_mut() {
                m.huge_kb = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            }
        }
    }
    found
}

/// Whether a mapping's header names a file (the loader's mapping of the binary) or nothing
/// (anonymous memory).
fn names_a_file(m: &CodeMapping) -> bool {
    m.header.split_whitespace().nth(5).is_some()
}

/// Starts a match whose first engine never answers, so that arbiter stays in its handshake.
fn waiting_run(name: &str, env: &[(&str, &str)]) -> (Child, common::Scratch) {
    let dir = scratch("huge-text", name);
    let silent = script(&dir, "silent.sh", "#!/bin/sh\nexec sleep 60\n", 0o755);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(["match", "--game", "leiserchess", "--games", "2", "--engine"])
        .arg(format!("cmd={silent}"))
        .args(["name=silent", "--engine"])
        .arg(format!("cmd={}", bundled_engine()))
        .args(["name=bundled", "--each", "handshake=30", "depth=1"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.spawn().expect("arbiter starts"), dir)
}

/// The code mappings once arbiter has started an engine (its keeper is a child of it by then).
fn code_once_started(child: &Child) -> Vec<CodeMapping> {
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        // Any of its threads may have started it.
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten();
        let started = tasks.flatten().any(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .is_ok_and(|c| !c.trim().is_empty())
        });
        if started {
            return code_mappings(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("arbiter started no engine within 20 s");
}

#[test]
fn a_run_has_its_code_on_huge_pages_and_not_in_the_binarys_mapping() {
    let (mut child, _dir) = waiting_run("on", &[]);
    let code = code_once_started(&child);
    let _ = child.kill();
    let _ = child.wait();
    let in_binary = code.iter().any(|m| m.header.ends_with("/arbiter"));
    if !arbiter::huge_text::huge_pages_on() {
        // Nothing to gain: the code stays where the loader put it.
        eprintln!("transparent huge pages are off on this machine: the code is not moved");
        assert!(in_binary, "{code:#?}");
        return;
    }
    assert!(
        !in_binary,
        "the binary's own code mapping is still there: {code:#?}"
    );
    let moved = code
        .iter()
        .find(|m| !names_a_file(m) && m.bytes >= 2 << 20)
        .unwrap_or_else(|| panic!("no anonymous code mapping of 2 MiB or more: {code:#?}"));
    assert!(moved.huge_kb >= 2048, "not on huge pages: {moved:#?}");
}

#[test]
fn arbiter_huge_text_off_leaves_the_code_where_the_loader_put_it() {
    let (mut child, _dir) = waiting_run("off", &[("ARBITER_HUGE_TEXT", "off")]);
    let code = code_once_started(&child);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        code.iter().any(|m| m.header.ends_with("/arbiter")),
        "{code:#?}"
    );
    assert!(code.iter().all(|m| m.huge_kb == 0), "{code:#?}");
}
