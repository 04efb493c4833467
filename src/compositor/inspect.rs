//! The user view of a message: one chip per part, as a rich input or a TUI would show it.
//! The inspector puts it beside the persisted shape and the model view (the lowered body).

use crate::json_text::JsonText;
use crate::message::{Data, Part, RangeUnit, RefTarget, UserMessage};
use serde_json::{Map, Value};

/// The inspector's three views of one message side by side: `{ user, persisted, model }` —
/// the chips, the persisted (normalised) shape, and the model view, `{ body, report }`
/// lowered with `opts` and the host's answers, or `{ error: { code, message } }` when it
/// does not lower (a message that is only a host action, say). A message that does not
/// parse is the error itself.
pub fn views(
    message: &UserMessage,
    opts: &crate::lower::LowerOptions,
    resolver: &dyn crate::lower::Resolver,
) -> Value {
    let model = match crate::lower::lower(message, opts, resolver) {
        Ok(l) => {
            let mut m = Map::new();
            m.insert(
                "body".into(),
                serde_json::from_str(&l.body).unwrap_or(Value::Null),
            );
            m.insert(
                "report".into(),
                serde_json::from_str(&l.report.to_json()).unwrap_or(Value::Null),
            );
            Value::Object(m)
        }
        Err(e) => {
            let mut err = Map::new();
            err.insert("code".into(), e.code().into());
            err.insert("message".into(), e.message().into());
            let mut m = Map::new();
            m.insert("error".into(), Value::Object(err));
            Value::Object(m)
        }
    };
    let mut o = Map::new();
    o.insert("user".into(), Value::Array(chips(&message.parts)));
    o.insert("persisted".into(), message.to_value());
    o.insert("model".into(), model);
    Value::Object(o)
}

/// One chip per part: `{ part, type, label, detail? }`. `label` is what the user sees
/// (`/review src/a.ts`, `@selection`, `icon.png`, `src/a.ts:10-25`).
pub fn chips(parts: &[Part]) -> Vec<Value> {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (label, detail) = chip(p);
            let mut o = Map::new();
            o.insert("part".into(), i.into());
            o.insert("type".into(), p.type_name().to_owned().into());
            o.insert("label".into(), label.into());
            if let Some(d) = detail {
                o.insert("detail".into(), d.into());
            }
            Value::Object(o)
        })
        .collect()
}

fn ref_label(target: &RefTarget, name: Option<&str>) -> String {
    match (target, name) {
        (RefTarget::ContentId(_), Some(n)) => n.to_owned(),
        (RefTarget::Path(p) | RefTarget::Url(p) | RefTarget::ContentId(p), _) => p.clone(),
    }
}

fn chip(p: &Part) -> (String, Option<String>) {
    match p {
        Part::Text { text } => (text.clone(), None),
        Part::FileRef(r) => {
            let mut label = ref_label(&r.target, r.name.as_deref());
            if let Some(range) = r.range {
                let unit = if range.unit == RangeUnit::Byte {
                    "bytes "
                } else {
                    ""
                };
                match range.end {
                    Some(e) => label.push_str(&format!(":{unit}{}-{e}", range.start)),
                    None => label.push_str(&format!(":{unit}{}", range.start)),
                }
            }
            (label, r.mime.clone())
        }
        Part::FileAttachment(a) => {
            let label = a.name.clone().unwrap_or_else(|| "attachment".into());
            let mut detail = a.mime.clone().unwrap_or_default();
            if let Some(s) = a.size {
                detail.push_str(&format!(" · {s} bytes"));
            }
            if a.content_id.is_some() {
                detail.push_str(" · in the blob store");
            } else if a.data.is_none() {
                detail.push_str(" · descriptor");
            } else if matches!(a.data, Some(Data::Host(_))) {
                detail.push_str(" · held by the host");
            }
            (label, Some(detail.trim_start_matches(" · ").to_owned()))
        }
        Part::Command { id, args, resolved } => {
            let mut label = id.clone();
            match args {
                Value::Null => {}
                Value::String(s) => {
                    label.push(' ');
                    label.push_str(s);
                }
                other => {
                    label.push(' ');
                    label.push_str(&other.json_text());
                }
            }
            (
                label,
                resolved.as_ref().map(|r| r.outcome.name().to_owned()),
            )
        }
        Part::Mention(m) => {
            let t = |k: &str| m.target.get(k).and_then(Value::as_str);
            let label = match m.kind.as_str() {
                "skill" => format!("@skill:{}", t("name").unwrap_or("?")),
                "file" => {
                    let r = m.target.get("range");
                    let n = |k: &str| r.and_then(|r| r.get(k)).and_then(Value::as_u64);
                    let range = match (n("start"), n("end")) {
                        (Some(a), Some(b)) => format!(":{a}-{b}"),
                        (Some(a), None) => format!(":{a}"),
                        _ => String::new(),
                    };
                    format!("@file:{}{range}", t("path").unwrap_or("?"))
                }
                k => match t("id").or_else(|| t("name")) {
                    Some(id) => format!("@{k}:{id}"),
                    None => format!("@{k}"),
                },
            };
            (
                label,
                m.resolved.as_ref().map(|r| r.outcome.name().to_owned()),
            )
        }
        Part::EditorContext(c) => (
            format!(
                "{}{}",
                c.kind,
                c.source
                    .as_ref()
                    .map(|s| format!(" · {s}"))
                    .unwrap_or_default()
            ),
            Some(crate::lower::render::payload_text(&c.payload)),
        ),
        Part::Unknown(_) => (format!("unsupported part `{}`", p.type_name()), None),
    }
}
