//! Phase-1 activation: a deterministic ranker over catalog metadata.
//!
//! Each skill is a document with five fields — name, trigger phrases, intent patterns,
//! tags, description — tokenized (lower case, Unicode letters and digits, a small English
//! stop list, a light suffix stemmer) into one inverted index. A query is ranked in two
//! tiers:
//! 1. **exact hits**: the query contains one of a skill's trigger phrases word for word, or
//!    is the skill's name;
//! 2. **BM25F-style scores** after (k1 = 1.2, b = 0.75 per field, field weights name 3,
//!    trigger 2, intent 2, tag 1.5, description 1). The last query word also matches as a
//!    prefix (search as you type).
//!
//! An optional host embedding (one vector per skill, one for the query) is blended in:
//! `score = (1 - w) · bm25 / max bm25 + w · max(cosine, 0)`, so a skill with no word in
//! common can still rank. Same inputs, same ranking: no randomness, ties broken by name.

use crate::words::{fold, is_word_char};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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
}

impl Doc {
    fn field_texts(&self, f: Field) -> Vec<&str> {
        match f {
            Field::Name => vec![self.name.as_str()],
            Field::Description => vec![self.description.as_str()],
            Field::Tag => self.tags.iter().map(String::as_str).collect(),
            Field::Intent => self.intent_patterns.iter().map(String::as_str).collect(),
            Field::Trigger => self.trigger_phrases.iter().map(String::as_str).collect(),
        }
    }
}

/// Reads documents from the compact text form the JS glue writes: documents separated by
/// `\u{1e}`, fields by `\u{1f}` (id, name, description, tags, intent patterns, trigger
/// phrases, scope), list items by `\u{1d}`.
pub fn parse_docs(text: &str) -> Vec<Doc> {
    let list = |s: &str| -> Vec<String> {
        s.split('\u{1d}')
            .filter(|x| !x.is_empty())
            .map(str::to_owned)
            .collect()
    };
    text.split('\u{1e}')
        .filter(|d| !d.is_empty())
        .map(|d| {
            let mut f = d.split('\u{1f}');
            let mut next = || f.next().unwrap_or("");
            Doc {
                id: next().to_owned(),
                name: next().to_owned(),
                description: next().to_owned(),
                tags: list(next()),
                intent_patterns: list(next()),
                trigger_phrases: list(next()),
                scope: next().to_owned(),
            }
        })
        .collect()
}

/// FxHash: a fast, deterministic hasher for short keys (no DoS concern: the keys are the
/// host's own catalog words).
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

const STOP: [&str; 44] = [
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "is", "are", "be", "it",
    "its", "this", "that", "these", "those", "my", "me", "i", "you", "your", "we", "our", "any",
    "there", "from", "by", "as", "at", "do", "does", "can", "could", "please", "what", "how",
    "into", "about", "if", "so",
];

/// Lower-cased words of `text` (see [`is_word_char`]; everything else separates).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().map(fold).collect())
}

/// A light English suffix stemmer: plurals, `-ing`, `-ed`.
fn stem(w: &str) -> String {
    let n = w.len();
    let cut = |k: usize| w.get(..n - k).unwrap_or(w).to_owned();
    if !w.is_ascii() {
        return w.to_owned();
    }
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", cut(3));
    }
    if n > 5 && w.ends_with("ing") {
        return cut(3);
    }
    if n > 4 && w.ends_with("ed") && !w.ends_with("eed") {
        return cut(2);
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        return cut(1);
    }
    w.to_owned()
}

/// Index terms of `text`.
fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
}

/// Words joined by single spaces (what trigger phrases and names are compared in).
fn normalized(text: &str) -> String {
    words(text).collect::<Vec<_>>().join(" ")
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    field: u8,
    tf: u16,
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
    docs: Vec<Doc>,
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
    /// By id of a trigger phrase's first word: (doc, normalized phrase).
    triggers: Vec<Vec<(u32, String)>>,
    /// By id of a normalized name: the docs of that name.
    names: Vec<Vec<u32>>,
    vectors: Vec<Option<Vec<f32>>>,
}

impl SkillIndex {
    fn id(&mut self, key: String) -> usize {
        let next = self.postings.len();
        let id = *self.ids.entry(key).or_insert(next as u32) as usize;
        if id == next {
            self.postings.push(Vec::new());
            self.triggers.push(Vec::new());
            self.names.push(Vec::new());
        }
        id
    }

    /// Builds the index.
    pub fn build(docs: Vec<Doc>) -> SkillIndex {
        let mut ix = SkillIndex::default();
        let mut totals = [0f64; 5];
        let mut is_term: Vec<bool> = Vec::new();
        for (d, doc) in docs.iter().enumerate() {
            let d = u32::try_from(d).unwrap_or(u32::MAX);
            let mut lens = [0u16; 5];
            for (fi, f) in FIELDS.iter().enumerate() {
                for text in doc.field_texts(*f) {
                    for t in terms(text) {
                        let id = ix.id(t);
                        if is_term.len() <= id {
                            is_term.resize(id + 1, false);
                        }
                        is_term[id] = true;
                        // A field's words come together, so a repeat hits the last posting.
                        let list = &mut ix.postings[id];
                        match list.last_mut() {
                            Some(p) if p.doc == d && p.field == fi as u8 => {
                                p.tf = p.tf.saturating_add(1)
                            }
                            _ => list.push(Posting {
                                doc: d,
                                field: fi as u8,
                                tf: 1,
                            }),
                        }
                        lens[fi] = lens[fi].saturating_add(1);
                    }
                }
                totals[fi] += f64::from(lens[fi]);
            }
            ix.lens.push(lens);
            for p in &doc.trigger_phrases {
                let n = normalized(p);
                if let Some(first) = n.split(' ').next().filter(|f| !f.is_empty()) {
                    let id = ix.id(first.to_owned());
                    ix.triggers[id].push((d, n.clone()));
                }
            }
            let id = ix.id(normalized(&doc.name));
            ix.names[id].push(d);
        }
        let n = docs.len().max(1) as f64;
        for (i, t) in totals.iter().enumerate() {
            ix.avg[i] = ((t / n) as f32).max(1.0);
        }
        let total = docs.len() as f32;
        ix.idf = ix
            .postings
            .iter()
            .map(|p| {
                let mut df = 0u32;
                let mut last = u32::MAX;
                for x in p {
                    if x.doc != last {
                        df += 1;
                        last = x.doc;
                    }
                }
                let df = df as f32;
                (1.0 + (total - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        ix.sorted = ix
            .ids
            .iter()
            .filter(|(_, id)| is_term.get(**id as usize).copied().unwrap_or(false))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        ix.sorted.sort_unstable();
        ix.vectors = vec![None; docs.len()];
        ix.docs = docs;
        ix
    }

    /// The documents.
    pub fn docs(&self) -> &[Doc] {
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
        let words: Vec<String> = words(query).collect();
        let open_last = prefix && query.chars().next_back().is_some_and(is_word_char);
        let mut out: Vec<(u32, f32, String)> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            let last = i + 1 == words.len();
            let stop = STOP.contains(&w.as_str());
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
            for p in list {
                let fi = p.field as usize;
                let len = self
                    .lens
                    .get(p.doc as usize)
                    .map_or(1.0, |l| f32::from(l[fi]));
                let tf = f32::from(p.tf);
                let norm = 1.0 - B + B * len / self.avg[fi];
                let s = WEIGHTS[fi] * idf * tf * (K1 + 1.0) / (tf + K1 * norm) * w;
                if let Some(a) = acc.get_mut(p.doc as usize) {
                    if *a == 0.0 {
                        touched.push(p.doc);
                    }
                    *a += s;
                }
            }
        }
        // Exact hits: trigger phrases contained word for word, or the name itself.
        let q_norm = normalized(query);
        let padded = format!(" {q_norm} ");
        let mut exact: Vec<(u32, Option<String>)> = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for w in q_norm.split(' ') {
            if seen.contains(&w) {
                continue;
            }
            seen.push(w);
            let Some(list) = self
                .ids
                .get(w)
                .and_then(|id| self.triggers.get(*id as usize))
            else {
                continue;
            };
            for (d, phrase) in list {
                if !exact.iter().any(|(x, _)| x == d) && padded.contains(&format!(" {phrase} ")) {
                    exact.push((*d, Some(phrase.clone())));
                }
            }
        }
        if let Some(list) = self
            .ids
            .get(&q_norm)
            .and_then(|id| self.names.get(*id as usize))
        {
            for d in list {
                if !exact.iter().any(|(x, _)| x == d) {
                    exact.push((*d, None));
                }
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
        let Some(doc) = self.docs.get(d) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for f in FIELDS {
            let present: Vec<String> = doc.field_texts(f).into_iter().flat_map(terms).collect();
            let mut hit: Vec<String> = q
                .iter()
                .filter(|(_, _, t)| present.contains(t))
                .map(|(_, _, t)| t.clone())
                .collect();
            hit.dedup();
            if !hit.is_empty() {
                out.push((f, hit));
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
