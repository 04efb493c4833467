//! `promptloom:core/skills`: conversions only; the store logic is
//! [`crate::store::SkillStore`] over the key-value backend, the catalog logic is
//! [`crate::catalog`].

use super::exports::promptloom::core::skills::{
    self as wit, Guest, GuestSkillCatalog, GuestSkillStore,
};
use super::keyvalue::{Bucketed, KvBackend};
use super::promptloom::core::types::Error as WitError;
use super::{to_wit, Component};
use crate::catalog::{self, rank};
use crate::dispatch::trace::Export;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::skill::{self, wire, ArtifactKind, BundledFile};
use crate::store::skills::Request;
use crate::store::{SkillStore, SkillTables};
use serde_json::{json, Value};
use std::cell::RefCell;

fn request(op: &str, field: &str, text: &str, now: &str) -> Result<Request> {
    let v = crate::wire::json_value(text, &format!("the {field}"), ErrorKind::InvalidSkill)?;
    Request::from_value(&json!({ "op": op, field: v }), now)
}

fn kinds(list: &[String]) -> Result<Vec<ArtifactKind>> {
    list.iter()
        .map(|k| {
            ArtifactKind::parse(k).ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOptions,
                    format!("unknown artifact kind `{k}`"),
                )
            })
        })
        .collect()
}

fn artifacts_json(list: &[skill::SkillArtifact]) -> String {
    Value::Array(list.iter().map(skill::SkillArtifact::to_value).collect()).json_text()
}

impl Guest for Component {
    type SkillStore = StoreResource;
    type SkillCatalog = CatalogResource;

    fn validate_skill(skill_package: String) -> std::result::Result<String, WitError> {
        wire::validate_json(&skill_package).map_err(to_wit)
    }

    fn import_package(skill_package: String, now: String) -> std::result::Result<String, WitError> {
        wire::import_package_json(&skill_package, &now).map_err(to_wit)
    }

    fn seed_skill_specs(document: String) -> std::result::Result<String, WitError> {
        crate::store::seed::specs_json(&document).map_err(to_wit)
    }

    fn import_skill_md(
        text: String,
        files: Vec<wit::BundledFile>,
        dir: Option<String>,
        now: String,
    ) -> std::result::Result<String, WitError> {
        let files: Vec<BundledFile> = files
            .into_iter()
            .map(|f| BundledFile {
                path: f.path,
                content: f.content,
                base64: f.base64,
            })
            .collect();
        wire::import_skill_md_json(&text, &files, dir.as_deref(), &now).map_err(to_wit)
    }

    fn export_skill_md(skill: String) -> std::result::Result<String, WitError> {
        wire::export_skill_md_json(&skill).map_err(to_wit)
    }

    fn decide(
        query: String,
        recommendations: String,
        policy: String,
    ) -> std::result::Result<String, WitError> {
        catalog::orchestrator::decide_json(&query, &recommendations, &policy).map_err(to_wit)
    }

    fn model_family(model: String) -> String {
        skill::model_family(&model)
    }
}

/// The `skill-store` resource.
pub struct StoreResource {
    store: RefCell<SkillTables<KvBackend>>,
}

impl StoreResource {
    fn write(&self, op: &str, field: &str, text: &str, now: &str) -> Result<String> {
        let req = request(op, field, text, now)?;
        Ok(self.store.borrow_mut().write(&req, now)?.json_text())
    }

    /// The traces, filtered, in the export form `how`.
    fn export(
        &self,
        session_id: Option<String>,
        skill_id: Option<String>,
        artifact_id: Option<String>,
        how: Export,
    ) -> std::result::Result<String, WitError> {
        self.store
            .borrow()
            .export_traces(
                session_id.as_deref(),
                skill_id.as_deref(),
                artifact_id.as_deref(),
                how,
            )
            .map_err(to_wit)
    }
}

impl StoreResource {
    /// The core's tables (for the artifact run's driver).
    pub(crate) fn tables(&self) -> std::cell::Ref<'_, SkillTables<KvBackend>> {
        self.store.borrow()
    }

    /// The core's tables, to write.
    pub(crate) fn tables_mut(&self) -> std::cell::RefMut<'_, SkillTables<KvBackend>> {
        self.store.borrow_mut()
    }
}

impl GuestSkillStore for StoreResource {
    fn open(name: String) -> std::result::Result<wit::SkillStore, WitError> {
        let backend = Bucketed::open(&name).map_err(to_wit)?;
        Ok(wit::SkillStore::new(StoreResource {
            store: RefCell::new(SkillTables::new(backend)),
        }))
    }

    fn list(&self) -> std::result::Result<String, WitError> {
        let list = self.store.borrow().list().map_err(to_wit)?;
        Ok(Value::Array(list.iter().map(skill::SkillSummary::to_value).collect()).json_text())
    }

    fn list_filtered(&self, filter: String) -> std::result::Result<String, WitError> {
        let f = skill::model::ListFilter::from_text(&filter).map_err(to_wit)?;
        let list = self.store.borrow().list().map_err(to_wit)?;
        Ok(Value::Array(
            list.iter()
                .filter(|s| f.keeps(s))
                .map(skill::SkillSummary::to_value)
                .collect(),
        )
        .json_text())
    }

    fn get(&self, id: String) -> std::result::Result<Option<String>, WitError> {
        let s = self.store.borrow().get(&id).map_err(to_wit)?;
        Ok(s.map(|s| s.to_value().json_text()))
    }

    fn get_by_name(&self, name: String) -> std::result::Result<Option<String>, WitError> {
        let s = self.store.borrow().get_by_name(&name).map_err(to_wit)?;
        Ok(s.map(|s| s.to_value().json_text()))
    }

    fn get_artifacts(
        &self,
        skill_id: String,
        kind_names: Vec<String>,
    ) -> std::result::Result<String, WitError> {
        let ks = kinds(&kind_names).map_err(to_wit)?;
        let list = self
            .store
            .borrow()
            .get_artifacts(&skill_id, &ks)
            .map_err(to_wit)?;
        Ok(artifacts_json(&list))
    }

    fn get_artifact(&self, id: String) -> std::result::Result<Option<String>, WitError> {
        let a = self.store.borrow().get_artifact(&id).map_err(to_wit)?;
        Ok(a.map(|a| a.to_value().json_text()))
    }

    fn create(&self, skill: String, now: String) -> std::result::Result<String, WitError> {
        self.write("create", "skill", &skill, &now).map_err(to_wit)
    }

    fn put(&self, skill: String, now: String) -> std::result::Result<String, WitError> {
        self.write("put", "skill", &skill, &now).map_err(to_wit)
    }

    fn update(&self, skill: String, now: String) -> std::result::Result<String, WitError> {
        self.write("update", "skill", &skill, &now).map_err(to_wit)
    }

    fn delete(&self, id: String) -> std::result::Result<String, WitError> {
        let req = Request::Delete(id);
        let out = self.store.borrow_mut().write(&req, "").map_err(to_wit)?;
        Ok(out.json_text())
    }

    fn add_artifact(&self, artifact: String, now: String) -> std::result::Result<String, WitError> {
        self.write("add_artifact", "artifact", &artifact, &now)
            .map_err(to_wit)
    }

    fn update_artifact(
        &self,
        artifact: String,
        now: String,
    ) -> std::result::Result<String, WitError> {
        self.write("update_artifact", "artifact", &artifact, &now)
            .map_err(to_wit)
    }

    fn delete_artifact(&self, id: String, now: String) -> std::result::Result<String, WitError> {
        let req = Request::DeleteArtifact(id);
        let out = self.store.borrow_mut().write(&req, &now).map_err(to_wit)?;
        Ok(out.json_text())
    }

    fn record_trace(&self, trace: String) -> std::result::Result<String, WitError> {
        let v: Value = serde_json::from_str(&trace)
            .map_err(|e| to_wit(Error::json(ErrorKind::InvalidRequest, "the trace", &e)))?;
        let row = self.store.borrow_mut().record_trace(v).map_err(to_wit)?;
        Ok(row.json_text())
    }

    fn export_traces(
        &self,
        session_id: Option<String>,
        skill_id: Option<String>,
        artifact_id: Option<String>,
    ) -> std::result::Result<String, WitError> {
        self.export(session_id, skill_id, artifact_id, Export::JsonLines)
    }

    fn export_dspy_dataset(
        &self,
        session_id: Option<String>,
        skill_id: Option<String>,
        artifact_id: Option<String>,
    ) -> std::result::Result<String, WitError> {
        self.export(session_id, skill_id, artifact_id, Export::Dspy)
    }

    fn trace_page(
        &self,
        session_id: Option<String>,
        skill_id: Option<String>,
        artifact_id: Option<String>,
        after: Option<String>,
        page_size: u32,
    ) -> std::result::Result<String, WitError> {
        self.store
            .borrow()
            .trace_page_json(
                session_id.as_deref(),
                skill_id.as_deref(),
                artifact_id.as_deref(),
                after.as_deref(),
                usize::try_from(page_size).unwrap_or(usize::MAX),
            )
            .map_err(to_wit)
    }

    fn call_authoring_tool(
        &self,
        name: String,
        arguments: String,
        composition: String,
        now: String,
    ) -> std::result::Result<String, WitError> {
        let parse = |t: &str, what: &str| -> std::result::Result<Value, WitError> {
            serde_json::from_str(t).map_err(|e| {
                to_wit(Error::json(
                    ErrorKind::InvalidRequest,
                    &format!("the {what}"),
                    &e,
                ))
            })
        };
        let args = parse(&arguments, "arguments")?;
        let comp = parse(&composition, "composition")?;
        let mut store = self.store.borrow_mut();
        crate::composer::authoring::call(&mut *store, &name, &args, &comp, &now)
            .map(|v| v.json_text())
            .map_err(to_wit)
    }

    fn seed(&self, document: String, now: String) -> std::result::Result<String, WitError> {
        let seed = crate::store::seed::read_seed(&document, &now).map_err(to_wit)?;
        let report = self.store.borrow_mut().seed(&seed, &now).map_err(to_wit)?;
        Ok(report.json_text())
    }

    fn skill_specs(&self) -> std::result::Result<String, WitError> {
        let specs = self.store.borrow().skill_specs().map_err(to_wit)?;
        Ok(Value::Array(specs).json_text())
    }
}

pub struct CatalogResource {
    inner: RefCell<catalog::SkillCatalog<SkillTables<KvBackend>, SkillTables<KvBackend>>>,
}

fn scoped(s: skill::Skill, scope: catalog::Scope) -> String {
    let mut v = s.to_value();
    if let Value::Object(o) = &mut v {
        o.insert("scope".into(), scope.name().into());
    }
    v.json_text()
}

impl GuestSkillCatalog for CatalogResource {
    fn open(
        workspace: String,
        account: String,
    ) -> std::result::Result<wit::SkillCatalog, WitError> {
        let ws = Bucketed::open(&workspace).map_err(to_wit)?;
        let acc = Bucketed::open(&account).map_err(to_wit)?;
        Ok(wit::SkillCatalog::new(CatalogResource {
            inner: RefCell::new(catalog::SkillCatalog::new(
                SkillTables::new(ws),
                SkillTables::new(acc),
            )),
        }))
    }

    fn list(&self) -> std::result::Result<String, WitError> {
        let entries = self.inner.borrow().list().map_err(to_wit)?;
        Ok(Value::Array(entries.iter().map(catalog::Entry::to_value).collect()).json_text())
    }

    fn get(&self, name: String) -> std::result::Result<Option<String>, WitError> {
        let found = self.inner.borrow().get(&name).map_err(to_wit)?;
        Ok(found.map(|(s, scope)| scoped(s, scope)))
    }

    fn load(
        &self,
        name: String,
        kind_names: Vec<String>,
    ) -> std::result::Result<Option<String>, WitError> {
        let ks = kinds(&kind_names).map_err(to_wit)?;
        let list = self.inner.borrow().load(&name, &ks).map_err(to_wit)?;
        Ok(list.map(|l| artifacts_json(&l)))
    }

    fn match_(&self, query: String, k: u32) -> std::result::Result<String, WitError> {
        let opts = rank::MatchOptions {
            k: k as usize,
            ..rank::MatchOptions::default()
        };
        let out = self
            .inner
            .borrow_mut()
            .rank(&query, &opts)
            .map_err(to_wit)?;
        Ok(out.json_text())
    }

    fn decide(
        &self,
        query: String,
        k: u32,
        policy: String,
    ) -> std::result::Result<String, WitError> {
        let opts = rank::MatchOptions {
            k: k as usize,
            ..rank::MatchOptions::default()
        };
        let policy = catalog::orchestrator::Policy::from_text(&policy).map_err(to_wit)?;
        let d = self
            .inner
            .borrow_mut()
            .decide(&query, &opts, &policy)
            .map_err(to_wit)?;
        Ok(d.to_value().json_text())
    }

    fn refresh(&self) {
        self.inner.borrow_mut().refresh();
    }

    fn skill_specs(&self) -> std::result::Result<String, WitError> {
        let specs = self.inner.borrow().skill_specs().map_err(to_wit)?;
        Ok(Value::Array(specs).json_text())
    }

    fn sync_etag(&self, url: String) -> std::result::Result<Option<String>, WitError> {
        self.inner.borrow().account.sync_etag(&url).map_err(to_wit)
    }

    fn apply_sync(
        &self,
        url: String,
        body: String,
        etag: Option<String>,
        now: String,
    ) -> std::result::Result<String, WitError> {
        let report = self
            .inner
            .borrow_mut()
            .apply_sync(&url, &body, etag.as_deref(), &now)
            .map_err(to_wit)?;
        Ok(report.json_text())
    }
}
