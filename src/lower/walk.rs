//! The part walk: each part of a user message (or of a tool result) to provider-neutral
//! blocks by the spec's table, checked against the target's capabilities, every decision
//! reported.

use super::bytes::{host_bytes, inline_bytes, Bytes, DECODE_FULL_MAX, FILE_TEXT_MAX};
use super::*;

/// The neutral blocks of a list of user-message parts (one user turn, or a tool result's
/// parts), the report of how each part was lowered, and the host slots the core must read
/// whole before it can finish.
pub(crate) fn part_blocks<'a>(
    parts: &'a [Part],
    provider: Provider,
    caps: &Capabilities,
    resolver: &dyn Resolver,
) -> Result<(Vec<Block<'a>>, Report, Vec<u32>)> {
    let mut cx = Cx {
        provider,
        caps,
        resolver,
        blocks: Vec::new(),
        report: Report {
            provider: provider.name(),
            ..Report::default()
        },
        images: 0,
        media_bytes: 0,
        needs: Vec::new(),
    };
    for (i, part) in parts.iter().enumerate() {
        cx.part(i, part)?;
    }
    Ok((cx.blocks, cx.report, cx.needs))
}

/// How a descriptor names what it describes.
struct Describe {
    tag: &'static str,
    attrs: Vec<(&'static str, String)>,
}

struct Cx<'a, 'c> {
    provider: Provider,
    caps: &'c Capabilities,
    resolver: &'c dyn Resolver,
    blocks: Vec<Block<'a>>,
    report: Report,
    images: u64,
    media_bytes: u64,
    /// Host slots whose bytes the core must read whole.
    needs: Vec<u32>,
}

/// Canonical names for common media type aliases.
fn canonical_mime(m: &str) -> String {
    let m = media::normalize_mime(m);
    match m.as_str() {
        "image/jpg" | "image/pjpeg" => "image/jpeg".into(),
        "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "audio/wav".into(),
        "audio/mp3" | "audio/x-mp3" | "audio/mpeg3" => "audio/mpeg".into(),
        "audio/x-aiff" => "audio/aiff".into(),
        "audio/x-flac" => "audio/flac".into(),
        "audio/x-aac" => "audio/aac".into(),
        "application/x-pdf" => "application/pdf".into(),
        _ => m,
    }
}

/// Declared types that say nothing specific (the bytes decide).
fn is_generic(m: &str) -> bool {
    matches!(
        m,
        "" | "image" | "image/*" | "application/octet-stream" | "binary/octet-stream" | "*/*"
    ) || m.ends_with("/*")
}

/// `12.3 MB` (tenths, rounded half to even as float formatting would) or `900 bytes`, in
/// integers: float formatting would add ~5 KB gzip of wasm for this one line.
fn size_text(n: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if n < MB {
        return format!("{n} bytes");
    }
    // (n % MB) * 10 < 2^24 and n / MB * 10 < 2^48: no overflow.
    let (mut tenths, rem) = (n / MB * 10 + (n % MB) * 10 / MB, (n % MB) * 10 % MB);
    if rem * 2 > MB || (rem * 2 == MB && !tenths.is_multiple_of(2)) {
        tenths += 1;
    }
    format!("{}.{} MB", tenths / 10, tenths % 10)
}

impl<'a> Cx<'a, '_> {
    fn emit(&mut self, part: usize, rule: String, mime: Option<String>, block: Block<'a>) {
        self.report.blocks.push(BlockNote { part, rule, mime });
        self.blocks.push(block);
    }

    fn drop(&mut self, part: usize, rule: &str, reason: impl Into<String>) {
        self.report.dropped.push(DropNote {
            part,
            rule: rule.to_owned(),
            reason: reason.into(),
        });
    }

    fn warn(&mut self, part: usize, code: &'static str, message: impl Into<String>) {
        self.report.warnings.push(Warning {
            part: Some(part),
            code,
            message: message.into(),
        });
    }

    fn part(&mut self, i: usize, part: &'a Part) -> Result<()> {
        match part {
            Part::Text { text } => {
                if text.is_empty() {
                    self.drop(i, "text-empty", "empty text parts are not sent (providers reject them)");
                } else if self.provider.spec().refuses_blank_text && text.trim().is_empty() {
                    self.drop(i, "text-whitespace", "Anthropic rejects text blocks of white space only");
                } else {
                    self.emit(i, "text".into(), None, Block::Text(Cow::Borrowed(text)));
                }
            }
            Part::FileRef(r) => self.file_ref(i, r, "file-ref")?,
            Part::FileAttachment(a) => self.attachment(i, a)?,
            Part::Command {
                resolved: Some(r), ..
            }
            | Part::Mention(crate::message::Mention {
                resolved: Some(r), ..
            }) => self.resolution(i, part.type_name(), r)?,
            Part::Command { id, .. } => {
                return Err(Error::new(
                    ErrorKind::UnresolvedCommand,
                    format!("command `{id}` must be resolved before lowering: the model never sees a literal command"),
                )
                .at(format!("parts[{i}]"))
                .with("command", id.clone()));
            }
            Part::Mention(m) => match m.kind.as_str() {
                "skill" => self.drop(
                    i,
                    "mention-skill",
                    "a skill mention loads the skill through the skill flow; it is not part of the user turn",
                ),
                "file" => {
                    let part = At::Index(&At::Text("parts"), i);
                    let r = file_ref_at(m.target.clone(), &At::Key(&part, "target"))?;
                    // The parsed ref is owned; lower it and keep the blocks it yields.
                    self.file_ref_owned(i, r)?;
                }
                _ => self.mention_ref(i, m)?,
            },
            Part::EditorContext(c) => self.editor_context(i, c, "editor-context"),
            Part::Unknown(v) => {
                let ty = part.type_name().to_owned();
                match v.get("text").and_then(Value::as_str) {
                    Some(t) if !t.is_empty() => {
                        self.warn(i, "UnknownPartType", format!("part type `{ty}` is unknown; its text is sent"));
                        self.emit(i, "unknown-text".into(), None, Block::Text(Cow::Borrowed(t)));
                    }
                    _ => {
                        self.warn(
                            i,
                            "UnknownPartType",
                            format!("part type `{ty}` is unknown and has no text; a placeholder is sent"),
                        );
                        let text = render::descriptor("unsupported_part", &[("type", ty)], "this part type is not supported");
                        self.emit(i, "unknown-placeholder".into(), None, Block::Text(Cow::Owned(text)));
                    }
                }
            }
        }
        Ok(())
    }

    /// A command or mention the compositor resolved: its parts stand in its place.
    fn resolution(&mut self, i: usize, ty: &str, r: &'a crate::message::Resolution) -> Result<()> {
        use crate::message::Outcome;
        let why = match r.outcome {
            Outcome::Action => "a host action: executed by the host, never sent to the model",
            Outcome::Skill => "a skill activation: the skill loads through the skill flow",
            Outcome::Dropped => "resolved to nothing the model can use",
            Outcome::Parts | Outcome::PassThrough => "",
        };
        if r.parts.is_empty() {
            let rule = format!("{ty}-{}", r.outcome.name());
            self.drop(
                i,
                &rule,
                if why.is_empty() {
                    "resolved to no parts"
                } else {
                    why
                },
            );
            return Ok(());
        }
        for sub in &r.parts {
            if matches!(sub, Part::Command { .. } | Part::Mention(_)) && sub.resolution().is_none()
            {
                return Err(Error::new(
                    ErrorKind::InvalidMessage,
                    "a resolution cannot hold an unresolved command or mention",
                )
                .at(format!("parts[{i}].resolved")));
            }
            self.part(i, sub)?;
        }
        Ok(())
    }

    fn editor_context(&mut self, i: usize, c: &EditorContext, rule: &str) {
        let text = render::editor_context(&c.kind, c.source.as_deref(), &c.payload);
        self.emit(i, rule.into(), None, Block::Text(Cow::Owned(text)));
    }

    fn mention_ref(&mut self, i: usize, m: &crate::message::Mention) -> Result<()> {
        let req = ResolveRequest::Mention {
            part: i,
            target: &m.target,
        };
        match self.resolver.resolve(&req) {
            Ok(Resolved::Payload(payload)) => {
                let ctx = EditorContext {
                    kind: "ref".into(),
                    source: Some(m.kind.clone()),
                    payload,
                    emitted_at: None,
                };
                self.editor_context(i, &ctx, "mention-ref");
            }
            Ok(Resolved::Text(t)) => {
                let ctx = EditorContext {
                    kind: "ref".into(),
                    source: Some(m.kind.clone()),
                    payload: Value::String(t),
                    emitted_at: None,
                };
                self.editor_context(i, &ctx, "mention-ref");
            }
            Ok(_) => {
                self.warn(
                    i,
                    "UnresolvedMention",
                    format!(
                        "mention of kind `{}` was not resolved by the host; dropped",
                        m.kind
                    ),
                );
                self.drop(
                    i,
                    "mention-unresolved",
                    "the host did not resolve this mention to an entity",
                );
            }
            Err(e) => {
                self.warn(
                    i,
                    "ResolverFailed",
                    format!("resolving the `{}` mention failed: {e}; dropped", m.kind),
                );
                self.drop(i, "mention-unresolved", format!("the resolver failed: {e}"));
            }
        }
        Ok(())
    }

    fn file_ref_owned(&mut self, i: usize, r: FileRef) -> Result<()> {
        // A mention's ref is built here, so it cannot be borrowed from the message; its
        // blocks own their data.
        let mut sub = Cx {
            provider: self.provider,
            caps: self.caps,
            resolver: self.resolver,
            blocks: Vec::new(),
            report: std::mem::take(&mut self.report),
            images: self.images,
            media_bytes: self.media_bytes,
            needs: std::mem::take(&mut self.needs),
        };
        sub.file_ref(i, &r, "mention-file")?;
        self.report = sub.report;
        self.images = sub.images;
        self.media_bytes = sub.media_bytes;
        self.needs = sub.needs;
        for b in sub.blocks {
            self.blocks.push(own_block(b));
        }
        Ok(())
    }

    fn file_ref(&mut self, i: usize, r: &'a FileRef, prefix: &str) -> Result<()> {
        let location = r.location();
        let mut describe = Describe {
            tag: "file",
            attrs: vec![(
                match r.target {
                    RefTarget::Path(_) => "path",
                    RefTarget::Url(_) => "url",
                    RefTarget::ContentId(_) => "content_id",
                },
                location.to_owned(),
            )],
        };
        if let Some(n) = &r.name {
            describe.attrs.push(("name", n.clone()));
        }
        if let Some(range) = r.range {
            let unit = match range.unit {
                crate::message::RangeUnit::Line => "lines",
                crate::message::RangeUnit::Byte => "bytes",
            };
            let end = range.end.map(|e| format!("-{e}")).unwrap_or_default();
            describe.attrs.push((unit, format!("{}{end}", range.start)));
        }
        let declared = r.mime.as_deref().map(canonical_mime).or_else(|| {
            let name = match r.target {
                RefTarget::Url(_) => media::url_path(location),
                _ => location,
            };
            media::mime_from_name(name).map(str::to_owned)
        });
        let resolved = self.resolver.resolve(&ResolveRequest::File {
            part: i,
            file_ref: r,
        });
        match resolved {
            Ok(Resolved::Text(text)) => self.file_text(i, r, prefix, &text, describe),
            Ok(Resolved::Bytes { data, mime }) => {
                let mime = mime.map(|m| canonical_mime(&m)).or(declared);
                let textual = media::sniff(&data).is_none() && media::looks_textual(&data);
                let texty = mime
                    .as_deref()
                    .map(media::read_class)
                    .is_none_or(|c| c == MediaClass::Text || c == MediaClass::Binary);
                if textual && texty {
                    let text = String::from_utf8_lossy(&data).into_owned();
                    return self.file_text(i, r, prefix, &text, describe);
                }
                self.media(
                    i,
                    prefix,
                    mime,
                    Some(location.to_owned()),
                    Some(Bytes::owned(data, None)),
                    describe,
                );
                Ok(())
            }
            Ok(Resolved::Host { data, mime }) => {
                let mime = mime.map(|m| canonical_mime(&m)).or(declared);
                let bytes = host_bytes(&data).map_err(|e| e.at(format!("resolved.{i}")))?;
                // Bytes of no known binary format may be a text file: ask for them whole, to
                // come back through the branch above.
                if media::sniff(&bytes.head).is_none() && bytes.len <= FILE_TEXT_MAX {
                    if !self.needs.contains(&data.slot) {
                        self.needs.push(data.slot);
                    }
                    return Ok(());
                }
                self.media(
                    i,
                    prefix,
                    mime,
                    Some(location.to_owned()),
                    Some(bytes),
                    describe,
                );
                Ok(())
            }
            Ok(Resolved::Payload(_)) | Ok(Resolved::Missing) => {
                // Not resolved: a URL to a native media type passes through; else a descriptor.
                // A YouTube URL is a video the target may fetch itself (Gemini), with no type.
                if let RefTarget::Url(url) = &r.target {
                    if media::is_youtube(url)
                        && r.range.is_none()
                        && self.caps.video.urls
                        && self.provider.dialect().native(MediaClass::Video, "", true)
                    {
                        self.emit(
                            i,
                            format!("{prefix}-url-video"),
                            None,
                            Block::Media {
                                class: MediaClass::Video,
                                mime: String::new(),
                                source: Source::Url(Cow::Borrowed(url)),
                                name: None,
                            },
                        );
                        return Ok(());
                    }
                }
                if let (RefTarget::Url(url), Some(mime)) = (&r.target, declared.as_deref()) {
                    let class = media::read_class(mime);
                    let ok = self
                        .caps
                        .support(class)
                        .is_some_and(|s| s.urls && s.mimes.iter().any(|m| m == mime))
                        && self.provider.dialect().native(class, mime, true);
                    if ok && r.range.is_none() {
                        if class == MediaClass::Image {
                            self.images += 1;
                        }
                        self.emit(
                            i,
                            format!("{prefix}-url-{}", class.name()),
                            Some(mime.to_owned()),
                            Block::Media {
                                class,
                                mime: mime.to_owned(),
                                source: Source::Url(Cow::Borrowed(url)),
                                name: None,
                            },
                        );
                        return Ok(());
                    }
                }
                let route = self.ref_route(r, declared.as_deref());
                self.warn(
                    i,
                    "Unresolved",
                    format!("`{location}` was not resolved by the host; a reference is sent"),
                );
                self.describe(
                    i,
                    prefix,
                    describe,
                    route,
                    "the file's contents are not included; read it with the tool if needed",
                );
                Ok(())
            }
            Err(e) => {
                self.warn(
                    i,
                    "ResolverFailed",
                    format!("resolving `{location}` failed: {e}; a reference is sent"),
                );
                let route = self.ref_route(r, declared.as_deref());
                self.describe(
                    i,
                    prefix,
                    describe,
                    route,
                    "the file could not be read by the host",
                );
                Ok(())
            }
        }
    }

    /// The tool a reference to an unread file suggests: by its media type, and `url` (a
    /// fetch tool) for a text or unknown URL.
    fn ref_route(&self, r: &FileRef, declared: Option<&str>) -> Option<String> {
        let class = declared.map(media::read_class).unwrap_or(MediaClass::Text);
        match (&r.target, class) {
            (RefTarget::Url(_), MediaClass::Text | MediaClass::Binary) => {
                self.caps.tool_routes.get("url").cloned()
            }
            _ => self
                .caps
                .route(declared.unwrap_or(""), class)
                .map(str::to_owned),
        }
    }

    fn file_text(
        &mut self,
        i: usize,
        r: &FileRef,
        prefix: &str,
        text: &str,
        describe: Describe,
    ) -> Result<()> {
        let sel = render::select(text, r.range);
        if let Some(note) = &sel.clamped {
            self.warn(i, "RangeClamped", format!("{}: {note}", r.location()));
        }
        if sel.text.len() as u64 > self.caps.inline_text_max_bytes {
            self.warn(
                i,
                "TooLarge",
                format!(
                    "`{}` selection is {} (inline limit {}); a reference is sent",
                    r.location(),
                    size_text(sel.text.len() as u64),
                    size_text(self.caps.inline_text_max_bytes)
                ),
            );
            let route = self
                .caps
                .route("text/plain", MediaClass::Text)
                .map(str::to_owned);
            self.describe(
                i,
                prefix,
                describe,
                route,
                "too large to include; read it with the tool",
            );
            return Ok(());
        }
        let fenced = render::fence(&render::file_info(r.location(), sel.shown), &sel.text);
        self.emit(
            i,
            format!("{prefix}-text"),
            None,
            Block::Text(Cow::Owned(fenced)),
        );
        Ok(())
    }

    fn describe(
        &mut self,
        i: usize,
        prefix: &str,
        d: Describe,
        route: Option<String>,
        reason: &str,
    ) {
        let mut attrs = d.attrs;
        if let Some(t) = route {
            attrs.push(("tool", t));
        }
        let text = render::descriptor(d.tag, &attrs, reason);
        self.emit(
            i,
            format!("{prefix}-descriptor"),
            None,
            Block::Text(Cow::Owned(text)),
        );
    }

    fn attachment(&mut self, i: usize, a: &'a FileAttachment) -> Result<()> {
        let name = a.name.clone();
        let mut attrs = Vec::new();
        if let Some(n) = &name {
            attrs.push(("name", n.clone()));
        }
        let bytes = match &a.data {
            Some(Data::Inline(s)) => {
                Some(inline_bytes(s).map_err(|e| e.at(format!("parts[{i}].data")))?)
            }
            Some(Data::Host(h)) => {
                Some(host_bytes(h).map_err(|e| e.at(format!("parts[{i}].data")))?)
            }
            None => {
                match &a.content_id {
                    Some(cid) => {
                        attrs.push(("content_id", cid.clone()));
                        match self.resolver.resolve(&ResolveRequest::Blob {
                            part: i,
                            content_id: cid,
                        }) {
                            Ok(Resolved::Bytes { data, .. }) => Some(Bytes::owned(data, None)),
                            Ok(Resolved::Host { data, .. }) => {
                                Some(host_bytes(&data).map_err(|e| e.at(format!("resolved.{i}")))?)
                            }
                            Ok(Resolved::Text(t)) => {
                                let data = t.into_bytes();
                                Some(Bytes::owned(data, None))
                            }
                            Ok(_) => {
                                self.warn(i, "Unresolved", format!("blob `{cid}` was not found by the host; a descriptor is sent"));
                                None
                            }
                            Err(e) => {
                                self.warn(
                                    i,
                                    "ResolverFailed",
                                    format!(
                                        "reading blob `{cid}` failed: {e}; a descriptor is sent"
                                    ),
                                );
                                None
                            }
                        }
                    }
                    None => None,
                }
            }
        };
        let declared = a
            .mime
            .as_deref()
            .map(canonical_mime)
            .filter(|m| !m.is_empty())
            .or_else(|| bytes.as_ref().and_then(|b| b.header_mime.clone()));
        let declared = match declared {
            Some(d) if !is_generic(&d) => Some(d),
            other => name
                .as_deref()
                .and_then(media::mime_from_name)
                .map(str::to_owned)
                .or(other),
        };
        if let (None, Some(size)) = (&bytes, a.size) {
            attrs.push(("size", size.to_string()));
        }
        self.media(
            i,
            "attachment",
            declared,
            name,
            bytes,
            Describe {
                tag: "attachment",
                attrs,
            },
        );
        Ok(())
    }

    /// Lowers bytes (of an attachment or a resolved file) by their media type.
    fn media(
        &mut self,
        i: usize,
        prefix: &str,
        declared: Option<String>,
        name: Option<String>,
        mut bytes: Option<Bytes<'a>>,
        mut d: Describe,
    ) {
        let sniffed = bytes.as_ref().and_then(|b| media::sniff(&b.head));
        let mut mime = declared
            .clone()
            .unwrap_or_else(|| "application/octet-stream".into());
        if let Some(s) = sniffed {
            if declared
                .as_deref()
                .is_some_and(|d| !is_generic(d) && d != s)
            {
                self.warn(
                    i,
                    "MimeMismatch",
                    format!(
                        "declared {} but the bytes are {s}; {s} is used",
                        declared.as_deref().unwrap_or("")
                    ),
                );
            }
            mime = s.to_owned();
        }
        let mut class = media::read_class(&mime);
        if let Some(b) = &bytes {
            d.attrs.push(("mime", mime.clone()));
            d.attrs.push(("size", b.len.to_string()));
        } else {
            d.attrs.push(("mime", mime.clone()));
        }
        // Unlabelled bytes that read as text are text.
        if class == MediaClass::Binary
            && sniffed.is_none()
            && is_generic(declared.as_deref().unwrap_or(""))
        {
            if let Some(b) = bytes.as_mut() {
                match b.full() {
                    Some(full) if media::looks_textual(full) => {
                        class = MediaClass::Text;
                        mime = "text/plain".into();
                    }
                    Some(_) => {}
                    None => self.need(b),
                }
            }
        }
        let Some(bytes) = bytes else {
            let route = self.caps.route(&mime, class).map(str::to_owned);
            self.describe(i, prefix, d, route, "the bytes are not included");
            return;
        };
        match class {
            MediaClass::Text => self.text_bytes(i, prefix, &mime, name, bytes, d),
            MediaClass::Binary => {
                let route = self.caps.route(&mime, class).map(str::to_owned);
                self.describe(
                    i,
                    prefix,
                    d,
                    route,
                    "binary content the model cannot read directly",
                );
            }
            _ => {
                let route = self.caps.route(&mime, class).map(str::to_owned);
                let strict = matches!(class, MediaClass::Image | MediaClass::Pdf);
                if strict && sniffed.is_none() {
                    self.warn(
                        i,
                        "UnrecognizedMedia",
                        format!("declared {mime} but the bytes are not a recognised {} file; a descriptor is sent", class.name()),
                    );
                    self.describe(
                        i,
                        prefix,
                        d,
                        route,
                        "the bytes do not match their declared type",
                    );
                    return;
                }
                let support = self.caps.support(class);
                let supported = support.is_some_and(|s| s.mimes.contains(&mime))
                    && self.provider.dialect().native(class, &mime, false);
                if !supported {
                    self.warn(
                        i,
                        "UnsupportedMedia",
                        format!(
                            "{} does not accept {mime} natively; a descriptor is sent",
                            self.provider.name()
                        ),
                    );
                    self.describe(
                        i,
                        prefix,
                        d,
                        route,
                        &format!("{mime} is not readable by this model directly"),
                    );
                    return;
                }
                let max = support.map(|s| s.max_bytes).unwrap_or(0);
                // Limits count what is sent: the base64 text (Anthropic measures its 5 MB
                // image limit on it), 4/3 of the bytes.
                let sent = bytes.len.div_ceil(3) * 4;
                if sent > max {
                    self.warn(
                        i,
                        "TooLarge",
                        format!(
                            "{} as base64 is over the {} limit for one {}; a descriptor is sent",
                            size_text(sent),
                            size_text(max),
                            class.name()
                        ),
                    );
                    self.describe(i, prefix, d, route, "too large to send inline");
                    return;
                }
                if self.media_bytes + sent > self.caps.max_request_bytes
                    || (class == MediaClass::Image && self.images >= self.caps.max_images)
                {
                    self.warn(
                        i,
                        "RequestLimit",
                        format!(
                            "the request would exceed {} of inline media or {} images; a descriptor is sent",
                            size_text(self.caps.max_request_bytes),
                            self.caps.max_images
                        ),
                    );
                    self.describe(
                        i,
                        prefix,
                        d,
                        route,
                        "the request's inline media limit is reached",
                    );
                    return;
                }
                self.media_bytes += sent;
                if class == MediaClass::Image {
                    self.images += 1;
                }
                self.emit(
                    i,
                    format!("{prefix}-{}", class.name()),
                    Some(mime.clone()),
                    Block::Media {
                        class,
                        mime,
                        source: Source::Data(bytes.src),
                        name,
                    },
                );
            }
        }
    }

    /// Asks the host for a slot's bytes (read whole for text) when they are small enough.
    fn need(&mut self, b: &Bytes<'_>) {
        if let DataSrc::Slot(n) = b.src {
            if b.len <= DECODE_FULL_MAX && !self.needs.contains(&n) {
                self.needs.push(n);
            }
        }
    }

    fn text_bytes(
        &mut self,
        i: usize,
        prefix: &str,
        mime: &str,
        name: Option<String>,
        mut bytes: Bytes<'a>,
        d: Describe,
    ) {
        let route = self.caps.route(mime, MediaClass::Text).map(str::to_owned);
        if bytes.len > self.caps.inline_text_max_bytes {
            self.warn(
                i,
                "TooLarge",
                format!(
                    "text of {} is over the inline limit of {}; a descriptor is sent",
                    size_text(bytes.len),
                    size_text(self.caps.inline_text_max_bytes)
                ),
            );
            self.describe(
                i,
                prefix,
                d,
                route,
                "too large to include; read it with the tool",
            );
            return;
        }
        if bytes.full().is_none() {
            self.need(&bytes);
        }
        let Some(full) = bytes.full else {
            self.describe(
                i,
                prefix,
                d,
                route,
                "the text is held by the host and not included",
            );
            return;
        };
        // NUL is valid UTF-8 but never in text: binary labelled as text is not sent as text.
        let text = match String::from_utf8(full).ok().filter(|t| !t.contains('\0')) {
            Some(t) => render::normalize_newlines(&t).into_owned(),
            None => {
                self.warn(
                    i,
                    "NotText",
                    format!(
                        "declared {mime} but the bytes are not UTF-8 text; a descriptor is sent"
                    ),
                );
                self.describe(i, prefix, d, route, "the bytes are not UTF-8 text");
                return;
            }
        };
        let title = name.unwrap_or_else(|| "attachment.txt".into());
        let fenced = render::fence(&render::file_info(&title, None), &text);
        if text.is_empty() {
            self.drop(
                i,
                &format!("{prefix}-text-empty"),
                "the text attachment is empty",
            );
            return;
        }
        self.emit(
            i,
            format!("{prefix}-text"),
            Some("text/plain".into()),
            Block::TextDoc {
                text,
                title,
                fenced,
            },
        );
    }
}

/// Makes a block own its data.
fn own_block<'x>(b: Block<'_>) -> Block<'x> {
    let own_src = |s: DataSrc<'_>| match s {
        DataSrc::Inline(c) => DataSrc::Inline(Cow::Owned(c.into_owned())),
        DataSrc::Slot(n) => DataSrc::Slot(n),
    };
    match b {
        Block::Text(t) => Block::Text(Cow::Owned(t.into_owned())),
        Block::Media {
            class,
            mime,
            source,
            name,
        } => Block::Media {
            class,
            mime,
            source: match source {
                Source::Data(d) => Source::Data(own_src(d)),
                Source::Url(u) => Source::Url(Cow::Owned(u.into_owned())),
            },
            name,
        },
        Block::TextDoc {
            text,
            title,
            fenced,
        } => Block::TextDoc {
            text,
            title,
            fenced,
        },
    }
}

#[cfg(test)]
mod size_text_tests {
    #[test]
    fn matches_float_formatting() {
        let mb = 1024 * 1024u64;
        for n in [
            mb,
            mb + 1,
            5 * (mb / 4),
            3 * (mb / 4) + mb,
            1_500_000,
            20 * mb - 1,
            104_857_600,
            u64::MAX / 16,
        ] {
            assert_eq!(
                super::size_text(n),
                format!("{:.1} MB", n as f64 / mb as f64),
                "{n}"
            );
        }
        assert_eq!(super::size_text(900), "900 bytes");
    }
}
