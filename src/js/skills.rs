//! Skill packages, the skill store's plans and the catalog for JS: conversions only. The
//! glue (`pkg/src/skills.js`) drives the storage backends and `fetch`.

use super::{inbox_strings, js_err, parse, with_inbox_text};
use crate::catalog::{self, rank, sync};
use crate::error::ErrorKind;
use crate::json_text::{JsonText, ObjectText};
use crate::skill::{self, wire};
use crate::store::seed;
use crate::store::skills::{self as layout, Plan, Request, Writer};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;

/// Key/value rows from the inbox: `key NUL value NUL …`.
fn rows(text: &str) -> Vec<(String, String)> {
    let mut it = text.split('\0');
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k.to_owned(), v.to_owned()));
    }
    out
}

/// Every problem of a package (JSON) → `{ valid, problems }`.
#[wasm_bindgen(js_name = validateSkill)]
pub fn validate_skill(json: &str) -> Result<String, JsValue> {
    wire::validate_json(json).map_err(js_err)
}

/// Imports a JSON package → `{ skill, warnings }`.
#[wasm_bindgen(js_name = importPackage)]
pub fn import_package(json: &str, now: &str) -> Result<String, JsValue> {
    wire::import_package_json(json, now).map_err(js_err)
}

/// Imports a SKILL.md. `files` is a JSON array of `{ path, content, base64 }`; `dir` the
/// directory name ("" when unknown) → `{ skill, problems }`.
#[wasm_bindgen(js_name = importSkillMd)]
pub fn import_skill_md(text: &str, files: &str, dir: &str, now: &str) -> Result<String, JsValue> {
    let bundled = wire::files_from_json(files).map_err(js_err)?;
    let dir = (!dir.is_empty()).then_some(dir);
    wire::import_skill_md_json(text, &bundled, dir, now).map_err(js_err)
}

/// Exports a skill (package JSON) as SKILL.md → `{ text, files, dropped }`.
#[wasm_bindgen(js_name = exportSkillMd)]
pub fn export_skill_md(json: &str) -> Result<String, JsValue> {
    wire::export_skill_md_json(json).map_err(js_err)
}

/// The model family of a model id or provider name.
#[wasm_bindgen(js_name = modelFamily)]
pub fn model_family(model: &str) -> String {
    skill::model_family(model)
}

/// The order to list skills in (`skill::model::listing_order`), given their names and ids, each
/// list joined by the field frame: the indices, in listing order.
#[wasm_bindgen(js_name = summaryOrder)]
pub fn summary_order(names: &str, ids: &str) -> Vec<u32> {
    let names: Vec<&str> = names.split(crate::frame::FIELD).collect();
    let ids: Vec<&str> = ids.split(crate::frame::FIELD).collect();
    let key = |i: u32| {
        let i = i as usize;
        (
            names.get(i).copied().unwrap_or(""),
            ids.get(i).copied().unwrap_or(""),
        )
    };
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    crate::sort::sort_by(&mut order, |&a, &b| {
        skill::model::listing_order(key(a), key(b))
    });
    order
}

/// The index (in the given JSON array of artifacts) of the variant to use for `model`, or
/// -1 when the array is empty.
#[wasm_bindgen(js_name = selectVariant)]
pub fn select_variant(artifacts: &str, model: &str) -> Result<i32, JsValue> {
    let chosen = wire::select_variant_json(artifacts, model).map_err(js_err)?;
    Ok(chosen.map_or(-1, |i| i32::try_from(i).unwrap_or(-1)))
}

/// One write of the skill store ([`Writer`]), driven by the glue inside its write
/// transactions.
#[wasm_bindgen(js_name = SkillWrite)]
pub struct JsSkillWrite {
    w: Writer,
}

#[wasm_bindgen(js_class = SkillWrite)]
impl JsSkillWrite {
    /// Reads and validates a request (`{ op, skill | artifact | id }`, the one string in the
    /// inbox); `now` stamps rows.
    #[wasm_bindgen(constructor)]
    pub fn new(lens: &[u32], now: &str) -> Result<JsSkillWrite, JsValue> {
        let input = inbox_strings(lens)?;
        let request = input.first().map(String::as_str).unwrap_or_default();
        let v = parse(request, "the request", ErrorKind::InvalidOptions)?;
        let req = Request::from_value(&v, now).map_err(js_err)?;
        Ok(JsSkillWrite {
            w: Writer::new(req, now),
        })
    }

    /// The rows to read in the next write transaction: `[[table, key], …]`.
    pub fn keys(&self) -> String {
        let keys = self
            .w
            .keys()
            .iter()
            .map(|(t, k)| Value::Array(vec![t.name().into(), k.as_str().into()]))
            .collect();
        layout::text(&Value::Array(keys))
    }

    /// Plans with the values of `keys()` (JSON `[value | null, …]`): returns
    /// `{"read":[[table,key],…]}` (more rows: start the transaction over), or
    /// `{"ops":[…],"result":…}` followed by the row values, each after a NUL (each op names
    /// its value by position, `at`; JSON text never holds a raw NUL, and no row is escaped a
    /// second time inside another JSON string).
    pub fn build(&mut self, values: &str) -> Result<String, JsValue> {
        let values: Vec<Option<String>> = match parse(values, "the rows read", ErrorKind::Internal)?
        {
            Value::Array(a) => a
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        plan_text(self.w.build(&values).map_err(js_err)?)
    }

    /// The batch lost to another writer: the next transaction reads first.
    pub fn conflicted(&mut self) {
        self.w.conflicted();
    }
}

fn plan_text(plan: Plan) -> Result<String, JsValue> {
    let mut w = ObjectText::new(512);
    let mut values: Vec<&str> = Vec::new();
    match &plan {
        Plan::Read(keys) => {
            let keys = keys
                .iter()
                .map(|(t, k)| Value::Array(vec![t.name().into(), k.as_str().into()]))
                .collect();
            w.value("read", &Value::Array(keys));
        }
        Plan::Write { ops, result, row } => {
            // A skill write's result is the summary its skill row holds: sent once
            // (`result_at` names that row's value), and the row's index fields come from it.
            let mut result_at = None;
            w.key("ops");
            w.items(ops.len(), |w, i| {
                let Some(op) = ops.get(i) else { return };
                let index = match op.row() {
                    (_, _, Some(_)) if *row == Some(i) => {
                        result_at = Some(values.len());
                        let mut ix = Map::new();
                        for f in ["name", "source"] {
                            ix.insert(f.into(), result.get(f).cloned().unwrap_or(Value::Null));
                        }
                        Some(ix)
                    }
                    (table, key, Some(value)) => layout::index_fields(table, key, value),
                    (_, _, None) => None,
                };
                super::write_op(op, w, &mut values, index.as_ref());
            });
            match result_at {
                Some(at) => w.value("result_at", &at.into()),
                None => w.value("result", result),
            }
        }
    }
    let mut text = w.finish();
    for v in values {
        text.push('\0');
        text.push_str(v);
    }
    Ok(text)
}

/// Skill rows (`key NUL value NUL …` in the inbox) → a JSON array of summaries.
#[wasm_bindgen(js_name = skillSummaries)]
pub fn skill_summaries(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let text = input.first().map(String::as_str).unwrap_or_default();
    let mut list = summaries(text)?;
    skill::model::sort_summaries(&mut list);
    let mut out = String::with_capacity(text.len() + 2);
    out.push('[');
    for (i, s) in list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&layout::text(&s.to_value()));
    }
    out.push(']');
    Ok(out)
}

fn summaries(text: &str) -> Result<Vec<skill::SkillSummary>, JsValue> {
    layout::read_summaries(&rows(text)).map_err(js_err)
}

/// The merged catalog (inbox: workspace skill rows, account skill rows) → JSON array.
#[wasm_bindgen(js_name = catalogList)]
pub fn catalog_list(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let ws = rows(input.first().map(String::as_str).unwrap_or_default());
    let acc = rows(input.get(1).map(String::as_str).unwrap_or_default());
    catalog::list_json(&ws, &acc).map_err(js_err)
}

/// A migration to a seed, or a marketplace sync's writes ([`seed::Migrate`]), which the glue
/// runs on its backend one step at a time.
#[wasm_bindgen(js_name = SkillMigration)]
pub struct JsMigration {
    m: seed::Migrate,
    first: String,
}

#[wasm_bindgen(js_class = SkillMigration)]
impl JsMigration {
    /// A migration (inbox: `seed`, then the seed document) or a sync (inbox: `sync`, the
    /// 200 body, the account's skill rows, the workspace names NUL-separated, the response's
    /// ETag, the catalog URL); its first step waits in [`Self::first`].
    #[wasm_bindgen(constructor)]
    pub fn new(lens: &[u32], now: &str) -> Result<JsMigration, JsValue> {
        let input = inbox_strings(lens)?;
        let at = |i: usize| input.get(i).map(String::as_str).unwrap_or_default();
        let (m, step) = if at(0) == "seed" {
            seed::Migrate::seed(seed::read_seed(at(1), now).map_err(js_err)?, now)
        } else {
            let names: Vec<&str> = at(3).split('\0').filter(|n| !n.is_empty()).collect();
            let account = crate::store::skills::read_summaries(&rows(at(2))).map_err(js_err)?;
            let plan = sync::plan_sync(at(1), &account, &names, now).map_err(js_err)?;
            let report = plan.report();
            let commit = crate::store::skills::state_op(at(5), at(4), now);
            seed::Migrate::writes(plan.upserts, Some(commit), report)
        };
        Ok(JsMigration {
            first: m.step_json(&step),
            m,
        })
    }

    /// The first step (JSON: `{ do, … }`, see [`seed::Step::to_json`]).
    pub fn first(&mut self) -> String {
        std::mem::take(&mut self.first)
    }

    /// What the backend did: `row` (the row's text), `absent`, `rows` (the skill rows, NUL
    /// framed), `put` (the put's error JSON, or "" when written), `done` → the next step.
    pub fn next(&mut self, what: &str, payload: &str) -> Result<String, JsValue> {
        let input = match what {
            "row" => seed::Input::Row(Some(payload.to_owned())),
            "absent" => seed::Input::Row(None),
            "rows" => seed::Input::Rows(rows(payload)),
            "put" if payload.is_empty() => seed::Input::Put(None),
            "put" => {
                // The glue's error: its code, then its message.
                let (code, message) = payload.split_once('\0').unwrap_or((payload, ""));
                let kind = crate::error::ErrorKind::from_code(code)
                    .unwrap_or(crate::error::ErrorKind::StoreFailed);
                seed::Input::Put(Some(crate::error::Error::new(kind, message.to_owned())))
            }
            _ => seed::Input::Done,
        };
        let step = self.m.next(input).map_err(js_err)?;
        Ok(self.m.step_json(&step))
    }
}

/// The system skills' SkillSpecs (inbox: the question, then its strings):
/// - `specs`: one store's skill rows, or a workspace's then an account's (merged as the
///   catalog merges them) → the SkillSpecs they carry, a JSON array;
/// - `seed-specs`: a seed document → the SkillSpecs it carries.
#[wasm_bindgen(js_name = skillSeed)]
pub fn skill_seed(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let at = |i: usize| input.get(i).map(String::as_str);
    let out = match at(0).unwrap_or_default() {
        "specs" => {
            catalog::skill_specs_json(&rows(at(1).unwrap_or_default()), at(2).map(rows).as_deref())
        }
        _ => seed::specs_json(at(1).unwrap_or_default()),
    };
    out.map_err(js_err)
}

/// The summaries that pass a filter (inbox: summaries JSON array, filter JSON `{ source?,
/// tags?, enabled? }`) → a JSON array.
#[wasm_bindgen(js_name = filterSkills)]
pub fn filter_skills(lens: &[u32]) -> Result<String, JsValue> {
    let input = inbox_strings(lens)?;
    let at = |n: usize| input.get(n).map(String::as_str).unwrap_or_default();
    layout::filter_json(at(0), at(1)).map_err(js_err)
}

/// The phase-1 index over a catalog.
#[wasm_bindgen(js_name = SkillIndex)]
pub struct JsSkillIndex {
    inner: rank::SkillIndex,
}

#[wasm_bindgen(js_class = SkillIndex)]
impl JsSkillIndex {
    /// Builds the index from documents in the compact text form (in the inbox, in pieces
    /// the glue wrote one after the other; see `catalog::rank::SkillIndex::from_text`).
    #[wasm_bindgen(constructor)]
    pub fn new(lens: &[u32]) -> Result<JsSkillIndex, JsValue> {
        let inner = with_inbox_text(lens, rank::SkillIndex::from_text)?;
        Ok(JsSkillIndex { inner })
    }

    /// How many skills are indexed.
    pub fn size(&self) -> usize {
        self.inner.len()
    }

    /// Sets one embedding per skill (`dim` numbers each, in catalog order).
    #[wasm_bindgen(js_name = setVectors)]
    pub fn set_vectors(&mut self, flat: &[f32], dim: usize) -> bool {
        self.inner.set_vectors(flat, dim)
    }

    /// Ranks the catalog for `query` (in the inbox) → JSON recommendations.
    pub fn rank(
        &self,
        lens: &[u32],
        k: usize,
        prefix: bool,
        query_vector: Option<Vec<f32>>,
        blend: f32,
    ) -> Result<String, JsValue> {
        let input = inbox_strings(lens)?;
        let query = input.first().map(String::as_str).unwrap_or_default();
        let opts = rank::MatchOptions {
            k,
            prefix,
            query_vector,
            blend: blend.clamp(0.0, 1.0),
        };
        let recs = self.inner.rank(query, &opts);
        Ok(self.inner.to_json(&recs).json_text())
    }
}
