//! The `agent` interface: the `agent-run` resource (the core's machine, driven by the host)
//! and `run-agent` (the core's driver, with the host's model and tools through the
//! `handlers` import). Conversions only.

use super::exports::promptloom::core::agent::{self as wagent, Guest};
use super::{to_wit, WitError};
use crate::agent::{AgentOptions, AgentRun, Event};
use std::cell::RefCell;

/// The `agent-run` resource.
pub(crate) struct AgentRunResource {
    inner: RefCell<AgentRun>,
}

impl wagent::GuestAgentRun for AgentRunResource {
    fn create(options: String) -> Result<wagent::AgentRun, WitError> {
        let o = AgentOptions::from_json(&options).map_err(to_wit)?;
        Ok(wagent::AgentRun::new(AgentRunResource {
            inner: RefCell::new(AgentRun::new(o)),
        }))
    }

    fn next(&self, event: String, payload: String) -> Result<String, WitError> {
        let (e, v) = Event::from_wire(&event, &payload).map_err(to_wit)?;
        let a = self.inner.borrow_mut().next(e, v).map_err(to_wit)?;
        Ok(a.to_json())
    }
}

mod run {
    use super::super::exports::promptloom::core::arbiter as warb;
    use super::super::exports::promptloom::core::compositor as wcomp;
    use super::super::exports::promptloom::core::lowering as wlow;
    use super::super::promptloom::core::handlers;
    use super::super::Component;
    use super::*;
    use crate::agent::{run_agent, AgentHost, Outcome, Reply, Stop};
    use crate::error::{Error, ErrorKind};
    use crate::json_text::JsonText;
    use crate::lower::Provider;
    use serde_json::Value;

    fn outcome(o: Outcome) -> wagent::AgentOutcome {
        wagent::AgentOutcome {
            stop: match o.stop {
                Stop::Final => wagent::AgentStop::Final,
                Stop::Arbiter => wagent::AgentStop::Arbiter,
                Stop::MaxSteps => wagent::AgentStop::MaxSteps,
                Stop::Aborted => wagent::AgentStop::Aborted,
            },
            steps: o.steps,
            usage: o.usage.json_text(),
            turn: o.turn.map(|t| t.json_text()),
        }
    }
    use crate::arbiter::offer::WithArbiter;

    struct Host<'a> {
        provider: Provider,
        store: Option<&'a super::super::compositor::StoreResource>,
        session: String,
    }

    impl AgentHost for Host<'_> {
        fn send(&mut self, body: &str, step: u32) -> crate::error::Result<Reply> {
            let bytes = handlers::send_request(self.provider.name(), body, step).map_err(|m| {
                Error::new(
                    ErrorKind::AdapterFailed,
                    format!("the host's send-request failed: {m}"),
                )
                .with("provider", self.provider.name())
            })?;
            let parsed = crate::response::parse_response(self.provider, &bytes)?;
            Ok(Reply::Turn(parsed.turn.to_value()))
        }

        fn call_tool(&mut self, name: &str, call: &Value) -> Option<Result<Value, String>> {
            Some(match handlers::call_tool(name, &call.json_text())? {
                Ok(out) => serde_json::from_str(&out)
                    .map_err(|e| format!("the tool's output is not JSON: {e}")),
                Err(m) => Err(m),
            })
        }

        fn persist(&mut self, turn: &Value) -> crate::error::Result<()> {
            if let Some(s) = self.store {
                s.append_to(
                    &crate::conversation::Turn::from_value(turn.clone())?,
                    &self.session,
                )?;
            }
            Ok(())
        }
    }

    impl Guest for Component {
        type AgentRun = AgentRunResource;

        fn run_agent(
            conversation: wlow::ConversationBorrow<'_>,
            options: String,
            arbiter: Option<warb::ArbiterBorrow<'_>>,
            store: Option<wcomp::MessageStoreBorrow<'_>>,
        ) -> Result<wagent::AgentOutcome, WitError> {
            let run = || -> crate::error::Result<wagent::AgentOutcome> {
                let mut v = crate::wire::json_value(
                    &options,
                    "the agent options",
                    ErrorKind::InvalidOptions,
                )?;
                let o = v.as_object_mut().ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOptions,
                        "the agent options must be an object",
                    )
                    .at("$")
                })?;
                let name =
                    |o: &mut serde_json::Map<String, Value>, k: &str, d: &str| match o.remove(k) {
                        None | Some(Value::Null) => Ok(d.to_owned()),
                        Some(Value::String(s)) => Ok(s),
                        Some(_) => Err(Error::new(
                            ErrorKind::InvalidOptions,
                            format!("`{k}` must be a string"),
                        )
                        .at(k)),
                    };
                let lane = name(o, "lane", "main")?;
                let session = name(o, "session", "default")?;
                o.insert("arbiter".into(), Value::Bool(arbiter.is_some()));
                let opts = AgentOptions::from_json(&v.json_text())?;
                let provider = match opts.lower.get("provider") {
                    Some(Value::String(s)) => Provider::parse(s)?,
                    _ => {
                        return Err(Error::new(
                            ErrorKind::InvalidOptions,
                            "`lower` names no `provider`",
                        )
                        .at("lower.provider"))
                    }
                };
                let conv = conversation.get::<super::super::ConversationResource>();
                let mut host = Host {
                    provider,
                    store: store
                        .as_ref()
                        .map(|s| s.get::<super::super::compositor::StoreResource>()),
                    session,
                };
                let mut c = conv.inner.borrow_mut();
                match &arbiter {
                    Some(a) => {
                        let a = a.get::<super::super::arbiter::ArbiterResource>();
                        let mut arbiter = a.core_mut();
                        let mut h = WithArbiter {
                            host,
                            arbiter: &mut arbiter,
                            lane,
                        };
                        run_agent(&mut c, opts, &mut h)
                    }
                    None => run_agent(&mut c, opts, &mut host),
                }
                .map(outcome)
            };
            run().map_err(to_wit)
        }
    }
}
