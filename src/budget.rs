//! The allocation budget: a bound on the size of any one allocation while a budget is set,
//! for work whose memory no hook reaches (a template's `{% set s = s ~ s %}` doubles a
//! value without writing, and MiniJinja has no per-value limit).
//!
//! The core only sets and reads the bound; the wasm builds' global allocator consults
//! [`allows`] and refuses a larger allocation, which ends the call with a trap instead of
//! growing the instance's memory to gigabytes first. The JS glue then reads
//! [`tripped`] to name the limit in its error and serves later calls from a fresh
//! instance. Native builds keep the system allocator (no bound).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest allocation allowed now (`usize::MAX`: no budget is set).
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The size of the allocation that was refused (0: none).
static TRIPPED: AtomicUsize = AtomicUsize::new(0);

/// Whether an allocation of `size` bytes fits the budget; a refusal is remembered for
/// [`tripped`].
pub fn allows(size: usize) -> bool {
    if size > CAP.load(Ordering::Relaxed) {
        TRIPPED.store(size, Ordering::Relaxed);
        false
    } else {
        true
    }
}

/// Runs `f` with no single allocation above `cap` bytes (the previous budget is restored
/// afterwards; budgets nest).
pub fn within<R>(cap: usize, f: impl FnOnce() -> R) -> R {
    let old = CAP.swap(cap, Ordering::Relaxed);
    let out = f();
    CAP.store(old, Ordering::Relaxed);
    out
}

/// The size of the last allocation the budget refused, or 0.
pub fn tripped() -> usize {
    TRIPPED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_above_the_cap_only_inside() {
        assert!(allows(1 << 30));
        within(1024, || {
            assert!(allows(1024));
            assert!(!allows(1025));
        });
        assert_eq!(tripped(), 1025);
        assert!(allows(1 << 30));
    }
}
