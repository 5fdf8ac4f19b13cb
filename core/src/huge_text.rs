//! Moves arbiter's own machine code and read-only data onto 2 MiB pages at the start of a run.
//!
//! Between two moves an engine's search evicts everything the referee had in the caches and the
//! TLB, so each ply the referee walks the page tables again for every 4 KiB page of code and
//! tables it touches: 40 – 120 ns a page besides its cache line on the shared machines, measured
//! with a relay that read one byte from each of 64 pages a ply. On 2 MiB pages the whole of
//! arbiter's code and tables takes three TLB entries.
//!
//! The kernel backs only anonymous memory with huge pages here (file-backed text would need
//! `CONFIG_READ_ONLY_THP_FOR_FS`), so each read-only segment of the executable is copied into
//! anonymous memory advised `MADV_HUGEPAGE` and moved over the original with `mremap`, which
//! replaces the mapping in one step: code running from it, this function included, finds the
//! same bytes before and after. The build links the `arbiter` binary with its segments 2 MiB
//! apart (`build.rs`), so that they start on a huge page's boundary.
//!
//! The move costs about 1.5 ms of CPU once per process and is skipped where the kernel's
//! transparent huge pages are off (it would buy nothing). Profilers that read symbols through
//! `/proc/<pid>/maps` (perf) see the moved code as anonymous memory: set `ARBITER_HUGE_TEXT=off`
//! to keep it where the loader put it.

use std::ffi::c_void;

const HUGE: usize = 2 << 20;
const PAGE: usize = 4096;

/// One loaded segment of the executable, page-aligned: `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    start: usize,
    end: usize,
    prot: libc::c_int,
}

/// What [`move_to_huge_pages`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Bytes of read-only segments now in anonymous memory advised for huge pages.
    pub bytes: usize,
    /// Why a segment was left where it was, if one was.
    pub refused: Option<String>,
}

/// Moves the executable's read-only segments (code, constants, tables) onto memory the kernel
/// may back with huge pages, unless `ARBITER_HUGE_TEXT=off` or the kernel has none to give.
/// Call it once, early: it is safe with other threads running, but they would pay for the
/// copy's cache misses.
pub fn move_to_huge_pages() -> Moved {
    let refused = |why: &str| Moved {
        bytes: 0,
        refused: Some(why.to_string()),
    };
    if std::env::var("ARBITER_HUGE_TEXT").is_ok_and(|v| v == "off" || v == "0") {
        return refused("ARBITER_HUGE_TEXT=off");
    }
    if !huge_pages_on() {
        return refused("transparent huge pages are off");
    }
    move_segments()
}

/// The move itself, whatever the kernel's setting (without huge pages it lands on small ones).
fn move_segments() -> Moved {
    let mut moved = Moved::default();
    let segments = own_segments();
    for (i, seg) in segments.iter().enumerate() {
        if seg.prot & libc::PROT_WRITE != 0 {
            continue;
        }
        // Up to the next huge page boundary where nothing else is mapped: the segment's last
        // part then fills a huge page too instead of staying on small ones.
        let next = segments.get(i + 1).map_or(usize::MAX, |n| n.start);
        let end = claim_gap(seg.end, round_up(seg.end, HUGE).min(next));
        // SAFETY: `seg` is a mapped, readable segment of this executable, `end` extends it only
        // over memory `claim_gap` just mapped for it.
        match unsafe { move_segment(seg, end) } {
            Ok(()) => moved.bytes += end - seg.start,
            Err(e) => {
                if end > seg.end {
                    // SAFETY: unmaps only the reservation `claim_gap` made.
                    unsafe { libc::munmap(seg.end as *mut c_void, end - seg.end) };
                }
                moved.refused = Some(e);
            }
        }
    }
    moved
}

/// Whether the kernel gives huge pages to memory advised for them (`always` or `madvise`).
pub fn huge_pages_on() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|setting| setting.contains("[always]") || setting.contains("[madvise]"))
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

fn round_down(x: usize, to: usize) -> usize {
    x / to * to
}

/// The executable's loaded segments, in address order, each widened to whole pages.
fn own_segments() -> Vec<Segment> {
    unsafe extern "C" fn first_object(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid info for the call, and `data` is the Vec below.
        let (info, found) = unsafe { (&*info, &mut *data.cast::<Vec<Segment>>()) };
        // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers while the object is loaded.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
        for h in headers.iter().filter(|h| h.p_type == libc::PT_LOAD) {
            let start = info.dlpi_addr as usize + h.p_vaddr as usize;
            let flag = |f: u32, p: libc::c_int| if h.p_flags & f != 0 { p } else { 0 };
            found.push(Segment {
                start: round_down(start, PAGE),
                end: round_up(start + h.p_memsz as usize, PAGE),
                prot: flag(libc::PF_R, libc::PROT_READ)
                    | flag(libc::PF_W, libc::PROT_WRITE)
                    | flag(libc::PF_X, libc::PROT_EXEC),
            });
        }
        // The executable comes first; the shared libraries are not ours to move.
        1
    }
    let mut found: Vec<Segment> = Vec::new();
    // SAFETY: the callback only reads what the loader hands it and writes to `found`.
    unsafe { libc::dl_iterate_phdr(Some(first_object), (&mut found as *mut Vec<Segment>).cast()) };
    found.sort_by_key(|s| s.start);
    found
}

/// Maps `[from, to)` if nothing is mapped there and returns `to`; else returns `from`.
fn claim_gap(from: usize, to: usize) -> usize {
    if to <= from {
        return from;
    }
    // SAFETY: MAP_FIXED_NOREPLACE maps nothing over an existing mapping.
    let got = unsafe {
        libc::mmap(
            from as *mut c_void,
            to - from,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if got == libc::MAP_FAILED {
        return from;
    }
    if got as usize != from {
        // An old kernel without MAP_FIXED_NOREPLACE takes the address as a hint only.
        // SAFETY: unmaps the mapping just made elsewhere.
        unsafe { libc::munmap(got, to - from) };
        return from;
    }
    to
}

/// Copies `seg` (and the claimed memory after it, up to `end`) into huge-page memory and moves
/// that over it.
///
/// # Safety
/// `seg` must be a mapped, readable segment and `[seg.end, end)` memory this process owns.
unsafe fn move_segment(seg: &Segment, end: usize) -> Result<(), String> {
    let len = end - seg.start;
    let fail = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // The copy must sit at the same offset within a huge page as the segment, or the moved
    // huge pages would have to be split.
    let room = len + HUGE;
    // SAFETY: a fresh private anonymous mapping.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            room,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return Err(fail("mmap"));
    }
    let raw = raw as usize;
    let mut copy = round_up(raw, HUGE) + seg.start % HUGE;
    if copy + len > raw + room {
        copy -= HUGE;
    }
    let unmap_rest = || {
        // SAFETY: the parts of the fresh mapping outside the copy.
        unsafe {
            if copy > raw {
                libc::munmap(raw as *mut c_void, copy - raw);
            }
            if raw + room > copy + len {
                libc::munmap((copy + len) as *mut c_void, raw + room - (copy + len));
            }
        }
    };
    unmap_rest();
    // SAFETY: `copy` is `len` bytes of the mapping above; the segment is readable for its
    // length; the two do not overlap.
    unsafe {
        // Refused where the kernel has no huge pages: the move still works, on small pages.
        libc::madvise(copy as *mut c_void, len, libc::MADV_HUGEPAGE);
        std::ptr::copy_nonoverlapping(seg.start as *const u8, copy as *mut u8, seg.end - seg.start);
    }
    // SAFETY: the copy's own pages.
    let moved = unsafe {
        if libc::mprotect(copy as *mut c_void, len, seg.prot) != 0 {
            Err(fail("mprotect"))
        } else if libc::mremap(
            copy as *mut c_void,
            len,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            seg.start as *mut c_void,
        ) == libc::MAP_FAILED
        {
            Err(fail("mremap"))
        } else {
            Ok(())
        }
    };
    if moved.is_err() {
        // SAFETY: the copy, still where it was made.
        unsafe { libc::munmap(copy as *mut c_void, len) };
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table in the read-only data, read after the move through a path the optimizer cannot
    /// fold.
    static TABLE: [u64; 512] = {
        let mut t = [0u64; 512];
        let mut i = 0;
        while i < 512 {
            t[i] = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            i += 1;
        }
        t
    };

    fn text_checksum(seg: &Segment) -> u64 {
        // SAFETY: a readable segment of this executable.
        let bytes =
            unsafe { std::slice::from_raw_parts(seg.start as *const u8, seg.end - seg.start) };
        bytes.chunks(8).fold(0u64, |acc, c| {
            acc.rotate_left(5) ^ c.iter().fold(0, |a, &b| a << 8 | u64::from(b))
        })
    }

    fn mapping_of(address: usize) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        maps.lines()
            .find(|line| {
                let range = line.split(' ').next().unwrap_or("");
                let (lo, hi) = range.split_once('-').unwrap_or(("0", "0"));
                let lo = usize::from_str_radix(lo, 16).unwrap_or(0);
                let hi = usize::from_str_radix(hi, 16).unwrap_or(0);
                (lo..hi).contains(&address)
            })
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn the_moved_code_and_tables_are_the_same_bytes_in_anonymous_memory() {
        let segments = own_segments();
        let code = *segments
            .iter()
            .find(|s| s.prot & libc::PROT_EXEC != 0)
            .expect("the executable has a code segment");
        let here =
            the_moved_code_and_tables_are_the_same_bytes_in_anonymous_memory as *const () as usize;
        assert!((code.start..code.end).contains(&here));
        let exe = std::fs::read_link("/proc/self/exe").expect("/proc/self/exe");
        let exe_name = exe.file_name().unwrap().to_string_lossy().to_string();
        assert!(mapping_of(here).contains(&exe_name), "{}", mapping_of(here));
        let before = text_checksum(&code);
        let table_before: u64 = std::hint::black_box(&TABLE).iter().fold(0, |a, &x| a ^ x);

        let moved = move_segments();

        assert_eq!(moved.refused, None);
        assert!(moved.bytes >= code.end - code.start, "{moved:?}");
        // Still running from the same addresses, now anonymous memory with the same bytes.
        assert!(
            !mapping_of(here).contains(&exe_name),
            "{}",
            mapping_of(here)
        );
        assert!(mapping_of(here).contains("r-xp"), "{}", mapping_of(here));
        assert_eq!(text_checksum(&code), before);
        let table_after: u64 = std::hint::black_box(&TABLE).iter().fold(0, |a, &x| a ^ x);
        assert_eq!(table_after, table_before);
        assert_eq!(
            std::hint::black_box(&TABLE)[511],
            511u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        );
        // A second call moves it again, harmlessly.
        assert_eq!(move_segments().refused, None);
        assert_eq!(text_checksum(&code), before);
    }
}
