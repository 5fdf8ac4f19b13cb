//! The system calls a sandboxed engine is refused, modelled on what Docker's default profile and
//! nsjail deny: nothing an engine needs to search, and everything that reaches past its sandbox
//! (mounts, tracing, kernel keys and modules, BPF, performance counters, io_uring, userfaultfd,
//! new namespaces) or lets two sandboxes talk (file locks on files both can read, such as
//! `/etc/passwd`: a lock is visible to every process that opens the file).
//!
//! bubblewrap loads the filters (`--add-seccomp-fd`) after it has built the sandbox and just
//! before it runs the engine, so bubblewrap itself may still mount and unshare.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Refused with `EPERM` whatever their arguments.
const DENIED: &[libc::c_long] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_userfaultfd,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_syslog,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fanotify_init,
    libc::SYS_fanotify_mark,
    // Two sandboxes that both read a file (`/etc/os-release`) would see each other open it.
    #[cfg(target_arch = "x86_64")]
    libc::SYS_inotify_init,
    libc::SYS_inotify_init1,
    libc::SYS_inotify_add_watch,
    libc::SYS_vhangup,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// The terminal requests that push input into a terminal (both processors' numbers; the libc
/// crate names them on neither).
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// The `fcntl` commands that take, test or wait for a record lock.
const LOCK_COMMANDS: &[libc::c_int] = &[
    libc::F_GETLK,
    libc::F_SETLK,
    libc::F_SETLKW,
    libc::F_OFD_GETLK,
    libc::F_OFD_SETLK,
    libc::F_OFD_SETLKW,
];

fn arch() -> Option<TargetArch> {
    if cfg!(target_arch = "x86_64") {
        Some(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(TargetArch::aarch64)
    } else {
        None
    }
}

/// The filters for one engine, compiled; `None` on a processor seccompiler does not know
/// (the banner then says the engines run without one). `locks`: the engine may take file locks.
pub fn filters(locks: bool) -> Option<Vec<BpfProgram>> {
    let arch = arch()?;
    let eq = |arg: u8, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .expect("a valid condition")
    };
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&n| (n, Vec::new())).collect();
    // A new user namespace through clone(2) (its flags are the first argument on both
    // processors); threads and forks go through.
    let new_user = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
        libc::CLONE_NEWUSER as u64,
    )
    .expect("a valid condition");
    denied.insert(
        libc::SYS_clone,
        vec![SeccompRule::new(vec![new_user]).expect("a rule")],
    );
    // Typing into the terminal arbiter runs in, or into the console: what bubblewrap's
    // `--new-session` guards against, which would also make each engine a scheduling group of
    // its own (an autogroup), woken late on a busy machine.
    denied.insert(
        libc::SYS_ioctl,
        [TIOCSTI, TIOCLINUX]
            .iter()
            .map(|&cmd| SeccompRule::new(vec![eq(1, cmd)]).expect("a rule"))
            .collect(),
    );
    if !locks {
        denied.insert(libc::SYS_flock, Vec::new());
        let rules = LOCK_COMMANDS
            .iter()
            .map(|&cmd| SeccompRule::new(vec![eq(1, cmd as u64)]).expect("a rule"))
            .collect();
        denied.insert(libc::SYS_fcntl, rules);
    }
    let perm = SeccompFilter::new(
        denied,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .ok()?;
    // clone3 passes its flags in memory a filter cannot read: it is refused as unknown, so that
    // the C library falls back to clone(2), which the first filter reads.
    let clone3: BTreeMap<i64, Vec<SeccompRule>> =
        [(libc::SYS_clone3, Vec::new())].into_iter().collect();
    let nosys = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .ok()?;
    let mut programs: Vec<BpfProgram> = vec![perm.try_into().ok()?, nosys.try_into().ok()?];
    programs.extend(x32_filter());
    Some(programs)
}

/// On x86_64, every call numbered with the x32 bit is refused: the filters above compare
/// exact numbers, and on a kernel with x32 enabled `SYS_mount | 0x40000000` would pass them.
/// seccompiler matches numbers only one by one, so this filter is written as BPF directly.
fn x32_filter() -> Option<BpfProgram> {
    if !cfg!(target_arch = "x86_64") {
        return None;
    }
    use seccompiler::sock_filter;
    const LOAD_WORD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JUMP_IF_EQUAL: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JUMP_IF_AT_LEAST: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    const ARCH_OFFSET: u32 = 4;
    const NR_OFFSET: u32 = 0;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO: u32 = 0x0005_0000;
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    Some(vec![
        op(LOAD_WORD, 0, 0, ARCH_OFFSET),
        // Another processor's calls (i386's `int 0x80`) are the first filter's to judge.
        op(JUMP_IF_EQUAL, 1, 0, AUDIT_ARCH_X86_64),
        op(RETURN, 0, 0, ALLOW),
        op(LOAD_WORD, 0, 0, NR_OFFSET),
        op(JUMP_IF_AT_LEAST, 0, 1, X32_SYSCALL_BIT),
        op(RETURN, 0, 0, ERRNO | libc::EPERM as u32),
        op(RETURN, 0, 0, ALLOW),
    ])
}

/// A filter as bubblewrap reads it: the raw `struct sock_filter` array, in a memory file whose
/// descriptor is closed on exec except in the one child that is given it.
pub fn memory_file(program: &BpfProgram) -> std::io::Result<OwnedFd> {
    // SAFETY: memfd_create(2) with a NUL-terminated name; the descriptor is owned from here.
    let fd = unsafe { libc::memfd_create(c"arbiter-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just made and is owned by nothing else.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for op in program {
        bytes.extend_from_slice(&op.code.to_ne_bytes());
        bytes.push(op.jt);
        bytes.push(op.jf);
        bytes.extend_from_slice(&op.k.to_ne_bytes());
    }
    let mut written = 0;
    while written < bytes.len() {
        // SAFETY: writes from a live slice to the descriptor owned above.
        let n = unsafe {
            libc::write(
                file.as_raw_fd(),
                bytes[written..].as_ptr().cast(),
                bytes.len() - written,
            )
        };
        if n <= 0 {
            return Err(std::io::Error::last_os_error());
        }
        written += n as usize;
    }
    // SAFETY: lseek(2) on the descriptor owned above.
    if unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_SET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_with_and_without_locks() {
        let strict = filters(false).expect("x86_64 or aarch64");
        let lenient = filters(true).expect("x86_64 or aarch64");
        assert_eq!(
            strict.len(),
            if cfg!(target_arch = "x86_64") { 3 } else { 2 }
        );
        assert!(
            strict[0].len() > lenient[0].len(),
            "the lock rules add to the first filter"
        );
        let file = memory_file(&strict[0]).unwrap();
        let size = std::fs::metadata(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .unwrap()
            .len();
        assert_eq!(size as usize, strict[0].len() * 8);
    }
}
