//! Phase-1 activation: a deterministic ranker over catalog metadata.
//!
//! Each skill is a document with five fields — name, trigger phrases, intent patterns,
//! tags, description — tokenized (the word characters and case folding of
//! [`crate::words`], a small English stop list, a light suffix stemmer) into one inverted
//! index whose postings carry their BM25F weights. A query is ranked in two tiers:
//! 1. **exact hits**: the query contains one of a skill's trigger phrases word for word, or
//!    is the skill's name;
//! 2. **BM25F-style scores** after (k1 = 1.2, b = 0.75 per field, field weights name 3,
//!    trigger 2, intent 2, tag 1.5, description 1). The last query word also matches as a
//!    prefix (search as you type).
//!
//! An optional host embedding (one vector per skill, one for the query) is blended in:
//! `score = (1 - w) · bm25 / max bm25 + w · max(cosine, 0)`, so a skill with no word in
//! common can still rank. Same inputs, same ranking: no randomness, ties broken by name.

use crate::fx::{Fx, FxMap};
use crate::words::{fold, is_word_char};
use serde_json::{Map, Value};
use std::hash::Hasher;

/// The metadata fields the ranker reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The skill's name.
    Name,
    /// Trigger phrases.
    Trigger,
    /// Intent patterns.
    Intent,
    /// Tags.
    Tag,
    /// The description.
    Description,
}

const FIELDS: [Field; 5] = [
    Field::Name,
    Field::Trigger,
    Field::Intent,
    Field::Tag,
    Field::Description,
];
const WEIGHTS: [f32; 5] = [3.0, 2.0, 2.0, 1.5, 1.0];
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How many index terms one prefix may expand to.
const MAX_EXPANSIONS: usize = 32;
/// The most recommendations one match returns.
pub const MAX_K: usize = 1000;
/// The weight of a prefix expansion against a whole word.
const PREFIX_WEIGHT: f32 = 0.6;

impl Field {
    /// The wire name (`name`, `trigger_phrases`, `intent_patterns`, `tags`, `description`).
    pub fn name(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Trigger => "trigger_phrases",
            Field::Intent => "intent_patterns",
            Field::Tag => "tags",
            Field::Description => "description",
        }
    }
}

/// One skill as the ranker sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Doc {
    /// Skill id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Intent patterns.
    pub intent_patterns: Vec<String>,
    /// Trigger phrases.
    pub trigger_phrases: Vec<String>,
    /// The scope it comes from (carried into results).
    pub scope: String,
    /// `false` for a disabled skill (`metadata.enabled: false`): indexed, never matched.
    pub enabled: bool,
}

/// What the index keeps of a skill for its results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listed {
    /// Skill id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Scope.
    pub scope: String,
    /// Whether it may be matched.
    pub enabled: bool,
}

/// A skill to index, borrowed: an owned [`Doc`] or a slice of the compact text form.
trait Source {
    /// Id, name and scope.
    fn listed(&self) -> [&str; 3];
    /// Calls `f` with each text of field `field`.
    fn each(&self, field: Field, f: &mut dyn FnMut(&str));
    /// Calls `f` with texts holding the words of field `field`, in order: its texts, or
    /// text that joins them with a character that is not a word character.
    fn words(&self, field: Field, f: &mut dyn FnMut(&str)) {
        self.each(field, f);
    }
    /// Whether it may be matched.
    fn enabled(&self) -> bool;
}

impl Source for Doc {
    fn listed(&self) -> [&str; 3] {
        [&self.id, &self.name, &self.scope]
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
    fn each(&self, field: Field, f: &mut dyn FnMut(&str)) {
        match field {
            Field::Name => f(&self.name),
            Field::Description => f(&self.description),
            Field::Tag => self.tags.iter().for_each(|t| f(t)),
            Field::Intent => self.intent_patterns.iter().for_each(|t| f(t)),
            Field::Trigger => self.trigger_phrases.iter().for_each(|t| f(t)),
        }
    }
}

/// One document of the compact text form the JS glue writes: documents are separated by
/// `\u{1e}`, fields by `\u{1f}` (id, name, description, tags, intent patterns, trigger
/// phrases, scope, and the JSON of `metadata.enabled` or nothing: see
/// [`crate::skill::model::enabled`]), list items by `\u{1d}`.
struct TextDoc<'a>([&'a str; 8]);

impl Source for TextDoc<'_> {
    fn listed(&self) -> [&str; 3] {
        [self.0[0], self.0[1], self.0[6]]
    }
    fn words(&self, field: Field, f: &mut dyn FnMut(&str)) {
        // A list's items are joined by `\u{1d}`, which no word holds: the field is scanned
        // whole rather than split first.
        f(self.0[TextDoc::at(field)]);
    }
    fn enabled(&self) -> bool {
        // Most skills leave `metadata.enabled` out: nothing to parse.
        if self.0[7].is_empty() {
            return crate::skill::model::enabled(None);
        }
        let field = serde_json::from_str::<serde_json::Value>(self.0[7]).ok();
        crate::skill::model::enabled(field.as_ref())
    }
    fn each(&self, field: Field, f: &mut dyn FnMut(&str)) {
        let at = TextDoc::at(field);
        if at <= 2 {
            f(self.0[at]);
        } else {
            self.0[at]
                .split('\u{1d}')
                .filter(|x| !x.is_empty())
                .for_each(f);
        }
    }
}

/// The documents of the compact text form as owned [`Doc`]s, their lists split into items:
/// what the fuzz target compares an index of the text with.
#[doc(hidden)]
pub fn docs_of_text(text: &str) -> Vec<Doc> {
    let items = |d: &TextDoc, field: Field| {
        let mut out = Vec::new();
        d.each(field, &mut |t: &str| out.push(t.to_owned()));
        out
    };
    text_docs(text)
        .iter()
        .map(|d| {
            let [id, name, scope] = d.listed();
            Doc {
                id: id.to_owned(),
                name: name.to_owned(),
                description: d.0[2].to_owned(),
                tags: items(d, Field::Tag),
                intent_patterns: items(d, Field::Intent),
                trigger_phrases: items(d, Field::Trigger),
                scope: scope.to_owned(),
                enabled: d.enabled(),
            }
        })
        .collect()
}

impl TextDoc<'_> {
    /// Where `field` is among the document's fields.
    fn at(field: Field) -> usize {
        match field {
            Field::Name => 1,
            Field::Description => 2,
            Field::Tag => 3,
            Field::Intent => 4,
            Field::Trigger => 5,
        }
    }
}

/// The documents of the compact text form, in one scan for the two separators (a split per
/// separator searched each document twice).
fn text_docs(text: &str) -> Vec<TextDoc<'_>> {
    let mut out = Vec::new();
    let mut parts = [""; 8];
    let mut field = 0;
    let mut from = 0;
    let ends = text.as_bytes().iter().enumerate();
    let ends = ends
        .filter(|(_, &b)| b == 0x1f || b == 0x1e)
        .map(|(i, &b)| (i, b == 0x1e));
    for (i, doc_end) in ends.chain([(text.len(), true)]) {
        // An empty document (nothing between two separators, or after the last) is skipped.
        let empty = field == 0 && from >= i;
        if let (Some(slot), Some(v)) = (parts.get_mut(field), text.get(from..i)) {
            *slot = v;
        }
        field += 1;
        from = i + 1;
        if doc_end {
            if !empty {
                out.push(TextDoc(std::mem::take(&mut parts)));
            }
            field = 0;
        }
    }
    out
}

/// Lower-cased words of `text` (the same words [`each_word`] finds).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    each_word(text, &mut |w| {
        lower_into(w, &mut buf);
        out.push(buf.clone());
    });
    out
}

#[cfg(feature = "composer")]
/// The stemmed words of `text` without stop words: the terms the index ranks by (and the
/// registry's lexical overlap audit compares).
pub(crate) fn terms(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop(w))
        .map(|w| stem(&w))
        .collect()
}

/// A light English suffix stemmer (plurals, `-ing`, `-ed`), in place.
fn stem_in(w: &mut String) {
    let n = w.len();
    if n <= 3 || !w.is_ascii() {
        return;
    }
    if n > 4 && w.ends_with("ies") {
        w.truncate(n - 3);
        w.push('y');
    } else if n > 5 && w.ends_with("ing") {
        w.truncate(n - 3);
    } else if n > 4 && w.ends_with("ed") && !w.ends_with("eed") {
        w.truncate(n - 2);
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        w.truncate(n - 1);
    }
}

/// The stem of one word.
fn stem(w: &str) -> String {
    let mut s = w.to_owned();
    stem_in(&mut s);
    s
}

fn is_stop(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "the"
            | "and"
            | "or"
            | "of"
            | "to"
            | "in"
            | "on"
            | "for"
            | "with"
            | "is"
            | "are"
            | "be"
            | "it"
            | "its"
            | "this"
            | "that"
            | "these"
            | "those"
            | "my"
            | "me"
            | "i"
            | "you"
            | "your"
            | "we"
            | "our"
            | "any"
            | "there"
            | "from"
            | "by"
            | "as"
            | "at"
            | "do"
            | "does"
            | "can"
            | "could"
            | "please"
            | "what"
            | "how"
            | "into"
            | "about"
            | "if"
            | "so"
    )
}

/// Calls `f` with each word of `text` (see [`is_word_char`]).
fn each_word(text: &str, f: &mut dyn FnMut(&str)) {
    each_word_plain(text, &mut |w, _, _| f(w));
}

/// [`each_word`], telling `f` whether the word is plain: only ASCII lower-case letters and
/// digits, so already its own lower case — and, for a plain word of up to eight bytes, its
/// [`packed`] key. ASCII is scanned eight bytes at a time (one load classifies them, and the
/// same load is the key), other characters are decoded only where they occur.
fn each_word_plain(text: &str, f: &mut dyn FnMut(&str, bool, Option<u64>)) {
    let bytes = text.as_bytes();
    // Whether the character at `i` is a word character, and its length in bytes.
    let at = |i: usize| -> (bool, usize) {
        match text.get(i..).and_then(|t| t.chars().next()) {
            Some(c) => (is_word_char(c), c.len_utf8()),
            None => (false, 1),
        }
    };
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let start = i;
        let mut plain = b.is_ascii_lowercase() || b.is_ascii_digit();
        if plain {
            // Plain bytes eight at a time (zero past the end, which ends a word): `i` stops
            // at the first byte that is not plain.
            let first = load8(bytes, start);
            let mut chunk = first;
            loop {
                let n = ((!plain_bytes(chunk) & HIGH).trailing_zeros() / 8) as usize;
                i += n;
                if n < 8 {
                    break;
                }
                chunk = load8(bytes, i);
            }
            let next = bytes.get(i).copied().unwrap_or(b' ');
            if next < 0x80 && !next.is_ascii_alphanumeric() {
                // The key (see `packed`): the first load, cut to the word.
                let len = i - start;
                let key = (len <= 8).then(|| first & (u64::MAX >> (64 - 8 * len)));
                if let Some(w) = text.get(start..i) {
                    f(w, true, key);
                }
                i += 1;
                continue;
            }
            // A capital or a character outside ASCII follows: the word goes on below.
        } else {
            let (word, len) = if b < 0x80 {
                (b.is_ascii_uppercase(), 1)
            } else {
                at(i)
            };
            i += len;
            if !word {
                continue;
            }
        }
        // In a word that began at `start` (plain so far if `plain`).
        while let Some(&b) = bytes.get(i) {
            if b < 0x80 {
                if !b.is_ascii_alphanumeric() {
                    break;
                }
                plain &= !b.is_ascii_uppercase();
                i += 1;
            } else {
                let (word, len) = at(i);
                if !word {
                    break;
                }
                plain = false;
                i += len;
            }
        }
        if let Some(w) = text.get(start..i) {
            f(w, plain, None);
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes at `i`, little-endian; past the end, zero bytes.
fn load8(bytes: &[u8], i: usize) -> u64 {
    match bytes
        .get(i..i + 8)
        .and_then(|c| <[u8; 8]>::try_from(c).ok())
    {
        Some(c) => u64::from_le_bytes(c),
        None => bytes
            .get(i..)
            .unwrap_or(&[])
            .iter()
            .rev()
            .fold(0, |a, &b| (a << 8) | u64::from(b)),
    }
}

/// The high bit of each byte of `w` that is in `lo..=hi` (both below 0x80). Bytes of 0x80
/// and above are not, and may disturb the answer for the bytes after them, never before.
fn bytes_in(w: u64, lo: u8, hi: u8) -> u64 {
    let at_least = w.wrapping_add(ONES * u64::from(0x80 - lo));
    let above = w.wrapping_add(ONES * u64::from(0x7f - hi));
    at_least & !above & !w & HIGH
}

/// The high bit of each plain byte of `w` (ASCII lower case or digit): exact up to the first
/// byte that is not.
fn plain_bytes(w: u64) -> u64 {
    bytes_in(w, b'a', b'z') | bytes_in(w, b'0', b'9')
}

/// `w` in lower case, into `buf`.
fn lower_into(w: &str, buf: &mut String) {
    buf.clear();
    if w.is_ascii() {
        buf.push_str(w);
        buf.make_ascii_lowercase();
    } else {
        buf.extend(w.chars().map(fold));
    }
}

/// Words joined by single spaces (what trigger phrases and names are compared in).
fn normalized(text: &str) -> String {
    let mut s = String::new();
    normalize_into(text, &mut s);
    s
}

/// [`normalized`] into a reused buffer; returns the number of words.
fn normalize_into(text: &str, out: &mut String) -> usize {
    out.clear();
    let mut n = 0;
    each_word(text, &mut |w| {
        if n > 0 {
            out.push(' ');
        }
        if w.is_ascii() {
            let at = out.len();
            out.push_str(w);
            if let Some(tail) = out.get_mut(at..) {
                tail.make_ascii_lowercase();
            }
        } else {
            out.extend(w.chars().map(fold));
        }
        n += 1;
    });
    n
}

/// A word of up to eight bytes as one integer: its bytes little-endian, zero-padded (a word
/// holds no NUL byte, so two words never share one). Looked up by it, a word costs one
/// integer hash and compare instead of hashing and comparing its bytes.
fn packed(w: &[u8]) -> Option<u64> {
    (w.len() <= 8).then(|| load8(w, 0))
}

/// A 64-bit hash of a normalized phrase (exact hits are looked up by it; at catalog sizes a
/// collision is about as likely as a cosmic-ray bit flip).
fn hash(s: &str) -> u64 {
    let mut h = Fx::default();
    h.write(s.as_bytes());
    h.finish() ^ (s.len() as u64).rotate_left(32)
}

/// The docs stored under `key` in a sorted (hash, doc) table.
fn lookup(table: &[(u64, u32)], key: u64) -> impl Iterator<Item = u32> + '_ {
    let from = table.partition_point(|(h, _)| *h < key);
    table[from..]
        .iter()
        .take_while(move |(h, _)| *h == key)
        .map(|(_, d)| *d)
}

/// One document of a term's posting list, with its BM25F weight for that term summed over
/// the fields (everything but the term's idf and the query weight is known at build time).
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    weight: f32,
}

/// Why a skill ranked where it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// The query holds a trigger phrase of the skill, or is its name.
    Exact,
    /// Ranked by score.
    Scored,
}

/// One recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// Index of the document in the catalog.
    pub doc: usize,
    /// Score (BM25F, or the blend with embeddings); higher is better.
    pub score: f64,
    /// The tier.
    pub tier: Tier,
    /// The trigger phrase that hit, for an exact hit by phrase.
    pub trigger: Option<String>,
    /// The fields that matched and the query terms they matched.
    pub matched: Vec<(Field, Vec<String>)>,
    /// Cosine similarity to the query, when embeddings were blended.
    pub similarity: Option<f64>,
}

/// Options of one match.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchOptions {
    /// How many recommendations to return (at most [`MAX_K`]).
    pub k: usize,
    /// Whether the last query word also matches as a prefix.
    pub prefix: bool,
    /// The query's embedding (blended when the catalog has vectors).
    pub query_vector: Option<Vec<f32>>,
    /// The weight of the embedding similarity, 0–1.
    pub blend: f32,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            k: 5,
            prefix: true,
            query_vector: None,
            blend: 0.3,
        }
    }
}

/// The phase-1 index over a catalog.
#[derive(Debug, Clone, Default)]
pub struct SkillIndex {
    docs: Vec<Listed>,
    /// Every string the index looks up — stemmed terms, raw first words of trigger phrases,
    /// normalized names — to one id (one map type keeps the wasm small).
    ids: FxMap<String, u32>,
    /// Stemmed terms in order, for prefix expansion.
    sorted: Vec<(String, u32)>,
    /// By id: postings of the term.
    postings: Vec<Vec<Posting>>,
    idf: Vec<f32>,
    lens: Vec<[u16; 5]>,
    avg: [f32; 5],
    /// (hash of a normalized trigger phrase, doc), sorted.
    triggers: Vec<(u64, u32)>,
    /// The most words in one trigger phrase (the longest query n-gram worth looking up).
    longest_trigger: usize,
    /// (hash of a normalized name, doc), sorted.
    names: Vec<(u64, u32)>,
    vectors: Vec<Option<Vec<f32>>>,
    /// Per document, its (term, field, count) triples: which fields a query term matched
    /// (the counts the build made them from, kept rather than copied out).
    fields: Vec<(u32, u8, u16)>,
    /// Per document, its range in `fields`.
    spans: Vec<(u32, u32)>,
}

impl SkillIndex {
    fn id(&mut self, key: String) -> usize {
        let next = self.postings.len();
        let id = *self.ids.entry(key).or_insert(next as u32) as usize;
        if id == next {
            self.postings.push(Vec::new());
        }
        id
    }

    /// Builds the index from the compact text form (see `TextDoc`) without copying the
    /// texts.
    pub fn from_text(text: &str) -> SkillIndex {
        let docs = text_docs(text);
        let sources: Vec<&dyn Source> = docs.iter().map(|d| d as &dyn Source).collect();
        // About one (term, field) count per eight bytes of a catalog's prose (stop words
        // and repeated words add none): room for them without growing the array word by
        // word, and never more bytes than the text itself.
        SkillIndex::build_from(&sources, text.len() / 8)
    }

    /// Builds the index.
    pub fn build(docs: Vec<Doc>) -> SkillIndex {
        let sources: Vec<&dyn Source> = docs.iter().map(|d| d as &dyn Source).collect();
        SkillIndex::build_from(&sources, 0)
    }

    fn build_from(docs: &[&dyn Source], words: usize) -> SkillIndex {
        let mut ix = SkillIndex::default();
        let mut norm = String::new();
        let mut totals = [0f64; 5];
        // Pass 1: term frequencies per document and field, and field lengths.
        let mut counts: Vec<(u32, u8, u16)> = Vec::with_capacity(words);
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(docs.len());
        let mut buf = String::new();
        // Per term: the last (document, field) stamp that counted it (0: a term of no
        // field yet, so ids that are phrases or names are never terms) and where.
        let mut last: Vec<(u32, u32)> = Vec::new();
        // Lower-cased word → term id (u32::MAX: a stop word); words of up to eight bytes
        // (most of a catalog's) keyed by their bytes as one integer (see `packed`).
        let mut raw: FxMap<String, u32> = FxMap::default();
        let mut short: FxMap<u64, u32> = FxMap::default();
        for (d_index, doc) in docs.iter().enumerate() {
            let start = counts.len();
            let mut lens = [0u16; 5];
            for (fi, f) in FIELDS.iter().enumerate() {
                // This (document, field), to find a term's count of it in O(1).
                let stamp = (d_index * 5 + fi) as u32 + 1;
                doc.words(*f, &mut |text: &str| {
                    each_word_plain(text, &mut |w, plain, fast| {
                        // A word seen before skips the stop list, the stemmer and the
                        // term lookup: the catalog's vocabulary is small beside its words.
                        // Most words are already lower case: looked up as they are,
                        // without a copy.
                        if !plain {
                            lower_into(w, &mut buf);
                        }
                        let key = if plain { w } else { buf.as_str() };
                        let packed = fast.or_else(|| packed(key.as_bytes()));
                        let seen = match packed {
                            Some(k) => short.get(&k),
                            None => raw.get(key),
                        };
                        let id = match seen {
                            Some(&id) => id,
                            None => {
                                if plain {
                                    lower_into(w, &mut buf);
                                }
                                let word = match packed {
                                    Some(_) => None,
                                    None => Some(buf.clone()),
                                };
                                let id = if is_stop(&buf) {
                                    u32::MAX
                                } else {
                                    stem_in(&mut buf);
                                    match ix.ids.get(buf.as_str()) {
                                        Some(id) => *id,
                                        None => ix.id(buf.clone()) as u32,
                                    }
                                };
                                match (packed, word) {
                                    (Some(k), _) => short.insert(k, id),
                                    (None, Some(word)) => raw.insert(word, id),
                                    (None, None) => None,
                                };
                                id
                            }
                        };
                        if id == u32::MAX {
                            return;
                        }
                        let id = id as usize;
                        if last.len() <= id {
                            last.resize(id + 1, (0, 0));
                        }
                        let (seen, at) = last[id];
                        if seen == stamp {
                            if let Some(c) = counts.get_mut(at as usize) {
                                c.2 = c.2.saturating_add(1);
                            }
                        } else {
                            last[id] = (stamp, counts.len() as u32);
                            counts.push((id as u32, fi as u8, 1));
                        }
                        lens[fi] = lens[fi].saturating_add(1);
                    });
                });
                totals[fi] += f64::from(lens[fi]);
            }
            spans.push((start, counts.len()));
            ix.lens.push(lens);
        }
        let n = docs.len().max(1) as f64;
        for (i, t) in totals.iter().enumerate() {
            ix.avg[i] = ((t / n) as f32).max(1.0);
        }
        // Pass 2: one posting per (term, document) with the fields' BM25F weights summed.
        for (d, (start, end)) in spans.iter().enumerate() {
            let lens = ix.lens.get(d).copied().unwrap_or([0; 5]);
            for &(term, fi, tf) in counts.get(*start..*end).unwrap_or(&[]) {
                let fi = fi as usize;
                let tf = f32::from(tf);
                let norm = 1.0 - B + B * f32::from(lens[fi]) / ix.avg[fi];
                let w = WEIGHTS[fi] * tf * (K1 + 1.0) / (tf + K1 * norm);
                let list = &mut ix.postings[term as usize];
                match list.last_mut() {
                    Some(p) if p.doc == d as u32 => p.weight += w,
                    _ => list.push(Posting {
                        doc: d as u32,
                        weight: w,
                    }),
                }
            }
        }
        for (d, doc) in docs.iter().enumerate() {
            let d = d as u32;
            let mut longest = ix.longest_trigger;
            let mut triggers = std::mem::take(&mut ix.triggers);
            doc.each(Field::Trigger, &mut |p: &str| {
                let words = normalize_into(p, &mut norm);
                if words > 0 {
                    longest = longest.max(words);
                    triggers.push((hash(&norm), d));
                }
            });
            ix.triggers = triggers;
            ix.longest_trigger = longest;
            let [id, name, scope] = doc.listed();
            normalize_into(name, &mut norm);
            ix.names.push((hash(&norm), d));
            ix.docs.push(Listed {
                id: id.to_owned(),
                name: name.to_owned(),
                scope: scope.to_owned(),
                enabled: doc.enabled(),
            });
        }
        ix.triggers.sort_unstable();
        ix.names.sort_unstable();
        ix.spans = spans.iter().map(|&(a, b)| (a as u32, b as u32)).collect();
        counts.shrink_to_fit();
        ix.fields = counts;
        let total = docs.len() as f32;
        ix.idf = ix
            .postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                (1.0 + (total - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        ix.sorted = ix
            .ids
            .iter()
            .filter(|(_, id)| last.get(**id as usize).is_some_and(|l| l.0 != 0))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        ix.sorted.sort_unstable();
        ix.vectors = vec![None; docs.len()];
        ix
    }

    /// The indexed skills (id, name, scope), in catalog order.
    pub fn docs(&self) -> &[Listed] {
        &self.docs
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Sets the embeddings: `flat` holds one vector of `dim` numbers per document, in order.
    /// Returns false (and keeps none) when the sizes do not fit.
    pub fn set_vectors(&mut self, flat: &[f32], dim: usize) -> bool {
        if dim == 0 || flat.len() != dim * self.docs.len() {
            return false;
        }
        self.vectors = flat.chunks(dim).map(|c| Some(normalize(c))).collect();
        true
    }

    fn term_ids(&self, query: &str, prefix: bool) -> Vec<(u32, f32, String)> {
        let words = words(query);
        let open_last = prefix && query.chars().next_back().is_some_and(is_word_char);
        let mut out: Vec<(u32, f32, String)> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            let last = i + 1 == words.len();
            let stop = is_stop(w);
            let t = stem(w);
            if !stop {
                if let Some(id) = self.ids.get(&t) {
                    if !out.iter().any(|(x, _, _)| x == id) {
                        out.push((*id, 1.0, t.clone()));
                    }
                }
            }
            if last && open_last && w.chars().count() >= 2 {
                let start = self
                    .sorted
                    .partition_point(|(k, _)| k.as_str() < w.as_str());
                for (k, id) in self
                    .sorted
                    .iter()
                    .skip(start)
                    .take_while(|(k, _)| k.starts_with(w.as_str()))
                    .take(MAX_EXPANSIONS)
                {
                    if !out.iter().any(|(x, _, _)| x == id) {
                        out.push((*id, PREFIX_WEIGHT, k.clone()));
                    }
                }
            }
        }
        out
    }

    /// Ranks the catalog for `query`.
    pub fn rank(&self, query: &str, opts: &MatchOptions) -> Vec<Recommendation> {
        let n = self.docs.len();
        if n == 0 || opts.k == 0 {
            return Vec::new();
        }
        let q_terms = self.term_ids(query, opts.prefix);
        let mut acc = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for (id, w, _) in &q_terms {
            let (Some(list), Some(idf)) =
                (self.postings.get(*id as usize), self.idf.get(*id as usize))
            else {
                continue;
            };
            let scale = idf * w;
            for p in list {
                let s = p.weight * scale;
                if let Some(a) = acc.get_mut(p.doc as usize) {
                    if *a == 0.0 {
                        touched.push(p.doc);
                    }
                    *a += s;
                }
            }
        }
        // Exact hits: trigger phrases contained word for word, or the name itself.
        // Every run of query words up to the longest phrase is looked up whole: the cost
        // depends on the query, not on how many skills share a word.
        let q_norm = normalized(query);
        let q_words: Vec<&str> = q_norm.split(' ').filter(|w| !w.is_empty()).collect();
        let mut exact: Vec<(u32, Option<String>)> = Vec::new();
        let mut gram = String::new();
        for start in 0..q_words.len() {
            gram.clear();
            for w in q_words.iter().skip(start).take(self.longest_trigger) {
                if !gram.is_empty() {
                    gram.push(' ');
                }
                gram.push_str(w);
                for d in lookup(&self.triggers, hash(&gram)) {
                    if !exact.iter().any(|(x, _)| *x == d) {
                        exact.push((d, Some(gram.clone())));
                    }
                }
            }
        }
        for d in lookup(&self.names, hash(&q_norm)) {
            if !exact.iter().any(|(x, _)| *x == d) {
                exact.push((d, None));
            }
        }
        for (d, _) in &exact {
            if acc.get(*d as usize).is_some_and(|a| *a == 0.0) {
                touched.push(*d);
            }
        }
        // Embeddings: every document with a vector is a candidate.
        let qv = opts
            .query_vector
            .as_deref()
            .filter(|_| opts.blend > 0.0 && self.vectors.iter().any(Option::is_some))
            .map(normalize);
        let mut sims: Vec<f32> = Vec::new();
        if let Some(qv) = &qv {
            sims = self
                .vectors
                .iter()
                .map(|v| v.as_deref().map_or(0.0, |v| dot(v, qv)))
                .collect();
            touched = (0..n as u32).collect();
        }
        let max = touched
            .iter()
            .map(|d| acc.get(*d as usize).copied().unwrap_or(0.0))
            .fold(0f32, f32::max);
        let order = |a: &(Tier, f32, u32), b: &(Tier, f32, u32)| {
            a.0.cmp(&b.0)
                .then(b.1.total_cmp(&a.1))
                .then_with(|| self.name_of(a.2).cmp(self.name_of(b.2)))
                .then(a.2.cmp(&b.2))
        };
        // Top k by insertion into a short sorted list (k is small; no full sort of every
        // candidate). A document is touched once per list above; duplicates are skipped.
        let k = opts.k.min(MAX_K);
        let mut top: Vec<(Tier, f32, u32)> = Vec::with_capacity(k.min(n) + 1);
        for &d in &touched {
            // A disabled skill is indexed (its position keeps its vector) but never matched.
            if !self.docs.get(d as usize).is_some_and(|l| l.enabled) {
                continue;
            }
            let lex = acc.get(d as usize).copied().unwrap_or(0.0);
            let score = match &qv {
                Some(_) => {
                    let sim = sims.get(d as usize).copied().unwrap_or(0.0).max(0.0);
                    let l = if max > 0.0 { lex / max } else { 0.0 };
                    (1.0 - opts.blend) * l + opts.blend * sim
                }
                None => lex,
            };
            let tier = if exact.iter().any(|(x, _)| *x == d) {
                Tier::Exact
            } else {
                Tier::Scored
            };
            if tier == Tier::Scored && score <= 0.0 {
                continue;
            }
            let item = (tier, score, d);
            if top.iter().any(|t| t.2 == d) {
                continue;
            }
            if top.len() == k && top.last().is_some_and(|l| order(&item, l).is_ge()) {
                continue;
            }
            let at = top.partition_point(|t| order(t, &item).is_lt());
            top.insert(at, item);
            top.truncate(k);
        }
        top.into_iter()
            .map(|(tier, score, d)| Recommendation {
                doc: d as usize,
                score: round4(f64::from(score)),
                tier,
                trigger: exact
                    .iter()
                    .find(|(x, _)| *x == d)
                    .and_then(|(_, t)| t.clone()),
                matched: self.matched(d as usize, &q_terms),
                similarity: qv
                    .as_ref()
                    .map(|_| round4(f64::from(sims.get(d as usize).copied().unwrap_or(0.0)))),
            })
            .collect()
    }

    fn name_of(&self, d: u32) -> &str {
        self.docs.get(d as usize).map_or("", |x| x.name.as_str())
    }

    /// Which fields of document `d` hold which of the query terms.
    fn matched(&self, d: usize, q: &[(u32, f32, String)]) -> Vec<(Field, Vec<String>)> {
        let Some(&(start, end)) = self.spans.get(d) else {
            return Vec::new();
        };
        let pairs = self.fields.get(start as usize..end as usize).unwrap_or(&[]);
        let mut out = Vec::new();
        for (fi, f) in FIELDS.iter().enumerate() {
            let hit: Vec<String> = q
                .iter()
                .filter(|(id, _, _)| {
                    pairs
                        .iter()
                        .any(|&(t, pf, _)| t == *id && pf as usize == fi)
                })
                .map(|(_, _, t)| t.clone())
                .collect();
            if !hit.is_empty() {
                out.push((*f, hit));
            }
        }
        out
    }

    /// The recommendations as JSON: `[{ id, name, scope, score, tier, matched, trigger?,
    /// similarity? }]`.
    pub fn to_json(&self, recs: &[Recommendation]) -> Value {
        Value::Array(
            recs.iter()
                .map(|r| {
                    let mut o = Map::new();
                    let doc = self.docs.get(r.doc);
                    o.insert("id".into(), doc.map_or("", |d| &d.id).into());
                    o.insert("name".into(), doc.map_or("", |d| &d.name).into());
                    o.insert("scope".into(), doc.map_or("", |d| &d.scope).into());
                    o.insert("score".into(), r.score.into());
                    o.insert(
                        "tier".into(),
                        match r.tier {
                            Tier::Exact => "exact",
                            Tier::Scored => "scored",
                        }
                        .into(),
                    );
                    let mut m = Map::new();
                    for (f, t) in &r.matched {
                        m.insert(
                            f.name().into(),
                            Value::Array(t.iter().cloned().map(Value::String).collect()),
                        );
                    }
                    o.insert("matched".into(), Value::Object(m));
                    if let Some(t) = &r.trigger {
                        o.insert("trigger".into(), t.clone().into());
                    }
                    if let Some(s) = r.similarity {
                        o.insert("similarity".into(), s.into());
                    }
                    Value::Object(o)
                })
                .collect(),
        )
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalize(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 && n.is_finite() {
        v.iter().map(|x| x / n).collect()
    } else {
        vec![0.0; v.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The split-based reader `text_docs` replaced: the reference it must agree with.
    fn text_docs_by_split(text: &str) -> Vec<[&str; 8]> {
        text.split('\u{1e}')
            .filter(|d| !d.is_empty())
            .map(|d| {
                let mut parts = [""; 8];
                for (slot, v) in parts.iter_mut().zip(d.split('\u{1f}')) {
                    *slot = v;
                }
                parts
            })
            .collect()
    }

    /// Words by `char`s and [`is_word_char`]: the reference for `each_word_plain`.
    fn words_by_char(text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut cur = String::new();
        for c in text.chars().chain(['.']) {
            if is_word_char(c) {
                cur.push(c);
            } else if !cur.is_empty() {
                let plain = cur
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
                out.push((std::mem::take(&mut cur), plain));
            }
        }
        out
    }

    /// Deterministic texts mixing separators, cases, digits, and word and non-word
    /// characters outside ASCII.
    fn texts() -> Vec<String> {
        // Bytes at the edges of the word classes ('`' and '{' beside the lower case, '/'
        // and ':' beside the digits, '@' and '[' beside the capitals, DEL, NUL) and runs of
        // plain letters long enough to cross the scanner's eight-byte loads.
        const ALPHABET: [&str; 28] = [
            "a", "Z", "7", " ", "-", "\u{1e}", "\u{1f}", "\u{1d}", "é", "Ж", "—", "、", "ab", "Q",
            "·", "x\u{1e}", "`", "{", "/", ":", "@", "[", "\u{7f}", "\u{0}", "abcdefg", "z09",
            "\u{80}", "ÿ",
        ];
        let mut seed = 0x2545_f491u32;
        (0..400)
            .map(|n| {
                (0..n % 40)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        ALPHABET[(seed >> 16) as usize % ALPHABET.len()]
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_scan_reads_documents_as_the_splits_did() {
        for t in texts() {
            let got: Vec<[&str; 8]> = text_docs(&t).into_iter().map(|d| d.0).collect();
            assert_eq!(got, text_docs_by_split(&t), "{t:?}");
        }
    }

    /// Words of up to eight bytes get one integer each, no two the same; longer ones none.
    #[test]
    fn packed_words_are_distinct() {
        let mut seen = std::collections::HashMap::new();
        let alphabet = ["a", "b", "z", "0", "9", "é", "日"];
        let mut words: Vec<String> = alphabet.iter().map(|s| s.to_string()).collect();
        for _ in 0..4 {
            let longer: Vec<String> = words
                .iter()
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .filter(|w| w.len() <= 9)
                .collect();
            words.extend(longer);
        }
        // Words of 7 to 18 bytes that differ in one byte, on either side of eight bytes.
        for len in 7..=18 {
            for at in 0..len {
                for c in ["a", "b", "é"] {
                    words.push(format!("{}{c}{}", "x".repeat(at), "x".repeat(len - at - 1)));
                }
            }
        }
        words.sort();
        words.dedup();
        for w in &words {
            match packed(w.as_bytes()) {
                Some(k) => {
                    assert!(w.len() <= 8, "{w}");
                    if let Some(other) = seen.insert(k, w.clone()) {
                        panic!("{w:?} and {other:?} share {k:#x}");
                    }
                }
                None => assert!(w.len() > 8, "{w}"),
            }
        }
        // Words that differ only in their last byte, or by one more byte, rank apart.
        let text = "1\u{1f}abcdefgh\u{1f}\u{1f}\u{1f}\u{1f}\u{1f}x\u{1f}\u{1e}\
                    2\u{1f}abcdefgi\u{1f}\u{1f}\u{1f}\u{1f}\u{1f}x\u{1f}\u{1e}\
                    3\u{1f}abcdefghi\u{1f}\u{1f}\u{1f}\u{1f}\u{1f}x\u{1f}\u{1e}\
                    4\u{1f}abcdefghijklmnop\u{1f}\u{1f}\u{1f}\u{1f}\u{1f}x\u{1f}\u{1e}\
                    5\u{1f}abcdefghijklmnoq\u{1f}\u{1f}\u{1f}\u{1f}\u{1f}x\u{1f}\u{1e}\
                    6\u{1f}abcdefghijklmnopq\u{1f}\u{1f}\u{1f}\u{1f}\u{1f}x\u{1f}\u{1e}";
        let ix = SkillIndex::from_text(text);
        let opts = MatchOptions {
            prefix: false,
            ..MatchOptions::default()
        };
        let queries = [
            ("abcdefgh", 0),
            ("abcdefgi", 1),
            ("abcdefghi", 2),
            ("abcdefghijklmnop", 3),
            ("abcdefghijklmnoq", 4),
            ("abcdefghijklmnopq", 5),
        ];
        for (q, doc) in queries {
            let r = ix.rank(q, &opts);
            assert_eq!(r.iter().map(|r| r.doc).collect::<Vec<_>>(), [doc], "{q}");
        }
    }

    /// The index built from the compact text form (fields scanned whole, short words keyed
    /// as integers) ranks as the one built from owned documents (items one by one), over
    /// words short and long, cased, stop words, stems and characters outside ASCII.
    #[test]
    fn the_text_form_indexes_as_owned_documents_do() {
        const WORDS: [&str; 24] = [
            "the",
            "Check",
            "checks",
            "timeline",
            "timelines",
            "contradictions",
            "a",
            "Übersicht",
            "review",
            "reviewing",
            "pull",
            "requests",
            "eight888",
            "nine99999",
            "ÉTÉ",
            "日本",
            "budgets",
            "please",
            "my",
            "audit",
            "x",
            "Stale",
            "stale",
            "report",
        ];
        let mut seed = 0x9e37_79b9u32;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as usize % n
        };
        let phrase = |len: usize, next: &mut dyn FnMut(usize) -> usize| {
            (0..1 + next(len))
                .map(|_| WORDS[next(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let docs: Vec<Doc> = (0..300)
            .map(|i| Doc {
                id: format!("s{i}"),
                name: phrase(4, &mut next),
                description: phrase(20, &mut next),
                tags: (0..next(4)).map(|_| phrase(2, &mut next)).collect(),
                intent_patterns: (0..next(3)).map(|_| phrase(3, &mut next)).collect(),
                trigger_phrases: (0..next(3)).map(|_| phrase(4, &mut next)).collect(),
                scope: "account".into(),
                enabled: true,
            })
            .collect();
        let mut text = String::new();
        for d in &docs {
            let fields = [
                d.id.clone(),
                d.name.clone(),
                d.description.clone(),
                d.tags.join("\u{1d}"),
                d.intent_patterns.join("\u{1d}"),
                d.trigger_phrases.join("\u{1d}"),
                d.scope.clone(),
                String::new(),
            ];
            text.push_str(&fields.join("\u{1f}"));
            text.push('\u{1e}');
        }
        let queries: Vec<String> = (0..200).map(|_| phrase(5, &mut next)).collect();
        let from_text = SkillIndex::from_text(&text);
        let owned = SkillIndex::build(docs);
        for prefix in [true, false] {
            let opts = MatchOptions {
                k: 10,
                prefix,
                ..MatchOptions::default()
            };
            for q in &queries {
                let (a, b) = (from_text.rank(q, &opts), owned.rank(q, &opts));
                assert_eq!(from_text.to_json(&a), owned.to_json(&b), "{q:?}");
            }
        }
    }

    #[test]
    fn words_and_their_plainness_are_found_as_by_chars() {
        let mut keyed = 0;
        for t in texts() {
            let mut got = Vec::new();
            each_word_plain(&t, &mut |w, plain, key| {
                // The key the scan hands out is the word's own, and only a plain word's.
                if key.is_some() {
                    assert!(plain, "{w:?} in {t:?}");
                    assert_eq!(key, packed(w.as_bytes()), "{w:?} in {t:?}");
                    keyed += 1;
                }
                got.push((w.to_owned(), plain));
            });
            assert_eq!(got, words_by_char(&t), "{t:?}");
        }
        assert!(keyed > 100, "the eight-byte scan found {keyed} words");
    }
}
