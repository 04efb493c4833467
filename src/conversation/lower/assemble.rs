//! The assembly pass: the canonical segments laid out as the provider's dialect says
//! (blocks in alternating roles, chat messages or items), the head around them, cache
//! breakpoints, and the report.

use super::canonical::*;
use super::out::*;
use super::*;
use crate::provider::BlockLayout;

/// A message being assembled: a role and its blocks.
pub(super) struct Msg<'a> {
    pub(super) role: &'static str,
    pub(super) blocks: Vec<B<'a>>,
    /// The first turn that contributed.
    pub(super) turn: usize,
    /// Whether a user turn (not only results or notes) contributed.
    pub(super) user: bool,
    /// The turn of its first piece (in the conversation's order).
    pub(super) first: usize,
    /// The turn of its last piece.
    pub(super) last: usize,
    /// The last turn any of its pieces came from.
    pub(super) src: usize,
}

/// A block of an assembled message.
pub(super) enum B<'a> {
    /// Plain text and its JSON literal (written per provider; trimmed when it ends the
    /// conversation).
    Text(Cow<'a, str>, Cow<'a, str>),
    /// A fragment written before; `cacheable` is false for reasoning blocks.
    Raw(Cow<'a, str>, bool),
}

#[allow(clippy::too_many_arguments)]
pub(super) fn push_block<'a>(
    msgs: &mut Vec<Msg<'a>>,
    role: &'static str,
    turn: usize,
    src: usize,
    user: bool,
    b: B<'a>,
    merge: bool,
    repairs: &mut Vec<Repair>,
) {
    if let Some(last) = msgs.last_mut() {
        if last.role == role && (merge || last.turn == turn) {
            if last.turn != turn && merge && user && last.user {
                repairs.push(Repair {
                    turn,
                    part: None,
                    code: "TurnsMerged",
                    message: format!("two {role} turns in a row are sent as one message"),
                });
                last.turn = turn;
            } else if last.turn != turn && merge && (role == "assistant" || role == "model") {
                repairs.push(Repair {
                    turn,
                    part: None,
                    code: "TurnsMerged",
                    message: "two assistant turns in a row are sent as one message".into(),
                });
                last.turn = turn;
            }
            last.user |= user;
            last.src = last.src.max(src);
            last.last = last.last.max(turn);
            last.blocks.push(b);
            return;
        }
    }
    msgs.push(Msg {
        role,
        blocks: vec![b],
        turn,
        first: turn,
        last: turn,
        src,
        user,
    });
}

/// An assembled body: written whole, or, given the previous lowering, from the end of the
/// messages it repeats.
pub(crate) struct Assembled {
    pub(crate) report: ConversationReport,
    /// Bytes of the previous body this one starts with (0: `tail` is the whole body).
    pub(crate) keep: usize,
    /// The body from `keep` on.
    pub(crate) tail: String,
    /// Leading messages that repeat the previous lowering's.
    pub(crate) matched: usize,
    /// Where each message starts and ends in the body.
    pub(crate) starts: Vec<usize>,
    pub(crate) ends: Vec<usize>,
    /// What each message was made of, one after another (see [`Key`]).
    pub(crate) keys: Vec<Key>,
    /// Where each message's keys begin.
    pub(crate) key_starts: Vec<usize>,
    /// The body before the messages array.
    pub(crate) head: String,
    /// Each message's first and last turn, and the last turn its pieces came from.
    pub(crate) msg_first: Vec<usize>,
    pub(crate) msg_last: Vec<usize>,
    pub(crate) msg_src: Vec<usize>,
    /// The first assistant turn with a call that has no result.
    pub(crate) first_open: Option<usize>,
    /// The calls of every turn assembled here (id → turn), in order.
    pub(crate) calls: Vec<(String, usize)>,
    /// The id mappings, each with the turn of its call.
    pub(crate) id_turns: Vec<usize>,
}

/// Where a lowering continues the previous one: its messages for the turns before `from`
/// stand.
pub(crate) struct Resume<'p> {
    /// The first turn assembled again.
    pub(crate) from: usize,
    /// The messages kept.
    pub(crate) messages: usize,
    /// The body's bytes up to the end of the kept messages.
    pub(crate) len: usize,
    /// The call ids of the turns before `from`.
    pub(crate) calls: &'p HashMap<String, usize>,
    /// The repairs of the turns before `from`.
    pub(crate) repairs: Vec<Repair>,
    /// The id mappings of the calls before `from`.
    pub(crate) ids: Vec<IdMapping>,
    /// Where the last kept message starts.
    pub(crate) last_start: usize,
}

/// Lowers the lowered turns into one request body. `size_hint` is the size of the body
/// expected (the previous one's), to write it without growing the buffer.
pub(crate) fn assemble(
    turns: &[&LoweredTurn],
    options: &ConversationOptions,
    size_hint: usize,
    prev: Option<Prev<'_>>,
    head_memo: Option<&mut Option<Head>>,
    resume: Option<Resume<'_>>,
    fit: Option<&super::fit::Plan>,
) -> Result<Option<Assembled>> {
    let opts = &options.lower;
    let p = opts.provider;
    let d = p.dialect();
    let layout = d.spec().layout;
    let (mut repairs, mut ids, from) = match &resume {
        Some(r) => (r.repairs.clone(), r.ids.clone(), r.from),
        None => (Vec::new(), Vec::new(), 0),
    };
    // A fit leaves its turns out (an empty stand-in each; the note in the last one's place).
    let fitted: Vec<&LoweredTurn>;
    let turns = match fit.filter(|f| !f.dropped.is_empty()) {
        Some(f) => {
            let last = f.dropped.last().copied();
            fitted = turns
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    if f.dropped.binary_search(&i).is_err() {
                        *t
                    } else {
                        repairs.push(Repair {
                            turn: i,
                            part: None,
                            code: "TurnDropped",
                            message: format!(
                                "the {} turn is left out to fit the context window",
                                t.report.role
                            ),
                        });
                        match (&f.marker, Some(i) == last) {
                            (Some(m), true) => m,
                            _ => &f.gone,
                        }
                    }
                })
                .collect();
            fitted.as_slice()
        }
        None => turns,
    };
    let Some(canon) = canonical(turns, &mut repairs, from, resume.as_ref().map(|r| r.calls))?
    else {
        return Ok(None);
    };
    let segs = canon.segs;
    let mut calls = Vec::new();
    let mut id_turns = Vec::new();
    for seg in &segs {
        if let Seg::Assistant { items, turn } = seg {
            for it in items.iter() {
                if let Item::Call { id, .. } = it {
                    calls.push((id.clone(), *turn));
                    if d.spec().max_id_len.is_none() {
                        continue;
                    }
                    let to = provider_id(p, id);
                    if to != id.as_str() && !ids.iter().any(|m: &IdMapping| &m.from == id) {
                        ids.push(IdMapping {
                            from: id.clone(),
                            to: to.into_owned(),
                        });
                        id_turns.push(*turn);
                    }
                }
            }
        }
    }
    let system_opt = opts.system.as_deref().filter(|s| !s.trim().is_empty());
    // A conversation of blocks takes instructions only before it: the leading system turns
    // join the system option there.
    let mut system: Vec<&str> = system_opt.into_iter().collect();
    let hoist = matches!(layout, Layout::Blocks(_));
    let mut leading = 0usize;
    let kept_system: Option<Vec<String>> = match (&resume, head_memo.as_deref()) {
        (Some(_), Some(Some(h))) => Some(h.system.clone()),
        _ => None,
    };
    if let Some(k) = &kept_system {
        // The kept messages hold every leading instruction: they are the head's.
        system = k.iter().map(String::as_str).collect();
    } else if resume.is_some() {
        return Ok(None);
    } else if hoist {
        for seg in &segs {
            match seg {
                Seg::System { text, .. } => {
                    system.push(text);
                    leading += 1;
                }
                _ => break,
            }
        }
    }
    let cache = d.spec().breakpoints && options.cache.breakpoints;
    if cache && resume.is_some() {
        // Breakpoints move with every turn: written whole.
        return Ok(None);
    }
    let mut breakpoints = Vec::new();
    let mut warnings = Vec::new();

    let system_owned: Vec<String> = system.iter().map(|t| (*t).to_owned()).collect();
    let memo = head_memo.map(|m| {
        if m.as_ref()
            .is_some_and(|h| h.options != *options || h.system != system_owned)
        {
            *m = None;
        }
        m
    });
    let fresh;
    let head: &Head = match memo {
        Some(m) => {
            if m.is_none() {
                *m = Some(build_head(options, &system, system_owned)?);
            }
            match m {
                Some(h) => h,
                None => return Err(Error::new(ErrorKind::Internal, "the head was lost")),
            }
        }
        None => {
            fresh = build_head(options, &system, system_owned)?;
            &fresh
        }
    };
    let (head_pre, head_post) = (head.pre.as_str(), head.post.as_str());
    breakpoints.extend(head.breakpoints.iter().cloned());
    warnings.extend(head.warnings.iter().cloned());
    let mut out = match &resume {
        Some(r) => Out::after(r.len, r.messages, head_pre.len()),
        None => Out::new(
            head_pre,
            prev,
            size_hint.max(head_pre.len() + 256),
            segs.len() + 2,
        ),
    };

    match layout {
        Layout::Blocks(bl) => lay_blocks(
            bl,
            options,
            cache,
            &segs,
            leading,
            &mut out,
            &mut repairs,
            &mut breakpoints,
        )?,
        Layout::Chat | Layout::Items => lay_messages(
            layout == Layout::Chat,
            options,
            resume.is_some(),
            &segs,
            &mut out,
            &mut repairs,
        )?,
    }
    let has_content =
        out.before + out.starts.len() > usize::from(layout == Layout::Chat && system_opt.is_some());
    if !has_content {
        return Err(Error::new(
            ErrorKind::EmptyMessage,
            "the conversation has no content for the model after lowering",
        ));
    }
    let prefix_bytes = out
        .starts
        .last()
        .copied()
        .or(resume.as_ref().map(|r| r.last_start))
        .unwrap_or(0);
    let (keep, tail, out) = out.finish(head_post);
    Ok(Some(Assembled {
        report: ConversationReport {
            provider: p.name(),
            turns: turns.iter().map(|t| t.report.clone()).collect(),
            repairs: sorted(repairs),
            ids,
            warnings,
            cache: CacheReport {
                breakpoints,
                prefix_bytes,
            },
            call: options.lower.settings.call(),
            fit: fit.map(|f| f.report.clone()),
        },
        keep,
        tail,
        matched: out.matched,
        starts: out.starts,
        ends: out.ends,
        keys: out.keys,
        key_starts: out.key_starts,
        head: head_pre.to_owned(),
        msg_first: out.msg_first,
        msg_last: out.msg_last,
        msg_src: out.msg_src,
        first_open: canon.first_open,
        calls,
        id_turns,
    }))
}

/// Lays out a conversation of blocks ([`Layout::Blocks`]): the segments after the `leading`
/// system ones as alternating messages (same roles merged), later system turns as user text,
/// the final assistant text trimmed where the provider asks, and cache breakpoints on the
/// last two user messages.
#[allow(clippy::too_many_arguments)]
fn lay_blocks<'a>(
    bl: &'static BlockLayout,
    options: &ConversationOptions,
    cache: bool,
    segs: &'a [Seg<'a>],
    leading: usize,
    out: &mut Out<'a, '_>,
    repairs: &mut Vec<Repair>,
    breakpoints: &mut Vec<String>,
) -> Result<()> {
    let p = options.lower.provider;
    let d = p.dialect();
    let (user, model) = ("user", bl.model);
    let mut msgs: Vec<Msg<'_>> = Vec::new();
    for seg in segs.iter().skip(leading) {
        match seg {
            Seg::System { text, turn, .. } => {
                repairs.push(Repair {
                    turn: *turn,
                    part: None,
                    code: "SystemAsUser",
                    message: format!("{} takes instructions only before the conversation; this one is sent as user text", p.name()),
                });
                let t = render::descriptor("system_instruction", &[], text);
                let l = lit(&t);
                push_block(
                    &mut msgs,
                    user,
                    *turn,
                    *turn,
                    true,
                    B::Text(Cow::Owned(t), Cow::Owned(l)),
                    true,
                    repairs,
                );
            }
            Seg::User { items, turn } => {
                for it in items.iter() {
                    if let Item::User { json, .. } = it {
                        push_block(
                            &mut msgs,
                            user,
                            *turn,
                            *turn,
                            true,
                            B::Raw(Cow::Borrowed(json), true),
                            true,
                            repairs,
                        );
                    }
                }
            }
            Seg::Note { text, turn } => {
                push_block(
                    &mut msgs,
                    user,
                    *turn,
                    *turn,
                    true,
                    B::Text(Cow::Borrowed(text), Cow::Owned(lit(text))),
                    true,
                    repairs,
                );
            }
            Seg::Assistant { items, turn } => {
                for it in items.iter() {
                    let b = match it {
                        Item::Text { text, lit } => {
                            B::Text(Cow::Borrowed(text), Cow::Borrowed(lit))
                        }
                        Item::Other { json } => B::Raw(Cow::Borrowed(json), false),
                        Item::Call { json, .. } => B::Raw(Cow::Borrowed(json), true),
                        _ => continue,
                    };
                    push_block(&mut msgs, model, *turn, *turn, false, b, true, repairs);
                }
            }
            Seg::Results { results, turn, src } => {
                for r in results {
                    let frag = match r.frag {
                        Some(f) => Cow::Borrowed(f),
                        None => {
                            let (content, is_error) = result_blocks(r);
                            Cow::Owned(placed_result(d, r, &content, is_error)?)
                        }
                    };
                    push_block(
                        &mut msgs,
                        user,
                        *turn,
                        *src,
                        false,
                        B::Raw(frag, true),
                        true,
                        repairs,
                    );
                }
            }
        }
    }
    // The final assistant text may not end in white space where the provider rejects it.
    if let Some(last) = msgs.last_mut() {
        if last.role == model && bl.trims_final_text {
            if let Some(B::Text(t, l)) = last.blocks.last_mut() {
                let trimmed = t.trim_end();
                if trimmed.len() != t.len() {
                    *l = Cow::Owned(lit(trimmed));
                    repairs.push(Repair {
                        turn: last.turn,
                        part: None,
                        code: "TrailingWhitespace",
                        message: format!("the final assistant text ends in white space, which {} rejects; it is trimmed", d.spec().display),
                    });
                }
            }
        }
    }
    if cache {
        // The last two messages that hold a user turn.
        let targets: Vec<usize> = msgs
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, m)| m.role == "user")
            .map(|(i, _)| i)
            .take(2)
            .collect();
        for &i in targets.iter().rev() {
            let Some(m) = msgs.get_mut(i) else { continue };
            let Some(pos) = m
                .blocks
                .iter()
                .rposition(|b| !matches!(b, B::Raw(_, false)))
            else {
                continue;
            };
            let cc = cache_control(options);
            if let Some(b) = m.blocks.get_mut(pos) {
                let frag = match b {
                    B::Text(_, l) => format!("{{\"type\":\"text\",\"text\":{l}}}"),
                    B::Raw(r, _) => r.to_string(),
                };
                *b = B::Raw(Cow::Owned(with_key(&frag, "cache_control", &cc)), true);
                breakpoints.push(format!("messages[{i}]"));
            }
        }
    }
    for m in &msgs {
        out.begin(m.first, m.last, m.src);
        out.held(if m.role == user {
            bl.user_open
        } else {
            bl.model_open
        });
        for (k, b) in m.blocks.iter().enumerate() {
            if k > 0 {
                out.held(",");
            }
            match b {
                B::Text(_, l) => {
                    out.held(bl.text_open);
                    out.cow(l);
                    out.held("}");
                }
                B::Raw(r, _) => out.cow(r),
            }
        }
        out.held("]}");
    }
    Ok(())
}

/// Lays out chat messages ([`Layout::Chat`], `chat`) or items ([`Layout::Items`]): the
/// instructions in place, each segment as the provider's messages or items.
fn lay_messages<'a>(
    chat: bool,
    options: &'a ConversationOptions,
    resumed: bool,
    segs: &'a [Seg<'a>],
    out: &mut Out<'a, '_>,
    repairs: &mut Vec<Repair>,
) -> Result<()> {
    let d = options.lower.provider.dialect();
    // Where reasoning goes back (`compat`), and from which turn: after the last user turn
    // where only the tool loop in progress takes it.
    let compat = options
        .lower
        .compat
        .filter(|c| c.field.is_some() && options.lower.provider == Provider::OpenAiChat);
    let last_user = segs
        .iter()
        .filter_map(|s| match s {
            Seg::User { turn, .. } | Seg::Note { turn, .. } => Some(*turn),
            _ => None,
        })
        .max();
    let system_opt = options
        .lower
        .system
        .as_deref()
        .filter(|s| !s.trim().is_empty());
    if let (true, Some(sys), false) = (chat, system_opt, resumed) {
        out.begin(0, 0, 0);
        out.held("{\"role\":\"system\",\"content\":");
        out.made(&lit(sys));
        out.held("}");
    }
    for seg in segs {
        match seg {
            Seg::System {
                lit,
                developer,
                turn,
                ..
            } => {
                out.begin(*turn, *turn, *turn);
                out.held(if *developer {
                    "{\"role\":\"developer\",\"content\":"
                } else {
                    "{\"role\":\"system\",\"content\":"
                });
                out.held(lit);
                out.held("}");
            }
            Seg::User { items, turn } => {
                out.begin(*turn, *turn, *turn);
                out.held("{\"role\":\"user\",\"content\":");
                match items {
                    [Item::User { lit: Some(l), .. }] if chat => out.held(l),
                    _ => {
                        out.held("[");
                        let mut first = true;
                        for it in items.iter() {
                            if let Item::User { json, .. } = it {
                                if !first {
                                    out.held(",");
                                }
                                first = false;
                                out.held(json);
                            }
                        }
                        out.held("]");
                    }
                }
                out.held("}");
            }
            Seg::Note { text, turn } => {
                out.begin(*turn, *turn, *turn);
                out.held(if chat {
                    "{\"role\":\"user\",\"content\":"
                } else {
                    "{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":"
                });
                out.made(&lit(text));
                out.held(if chat { "}" } else { "}]}" });
            }
            Seg::Assistant { items, turn } => {
                if chat {
                    let texts = items
                        .iter()
                        .filter(|i| matches!(i, Item::Text { .. }))
                        .count();
                    let calls = items
                        .iter()
                        .filter(|i| matches!(i, Item::Call { .. }))
                        .count();
                    if texts == 0 && calls == 0 {
                        repairs.push(Repair {
                            turn: *turn,
                            part: None,
                            code: "EmptyTurn",
                            message: format!(
                                "the assistant turn has nothing {} can carry; it is left out",
                                d.spec().display
                            ),
                        });
                        continue;
                    }
                    out.begin(*turn, *turn, *turn);
                    out.held("{\"role\":\"assistant\"");
                    let thoughts: Vec<&str> = items
                        .iter()
                        .filter_map(|i| match i {
                            Item::Other { json } => Some(json.as_str()),
                            _ => None,
                        })
                        .collect();
                    if let (Some(c), Some(field), false) =
                        (compat, compat.and_then(|c| c.field), thoughts.is_empty())
                    {
                        if c.tool_loop_only && last_user.is_some_and(|u| *turn < u) {
                            repairs.push(Repair {
                                turn: *turn,
                                part: None,
                                code: "ReasoningLeftOut",
                                message: format!("{} takes reasoning back only in the tool loop in progress; this turn's is not sent", c.name),
                            });
                        } else {
                            out.held(",\"");
                            out.held(field);
                            out.held("\":");
                            // Several reasoning parts: one string, a blank line between them
                            // (or one array of the server's items).
                            match thoughts.as_slice() {
                                [one] => out.held(one),
                                many if c.details => {
                                    let inner: Vec<&str> = many
                                        .iter()
                                        .map(|t| {
                                            t.strip_prefix('[')
                                                .and_then(|x| x.strip_suffix(']'))
                                                .unwrap_or(t)
                                        })
                                        .filter(|t| !t.is_empty())
                                        .collect();
                                    out.made(&format!("[{}]", inner.join(",")));
                                }
                                many => {
                                    let mut j = String::from("\"");
                                    for (k, t) in many.iter().enumerate() {
                                        if k > 0 {
                                            j.push_str("\\n\\n");
                                        }
                                        let inner =
                                            t.strip_prefix('"').and_then(|x| x.strip_suffix('"'));
                                        j.push_str(inner.unwrap_or(t));
                                    }
                                    j.push('"');
                                    out.made(&j);
                                }
                            }
                        }
                    }
                    if texts > 0 {
                        out.held(if texts == 1 {
                            ",\"content\":"
                        } else {
                            ",\"content\":["
                        });
                        let mut k = 0;
                        for it in items.iter() {
                            if let Item::Text { lit, .. } = it {
                                if texts == 1 {
                                    out.held(lit);
                                } else {
                                    if k > 0 {
                                        out.held(",");
                                    }
                                    out.held("{\"type\":\"text\",\"text\":");
                                    out.held(lit);
                                    out.held("}");
                                }
                                k += 1;
                            }
                        }
                        if texts > 1 {
                            out.held("]");
                        }
                    }
                    if calls > 0 {
                        out.held(",\"tool_calls\":[");
                        let mut k = 0;
                        for it in items.iter() {
                            if let Item::Call { json, .. } = it {
                                if k > 0 {
                                    out.held(",");
                                }
                                out.held(json);
                                k += 1;
                            }
                        }
                        out.held("]");
                    }
                    out.held("}");
                } else {
                    for it in items.iter() {
                        match it {
                            Item::Text { lit, .. } => {
                                out.begin(*turn, *turn, *turn);
                                out.held("{\"role\":\"assistant\",\"content\":");
                                out.held(lit);
                                out.held("}");
                            }
                            Item::Other { json } | Item::Call { json, .. } => {
                                out.begin(*turn, *turn, *turn);
                                out.held(json);
                            }
                            _ => {}
                        }
                    }
                }
            }
            Seg::Results { results, turn, src } => {
                for r in results {
                    let (content, is_error) = result_blocks(r);
                    if is_error && !d.spec().marks_error_results && !r.missing {
                        repairs.push(Repair {
                            turn: *turn,
                            part: None,
                            code: "ErrorFlagNotCarried",
                            message: format!("{} cannot mark a tool result as an error (call `{}`); its text is sent as it is", d.spec().display, r.id),
                        });
                    }
                    out.begin(*turn, *turn, *src);
                    match r.frag {
                        Some(f) => out.held(f),
                        None => out.made(&placed_result(d, r, &content, is_error)?),
                    }
                }
            }
        }
    }
    Ok(())
}

/// A placed result written by the dialect, in the item type of its call's kind where the
/// provider has one.
fn placed_result(
    d: &dyn crate::provider::Dialect,
    r: &Placed<'_>,
    content: &[&RBlock],
    is_error: bool,
) -> Result<String> {
    if let Some(kind) = r.kind {
        if let Some(frag) = d.kind_result(kind, r.id, content, is_error, r.missing) {
            return frag;
        }
    }
    d.result(r.id, r.name, content, is_error, r.missing)
}

/// The body around the messages array, for these options and leading instructions.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) options: ConversationOptions,
    pub(super) system: Vec<String>,
    pub(super) pre: String,
    pub(super) post: String,
    pub(super) breakpoints: Vec<String>,
    pub(super) warnings: Vec<Warning>,
}

pub(super) fn build_head(
    options: &ConversationOptions,
    system: &[&str],
    system_owned: Vec<String>,
) -> Result<Head> {
    let opts = &options.lower;
    let d = opts.provider.dialect();
    let system_opt = opts.system.as_deref().filter(|s| !s.trim().is_empty());
    let cache = (d.spec().breakpoints && options.cache.breakpoints).then(|| cache_control(options));
    let mut breakpoints = Vec::new();
    let mut warnings = Vec::new();
    // The top level, with the messages array as a marker to write it in place.
    const MARK: &str = "\u{5}";
    let mut head = Json::Obj(Vec::new());
    let mut report_lower = crate::lower::Report::default();
    let forced = crate::lower::settings(opts, &mut head, &mut report_lower)?;
    if let (Some(key), Some(field)) = (&options.cache.key, d.spec().cache_key_field) {
        head.push(field, s(key.as_str()));
    }
    let tools = crate::lower::tools(opts, forced, &mut report_lower);
    warnings.extend(report_lower.warnings);
    d.head(
        &mut head,
        system,
        system_opt,
        tools,
        Json::Raw(Cow::Borrowed(MARK)),
        cache,
        &mut breakpoints,
    );
    crate::lower::provider_options(opts, &mut head)?;
    let head = write(&head, SlotMode::Mark)?;
    let Some((head_pre, head_post)) = head.split_once(MARK) else {
        return Err(Error::new(
            ErrorKind::Internal,
            "the messages marker was lost",
        ));
    };
    Ok(Head {
        options: options.clone(),
        system: system_owned,
        pre: head_pre.to_owned(),
        post: head_post.to_owned(),
        breakpoints,
        warnings,
    })
}

/// The `cache_control` of a breakpoint.
pub(super) fn cache_control(options: &ConversationOptions) -> String {
    match options.cache.ttl.as_deref() {
        Some(t) => format!("{{\"type\":\"ephemeral\",\"ttl\":\"{t}\"}}"),
        None => "{\"type\":\"ephemeral\"}".to_owned(),
    }
}

/// Repairs in turn order (stable: the order they were found within a turn).
pub(super) fn sorted(repairs: Vec<Repair>) -> Vec<Repair> {
    let mut out: Vec<Repair> = Vec::with_capacity(repairs.len());
    for r in repairs {
        let at = out.partition_point(|x| x.turn <= r.turn);
        out.insert(at, r);
    }
    out
}

/// `{…}` with `"key":value` added before its closing brace.
pub(super) fn with_key(frag: &str, key: &str, value: &str) -> String {
    let body = frag.strip_suffix('}').unwrap_or(frag);
    let sep = if body.ends_with('{') { "" } else { "," };
    format!("{body}{sep}\"{key}\":{value}}}")
}
