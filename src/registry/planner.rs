//! What the planner sees, generated from the registry and never hand-written: the tool
//! section of a provider request (each provider's tool shape, byte-stable), a compact
//! catalog text, and a top-K router that inlines only the contracts a message needs — with
//! a `request_more_tools` tool whose call pages to the next candidates — under a token
//! budget whatever the registry's size. Plus the registry's hygiene: the overlap audit and
//! the review of owner-less, deprecated and rarely-called contracts.

use super::{Contract, Registry};
use crate::body::{write, SlotMode};
use crate::catalog::rank::{self, Doc, MatchOptions, SkillIndex};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::lower::{LowerOptions, Provider, Report, Tool};
use litemap::LiteMap;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The name of the tool that asks for more candidates.
pub const REQUEST_MORE: &str = "request_more_tools";

/// How the section is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerOptions {
    /// The provider whose tool shape is written.
    pub provider: Provider,
    /// How many contracts to inline at most (default 8).
    pub k: usize,
    /// The estimated tokens the inlined tools may take (default 6,000).
    pub token_budget: usize,
    /// The caller, when known: only contracts this (surface, user, tier, flags) may call
    /// are offered, at the version they would run.
    pub surface: Option<String>,
    /// The user (canary routing).
    pub user: Option<String>,
    /// The tier.
    pub tier: Option<String>,
    /// The feature flags.
    pub flags: Option<Vec<String>>,
    /// Contracts already offered (a `request_more_tools` call pages past them).
    pub exclude: Vec<String>,
    /// The query's embedding, blended with the lexical rank when contracts have vectors.
    pub query_vector: Option<Vec<f32>>,
    /// Epoch milliseconds (sunsets).
    pub now_ms: f64,
}

impl PlannerOptions {
    /// Defaults for `provider`.
    pub fn new(provider: Provider) -> Self {
        PlannerOptions {
            provider,
            k: 8,
            token_budget: 6_000,
            surface: None,
            user: None,
            tier: None,
            flags: None,
            exclude: Vec::new(),
            query_vector: None,
            now_ms: 0.0,
        }
    }

    /// From `{ provider, k?, token_budget?, surface?, user?, tier?, flags?, exclude?,
    /// query_vector?, now? }`.
    pub fn from_value(v: &Value) -> Result<Self> {
        let bad = |m: &str, at: &str| Error::new(ErrorKind::InvalidOptions, m).at(at);
        let o = v
            .as_object()
            .ok_or_else(|| bad("the planner options are an object", "$"))?;
        let provider = Provider::parse(o.get("provider").and_then(Value::as_str).unwrap_or(""))?;
        let mut p = PlannerOptions::new(provider);
        let count = |k: &str| -> Result<Option<usize>> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(|n| Some(n as usize))
                    .ok_or_else(|| bad(&format!("`{k}` is a count"), k)),
            }
        };
        let text = |k: &str| -> Result<Option<String>> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(&format!("`{k}` is a text"), k)),
            }
        };
        let texts = |k: &str| -> Result<Option<Vec<String>>> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(Some(
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect(),
                )),
                Some(_) => Err(bad(&format!("`{k}` is a list of texts"), k)),
            }
        };
        if let Some(k) = count("k")? {
            p.k = k.clamp(1, rank::MAX_K);
        }
        if let Some(b) = count("token_budget")? {
            p.token_budget = b;
        }
        p.surface = text("surface")?;
        p.user = text("user")?;
        p.tier = text("tier")?;
        p.flags = texts("flags")?;
        p.exclude = texts("exclude")?.unwrap_or_default();
        p.query_vector = match o.get("query_vector") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|x| x.as_f64().map(|f| f as f32))
                    .collect::<Option<Vec<f32>>>()
                    .ok_or_else(|| bad("`query_vector` is a list of numbers", "query_vector"))?,
            ),
            Some(_) => return Err(bad("`query_vector` is a list of numbers", "query_vector")),
        };
        p.now_ms = o.get("now").and_then(Value::as_f64).unwrap_or(0.0);
        Ok(p)
    }
}

/// The planner's section.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerSection {
    /// The provider's `tools` value (JSON text, byte-stable for the same registry, query
    /// and options).
    pub tools: String,
    /// One line per inlined contract, for the system prompt.
    pub catalog: String,
    /// Offered tool name → `name@version` (names are made provider-safe).
    pub names: LiteMap<String, String>,
    /// How many candidates were left out (reachable through `request_more_tools`).
    pub more: usize,
    /// The estimated tokens of `tools`.
    pub tokens: usize,
}

impl PlannerSection {
    /// `{ tools, catalog, names, more, tokens }` with `tools` as JSON.
    pub fn to_value(&self) -> Value {
        json!({
            "tools": serde_json::from_str::<Value>(&self.tools).unwrap_or(Value::Null),
            "catalog": self.catalog,
            "names": self.names,
            "more": self.more,
            "tokens": self.tokens,
        })
    }
}

/// Embeddings by contract name from `{ name: [numbers] }` (the faces' wire form).
pub fn vectors_of(v: &Value) -> Result<LiteMap<String, Vec<f32>>> {
    let bad = || {
        Error::new(
            ErrorKind::InvalidOptions,
            "`vectors` maps contract names to lists of numbers",
        )
        .at("vectors")
    };
    let o = v.as_object().ok_or_else(bad)?;
    let mut out = LiteMap::new();
    for (k, a) in o {
        let a = a.as_array().ok_or_else(bad)?;
        let v = a
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(bad)?;
        out.insert(k.clone(), v);
    }
    Ok(out)
}

/// A provider-safe tool name (`^[a-zA-Z0-9_-]{1,64}$`), as the arbiter's offers make them.
fn tool_name(name: &str) -> String {
    crate::arbiter::offer::safe_name(name)
}

/// The description the model reads: the contract's, its declared errors and one example.
fn tool_description(c: &Contract) -> String {
    let mut d = c.description.trim().to_owned();
    if !c.errors.is_empty() {
        d.push_str("\nErrors: ");
        d.push_str(
            &c.errors
                .iter()
                .map(|e| e.code.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        d.push('.');
    }
    if let Some(i) = c.examples.first().and_then(|e| e.get("input")) {
        d.push_str("\nExample input: ");
        d.push_str(&i.json_text());
    }
    d
}

/// The text tokens of `s`, estimated (four bytes a token, as the providers' guides do).
fn tokens(s: &str) -> usize {
    s.len().div_ceil(4)
}

fn request_more() -> Tool {
    Tool {
        name: REQUEST_MORE.into(),
        description: Some("None of these tools fits: describe what you need, and the next candidate tools are offered.".into()),
        parameters: json!({ "type": "object", "properties": { "need": { "type": "string", "description": "What the tool you need would do." } }, "required": ["need"] }),
        strict: None,
        kind: Default::default(),
    }
}

fn lowered(tools: Vec<Tool>, provider: Provider) -> Result<String> {
    let mut opts = LowerOptions::new(provider);
    opts.tools = tools;
    let mut report = Report::default();
    match crate::lower::tools(&opts, None, &mut report) {
        Some(j) => write(&j, SlotMode::Forbid),
        None => Ok("[]".into()),
    }
}

impl Registry {
    /// The contracts a caller may call, at the version it would run (or the newest).
    fn callable(&self, o: &PlannerOptions) -> Vec<Arc<Contract>> {
        self.contracts
            .keys()
            .filter_map(|name| {
                let c = match (&o.surface, &o.user) {
                    (Some(s), u) => self
                        .resolve(name, s, u.as_deref().unwrap_or(""), None, o.now_ms)
                        .ok()?,
                    (None, _) => self.contracts.get(name)?.values().next_back()?.clone(),
                };
                let flags_ok = o
                    .flags
                    .as_ref()
                    .is_none_or(|f| c.feature_flags.iter().all(|x| f.contains(x)));
                let tier_ok =
                    c.tiers.is_empty() || o.tier.as_ref().is_none_or(|t| c.tiers.contains(t));
                (flags_ok && tier_ok && !o.exclude.iter().any(|e| e == name)).then_some(c)
            })
            .collect()
    }

    /// The phase-1 index over the newest version of each contract (built once per
    /// registry state).
    fn index(&self) -> Arc<(SkillIndex, Vec<String>)> {
        self.index
            .get_or_init(|| {
                let latest: Vec<&Arc<Contract>> = self.latest().collect();
                let docs: Vec<Doc> = latest
                    .iter()
                    .map(|c| Doc {
                        id: c.name.clone(),
                        name: c.name.replace(['-', '_', '.'], " "),
                        description: c.description.clone(),
                        tags: c
                            .source
                            .get("tags")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(|t| t.as_str().map(str::to_owned))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        intent_patterns: c
                            .examples
                            .iter()
                            .filter_map(|e| {
                                e.get("note").and_then(Value::as_str).map(str::to_owned)
                            })
                            .collect(),
                        trigger_phrases: Vec::new(),
                        scope: String::new(),
                        enabled: true,
                    })
                    .collect();
                let names = latest.iter().map(|c| c.name.clone()).collect();
                Arc::new((SkillIndex::build(docs), names))
            })
            .clone()
    }

    /// Gives contract names embeddings for the router (one vector per name, all of one
    /// length); `false` when the lengths differ.
    pub fn set_vectors(&mut self, vectors: &LiteMap<String, Vec<f32>>) -> bool {
        let dim = vectors.values().next().map_or(0, Vec::len);
        if dim == 0 || vectors.values().any(|v| v.len() != dim) {
            return false;
        }
        self.vectors = vectors.clone();
        self.index = Default::default();
        true
    }

    /// The planner's section for a message (and its conversation's recent text): the
    /// top-K candidates the caller may call, inlined in `provider`'s tool shape while they
    /// fit the token budget, the rest behind `request_more_tools`.
    pub fn planner_section(&self, query: &str, o: &PlannerOptions) -> Result<PlannerSection> {
        let callable = self.callable(o);
        let by_name: LiteMap<&str, &Arc<Contract>> =
            crate::sort::lite_of(callable.iter().map(|c| (c.name.as_str(), c)));
        // Rank every callable contract: the lexical (and embedding) rank first, then the
        // rest by name, so a query with no hit still offers something.
        let mut order: Vec<&Arc<Contract>> = Vec::new();
        if callable.len() > o.k {
            let idx = self.index();
            let (index, names) = (&idx.0, &idx.1);
            let mut index = index.clone();
            if !self.vectors.is_empty() && o.query_vector.is_some() {
                let dim = self.vectors.values().next().map_or(0, Vec::len);
                let flat: Vec<f32> = names
                    .iter()
                    .flat_map(|n| {
                        self.vectors
                            .get(n)
                            .cloned()
                            .unwrap_or_else(|| vec![0.0; dim])
                    })
                    .collect();
                index.set_vectors(&flat, dim);
            }
            let opts = MatchOptions {
                k: names.len().clamp(1, rank::MAX_K),
                prefix: false,
                query_vector: o.query_vector.clone(),
                ..MatchOptions::default()
            };
            let mut seen = BTreeSet::new();
            for r in index.rank(query, &opts) {
                if let Some(c) = names.get(r.doc).and_then(|n| by_name.get(n.as_str())) {
                    if seen.insert(c.name.as_str()) {
                        order.push(c);
                    }
                }
            }
            for c in &callable {
                if seen.insert(c.name.as_str()) {
                    order.push(c);
                }
            }
        } else {
            order = callable.iter().collect();
        }
        let more_tool = lowered(vec![request_more()], o.provider)?;
        let mut used = 0;
        let mut tools = Vec::new();
        let mut names = LiteMap::new();
        let mut catalog = String::new();
        for c in order.iter().take(o.k) {
            let t = Tool {
                name: tool_name(&c.name),
                description: Some(tool_description(c)),
                parameters: c.input.clone(),
                strict: None,
                kind: Default::default(),
            };
            let cost = tokens(&lowered(vec![t.clone()], o.provider)?);
            if used + cost + tokens(&more_tool) > o.token_budget && !tools.is_empty() {
                break;
            }
            used += cost;
            names.insert(t.name.clone(), c.id());
            catalog.push_str(&format!(
                "- {} (v{}): {}\n",
                t.name,
                c.version,
                c.description.lines().next().unwrap_or("").trim()
            ));
            tools.push(t);
        }
        let more = order.len() - tools.len();
        if more > 0 {
            tools.push(request_more());
            catalog.push_str(&format!(
                "- {REQUEST_MORE}: {more} more tool{} can be offered; describe what you need.\n",
                if more == 1 { "" } else { "s" }
            ));
        }
        let text = lowered(tools, o.provider)?;
        Ok(PlannerSection {
            tokens: tokens(&text),
            tools: text,
            catalog,
            names,
            more,
        })
    }

    /// Pairs of contracts (newest versions) whose descriptions are too alike: cosine
    /// similarity of the host's embeddings when given (`vectors`, by name), else of their
    /// stemmed term counts; every pair at or above `threshold` (0.85 by default), most
    /// similar first.
    pub fn overlap_audit(
        &self,
        vectors: Option<&LiteMap<String, Vec<f32>>>,
        threshold: f64,
    ) -> Value {
        let latest: Vec<&Arc<Contract>> = self.latest().collect();
        let bags: Vec<LiteMap<String, f64>> = latest
            .iter()
            .map(|c| {
                let mut m = LiteMap::new();
                for t in rank::terms(&format!(
                    "{} {}",
                    c.name.replace(['-', '_', '.'], " "),
                    c.description
                )) {
                    *m.entry(t).or_insert(0.0) += 1.0;
                }
                m
            })
            .collect();
        let cos_bag = |a: &LiteMap<String, f64>, b: &LiteMap<String, f64>| {
            let dot: f64 = a.iter().filter_map(|(k, x)| b.get(k).map(|y| x * y)).sum();
            let na = a.values().map(|x| x * x).sum::<f64>().sqrt();
            let nb = b.values().map(|x| x * x).sum::<f64>().sqrt();
            if na == 0.0 || nb == 0.0 {
                0.0
            } else {
                dot / (na * nb)
            }
        };
        let cos_vec = |a: &[f32], b: &[f32]| {
            let dot: f64 = a
                .iter()
                .zip(b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            let na = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            let nb = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            if na == 0.0 || nb == 0.0 || a.len() != b.len() {
                0.0
            } else {
                dot / (na * nb)
            }
        };
        let mut pairs = Vec::new();
        for i in 0..latest.len() {
            for j in i + 1..latest.len() {
                let (a, b) = (latest[i], latest[j]);
                let (sim, how) =
                    match vectors.and_then(|v| Some((v.get(&a.name)?, v.get(&b.name)?))) {
                        Some((x, y)) => (cos_vec(x, y), "embedding"),
                        None => (cos_bag(&bags[i], &bags[j]), "lexical"),
                    };
                if sim >= threshold {
                    pairs.push((sim, json!({ "a": a.name, "b": b.name, "similarity": (sim * 1e4).round() / 1e4, "by": how })));
                }
            }
        }
        crate::sort::sort_by(&mut pairs, |x, y| y.0.total_cmp(&x.0));
        Value::Array(pairs.into_iter().map(|(_, v)| v).collect())
    }

    /// The registry review: contracts without an owner, deprecated or sunset ones, and
    /// those called less than `min_calls_per_day` in the call records given (the records'
    /// time span; never-called ones included).
    pub fn review(&self, records: &[Value], min_calls_per_day: f64) -> Value {
        let mut calls: LiteMap<&str, usize> = LiteMap::new();
        let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
        for r in records {
            if let Some(n) = r.get("contract").and_then(Value::as_str) {
                *calls.entry(n).or_default() += 1;
            }
            if let Some(t) = r.get("start_ms").and_then(Value::as_f64) {
                first = first.min(t);
                last = last.max(t);
            }
        }
        let days = if last > first {
            ((last - first) / 86_400_000.0).max(1.0)
        } else {
            1.0
        };
        let mut ownerless = Vec::new();
        let mut deprecated = Vec::new();
        let mut rare = Vec::new();
        for c in self.latest() {
            if c.owner.is_none() {
                ownerless.push(Value::from(c.id()));
            }
            if c.deprecated || c.sunset.is_some() {
                deprecated.push(json!({ "contract": c.id(), "deprecated": c.deprecated, "sunset": c.sunset.as_ref().map(|(_, t)| t.clone()) }));
            }
            let n = calls.get(c.name.as_str()).copied().unwrap_or(0);
            let per_day = n as f64 / days;
            if per_day < min_calls_per_day {
                rare.push(json!({ "contract": c.name, "calls": n, "per_day": (per_day * 100.0).round() / 100.0 }));
            }
        }
        let mut o = Map::new();
        o.insert("ownerless".into(), Value::Array(ownerless));
        o.insert("deprecated".into(), Value::Array(deprecated));
        o.insert("rarely_called".into(), Value::Array(rare));
        o.insert("days".into(), json!((days * 100.0).round() / 100.0));
        Value::Object(o)
    }
}
