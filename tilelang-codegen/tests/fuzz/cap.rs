//! The fuzzer's memory cap (issue 38): every allocation of this test process is counted, and
//! one block over [`BLOCK_CAP`] or more than [`LIVE_CAP`] live at once is refused — the process
//! then aborts ("memory allocation of N bytes failed") after naming the seed each thread was
//! running, instead of swapping the machine or dying without a name. A kernel that makes the
//! compiler ask for that much is a bug: compiling one kernel needs a few megabytes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single block the compiler may ask for.
pub const BLOCK_CAP: usize = 256 << 20;
/// The most the whole process (every fuzzing thread) may hold at once.
pub const LIVE_CAP: usize = 4 << 30;

/// The counting allocator (the test binary's `#[global_allocator]`).
pub struct Capped;

static LIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SEED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Records the seed this thread runs now (`None` between mutants), for the report.
pub fn running(seed: Option<u64>) {
    SEED.with(|s| s.set(seed));
}

/// Counts `more` bytes for a block of `block`, unless that breaks a cap: then reports and
/// refuses.
fn admit(block: usize, more: usize) -> bool {
    let live = LIVE.fetch_add(more, Ordering::Relaxed) + more;
    if block <= BLOCK_CAP && live <= LIVE_CAP {
        return true;
    }
    LIVE.fetch_sub(more, Ordering::Relaxed);
    report(block, live);
    false
}

/// Writes the report without allocating (a fixed buffer; stderr is unbuffered).
fn report(size: usize, live: usize) {
    struct Buf([u8; 320], usize);
    impl std::fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let n = s.len().min(self.0.len() - self.1);
            self.0[self.1..self.1 + n].copy_from_slice(&s.as_bytes()[..n]);
            self.1 += n;
            Ok(())
        }
    }
    let mut b = Buf([0; 320], 0);
    let _ = std::fmt::Write::write_fmt(
        &mut b,
        format_args!(
            "\nfuzz: over the memory cap (a block of at most {BLOCK_CAP} bytes, {LIVE_CAP} live): asked for {size} bytes, {live} live, "
        ),
    );
    let _ = match SEED.try_with(Cell::get).ok().flatten() {
        Some(seed) => std::fmt::Write::write_fmt(
            &mut b,
            format_args!("running seed {seed:#018x} (replay: FUZZ_SEED={seed:016x})\n"),
        ),
        None => std::fmt::Write::write_str(&mut b, "between mutants\n"),
    };
    let _ = std::io::stderr().write_all(&b.0[..b.1]);
}

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size(), layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size(), layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !admit(new_size, new_size - old) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        match (p.is_null(), new_size > old) {
            (true, true) => {
                LIVE.fetch_sub(new_size - old, Ordering::Relaxed);
            }
            (false, false) => {
                LIVE.fetch_sub(old - new_size, Ordering::Relaxed);
            }
            _ => {}
        }
        p
    }
}
