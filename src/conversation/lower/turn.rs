//! One turn to provider fragments: user parts through the lowering, assistant text,
//! reasoning and tool calls, tool results (with media where the provider takes it), each
//! written by the provider's dialect. Cacheable: a turn's fragments depend only on the
//! turn, the provider, the capability table and the resolver's answers.

use super::*;

/// What the provider-independent parts of turn lowering need.
pub(crate) struct TurnCx<'c> {
    pub(crate) provider: Provider,
    pub(crate) caps: &'c Capabilities,
    pub(crate) mode: SlotMode,
    /// Chat reasoning is kept for the assembly (the server takes it back, `compat`).
    pub(crate) keep_reasoning: bool,
    /// What is kept is the server's own items (`details`), not the text.
    pub(crate) details: bool,
}

/// Lowers one turn for the provider (no cross-turn context: the result is cacheable).
pub(crate) fn lower_turn(
    turn: &Turn,
    resolver: &dyn Resolver,
    cx: &TurnCx<'_>,
) -> Result<LoweredTurn> {
    let p = cx.provider;
    let mut report = TurnReport {
        role: turn.role(),
        blocks: Vec::new(),
        dropped: Vec::new(),
        warnings: Vec::new(),
    };
    let mut items = Vec::new();
    let mut needs = Vec::new();
    let note = |report: &mut TurnReport, part: usize, rule: &str| {
        report.blocks.push(BlockNote {
            part,
            rule: rule.to_owned(),
            mime: None,
        })
    };
    let drop = |report: &mut TurnReport, part: usize, rule: &str, reason: String| {
        report.dropped.push(DropNote {
            part,
            rule: rule.to_owned(),
            reason,
        })
    };
    match turn {
        Turn::System(st) => {
            if st.text.trim().is_empty() {
                drop(
                    &mut report,
                    0,
                    "system-empty",
                    "an empty instruction is not sent".into(),
                );
            } else {
                note(&mut report, 0, "system");
                items.push(Item::System {
                    text: st.text.clone(),
                    lit: lit(&st.text),
                    developer: st.developer,
                });
            }
        }
        Turn::User(m) => {
            let (blocks, r, n) = part_blocks(&m.parts, p, cx.caps, resolver)?;
            needs = n;
            report.dropped = r.dropped;
            report.warnings = r.warnings;
            for (b, bn) in blocks.into_iter().zip(r.blocks) {
                let text = match &b {
                    Block::Text(t) => Some(lit(t)),
                    _ => None,
                };
                let j = block_json(p, b, cx.caps.text_documents);
                items.push(Item::User {
                    json: write(&j, cx.mode)?,
                    lit: text,
                });
                report.blocks.push(bn);
            }
        }
        Turn::Assistant(a) => {
            for (i, part) in a.parts.iter().enumerate() {
                match part {
                    AssistantPart::Text { text: t, citations } => {
                        // The citations this provider made go back with the text, where it
                        // takes them.
                        let own: Vec<&Value> = citations
                            .iter()
                            .filter(|c| {
                                c.get("provider")
                                    .and_then(Value::as_str)
                                    .is_some_and(|f| is_own(p, Some(f)))
                            })
                            .filter_map(|c| c.get("data"))
                            .collect();
                        let cited = match own.is_empty() {
                            true => None,
                            false => p.dialect().cited_text(t, &own),
                        };
                        if t.trim().is_empty() {
                            drop(&mut report, i, "text-empty", "empty or white-space-only assistant text is not sent (providers reject it)".into());
                        } else if let Some(j) = cited {
                            note(&mut report, i, "text");
                            items.push(Item::Other {
                                json: write(&j, SlotMode::Forbid)?,
                            });
                        } else {
                            note(&mut report, i, "text");
                            items.push(Item::Text {
                                text: t.clone(),
                                lit: lit(t),
                            });
                        }
                    }
                    AssistantPart::Reasoning(r)
                        if cx.keep_reasoning
                            && (if cx.details { !r.details.is_empty() } else { !r.text.is_empty() })
                            && is_own(p, r.provider.as_deref()) =>
                    {
                        // Chat has no reasoning block: its text (or the server's items) goes
                        // in the assistant message's field (the assembly writes it).
                        note(&mut report, i, "reasoning");
                        let json = match cx.details {
                            true => Value::Array(r.details.clone()).json_text(),
                            false => lit(&r.text),
                        };
                        items.push(Item::Other { json });
                    }
                    AssistantPart::Reasoning(r) if cx.keep_reasoning && !r.text.is_empty() => drop(
                        &mut report,
                        i,
                        "reasoning-dropped",
                        match cx.details {
                            true if is_own(p, r.provider.as_deref()) => {
                                "the server takes its own reasoning items back, and this part has none".into()
                            }
                            _ => crate::provider::foreign(r, "this server"),
                        },
                    ),
                    AssistantPart::Reasoning(r) => match reasoning(p, r)? {
                        Ok(json) => {
                            note(&mut report, i, "reasoning");
                            items.push(Item::Other { json });
                        }
                        Err(why) => drop(&mut report, i, "reasoning-dropped", why),
                    },
                    AssistantPart::ToolCall(c) => {
                        let (json, wrapped) = call_json(p, c)?;
                        if wrapped {
                            report.warnings.push(Warning {
                                part: Some(i),
                                code: "ToolInputWrapped",
                                message: format!(
                                    "the input of tool call `{}` is not a JSON object; it is sent as {{\"value\": …}}",
                                    c.id
                                ),
                            });
                        }
                        note(&mut report, i, "tool-call");
                        items.push(Item::Call {
                            id: c.id.clone(),
                            name: c.name.clone(),
                            json,
                            part: i,
                            kind: c.kind.clone(),
                        });
                    }
                    AssistantPart::Unknown(v)
                        if v.get("type").and_then(Value::as_str) == Some("provider-data") =>
                    {
                        match provider_data(p, v) {
                            Ok(json) => {
                                note(&mut report, i, "provider-data");
                                items.push(Item::Other { json: json? });
                            }
                            Err(why) => drop(&mut report, i, "provider-data-dropped", why),
                        }
                    }
                    AssistantPart::Unknown(v) => {
                        let ty = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                        match v.get("text").and_then(Value::as_str) {
                            Some(t) if !t.trim().is_empty() => {
                                report.warnings.push(Warning {
                                    part: Some(i),
                                    code: "UnknownPartType",
                                    message: format!(
                                        "part type `{ty}` is unknown; its text is sent"
                                    ),
                                });
                                note(&mut report, i, "unknown-text");
                                items.push(Item::Text {
                                    text: t.to_owned(),
                                    lit: lit(t),
                                });
                            }
                            _ => {
                                report.warnings.push(Warning {
                                    part: Some(i),
                                    code: "UnknownPartType",
                                    message: format!("part type `{ty}` is unknown and has no text; it is not sent"),
                                });
                                drop(
                                    &mut report,
                                    i,
                                    "unknown",
                                    format!("`{ty}` parts have no model view"),
                                );
                            }
                        }
                    }
                }
            }
        }
        Turn::Tool(t) => {
            for (i, part) in t.parts.iter().enumerate() {
                match part {
                    ToolPart::Result(r) => {
                        let content = result_content(p, r, cx, i, &mut report)?;
                        let refs: Vec<&RBlock> = content.iter().collect();
                        let d = p.dialect();
                        let frag = match (&r.name, d.spec().results_by_name) {
                            (None, true) => None,
                            (name, _) => Some(d.result(
                                &r.call_id,
                                name.as_deref().unwrap_or(""),
                                &refs,
                                r.is_error,
                                false,
                            )?),
                        };
                        note(&mut report, i, "tool-result");
                        items.push(Item::Result {
                            call_id: r.call_id.clone(),
                            name: r.name.clone(),
                            is_error: r.is_error,
                            content,
                            part: i,
                            frag,
                        });
                    }
                    ToolPart::Unknown(v) => {
                        let ty = v.get("type").and_then(Value::as_str).unwrap_or("unknown");
                        report.warnings.push(Warning {
                            part: Some(i),
                            code: "UnknownPartType",
                            message: format!(
                                "part type `{ty}` in a tool turn is unknown; it is not sent"
                            ),
                        });
                        drop(
                            &mut report,
                            i,
                            "unknown",
                            format!("`{ty}` parts have no model view"),
                        );
                    }
                }
            }
        }
    }
    Ok(LoweredTurn {
        items,
        report: Rc::new(report),
        needs,
        tokens: std::cell::OnceCell::new(),
    })
}

pub(super) fn block_json(p: Provider, b: Block<'_>, text_documents: bool) -> Json<'_> {
    p.dialect().block(b, text_documents)
}

/// The provider fragment of a reasoning part, or why it cannot be sent.
pub(super) fn reasoning(p: Provider, r: &Reasoning) -> Result<std::result::Result<String, String>> {
    match p.dialect().reasoning(r, is_own(p, r.provider.as_deref())) {
        Ok(j) => Ok(Ok(write(&j, SlotMode::Forbid)?)),
        Err(why) => Ok(Err(why)),
    }
}

/// A `provider-data` part written back to the provider that sent it, verbatim, or why it
/// is not sent (another provider's, or a provider with no place for one). The part's
/// `provider` is the wire name of the provider that sent it (`openai` alone, as older
/// turns have it, is the Responses API's).
fn provider_data(p: Provider, v: &Value) -> std::result::Result<Result<String>, String> {
    let spec = p.spec();
    let from = v.get("provider").and_then(Value::as_str).unwrap_or("");
    let own = from == spec.name || (from == "openai" && spec.name == "openai-responses");
    match v.get("data") {
        Some(data @ Value::Object(_)) if own && spec.provider_data => {
            Ok(write(&Json::Value(Cow::Borrowed(data)), SlotMode::Forbid))
        }
        Some(Value::Object(_)) if own => Err(format!(
            "{} has no place for a block it sent that this version does not model",
            spec.display
        )),
        _ if own => Err("its `data` is not a JSON object: there is nothing to send back".into()),
        _ => Err(format!(
            "a block {} sent (`{}`); only that provider takes it back",
            if from.is_empty() {
                "another provider"
            } else {
                from
            },
            match v.get("data") {
                Some(Value::Object(d)) => d
                    .get("type")
                    .and_then(Value::as_str)
                    .or_else(|| d.keys().next().map(String::as_str))
                    .unwrap_or("provider-data"),
                _ => "provider-data",
            }
        )),
    }
}

/// The arguments as an object, and whether a non-object had to be wrapped.
pub(super) fn call_input(c: &ToolCall) -> (Cow<'_, Value>, bool) {
    match &c.input {
        // A custom tool's text, as a function with one string argument takes it.
        Value::String(t) if c.kind.as_deref() == Some("custom") => {
            let mut m = Map::new();
            m.insert("input".into(), Value::String(t.clone()));
            (Cow::Owned(Value::Object(m)), false)
        }
        Value::Object(_) => (Cow::Borrowed(&c.input), false),
        Value::String(t) => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Object(_)) => (Cow::Owned(v), false),
            _ => (Cow::Owned(wrap(c.input.clone())), true),
        },
        other => (Cow::Owned(wrap(other.clone())), true),
    }
}

pub(super) fn wrap(v: Value) -> Value {
    let mut m = Map::new();
    m.insert("value".into(), v);
    Value::Object(m)
}

pub(super) fn call_json(p: Provider, c: &ToolCall) -> Result<(String, bool)> {
    let d = p.dialect();
    let id = provider_id(p, &c.id);
    let (input, wrapped) = call_input(c);
    let own = is_own(p, c.provider.as_deref());
    let j = d.call(c, id, input.as_ref(), own);
    // A string the model wrote goes verbatim where arguments travel as text: nothing was
    // wrapped there.
    let wrapped = wrapped && !(c.input.is_string() && d.spec().arguments_as_text);
    Ok((write(&j, SlotMode::Forbid)?, wrapped))
}

pub(super) fn result_content(
    p: Provider,
    r: &ToolResult,
    cx: &TurnCx<'_>,
    i: usize,
    report: &mut TurnReport,
) -> Result<Vec<RBlock>> {
    Ok(match &r.output {
        ToolOutput::Text(t) => vec![RBlock::Text(t.clone())],
        ToolOutput::Json(v) => vec![RBlock::Json(v.json_text())],
        ToolOutput::Parts(parts) => {
            let (blocks, sub, _) = part_blocks(parts, p, cx.caps, &NoResolver)
                .map_err(|e| e.within(&format!("parts[{i}].output")))?;
            for w in sub.warnings {
                report.warnings.push(Warning {
                    part: Some(i),
                    code: w.code,
                    message: w.message,
                });
            }
            let mut out = Vec::with_capacity(blocks.len());
            for b in blocks {
                match b {
                    Block::Text(t) => out.push(RBlock::Text(t.into_owned())),
                    Block::TextDoc { fenced, .. } => out.push(RBlock::Text(fenced)),
                    Block::Media {
                        class,
                        mime,
                        source,
                        name,
                    } => {
                        let native = p.dialect().native_in_result(class);
                        if native {
                            let b = Block::Media {
                                class,
                                mime,
                                source,
                                name,
                            };
                            out.push(RBlock::Native(write(
                                &block_json(p, b, cx.caps.text_documents),
                                cx.mode,
                            )?));
                        } else {
                            report.warnings.push(Warning {
                                part: Some(i),
                                code: "UnsupportedMedia",
                                message: format!(
                                    "{} takes no {mime} in a tool result; a descriptor is sent",
                                    p.name()
                                ),
                            });
                            let mut attrs = vec![("mime", mime)];
                            if let Some(n) = name {
                                attrs.insert(0, ("name", n));
                            }
                            out.push(RBlock::Text(render::descriptor(
                                "attachment",
                                &attrs,
                                "this tool result holds media the provider does not accept in tool results",
                            )));
                        }
                    }
                }
            }
            if out.is_empty() {
                out.push(RBlock::Text(String::new()));
            }
            out
        }
    })
}
