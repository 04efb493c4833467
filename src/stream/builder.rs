//! Builds the assistant turn from what a provider dialect reads, and emits the normalised
//! events as it goes. Each dialect names its content blocks with a [`Key`]; the builder
//! gives each block a part of the turn, in the order the blocks began.

use super::event::{Event, FinishReason, Usage};
use super::partial::{Edit, ObjectSource, Partial};
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use crate::turn::{AssistantPart, AssistantTurn, Reasoning, ToolCall};
use serde_json::{Map, Value};

/// A dialect's name for a block: a kind tag and up to two indices.
pub(crate) type Key = (u8, u64, u64);

#[derive(Debug)]
enum Slot {
    Text(String),
    Reasoning { r: Reasoning, ended: bool },
    Tool(Tool),
    Other(Value),
}

#[derive(Debug)]
struct Tool {
    id: String,
    name: String,
    args: String,
    /// Arguments given whole (Gemini, non-streaming bodies) instead of as text.
    input: Option<Value>,
    signature: Option<String>,
    /// Not a function call (`custom`, a provider tool): see [`ToolCall::kind`].
    kind: Option<String>,
    /// The provider's own item for the call.
    data: Option<Value>,
    ended: bool,
}

/// The turn being built.
#[derive(Debug)]
pub(crate) struct Builder {
    /// The `provider` tag of reasoning and tool-call parts (`anthropic`, `openai`, `gemini`).
    tag: &'static str,
    /// The target's wire name, kept in the turn's metadata.
    target: &'static str,
    slots: Vec<Slot>,
    keys: Vec<(Key, usize)>,
    pub(crate) events: Vec<Event>,
    id: Option<String>,
    model: Option<String>,
    started: bool,
    usage: Option<Usage>,
    finish: Option<(FinishReason, Option<String>)>,
    /// The terminal event was seen (its usage and finish events are out).
    pub(crate) done: bool,
    errors: Vec<Error>,
    /// Argument text of blocks kept as provider data (a server tool's call), by part.
    other_args: Vec<(usize, String)>,
    /// The citations of text parts, by part.
    cites: Vec<(usize, Value)>,
    extra: Map<String, Value>,
    /// Where the JSON answer is, when the request asked for one, and its reader.
    object: Option<(ObjectSource, Partial)>,
    /// The answer's edits since the events were last taken: one `object-delta` per batch
    /// (appends to the same string merged), after the batch's text.
    edits: Vec<Edit>,
}

impl Builder {
    pub(crate) fn new(tag: &'static str, target: &'static str) -> Self {
        Builder {
            tag,
            target,
            slots: Vec::new(),
            keys: Vec::new(),
            events: Vec::new(),
            id: None,
            model: None,
            started: false,
            usage: None,
            finish: None,
            done: false,
            errors: Vec::new(),
            other_args: Vec::new(),
            cites: Vec::new(),
            extra: Map::new(),
            object: None,
            edits: Vec::new(),
        }
    }

    /// The request asked for a JSON answer, found at `source`.
    pub(crate) fn expect_object(&mut self, source: ObjectSource) {
        self.object = Some((source, Partial::new()));
    }

    /// Feeds `text` of the answer to the object reader (`tool`: the call it came from).
    fn object_text(&mut self, tool: Option<&str>, text: &str) {
        let Some((source, p)) = &mut self.object else {
            return;
        };
        let ours = match (source, tool) {
            (ObjectSource::Text, None) => true,
            (ObjectSource::Tool(name), Some(t)) => name == t,
            _ => false,
        };
        if ours {
            for e in p.push(text) {
                match (self.edits.last_mut(), e) {
                    (
                        Some(Edit::Append { path, append }),
                        Edit::Append {
                            path: p2,
                            append: more,
                        },
                    ) if *path == p2 => append.push_str(&more),
                    (_, e) => self.edits.push(e),
                }
            }
        }
    }

    /// The answer's object, when the request asked for one: its last edits, then the
    /// whole text parsed (into `metadata.object`), or an `InvalidOutput` error keeping
    /// the text.
    fn object_end(&mut self) {
        let Some((source, mut p)) = self.object.take() else {
            return;
        };
        self.edits.extend(p.end());
        self.flush_edits();
        let text: String = match &source {
            ObjectSource::Text => self
                .slots
                .iter()
                .filter_map(|s| match s {
                    Slot::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect(),
            ObjectSource::Tool(name) => {
                match self.slots.iter().find_map(|s| match s {
                    Slot::Tool(t) if &t.name == name => Some(t),
                    _ => None,
                }) {
                    Some(t) => match &t.input {
                        Some(v) => v.json_text(),
                        None => t.args.clone(),
                    },
                    None => String::new(),
                }
            }
        };
        // The JSON itself, past a fence or a sentence around it.
        let json = match (text.find(['{', '[']), text.rfind(['}', ']'])) {
            (Some(a), Some(b)) if a < b => text.get(a..=b).unwrap_or(""),
            _ => text.trim(),
        };
        match serde_json::from_str::<Value>(json) {
            Ok(v) => {
                self.extra.insert("object".into(), v);
            }
            Err(e) => {
                let excerpt: String = text.chars().take(2000).collect();
                self.error(
                    Error::new(
                        ErrorKind::InvalidOutput,
                        format!("the answer is not the JSON the request asked for: {e}"),
                    )
                    .with("text", excerpt),
                );
            }
        }
    }

    /// The response's id and model (the first time either is known).
    pub(crate) fn start(&mut self, id: Option<&str>, model: Option<&str>) {
        if self.started {
            return;
        }
        self.started = true;
        self.id = id.map(str::to_owned);
        self.model = model.map(str::to_owned);
        self.events.push(Event::Start {
            id: self.id.clone(),
            model: self.model.clone(),
        });
    }

    /// The part of block `key`, if it began.
    fn find(&self, key: Key) -> Option<usize> {
        self.keys
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|&(_, i)| i)
    }

    /// A new part; reasoning before it is complete (no provider interleaves them).
    fn open(&mut self, key: Key, slot: Slot) -> usize {
        for j in 0..self.slots.len() {
            if matches!(
                self.slots.get(j),
                Some(Slot::Reasoning { ended: false, .. })
            ) {
                self.end_part(j);
            }
        }
        let i = self.slots.len();
        self.slots.push(slot);
        self.keys.push((key, i));
        i
    }

    /// Text appended to block `key` (a text part begins with its first non-empty text).
    pub(crate) fn text(&mut self, key: Key, text: &str) {
        if text.is_empty() {
            return;
        }
        let i = match self.find(key) {
            Some(i) if matches!(self.slots.get(i), Some(Slot::Text(_))) => i,
            _ => self.open(key, Slot::Text(String::new())),
        };
        if let Some(Slot::Text(t)) = self.slots.get_mut(i) {
            t.push_str(text);
        }
        self.events.push(Event::TextDelta {
            part: i,
            text: text.to_owned(),
        });
        self.object_text(None, text);
    }

    /// A citation of the text of block `key` (normalised, see [`cite`]).
    pub(crate) fn citation(&mut self, key: Key, c: Map<String, Value>) {
        let i = match self.find(key) {
            Some(i) if matches!(self.slots.get(i), Some(Slot::Text(_))) => i,
            _ => self.open(key, Slot::Text(String::new())),
        };
        self.cite_part(i, c);
    }

    fn cite_part(&mut self, i: usize, c: Map<String, Value>) {
        let c = Value::Object(c);
        self.events.push(Event::Citation {
            part: i,
            citation: c.clone(),
        });
        self.cites.push((i, c));
    }

    /// A citation of the visible text from byte `start` to `end` of all of it (Gemini's
    /// segments): given to the text part where the span starts, the span in characters of
    /// that part.
    pub(crate) fn citation_span(&mut self, start: u64, end: u64, mut c: Map<String, Value>) {
        let mut at = 0u64;
        let mut hit = None;
        for (i, s) in self.slots.iter().enumerate() {
            if let Slot::Text(t) = s {
                // The part the span starts in (past the end: the last one).
                let len = t.len() as u64;
                let chars = |b: u64| {
                    let b = usize::try_from(b.saturating_sub(at)).unwrap_or(usize::MAX);
                    t.char_indices().take_while(|(k, _)| *k < b).count() as u64
                };
                hit = Some((i, chars(start), chars(end)));
                if start < at + len {
                    break;
                }
                at += len;
            }
        }
        let Some((i, s, e)) = hit else { return };
        c.insert("start".into(), s.into());
        c.insert("end".into(), e.into());
        self.cite_part(i, c);
    }

    fn reasoning_slot(&mut self, key: Key) -> usize {
        match self.find(key) {
            Some(i) if matches!(self.slots.get(i), Some(Slot::Reasoning { .. })) => i,
            _ => {
                let r = Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: false,
                    data: None,
                    id: None,
                    provider: Some(self.tag.to_owned()),
                    details: Vec::new(),
                };
                self.open(key, Slot::Reasoning { r, ended: false })
            }
        }
    }

    /// A reasoning block began (it becomes a part even if it stays empty: its signature
    /// may be all there is).
    pub(crate) fn reasoning_begin(&mut self, key: Key) {
        self.reasoning_slot(key);
    }

    /// One of the server's own reasoning items (OpenRouter's `reasoning_details`) for the
    /// reasoning of block `key`: a piece of the last item (the same `index` and `type`) is
    /// merged into it, its text appended.
    pub(crate) fn reasoning_detail(&mut self, key: Key, item: &Value) {
        let i = self.reasoning_slot(key);
        let Some(Slot::Reasoning { r, .. }) = self.slots.get_mut(i) else {
            return;
        };
        let (Value::Object(new), last) = (item, r.details.last_mut()) else {
            return;
        };
        match last {
            Some(Value::Object(old))
                if old.get("index") == new.get("index") && old.get("type") == new.get("type") =>
            {
                for (k, v) in new {
                    match (old.get_mut(k), v) {
                        (Some(Value::String(a)), Value::String(b))
                            if matches!(k.as_str(), "text" | "summary" | "data") =>
                        {
                            a.push_str(b)
                        }
                        _ => {
                            old.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            _ => r.details.push(item.clone()),
        }
    }

    /// Reasoning text appended to block `key`.
    pub(crate) fn reasoning(&mut self, key: Key, text: &str) {
        let i = self.reasoning_slot(key);
        if text.is_empty() {
            return;
        }
        if let Some(Slot::Reasoning { r, .. }) = self.slots.get_mut(i) {
            r.text.push_str(text);
        }
        self.events.push(Event::ReasoningDelta {
            part: i,
            text: text.to_owned(),
        });
    }

    /// Sets what block `key`'s provider needs to accept the reasoning back.
    pub(crate) fn reasoning_meta(
        &mut self,
        key: Key,
        signature: Option<&str>,
        redacted: Option<&str>,
        id: Option<&str>,
    ) {
        let i = self.reasoning_slot(key);
        if let Some(Slot::Reasoning { r, .. }) = self.slots.get_mut(i) {
            if let Some(s) = signature {
                match &mut r.signature {
                    Some(have) => have.push_str(s),
                    None => r.signature = Some(s.to_owned()),
                }
            }
            if let Some(d) = redacted {
                r.redacted = true;
                r.data = Some(d.to_owned());
            }
            if let Some(id) = id {
                r.id = Some(id.to_owned());
            }
        }
    }

    /// Block `key` ended (reasoning: its end event; a tool call: its arguments parsed).
    pub(crate) fn end(&mut self, key: Key) {
        if let Some(i) = self.find(key) {
            self.end_part(i);
        }
    }

    fn end_part(&mut self, i: usize) {
        match self.slots.get_mut(i) {
            Some(Slot::Reasoning { r, ended }) if !*ended => {
                *ended = true;
                self.events.push(Event::ReasoningEnd {
                    part: i,
                    signature: r.signature.clone(),
                    redacted: r.redacted,
                    data: r.data.clone(),
                    id: r.id.clone(),
                });
            }
            Some(Slot::Other(Value::Object(o))) => {
                let Some(at) = self.other_args.iter().position(|(j, _)| *j == i) else {
                    return;
                };
                let (_, text) = self.other_args.swap_remove(at);
                let input = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
                if let Some(Value::Object(d)) = o.get_mut("data") {
                    d.insert("input".into(), input);
                }
            }
            Some(Slot::Tool(t)) if !t.ended => {
                t.ended = true;
                let input = match t.input.take() {
                    Some(v) => Ok(v),
                    // A custom tool's input is free text.
                    None if t.kind.as_deref() == Some("custom") => {
                        Ok(Value::String(t.args.clone()))
                    }
                    None if t.args.trim().is_empty() => Ok(Value::Object(Map::new())),
                    None => serde_json::from_str::<Value>(&t.args).map_err(|e| e.to_string()),
                };
                let input = match input {
                    Ok(v) => v,
                    Err(reason) => {
                        let e = Error::new(
                            ErrorKind::InvalidToolInput,
                            format!(
                                "the arguments of tool call `{}` ({}) are not valid JSON: {reason}",
                                t.id, t.name
                            ),
                        )
                        .with("call_id", t.id.clone())
                        .with("name", t.name.clone())
                        .with("part", i as u64);
                        self.events.push(Event::error(&e));
                        self.errors.push(e);
                        Value::String(t.args.clone())
                    }
                };
                t.input = Some(input.clone());
                self.events.push(Event::ToolCallEnd {
                    part: i,
                    id: t.id.clone(),
                    name: t.name.clone(),
                    input,
                });
            }
            _ => {}
        }
    }

    /// A tool call began. A call without a name is kept as provider data (with an error
    /// event); a call without an id, or with the id of an earlier call, gets one made from
    /// its part index, so the turn always reads back.
    pub(crate) fn tool_start(&mut self, key: Key, id: &str, name: &str) {
        self.tool_start_kind(key, id, name, None)
    }

    /// [`Builder::tool_start`] for a call of `kind` (see [`ToolCall::kind`]).
    pub(crate) fn tool_start_kind(&mut self, key: Key, id: &str, name: &str, kind: Option<&str>) {
        if self.find(key).is_some() {
            return;
        }
        let part = self.slots.len();
        if name.is_empty() {
            self.error(
                Error::new(
                    ErrorKind::StreamMalformed,
                    format!("{} response: a tool call without a tool name", self.target),
                )
                .with("provider", self.target)
                .with("part", part as u64),
            );
            let mut o = Map::new();
            o.insert("type".into(), "provider-data".into());
            o.insert("provider".into(), self.target.into());
            o.insert(
                "data".into(),
                serde_json::json!({ "tool_call": { "id": id } }),
            );
            self.open(key, Slot::Other(Value::Object(o)));
            return;
        }
        let taken = |id: &str| {
            self.slots
                .iter()
                .any(|s| matches!(s, Slot::Tool(t) if t.id == id))
        };
        let id = if id.is_empty() || taken(id) {
            let made = match &self.id {
                Some(r) => format!("{r}-part-{part}"),
                None => format!("call-part-{part}"),
            };
            if !id.is_empty() {
                self.error(
                    Error::new(
                        ErrorKind::StreamMalformed,
                        format!(
                            "{} response: two tool calls share the id `{id}`; the second is `{made}`",
                            self.target
                        ),
                    )
                    .with("provider", self.target)
                    .with("part", part as u64),
                );
            }
            made
        } else {
            id.to_owned()
        };
        let i = self.open(
            key,
            Slot::Tool(Tool {
                id: id.clone(),
                name: name.to_owned(),
                args: String::new(),
                input: None,
                signature: None,
                kind: kind.map(str::to_owned),
                data: None,
                ended: false,
            }),
        );
        self.events.push(Event::ToolCallStart {
            part: i,
            id,
            name: name.to_owned(),
            kind: kind.map(str::to_owned),
        });
    }

    /// More argument text of the tool call of block `key` (of a block kept as provider
    /// data, such as a server tool's call: its `input` when it ends).
    pub(crate) fn tool_delta(&mut self, key: Key, delta: &str) {
        let Some(i) = self.find(key) else { return };
        if matches!(self.slots.get(i), Some(Slot::Other(_))) {
            match self.other_args.iter_mut().find(|(j, _)| *j == i) {
                Some((_, s)) => s.push_str(delta),
                None => self.other_args.push((i, delta.to_owned())),
            }
            return;
        }
        if let Some(Slot::Tool(t)) = self.slots.get_mut(i) {
            if delta.is_empty() || t.ended {
                return;
            }
            t.args.push_str(delta);
            self.events.push(Event::ToolCallDelta {
                part: i,
                id: t.id.clone(),
                delta: delta.to_owned(),
            });
            if self.object.is_some() {
                let name = t.name.clone();
                self.object_text(Some(&name), delta);
            }
        }
    }

    /// Whether block `key` holds something already (text, reasoning text, arguments).
    pub(crate) fn has_block(&self, key: Key) -> bool {
        match self.find(key).and_then(|i| self.slots.get(i)) {
            Some(Slot::Text(_)) | Some(Slot::Other(_)) => true,
            Some(Slot::Reasoning { r, .. }) => !r.text.is_empty(),
            Some(Slot::Tool(t)) => !t.args.is_empty(),
            None => false,
        }
    }

    /// A whole tool call (arguments already parsed): start, one delta, end.
    pub(crate) fn tool_whole(
        &mut self,
        key: Key,
        id: &str,
        name: &str,
        input: Value,
        signature: Option<&str>,
    ) {
        self.tool_start(key, id, name);
        self.tool_input(key, input, signature);
        self.end(key);
    }

    /// The whole arguments of the open tool call of block `key` (one delta; they are its
    /// input whatever text follows), and its signature when it has one.
    pub(crate) fn tool_input(&mut self, key: Key, input: Value, signature: Option<&str>) {
        let text = input.json_text();
        self.tool_delta(key, &text);
        if let Some(Slot::Tool(t)) = self.find(key).and_then(|i| self.slots.get_mut(i)) {
            t.input = Some(input);
            if signature.is_some() {
                t.signature = signature.map(str::to_owned);
            }
        }
    }

    /// Ends the tool call of block `key` with its arguments already parsed (`input`), its
    /// argument text as it came.
    pub(crate) fn tool_end_with(&mut self, key: Key, input: Value) {
        if let Some(Slot::Tool(t)) = self.find(key).and_then(|i| self.slots.get_mut(i)) {
            if !t.ended {
                t.input = Some(input);
            }
        }
        self.end(key);
    }

    /// The provider's own item for the open tool call of block `key`, to send back.
    pub(crate) fn tool_data(&mut self, key: Key, data: &Value) {
        if let Some(Slot::Tool(t)) = self.find(key).and_then(|i| self.slots.get_mut(i)) {
            t.data = Some(data.clone());
        }
    }

    /// A block of a kind this version does not model, kept verbatim as a part.
    pub(crate) fn other(&mut self, key: Key, value: Value) {
        match self.find(key) {
            Some(i) => {
                if let Some(Slot::Other(Value::Object(o))) = self.slots.get_mut(i) {
                    o.insert("data".into(), value);
                }
            }
            None => {
                let mut o = Map::new();
                o.insert("type".into(), "provider-data".into());
                o.insert("provider".into(), self.target.into());
                o.insert("data".into(), value);
                self.open(key, Slot::Other(Value::Object(o)));
            }
        }
    }

    /// A block of a kind this version does not model, kept verbatim as a part of its own.
    pub(crate) fn other_part(&mut self, value: Value) {
        let key = (u8::MAX, self.slots.len() as u64, 0);
        self.other(key, value);
    }

    /// Whether any tool call began.
    pub(crate) fn has_tool_calls(&self) -> bool {
        self.slots.iter().any(|s| matches!(s, Slot::Tool(_)))
    }

    /// Token counts (the last ones given win).
    pub(crate) fn usage(&mut self, u: Usage) {
        self.usage = Some(u);
    }

    /// Whether token counts came.
    pub(crate) fn has_usage(&self) -> bool {
        self.usage.is_some()
    }

    /// The usage so far, to update.
    pub(crate) fn usage_mut(&mut self) -> &mut Usage {
        self.usage.get_or_insert_with(Usage::default)
    }

    /// Why the model stopped (emitted with the terminal events).
    pub(crate) fn finish_reason(&mut self, reason: FinishReason, raw: Option<&str>) {
        self.finish = Some((reason, raw.map(str::to_owned)));
    }

    /// Whether a finish reason is known.
    pub(crate) fn has_finish(&self) -> bool {
        self.finish.is_some()
    }

    /// A metadata key of the final turn (a refusal, prompt feedback, …).
    pub(crate) fn meta(&mut self, key: &str, value: Value) {
        self.extra.insert(key.to_owned(), value);
    }

    /// A provider error or a malformed piece: an error event; the turn keeps what it has.
    pub(crate) fn error(&mut self, e: Error) {
        self.events.push(Event::error(&e));
        self.errors.push(e);
    }

    /// The first error, if any.
    pub(crate) fn first_error(&self) -> Option<&Error> {
        self.errors.first()
    }

    /// Closes every open block, then emits usage and the finish event (once).
    pub(crate) fn terminal(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        for i in 0..self.slots.len() {
            self.end_part(i);
        }
        self.object_end();
        if let Some(u) = &self.usage {
            self.events.push(Event::Usage(u.clone()));
        }
        let (reason, raw) = match (&self.finish, self.errors.is_empty()) {
            (Some((r, raw)), _) => (*r, raw.clone()),
            (None, false) => (FinishReason::Error, None),
            (None, true) if self.has_tool_calls() => (FinishReason::ToolCalls, None),
            (None, true) => (FinishReason::Stop, None),
        };
        self.finish = Some((reason, raw.clone()));
        self.events.push(Event::Finish { reason, raw });
    }

    /// The batch's answer edits as one event.
    fn flush_edits(&mut self) {
        if !self.edits.is_empty() {
            let edits = std::mem::take(&mut self.edits);
            self.events.push(Event::ObjectDelta { edits });
        }
    }

    /// Takes the events emitted so far.
    pub(crate) fn take_events(&mut self) -> Vec<Event> {
        self.flush_edits();
        std::mem::take(&mut self.events)
    }

    /// The assistant turn as built so far.
    pub(crate) fn turn(&self) -> AssistantTurn {
        let tag = self.tag;
        // The citations of each part, in one pass.
        let mut by_part: Vec<Vec<Value>> = Vec::new();
        if !self.cites.is_empty() {
            by_part.resize_with(self.slots.len(), Vec::new);
            for (i, c) in &self.cites {
                if let Some(v) = by_part.get_mut(*i) {
                    v.push(c.clone());
                }
            }
        }
        let parts = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| match s {
                Slot::Text(t) => AssistantPart::Text {
                    text: t.clone(),
                    citations: by_part.get_mut(i).map(std::mem::take).unwrap_or_default(),
                },
                Slot::Reasoning { r, .. } => AssistantPart::Reasoning(r.clone()),
                Slot::Tool(t) => AssistantPart::ToolCall(ToolCall {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    input: match &t.input {
                        Some(v) => v.clone(),
                        None if t.kind.as_deref() == Some("custom") => {
                            Value::String(t.args.clone())
                        }
                        None => serde_json::from_str(&t.args)
                            .unwrap_or_else(|_| Value::String(t.args.clone())),
                    },
                    signature: t.signature.clone(),
                    provider: Some(tag.to_owned()),
                    kind: t.kind.clone(),
                    data: t.data.clone(),
                }),
                Slot::Other(v) => AssistantPart::Unknown(v.clone()),
            })
            .collect();
        let mut m = Map::new();
        m.insert("provider".into(), self.target.into());
        if let Some(id) = &self.id {
            m.insert("id".into(), id.clone().into());
        }
        if let Some(model) = &self.model {
            m.insert("model".into(), model.clone().into());
        }
        if let Some((reason, raw)) = &self.finish {
            m.insert(
                "finish_reason".into(),
                serde_json::to_value(reason).unwrap_or(Value::Null),
            );
            if let Some(raw) = raw {
                m.insert("stop_reason".into(), raw.clone().into());
            }
        }
        if let Some(u) = &self.usage {
            m.insert(
                "usage".into(),
                serde_json::to_value(u).unwrap_or(Value::Null),
            );
            // What the call cost, where the model table has its prices.
            let prices = self
                .model
                .as_deref()
                .and_then(|id| crate::models::find(tag, id))
                .and_then(|row| row.prices);
            if let Some(p) = prices {
                let cost = p.cost(
                    u.input_tokens,
                    u.output_tokens,
                    u.cached_tokens.unwrap_or(0),
                    u.cache_write_tokens.unwrap_or(0),
                );
                if let Some(n) = serde_json::Number::from_f64(cost) {
                    m.insert("cost".into(), Value::Number(n));
                }
            }
        }
        if let Some(e) = self.errors.first() {
            let mut o = Map::new();
            o.insert("code".into(), e.code().into());
            o.insert("message".into(), e.to_string().into());
            m.insert("error".into(), Value::Object(o));
        }
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        AssistantTurn { parts, metadata: m }
    }
}

/// A citation normalised: `{ type, …fields, provider, data }`, each `(from, to)` field of
/// the provider's own citation copied when it has a value.
pub(crate) fn cite(
    provider: &str,
    kind: &str,
    raw: &Value,
    fields: &[(&str, &str)],
) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("type".into(), kind.into());
    for (from, to) in fields {
        if let Some(v) = raw.get(*from).filter(|v| !v.is_null()) {
            o.insert((*to).into(), v.clone());
        }
    }
    o.insert("provider".into(), provider.into());
    o.insert("data".into(), raw.clone());
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(b: &Builder) -> Vec<(usize, u64, u64)> {
        b.cites
            .iter()
            .map(|(i, c)| {
                let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(u64::MAX);
                (*i, n("start"), n("end"))
            })
            .collect()
    }

    #[test]
    fn a_byte_span_of_the_whole_text_lands_in_its_part_in_characters() {
        let mut b = Builder::new("gemini", "gemini");
        b.text((0, 0, 0), "héllo "); // 7 bytes, 6 characters
        b.reasoning((1, 0, 0), "thinking");
        b.text((0, 1, 0), "wörld"); // 6 bytes, 5 characters
                                    // "llo" in the first part; "wörld" whole in the second; a span past the end.
        b.citation_span(3, 6, Map::new());
        b.citation_span(7, 13, Map::new());
        b.citation_span(40, 50, Map::new());
        assert_eq!(spans(&b), vec![(0, 2, 5), (2, 0, 5), (2, 5, 5)]);
        // No text at all: nothing to cite.
        let mut empty = Builder::new("gemini", "gemini");
        empty.citation_span(0, 4, Map::new());
        assert!(empty.cites.is_empty());
    }
}
