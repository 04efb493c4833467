//! A chat's rules (`promptloom::chat`): the view of every thread in
//! `tests/conversation/inputs` (one reviewed snapshot each; its first line is the exact JSON
//! the JS and component faces must give), the view built turn by turn as a host appends
//! them, the branch plans, and a branch's copy of the turns it keeps in the message store.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::chat::{branch, view};
use promptloom::compositor::SubmitOptions;
use promptloom::conversation::Turn;
use promptloom::store::drafts::Draft;
use promptloom::store::{MemoryBackend, MessageStore};
use promptloom::ErrorKind;
use serde_json::{json, Value};
use std::path::Path;

mod common;
use common::indent;

fn turns_of(path: &Path) -> Vec<Turn> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    Turn::list_from_value(v["turns"].clone()).unwrap()
}

fn messages(text: &str) -> Vec<Value> {
    serde_json::from_str(text).expect("the view is a JSON array")
}

#[test]
fn the_view_of_every_thread() {
    insta::glob!("conversation/inputs/*.json", |path| {
        let turns = turns_of(path);
        let text = view(&turns, 0);
        assert_eq!(text, view(&turns, 0), "not byte-stable");
        let mut settings = insta::Settings::clone_current();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("case");
        settings.set_snapshot_suffix(stem);
        settings.set_prepend_module_to_snapshot(true);
        settings.bind(|| insta::assert_snapshot!(format!("{text}\n\n{}", indent(&text))));
    });
}

/// What a host does as turns are appended: view the new turn alone, or a tool turn with the
/// turns the last message shows (one message back replaces the last one shown).
fn turn_by_turn(turns: &[Turn]) -> Vec<Value> {
    let mut shown: Vec<Value> = Vec::new();
    let mut tail = 0..0; // the turns the last message shows
    for (i, t) in turns.iter().enumerate() {
        let folds = matches!(t, Turn::Tool(_))
            && tail.end == i
            && matches!(turns.get(tail.start), Some(Turn::Assistant(_)));
        if folds {
            let v = messages(&view(&turns[tail.start..=i], tail.start));
            if v.len() == 1 {
                shown.pop();
                shown.extend(v);
                tail.end = i + 1;
                continue;
            }
            shown.push(v.last().unwrap().clone());
        } else {
            shown.extend(messages(&view(&turns[i..=i], i)));
        }
        tail = i..i + 1;
    }
    shown
}

#[test]
fn turn_by_turn_the_view_is_the_whole_threads() {
    insta::glob!("conversation/inputs/*.json", |path| {
        let turns = turns_of(path);
        assert_eq!(
            turn_by_turn(&turns),
            messages(&view(&turns, 0)),
            "{}",
            path.display()
        );
    });
}

#[test]
fn branch_plans() {
    insta::glob!("conversation/inputs/*.json", |path| {
        let turns = turns_of(path);
        let last_user = turns.iter().rposition(|t| matches!(t, Turn::User(_)));
        match (branch(&turns, "s", None, "n"), last_user) {
            (Ok(b), Some(u)) => {
                assert_eq!(b.keep, u + 1);
                let same = b.keep == turns.len();
                assert_eq!(b.session, if same { "s" } else { "s~n" });
            }
            (Err(e), None) => assert_eq!(e.kind(), ErrorKind::InvalidRequest),
            (r, u) => panic!("{}: {r:?} with the last user turn at {u:?}", path.display()),
        }
        // Editing each user turn keeps the turns before it, in a branch.
        let shown = messages(&view(&turns, 0));
        for m in &shown {
            let id = m["id"].as_str().unwrap();
            let b = branch(&turns, "s~old", Some(id), "e");
            if m["role"] == "user" {
                let b = b.unwrap();
                assert_eq!(
                    (b.keep, b.session.as_str()),
                    (m["turn"].as_u64().unwrap() as usize, "s~e")
                );
            } else {
                assert_eq!(b.unwrap_err().kind(), ErrorKind::InvalidRequest, "{id}");
            }
        }
    });
}

#[test]
fn a_branch_copies_the_turns_it_keeps() {
    let mut store = MessageStore::new(MemoryBackend::new());
    let opts = |session: &str| SubmitOptions {
        session: session.into(),
        now: Some(1_700_000_000_000),
        ..SubmitOptions::default()
    };
    let thread = Turn::list_from_value(json!([
        { "role": "user", "parts": [{ "type": "text", "text": "a" }] },
        { "role": "assistant", "parts": [{ "type": "text", "text": "b" },
            { "type": "tool-call", "id": "c1", "name": "f", "input": {} }] },
        { "role": "tool", "parts": [{ "type": "tool-result", "call_id": "c1", "output": "ok" }] },
        { "role": "assistant", "parts": [{ "type": "text", "text": "d" }] },
    ]))
    .unwrap();
    for t in &thread {
        store.append(t, &opts("chat")).unwrap();
    }
    let stored = store.thread("chat").unwrap();
    let plan = branch(&stored, "chat", None, "n1").unwrap();
    assert_eq!((plan.keep, plan.session.as_str()), (1, "chat~n1"));
    let plan = branch(&stored, "chat", Some("chat/0000000001"), "n1").unwrap();
    assert_eq!(plan.keep, 0);
    // Three turns copied in one write: new ids and sequence numbers in the branch.
    let a = store
        .append_turns(
            &stored[..3],
            &SubmitOptions {
                id: Some("ignored".into()),
                ..opts("chat~n1")
            },
        )
        .unwrap();
    let ids: Vec<&str> = a.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "chat~n1/0000000001",
            "chat~n1/0000000002",
            "chat~n1/0000000003"
        ]
    );
    let copy = store.thread("chat~n1").unwrap();
    assert_eq!(copy.len(), 3);
    for (c, s) in copy.iter().zip(&stored) {
        let (mut c, mut s) = (c.to_value(), s.to_value());
        for v in [&mut c, &mut s] {
            let m = v["metadata"].as_object_mut().unwrap();
            for k in ["id", "session", "seq"] {
                m.remove(k);
            }
        }
        assert_eq!(c, s, "a copy is the turn, under its new id");
    }
    // The views agree but for the ids.
    let (v1, v2) = (messages(&view(&copy, 0)), messages(&view(&stored[..3], 0)));
    assert_eq!(v1.len(), v2.len());
    assert_eq!(v1[1]["parts"], v2[1]["parts"]);
    // The old thread is untouched; the branch goes on after its copy.
    assert_eq!(store.thread("chat").unwrap().len(), 4);
    let next = store.append(&thread[3], &opts("chat~n1")).unwrap();
    assert_eq!(next.id, "chat~n1/0000000004");
    // Turns stored in this session already are passed over.
    let again = store
        .append_turns(&store.thread("chat~n1").unwrap(), &opts("chat~n1"))
        .unwrap();
    assert!(again.iter().all(|a| a.stored));
    assert_eq!(store.thread("chat~n1").unwrap().len(), 4);
}

#[test]
fn a_reply_whose_host_went_away_comes_back_cut_from_its_draft() {
    let mut store = MessageStore::new(MemoryBackend::new());
    let opts = SubmitOptions {
        session: "chat".into(),
        now: Some(1_700_000_000_000),
        ..SubmitOptions::default()
    };
    let user =
        Turn::from_value(json!({ "role": "user", "parts": [{ "type": "text", "text": "a" }] }))
            .unwrap();
    store.append(&user, &opts).unwrap();
    assert!(store.draft("chat").unwrap().is_none());
    // The reply as read so far: text, and a call still being written (left out).
    let so_far = Draft::from_value(json!({ "turn": { "role": "assistant", "parts": [
        { "type": "text", "text": "Hel" },
        { "type": "tool-call", "id": "c1", "name": "f", "input": {} } ] } }))
    .unwrap();
    assert!(store.save_draft("chat", &so_far).unwrap());
    let draft = store.draft("chat").unwrap().unwrap().turn.unwrap();
    assert_eq!(
        draft.to_value()["parts"],
        json!([{ "type": "text", "text": "Hel" }])
    );
    // Appended, it is the thread's cut reply, and no draft stands.
    store.append(&draft, &opts).unwrap();
    assert!(store.draft("chat").unwrap().is_none());
    let shown = messages(&view(&store.thread("chat").unwrap(), 0));
    assert_eq!(shown[1]["status"], json!("cut"));
    assert_eq!(shown[1]["parts"][0]["text"], json!("Hel"));
    // A draft whose writer stored its reply and went away before dropping it reads as none.
    store.save_draft("chat", &so_far).unwrap();
    store.append(&user, &opts).unwrap();
    assert!(store.draft("chat").unwrap().is_none());
    // A relayed run is kept before any text; nothing at all keeps nothing; a drop leaves none.
    let run = Draft::from_value(json!({ "run": "r1" })).unwrap();
    assert!(store.save_draft("chat", &run).unwrap());
    assert_eq!(
        store.draft("chat").unwrap().unwrap().run.as_deref(),
        Some("r1")
    );
    let empty = Draft::from_value(json!({ "turn": { "role": "assistant", "parts": [] } })).unwrap();
    assert!(!store.save_draft("chat", &empty).unwrap());
    assert!(store.draft("chat").unwrap().is_none());
    store.save_draft("chat", &so_far).unwrap();
    store.drop_draft("chat").unwrap();
    assert!(store.draft("chat").unwrap().is_none());
    assert_eq!(store.thread("chat").unwrap().len(), 3);
}
