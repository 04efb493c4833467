//! The steps the core's hand-written JSON scanners share (a skill state machine's spec,
//! `arbiter::spec`; a user message, `message::read`): a position in a text, whitespace,
//! one expected byte, the members of an object or an array. Each scanner reads only the
//! shapes it knows and answers `None` for anything else, for a full reader to take over.

/// A position in a JSON text, read forwards.
pub(crate) trait Scanner<'a> {
    /// The whole text.
    fn text(&self) -> &'a str;
    /// The position, a byte offset into [`Scanner::text`].
    fn at_mut(&mut self) -> &mut usize;
    /// The position.
    fn at(&self) -> usize;

    /// The byte at the position.
    fn byte(&self) -> Option<u8> {
        self.text().as_bytes().get(self.at()).copied()
    }

    /// Skips JSON whitespace.
    fn ws(&mut self) {
        while matches!(self.byte(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            *self.at_mut() += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.byte()
    }

    /// Takes `c` (after whitespace).
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| *self.at_mut() += 1)
    }

    /// A string with no escape, borrowed from the text (one with an escape or a control
    /// character is not taken).
    fn plain(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at();
        loop {
            match self.byte()? {
                b'"' => break,
                b'\\' | 0..0x20 => return None,
                _ => *self.at_mut() += 1,
            }
        }
        let s = self.text().get(start..self.at())?;
        *self.at_mut() += 1;
        Some(s)
    }

    /// After a member: `,` (true: another follows) or `close` (false: taken).
    fn next(&mut self, close: u8) -> Option<bool> {
        match self.peek()? {
            b',' => {
                *self.at_mut() += 1;
                Some(true)
            }
            c if c == close => {
                *self.at_mut() += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// The members of an object or an array up to `close` (the opening taken), `item`
    /// reading each.
    fn members(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()>
    where
        Self: Sized,
    {
        if self.peek()? == close {
            *self.at_mut() += 1;
            return Some(());
        }
        loop {
            item(self)?;
            if !self.next(close)? {
                return Some(());
            }
        }
    }
}

/// Which of an object's known keys were seen, one bit each (a key given twice is left to
/// the full reader, which keeps the last).
#[derive(Default)]
pub(crate) struct Seen(u32);

impl Seen {
    /// `Some` the first time `bit` is seen, `None` after.
    pub(crate) fn first(&mut self, bit: u32) -> Option<()> {
        let new = self.0 & bit == 0;
        self.0 |= bit;
        new.then_some(())
    }
}
