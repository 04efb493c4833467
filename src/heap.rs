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

/// talc behind the budget: an allocation the budget refuses fails (a trap the JS glue
/// recovers from) before the memory grows.
struct Budgeted;

#[allow(unsafe_code)]
// SAFETY: every call is forwarded to talc unchanged, or refused with a null pointer, which
// `GlobalAlloc` allows.
unsafe impl GlobalAlloc for Budgeted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !crate::budget::allows(layout.size()) {
            return core::ptr::null_mut();
        }
        TALC.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !crate::budget::allows(layout.size()) {
            return core::ptr::null_mut();
        }
        TALC.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        TALC.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !crate::budget::allows(new_size) {
            return core::ptr::null_mut();
        }
        TALC.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Budgeted = Budgeted;
