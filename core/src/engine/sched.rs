//! The referee's place in the scheduler when it shares a CPU with its engines (`--affinity`).
//!
//! A referee thread woken by every line an engine writes preempts the engine each time: a
//! context switch per search report, most of what the referee costs. As a `SCHED_BATCH` thread
//! it is still woken, but does not preempt: the engine runs on until it waits for input, which
//! it does right after its reply, and the referee then reads the whole reply at once. Its share
//! of the CPU is unchanged (batch threads have normal weight); only wake-up preemption goes.
//! Engines must not inherit the policy, so each is started with the referee's own.
//!
//! Here too are the CPU masks of threads and process trees (which CPUs a thread may use, a
//! game's thread pinned, a running engine's tree moved onto its game's CPU): the engine's
//! groups and the tournament's CPU claims both build on them.

use super::procfs::{children, threads};
use std::cell::Cell;

thread_local! {
    /// The policy this thread had before it became a batch thread, if it did.
    static BEFORE: Cell<Option<libc::c_int>> = const { Cell::new(None) };
}

/// Makes the calling thread a batch thread, if it runs under the normal policy (a user's own
/// choice, such as `chrt --idle`, is kept). Whether it now is one.
pub fn referee_yields_to_engines() -> bool {
    // SAFETY: sched_getscheduler and sched_setscheduler on the calling thread (pid 0), with a
    // parameter that outlives the call.
    unsafe {
        let policy = libc::sched_getscheduler(0);
        if policy != libc::SCHED_OTHER {
            return policy == libc::SCHED_BATCH;
        }
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) != 0 {
            return false;
        }
    }
    BEFORE.with(|b| b.set(Some(libc::SCHED_OTHER)));
    true
}

/// Undoes `referee_yields_to_engines`: the referee no longer shares its CPU with its engines
/// alone, and a batch thread would then wait behind every other task there.
pub fn referee_preempts_again() {
    if let Some(policy) = BEFORE.with(Cell::take) {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler on the calling thread with a parameter on the stack.
        unsafe { libc::sched_setscheduler(0, policy, &param) };
    }
}

/// The policy an engine started from this thread is to run under, when it is not the thread's.
pub(super) fn engine_policy() -> Option<libc::c_int> {
    BEFORE.with(Cell::get)
}

/// Sets the calling process's policy; for `pre_exec`, between `fork` and `exec`.
///
/// # Safety
/// Makes one system call, as `pre_exec` requires; the parameter lives on the stack.
pub(super) unsafe fn restore(policy: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    if libc::sched_setscheduler(0, policy, &param) == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the set it is given; CPU_ISSET only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// Pins the calling thread (and the processes it starts from now on) to `cpu`. A refusal (a
/// CPU taken away meanwhile) leaves the thread where it was: pinning only ever saves time.
pub fn pin_current_thread(cpu: usize) -> bool {
    // SAFETY: the set is built locally and passed by pointer with its size; pid 0 is this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Moves a running process tree (`root` and every descendant, all their threads) onto the CPUs
/// of the calling thread, as if the calling thread had started it: the start-up check's engines,
/// started unpinned, then play pinned instead of being started again. Threads the tree makes
/// later inherit the mask of the thread that makes them. Returns how many threads were moved.
pub fn bring_tree_here(root: u32) -> usize {
    // SAFETY: sched_getaffinity fills the set it is given; sched_setaffinity only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(0, size, &mut set) != 0 {
            return 0;
        }
        let mut moved = 0;
        let mut pending = vec![root];
        let mut seen = 0;
        while let Some(pid) = pending.pop() {
            seen += 1;
            if seen > MAX_TREE {
                break;
            }
            for tid in threads(pid) {
                if libc::sched_setaffinity(tid as libc::pid_t, size, &set) == 0 {
                    moved += 1;
                }
                // Each thread lists the children it forked.
                pending.extend(children(pid, tid));
            }
        }
        moved
    }
}

/// Lets the calling thread run on every CPU in `cpus` again.
pub fn unpin_current_thread(cpus: &[usize]) -> bool {
    // SAFETY: the set is built locally and passed by pointer with its size; pid 0 is this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Processes a tree may hold before the rest is left where it is.
pub(crate) const MAX_TREE: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_referee_starts_its_engines_under_the_normal_policy() {
        let seen = std::thread::spawn(|| {
            assert_eq!(engine_policy(), None);
            assert!(referee_yields_to_engines());
            // SAFETY: reads this thread's policy.
            let mine = unsafe { libc::sched_getscheduler(0) };
            let policy = engine_policy().expect("the policy to give engines");
            let mut cmd = std::process::Command::new("sh");
            cmd.args(["-c", "cut -d')' -f2 /proc/self/stat"]);
            // SAFETY: restore makes one system call.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || restore(policy));
            }
            let child = cmd.output().unwrap();
            (mine, String::from_utf8(child.stdout).unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(seen.0, libc::SCHED_BATCH);
        // After the name: state is field 3, policy field 41.
        let fields: Vec<&str> = seen.1.split_whitespace().collect();
        assert_eq!(fields[41 - 3], "0", "{}", seen.1);
        assert_eq!(engine_policy(), None, "other threads are left alone");
    }
}
