//! The async stores over memory: the conformance cases headless Chromium runs over
//! IndexedDB (`tests/web.rs`), here over a `RefCell<MemoryBackend>`, whose futures are
//! ready at once.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/async_cases.rs"]
mod cases;

use promptloom::store::async_backend::BuildBatch;
use promptloom::store::reads::{Plan, Rows};
use promptloom::store::{is_conflict, AsyncBackend, MemoryBackend, Table};
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

/// A memory backend whose every read and write waits one turn first, so two writers driven
/// together interleave as two tabs do over IndexedDB; it counts the batches refused as
/// conflicts.
struct Interleaved {
    inner: RefCell<MemoryBackend>,
    conflicts: std::rc::Rc<std::cell::Cell<u32>>,
}

/// Pending once, then ready (after waking the task).
async fn yield_once() {
    let mut done = false;
    std::future::poll_fn(|cx| {
        if done {
            return Poll::Ready(());
        }
        done = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

impl AsyncBackend for Interleaved {
    async fn read(&self, plan: &Plan) -> promptloom::Result<Rows> {
        yield_once().await;
        self.inner.read(plan).await
    }

    async fn commit_after_read(
        &self,
        keys: &[(Table, String)],
        build: &mut BuildBatch<'_>,
    ) -> promptloom::Result<()> {
        yield_once().await;
        let r = self.inner.commit_after_read(keys, build).await;
        if r.as_ref().is_err_and(is_conflict) {
            self.conflicts.set(self.conflicts.get() + 1);
        }
        r
    }
}

#[test]
fn writers_that_interleave_conflict_and_are_laid_out_again() {
    let conflicts = std::rc::Rc::new(std::cell::Cell::new(0));
    let open = || {
        let c = conflicts.clone();
        async move {
            Interleaved {
                inner: RefCell::new(MemoryBackend::new()),
                conflicts: c,
            }
        }
    };
    now(cases::message_store(open));
    let after_messages = conflicts.get();
    assert!(after_messages >= 1, "the racing submits never conflicted");
    now(cases::skill_store(open));
    assert!(
        conflicts.get() > after_messages,
        "the racing creates never conflicted"
    );
}
