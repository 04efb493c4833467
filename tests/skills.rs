//! Skill packages: the seed's JSON packages (`tests/skills/packages`) and Agent Skills
//! `SKILL.md` folders (`tests/skills/skill_md`) imported, validated and exported, reviewed
//! as snapshots; the round trip SKILL.md → skill → SKILL.md → skill; model-variant
//! selection; the skill store's repository operations over the storage layer; the
//! dual-scope catalog, the phase-1 ranker and marketplace sync plans; robustness.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::Rng;

use promptloom::catalog::rank::{Doc, MatchOptions, SkillIndex, Tier};
use promptloom::catalog::{merge, sync::plan_sync, Scope};
use promptloom::skill::{
    export_skill_md, import_package, import_skill_md, model_family, select_variant, validate_skill,
    ArtifactKind, BundledFile, Skill,
};
use promptloom::store::skills::{Request, SkillTables};
use promptloom::store::{Backend, MemoryBackend, Op, Table};
use promptloom::{Error, ErrorKind};
use serde_json::{json, Value};
use std::path::Path;

const NOW: &str = "2026-11-22T08:00:00Z";

fn seed() -> String {
    std::fs::read_to_string("tests/skills/packages/consistency-checker.json").unwrap()
    // ok: test
}

#[test]
fn packages() {
    insta::glob!("skills/packages/*.json", |path| {
        let text = std::fs::read_to_string(path).unwrap(); // ok: test
        let validation = serde_json::from_str::<Value>(&text)
            .map(|v| validate_skill(&v).to_value())
            .unwrap_or(Value::Null);
        let imported = match import_package(&text, NOW) {
            Ok((skill, warnings)) => {
                // Everything the import reported is in the validation too.
                for w in &warnings {
                    assert!(validation["problems"]
                        .as_array()
                        .unwrap()
                        .contains(&w.to_value())); // ok: test
                }
                json!({ "skill": skill.to_value() })
            }
            Err(e) => {
                if validation.is_object() {
                    assert_eq!(validation["valid"], false);
                    assert_eq!(e.details()["problems"], validation["problems"]);
                }
                json!({ "error": serde_json::from_str::<Value>(&e.to_json()).unwrap() })
                // ok: test
            }
        };
        insta::assert_json_snapshot!(json!({ "validation": validation, "import": imported }));
    });
}

#[test]
fn the_seed_example_imports_as_written() {
    let (skill, warnings) = import_package(&seed(), NOW).unwrap(); // ok: test
    assert_eq!(skill.id, "550e8400-e29b-41d4-a716-446655440000");
    assert_eq!(skill.name, "Consistency Checker");
    let kinds: Vec<ArtifactKind> = skill.artifacts.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [
            ArtifactKind::Description,
            ArtifactKind::PromptTemplate,
            ArtifactKind::CodeTemplate,
            ArtifactKind::DspyModule
        ]
    );
    let dspy = &skill.artifacts[3];
    assert_eq!(dspy.metadata["fallback_artifact"], "Check Prompt");
    assert!(dspy.state_blob.as_deref().unwrap().starts_with("<base64")); // ok: test
    assert!(warnings.is_empty(), "{warnings:?}");
    // Importing twice gives the same skill, byte for byte.
    let (again, _) = import_package(&seed(), NOW).unwrap(); // ok: test
    assert_eq!(again.to_value().to_string(), skill.to_value().to_string());
}

/// A SKILL.md folder: the file, the other files beside it (binary ones as base64), and
/// `extra-files.json` entries (paths a folder cannot hold).
fn folder(dir: &Path) -> (String, Vec<BundledFile>) {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap(); // ok: test
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect(); // ok: test
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/"); // ok: test
            if rel == "SKILL.md" {
                continue;
            }
            let bytes = std::fs::read(&p).unwrap(); // ok: test
            if rel == "extra-files.json" {
                let extra: serde_json::Map<String, Value> = serde_json::from_slice(&bytes).unwrap(); // ok: test
                for (path, content) in extra {
                    files.push(BundledFile {
                        path,
                        content: content.as_str().unwrap().into(),
                        base64: false,
                    }); // ok: test
                }
                continue;
            }
            match String::from_utf8(bytes.clone()) {
                Ok(t) if !t.contains('\0') => files.push(BundledFile {
                    path: rel,
                    content: t,
                    base64: false,
                }),
                _ => {
                    use base64::Engine;
                    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
                    files.push(BundledFile {
                        path: rel,
                        content: b64,
                        base64: true,
                    });
                }
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    (text, files)
}

fn files_json(files: &[BundledFile]) -> Value {
    Value::Array(
        files
            .iter()
            .map(|f| json!({ "path": f.path, "content": f.content, "base64": f.base64 }))
            .collect(),
    )
}

#[test]
fn skill_md_folders() {
    insta::glob!("skills/skill_md/*/SKILL.md", |path| {
        let dir = path.parent().unwrap(); // ok: test
        let dir_name = dir.file_name().unwrap().to_string_lossy().to_string(); // ok: test
        let (text, files) = folder(dir);
        let doc = match import_skill_md(&text, &files, Some(&dir_name), NOW) {
            Ok(imported) => {
                let exported = export_skill_md(&imported.skill);
                // Round trip: import → export → import is lossless for what SKILL.md holds.
                let again =
                    import_skill_md(&exported.text, &exported.files, Some(&dir_name), NOW).unwrap(); // ok: test
                assert_eq!(again.skill, imported.skill, "round trip changed the skill");
                assert_eq!(
                    export_skill_md(&again.skill).text,
                    exported.text,
                    "export is not stable"
                );
                json!({
                    "skill": imported.skill.to_value(),
                    "problems": imported.problems.iter().map(|p| p.to_value()).collect::<Vec<_>>(),
                    "export": {
                        "text": exported.text,
                        "files": files_json(&exported.files),
                        "dropped": exported.dropped.iter().map(|p| p.to_value()).collect::<Vec<_>>(),
                    },
                })
            }
            Err(e) => json!({ "error": serde_json::from_str::<Value>(&e.to_json()).unwrap() }), // ok: test
        };
        insta::assert_json_snapshot!(doc);
    });
}

#[test]
fn a_package_exports_what_skill_md_can_hold_and_lists_the_rest() {
    let text = std::fs::read_to_string("tests/skills/packages/full-contract.json").unwrap(); // ok: test
    let (skill, _) = import_package(&text, NOW).unwrap(); // ok: test
    let out = export_skill_md(&skill);
    assert!(
        out.text.starts_with("---\nname: Timeline Auditor\n"),
        "{}",
        out.text
    );
    assert!(out
        .text
        .contains("allowed-tools: workspace_search get_page submit"));
    assert!(out.text.contains("version: 2.1.0-beta.1"));
    let dropped: Vec<&str> = out.dropped.iter().map(|p| p.path.as_str()).collect();
    assert!(
        dropped.contains(&"tags") && dropped.contains(&"metadata.parameters"),
        "{dropped:?}"
    );
    // The framing names a prompt_template: a template is not a Markdown body.
    assert!(dropped.contains(&"metadata.framing"));
    // It imports back as a valid skill.
    let back = import_skill_md(&out.text, &out.files, None, NOW).unwrap(); // ok: test
    assert_eq!(back.skill.name, "Timeline Auditor");
    assert_eq!(back.skill.version, "2.1.0-beta.1");
}

#[test]
fn model_variants_are_selected_as_the_seed_orders_them() {
    let text = std::fs::read_to_string("tests/skills/packages/full-contract.json").unwrap(); // ok: test
    let (skill, _) = import_package(&text, NOW).unwrap(); // ok: test
    let audit: Vec<_> = skill
        .artifacts
        .iter()
        .filter(|a| a.name == "Audit Prompt")
        .collect();
    let pick = |m: &str| select_variant(audit.iter().copied(), m).map(|a| a.model_variant.clone());
    assert_eq!(pick("gpt-4.1"), Some(Some("openai".into())));
    assert_eq!(pick("o3-mini"), Some(Some("openai".into())));
    assert_eq!(pick("openai-responses"), Some(Some("openai".into())));
    assert_eq!(pick("gemini-2.5-pro"), Some(Some("gemini".into())));
    // No anthropic variant: the default one.
    assert_eq!(pick("claude-sonnet-4-5"), Some(None));
    assert_eq!(pick("mistral-large"), Some(None));
    // Without a default: the first by ordinal.
    let no_default: Vec<_> = audit
        .iter()
        .copied()
        .filter(|a| a.model_variant.is_some())
        .collect();
    let first = select_variant(no_default.iter().copied(), "claude-opus-4").unwrap(); // ok: test
    assert_eq!(first.model_variant.as_deref(), Some("openai"));
    // "default" as a literal variant is the default too; a host family key matches by prefix.
    let mut a = audit[1].clone();
    a.model_variant = Some("mistral".into());
    let mut d = audit[2].clone();
    d.model_variant = Some("default".into());
    assert_eq!(
        select_variant([&a, &d], "mistral-large-2")
            .unwrap()
            .model_variant
            .as_deref(),
        Some("mistral")
    ); // ok: test
    assert_eq!(
        select_variant([&a, &d], "claude-3")
            .unwrap()
            .model_variant
            .as_deref(),
        Some("default")
    ); // ok: test
    assert!(select_variant(std::iter::empty(), "x").is_none());
    assert_eq!(model_family("models/gemini-2.0-flash"), "gemini");
    assert_eq!(model_family("anthropic"), "anthropic");
}

fn write(store: &mut SkillTables<MemoryBackend>, req: Value) -> Result<Value, Error> {
    let r = Request::from_value(&req, NOW)?;
    store.write(&r, NOW)
}

fn seed_value() -> Value {
    serde_json::from_str(&seed()).unwrap() // ok: test
}

#[test]
fn the_store_runs_the_seed_repository_operations() {
    let mut store = SkillTables::new(MemoryBackend::new());
    let created = write(&mut store, json!({ "op": "create", "skill": seed_value() })).unwrap(); // ok: test
    assert_eq!(created["artifacts"].as_array().unwrap().len(), 4); // ok: test
    assert!(
        created["artifacts"][0].get("content").is_none(),
        "summaries carry no content"
    );
    // Listing: summaries only.
    let list = store.list().unwrap(); // ok: test
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name(), "Consistency Checker");
    // Get by id and by name: the whole package, equal to what was imported.
    let (imported, _) = import_package(&seed(), NOW).unwrap(); // ok: test
    let got = store.get(&imported.id).unwrap().unwrap(); // ok: test
    assert_eq!(got, imported);
    assert_eq!(
        store.get_by_name("Consistency Checker").unwrap().unwrap(),
        imported
    ); // ok: test
    assert!(store.get("nope").unwrap().is_none()); // ok: test
                                                   // Phase 2: artifacts by kind, one at a time.
    let templates = store
        .get_artifacts(
            &imported.id,
            &[ArtifactKind::PromptTemplate, ArtifactKind::DspyModule],
        )
        .unwrap(); // ok: test
    assert_eq!(
        templates
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["Check Prompt", "DSPy Checker"]
    );
    let one = store.get_artifact(&templates[0].id).unwrap().unwrap(); // ok: test
    assert_eq!(one, templates[0]);
    // A second skill of the same name is refused; so is the same id.
    let mut other = seed_value();
    other["id"] = "another".into();
    let e = write(&mut store, json!({ "op": "create", "skill": other })).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    let e = write(&mut store, json!({ "op": "create", "skill": seed_value() })).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    // Add an artifact; (skill, name, model_variant) is unique.
    let add = json!({ "op": "add_artifact", "artifact": { "skill_id": imported.id, "kind": "prompt_template", "name": "Check Prompt", "model_variant": "anthropic", "content": "Claude: {{ entity_name }}" } });
    let added = write(&mut store, add.clone()).unwrap(); // ok: test
    assert_eq!(added["created_at"], NOW);
    let e = write(&mut store, add).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    let dup_default = json!({ "op": "add_artifact", "artifact": { "skill_id": imported.id, "kind": "example", "name": "Check Prompt", "content": "x" } });
    assert_eq!(
        write(&mut store, dup_default).unwrap_err().kind(),
        ErrorKind::AlreadyExists
    ); // ok: test
       // A bad template is refused with its line.
    let bad = json!({ "op": "add_artifact", "artifact": { "skill_id": imported.id, "kind": "prompt_template", "name": "Bad", "content": "ok\n{% if x %}" } });
    let e = write(&mut store, bad).unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
    assert!(e.to_string().contains("line"), "{e}");
    // Update an artifact (kind change moves its row); created_at stays.
    let mut upd = added.clone();
    upd["kind"] = "example".into();
    upd["content"] = "now an example".into();
    let updated = write(
        &mut store,
        json!({ "op": "update_artifact", "artifact": upd }),
    )
    .unwrap(); // ok: test
    assert_eq!(updated["created_at"], NOW);
    let ex = store
        .get_artifacts(&imported.id, &[ArtifactKind::Example])
        .unwrap(); // ok: test
    assert_eq!(ex.len(), 1);
    assert!(
        store
            .get_artifacts(&imported.id, &[ArtifactKind::PromptTemplate])
            .unwrap()
            .len()
            == 1
    ); // ok: test
       // The fallback target cannot be deleted while the dspy_module points at it.
    let check_prompt = &templates[0].id;
    let e = write(
        &mut store,
        json!({ "op": "delete_artifact", "id": check_prompt }),
    )
    .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill, "{e}");
    // Update the skill's metadata (rename); artifacts stay.
    let mut meta = seed_value();
    meta["name"] = "Consistency Checker 2".into();
    meta.as_object_mut().unwrap().remove("artifacts"); // ok: test
    let renamed = write(&mut store, json!({ "op": "update", "skill": meta })).unwrap(); // ok: test
    assert_eq!(renamed["artifacts"].as_array().unwrap().len(), 5); // ok: test
    assert!(store.get_by_name("Consistency Checker").unwrap().is_none()); // ok: test
    assert!(store
        .get_by_name("Consistency Checker 2")
        .unwrap()
        .is_some()); // ok: test
                     // Delete an artifact, then the skill: the cascade leaves no row behind.
    write(
        &mut store,
        json!({ "op": "delete_artifact", "id": added["id"] }),
    )
    .unwrap(); // ok: test
    assert!(store
        .get_artifact(added["id"].as_str().unwrap())
        .unwrap()
        .is_none()); // ok: test
    let d = write(&mut store, json!({ "op": "delete", "id": imported.id })).unwrap(); // ok: test
    assert_eq!(d["artifacts"], 4);
    assert!(
        store.backend().is_empty(),
        "rows left behind: {:?}",
        store.backend()
    );
    assert_eq!(
        write(&mut store, json!({ "op": "delete", "id": imported.id }))
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    ); // ok: test
}

#[test]
fn put_replaces_a_package_in_one_batch() {
    let mut store = SkillTables::new(MemoryBackend::new());
    write(&mut store, json!({ "op": "put", "skill": seed_value() })).unwrap(); // ok: test
    let mut v2 = seed_value();
    v2["version"] = "1.1.0".into();
    let arts = v2["artifacts"].as_array_mut().unwrap(); // ok: test
    arts.retain(|a| a["kind"] != "code_template");
    arts[0]["content"] = "A new overview.".into();
    write(&mut store, json!({ "op": "put", "skill": v2 })).unwrap(); // ok: test
    let got = store
        .get("550e8400-e29b-41d4-a716-446655440000")
        .unwrap()
        .unwrap(); // ok: test
    assert_eq!(got.version, "1.1.0");
    assert_eq!(got.artifacts.len(), 3);
    assert_eq!(got.artifacts[0].content, "A new overview.");
    assert_eq!(store.backend().len(Table::Artifacts), 3);
    assert_eq!(store.backend().len(Table::ArtifactIds), 3);
}

/// A backend whose commits fail: nothing may change.
struct Failing(MemoryBackend);

impl Backend for Failing {
    fn get(&self, t: Table, k: &str) -> promptloom::Result<Option<String>> {
        self.0.get(t, k)
    }
    fn scan(&self, t: Table, p: &str) -> promptloom::Result<Vec<(String, String)>> {
        self.0.scan(t, p)
    }
    fn commit(&mut self, _: &[Op]) -> promptloom::Result<()> {
        Err(Error::new(ErrorKind::StoreFailed, "disk full"))
    }
}

#[test]
fn invalid_writes_and_failing_backends_change_nothing() {
    let mut store = SkillTables::new(MemoryBackend::new());
    write(&mut store, json!({ "op": "create", "skill": seed_value() })).unwrap(); // ok: test
    let before = format!("{:?}", store.backend());
    let broken = std::fs::read_to_string("tests/skills/packages/broken-everything.json").unwrap(); // ok: test
    let e = write(
        &mut store,
        json!({ "op": "put", "skill": serde_json::from_str::<Value>(&broken).unwrap() }),
    )
    .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::InvalidSkill);
    assert!(e.details()["problems"].as_array().unwrap().len() > 20); // ok: test
    assert_eq!(format!("{:?}", store.backend()), before);
    let mut failing = SkillTables::new(Failing(store.backend().clone()));
    let mut v = seed_value();
    v["id"] = "x".into();
    v["name"] = "X".into();
    let e = failing
        .write(
            &Request::from_value(&json!({ "op": "create", "skill": v }), NOW).unwrap(),
            NOW,
        )
        .unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::StoreFailed);
    assert_eq!(format!("{:?}", failing.backend().0), before);
    // A corrupt row is a StoreFailed naming it, not a panic.
    let mut corrupt = store.backend().clone();
    corrupt
        .commit(&[Op::Put {
            table: Table::Skills,
            key: "550e8400-e29b-41d4-a716-446655440000".into(),
            value: "{\"id\":1".into(),
        }])
        .unwrap(); // ok: test
    let s = SkillTables::new(corrupt);
    let e = s.list().unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::StoreFailed);
    assert!(e.to_string().contains("skills row"), "{e}");
}

fn summaries(skills: &[Value]) -> Vec<promptloom::skill::SkillSummary> {
    skills
        .iter()
        .map(|v| promptloom::skill::import_value(v, NOW).unwrap().0.summary()) // ok: test
        .collect()
}

#[test]
fn the_catalog_merges_scopes_workspace_first() {
    let account = summaries(&[
        json!({ "name": "Consistency Checker", "description": "account copy", "source": "system" }),
        json!({ "name": "Only Account", "description": "x" }),
    ]);
    let workspace =
        summaries(&[json!({ "name": "Consistency Checker", "description": "my fork" })]);
    let merged = merge(workspace, account);
    assert_eq!(merged.len(), 2);
    assert_eq!(merged[0].scope, Scope::Workspace);
    assert_eq!(merged[0].summary.get_str("description"), Some("my fork"));
    let v = merged[0].to_value();
    assert_eq!(v["overrides"]["scope"], "account");
    assert_eq!(v["overrides"]["source"], "system");
    assert_eq!(merged[1].scope, Scope::Account);
    assert!(merged[1].overrides.is_none());
}

fn doc(name: &str, description: &str, tags: &[&str], intents: &[&str], triggers: &[&str]) -> Doc {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
    Doc {
        id: name.to_lowercase(),
        name: name.into(),
        description: description.into(),
        tags: s(tags),
        intent_patterns: s(intents),
        trigger_phrases: s(triggers),
        scope: "account".into(),
        enabled: true,
    }
}

fn catalog() -> SkillIndex {
    SkillIndex::build(vec![
        doc(
            "Consistency Checker",
            "Analyzes workspace content for contradictions and inconsistencies across pages.",
            &["analysis", "quality"],
            &["check consistency", "find contradictions"],
            &["are there any contradictions", "check for inconsistencies"],
        ),
        doc(
            "Timeline Auditor",
            "Checks a story's timeline for events out of order.",
            &["timeline"],
            &["audit timeline"],
            &["check the timeline"],
        ),
        doc(
            "Summarize",
            "Summarizes the open page in three sentences.",
            &["writing"],
            &["summarize page"],
            &[],
        ),
        doc(
            "Release Notes",
            "Writes release notes from merged pull requests.",
            &["git"],
            &[],
            &["write release notes"],
        ),
    ])
}

#[test]
fn the_ranker_puts_trigger_phrases_first_then_scores() {
    let ix = catalog();
    let opts = MatchOptions {
        k: 3,
        ..MatchOptions::default()
    };
    let r = ix.rank("Hey, are there any contradictions in chapter 3?", &opts);
    assert_eq!(ix.docs()[r[0].doc].name, "Consistency Checker");
    assert_eq!(r[0].tier, Tier::Exact);
    assert_eq!(
        r[0].trigger.as_deref(),
        Some("are there any contradictions")
    );
    assert!(r[0]
        .matched
        .iter()
        .any(|(f, t)| f.name() == "intent_patterns" && t.contains(&"contradiction".to_string())));
    // A trigger phrase beats a higher BM25 score elsewhere.
    let r = ix.rank(
        "check the timeline for contradictions and inconsistencies",
        &opts,
    );
    assert_eq!(ix.docs()[r[0].doc].name, "Timeline Auditor");
    assert_eq!(r[0].tier, Tier::Exact);
    assert_eq!(ix.docs()[r[1].doc].name, "Consistency Checker");
    assert_eq!(r[1].tier, Tier::Scored);
    // Scored: stems and prefixes (search as you type).
    let r = ix.rank("summarizing pages", &opts);
    assert_eq!(ix.docs()[r[0].doc].name, "Summarize");
    let r = ix.rank("relea", &opts);
    assert_eq!(ix.docs()[r[0].doc].name, "Release Notes");
    assert!(
        ix.rank("relea ", &opts).is_empty(),
        "a finished word is not a prefix"
    );
    // The name itself is an exact hit.
    let r = ix.rank("summarize", &opts);
    assert_eq!(
        (ix.docs()[r[0].doc].name.as_str(), r[0].tier),
        ("Summarize", Tier::Exact)
    );
    // Nothing in common: nothing.
    assert!(ix.rank("quantum chromodynamics", &opts).is_empty());
    // Deterministic: the same query twice gives the same JSON.
    let a = ix.to_json(&ix.rank("check", &opts)).to_string();
    assert_eq!(a, ix.to_json(&ix.rank("check", &opts)).to_string());
}

#[test]
fn embeddings_blend_in() {
    let mut ix = catalog();
    // Vectors: the Summarize skill is "close" to the query, the others are not.
    let flat = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.1, 0.0, 0.99, 0.0, 1.0, 0.1];
    assert!(!ix.set_vectors(&flat[..9], 3), "sizes must fit");
    assert!(ix.set_vectors(&flat, 3));
    let opts = MatchOptions {
        k: 4,
        query_vector: Some(vec![0.0, 0.0, 1.0]),
        blend: 0.5,
        ..MatchOptions::default()
    };
    // No word in common with Summarize, yet it ranks through its vector.
    let r = ix.rank("condense this", &opts);
    assert_eq!(ix.docs()[r[0].doc].name, "Summarize");
    assert!(r[0].similarity.unwrap() > 0.9); // ok: test
}

#[test]
fn the_index_reads_the_compact_text_form() {
    let text =
        "id1\u{1f}Name\u{1f}Desc\u{1f}a\u{1d}b\u{1f}\u{1f}say t1\u{1f}workspace\u{1e}id2\u{1f}Other";
    let ix = SkillIndex::from_text(text);
    assert_eq!(ix.len(), 2);
    let d = &ix.docs()[0];
    assert_eq!(
        (d.id.as_str(), d.name.as_str(), d.scope.as_str()),
        ("id1", "Name", "workspace")
    );
    assert_eq!(ix.docs()[1].name, "Other");
    let opts = MatchOptions::default();
    // Tags are two items; the trigger phrase is one; a missing field is empty.
    assert_eq!(ix.rank("b", &opts)[0].matched[0].0.name(), "tags");
    assert_eq!(ix.rank("please say t1", &opts)[0].tier, Tier::Exact);
    assert_eq!(ix.rank("other", &opts)[0].doc, 1);
}

#[test]
fn sync_plans_upserts_into_the_account_scope_only() {
    let mut account = SkillTables::new(MemoryBackend::new());
    let mut local = seed_value();
    local["name"] = "Local Only".into();
    local["id"] = "local".into();
    local.as_object_mut().unwrap().remove("artifacts"); // ok: test
    write(&mut account, json!({ "op": "create", "skill": local })).unwrap(); // ok: test
    let catalog = json!({ "skills": [
        { "name": "Consistency Checker", "description": "v1", "etag": "\"a1\"", "marketplace_id": "mk-1" },
        { "name": "Local Only", "description": "would overwrite a local skill", "etag": "\"b1\"" },
        { "name": "Broken", "description": "", "etag": "\"c1\"" },
    ]})
    .to_string();
    let plan = plan_sync(
        &catalog,
        &account.list().unwrap(),
        &["Consistency Checker"],
        NOW,
    )
    .unwrap(); // ok: test
    assert_eq!(plan.upserts.len(), 1);
    assert_eq!(plan.upserts[0].source.name(), "community");
    assert_eq!(plan.upserts[0].sync_etag.as_deref(), Some("\"a1\""));
    assert_eq!(plan.shadowed, ["Consistency Checker"]);
    assert_eq!(
        plan.skipped
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["Local Only", "Broken"]
    );
    account
        .write(&Request::Put(plan.upserts[0].clone()), NOW)
        .unwrap(); // ok: test
                   // Same ETag: unchanged. A new ETag: the stored skill is replaced in place (same id).
    let again = plan_sync(&catalog, &account.list().unwrap(), &[], NOW).unwrap(); // ok: test
    assert_eq!(again.unchanged, ["Consistency Checker"]);
    assert!(again.upserts.is_empty());
    let id = account
        .get_by_name("Consistency Checker")
        .unwrap()
        .unwrap()
        .id; // ok: test
    let changed = json!([{ "name": "Consistency Checker", "description": "v2", "etag": "\"a2\"", "marketplace_id": "mk-1" }]).to_string();
    let plan = plan_sync(&changed, &account.list().unwrap(), &[], NOW).unwrap(); // ok: test
    assert_eq!(plan.upserts[0].id, id);
    // Malformed catalogs fail whole.
    for bad in ["not json", "{\"skills\": 3}", "[1]", "\"x\""] {
        assert_eq!(
            plan_sync(bad, &[], &[], NOW).unwrap_err().kind(),
            ErrorKind::SyncFailed,
            "{bad}"
        ); // ok: test
    }
}

#[test]
fn hostile_packages_and_skill_md_never_panic() {
    let mut rng = Rng(0x5eed_5eed);
    let seed = seed();
    let md = std::fs::read_to_string("tests/skills/skill_md/pdf-tools/SKILL.md").unwrap(); // ok: test
    let junk = [
        "{", "}", "\"", ":", "---\n", "{{", "{%", "%}", "\u{0}", "é", "\n", " ", "[", "]", "null",
        "-", "#", "&a", "*a", "!!binary",
    ];
    for i in 0..3000 {
        let base = if i % 2 == 0 { &seed } else { &md };
        let mut s: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(s.len() + 1);
            match rng.below(3) {
                0 => {
                    let j: String = rng.pick(&junk).to_string();
                    for (k, c) in j.chars().enumerate() {
                        s.insert((at + k).min(s.len()), c);
                    }
                }
                1 if at < s.len() => {
                    s.remove(at);
                }
                _ => s.truncate(at),
            }
        }
        let text: String = s.into_iter().collect();
        let _ = import_package(&text, NOW);
        let _ = import_skill_md(&text, &[], Some("pdf-tools"), NOW);
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            let _ = validate_skill(&v);
        }
    }
    // Deep nesting in schemas and conditions is bounded.
    let mut deep = json!({ "type": "string" });
    for _ in 0..200 {
        deep = json!({ "not": deep });
    }
    let v = validate_skill(
        &json!({ "name": "d", "description": "d", "metadata": { "parameters": { "type": "object", "properties": { "x": deep } } } }),
    );
    assert!(!v.is_valid());
}

#[allow(dead_code)]
fn _uses(_: Skill) {}

#[test]
fn the_catalog_over_two_stores() {
    use promptloom::catalog::SkillCatalog;
    use promptloom::store::SkillStore;
    let mut ws = SkillTables::new(MemoryBackend::new());
    let (fork, _) = promptloom::skill::import_value(&json!({ "name": "Consistency Checker", "description": "my fork", "trigger_phrases": ["check my fork"] }), NOW).unwrap(); // ok: test
    ws.create_skill(&fork, NOW).unwrap(); // ok: test
    let mut cat = SkillCatalog::new(ws, SkillTables::new(MemoryBackend::new()));
    let report = cat.apply_sync("https://m.test/c.json", &seed(), Some("\"e1\""), NOW);
    assert_eq!(
        report.unwrap_err().kind(),
        ErrorKind::SyncFailed,
        "a bare package is not a catalog"
    ); // ok: test
    let body = json!({ "skills": [seed_value(), { "name": "Summarize", "description": "Summarizes.", "etag": "\"s\"" }] }).to_string();
    let report = cat
        .apply_sync("https://m.test/c.json", &body, Some("\"e1\""), NOW)
        .unwrap(); // ok: test
    assert_eq!(
        report["upserted"],
        json!(["Consistency Checker", "Summarize"])
    );
    assert_eq!(report["shadowed"], json!(["Consistency Checker"]));
    assert_eq!(
        cat.account
            .sync_etag("https://m.test/c.json")
            .unwrap()
            .as_deref(),
        Some("\"e1\"")
    ); // ok: test
    let list = cat.list().unwrap(); // ok: test
    assert_eq!(
        list.iter()
            .map(|e| (e.summary.name(), e.scope))
            .collect::<Vec<_>>(),
        [
            ("Consistency Checker", Scope::Workspace),
            ("Summarize", Scope::Account)
        ]
    );
    let (s, scope) = cat.get("Consistency Checker").unwrap().unwrap(); // ok: test
    assert_eq!(
        (s.description.as_str(), scope),
        ("my fork", Scope::Workspace)
    );
    assert_eq!(
        cat.load("Consistency Checker", &[ArtifactKind::PromptTemplate])
            .unwrap(),
        Some(vec![])
    ); // ok: test
    assert!(cat.load("Nope", &[]).unwrap().is_none()); // ok: test
    let r = cat
        .rank("please check my fork", &MatchOptions::default())
        .unwrap(); // ok: test
    assert_eq!(
        (r[0]["name"].as_str(), r[0]["tier"].as_str()),
        (Some("Consistency Checker"), Some("exact"))
    );
}

#[test]
fn hostile_catalog_text_and_queries_never_panic() {
    let mut rng = Rng(0xbad5_eed5);
    let alphabet: Vec<char> =
        "ab c\u{1d}\u{1e}\u{1f}é日-'\"!?.,:;0919ß\u{0}\u{301}İ\u{2014}\u{ff01}"
            .chars()
            .collect();
    let mut text = String::new();
    for _ in 0..20_000 {
        text.push(rng.pick(&alphabet));
    }
    let ix = SkillIndex::from_text(&text);
    for _ in 0..2_000 {
        let n = rng.below(40);
        let q: String = (0..n).map(|_| rng.pick(&alphabet)).collect();
        for prefix in [true, false] {
            let r = ix.rank(
                &q,
                &MatchOptions {
                    k: 1 + rng.below(20),
                    prefix,
                    ..MatchOptions::default()
                },
            );
            let _ = ix.to_json(&r);
        }
    }
    // A huge k is capped, an empty index answers nothing.
    assert!(
        ix.rank(
            "a",
            &MatchOptions {
                k: usize::MAX,
                ..MatchOptions::default()
            }
        )
        .len()
            <= 1000
    );
    assert!(SkillIndex::from_text("")
        .rank("anything", &MatchOptions::default())
        .is_empty());
}

/// Runs a planned read over a Rust backend, the way a host executes one.
fn read(b: &MemoryBackend, q: promptloom::store::reads::Query) -> Value {
    use promptloom::store::reads::{Rows, Step};
    let mut step = Step::Read(q.plan(), q);
    loop {
        match step {
            Step::Done(s) => return serde_json::from_str(&s).unwrap(), // ok: test
            Step::Read(plan, q) => {
                let mut rows = Rows::default();
                for (t, k) in &plan.gets {
                    rows.gets.push(b.get(*t, k).unwrap()); // ok: test
                }
                for (t, p) in &plan.scans {
                    rows.scans.push(b.scan(*t, p).unwrap()); // ok: test
                }
                step = q.finish(rows).unwrap(); // ok: test
            }
        }
    }
}

/// Skill-store reads planned by the core (what the JS glue executes over IndexedDB and KV)
/// answer what the Rust store answers.
#[test]
fn planned_skill_reads_answer_what_the_store_answers() {
    use promptloom::store::reads::Query;
    let mut store = SkillTables::new(MemoryBackend::default());
    write(&mut store, json!({ "op": "create", "skill": seed_value() })).unwrap(); // ok: test
    let b = store.backend();
    let skill = store
        .get("550e8400-e29b-41d4-a716-446655440000")
        .unwrap()
        .unwrap(); // ok: test
    let id = skill.id.clone();
    assert_eq!(read(b, Query::Skill { id: id.clone() }), skill.to_value());
    assert_eq!(
        read(
            b,
            Query::SkillByName {
                name: skill.name.clone()
            }
        ),
        skill.to_value()
    );
    assert_eq!(read(b, Query::Skill { id: "nope".into() }), Value::Null);
    assert_eq!(
        read(
            b,
            Query::SkillByName {
                name: "nope".into()
            }
        ),
        Value::Null
    );
    let by_name = read(
        b,
        Query::Summary {
            name_or_id: skill.name.clone(),
        },
    );
    let by_id = read(
        b,
        Query::Summary {
            name_or_id: id.clone(),
        },
    );
    assert_eq!(by_name, by_id);
    assert_eq!(by_id["id"], json!(id));
    assert!(by_id.get("artifacts").is_some_and(Value::is_array));
    let all = read(
        b,
        Query::Artifacts {
            skill: id.clone(),
            kinds: vec![],
        },
    );
    let want: Vec<Value> = store
        .get_artifacts(&id, &[])
        .unwrap()
        .iter()
        .map(|a| a.to_value())
        .collect(); // ok: test
    assert_eq!(all, Value::Array(want));
    let some = read(
        b,
        Query::Artifacts {
            skill: id.clone(),
            kinds: vec!["prompt_template".into(), "description".into()],
        },
    );
    let want: Vec<Value> = store
        .get_artifacts(
            &id,
            &[ArtifactKind::PromptTemplate, ArtifactKind::Description],
        )
        .unwrap() // ok: test
        .iter()
        .map(|a| a.to_value())
        .collect();
    assert_eq!(some, Value::Array(want));
    let art = &skill.artifacts[0];
    assert_eq!(
        read(b, Query::Artifact { id: art.id.clone() }),
        store.get_artifact(&art.id).unwrap().unwrap().to_value()
    ); // ok: test
    assert_eq!(read(b, Query::Artifact { id: "nope".into() }), Value::Null);
}

/// A whole-skill run's artifacts are the core's choice: runnable kinds by ordinal, a name
/// once, without a prompt template that is only a dspy_module's fallback — from the skill
/// and from its stored summary alike.
#[test]
fn run_order_skips_fallback_only_templates() {
    use promptloom::composer::wire::run_order_json;
    let (skill, _) = import_package(&seed(), NOW).unwrap(); // ok: test
    let want = json!(["Overview", "Cross-Reference Script", "DSPy Checker"]);
    let from_skill: Value =
        serde_json::from_str(&run_order_json(&skill.to_value().to_string()).unwrap()).unwrap(); // ok: test
    assert_eq!(from_skill, want);
    let mut store = SkillTables::new(MemoryBackend::default());
    write(&mut store, json!({ "op": "create", "skill": seed_value() })).unwrap(); // ok: test
    let summary = store.list().unwrap().remove(0).to_value(); // ok: test
    let from_summary: Value =
        serde_json::from_str(&run_order_json(&summary.to_string()).unwrap()).unwrap(); // ok: test
    assert_eq!(from_summary, want);
    // Without the fallback link, the template runs in its place.
    let mut v = skill.to_value();
    if let Some(arts) = v["artifacts"].as_array_mut() {
        for a in arts {
            a.as_object_mut().map(|o| o.remove("metadata"));
        }
    }
    let plain: Value = serde_json::from_str(&run_order_json(&v.to_string()).unwrap()).unwrap(); // ok: test
    assert_eq!(
        plain,
        json!([
            "Overview",
            "Check Prompt",
            "Cross-Reference Script",
            "DSPy Checker"
        ])
    );
    assert!(run_order_json("[").is_err());
}

#[test]
fn a_disabled_skill_is_indexed_but_never_matched() {
    let mut docs = vec![
        doc(
            "Release Notes",
            "Writes release notes.",
            &["git"],
            &[],
            &["write release notes"],
        ),
        doc(
            "Notes Writer",
            "Writes release notes too.",
            &["git"],
            &[],
            &["write release notes"],
        ),
    ];
    docs[0].enabled = false;
    let ix = SkillIndex::build(docs);
    assert_eq!(
        ix.len(),
        2,
        "both are indexed (positions keep their vectors)"
    );
    let opts = MatchOptions {
        k: 5,
        ..MatchOptions::default()
    };
    for query in ["write release notes", "release notes", "Release Notes"] {
        let names: Vec<&str> = ix
            .rank(query, &opts)
            .iter()
            .map(|r| ix.docs()[r.doc].name.as_str())
            .collect();
        assert_eq!(names, ["Notes Writer"], "{query}");
    }
}

#[test]
fn enabled_is_false_only_when_metadata_says_false() {
    use promptloom::skill::model::enabled;
    assert!(enabled(None));
    assert!(enabled(Some(&json!(true))));
    assert!(enabled(Some(&json!("false"))));
    assert!(!enabled(Some(&json!(false))));
}

#[test]
fn the_orchestrator_decides_from_the_catalog() {
    use promptloom::catalog::orchestrator::{decide_json, Action, Policy};
    use promptloom::catalog::SkillCatalog;
    use promptloom::store::SkillStore;
    let mut account = SkillTables::new(MemoryBackend::new());
    let (seeded, _) = import_package(&seed(), NOW).unwrap(); // ok: test
    account.create_skill(&seeded, NOW).unwrap(); // ok: test
    let mut ws = SkillTables::new(MemoryBackend::new());
    for name in ["Alpha Report", "Beta Report"] {
        let v = json!({ "name": name, "description": "Writes the weekly sales report.",
            "artifacts": [{ "kind": "prompt_template", "name": "main", "content": "Report" }] });
        let (s, _) = promptloom::skill::import_value(&v, NOW).unwrap(); // ok: test
        ws.create_skill(&s, NOW).unwrap(); // ok: test
    }
    let mut cat = SkillCatalog::new(ws, account);
    let opts = MatchOptions::default();
    let p = Policy::default();
    let d = cat
        .decide("are there any contradictions in chapter 2?", &opts, &p)
        .unwrap(); // ok: test
    assert_eq!((d.action, d.reason), (Action::Activate, "exact"));
    let v = d.to_value();
    assert_eq!(
        v["skills"][0]["artifacts"],
        json!(["Overview", "Cross-Reference Script", "DSPy Checker"])
    );
    let two = cat.decide("weekly sales report", &opts, &p).unwrap(); // ok: test
    assert_eq!((two.action, two.reason), (Action::Clarify, "ambiguous"));
    let both = Policy {
        max_skills: 2,
        ..Policy::default()
    };
    let d = cat.decide("weekly sales report", &opts, &both).unwrap(); // ok: test
    assert_eq!(d.activated(), ["Alpha Report", "Beta Report"]);
    let weak = cat
        .decide("forecast sales for the next quarter", &opts, &p)
        .unwrap(); // ok: test
    assert_eq!((weak.action, weak.reason), (Action::Research, "weak-match"));
    assert_eq!(weak.terms, ["forecast", "sale", "next", "quarter"]);
    assert_eq!(
        cat.decide("zebra", &opts, &p).unwrap().action, // ok: test
        Action::Direct
    );
    // The JSON entry the faces call: the same decision (the artifacts are the catalog's).
    let recs = cat.rank("weekly sales report", &opts).unwrap(); // ok: test
    let out: Value =
        serde_json::from_str(&decide_json("weekly sales report", &recs.to_string(), "").unwrap()) // ok: test
            .unwrap(); // ok: test
    assert_eq!(out, two.to_value());
    for (recs, policy, code) in [
        ("[", "", ErrorKind::InvalidRequest),
        ("{}", "", ErrorKind::InvalidRequest),
        ("[]", "{\"margin\":-1}", ErrorKind::InvalidOptions),
        ("[]", "[", ErrorKind::InvalidOptions),
    ] {
        assert_eq!(decide_json("q", recs, policy).unwrap_err().kind(), code);
        // ok: test
    }
}

#[test]
fn a_failed_dspy_executor_falls_back_with_the_reason() {
    use promptloom::dispatch::{
        fallback_after_failure, route, unsupported_template, Executors, Route,
    };
    use promptloom::skill::ArtifactKind;
    let model = Executors {
        model: true,
        ..Executors::default()
    };
    let r = route(ArtifactKind::DspyModule, "M", Some("P"), model).unwrap(); // ok: test
    assert_eq!(r, Route::Fallback("P".into()));
    let (f, why) =
        fallback_after_failure(ArtifactKind::DspyModule, "M", Some("P"), "sidecar down").unwrap(); // ok: test
    assert_eq!(
        (f.as_str(), why.as_str()),
        ("P", "the DSPy executor failed: sidecar down")
    );
    let e = fallback_after_failure(ArtifactKind::DspyModule, "M", None, "down").unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::AdapterFailed);
    let e = fallback_after_failure(ArtifactKind::PromptTemplate, "P", None, "x").unwrap_err(); // ok: test
    assert_eq!(e.kind(), ErrorKind::AdapterFailed);
    let content = "{\"template_id\":\"cot\"}";
    let offered = json!({ "version": "1", "templates": [{ "template_id": "cot" }] });
    assert_eq!(unsupported_template(content, &offered), None);
    let other = json!({ "version": "1", "templates": [{ "template_id": "predict" }] });
    assert!(unsupported_template(content, &other)
        .unwrap()
        .contains("`cot`")); // ok: test
    assert_eq!(
        unsupported_template(content, &json!({ "version": "1" })),
        None
    );
}

#[test]
fn list_filters_are_one_rule() {
    use promptloom::skill::model::ListFilter;
    use promptloom::store::SkillStore;
    let mut store = SkillTables::new(MemoryBackend::new());
    for (name, tags, enabled, source) in [
        ("On", json!(["pdf", "ocr"]), true, "system"),
        ("Off", json!(["pdf"]), false, "user"),
        ("Plain", json!([]), true, "user"),
    ] {
        let v = json!({ "name": name, "description": "d", "tags": tags, "source": source, "metadata": { "enabled": enabled } });
        let (s, _) = promptloom::skill::import_value(&v, NOW).unwrap(); // ok: test
        store.create_skill(&s, NOW).unwrap(); // ok: test
    }
    let list = store.list().unwrap(); // ok: test
    let names = |f: Value| -> Vec<String> {
        let f = ListFilter::from_value(&f).unwrap(); // ok: test
        list.iter()
            .filter(|s| f.keeps(s))
            .map(|s| s.name().to_owned())
            .collect()
    };
    assert_eq!(names(json!({ "tags": ["pdf"] })), ["Off", "On"]);
    assert_eq!(names(json!({ "tags": ["pdf"], "enabled": true })), ["On"]);
    assert_eq!(
        names(json!({ "source": "user", "enabled": null })),
        ["Off", "Plain"]
    );
    assert_eq!(names(json!(null)).len(), 3);
    for bad in [
        json!({ "tags": "pdf" }),
        json!({ "enabled": 1 }),
        json!({ "x": 1 }),
        json!([]),
    ] {
        assert_eq!(
            ListFilter::from_value(&bad).unwrap_err().kind(),
            ErrorKind::InvalidOptions
        ); // ok: test
    }
    let all: Vec<Value> = list.iter().map(|s| s.to_value()).collect();
    let kept: Value = serde_json::from_str(
        &promptloom::store::skills::filter_json(
            &Value::from(all).to_string(),
            r#"{"enabled":false}"#,
        )
        .unwrap(), // ok: test
    )
    .unwrap(); // ok: test
    assert_eq!(kept[0]["name"], "Off");
}
