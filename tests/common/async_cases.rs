//! The async store conformance cases: the message store and the skill store over any
//! [`AsyncBackend`], run natively over memory (`tests/async_stores.rs`) and over real
//! IndexedDB in headless Chromium (`tests/web.rs`, the `indexeddb` feature). They follow
//! the JS suites (`tests/js/store-conformance.mjs`, `tests/js/skill-conformance.mjs`).
#![allow(dead_code)]

use promptloom::compositor::{CommandCatalog, Step, SubmitOptions};
use promptloom::lower::{lower, LowerOptions, Provider};
use promptloom::store::async_backend::BuildBatch;
use promptloom::store::reads::{Plan, Rows};
use promptloom::store::skills::Request;
use promptloom::store::{is_conflict, AsyncBackend, AsyncMessageStore, AsyncSkillStore, Op, Table};
use promptloom::{ErrorKind, NoResolver, Turn, UserMessage};
use serde_json::{json, Value};
use std::cell::Cell;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

const NOW: &str = "2026-11-23T10:00:00Z";
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// Runs two futures to completion, interleaved (two writers at once).
pub async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}

/// Pending once, then ready (after waking the task).
async fn yield_once() {
    let mut done = false;
    poll_fn(|cx| {
        if done {
            return Poll::Ready(());
        }
        done = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// A backend that counts the batches refused as conflicts (a taken key or unique name);
/// with `interleave`, every read and write first waits one turn, so writers driven together
/// interleave even over memory, as two tabs do over IndexedDB.
pub struct Counting<B> {
    /// The backend.
    pub inner: B,
    /// The conflicts so far (shared by every backend of one run).
    pub conflicts: Rc<Cell<u32>>,
    /// Wait a turn before each read and write.
    pub interleave: bool,
}

impl<B: AsyncBackend> AsyncBackend for Counting<B> {
    async fn read(&self, plan: &Plan) -> promptloom::Result<Rows> {
        if self.interleave {
            yield_once().await;
        }
        self.inner.read(plan).await
    }

    async fn commit_after_read(
        &self,
        keys: &[(Table, String)],
        build: &mut BuildBatch<'_>,
    ) -> promptloom::Result<()> {
        if self.interleave {
            yield_once().await;
        }
        let r = self.inner.commit_after_read(keys, build).await;
        if r.as_ref().is_err_and(is_conflict) {
            self.conflicts.set(self.conflicts.get() + 1);
        }
        r
    }
}

/// Both suites over backends from `open`, counting conflicts: the racing writers of each
/// suite must have conflicted at least once (else the race was never run).
pub async fn racing_writers_conflict<B, F, Fut>(open: F)
where
    B: AsyncBackend,
    F: Fn(Rc<Cell<u32>>) -> Fut,
    Fut: Future<Output = Counting<B>>,
{
    let conflicts = Rc::new(Cell::new(0));
    message_store(|| open(conflicts.clone())).await;
    let after_messages = conflicts.get();
    assert!(after_messages >= 1, "the racing submits never conflicted");
    skill_store(|| open(conflicts.clone())).await;
    assert!(
        conflicts.get() > after_messages,
        "the racing creates never conflicted"
    );
}

fn message(v: Value) -> UserMessage {
    UserMessage::from_value(v).unwrap()
}

fn opts(v: Value) -> SubmitOptions {
    let mut v = v;
    v["now"] = json!(1_700_000_000_000i64);
    SubmitOptions::from_value(v).unwrap()
}

fn text(t: &str) -> UserMessage {
    message(json!({ "role": "user", "parts": [{ "type": "text", "text": t }] }))
}

/// Submits a message that needs no host answers; returns `(id, seq, message)`.
async fn submit<B: AsyncBackend>(
    s: &AsyncMessageStore<B>,
    m: &UserMessage,
    o: &SubmitOptions,
) -> promptloom::Result<(String, u64, UserMessage)> {
    match s.submit(m, &CommandCatalog::default(), o, None).await? {
        Step::Done(sub) => Ok((sub.id.clone(), sub.seq, sub.message.clone())),
        other => panic!("the host was asked: {other:?}"),
    }
}

/// Every row of every message table, to prove a failure wrote nothing.
async fn rows<B: AsyncBackend>(b: &B) -> Vec<Vec<(String, String)>> {
    let tables = [
        Table::Messages,
        Table::Parts,
        Table::Blobs,
        Table::Sessions,
        Table::Ids,
    ];
    let plan = Plan {
        scans: tables.iter().map(|t| (*t, String::new())).collect(),
        ..Plan::default()
    };
    b.read(&plan).await.unwrap().scans
}

/// The message-store cases, each on a fresh backend from `open`.
pub async fn message_store<B, F, Fut>(open: F)
where
    B: AsyncBackend,
    F: Fn() -> Fut,
    Fut: Future<Output = B>,
{
    // A new store is empty; an unknown id is NotFound.
    let s = AsyncMessageStore::new(open().await);
    assert!(s.history("default").await.unwrap().is_empty());
    assert!(s.list("x").await.unwrap().is_empty());
    assert_eq!(s.get("nope").await.unwrap_err().kind(), ErrorKind::NotFound);
    assert!(s.blob("sha256-nope").await.unwrap().is_none());

    // Submit persists; get returns exactly what was submitted; the replay lowers to the
    // same bytes for every provider.
    let s = AsyncMessageStore::new(open().await);
    let m = message(json!({ "role": "user", "parts": [
        { "type": "text", "text": "look at this" },
        { "type": "file-attachment", "name": "dot.png", "mime": "image/png", "data": PNG },
        { "type": "editor-context", "kind": "viewport", "payload": { "x": 1 } },
    ]}));
    let (id, seq, stored) = submit(&s, &m, &opts(json!({}))).await.unwrap();
    assert_eq!((id.as_str(), seq), ("default/0000000001", 1));
    let back = s.get(&id).await.unwrap();
    assert_eq!(back, stored);
    for p in Provider::ALL {
        let o = LowerOptions::new(p);
        assert_eq!(
            lower(&back, &o, &NoResolver).unwrap().body,
            lower(&stored, &o, &NoResolver).unwrap().body,
            "{}",
            p.name()
        );
    }
    let list = s.list("default").await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["part_count"], json!(3));

    // History is in order; sessions are separate, also one named like a prefix.
    let s = AsyncMessageStore::new(open().await);
    for (session, t) in [("team", "one"), ("team/x", "other"), ("team", "two")] {
        submit(&s, &text(t), &opts(json!({ "session": session })))
            .await
            .unwrap();
    }
    let texts = |h: Vec<UserMessage>| -> Vec<String> { h.iter().map(|m| m.to_json()).collect() };
    let team = texts(s.history("team").await.unwrap());
    assert_eq!(team.len(), 2);
    assert!(
        team[0].contains("\"one\"") && team[1].contains("\"two\""),
        "{team:?}"
    );
    assert_eq!(s.history("team/x").await.unwrap().len(), 1);

    // Two writers at once on one session (two tabs: two stores, one database): each
    // message gets its own sequence number, the loser laid out again after the winner.
    let b = open().await;
    let (a, c) = (AsyncMessageStore::new(&b), AsyncMessageStore::new(&b));
    let o = opts(json!({ "session": "race" }));
    let (x, y) = join(
        submit(&a, &text("from a"), &o),
        submit(&c, &text("from c"), &o),
    )
    .await;
    let (x, y) = (x.unwrap(), y.unwrap());
    let mut seqs = [x.1, y.1];
    seqs.sort();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(a.history("race").await.unwrap().len(), 2);

    // A large attachment goes to the blob store and reads back from it.
    let s = AsyncMessageStore::new(open().await);
    let big = message(json!({ "role": "user", "parts": [
        { "type": "file-attachment", "name": "dot.png", "mime": "image/png", "data": PNG },
    ]}));
    let (id, _, stored) = submit(
        &s,
        &big,
        &opts(json!({ "limits": { "blob_threshold": 10 } })),
    )
    .await
    .unwrap();
    let json_text = stored.to_json();
    let cid = json_text
        .split("\"content_id\":\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("the attachment names its blob")
        .to_owned();
    let blob = s.blob(&cid).await.unwrap().expect("the blob is stored");
    assert_eq!((blob.mime.as_str(), blob.data.as_str()), ("image/png", PNG));
    assert_eq!(s.get(&id).await.unwrap(), stored);

    // Bad input is a typed error and writes nothing; a taken id is refused, nothing changes.
    let s = AsyncMessageStore::new(open().await);
    submit(&s, &text("first"), &opts(json!({ "id": "mine" })))
        .await
        .unwrap();
    let before = rows(s.backend()).await;
    let too_big = message(json!({ "role": "user", "parts": [
        { "type": "file-attachment", "mime": "image/png", "data": PNG },
    ]}));
    let e = submit(
        &s,
        &too_big,
        &opts(json!({ "limits": { "max_attachment_bytes": 8 } })),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    let taken = submit(&s, &text("again"), &opts(json!({ "id": "mine" })))
        .await
        .unwrap_err();
    assert_eq!(taken.kind(), ErrorKind::InvalidOptions, "{taken}");
    assert!(taken.to_string().contains("mine"), "{taken}");
    assert_eq!(rows(s.backend()).await, before);

    // Turns of every role append after the last message; the thread reads them in order.
    let s = AsyncMessageStore::new(open().await);
    submit(&s, &text("what is 2+2?"), &opts(json!({ "session": "t" })))
        .await
        .unwrap();
    let reply = Turn::from_value(json!({ "role": "assistant", "parts": [
        { "type": "text", "text": "calling" },
        { "type": "tool-call", "id": "c1", "name": "calc", "input": { "q": "2+2" } },
    ]}))
    .unwrap();
    let result = Turn::from_value(json!({ "role": "tool", "parts": [
        { "type": "tool-result", "call_id": "c1", "output": "4" },
    ]}))
    .unwrap();
    let o = opts(json!({ "session": "t" }));
    let a = s.append(&reply, &o).await.unwrap();
    assert_eq!(a.seq, 2);
    assert_eq!(s.append(&result, &o).await.unwrap().seq, 3);
    // A turn already stored is not written again.
    assert!(s.append(&a.turn, &o).await.unwrap().stored);
    let thread = s.thread("t").await.unwrap();
    let roles: Vec<&str> = thread
        .iter()
        .map(|t| match t {
            Turn::User(_) => "user",
            Turn::Assistant(_) => "assistant",
            Turn::Tool(_) => "tool",
            Turn::System(_) => "system",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(s.history("t").await.unwrap().len(), 1);

    // A corrupt row is a StoreFailed error naming it; other messages still read.
    let s = AsyncMessageStore::new(open().await);
    let (good, _, _) = submit(&s, &text("fine"), &opts(json!({}))).await.unwrap();
    let (bad, _, _) = submit(&s, &text("broken"), &opts(json!({}))).await.unwrap();
    let mut ops = Some(vec![Op::Put {
        table: Table::Messages,
        key: bad.clone(),
        value: "{not json".into(),
    }]);
    s.backend()
        .commit_after_read(&[], &mut |_| Ok(ops.take().unwrap_or_default()))
        .await
        .unwrap();
    let e = s.get(&bad).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StoreFailed, "{e}");
    assert!(e.to_string().contains(&bad), "{e}");
    assert!(s.get(&good).await.is_ok());
}

fn skill(name: &str, id: &str) -> Value {
    json!({
        "id": id, "name": name, "description": format!("{name} things"), "source": "user",
        "artifacts": [
            { "kind": "prompt_template", "name": "main", "content": "Do {{ user_request }}" },
            { "kind": "approach", "name": "notes", "content": "Some notes." },
        ],
    })
}

fn request(op: &str, body: Value) -> Request {
    let mut v = json!({ "op": op });
    match op {
        "delete" | "delete_artifact" => v["id"] = body,
        "add_artifact" | "update_artifact" => v["artifact"] = body,
        _ => v["skill"] = body,
    }
    Request::from_value(&v, NOW).unwrap()
}

/// The skill-store cases, each on a fresh backend from `open`.
pub async fn skill_store<B, F, Fut>(open: F)
where
    B: AsyncBackend,
    F: Fn() -> Fut,
    Fut: Future<Output = B>,
{
    // Create, then read back by id, by name, in the list, per kind and per artifact.
    let s = AsyncSkillStore::new(open().await);
    assert!(s.list().await.unwrap().is_empty());
    let summary = s
        .write(&request("create", skill("pdf", "s1")), NOW)
        .await
        .unwrap();
    assert_eq!(summary["name"], json!("pdf"));
    let got = s.get("s1").await.unwrap().expect("stored");
    assert_eq!(got.artifacts.len(), 2);
    assert_eq!(
        s.get_by_name("pdf").await.unwrap().map(|k| k.id),
        Some("s1".into())
    );
    assert_eq!(s.list().await.unwrap().len(), 1);
    let refs = s
        .get_artifacts("s1", &[promptloom::skill::model::ArtifactKind::Approach])
        .await
        .unwrap();
    assert_eq!(refs.len(), 1);
    let one = s.get_artifact(&refs[0].id).await.unwrap().expect("by id");
    assert_eq!(one.content, "Some notes.");
    assert!(s.get("nope").await.unwrap().is_none());

    // A taken name is AlreadyExists and nothing changes.
    let before = s.list().await.unwrap();
    let e = s
        .write(&request("create", skill("pdf", "s2")), NOW)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert_eq!(s.list().await.unwrap(), before);
    assert!(s.get("s2").await.unwrap().is_none());

    // A put replaces the artifacts (one dropped); update keeps them; delete removes all.
    let mut smaller = skill("pdf", "s1");
    smaller["artifacts"].as_array_mut().unwrap().pop();
    s.write(&request("put", smaller), NOW).await.unwrap();
    assert_eq!(s.get("s1").await.unwrap().unwrap().artifacts.len(), 1);
    assert!(s.get_artifact(&refs[0].id).await.unwrap().is_none());
    let mut renamed = skill("pdf-tools", "s1");
    renamed["artifacts"] = json!([]);
    s.write(&request("update", renamed), NOW).await.unwrap();
    assert!(s.get_by_name("pdf").await.unwrap().is_none());
    assert_eq!(
        s.get_by_name("pdf-tools")
            .await
            .unwrap()
            .unwrap()
            .artifacts
            .len(),
        1
    );
    s.write(&request("delete", json!("s1")), NOW).await.unwrap();
    assert!(s.list().await.unwrap().is_empty());
    assert!(s.get_artifacts("s1", &[]).await.unwrap().is_empty());

    // Two writers create the same name at once: one wins, the other is AlreadyExists.
    let b = open().await;
    let (x, y) = (AsyncSkillStore::new(&b), AsyncSkillStore::new(&b));
    let (r1, r2) = join(
        x.write(&request("create", skill("race", "r1")), NOW),
        y.write(&request("create", skill("race", "r2")), NOW),
    )
    .await;
    assert_eq!([r1.is_ok(), r2.is_ok()].iter().filter(|ok| **ok).count(), 1);
    let lost = r1.err().or(r2.err()).expect("one lost");
    assert_eq!(lost.kind(), ErrorKind::AlreadyExists, "{lost}");
    assert_eq!(x.list().await.unwrap().len(), 1);

    // Trace pages: one key-range read each, the cursors covering the traces in start order.
    let s = AsyncSkillStore::new(open().await);
    for i in 0..7 {
        let at = format!("2026-11-22T10:00:0{i}.000Z");
        s.record_trace(
            json!({"session_id": "t", "skill_id": "k", "artifact_id": "a",
            "artifact_kind": "prompt_template", "started_at": at, "completed_at": at}),
        )
        .await
        .unwrap();
    }
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page: serde_json::Value = serde_json::from_str(
            &s.trace_page_json(Some("t"), None, None, after.as_deref(), 3)
                .await
                .unwrap(),
        )
        .unwrap();
        let items = page["items"].as_array().unwrap();
        seen.push(items.len());
        after = page["next"].as_str().map(str::to_owned);
        if after.is_none() {
            break;
        }
    }
    assert_eq!(seen, [3, 3, 1]);
}

/// System skills seeded by the store's migration: created once, then current (one read),
/// the specs read back; the same rows the synchronous store writes.
pub async fn seed<B, F, Fut>(open: F)
where
    B: AsyncBackend,
    F: Fn() -> Fut,
    Fut: Future<Output = B>,
{
    use promptloom::store::seed::read_seed;
    let text = include_str!("../../pkg/system-skills.json");
    let seed = read_seed(text, NOW).unwrap();
    let s = AsyncSkillStore::new(open().await);
    let r = s.seed(&seed, NOW).await.unwrap();
    assert_eq!(r["status"], json!("created"));
    assert_eq!(r["upserted"], json!(["tool-builder", "skill-builder"]));
    let names: Vec<String> = s
        .list()
        .await
        .unwrap()
        .iter()
        .map(|x| x.name().to_owned())
        .collect();
    assert_eq!(names, ["skill-builder", "tool-builder"]);
    let specs = s.skill_specs().await.unwrap();
    assert_eq!(specs, seed.skill_specs());
    let again = s.seed(&seed, "2030-01-01T00:00:00Z").await.unwrap();
    assert_eq!(again["status"], json!("current"));
    // The synchronous store writes the same report.
    let mut sync = promptloom::store::SkillTables::new(promptloom::store::MemoryBackend::new());
    assert_eq!(sync.seed(&seed, NOW).unwrap(), r);
}
