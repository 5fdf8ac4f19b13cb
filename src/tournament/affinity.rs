//! CPU pinning for `--affinity`: which CPUs the run may use, and pinning the calling thread.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_only_on_its_cpu() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        let seen = std::thread::spawn(move || {
            assert!(pin_current_thread(last));
            allowed_cpus()
        })
        .join()
        .unwrap();
        assert_eq!(seen, vec![last]);
        assert_eq!(allowed_cpus(), cpus, "other threads keep their mask");
    }
}
