//! The contract registry (seed: skill registry contracts): typed contracts registered once,
//! several versions side by side, surfaces pinning a version or a range, canaries per
//! surface and sunsets. The gateway ([`crate::gateway`]) resolves every call through it.
//!
//! ```
//! use promptloom::registry::Registry;
//! let mut r = Registry::default();
//! r.register_text(r#"{"name":"echo","version":"1.0","description":"Echoes.","owner":"me",
//!   "input":{"text":{"type":"string","required":true}},"output":{"text":"string"},
//!   "policy":{"idempotent":true,"timeout_ms":100,"budget":{"p95_ms":5,"cost_usd":0}}}"#)?;
//! let c = r.resolve("echo", "chat", "u1", None, 0.0)?;
//! assert_eq!(c.version.to_string(), "1.0.0");
//! # Ok::<(), promptloom::Error>(())
//! ```

pub mod adapt;
pub mod contract;
pub mod fields;
pub mod planner;
pub mod verify;

pub use contract::{Contract, RetryClass};

use crate::error::{Error, ErrorKind, Result};
use litemap::LiteMap;
use semver::{Version, VersionReq};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Every contract version, by name; and the versions surfaces pin.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    contracts: LiteMap<String, LiteMap<Version, Arc<Contract>>>,
    /// (surface, name) → the range that surface calls.
    pins: LiteMap<(String, String), VersionReq>,
    /// The router's index over the newest versions, built on first use after a change.
    index: std::sync::OnceLock<Arc<(crate::catalog::rank::SkillIndex, Vec<String>)>>,
    /// The host's embeddings of contracts, by name (the router blends them).
    vectors: LiteMap<String, Vec<f32>>,
}

/// An output adapter a call goes through: the older version whose shape the caller gets,
/// and the mapping (see [`adapt`]).
pub type Adapter = (Version, Value);

/// A version range as callers write it: `0.9` (= `^0.9`), `^1.2`, `~1.2.3`, `>=1, <2`,
/// `=1.0.0`, `*`.
pub fn version_req(t: &str) -> Result<VersionReq> {
    VersionReq::parse(t.trim().trim_start_matches('v')).map_err(|e| {
        Error::new(
            ErrorKind::InvalidOptions,
            format!("`{t}` is not a version or a version range: {e}"),
        )
        .with("version", t)
    })
}

/// The bucket of a (contract, surface, user) in 0..10,000: FNV-1a over the three texts,
/// finished with a 64-bit mix so neighbouring user ids spread evenly. Deterministic in
/// every host, so a user stays on one version.
pub fn bucket(name: &str, surface: &str, user: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [name, surface, user] {
        for b in part.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h % 10_000) as u32
}

impl Registry {
    /// Registers a contract document (JSON or YAML text).
    pub fn register_text(&mut self, text: &str) -> Result<Arc<Contract>> {
        let doc = contract::parse_text(text)?;
        self.register(&doc)
    }

    /// Registers a contract document. Fails with `InvalidContract` (every problem with its
    /// path) when it is malformed or a fallback names a contract that is not registered,
    /// and `AlreadyExists` when this name and version are registered.
    pub fn register(&mut self, doc: &Value) -> Result<Arc<Contract>> {
        let known = |n: &str, range: Option<&str>| {
            self.contracts.get(n).is_some_and(|vs| match range {
                None => true,
                Some(r) => version_req(r).is_ok_and(|r| vs.keys().any(|v| r.matches(v))),
            })
        };
        let c = contract::read_checked(doc, &known)?;
        let versions = self.contracts.entry(c.name.clone()).or_default();
        if versions.contains_key(&c.version) {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "contract {} is already registered; register a new version beside it",
                    c.id()
                ),
            )
            .with("contract", c.name.clone())
            .with("version", c.version.to_string()));
        }
        let c = Arc::new(c);
        versions.insert(c.version.clone(), c.clone());
        self.index = Default::default();
        Ok(c)
    }

    /// Removes a contract version (or every version with `None`); whether any was there.
    pub fn unregister(&mut self, name: &str, version: Option<&str>) -> Result<bool> {
        self.index = Default::default();
        match version {
            None => Ok(self.contracts.remove(name).is_some()),
            Some(v) => {
                let v = exact(v)?;
                let Some(vs) = self.contracts.get_mut(name) else {
                    return Ok(false);
                };
                let had = vs.remove(&v).is_some();
                if vs.is_empty() {
                    self.contracts.remove(name);
                }
                Ok(had)
            }
        }
    }

    /// A contract version.
    pub fn get(&self, name: &str, version: &str) -> Result<Arc<Contract>> {
        let v = exact(version)?;
        self.contracts
            .get(name)
            .and_then(|vs| vs.get(&v))
            .cloned()
            .ok_or_else(|| not_found(name, Some(version)))
    }

    /// Every contract version, by name then version.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Contract>> {
        self.contracts.values().flat_map(|vs| vs.values())
    }

    /// The newest version of each contract.
    pub fn latest(&self) -> impl Iterator<Item = &Arc<Contract>> {
        self.contracts
            .values()
            .filter_map(|vs| vs.values().next_back())
    }

    /// How many contract versions are registered.
    pub fn len(&self) -> usize {
        self.contracts.values().map(LiteMap::len).sum()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.contracts.is_empty()
    }

    /// Sets (or with 0 removes) the canary percent of `surface` users on a version, at run
    /// time.
    pub fn set_canary(
        &mut self,
        name: &str,
        version: &str,
        surface: &str,
        percent: f64,
    ) -> Result<()> {
        if !(0.0..=100.0).contains(&percent) {
            return Err(
                Error::new(ErrorKind::InvalidOptions, "a canary is a percent, 0–100")
                    .with("percent", percent),
            );
        }
        let c = self.edit(name, version)?;
        if percent == 0.0 {
            c.canary.remove(surface);
        } else {
            c.canary.insert(surface.to_owned(), percent);
        }
        Ok(())
    }

    /// Sets the sunset time of a version (`None` clears it).
    pub fn set_sunset(&mut self, name: &str, version: &str, at: Option<&str>) -> Result<()> {
        let when = match at {
            None => None,
            Some(t) => Some((
                contract::epoch_ms(t).ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOptions,
                        format!("`{t}` is not a date or an RFC 3339 time"),
                    )
                })?,
                t.to_owned(),
            )),
        };
        self.edit(name, version)?.sunset = when;
        Ok(())
    }

    fn edit(&mut self, name: &str, version: &str) -> Result<&mut Contract> {
        let v = exact(version)?;
        let c = self
            .contracts
            .get_mut(name)
            .and_then(|vs| vs.get_mut(&v))
            .ok_or_else(|| not_found(name, Some(version)))?;
        Ok(Arc::make_mut(c))
    }

    /// Pins the version range `surface` calls `name` with (`None` unpins).
    pub fn pin(&mut self, surface: &str, name: &str, range: Option<&str>) -> Result<()> {
        let key = (surface.to_owned(), name.to_owned());
        match range {
            None => {
                self.pins.remove(&key);
            }
            Some(r) => {
                self.pins.insert(key, version_req(r)?);
            }
        }
        Ok(())
    }

    /// The version a call runs: the caller's `version` (a version or range) or the
    /// surface's pin narrows the candidates to those matching it; versions sunset by `now`
    /// and versions not offered on the surface drop out; among the rest, a version with a
    /// canary on this surface takes its percent of the users (by [`bucket`]), newest canary
    /// first, and everyone else gets the newest version without a canary here.
    pub fn resolve(
        &self,
        name: &str,
        surface: &str,
        user: &str,
        version: Option<&str>,
        now_ms: f64,
    ) -> Result<Arc<Contract>> {
        let vs = self
            .contracts
            .get(name)
            .ok_or_else(|| not_found(name, None))?;
        let req = match version {
            Some(v) => Some(version_req(v)?),
            None if self.pins.is_empty() => None,
            None => self
                .pins
                .get(&(surface.to_owned(), name.to_owned()))
                .cloned(),
        };
        let matching: Vec<&Arc<Contract>> = vs
            .values()
            .rev()
            .filter(|c| req.as_ref().is_none_or(|r| r.matches(&c.version)))
            .collect();
        if matching.is_empty() {
            return Err(not_found(name, version)
                .with("range", req.map(|r| r.to_string()).unwrap_or_default()));
        }
        let on_surface: Vec<&Arc<Contract>> = matching
            .iter()
            .copied()
            .filter(|c| c.surfaces.is_empty() || c.surfaces.iter().any(|s| s == surface))
            .collect();
        if on_surface.is_empty() {
            return Err(Error::new(
                ErrorKind::CapabilityDenied,
                format!("contract {name} is not offered on the surface `{surface}`"),
            )
            .with("contract", name)
            .with("surface", surface)
            .with("reason", "surface"));
        }
        let live: Vec<&Arc<Contract>> = on_surface
            .iter()
            .copied()
            .filter(|c| c.sunset.as_ref().is_none_or(|(at, _)| now_ms < *at))
            .collect();
        let Some(first) = live.first() else {
            let c = on_surface[0];
            return Err(Error::new(
                ErrorKind::Sunset,
                format!(
                    "contract {} was sunset on {}; call a newer version",
                    c.id(),
                    c.sunset.as_ref().map_or("", |(_, t)| t.as_str())
                ),
            )
            .with("contract", name)
            .with("version", c.version.to_string())
            .with("sunset", c.sunset.as_ref().map(|(_, t)| t.clone())));
        };
        // An explicit exact version skips canary routing.
        if version.is_some_and(|v| v.trim_start().starts_with('=')) {
            return Ok((*first).clone());
        }
        let b = f64::from(bucket(name, surface, user)) / 100.0;
        let mut edge = 0.0;
        for c in &live {
            if let Some(p) = c.canary.get(surface) {
                edge += p;
                if b < edge {
                    return Ok((*c).clone());
                }
            }
        }
        Ok(live
            .iter()
            .find(|c| !c.canary.contains_key(surface))
            .copied()
            .unwrap_or(first)
            .clone())
    }

    /// The version a call runs, as [`Registry::resolve`] chooses it — and when the caller
    /// asks for a version range no live version serves (none registered, or sunset), the
    /// newest live version with an output adapter for a version in that range, with the
    /// adapter's target version and mapping.
    pub fn resolve_call(
        &self,
        name: &str,
        surface: &str,
        user: &str,
        version: Option<&str>,
        now_ms: f64,
    ) -> Result<(Arc<Contract>, Option<Adapter>)> {
        let first = match self.resolve(name, surface, user, version, now_ms) {
            Ok(c) => return Ok((c, None)),
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::Sunset) => e,
            Err(e) => return Err(e),
        };
        let req = match version {
            Some(v) => Some(version_req(v)?),
            None => self
                .pins
                .get(&(surface.to_owned(), name.to_owned()))
                .cloned(),
        };
        let (Some(req), Some(vs)) = (req, self.contracts.get(name)) else {
            return Err(first);
        };
        for c in vs.values().rev() {
            let live = c.sunset.as_ref().is_none_or(|(at, _)| now_ms < *at)
                && (c.surfaces.is_empty() || c.surfaces.iter().any(|s| s == surface));
            if !live {
                continue;
            }
            if let Some((old, m)) = c
                .output_adapters
                .iter()
                .rev()
                .find(|(old, _)| req.matches(old))
            {
                return Ok((c.clone(), Some((old.clone(), m.clone()))));
            }
        }
        Err(first)
    }

    /// Every contract version as JSON (name, version, schemas, surfaces, canary, sunset,
    /// the document), and the pins.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert(
            "contracts".into(),
            Value::Array(self.iter().map(|c| c.to_value()).collect()),
        );
        o.insert(
            "pins".into(),
            Value::Array(
                self.pins
                    .iter()
                    .map(|((s, n), r)| serde_json::json!({ "surface": s, "name": n, "range": r.to_string() }))
                    .collect(),
            ),
        );
        Value::Object(o)
    }
}

/// Reads a contract document (YAML or JSON text) without registering it:
/// `{ ok, problems, contract? }`.
pub fn check(text: &str) -> Value {
    match contract::parse_text(text).and_then(|d| contract::read(&d)) {
        Ok(c) => serde_json::json!({ "ok": true, "problems": [], "contract": c.to_value() }),
        Err(e) => {
            let problems = e.details().get("problems").cloned().unwrap_or_else(|| {
                serde_json::json!([{ "path": "$", "code": "invalid-contract", "message": e.to_string(), "severity": "error" }])
            });
            serde_json::json!({ "ok": false, "problems": problems })
        }
    }
}

/// `name` or `name@range` → (name, range).
pub(crate) fn split_target(t: &str) -> (&str, Option<String>) {
    match t.split_once('@') {
        Some((n, r)) => (n.trim(), Some(r.trim().to_owned())),
        None => (t.trim(), None),
    }
}

fn exact(v: &str) -> Result<Version> {
    contract::version_of(&Value::String(v.to_owned())).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOptions,
            format!("`{v}` is not a semantic version"),
        )
        .with("version", v)
    })
}

fn not_found(name: &str, version: Option<&str>) -> Error {
    let e = match version {
        None => Error::new(
            ErrorKind::NotFound,
            format!("no contract named `{name}` is registered"),
        ),
        Some(v) => Error::new(
            ErrorKind::NotFound,
            format!("no version of contract `{name}` matches `{v}`"),
        )
        .with("version", v),
    };
    e.with("contract", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canary_split_holds_within_one_percent() {
        let n = 100_000;
        let inside = (0..n)
            .filter(|i| bucket("c", "chat", &format!("user-{i}")) < 500)
            .count();
        let share = inside as f64 / n as f64;
        assert!((share - 0.05).abs() < 0.01, "{share}");
        let b = |s: &str| {
            (0..n)
                .filter(|i| bucket("c", s, &format!("u{i}")) < 2_000)
                .count()
        };
        assert!(((b("voice") as f64 / n as f64) - 0.2).abs() < 0.01);
    }
}
