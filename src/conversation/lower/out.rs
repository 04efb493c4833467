//! The body writer of an assembly: messages written in order, with what a previous body
//! of the same conversation sent kept by reference (a message whose fragments did not
//! change is copied, not re-written).

use super::*;

/// What one piece of a message was: text that lives as long as the conversation's lowered
/// turns (or the program), known by its address; or text made for this call, known by its
/// bytes. Two messages with the same keys are the same bytes (see [`Assembled::keys`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    /// Address and length of text that does not move while its turn is held.
    At(usize, usize),
    /// Text made for this call.
    Bytes(Box<str>),
}

/// What the previous lowering of the same conversation wrote (its turns still held).
pub(crate) struct Prev<'p> {
    /// The body before its messages array.
    pub(crate) head: &'p str,
    /// Its messages' keys, one after another.
    pub(crate) keys: &'p [Key],
    /// Where each message's keys begin.
    pub(crate) key_starts: &'p [usize],
}

impl Prev<'_> {
    pub(super) fn message(&self, i: usize) -> Option<&[Key]> {
        let from = *self.key_starts.get(i)?;
        let to = self
            .key_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.keys.len());
        self.keys.get(from..to)
    }
}

/// A piece of the message being probed, kept to be written if it differs after all.
pub(super) enum Pend<'a> {
    Ref(&'a str),
    Key(usize),
}

/// The messages array being written. While the messages repeat the previous lowering's
/// (same keys, in order) nothing is written, only measured; from the first one that
/// differs, the body is written from the end of the last repeated message on.
pub(super) struct Out<'a, 'p> {
    /// The body from `base` on.
    pub(super) buf: String,
    pub(super) base: usize,
    /// The body's length so far (written or not).
    pub(super) len: usize,
    pub(super) prev: Option<Prev<'p>>,
    pub(super) probing: bool,
    pub(super) head_len: usize,
    /// Leading messages that repeat the previous lowering's.
    pub(super) matched: usize,
    pub(super) starts: Vec<usize>,
    pub(super) ends: Vec<usize>,
    pub(super) keys: Vec<Key>,
    pub(super) key_starts: Vec<usize>,
    pub(super) pending: Vec<Pend<'a>>,
    /// Messages kept before the first one written here (continuing a lowering).
    pub(super) before: usize,
    /// Each message's first and last turn, and the last turn its pieces came from.
    pub(super) msg_first: Vec<usize>,
    pub(super) msg_last: Vec<usize>,
    pub(super) msg_src: Vec<usize>,
}

impl<'a, 'p> Out<'a, 'p> {
    pub(super) fn new(
        head_pre: &str,
        prev: Option<Prev<'p>>,
        capacity: usize,
        messages: usize,
    ) -> Self {
        let probing = prev.as_ref().is_some_and(|p| p.head == head_pre);
        let mut buf = String::with_capacity(if probing { 4096 } else { capacity });
        if !probing {
            buf.push_str(head_pre);
            buf.push('[');
        }
        Out {
            buf,
            base: 0,
            len: head_pre.len() + 1,
            prev: if probing { prev } else { None },
            probing,
            head_len: head_pre.len(),
            matched: 0,
            starts: Vec::with_capacity(messages),
            ends: Vec::with_capacity(messages),
            keys: Vec::with_capacity(4 * messages),
            key_starts: Vec::with_capacity(messages),
            pending: Vec::new(),
            before: 0,
            msg_first: Vec::with_capacity(messages),
            msg_last: Vec::with_capacity(messages),
            msg_src: Vec::with_capacity(messages),
        }
    }

    /// Continues a body whose first `before` messages end at byte `len`.
    pub(super) fn after(len: usize, before: usize, head_len: usize) -> Self {
        Out {
            buf: String::with_capacity(1024),
            base: len,
            len,
            prev: None,
            probing: false,
            head_len,
            matched: 0,
            starts: Vec::new(),
            ends: Vec::new(),
            keys: Vec::new(),
            key_starts: Vec::new(),
            pending: Vec::new(),
            before,
            msg_first: Vec::new(),
            msg_last: Vec::new(),
            msg_src: Vec::new(),
        }
    }

    /// Ends the open message: while probing, compares it with the previous lowering's.
    pub(super) fn close(&mut self) {
        let i = self.ends.len();
        if i >= self.starts.len() {
            return;
        }
        self.ends.push(self.len);
        if !self.probing {
            return;
        }
        let from = self.key_starts.get(i).copied().unwrap_or(0);
        let same = match &self.prev {
            Some(p) => p.message(i).is_some() && p.message(i) == self.keys.get(from..),
            None => false,
        };
        if same {
            self.matched += 1;
            self.pending.clear();
            return;
        }
        // The first message that differs: write from the end of the one before it.
        self.probing = false;
        self.base = if i == 0 {
            self.head_len + 1
        } else {
            self.ends.get(i - 1).copied().unwrap_or(0)
        };
        self.buf.clear();
        if i > 0 {
            self.buf.push(',');
        }
        for p in std::mem::take(&mut self.pending) {
            match p {
                Pend::Ref(t) => self.buf.push_str(t),
                Pend::Key(k) => {
                    if let Some(Key::Bytes(b)) = self.keys.get(k) {
                        self.buf.push_str(b);
                    }
                }
            }
        }
    }

    /// Starts a message (the separator before it, and its offset).
    pub(super) fn begin(&mut self, first: usize, last: usize, src: usize) {
        self.close();
        self.msg_first.push(first);
        self.msg_last.push(last);
        self.msg_src.push(src);
        if !self.starts.is_empty() || self.before > 0 {
            if !self.probing {
                self.buf.push(',');
            }
            self.len += 1;
        }
        self.starts.push(self.len);
        self.key_starts.push(self.keys.len());
    }

    /// Writes text that stays where it is while the lowered turns are held (a cached
    /// fragment, a static string).
    pub(super) fn held(&mut self, t: &'a str) {
        self.keys.push(Key::At(t.as_ptr() as usize, t.len()));
        self.len += t.len();
        if self.probing {
            self.pending.push(Pend::Ref(t));
        } else {
            self.buf.push_str(t);
        }
    }

    /// Writes text made for this call.
    pub(super) fn made(&mut self, t: &str) {
        self.keys.push(Key::Bytes(t.into()));
        self.len += t.len();
        if self.probing {
            self.pending.push(Pend::Key(self.keys.len() - 1));
        } else {
            self.buf.push_str(t);
        }
    }

    #[allow(clippy::ptr_arg)] // the variant says which kind of text it is
    pub(super) fn cow(&mut self, t: &Cow<'a, str>) {
        match t {
            Cow::Borrowed(b) => self.held(b),
            Cow::Owned(o) => self.made(o),
        }
    }

    /// Closes the array and the body; gives where the written part starts, the written
    /// part, and what was recorded.
    pub(super) fn finish(mut self, head_post: &str) -> (usize, String, Self) {
        self.close();
        if self.probing {
            // Every message repeats the previous lowering: only the end is new.
            self.base = self.ends.last().copied().unwrap_or(self.head_len + 1);
            self.buf.clear();
            self.probing = false;
        }
        self.buf.push(']');
        self.buf.push_str(head_post);
        let buf = std::mem::take(&mut self.buf);
        (self.base, buf, self)
    }
}
