//! `promptloom:core/arbiter`: conversions only; the logic is [`crate::arbiter`].

use super::exports::promptloom::core::arbiter::{
    self as wit, Guest, GuestArbiter, GuestSession, GuestSkillRegistry,
};
use super::keyvalue::{Bucketed, KvBackend};
use super::promptloom::core::types::Error as WitError;
use super::{to_wit, Component};
use crate::arbiter::approval::{self, Decision};
use crate::arbiter::session::{self, Session};
use crate::arbiter::{self, Arbiter, Event, Proposal, SkillRegistry};
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;

fn parse(text: &str, what: &str) -> Result<Value, WitError> {
    crate::wire::json_value(text, what, ErrorKind::InvalidRequest).map_err(to_wit)
}

fn array(text: &str, what: &str) -> Result<Vec<Value>, WitError> {
    match parse(text, what)? {
        Value::Array(a) => Ok(a),
        Value::Null => Ok(Vec::new()),
        _ => Err(to_wit(Error::new(
            ErrorKind::InvalidRequest,
            format!("{what} must be an array"),
        ))),
    }
}

impl Guest for Component {
    type SkillRegistry = RegistryResource;
    type Arbiter = ArbiterResource;
    type Session = SessionResource;

    fn session_machines() -> String {
        session::machines().json_text()
    }

    fn list_proposals(store: String, status: Option<String>) -> Result<String, WitError> {
        let b = Bucketed::open(&store).map_err(to_wit)?;
        approval::read_in(&b, status.as_deref(), false).map_err(to_wit)
    }

    fn approval_log(store: String) -> Result<String, WitError> {
        let b = Bucketed::open(&store).map_err(to_wit)?;
        approval::read_in(&b, None, true).map_err(to_wit)
    }

    fn approve_proposal(
        store: String,
        id: String,
        registry: wit::SkillRegistryBorrow<'_>,
        by: String,
        at: u64,
    ) -> Result<(String, wit::SkillRegistry), WitError> {
        let reg = registry.get::<RegistryResource>().inner.clone();
        let d = decide(&store, &id, true, by, String::new(), at, &reg)?;
        let next = d.registry.ok_or_else(|| {
            to_wit(Error::new(
                ErrorKind::Internal,
                "an approval built no registry",
            ))
        })?;
        Ok((
            d.row.json_text(),
            wit::SkillRegistry::new(RegistryResource {
                inner: Arc::new(next),
            }),
        ))
    }

    fn reject_proposal(
        store: String,
        id: String,
        by: String,
        reason: String,
        at: u64,
    ) -> Result<String, WitError> {
        let none = SkillRegistry::build(&[], &[], &[]).map_err(to_wit)?;
        Ok(decide(&store, &id, false, by, reason, at, &none)?
            .row
            .json_text())
    }

    fn install_approved(
        store: String,
        registry: wit::SkillRegistryBorrow<'_>,
    ) -> Result<wit::SkillRegistry, WitError> {
        let b = Bucketed::open(&store).map_err(to_wit)?;
        let rows =
            crate::store::Backend::scan(&b, crate::store::Table::Proposals, "").map_err(to_wit)?;
        let reg = registry.get::<RegistryResource>();
        let inner = approval::install(&reg.inner, &rows).map_err(to_wit)?;
        Ok(wit::SkillRegistry::new(RegistryResource {
            inner: Arc::new(inner),
        }))
    }

    fn validate_skill_spec(spec: String, tools: Option<Vec<String>>) -> Result<String, WitError> {
        let v = arbiter::validate::SpecText::parse(&spec).map_err(to_wit)?;
        let t: Option<BTreeSet<String>> = tools.map(crate::sort::set_of);
        let r = v.validate(t.as_ref());
        Ok(
            serde_json::json!({"ok": r.is_valid(), "problems": r.to_value()["problems"]})
                .json_text(),
        )
    }

    fn load_skill_specs(
        files: Vec<wit::SpecFile>,
        tools: Option<Vec<String>>,
    ) -> Result<String, WitError> {
        let pairs: Vec<(String, String)> = files.into_iter().map(|f| (f.path, f.text)).collect();
        let t: Option<BTreeSet<String>> = tools.map(crate::sort::set_of);
        let loaded = arbiter::load::load_files(&pairs, t.as_ref()).map_err(to_wit)?;
        Ok(serde_json::json!({ "specs": loaded.specs, "warnings": loaded.warnings }).json_text())
    }

    fn composition_spec(composition: String) -> Result<String, WitError> {
        Ok(arbiter::spec_of_composition(&parse(&composition, "the composition")?).json_text())
    }

    fn call_proposal(name: String, input: String, names: String) -> Result<String, WitError> {
        let i = parse(&input, "the call's input")?;
        let n = if names.is_empty() {
            Value::Null
        } else {
            parse(&names, "names")?
        };
        arbiter::offer::call_proposal(&name, &i, &n)
            .map(|v| v.json_text())
            .map_err(to_wit)
    }

    fn to_mermaid(spec: String, current: Option<String>) -> Result<String, WitError> {
        let v = parse(&spec, "the spec")?;
        let mut problems = crate::problems::Problems::default();
        let s = arbiter::spec::read(&v, &mut problems).ok_or_else(|| {
            to_wit(Error::new(
                ErrorKind::InvalidSkill,
                "the spec is not a JSON object",
            ))
        })?;
        Ok(arbiter::mermaid::to_mermaid(&s, current.as_deref()))
    }
}

/// The `skill-registry` resource.
pub struct RegistryResource {
    inner: Arc<SkillRegistry>,
}

impl GuestSkillRegistry for RegistryResource {
    fn build(
        specs: String,
        overrides: String,
        tools: Vec<String>,
    ) -> Result<wit::SkillRegistry, WitError> {
        let inner = SkillRegistry::build(
            &array(&specs, "the specs")?,
            &array(&overrides, "the overrides")?,
            &tools,
        )
        .map_err(to_wit)?;
        Ok(wit::SkillRegistry::new(RegistryResource {
            inner: Arc::new(inner),
        }))
    }

    fn names(&self) -> Vec<String> {
        self.inner.names().into_iter().map(str::to_owned).collect()
    }

    fn spec(&self, name: String) -> Option<String> {
        self.inner.get(&name).map(|s| s.to_value().json_text())
    }

    fn summary(&self) -> String {
        self.inner.summary()
    }
}

/// The `arbiter` resource.
pub struct ArbiterResource {
    inner: RefCell<Arbiter>,
    registry: Arc<SkillRegistry>,
    retries: u32,
}

impl ArbiterResource {
    /// The core's arbiter, to propose to.
    pub(crate) fn core_mut(&self) -> std::cell::RefMut<'_, Arbiter> {
        self.inner.borrow_mut()
    }
}

fn run_json(r: &arbiter::Run) -> String {
    crate::json_text::to_string(r).unwrap_or_default()
}

impl GuestArbiter for ArbiterResource {
    fn create(registry: wit::SkillRegistryBorrow<'_>, retries: u32) -> wit::Arbiter {
        let reg = registry.get::<RegistryResource>().inner.clone();
        wit::Arbiter::new(ArbiterResource {
            inner: RefCell::new(Arbiter::new(reg.clone()).with_retry_budget(retries)),
            registry: reg,
            retries,
        })
    }

    fn start(&self, lane: String, skill: String, input: String) -> Result<String, WitError> {
        let v = parse(&input, "the input")?;
        let mut a = self.inner.borrow_mut();
        a.start(&lane, &skill, v).map(run_json).map_err(to_wit)
    }

    fn propose(&self, lane: String, proposal: String) -> Result<String, WitError> {
        let p = Proposal::from_value(&parse(&proposal, "the proposal")?).map_err(to_wit)?;
        let o = self.inner.borrow_mut().propose(&lane, p).map_err(to_wit)?;
        Ok(crate::json_text::to_string(&o).unwrap_or_default())
    }

    fn cancel(&self, lane: String) -> Result<String, WitError> {
        self.inner
            .borrow_mut()
            .cancel(&lane)
            .map(run_json)
            .map_err(to_wit)
    }

    fn run(&self, lane: String) -> Option<String> {
        self.inner.borrow().run(&lane).map(run_json)
    }

    fn step_offer(&self, lane: String, tools: String) -> Result<String, WitError> {
        let t = if tools.is_empty() {
            Value::Null
        } else {
            parse(&tools, "tools")?
        };
        Ok(self
            .inner
            .borrow()
            .step_offer(&lane, &t)
            .map_err(to_wit)?
            .json_text())
    }

    fn step_context(&self, lane: String, context: String) -> Result<String, WitError> {
        let h = if context.is_empty() {
            Value::Null
        } else {
            parse(&context, "the context")?
        };
        Ok(self
            .inner
            .borrow()
            .step_context(&lane, &h)
            .map_err(to_wit)?
            .json_text())
    }

    fn hierarchy(&self, session: String) -> String {
        self.inner.borrow().hierarchy(&session).json_text()
    }

    fn replay(&self, log: String) -> Result<String, WitError> {
        let events: Vec<Event> = array(&log, "the log")?
            .iter()
            .map(Event::from_value)
            .collect::<crate::error::Result<_>>()
            .map_err(to_wit)?;
        Arbiter::replay(self.registry.clone(), &events, self.retries)
            .map(|r| run_json(&r))
            .map_err(to_wit)
    }
}

/// Decides a proposal in bucket `store`.
fn decide(
    store: &str,
    id: &str,
    approve: bool,
    by: String,
    reason: String,
    at: u64,
    registry: &SkillRegistry,
) -> Result<approval::Decided, WitError> {
    let mut b = Bucketed::open(store).map_err(to_wit)?;
    let d = Decision {
        approve,
        by,
        reason,
        at,
    };
    approval::decide_in(&mut b, id, &d, registry).map_err(to_wit)
}

/// The `session` resource: the core's session and its bucket.
pub struct SessionResource {
    inner: RefCell<Session>,
    backend: RefCell<KvBackend>,
}

impl SessionResource {
    /// A change: one core call, then its log rows written.
    fn step(&self, op: &str, lane: &str, a: &str, b: &str, at: u64) -> Result<String, WitError> {
        let mut s = self.inner.borrow_mut();
        let out = s.call(op, lane, a, b, at).map_err(to_wit)?;
        s.save_in(&mut *self.backend.borrow_mut()).map_err(to_wit)?;
        Ok(out)
    }

    /// A read.
    fn read(&self, op: &str, lane: &str, a: &str) -> Result<String, WitError> {
        self.inner
            .borrow_mut()
            .call(op, lane, a, "", 0)
            .map_err(to_wit)
    }
}

impl GuestSession for SessionResource {
    fn open(
        registry: wit::SkillRegistryBorrow<'_>,
        store: String,
        id: String,
        at: u64,
        retries: u32,
    ) -> Result<wit::Session, WitError> {
        let reg = registry.get::<RegistryResource>().inner.clone();
        let mut backend = Bucketed::open(&store).map_err(to_wit)?;
        let s = Session::open_in(&mut backend, reg, retries, &id, at).map_err(to_wit)?;
        Ok(wit::Session::new(SessionResource {
            inner: RefCell::new(s),
            backend: RefCell::new(backend),
        }))
    }

    fn lane_event(&self, lane: String, event: String, at: u64) -> Result<String, WitError> {
        self.step("lane_event", &lane, &event, "", at)
    }

    fn start_skill(
        &self,
        lane: String,
        skill: String,
        input: String,
        at: u64,
    ) -> Result<String, WitError> {
        self.step("start", &lane, &skill, &input, at)
    }

    fn propose(&self, lane: String, proposal: String, at: u64) -> Result<String, WitError> {
        self.step("propose", &lane, &proposal, "", at)
    }

    fn cancel(&self, lane: String, at: u64) -> Result<String, WitError> {
        self.step("cancel", &lane, "", "", at)
    }

    fn heartbeat(&self, at: u64) -> Result<(), WitError> {
        self.step("heartbeat", "", "", "", at).map(|_| ())
    }

    fn stop(&self, at: u64) -> Result<(), WitError> {
        self.step("stop", "", "", "", at).map(|_| ())
    }

    fn stale(&self, now: u64, timeout_ms: u64) -> bool {
        self.inner.borrow().stale(now, timeout_ms)
    }

    fn hierarchy(&self) -> String {
        self.inner.borrow().hierarchy().json_text()
    }

    fn log(&self) -> String {
        self.read("log", "", "").unwrap_or_default()
    }

    fn lane(&self, lane: String) -> String {
        self.inner.borrow().lane(&lane).to_owned()
    }

    fn run(&self, lane: String) -> Option<String> {
        self.read("run", &lane, "").ok().filter(|r| !r.is_empty())
    }

    fn step_context(&self, lane: String, context: String) -> Result<String, WitError> {
        self.read("step_context", &lane, &context)
    }

    fn step_offer(&self, lane: String, tools: String) -> Result<String, WitError> {
        self.read("step_offer", &lane, &tools)
    }
}
