//! JSON text written into a byte buffer, short fragments copied inline.
//!
//! serde_json writes a document as many short fragments: a quote, a key, a colon, a run of
//! a string between two escapes. Into a `Vec<u8>` each one is an `extend_from_slice`, whose
//! copy is wasm's `memory.copy`, and V8 compiles that instruction as a call out of the
//! module: for fragments of a few bytes the call costs more than the copy. [`Out`] copies
//! fragments of up to [`INLINE`] bytes one byte at a time inside the module and hands longer
//! ones to `extend_from_slice`.
//!
//! [`ObjectText`] writes an object field by field into the same buffer, for the documents
//! written often enough (stored rows, the compositor's answers) that a `Value` tree built only
//! to be written costs more than the writing.

use serde::Serialize;

/// The longest fragment copied byte by byte.
const INLINE: usize = 16;

/// A byte buffer that serde_json writes into (see the module's documentation).
#[derive(Debug, Default)]
pub(crate) struct Out(pub(crate) Vec<u8>);

impl Out {
    /// An empty buffer with room for `n` bytes.
    pub(crate) fn with_capacity(n: usize) -> Out {
        Out(Vec::with_capacity(n))
    }

    /// Appends `b` (one function: inlined at each of serde_json's write sites it would cost
    /// kilobytes).
    #[inline(never)]
    pub(crate) fn put(&mut self, b: &[u8]) {
        match b {
            // A quote, a colon, a comma, a bracket: the most frequent fragments.
            [x] => self.0.push(*x),
            _ if b.len() <= INLINE => {
                self.0.reserve(b.len());
                for &x in b {
                    self.0.push(x);
                }
            }
            _ => self.0.extend_from_slice(b),
        }
    }
}

impl std::io::Write for Out {
    #[inline]
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.put(b);
        Ok(b.len())
    }

    #[inline]
    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.put(b);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `v` as compact JSON bytes: what `serde_json::to_vec` writes, and fails where it fails.
pub(crate) fn to_vec<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Out::with_capacity(256);
    serde_json::to_writer(&mut out, v)?;
    Ok(out.0)
}

/// `v` as compact JSON text: what `serde_json::to_string` writes, and fails where it fails.
pub(crate) fn to_string<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    let bytes = to_vec(v)?;
    // serde_json writes UTF-8 only; checked rather than converted unchecked.
    Ok(String::from_utf8(bytes).unwrap_or_default())
}

/// A JSON value's compact text, written through [`Out`]: byte for byte what its `to_string`
/// gives, without `Display`'s adapter (a `fmt::Formatter` between serde_json and the string
/// checks every fragment as UTF-8 and copies it through two more calls).
pub(crate) trait JsonText {
    /// The compact JSON text.
    fn json_text(&self) -> String;
}

impl JsonText for serde_json::Value {
    fn json_text(&self) -> String {
        // A `Value` always serializes (its map keys are strings).
        to_string(self).unwrap_or_default()
    }
}

impl JsonText for serde_json::Map<String, serde_json::Value> {
    fn json_text(&self) -> String {
        to_string(self).unwrap_or_default()
    }
}

/// A JSON object written field by field straight into bytes, for documents the core writes
/// often enough that building a `Value` tree first (maps, copied strings, then a walk and a
/// drop) costs more than writing them. The caller gives the keys in the order they are to
/// appear: in the order serde_json sorts a map's keys, for text byte-identical to a tree's.
#[derive(Debug)]
pub(crate) struct ObjectText {
    /// The text so far.
    pub(crate) out: Out,
    first: bool,
}

impl ObjectText {
    /// `{`, with room for `n` bytes.
    pub(crate) fn new(n: usize) -> ObjectText {
        let mut f = ObjectText {
            out: Out::with_capacity(n),
            first: true,
        };
        f.out.0.push(b'{');
        f
    }

    /// `,` unless this is the object's first field, then `"k":`.
    #[inline(never)]
    pub(crate) fn key(&mut self, k: &str) {
        if !self.first {
            self.out.0.push(b',');
        }
        self.first = false;
        self.string(k);
        self.out.0.push(b':');
    }

    /// `s` as a JSON string (escaped as serde_json escapes it).
    #[inline(never)]
    pub(crate) fn string(&mut self, s: &str) {
        // Writing a `str` into bytes cannot fail.
        let _ = serde_json::to_writer(&mut self.out, s);
    }

    /// A string field.
    pub(crate) fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.string(v);
    }

    /// A field holding any value.
    #[inline(never)]
    pub(crate) fn value(&mut self, k: &str, v: &serde_json::Value) {
        self.key(k);
        // A `Value` always serializes (its map keys are strings).
        let _ = serde_json::to_writer(&mut self.out, v);
    }

    /// A field whose value is JSON text already written.
    pub(crate) fn raw(&mut self, k: &str, text: &str) {
        self.key(k);
        self.out.put(text.as_bytes());
    }

    /// A field holding an object of these entries, in their order.
    pub(crate) fn map(&mut self, k: &str, m: &serde_json::Map<String, serde_json::Value>) {
        self.open(k);
        for (k, v) in m {
            self.value(k, v);
        }
        self.close();
    }

    /// A field holding an object written next: `"k":{`.
    pub(crate) fn open(&mut self, k: &str) {
        self.key(k);
        self.begin();
    }

    /// `{` of an object in value position (after [`ObjectText::open`]'s key, or in an array).
    pub(crate) fn begin(&mut self) {
        self.out.0.push(b'{');
        self.first = true;
    }

    /// `}` of an inner object.
    pub(crate) fn close(&mut self) {
        self.out.0.push(b'}');
        self.first = false;
    }

    /// An array of values in value position (after [`ObjectText::key`]).
    pub(crate) fn array(&mut self, items: &[serde_json::Value]) {
        // A `Value` always serializes (its map keys are strings).
        let _ = serde_json::to_writer(&mut self.out, items);
    }

    /// An array of `n` objects in value position, `item` writing the fields of the i-th.
    pub(crate) fn items(&mut self, n: usize, mut item: impl FnMut(&mut ObjectText, usize)) {
        self.out.0.push(b'[');
        for i in 0..n {
            if i > 0 {
                self.out.0.push(b',');
            }
            self.begin();
            item(self, i);
            self.close();
        }
        self.out.0.push(b']');
    }

    /// The closing `}` and the text.
    pub(crate) fn finish(mut self) -> String {
        self.out.0.push(b'}');
        // Every piece written is UTF-8 (keys and strings from `str`, JSON text).
        String::from_utf8(self.out.0).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_write_what_a_sorted_map_writes() {
        let inner = json!({"b": [1, null], "a\"": "x\ny"});
        let mut f = ObjectText::new(0);
        f.str("a", "é \"q\" \u{1}");
        f.open("b");
        f.value("n", &json!(-12));
        f.close();
        f.map("c", inner.as_object().unwrap()); // ok: test
        f.raw("d", "[true]");
        f.key("e");
        f.begin();
        f.close();
        let want = json!({"a": "é \"q\" \u{1}", "b": {"n": -12}, "c": inner, "d": [true], "e": {}});
        assert_eq!(f.finish(), want.to_string());
        assert_eq!(ObjectText::new(0).finish(), "{}");
    }

    #[test]
    fn writes_what_serde_json_writes() {
        let long = "x".repeat(100);
        let v =
            json!({"a": "short \"q\" \n é", "b": [1, 2.5, null, true], "c": {"d": long}, "": ""});
        let ours = to_string(&v).unwrap(); // ok: test
        assert_eq!(ours, serde_json::to_string(&v).unwrap()); // ok: test
        assert_eq!(ours, v.to_string());
        assert_eq!(v.json_text(), v.to_string());
        let map = v.as_object().unwrap(); // ok: test
        assert_eq!(map.json_text(), v.to_string());
        assert_eq!(to_string("").unwrap(), "\"\""); // ok: test
                                                    // A failure is serde_json's: a map whose keys are not strings.
        let m: std::collections::BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        assert!(to_string(&m).is_err());
        assert!(serde_json::to_string(&m).is_err());
    }
}
