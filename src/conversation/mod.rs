//! Conversations: system, user, assistant and tool turns, lowered to every provider.
//!
//! [`lower_conversation`] is the stateless form: turns in, one body out. [`Conversation`]
//! keeps the turns and a bounded cache of lowered turns, so that a chat pays for its new
//! turn and the concatenation, never again for a turn already lowered; both give the same
//! bytes. See [`mod@lower`] for each provider's rules and [`ids`] for tool call
//! ids.

pub use crate::provider::ids;
pub mod lower;

pub use crate::turn::{
    AssistantPart, AssistantTurn, Reasoning, SystemTurn, ToolCall, ToolOutput, ToolPart,
    ToolResult, ToolTurn, Turn, CONVERSATION_SCHEMA_VERSION,
};
pub use lower::{
    CacheOptions, CacheReport, ConversationOptions, ConversationReport, IdMapping,
    LoweredConversation, LoweredTurn, Repair, TurnReport,
};

use crate::body::SlotMode;
use crate::error::{Error, ErrorKind, Result};
use crate::json_text::JsonText;
use crate::lower::{Capabilities, Provider, ResolveRequest, Resolved, Resolver, TableResolver};
use lower::{assemble, lower_turn, Assembled, Head, Key, Prev, Resume, TurnCx};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::rc::Rc;

/// Supplies the resolver of each turn (a user turn's file-refs, mentions and blobs).
pub trait TurnResolvers {
    /// The resolver for turn `turn`.
    fn for_turn(&self, turn: usize) -> &dyn Resolver;
}

impl<R: Resolver> TurnResolvers for R {
    fn for_turn(&self, _: usize) -> &dyn Resolver {
        self
    }
}

impl TurnResolvers for Vec<TableResolver> {
    fn for_turn(&self, turn: usize) -> &dyn Resolver {
        match self.get(turn) {
            Some(r) => r,
            None => &crate::lower::NoResolver,
        }
    }
}

/// What [`lower_conversation_marked`] gives back.
#[derive(Debug, Clone, PartialEq)]
// One per lowering, moved once: boxing the body would cost more than the size does.
#[allow(clippy::large_enum_variant)]
pub enum ConversationOutcome {
    /// The body, host-held data written as `\u{1}n\u{1}` markers.
    Lowered(LoweredConversation),
    /// The core must read these host slots whole first.
    NeedsData(Vec<u32>),
}

/// Lowers a whole conversation for `options.lower.provider`.
pub fn lower_conversation(
    turns: &[Turn],
    options: &ConversationOptions,
    resolvers: &dyn TurnResolvers,
) -> Result<LoweredConversation> {
    match lower_in(turns, options, resolvers, SlotMode::Forbid)? {
        ConversationOutcome::Lowered(l) => Ok(l),
        ConversationOutcome::NeedsData(_) => Err(Error::new(
            ErrorKind::InvalidMessage,
            "attachment data refers to a host slot, but no host holds it here",
        )),
    }
}

/// The conversation's turn count and each user turn from `from` on against `limits`.
fn check_limits<'a>(
    turns: impl Iterator<Item = &'a Turn>,
    n: usize,
    from: usize,
    limits: &crate::limits::Limits,
) -> Result<()> {
    limits.check_turns(n)?;
    for (i, t) in turns.enumerate().skip(from) {
        if let Turn::User(m) = t {
            if !limits.allows_message(m) {
                limits.check_message(m, &format!("turns[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Like [`lower_conversation`], with host-held data as markers (used by the bindings).
pub fn lower_conversation_marked(
    turns: &[Turn],
    options: &ConversationOptions,
    resolvers: &dyn TurnResolvers,
) -> Result<ConversationOutcome> {
    lower_in(turns, options, resolvers, SlotMode::Mark)
}

fn lower_in(
    turns: &[Turn],
    options: &ConversationOptions,
    resolvers: &dyn TurnResolvers,
    mode: SlotMode,
) -> Result<ConversationOutcome> {
    check_limits(turns.iter(), turns.len(), 0, &options.lower.limits)?;
    let opts = &options.lower;
    let caps = Capabilities::for_call(opts.provider, &opts.settings, opts.capabilities.as_ref())?;
    let cx = TurnCx {
        provider: opts.provider,
        caps: &caps,
        mode,
        keep_reasoning: keeps_reasoning(opts),
        details: keeps_details(opts),
    };
    let mut lowered = Vec::with_capacity(turns.len());
    let mut needs = Vec::new();
    for (i, t) in turns.iter().enumerate() {
        let lt = lower_turn(t, resolvers.for_turn(i), &cx)
            .map_err(|e| e.within(&format!("turns[{i}]")))?;
        needs.extend_from_slice(&lt.needs);
        lowered.push(lt);
    }
    if !needs.is_empty() {
        if mode == SlotMode::Forbid {
            return Err(Error::new(
                ErrorKind::InvalidMessage,
                "attachment data refers to a host slot, but no host holds it here",
            ));
        }
        return Ok(ConversationOutcome::NeedsData(needs));
    }
    let refs: Vec<&LoweredTurn> = lowered.iter().collect();
    let plan = lower::fit::plan(&refs, options, &caps)?;
    match assemble(&refs, options, 0, None, None, None, plan.as_ref())? {
        Some(a) => Ok(ConversationOutcome::Lowered(LoweredConversation {
            body: a.tail,
            report: a.report,
        })),
        None => Err(Error::new(
            ErrorKind::Internal,
            "a whole lowering cannot be refused",
        )),
    }
}

/// A turn's resolver answers, kept with the turn (they are part of what it lowers to).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answers(pub litemap::LiteMap<usize, std::result::Result<Resolved, String>>);

impl Resolver for Answers {
    fn resolve(&self, request: &ResolveRequest<'_>) -> std::result::Result<Resolved, String> {
        self.0
            .get(&request.part())
            .cloned()
            .unwrap_or(Ok(Resolved::Missing))
    }
}

struct Entry {
    turn: Turn,
    answers: Answers,
    /// The content's digest, made when the turn first goes into the cache (when the
    /// conversation is lowered for another target).
    digest: Option<[u8; 32]>,
    /// The turn lowered for the conversation's last target.
    memo: Option<Rc<LoweredTurn>>,
}

/// How the cache of lowered turns is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CacheStats {
    /// Lowered turns held.
    pub entries: usize,
    /// About how many bytes they hold.
    pub bytes: usize,
    /// The bound on `bytes`.
    pub limit: usize,
    /// Turns served from the cache.
    pub hits: u64,
    /// Turns lowered.
    pub misses: u64,
}

/// A cache key: the turn's content digest and the target's (provider, capability table).
type CacheKey = ([u8; 32], [u8; 32]);

/// A bounded, least-recently-used cache of lowered turns, keyed by the turn's content
/// digest and the target (provider and capability table).
struct TurnCache {
    map: HashMap<CacheKey, (Rc<LoweredTurn>, u64)>,
    bytes: usize,
    limit: usize,
    tick: u64,
    hits: u64,
    misses: u64,
}

impl TurnCache {
    fn new(limit: usize) -> Self {
        TurnCache {
            map: HashMap::new(),
            bytes: 0,
            limit,
            tick: 0,
            hits: 0,
            misses: 0,
        }
    }

    fn contains(&self, key: &CacheKey) -> bool {
        self.map.contains_key(key)
    }

    fn get(&mut self, key: &CacheKey) -> Option<Rc<LoweredTurn>> {
        self.tick += 1;
        let tick = self.tick;
        let e = self.map.get_mut(key)?;
        e.1 = tick;
        self.hits += 1;
        Some(e.0.clone())
    }

    fn put(&mut self, key: CacheKey, value: Rc<LoweredTurn>) {
        self.misses += 1;
        self.tick += 1;
        self.bytes += value.weight();
        if let Some((old, _)) = self.map.insert(key, (value, self.tick)) {
            self.bytes = self.bytes.saturating_sub(old.weight());
        }
        // Over the bound: drop the least recently used, a quarter of the ticks at a time
        // (one pass each, no sort: a sort would cost wasm bytes), until a quarter is free.
        if self.bytes <= self.limit {
            return;
        }
        while self.bytes > self.limit * 3 / 4 && !self.map.is_empty() {
            let (lo, hi) = self
                .map
                .values()
                .fold((u64::MAX, 0), |(lo, hi), (_, t)| (lo.min(*t), hi.max(*t)));
            let cut = lo + (hi - lo) / 4 + 1;
            let mut freed = 0usize;
            self.map.retain(|_, (v, t)| {
                let keep = *t >= cut;
                if !keep {
                    freed += v.weight();
                }
                keep
            });
            self.bytes = self.bytes.saturating_sub(freed);
        }
    }
}

/// The digest that names a turn and its resolver answers in the cache.
fn digest_of(turn: &Turn, answers: &Answers) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(turn.to_value().json_text().as_bytes());
    h.update([0u8]);
    for (part, a) in &answers.0 {
        h.update(part.to_string().as_bytes());
        match a {
            Ok(Resolved::Text(t)) => h.update(format!("t{}:{t}", t.len()).as_bytes()),
            Ok(Resolved::Bytes { data, mime }) => {
                h.update(format!("b{}:{}:", data.len(), mime.as_deref().unwrap_or("")).as_bytes());
                h.update(data);
            }
            Ok(Resolved::Host { data, mime }) => h.update(
                format!(
                    "h{}:{}:{}:{}",
                    data.slot,
                    data.len,
                    data.head,
                    mime.as_deref().unwrap_or("")
                )
                .as_bytes(),
            ),
            Ok(Resolved::Payload(v)) => h.update(format!("p{v}").as_bytes()),
            Ok(Resolved::Missing) => h.update(b"m"),
            Err(e) => h.update(format!("e{}:{e}", e.len()).as_bytes()),
        }
    }
    h.finalize().into()
}

/// The default bound of a conversation's cache of lowered turns (8 MiB).
pub const DEFAULT_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// A conversation that keeps its turns and a cache of their lowered forms.
pub struct Conversation {
    entries: Vec<Entry>,
    cache: TurnCache,
    /// The target the entries' memos were lowered for.
    memo_target: Option<[u8; 32]>,
    /// What the last lowering wrote, to tell which of its messages the next one repeats.
    last: Option<Last>,
    /// The body around the messages array, for the last options.
    head: Option<Head>,
    /// The last target and its name.
    target_of: Option<(Provider, Option<serde_json::Value>, u8, [u8; 32])>,
    /// The limits the first turns were last checked against, and how many of them.
    checked: Option<(crate::limits::Limits, usize)>,
}

/// The last lowering: its head, its messages' keys and ends (bytes and UTF-16 units), and
/// the lowered turns it was written from (held, so that the addresses in its keys stay
/// theirs).
struct Last {
    target: [u8; 32],
    head: String,
    keys: Vec<Key>,
    key_starts: Vec<usize>,
    starts: Vec<usize>,
    ends: Vec<usize>,
    ends_utf16: Vec<usize>,
    /// Each message's first and last turn, and the last turn its pieces came from.
    msg_first: Vec<usize>,
    msg_last: Vec<usize>,
    msg_src: Vec<usize>,
    /// The first assistant turn with a call that had no result.
    first_open: Option<usize>,
    /// Every call id seen, with its turn (a call of a turn since rewound may stay: it only
    /// makes a continuation start over).
    calls: HashMap<String, usize>,
    repairs: Vec<Repair>,
    /// The id mappings, each with its call's turn.
    ids: Vec<(usize, IdMapping)>,
    /// The whole body, when the caller asked for it (the delta form does not keep it).
    body: Option<String>,
    /// A context fit left turns out of it.
    fitted: bool,
    /// Never read: held so that no other text takes the addresses in `keys`.
    _held: Vec<Rc<LoweredTurn>>,
}

/// A lowering given as the change from the previous one of the same conversation: the
/// body is the previous body's first `keep_bytes` bytes (`keep_utf16` UTF-16 units, for a
/// JavaScript string) followed by `tail`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// Bytes of the previous body kept.
    pub keep_bytes: usize,
    /// The same length in UTF-16 code units.
    pub keep_utf16: usize,
    /// What follows the kept prefix.
    pub tail: String,
    /// The UTF-16 length of the end of `tail` that closes the messages array and the
    /// body (what the next delta will not keep).
    pub close_utf16: usize,
    /// Every decision made (for the whole body).
    pub report: ConversationReport,
}

/// UTF-16 code units of UTF-8 text.
fn utf16_len(t: &[u8]) -> usize {
    t.iter()
        .map(|&b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

impl Default for Conversation {
    fn default() -> Self {
        Conversation::new(DEFAULT_CACHE_BYTES)
    }
}

impl Conversation {
    /// An empty conversation whose cache holds about `cache_bytes` of lowered turns.
    pub fn new(cache_bytes: usize) -> Self {
        Conversation {
            entries: Vec::new(),
            cache: TurnCache::new(cache_bytes),
            memo_target: None,
            last: None,
            head: None,
            target_of: None,
            checked: None,
        }
    }

    /// Appends a turn with its resolver answers (a user turn's file-refs are resolved once,
    /// when it is appended: the turn keeps what the user sent). Returns its index.
    pub fn append(&mut self, turn: Turn, answers: Answers) -> usize {
        self.entries.push(Entry {
            turn,
            answers,
            digest: None,
            memo: None,
        });
        self.entries.len() - 1
    }

    /// Parses a turn's JSON text and appends it. Errors name the turn's index.
    pub fn append_json(&mut self, text: &str, answers: Answers) -> Result<usize> {
        let turn = self.read_turn(text)?;
        Ok(self.append(turn, answers))
    }

    /// Reads the next turn's JSON text (errors name it as `turns[<its index>]`).
    pub fn read_turn(&self, text: &str) -> Result<Turn> {
        let at = self.entries.len();
        // A user turn is a message: read straight from its text when the fast reader takes
        // it (it takes only the `user` role, or none), through the JSON tree otherwise.
        Ok(match crate::message::read_fast(text) {
            Some(m) => Turn::User(m),
            None => {
                let value = serde_json::from_str(text).map_err(|e| {
                    Error::json(ErrorKind::InvalidMessage, "the turn", &e)
                        .at(format!("turns[{at}]"))
                })?;
                Turn::from_value(value).map_err(|e| e.within(&format!("turns[{at}]")))?
            }
        })
    }

    /// The turns, in order.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> {
        self.entries.iter().map(|e| &e.turn)
    }

    /// How many turns there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no turn.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps the first `n` turns (rewinds); the cache keeps the lowered forms.
    pub fn truncate(&mut self, n: usize) {
        self.entries.truncate(n);
        if let Some((_, k)) = &mut self.checked {
            *k = (*k).min(n);
        }
    }

    /// The cache's figures.
    pub fn cache_stats(&self) -> CacheStats {
        CacheStats {
            entries: self.cache.map.len(),
            bytes: self.cache.bytes,
            limit: self.cache.limit,
            hits: self.cache.hits,
            misses: self.cache.misses,
        }
    }

    /// Lowers the conversation; turns lowered before for the same target come from the
    /// cache, and messages that repeat the previous lowering are not written again. The
    /// same bytes as [`lower_conversation`] of the same turns and answers.
    pub fn lower(&mut self, options: &ConversationOptions) -> Result<LoweredConversation> {
        let (a, _) = self.run(options, true)?;
        let body = self
            .last
            .as_ref()
            .and_then(|l| l.body.clone())
            .unwrap_or_default();
        Ok(LoweredConversation {
            body,
            report: a.report,
        })
    }

    /// Lowers the conversation and gives the body as the change from the previous
    /// lowering: what a host that keeps the previous body needs, so that a new turn costs
    /// the new turn, not the whole conversation, across the boundary.
    pub fn lower_delta(&mut self, options: &ConversationOptions) -> Result<Delta> {
        let (a, keep_utf16) = self.run(options, false)?;
        let end = self
            .last
            .as_ref()
            .and_then(|l| l.ends.last().copied())
            .unwrap_or(a.keep);
        let close = (a.keep + a.tail.len()).saturating_sub(end);
        let close_utf16 = utf16_len(
            a.tail
                .as_bytes()
                .get(a.tail.len().saturating_sub(close)..)
                .unwrap_or_default(),
        );
        Ok(Delta {
            keep_bytes: a.keep,
            keep_utf16,
            tail: a.tail,
            close_utf16,
            report: a.report,
        })
    }

    /// Lowers, records what was written, and gives the kept prefix in UTF-16 units.
    /// `whole`: the caller wants the whole body (kept in `last`).
    fn run(&mut self, options: &ConversationOptions, whole: bool) -> Result<(Assembled, usize)> {
        // Turns already checked under the same limits are not checked again.
        let limits = options.lower.limits;
        let from = match self.checked {
            Some((l, k)) if l == limits => k,
            _ => 0,
        };
        check_limits(self.turns(), self.len(), from, &limits)?;
        self.checked = Some((limits, self.len()));
        let opts = &options.lower;
        // The target's name: the provider, the capability table it was given, and whether
        // the model's row narrowed it (a text-only model).
        let text_only = Capabilities::text_only(opts.provider, &opts.settings)?;
        let caps = Capabilities::for_model(opts.provider, text_only, opts.capabilities.as_ref())?;
        // The flags the turns' lowering depends on besides the provider and the table.
        let narrowed = u8::from(text_only)
            | (u8::from(keeps_reasoning(opts)) << 1)
            | (u8::from(keeps_details(opts)) << 2);
        let target = match &self.target_of {
            Some((p, c, n, t))
                if *p == opts.provider && *c == opts.capabilities && *n == narrowed =>
            {
                *t
            }
            _ => {
                let mut h = Sha256::new();
                h.update(opts.provider.name().as_bytes());
                h.update([narrowed]);
                if let Some(c) = &opts.capabilities {
                    h.update(c.json_text().as_bytes());
                }
                let t: [u8; 32] = h.finalize().into();
                self.target_of = Some((opts.provider, opts.capabilities.clone(), narrowed, t));
                t
            }
        };
        let cx = TurnCx {
            provider: opts.provider,
            caps: &caps,
            mode: SlotMode::Forbid,
            keep_reasoning: narrowed & 2 != 0,
            details: narrowed & 4 != 0,
        };
        let same_target = self.memo_target == Some(target);
        let mut lowered: Vec<Rc<LoweredTurn>> = Vec::with_capacity(self.entries.len());
        let old_target = self.memo_target;
        for (i, e) in self.entries.iter_mut().enumerate() {
            if same_target {
                if let Some(m) = &e.memo {
                    self.cache.hits += 1;
                    lowered.push(m.clone());
                    continue;
                }
                // A turn new to the conversation: lowered (it goes into the cache, named by
                // its digest, when the conversation is lowered for another target).
                let lt = Rc::new(
                    lower_turn(&e.turn, &e.answers, &cx)
                        .map_err(|err| err.within(&format!("turns[{i}]")))?,
                );
                self.cache.misses += 1;
                e.memo = Some(lt.clone());
                lowered.push(lt);
                continue;
            }
            let digest = *e
                .digest
                .get_or_insert_with(|| digest_of(&e.turn, &e.answers));
            if let (Some(old), Some(m)) = (old_target, e.memo.take()) {
                if !self.cache.contains(&(digest, old)) {
                    self.cache.put((digest, old), m);
                    self.cache.misses -= 1;
                }
            }
            let key = (digest, target);
            let lt = match self.cache.get(&key) {
                Some(lt) => lt,
                None => {
                    let lt = Rc::new(
                        lower_turn(&e.turn, &e.answers, &cx)
                            .map_err(|err| err.within(&format!("turns[{i}]")))?,
                    );
                    self.cache.put(key, lt.clone());
                    lt
                }
            };
            e.memo = Some(lt.clone());
            lowered.push(lt);
        }
        self.memo_target = Some(target);
        let refs: Vec<&LoweredTurn> = lowered.iter().map(|r| r.as_ref()).collect();
        let plan = lower::fit::plan(&refs, options, &caps)?;
        // A lowering that left turns out, or whose reasoning depends on where the last user
        // turn is (`compat` sending it back in the tool loop only), is written whole.
        let fitted = plan.as_ref().is_some_and(|p| !p.dropped.is_empty())
            || opts
                .compat
                .is_some_and(|c| c.field.is_some() && c.tool_loop_only);
        // The previous lowering, when it can be built on: same target, and (for a whole
        // body) its body kept. A lowering that left turns out is written whole, and not
        // built on (its records name a stand-in that is gone).
        let prev = self
            .last
            .as_ref()
            .filter(|l| l.target == target && (!whole || l.body.is_some()) && !l.fitted && !fitted);
        // Continue it from the first message a changed turn, an open call or the last
        // message touches; else write it whole, measuring the messages that repeat.
        let resume = prev.and_then(|l| {
            let head_ok = self.head.as_ref().is_some_and(|h| h.options == *options);
            if !head_ok {
                return None;
            }
            let changed = lowered
                .iter()
                .zip(&l._held)
                .take_while(|(a, b)| Rc::ptr_eq(a, b))
                .count();
            let b_turn = changed
                .min(l.first_open.unwrap_or(usize::MAX))
                .min(l.msg_first.last().copied().unwrap_or(0));
            let mut m = l.msg_src.iter().take_while(|s| **s < b_turn).count();
            // Where roles merge (a layout of blocks), a changed turn may join the message
            // before it: that one is written again too (its own first turn is unchanged,
            // so it does not join the one before it).
            if matches!(
                opts.provider.spec().layout,
                crate::provider::Layout::Blocks(_)
            ) {
                m = m.saturating_sub(1);
            }
            let mut from = l.msg_first.get(m).copied().unwrap_or(b_turn).min(b_turn);
            while m > 0 && l.msg_last.get(m - 1).is_some_and(|x| *x >= from) {
                m -= 1;
                from = from.min(l.msg_first.get(m).copied().unwrap_or(0));
            }
            if m == 0 {
                return None;
            }
            Some((m, from, l))
        });
        let mut a = None;
        let mut resumed = None;
        if let Some((m, from, l)) = resume {
            let r = Resume {
                from,
                messages: m,
                len: l.ends.get(m - 1).copied().unwrap_or(0),
                calls: &l.calls,
                repairs: l
                    .repairs
                    .iter()
                    .filter(|r| r.turn < from)
                    .cloned()
                    .collect(),
                ids: l
                    .ids
                    .iter()
                    .filter(|(t, _)| *t < from)
                    .map(|(_, i)| i.clone())
                    .collect(),
                last_start: l.starts.get(m - 1).copied().unwrap_or(0),
            };
            a = assemble(
                &refs,
                options,
                0,
                None,
                Some(&mut self.head),
                Some(r),
                plan.as_ref(),
            )?;
            if a.is_some() {
                resumed = Some((m, from));
            }
        }
        let mut a = match a {
            Some(a) => a,
            None => {
                let hint = prev.and_then(|l| l.ends.last()).map_or(0, |e| e + 4096);
                let full = assemble(
                    &refs,
                    options,
                    hint,
                    prev.map(|l| Prev {
                        head: &l.head,
                        keys: &l.keys,
                        key_starts: &l.key_starts,
                    }),
                    Some(&mut self.head),
                    None,
                    plan.as_ref(),
                )?;
                match full {
                    Some(a) => a,
                    None => {
                        return Err(Error::new(
                            ErrorKind::Internal,
                            "a whole lowering cannot be refused",
                        ))
                    }
                }
            }
        };
        let from_prev = a.keep > 0;
        // What stays of the previous lowering's records, and the UTF-16 length kept.
        let keep_utf16 = match (resumed, prev) {
            (Some((m, _)), Some(l)) => l.ends_utf16.get(m - 1).copied().unwrap_or(0),
            (None, Some(l)) if from_prev && a.matched > 0 => {
                l.ends_utf16.get(a.matched - 1).copied().unwrap_or(0)
            }
            (None, _) if from_prev => utf16_len(a.head.as_bytes()) + 1,
            _ => 0,
        };
        let body = if whole {
            let mut b = String::with_capacity(a.keep + a.tail.len());
            if let Some(prev_body) = prev.and_then(|l| l.body.as_deref()) {
                b.push_str(prev_body.get(..a.keep).unwrap_or_default());
            }
            b.push_str(&a.tail);
            Some(b)
        } else {
            None
        };
        // A whole lowering that repeated messages keeps their UTF-16 ends.
        let matched_utf16: Vec<usize> = match (resumed, prev) {
            (None, Some(l)) if from_prev => l.ends_utf16.iter().take(a.matched).copied().collect(),
            _ => Vec::new(),
        };
        let mut last = match (resumed, self.last.take()) {
            (Some((m, _)), Some(mut l)) => {
                let k = l.key_starts.get(m).copied().unwrap_or(l.keys.len());
                l.keys.truncate(k);
                l.key_starts.truncate(m);
                l.starts.truncate(m);
                l.ends.truncate(m);
                l.ends_utf16.truncate(m);
                l.msg_first.truncate(m);
                l.msg_last.truncate(m);
                l.msg_src.truncate(m);
                let base = l.keys.len();
                l.keys.append(&mut a.keys);
                l.key_starts.extend(a.key_starts.iter().map(|x| x + base));
                l
            }
            _ => Last {
                target,
                head: std::mem::take(&mut a.head),
                keys: std::mem::take(&mut a.keys),
                key_starts: std::mem::take(&mut a.key_starts),
                starts: Vec::new(),
                ends: Vec::new(),
                ends_utf16: Vec::new(),
                msg_first: Vec::new(),
                msg_last: Vec::new(),
                msg_src: Vec::new(),
                first_open: None,
                calls: HashMap::new(),
                repairs: Vec::new(),
                ids: Vec::new(),
                body: None,
                fitted: false,
                _held: Vec::new(),
            },
        };
        last.fitted = fitted;
        if resumed.is_none() {
            last.ends_utf16 = matched_utf16;
        }
        last.starts.extend_from_slice(&a.starts);
        last.ends.extend_from_slice(&a.ends);
        last.msg_first.extend_from_slice(&a.msg_first);
        last.msg_last.extend_from_slice(&a.msg_last);
        last.msg_src.extend_from_slice(&a.msg_src);
        // UTF-16 ends: counted in the written part.
        let tail = a.tail.as_bytes();
        let (mut at, mut at16) = (a.keep, keep_utf16);
        let first_new = last.ends_utf16.len();
        for &end in last.ends.iter().skip(first_new) {
            at16 += utf16_len(tail.get(at - a.keep..end - a.keep).unwrap_or_default());
            at = end;
            last.ends_utf16.push(at16);
        }
        last.first_open = a.first_open;
        if resumed.is_none() {
            last.calls.clear();
        }
        for (id, t) in a.calls.drain(..) {
            last.calls.insert(id, t);
        }
        last.repairs = a.report.repairs.clone();
        match resumed {
            Some((_, from)) => last.ids.retain(|(t, _)| *t < from),
            None => last.ids.clear(),
        }
        let new_ids = a.report.ids.len() - last.ids.len().min(a.report.ids.len());
        for (t, i) in a
            .id_turns
            .iter()
            .zip(a.report.ids.iter().skip(a.report.ids.len() - new_ids))
        {
            last.ids.push((*t, i.clone()));
        }
        last.body = body;
        last._held = lowered;
        self.last = Some(last);
        Ok((a, keep_utf16))
    }
}

/// The resolver requests of each turn of a conversation (a JSON array), as a JSON array
/// of arrays of requests (`lower::requests`). Only user turns ask; an item that does not parse asks
/// nothing (lowering reports it, in its place).
pub fn requests_json(items: &str) -> Result<String> {
    use serde_json::Value;
    let items: Vec<Value> = match serde_json::from_str(items) {
        Ok(Value::Array(items)) => items,
        Ok(_) => {
            return Err(Error::new(
                ErrorKind::InvalidMessage,
                "messages must be a JSON array",
            ))
        }
        Err(e) => return Err(Error::json(ErrorKind::InvalidMessage, "the messages", &e)),
    };
    let lists: Vec<Value> = items
        .into_iter()
        .map(|v| match Turn::from_value(v) {
            Ok(Turn::User(m)) => Value::Array(
                crate::lower::resolve_requests(&m.parts)
                    .into_iter()
                    .map(|r| r.value)
                    .collect(),
            ),
            _ => Value::Array(Vec::new()),
        })
        .collect();
    crate::json_text::to_string(&lists).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}

/// Whether reasoning goes back to the server (`compat`): then a turn's Chat lowering keeps it.
fn keeps_reasoning(opts: &crate::lower::LowerOptions) -> bool {
    opts.provider == Provider::OpenAiChat && opts.compat.is_some_and(|c| c.field.is_some())
}

/// Whether what goes back is the server's own reasoning items (`compat`: OpenRouter).
fn keeps_details(opts: &crate::lower::LowerOptions) -> bool {
    keeps_reasoning(opts) && opts.compat.is_some_and(|c| c.details)
}
