//! Conversations for JS: conversions only. The glue (`pkg/src/conversation.js`) asks the
//! host's resolver and turns the results into objects.

use super::{inbox_strings, js_err, parse};
use crate::conversation::{
    lower_conversation, Answers, Conversation, ConversationOptions, ConversationReport,
    LoweredConversation, Turn,
};
use crate::error::{Error, ErrorKind};
use crate::json_text::JsonText;
use crate::wire;
use wasm_bindgen::prelude::*;

fn options(text: &str) -> Result<ConversationOptions, JsValue> {
    ConversationOptions::from_value(parse(text, "options", ErrorKind::InvalidOptions)?)
        .map_err(js_err)
}

/// `report`, a NUL, then the body.
fn out(l: LoweredConversation) -> String {
    let mut s = l.report.to_json();
    s.push('\0');
    s.push_str(&l.body);
    s
}

/// Lowers a conversation. The inbox holds the turns (a JSON array), the options JSON, the
/// resolver answers (a JSON array with one answers object per turn, or ""), then each
/// resolved file text (named by index, `{"text_at": n}`). Returns the report JSON, a NUL,
/// then the body.
#[wasm_bindgen(js_name = lowerConversationInbox)]
pub fn lower_conversation_inbox(lens: &[u32]) -> Result<String, JsValue> {
    let mut it = inbox_strings(lens)?.into_iter();
    let (Some(turns), Some(opts), Some(answers)) = (it.next(), it.next(), it.next()) else {
        return Err(js_err(Error::new(
            ErrorKind::Internal,
            "inbox holds too few strings",
        )));
    };
    let turns = Turn::list_from_value(parse(&turns, "turns", ErrorKind::InvalidMessage)?)
        .map_err(js_err)?;
    let opts = options(&opts)?;
    let tables = wire::resolver_tables(&answers, it.collect(), turns.len()).map_err(js_err)?;
    lower_conversation(&turns, &opts, &tables)
        .map(out)
        .map_err(js_err)
}

/// How many lowerings' reports a conversation keeps for reading.
const REPORTS_KEPT: usize = 8;

/// A conversation kept in wasm with its cache of lowered turns.
#[wasm_bindgen(js_name = ConversationCore)]
pub struct JsConversation {
    inner: Conversation,
    /// The reports of the last lowerings (at most [`REPORTS_KEPT`]), by number, written
    /// as JSON only when read.
    reports: std::collections::VecDeque<(u32, ConversationReport)>,
    /// The number of the next lowering.
    generation: u32,
    /// The last options, by their JSON text (a chat passes the same ones every turn).
    options: Option<(String, ConversationOptions)>,
    /// Turns read by [`JsConversation::stage_inbox`], waiting to be appended, by number.
    pending: Vec<(u32, Turn)>,
    /// The number of the next staged turn.
    staged: u32,
}

#[wasm_bindgen(js_class = ConversationCore)]
impl JsConversation {
    /// An empty conversation; `cache_bytes` bounds the cache of lowered turns (0: default).
    #[wasm_bindgen(constructor)]
    pub fn new(cache_bytes: usize) -> JsConversation {
        JsConversation {
            inner: if cache_bytes == 0 {
                Conversation::default()
            } else {
                Conversation::new(cache_bytes)
            },
            reports: std::collections::VecDeque::new(),
            generation: 0,
            options: None,
            pending: Vec::new(),
            staged: 0,
        }
    }

    /// Appends a turn. The inbox holds the turn JSON, its resolver answers (an object, or
    /// ""), then the resolved texts. Returns the turn's index.
    #[wasm_bindgen(js_name = appendInbox)]
    pub fn append_inbox(&mut self, lens: &[u32]) -> Result<usize, JsValue> {
        let mut it = inbox_strings(lens)?.into_iter();
        let (Some(turn), Some(answers)) = (it.next(), it.next()) else {
            return Err(js_err(Error::new(
                ErrorKind::Internal,
                "inbox holds too few strings",
            )));
        };
        let table = wire::resolver_table_with(&answers, it.collect()).map_err(js_err)?;
        self.inner
            .append_json(&turn, Answers(table.into_entries()))
            .map_err(js_err)
    }

    /// Reads a turn to append (the inbox holds its JSON) and keeps it under a number: a store
    /// lays it out ([`Self::layout_staged`]) and [`Self::append_staged_inbox`] appends it,
    /// without reading it again. Returns the number, a NUL, then the resolver requests of its
    /// parts (a JSON array; empty for all but a user turn with file-refs, mentions or blobs).
    #[wasm_bindgen(js_name = stageInbox)]
    pub fn stage_inbox(&mut self, lens: &[u32]) -> Result<String, JsValue> {
        let turn = super::with_inbox_text(lens, |t| self.inner.read_turn(t))?.map_err(js_err)?;
        let requests = match &turn {
            Turn::User(m) => crate::lower::requests::resolve_requests(&m.parts),
            _ => Vec::new(),
        };
        let n = self.staged;
        self.staged = self.staged.wrapping_add(1);
        self.pending.push((n, turn));
        let list: Vec<serde_json::Value> = requests.into_iter().map(|r| r.value).collect();
        Ok(format!(
            "{n}\0{}",
            serde_json::Value::Array(list).json_text()
        ))
    }

    #[cfg(not(feature = "lowering-only"))]
    fn staged(&self, n: u32) -> Result<&Turn, JsValue> {
        self.pending
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, t)| t)
            .ok_or_else(|| {
                js_err(Error::new(
                    ErrorKind::Internal,
                    "no turn is staged under this number",
                ))
            })
    }

    /// The store rows of staged turn `n` after the session's last message (`options`: `{
    /// session?, id?, now? }`; `session`: the stored session row, "" when new), as
    /// `appendTurnInbox` lays them out (without the message: the glue holds it).
    #[cfg(not(feature = "lowering-only"))]
    #[wasm_bindgen(js_name = layoutStaged)]
    pub fn layout_staged(&self, n: u32, options: &str, session: &str) -> Result<String, JsValue> {
        super::compositor::turn_done(self.staged(n)?, options, session, false)
    }

    /// Appends staged turn `n` (or drops it: `keep` false, when its store write failed); the
    /// inbox holds its resolver answers (an object, or "") and the resolved texts. Returns the
    /// turn's index.
    #[wasm_bindgen(js_name = appendStagedInbox)]
    pub fn append_staged_inbox(
        &mut self,
        n: u32,
        keep: bool,
        lens: &[u32],
    ) -> Result<usize, JsValue> {
        let Some(at) = self.pending.iter().position(|(k, _)| *k == n) else {
            return Err(js_err(Error::new(
                ErrorKind::Internal,
                "no turn is staged under this number",
            )));
        };
        let (_, turn) = self.pending.swap_remove(at);
        if !keep {
            return Ok(self.inner.len());
        }
        let mut it = inbox_strings(lens)?.into_iter();
        let answers = it.next().unwrap_or_default();
        let table = wire::resolver_table_with(&answers, it.collect()).map_err(js_err)?;
        Ok(self.inner.append(turn, Answers(table.into_entries())))
    }

    /// Lowers the conversation (options JSON). Returns the lowering's number (its report
    /// waits in [`Self::report_json`]), a NUL, then the body as the change from the previous
    /// one: the UTF-16 length of the previous body to keep, a NUL, the UTF-16 length of the
    /// tail's closing part (after the last message), a NUL, then the text that follows the
    /// kept prefix (the glue keeps the previous body).
    pub fn lower(&mut self, options_json: &str) -> Result<String, JsValue> {
        if self.options.as_ref().is_none_or(|(t, _)| t != options_json) {
            self.options = Some((options_json.to_owned(), options(options_json)?));
        }
        let Some((_, opts)) = &self.options else {
            return Err(js_err(Error::new(ErrorKind::Internal, "options were lost")));
        };
        let d = self.inner.lower_delta(opts).map_err(js_err)?;
        let generation = self.generation;
        self.generation = self.generation.wrapping_add(1);
        if self.reports.len() >= REPORTS_KEPT {
            self.reports.pop_front();
        }
        self.reports.push_back((generation, d.report));
        let mut s = format!("{generation}\0{}\0{}\0", d.keep_utf16, d.close_utf16);
        s.push_str(&d.tail);
        Ok(s)
    }

    /// The report of lowering number `generation` as JSON, while it is one of the last
    /// [`REPORTS_KEPT`].
    #[wasm_bindgen(js_name = reportJson)]
    pub fn report_json(&self, generation: u32) -> Result<String, JsValue> {
        self.reports
            .iter()
            .find(|(g, _)| *g == generation)
            .map(|(_, r)| r.to_json())
            .ok_or_else(|| {
                js_err(Error::new(
                    ErrorKind::InvalidOptions,
                    format!("the report of a lowering is kept until {REPORTS_KEPT} more lowerings of the same conversation: read it before"),
                ))
            })
    }

    /// The turns, as a JSON array.
    pub fn turns(&self) -> String {
        let list: Vec<serde_json::Value> = self.inner.turns().map(Turn::to_value).collect();
        serde_json::Value::Array(list).json_text()
    }

    /// How many turns there are.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// Keeps the first `n` turns.
    pub fn truncate(&mut self, n: usize) {
        self.inner.truncate(n);
    }

    /// `{ entries, bytes, limit, hits, misses }` as JSON.
    #[wasm_bindgen(js_name = cacheStats)]
    pub fn cache_stats(&self) -> String {
        crate::json_text::to_string(&self.inner.cache_stats()).unwrap_or_default()
    }
}
