//! The async stores over memory: the conformance cases headless Chromium runs over
//! IndexedDB (`tests/web.rs`), here over a `RefCell<MemoryBackend>`, whose futures are
//! ready at once.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/async_cases.rs"]
mod cases;

use promptloom::store::MemoryBackend;
use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Polls a future whose every wait is ready at once (a memory backend).
fn now<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("a memory backend's future did not finish");
}

#[test]
fn message_store_conformance_over_memory() {
    now(cases::message_store(|| async {
        RefCell::new(MemoryBackend::new())
    }));
}

#[test]
fn skill_store_conformance_over_memory() {
    now(cases::skill_store(|| async {
        RefCell::new(MemoryBackend::new())
    }));
}

#[test]
fn system_skills_seed_over_memory() {
    now(cases::seed(|| async { RefCell::new(MemoryBackend::new()) }));
}

#[test]
fn writers_that_interleave_conflict_and_are_laid_out_again() {
    now(cases::racing_writers_conflict(|conflicts| async move {
        cases::Counting {
            inner: RefCell::new(MemoryBackend::new()),
            conflicts,
            interleave: true,
        }
    }));
}
