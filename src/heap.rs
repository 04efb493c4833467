//! The wasm builds' heap: talc (in place of dlmalloc: lowering allocates many small
//! strings, and talc is both faster and smaller there), behind the allocation
//! [`budget`](crate::budget), growing the instance's memory geometrically.
//!
//! Why geometric: talc's own wasm source grows the memory by the fewest pages the failed
//! allocation needs, so a heap that reaches 100 MB has grown about 1,500 times, and V8's
//! `memory.grow` costs more the larger the memory already is (0.5–1 ms a page at 100 MB in
//! Node 20; 500 one-page grows took 1.3 ms at 32 MB and 490 ms at 189 MB). Growing by a
//! quarter of the memory (at least 1 MiB) makes that a few dozen grows, and the pages a
//! grow reserves cost nothing until they are touched.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use talc::base::{binning::Binning, Talc, CHUNK_UNIT};
use talc::cell::TalcSyncCell;
use talc::wasm::WasmBinning;

/// A wasm page.
const PAGE: usize = 65_536;
/// The least a grow adds, in pages (1 MiB).
const MIN_PAGES: usize = 16;

/// Memory from `memory.grow`, extending the one heap when the new pages follow it.
#[derive(Debug)]
pub struct Geometric {
    end: Option<NonNull<u8>>,
}

// SAFETY: `acquire` only grows the memory and hands talc pages no one else uses (the
// allocator is the only code that grows this module's memory); it uses no allocator.
#[allow(unsafe_code)]
unsafe impl talc::source::Source for Geometric {
    fn acquire<B: Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        // The chunk, its tag and tail, and the alignment slack, as talc counts them (with
        // room to spare: a grow that is still too small is followed by another).
        let need = layout.size().saturating_add(4 * CHUNK_UNIT).saturating_add(
            if layout.align() > CHUNK_UNIT {
                layout.align()
            } else {
                0
            },
        );
        let need_pages = need.div_ceil(PAGE);
        let want = need_pages
            .max(core::arch::wasm32::memory_size::<0>() / 4)
            .max(MIN_PAGES);
        let prev = match core::arch::wasm32::memory_grow::<0>(want) {
            usize::MAX => match core::arch::wasm32::memory_grow::<0>(need_pages) {
                usize::MAX => return Err(()),
                p => (p, need_pages),
            },
            p => (p, want),
        };
        let base = (prev.0 * PAGE) as *mut u8;
        let bytes = prev.1 * PAGE;
        let new_end = base.wrapping_add(bytes);
        if let Some(old_end) = talc.source.end.take() {
            if old_end.as_ptr() == base {
                // SAFETY: the pages from `old_end` to `new_end` were just grown for talc.
                talc.source.end = Some(unsafe { talc.extend(old_end, new_end) });
                return Ok(());
            }
        }
        // SAFETY: the pages from `base` were just grown and belong to no one else.
        talc.source.end = unsafe { talc.claim(base, bytes) };
        if talc.source.end.is_some() {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// talc over [`Geometric`].
static TALC: TalcSyncCell<Geometric, WasmBinning> = TalcSyncCell::new_wasm(Geometric { end: None });

/// Small blocks, by size class: freed blocks of up to [`SMALL`] bytes are kept on a list per
/// class (16-byte steps) and handed out again without talc. Most of the library's
/// allocations are small and short-lived (map nodes, short strings, vectors of a few
/// items); talc's splitting and merging on each of them cost more than the work they
/// served. A kept block never goes back to talc: each list holds at most what that class
/// once held at its peak.
const SMALL: usize = 512;
/// The size step of the classes.
const STEP: usize = 16;
/// The number of classes.
const CLASSES: usize = SMALL / STEP;

/// The heads of the free lists (a free block's first word points to the next).
struct Lists(core::cell::UnsafeCell<[*mut u8; CLASSES]>);

// SAFETY: the wasm builds are single-threaded (`TalcSyncCell::new_wasm` refuses to build
// otherwise), so the lists are never touched from two threads.
#[allow(unsafe_code)]
unsafe impl Sync for Lists {}

static LISTS: Lists = Lists(core::cell::UnsafeCell::new(
    [core::ptr::null_mut(); CLASSES],
));

/// The class of a layout served from the lists, or `None` for talc's.
fn class(layout: Layout) -> Option<usize> {
    (layout.size() <= SMALL && layout.align() <= 8).then(|| layout.size().saturating_sub(1) / STEP)
}

/// The layout talc allocates a block of class `c` with.
fn class_layout(c: usize) -> Layout {
    // (c + 1) * STEP is at most SMALL and 8 a power of two: the fallback is never taken.
    Layout::from_size_align((c + 1) * STEP, 8).unwrap_or(Layout::new::<[u64; 2]>())
}

/// talc behind the budget and the small-block lists: an allocation the budget refuses fails
/// (a trap the JS glue recovers from) before the memory grows.
struct Budgeted;

#[allow(unsafe_code)]
impl Budgeted {
    /// A block for `layout` (within the budget, checked by the caller). Not inlined: the
    /// allocator's calls sit at thousands of places, and a body at each costs bytes.
    #[inline(never)]
    unsafe fn take(&self, layout: Layout) -> *mut u8 {
        match class(layout) {
            Some(c) => {
                // SAFETY: single-threaded (see `Lists`); a listed block is free, at least
                // `STEP` bytes, 8-aligned, and its first word is the next block (or null).
                let heads = &mut *LISTS.0.get();
                let head = heads[c];
                if head.is_null() {
                    TALC.alloc(class_layout(c))
                } else {
                    heads[c] = *(head as *mut *mut u8);
                    head
                }
            }
            None => TALC.alloc(layout),
        }
    }

    /// Frees a block: onto its class's list, or back to talc (not inlined, as `take`).
    #[inline(never)]
    unsafe fn give(&self, ptr: *mut u8, layout: Layout) {
        match class(layout) {
            Some(c) => {
                // SAFETY: single-threaded (see `Lists`); the block is free from here on.
                let heads = &mut *LISTS.0.get();
                *(ptr as *mut *mut u8) = heads[c];
                heads[c] = ptr;
            }
            None => TALC.dealloc(ptr, layout),
        }
    }
}

#[allow(unsafe_code)]
// SAFETY: a block is either talc's (allocated, freed and resized by talc with the layout
// it was made with: a small class always asks talc for its class layout) or on a list;
// refusals are null pointers, which `GlobalAlloc` allows.
unsafe impl GlobalAlloc for Budgeted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !crate::budget::allows(layout.size()) {
            return core::ptr::null_mut();
        }
        self.take(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !crate::budget::allows(layout.size()) {
            return core::ptr::null_mut();
        }
        let p = self.take(layout);
        if !p.is_null() {
            core::ptr::write_bytes(p, 0, layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.give(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !crate::budget::allows(new_size) {
            return core::ptr::null_mut();
        }
        self.resize(ptr, layout, new_size)
    }
}

#[allow(unsafe_code)]
impl Budgeted {
    /// Moves or grows a block (not inlined, as `take`).
    #[inline(never)]
    unsafe fn resize(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return core::ptr::null_mut();
        };
        match (class(layout), class(new_layout)) {
            (None, None) => TALC.realloc(ptr, layout, new_size),
            (Some(a), Some(b)) if a == b => ptr,
            _ => {
                let p = self.take(new_layout);
                if !p.is_null() {
                    // SAFETY: both blocks are live and distinct; the copy is the shorter.
                    core::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                    self.give(ptr, layout);
                }
                p
            }
        }
    }
}

#[global_allocator]
static ALLOC: Budgeted = Budgeted;
