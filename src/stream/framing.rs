//! The framing of response bytes: Server-Sent Events (every provider's stream), a JSON
//! array of objects arriving piece by piece (Gemini's `streamGenerateContent` without
//! `alt=sse`), or one JSON body (a non-streaming response). The first byte that is not
//! white space decides: `[` an array, `{` one body, anything else SSE.
//!
//! Bytes are fed in chunks split anywhere — inside a line, inside a `\r\n`, inside a UTF-8
//! sequence, inside a JSON string — and give the same frames as the whole body at once.

/// The most one event (or one JSON object, or a whole body) may hold before it is dropped
/// as malformed: a stream that never ends a line cannot take all the memory.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// One unit of a response, borrowed from the framer's buffers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Frame<'a> {
    /// An SSE event's `event:` name (if any) and its data, or a JSON object of an array.
    Data(Option<&'a str>, &'a str),
    /// The whole body (not a stream).
    Body(&'a str),
    /// An SSE event the body's end cut before its blank line: read if it is whole.
    Cut(Option<&'a str>, &'a str),
    /// OpenAI's `data: [DONE]`.
    Done,
    /// Bytes that cannot be framed (not UTF-8, an over-long event, text outside an array's
    /// objects); what they were.
    Malformed(String),
}

/// Where frames go, as they complete (no copy of an event's data).
pub(crate) trait Sink {
    fn frame(&mut self, f: Frame<'_>);
    /// An SSE event set the last event ID (its `id:` field; empty: none), before its frame.
    fn id(&mut self, id: Option<&str>) {
        let _ = id;
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Unknown,
    Sse,
    Array,
    Whole,
}

/// An incremental framer.
#[derive(Debug)]
pub(crate) struct Framer {
    mode: Mode,
    /// SSE: the unfinished line; array: the unfinished object; whole: the body so far.
    buf: Vec<u8>,
    /// SSE: the last chunk ended with `\r`, so a leading `\n` of the next one belongs to it.
    skip_lf: bool,
    /// SSE: the event name (when `has_event`) and the data lines of the event being read.
    event: String,
    has_event: bool,
    data: String,
    has_data: bool,
    /// SSE: the line being read is too long and is being skipped.
    skipping: bool,
    /// SSE: the last `id:` field read, not yet dispatched.
    id: Option<String>,
    id_pending: bool,
    /// Array: nesting depth, inside a string, after a backslash.
    depth: u32,
    in_str: bool,
    esc: bool,
    /// Whole: too large, dropped.
    overflow: bool,
}

impl Framer {
    /// A framer that has seen nothing.
    pub(crate) fn new() -> Self {
        Framer {
            mode: Mode::Unknown,
            buf: Vec::new(),
            skip_lf: false,
            event: String::new(),
            has_event: false,
            data: String::new(),
            has_data: false,
            skipping: false,
            id: None,
            id_pending: false,
            depth: 0,
            in_str: false,
            esc: false,
            overflow: false,
        }
    }

    /// Frames what `chunk` completes.
    pub(crate) fn push(&mut self, mut chunk: &[u8], out: &mut dyn Sink) {
        if self.mode == Mode::Unknown {
            // A UTF-8 byte order mark and white space say nothing yet.
            let mut i = 0;
            while let Some(&b) = chunk.get(i) {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' | 0xEF | 0xBB | 0xBF => i += 1,
                    b'[' => {
                        self.mode = Mode::Array;
                        break;
                    }
                    b'{' => {
                        self.mode = Mode::Whole;
                        break;
                    }
                    _ => {
                        self.mode = Mode::Sse;
                        break;
                    }
                }
            }
            // SSE keeps its leading blank lines (they dispatch nothing).
            chunk = chunk.get(i..).unwrap_or(&[]);
            if self.mode == Mode::Unknown {
                return;
            }
        }
        match self.mode {
            Mode::Sse => self.sse(chunk, out),
            Mode::Array => self.array(chunk, out),
            Mode::Whole => {
                if !self.overflow {
                    if self.buf.len() + chunk.len() > MAX_FRAME_BYTES {
                        self.overflow = true;
                        self.buf = Vec::new();
                        out.frame(Frame::Malformed(format!(
                            "the body is larger than {MAX_FRAME_BYTES} bytes"
                        )));
                    } else {
                        self.buf.extend_from_slice(chunk);
                    }
                }
            }
            Mode::Unknown => {}
        }
    }

    /// Frames what is left at the end of the body. Returns whether the bytes ended cleanly
    /// (false: an array or a line was cut).
    pub(crate) fn finish(&mut self, out: &mut dyn Sink) -> bool {
        match self.mode {
            Mode::Unknown => true,
            Mode::Sse => {
                if !self.buf.is_empty() && !self.skipping {
                    let line = std::mem::take(&mut self.buf);
                    self.line(&line, out);
                }
                self.buf.clear();
                // An event not closed by a blank line: read if its data is whole.
                self.dispatch(out, true);
                true
            }
            Mode::Array => {
                let clean = self.depth == 0;
                self.buf.clear();
                clean
            }
            Mode::Whole => {
                if !self.overflow {
                    let body = std::mem::take(&mut self.buf);
                    match std::str::from_utf8(&body) {
                        Ok(s) => out.frame(Frame::Body(s)),
                        Err(_) => out.frame(Frame::Malformed("the body is not UTF-8".into())),
                    }
                }
                true
            }
        }
    }

    fn sse(&mut self, mut chunk: &[u8], out: &mut dyn Sink) {
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk.first() == Some(&b'\n') {
                chunk = chunk.get(1..).unwrap_or_default();
            }
        }
        while !chunk.is_empty() {
            let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if !self.skipping {
                    if self.buf.len() + chunk.len() > MAX_FRAME_BYTES {
                        self.skipping = true;
                        self.buf = Vec::new();
                        out.frame(Frame::Malformed(format!(
                            "an event line is longer than {MAX_FRAME_BYTES} bytes"
                        )));
                    } else {
                        self.buf.extend_from_slice(chunk);
                    }
                }
                return;
            };
            let (line, rest) = chunk.split_at(end);
            let mut next = rest.get(1..).unwrap_or_default();
            if rest.first() == Some(&b'\r') {
                match next.first() {
                    Some(b'\n') => next = next.get(1..).unwrap_or_default(),
                    None => self.skip_lf = true,
                    Some(_) => {}
                }
            }
            if self.skipping {
                self.skipping = false;
            } else if self.buf.is_empty() {
                self.line(line, out);
            } else {
                let mut whole = std::mem::take(&mut self.buf);
                whole.extend_from_slice(line);
                self.line(&whole, out);
            }
            chunk = next;
        }
    }

    fn line(&mut self, line: &[u8], out: &mut dyn Sink) {
        if line.is_empty() {
            self.dispatch(out, false);
            return;
        }
        if line.first() == Some(&b':') {
            return; // a comment (keep-alive)
        }
        let Ok(line) = std::str::from_utf8(line) else {
            out.frame(Frame::Malformed("an event line is not UTF-8".into()));
            return;
        };
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                if self.data.len() + value.len() > MAX_FRAME_BYTES {
                    out.frame(Frame::Malformed(format!(
                        "an event is longer than {MAX_FRAME_BYTES} bytes"
                    )));
                    self.data = String::new();
                    self.has_data = false;
                    return;
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
                self.has_event = true;
            }
            // An id with a NUL is ignored, as the SSE standard says.
            "id" if value.bytes().all(|b| b != 0) => {
                self.id = Some(value.to_owned()).filter(|v| !v.is_empty());
                self.id_pending = true;
            }
            // `retry` and unknown fields are ignored, as the SSE standard says.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut dyn Sink, cut: bool) {
        let has_event = std::mem::replace(&mut self.has_event, false);
        if self.id_pending && !cut {
            self.id_pending = false;
            out.id(self.id.as_deref());
        }
        if self.has_data {
            self.has_data = false;
            let event = has_event.then_some(self.event.as_str());
            if self.data.trim() == "[DONE]" {
                out.frame(Frame::Done);
            } else if cut {
                out.frame(Frame::Cut(event, &self.data));
            } else {
                out.frame(Frame::Data(event, &self.data));
            }
            self.data.clear();
        }
        self.event.clear();
    }

    fn array(&mut self, chunk: &[u8], out: &mut dyn Sink) {
        let mut start = 0usize; // where the object being read starts in `chunk`
        for (i, &b) in chunk.iter().enumerate() {
            if self.depth == 0 {
                match b {
                    b'{' => {
                        self.depth = 1;
                        start = i;
                    }
                    b'[' | b']' | b',' | b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => {
                        out.frame(Frame::Malformed(format!(
                            "a byte 0x{b:02x} between the objects of a JSON array stream"
                        )));
                    }
                }
                continue;
            }
            if self.in_str {
                if self.esc {
                    self.esc = false;
                } else if b == b'\\' {
                    self.esc = true;
                } else if b == b'"' {
                    self.in_str = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_str = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        let piece = chunk.get(start..=i).unwrap_or_default();
                        let joined;
                        let bytes = if self.buf.is_empty() {
                            piece
                        } else {
                            let mut w = std::mem::take(&mut self.buf);
                            w.extend_from_slice(piece);
                            joined = w;
                            &joined[..]
                        };
                        match std::str::from_utf8(bytes) {
                            Ok(s) => out.frame(Frame::Data(None, s)),
                            Err(_) => {
                                out.frame(Frame::Malformed("an array item is not UTF-8".into()))
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if self.depth > 0 {
            let piece = chunk.get(start..).unwrap_or(&[]);
            if self.buf.len() + piece.len() > MAX_FRAME_BYTES {
                out.frame(Frame::Malformed(format!(
                    "an array item is longer than {MAX_FRAME_BYTES} bytes"
                )));
                self.buf = Vec::new();
                self.depth = 0;
                self.in_str = false;
                self.esc = false;
            } else {
                self.buf.extend_from_slice(piece);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum Owned {
        Data(Option<String>, String),
        Done,
        Malformed,
    }

    impl Sink for Vec<Owned> {
        fn frame(&mut self, f: Frame<'_>) {
            self.push(match f {
                Frame::Data(e, d) | Frame::Cut(e, d) => {
                    Owned::Data(e.map(str::to_owned), d.to_owned())
                }
                Frame::Body(d) => Owned::Data(None, d.to_owned()),
                Frame::Done => Owned::Done,
                Frame::Malformed(_) => Owned::Malformed,
            })
        }
    }

    fn frames(chunks: &[&[u8]]) -> (Vec<Owned>, bool) {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, &mut out);
        }
        let clean = f.finish(&mut out);
        (out, clean)
    }

    #[test]
    fn sse_lines_any_ending_any_split() {
        let body = b"event: a\r\ndata: {\"x\":1}\r\n\r\n: ping\n\ndata: one\ndata: two\r\rdata: [DONE]\n\n";
        let want = vec![
            Owned::Data(Some("a".into()), "{\"x\":1}".into()),
            Owned::Data(None, "one\ntwo".into()),
            Owned::Done,
        ];
        for i in 0..=body.len() {
            for j in i..=body.len() {
                let (got, clean) = frames(&[&body[..i], &body[i..j], &body[j..]]);
                assert_eq!(got, want, "split at {i}, {j}");
                assert!(clean);
            }
        }
    }

    #[test]
    fn array_items_across_chunks() {
        let body = "[{\"a\":\"}{\\\"\"}\r\n,{\"b\":[1,{\"c\":2}]}]".as_bytes();
        for i in 0..=body.len() {
            let (got, clean) = frames(&[&body[..i], &body[i..]]);
            assert_eq!(
                got,
                vec![
                    Owned::Data(None, "{\"a\":\"}{\\\"\"}".into()),
                    Owned::Data(None, "{\"b\":[1,{\"c\":2}]}".into()),
                ]
            );
            assert!(clean);
        }
        let (_, clean) = frames(&[b"[{\"a\":1},{\"b\""]);
        assert!(!clean);
    }

    #[test]
    fn a_whole_body_and_utf8_split() {
        let body = "{\"t\":\"h\u{e9}\u{1F600}\"}".as_bytes();
        for i in 0..=body.len() {
            let (got, _) = frames(&[&body[..i], &body[i..]]);
            assert_eq!(
                got,
                vec![Owned::Data(None, "{\"t\":\"h\u{e9}\u{1F600}\"}".into())]
            );
        }
        let sse = "data: h\u{e9}\u{1F600}\n\n".as_bytes();
        for i in 0..=sse.len() {
            let (got, _) = frames(&[&sse[..i], &sse[i..]]);
            assert_eq!(got, vec![Owned::Data(None, "h\u{e9}\u{1F600}".into())]);
        }
    }

    #[test]
    fn malformed_bytes_are_named_not_fatal() {
        let (got, _) = frames(&[b"data: \xff\n\ndata: ok\n\n"]);
        assert!(matches!(got[0], Owned::Malformed));
        assert_eq!(got[1], Owned::Data(None, "ok".into()));
    }
}
