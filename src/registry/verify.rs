//! The handler check of the seed's registration ("registration fails if the backing service
//! doesn't pass schema validation against a synthetic input"): which inputs to send, and
//! the report of what the handlers answered. The host runs the handlers in between (async
//! in JS, the imported interface in a WASI host). Registering a contract does not run it:
//! the registry holds no handlers, so the gateway's `verify()` does, once handlers are at
//! hand.

use super::{fields, Contract, Registry};
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::problems::Problems;
use serde_json::{json, Value};

impl Contract {
    /// The input registration sends: the first example's (defaults filled in), else one
    /// generated from the input schema; `None` when a pattern is past the generator.
    pub fn synthetic_input(&self) -> Option<Value> {
        self.examples
            .iter()
            .find_map(|e| {
                e.get("input")
                    .map(|i| fields::apply_defaults(&self.input, i))
            })
            .or_else(|| fields::synthetic(&self.input))
    }
}

impl Registry {
    /// The versions to check (every version, or those of `name`) and the input each gets:
    /// `[{ name, version, input | null }]`.
    pub fn verify_targets(&self, name: Option<&str>) -> Result<Value> {
        let list: Vec<Value> = self
            .iter()
            .filter(|c| name.is_none_or(|n| c.name == n))
            .map(|c| {
                let version = c.version.to_string();
                // What the handler receives beside the input, as a call's invoke gives it.
                let context = json!({ "contract": c.name, "version": version, "attempt": 1, "idempotency_key": null, "trace_id": "verify", "synthetic": true });
                json!({ "name": c.name, "version": version, "input": c.synthetic_input(), "context": context })
            })
            .collect();
        if let (Some(n), true) = (name, list.is_empty()) {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no contract named `{n}` is registered"),
            )
            .with("contract", n));
        }
        Ok(Value::Array(list))
    }

    /// The report of a check: `results` is `[{ name, version, input, output? , error?,
    /// no_handler? }]` as the host ran them → what was checked (`[{ name, version, input,
    /// ok }]`), or `InvalidContract` listing every problem (`<name>@<version>.output…`).
    pub fn verify_report(&self, results: &Value) -> Result<Value> {
        let rows = results
            .as_array()
            .ok_or_else(|| Error::new(ErrorKind::InvalidRequest, "the check results are a list"))?;
        let mut out = Problems::default();
        let mut checked = Vec::new();
        for r in rows {
            let (Some(n), Some(v)) = (
                r.get("name").and_then(Value::as_str),
                r.get("version").and_then(Value::as_str),
            ) else {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    "each check result names its contract and version",
                ));
            };
            let c = self.get(n, v)?;
            let at = c.id();
            if r.get("input").is_none_or(Value::is_null) {
                out.error(
                    &format!("{at}.input"),
                    "no-synthetic-input",
                    "no input can be generated from this schema: add an example",
                );
            } else if r.get("no_handler").and_then(Value::as_bool) == Some(true) {
                out.error(&at, "no-handler", format!("no handler for {at}"));
            } else if let Some(e) = r.get("error") {
                let msg = e
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| e.json_text());
                out.error(
                    &format!("{at}.handler"),
                    "handler-failed",
                    format!("the handler failed on the synthetic input: {msg}"),
                );
            } else {
                let output = r.get("output").unwrap_or(&Value::Null);
                let ok = match c.check_output(output) {
                    Ok(()) => true,
                    Err(vs) => {
                        for x in vs {
                            out.error(
                                &format!("{at}.output{}", x.instance_path.replace('/', ".")),
                                "invalid-output",
                                x.message,
                            );
                        }
                        false
                    }
                };
                checked.push(json!({ "name": n, "version": v, "input": r.get("input"), "ok": ok }));
            }
        }
        if out.has_errors() {
            return Err(super::contract::problems_error(
                out,
                &json!({ "name": "check" }),
            ));
        }
        Ok(Value::Array(checked))
    }
}
