//! A JSON Schema validator of instances (draft 2020-12, with the draft-7 / draft-4 forms
//! still common in tool and skill schemas): the composer's parameter check, structural
//! assertions and output-schema checks.
//!
//! Keywords validated: `type`, `enum`, `const`; `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum` (number and draft-4 boolean forms), `multipleOf`; `minLength`,
//! `maxLength` (code points), `pattern`; `items`, `prefixItems`, `additionalItems`,
//! `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`;
//! `properties`, `required`, `additionalProperties`, `patternProperties`, `propertyNames`,
//! `minProperties`, `maxProperties`, `dependentRequired`, `dependentSchemas`,
//! `dependencies`; `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`; `$ref` to a JSON
//! pointer in the same document (`#`, `#/$defs/…`, `#/definitions/…`); boolean schemas.
//! `format` is asserted for `date-time`, `date`, `email`, `uri` and `uuid` (see [`mod@format`]);
//! other formats and unknown keywords are annotations (as 2020-12 specifies by default).
//! A `$ref` outside the document, `unevaluatedProperties` and `unevaluatedItems` are
//! reported as unsupported rather than silently passed.
//!
//! Patterns are compiled with `regex-lite` (Rust regex syntax without Unicode classes,
//! which covers the ECMA-262 subset schemas use in practice).

use crate::json_text::JsonText;
use serde_json::{Map, Value};

mod compiled;
pub mod format;
pub use compiled::Compiled;

/// How many violations one validation reports at most.
pub const MAX_VIOLATIONS: usize = 32;
/// How deep `$ref`s and nested schemas may go before validation stops with a violation.
const MAX_DEPTH: usize = 64;

/// One way the instance does not match the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the instance (`""` is the whole instance).
    pub instance_path: String,
    /// JSON pointer of the failing keyword in the schema.
    pub schema_path: String,
    /// What is wrong, in words.
    pub message: String,
}

impl Violation {
    /// The JSON form `{ instance_path, schema_path, message }`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("instance_path".into(), self.instance_path.clone().into());
        o.insert("schema_path".into(), self.schema_path.clone().into());
        o.insert("message".into(), self.message.clone().into());
        Value::Object(o)
    }
}

/// Validates `instance` against `schema`; `Ok` when it matches, else the violations (at most
/// [`MAX_VIOLATIONS`]).
pub fn validate(schema: &Value, instance: &Value) -> Result<(), Vec<Violation>> {
    // Most instances match: the quick pass writes no paths and stops at the first miss;
    // only a failing instance is walked again to say where and why.
    if is_valid(schema, instance) {
        return Ok(());
    }
    let mut v = Validator {
        root: schema,
        out: Vec::new(),
        quick: false,
    };
    let (mut ipath, mut spath) = (String::with_capacity(64), String::with_capacity(64));
    v.check(schema, instance, &mut ipath, &mut spath, 0);
    if v.out.is_empty() {
        Ok(())
    } else {
        Err(v.out)
    }
}

/// [`validate`] with the schema's digested form, when it has one (the answer is the same;
/// a matching instance is only checked faster).
pub fn validate_with(
    schema: &Value,
    compiled: Option<&Compiled>,
    instance: &Value,
) -> Result<(), Vec<Violation>> {
    match compiled {
        Some(c) if c.is_valid(instance) => Ok(()),
        _ => validate(schema, instance),
    }
}

/// Whether `instance` matches `schema`.
pub fn is_valid(schema: &Value, instance: &Value) -> bool {
    let mut v = Validator {
        root: schema,
        out: Vec::new(),
        quick: true,
    };
    v.check(schema, instance, &mut String::new(), &mut String::new(), 0)
}

/// The JSON type name of a value (`integer` for whole numbers).
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn type_matches(name: &str, v: &Value) -> bool {
    match name {
        "number" => v.is_number(),
        "integer" => matches!(v, Value::Number(n) if is_integer(n)),
        t => type_of(v) == t,
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

/// Whether two items of an array are equal (`uniqueItems`).
fn has_duplicates(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(i, a)| items.iter().skip(i + 1).any(|b| json_eq(a, b)))
}

/// Escapes one JSON pointer segment.
fn escape(seg: &str) -> std::borrow::Cow<'_, str> {
    if seg.contains(['~', '/']) {
        seg.replace('~', "~0").replace('/', "~1").into()
    } else {
        seg.into()
    }
}

fn short(v: &Value) -> String {
    let s = v.json_text();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}…")
    } else {
        s
    }
}

thread_local! {
    /// Compiled patterns, by source (a schema's few patterns are compiled once per
    /// instance, not on every validation; at most 64 kept).
    static PATTERNS: std::cell::RefCell<Vec<(String, regex_lite::Regex)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with the compiled `pattern` (compiled once and kept; not cloned, so its match
/// cache is reused), or says why it does not compile.
/// Whether `s` matches pattern `p` (compiled once, kept in the cache of [`with_regex`]), or
/// why `p` does not compile: the one instance of it every pattern check shares (`pattern`,
/// `patternProperties`, `format`, the registry's fields).
#[inline(never)]
pub(crate) fn regex_is_match(p: &str, s: &str) -> Result<bool, String> {
    with_regex(p, |re| re.is_match(s))
}

pub(crate) fn with_regex<R>(p: &str, f: impl FnOnce(&regex_lite::Regex) -> R) -> Result<R, String> {
    PATTERNS.with(|c| {
        if let Some((_, r)) = c.borrow().iter().find(|(s, _)| s == p) {
            return Ok(f(r));
        }
        let r = regex_lite::Regex::new(p).map_err(|e| e.to_string())?;
        let out = f(&r);
        let mut c = c.borrow_mut();
        if c.len() >= 64 {
            c.remove(0);
        }
        c.push((p.to_owned(), r));
        Ok(out)
    })
}

/// The keywords of one schema object, found in one pass over its keys (a schema has a
/// few keys; looking each of the ~40 keywords up in its map cost more than the checks).
#[derive(Default)]
struct Keywords<'a> {
    ref_: Option<&'a Value>,
    additional_items: Option<&'a Value>,
    additional_properties: Option<&'a Value>,
    all_of: Option<&'a Value>,
    any_of: Option<&'a Value>,
    const_: Option<&'a Value>,
    contains: Option<&'a Value>,
    dependencies: Option<&'a Value>,
    dependent_required: Option<&'a Value>,
    dependent_schemas: Option<&'a Value>,
    else_: Option<&'a Value>,
    enum_: Option<&'a Value>,
    exclusive_maximum: Option<&'a Value>,
    exclusive_minimum: Option<&'a Value>,
    format: Option<&'a Value>,
    if_: Option<&'a Value>,
    items: Option<&'a Value>,
    max_contains: Option<&'a Value>,
    max_items: Option<&'a Value>,
    max_length: Option<&'a Value>,
    max_properties: Option<&'a Value>,
    maximum: Option<&'a Value>,
    min_contains: Option<&'a Value>,
    min_items: Option<&'a Value>,
    min_length: Option<&'a Value>,
    min_properties: Option<&'a Value>,
    minimum: Option<&'a Value>,
    multiple_of: Option<&'a Value>,
    not: Option<&'a Value>,
    one_of: Option<&'a Value>,
    pattern: Option<&'a Value>,
    pattern_properties: Option<&'a Value>,
    prefix_items: Option<&'a Value>,
    properties: Option<&'a Value>,
    property_names: Option<&'a Value>,
    required: Option<&'a Value>,
    then: Option<&'a Value>,
    type_: Option<&'a Value>,
    unevaluated_items: Option<&'a Value>,
    unevaluated_properties: Option<&'a Value>,
    unique_items: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn of(s: &'a Map<String, Value>) -> Self {
        let mut kw = Keywords::default();
        for (k, v) in s {
            match k.as_str() {
                "$ref" => kw.ref_ = Some(v),
                "additionalItems" => kw.additional_items = Some(v),
                "additionalProperties" => kw.additional_properties = Some(v),
                "allOf" => kw.all_of = Some(v),
                "anyOf" => kw.any_of = Some(v),
                "const" => kw.const_ = Some(v),
                "contains" => kw.contains = Some(v),
                "dependencies" => kw.dependencies = Some(v),
                "dependentRequired" => kw.dependent_required = Some(v),
                "dependentSchemas" => kw.dependent_schemas = Some(v),
                "else" => kw.else_ = Some(v),
                "enum" => kw.enum_ = Some(v),
                "exclusiveMaximum" => kw.exclusive_maximum = Some(v),
                "exclusiveMinimum" => kw.exclusive_minimum = Some(v),
                "format" => kw.format = Some(v),
                "if" => kw.if_ = Some(v),
                "items" => kw.items = Some(v),
                "maxContains" => kw.max_contains = Some(v),
                "maxItems" => kw.max_items = Some(v),
                "maxLength" => kw.max_length = Some(v),
                "maxProperties" => kw.max_properties = Some(v),
                "maximum" => kw.maximum = Some(v),
                "minContains" => kw.min_contains = Some(v),
                "minItems" => kw.min_items = Some(v),
                "minLength" => kw.min_length = Some(v),
                "minProperties" => kw.min_properties = Some(v),
                "minimum" => kw.minimum = Some(v),
                "multipleOf" => kw.multiple_of = Some(v),
                "not" => kw.not = Some(v),
                "oneOf" => kw.one_of = Some(v),
                "pattern" => kw.pattern = Some(v),
                "patternProperties" => kw.pattern_properties = Some(v),
                "prefixItems" => kw.prefix_items = Some(v),
                "properties" => kw.properties = Some(v),
                "propertyNames" => kw.property_names = Some(v),
                "required" => kw.required = Some(v),
                "then" => kw.then = Some(v),
                "type" => kw.type_ = Some(v),
                "unevaluatedItems" => kw.unevaluated_items = Some(v),
                "unevaluatedProperties" => kw.unevaluated_properties = Some(v),
                "uniqueItems" => kw.unique_items = Some(v),
                _ => {}
            }
        }
        kw
    }
}

struct Validator<'a> {
    root: &'a Value,
    out: Vec<Violation>,
    quick: bool,
}

impl<'a> Validator<'a> {
    fn fail(&mut self, ipath: &str, spath: &str, message: String) {
        if !self.quick && self.out.len() < MAX_VIOLATIONS {
            self.out.push(Violation {
                instance_path: ipath.to_owned(),
                schema_path: spath.to_owned(),
                message,
            });
        }
    }

    /// Whether `inst` matches `schema` without recording anything.
    fn probe(&self, schema: &'a Value, inst: &Value, depth: usize) -> bool {
        let mut v = Validator {
            root: self.root,
            out: Vec::new(),
            quick: true,
        };
        v.check(schema, inst, &mut String::new(), &mut String::new(), depth)
    }

    /// Checks a sub-schema with `seg` appended to the schema path (and `iseg` to the
    /// instance path when it is `Some`).
    fn sub(
        &mut self,
        schema: &'a Value,
        inst: &Value,
        (ipath, spath): (&mut String, &mut String),
        iseg: Option<&str>,
        seg: &str,
        depth: usize,
    ) -> bool {
        self.sub_at(schema, inst, (ipath, spath), iseg, (seg, ""), depth)
    }

    /// [`Self::sub`] with the schema path segment in two parts (a keyword and a name), so
    /// no segment is formatted on the way.
    fn sub_at(
        &mut self,
        schema: &'a Value,
        inst: &Value,
        (ipath, spath): (&mut String, &mut String),
        iseg: Option<&str>,
        (seg, name): (&str, &str),
        depth: usize,
    ) -> bool {
        if self.quick {
            // No violation is written in a quick pass: the paths are not needed.
            return self.check(schema, inst, ipath, spath, depth + 1);
        }
        let (il, sl) = (ipath.len(), spath.len());
        if let Some(s) = iseg {
            ipath.push('/');
            ipath.push_str(&escape(s));
        }
        spath.push('/');
        spath.push_str(seg);
        spath.push_str(name);
        let ok = self.check(schema, inst, ipath, spath, depth + 1);
        ipath.truncate(il);
        spath.truncate(sl);
        ok
    }

    fn resolve(&self, r: &str) -> Option<&'a Value> {
        let frag = r.strip_prefix('#')?;
        if frag.is_empty() {
            return Some(self.root);
        }
        let mut cur = self.root;
        for raw in frag.strip_prefix('/')?.split('/') {
            let seg = percent_decode(raw).replace("~1", "/").replace("~0", "~");
            cur = match cur {
                Value::Object(o) => o.get(&seg)?,
                Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    fn check(
        &mut self,
        schema: &'a Value,
        inst: &Value,
        ipath: &mut String,
        spath: &mut String,
        depth: usize,
    ) -> bool {
        let s = match schema {
            Value::Bool(true) => return true,
            Value::Bool(false) => {
                self.fail(ipath, spath, "no value is allowed here".into());
                return false;
            }
            Value::Object(s) => s,
            _ => return true,
        };
        if depth > MAX_DEPTH {
            self.fail(
                ipath,
                spath,
                format!("the schema nests or refers deeper than {MAX_DEPTH} levels"),
            );
            return false;
        }
        let kw = Keywords::of(s);
        let mut ok = true;
        macro_rules! bad {
            ($kw:expr, $($msg:tt)*) => {{
                ok = false;
                if self.quick { return false; }
                let p = format!("{spath}/{}", $kw);
                self.fail(ipath, &p, format!($($msg)*));
            }};
        }
        if let Some(r) = kw.ref_.and_then(Value::as_str) {
            match self.resolve(r) {
                Some(target) => {
                    if !self.sub(target, inst, (ipath, spath), None, "$ref", depth) {
                        ok = false;
                        if self.quick {
                            return false;
                        }
                    }
                }
                None => bad!("$ref", "`$ref` {r} does not point into this schema (only `#…` JSON pointers are followed)"),
            }
        }
        for (name, present) in [
            ("unevaluatedProperties", kw.unevaluated_properties.is_some()),
            ("unevaluatedItems", kw.unevaluated_items.is_some()),
        ] {
            if present {
                bad!(name, "`{name}` is not supported by this validator");
            }
        }
        if let Some(t) = kw.type_ {
            let matches = match t {
                Value::String(t) => type_matches(t, inst),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|t| type_matches(t, inst)),
                _ => true,
            };
            if !matches {
                let want = match t {
                    Value::Array(ts) => ts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" or "),
                    other => other.as_str().unwrap_or("").to_owned(),
                };
                bad!("type", "expected {want}, got {}", type_of(inst));
            }
        }
        if let Some(Value::Array(e)) = kw.enum_ {
            if !e.iter().any(|x| json_eq(x, inst)) {
                let list: Vec<String> = e.iter().take(8).map(short).collect();
                bad!("enum", "{} is not one of {}", short(inst), list.join(", "));
            }
        }
        if let Some(c) = kw.const_ {
            if !json_eq(c, inst) {
                bad!("const", "expected {}, got {}", short(c), short(inst));
            }
        }
        match inst {
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                let num = |v: Option<&Value>| v.and_then(Value::as_f64);
                let draft4 = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
                if let Some(m) = num(kw.minimum) {
                    if x < m || (draft4(kw.exclusive_minimum) && x <= m) {
                        bad!("minimum", "{x} is below the minimum {m}");
                    }
                }
                if let Some(m) = num(kw.maximum) {
                    if x > m || (draft4(kw.exclusive_maximum) && x >= m) {
                        bad!("maximum", "{x} is above the maximum {m}");
                    }
                }
                if let Some(m) = num(kw.exclusive_minimum) {
                    if x <= m {
                        bad!("exclusiveMinimum", "{x} must be greater than {m}");
                    }
                }
                if let Some(m) = num(kw.exclusive_maximum) {
                    if x >= m {
                        bad!("exclusiveMaximum", "{x} must be less than {m}");
                    }
                }
                if let Some(m) = kw.multiple_of.and_then(Value::as_f64) {
                    if m > 0.0 && !multiple_of(n, kw.multiple_of, x, m) {
                        bad!("multipleOf", "{x} is not a multiple of {m}");
                    }
                }
            }
            Value::String(text) => {
                let count = || text.chars().count();
                if let Some(m) = kw.min_length.and_then(Value::as_u64) {
                    if (count() as u64) < m {
                        bad!("minLength", "the string is shorter than {m} characters");
                    }
                }
                if let Some(m) = kw.max_length.and_then(Value::as_u64) {
                    if (count() as u64) > m {
                        bad!("maxLength", "the string is longer than {m} characters");
                    }
                }
                if let Some(p) = kw.pattern.and_then(Value::as_str) {
                    match regex_is_match(p, text) {
                        Ok(true) => {}
                        Ok(_) => bad!("pattern", "the string does not match the pattern {p}"),
                        Err(e) => bad!("pattern", "the pattern {p} does not compile: {e}"),
                    }
                }
                if let Some(f) = kw.format.and_then(Value::as_str) {
                    if format::check(f, text) == Some(false) {
                        bad!("format", "the string is not a valid {f}");
                    }
                }
            }
            Value::Array(items) => {
                ok &= self.check_array(&kw, items, ipath, spath, depth);
                if !ok && self.quick {
                    return false;
                }
            }
            Value::Object(o) => {
                ok &= self.check_object(&kw, o, ipath, spath, depth);
                if !ok && self.quick {
                    return false;
                }
            }
            _ => {}
        }
        if let Some(Value::Array(all)) = kw.all_of {
            for (i, sub) in all.iter().enumerate() {
                if !self.sub(
                    sub,
                    inst,
                    (ipath, spath),
                    None,
                    &format!("allOf/{i}"),
                    depth,
                ) {
                    ok = false;
                    if self.quick {
                        return false;
                    }
                }
            }
        }
        if let Some(Value::Array(any)) = kw.any_of {
            if !any.iter().any(|sub| self.probe(sub, inst, depth + 1)) {
                bad!(
                    "anyOf",
                    "the value matches none of the {} alternatives",
                    any.len()
                );
            }
        }
        if let Some(Value::Array(one)) = kw.one_of {
            let n = one
                .iter()
                .filter(|sub| self.probe(sub, inst, depth + 1))
                .count();
            if n != 1 {
                bad!(
                    "oneOf",
                    "the value matches {n} of the alternatives; exactly one must match"
                );
            }
        }
        if let Some(not) = kw.not {
            if self.probe(not, inst, depth + 1) {
                bad!("not", "the value matches a schema it must not match");
            }
        }
        if let Some(cond) = kw.if_ {
            let (branch, name) = if self.probe(cond, inst, depth + 1) {
                (kw.then, "then")
            } else {
                (kw.else_, "else")
            };
            if let Some(b) = branch {
                if !self.sub(b, inst, (ipath, spath), None, name, depth) {
                    ok = false;
                }
            }
        }
        ok
    }

    fn check_array(
        &mut self,
        kw: &Keywords<'a>,
        items: &[Value],
        ipath: &mut String,
        spath: &mut String,
        depth: usize,
    ) -> bool {
        let mut ok = true;
        let n = items.len() as u64;
        if let Some(m) = kw.min_items.and_then(Value::as_u64) {
            if n < m {
                ok = false;
                self.fail(
                    ipath,
                    &format!("{spath}/minItems"),
                    format!("the array has fewer than {m} items"),
                );
            }
        }
        if let Some(m) = kw.max_items.and_then(Value::as_u64) {
            if n > m {
                ok = false;
                self.fail(
                    ipath,
                    &format!("{spath}/maxItems"),
                    format!("the array has more than {m} items"),
                );
            }
        }
        if kw.unique_items.and_then(Value::as_bool) == Some(true) && has_duplicates(items) {
            ok = false;
            self.fail(
                ipath,
                &format!("{spath}/uniqueItems"),
                "the array's items are not unique".into(),
            );
        }
        if !ok && self.quick {
            return false;
        }
        // `prefixItems` (2020-12) or the draft-7 array form of `items`.
        let (prefix, prefix_kw, rest, rest_kw) = match (kw.prefix_items, kw.items) {
            (Some(Value::Array(p)), rest) => (Some(p), "prefixItems", rest, "items"),
            (_, Some(Value::Array(p))) => {
                (Some(p), "items", kw.additional_items, "additionalItems")
            }
            (_, rest) => (None, "", rest, "items"),
        };
        let start = prefix.map_or(0, Vec::len);
        if let Some(p) = prefix {
            for (i, (sub, item)) in p.iter().zip(items).enumerate() {
                let seg = format!("{prefix_kw}/{i}");
                if !self.sub(sub, item, (ipath, spath), Some(&i.to_string()), &seg, depth) {
                    ok = false;
                    if self.quick {
                        return false;
                    }
                }
            }
        }
        if let Some(rest) = rest {
            for (i, item) in items.iter().enumerate().skip(start) {
                if !self.sub(
                    rest,
                    item,
                    (ipath, spath),
                    Some(&i.to_string()),
                    rest_kw,
                    depth,
                ) {
                    ok = false;
                    if self.quick {
                        return false;
                    }
                }
            }
        }
        if let Some(c) = kw.contains {
            let hits = items.iter().filter(|x| self.probe(c, x, depth + 1)).count() as u64;
            let min = kw.min_contains.and_then(Value::as_u64).unwrap_or(1);
            if hits < min {
                ok = false;
                self.fail(ipath, &format!("{spath}/contains"), format!("the array has {hits} matching item(s); at least {min} must match `contains`"));
            }
            if let Some(max) = kw.max_contains.and_then(Value::as_u64) {
                if hits > max {
                    ok = false;
                    self.fail(
                        ipath,
                        &format!("{spath}/maxContains"),
                        format!(
                            "the array has {hits} items matching `contains`; at most {max} may"
                        ),
                    );
                }
            }
        }
        ok
    }

    fn check_object(
        &mut self,
        kw: &Keywords<'a>,
        o: &Map<String, Value>,
        ipath: &mut String,
        spath: &mut String,
        depth: usize,
    ) -> bool {
        let mut ok = true;
        if let Some(Value::Array(req)) = kw.required {
            for k in req.iter().filter_map(Value::as_str) {
                if !o.contains_key(k) {
                    ok = false;
                    if self.quick {
                        return false;
                    }
                    self.fail(
                        ipath,
                        &format!("{spath}/required"),
                        format!("the required property `{k}` is missing"),
                    );
                }
            }
        }
        let n = o.len() as u64;
        if kw
            .min_properties
            .and_then(Value::as_u64)
            .is_some_and(|m| n < m)
        {
            ok = false;
            self.fail(
                ipath,
                &format!("{spath}/minProperties"),
                "the object has too few properties".into(),
            );
        }
        if kw
            .max_properties
            .and_then(Value::as_u64)
            .is_some_and(|m| n > m)
        {
            ok = false;
            self.fail(
                ipath,
                &format!("{spath}/maxProperties"),
                "the object has too many properties".into(),
            );
        }
        let deps = kw.dependent_required.or(kw.dependencies);
        if let Some(Value::Object(d)) = deps {
            for (k, need) in d {
                if !o.contains_key(k) {
                    continue;
                }
                match need {
                    Value::Array(names) => {
                        for m in names.iter().filter_map(Value::as_str) {
                            if !o.contains_key(m) {
                                ok = false;
                                self.fail(
                                    ipath,
                                    &format!("{spath}/dependentRequired/{}", escape(k)),
                                    format!("`{m}` is required when `{k}` is present"),
                                );
                            }
                        }
                    }
                    sub @ (Value::Object(_) | Value::Bool(_)) => {
                        let whole = Value::Object(o.clone());
                        if !self.sub(
                            sub,
                            &whole,
                            (ipath, spath),
                            None,
                            &format!("dependencies/{}", escape(k)),
                            depth,
                        ) {
                            ok = false;
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(Value::Object(d)) = kw.dependent_schemas {
            let whole = Value::Object(o.clone());
            for (k, sub) in d {
                if o.contains_key(k)
                    && !self.sub(
                        sub,
                        &whole,
                        (ipath, spath),
                        None,
                        &format!("dependentSchemas/{}", escape(k)),
                        depth,
                    )
                {
                    ok = false;
                }
            }
        }
        if !ok && self.quick {
            return false;
        }
        let props = kw.properties.and_then(Value::as_object);
        let patterns: Vec<(&String, &'a Value, Result<(), String>)> = kw
            .pattern_properties
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k, v, regex_is_match(k, "").map(drop)))
                    .collect()
            })
            .unwrap_or_default();
        for (p, _, re) in &patterns {
            if let Err(e) = re {
                ok = false;
                self.fail(
                    ipath,
                    &format!("{spath}/patternProperties"),
                    format!("the pattern {p} does not compile: {e}"),
                );
            }
        }
        let names = kw.property_names;
        let additional = kw.additional_properties;
        for (k, v) in o {
            let mut known = false;
            if let Some(sub) = props.and_then(|p| p.get(k)) {
                known = true;
                if !self.sub_at(
                    sub,
                    v,
                    (ipath, spath),
                    Some(k),
                    ("properties/", &escape(k)),
                    depth,
                ) {
                    ok = false;
                    if self.quick {
                        return false;
                    }
                }
            }
            for (p, sub, re) in &patterns {
                if re.is_ok() && regex_is_match(p, k) == Ok(true) {
                    known = true;
                    if !self.sub(
                        sub,
                        v,
                        (ipath, spath),
                        Some(k),
                        &format!("patternProperties/{}", escape(p)),
                        depth,
                    ) {
                        ok = false;
                        if self.quick {
                            return false;
                        }
                    }
                }
            }
            if !known {
                if let Some(a) = additional {
                    if a == &Value::Bool(false) {
                        ok = false;
                        if self.quick {
                            return false;
                        }
                        self.fail(
                            ipath,
                            &format!("{spath}/additionalProperties"),
                            format!("the property `{k}` is not allowed"),
                        );
                    } else if !self.sub(
                        a,
                        v,
                        (ipath, spath),
                        Some(k),
                        "additionalProperties",
                        depth,
                    ) {
                        ok = false;
                        if self.quick {
                            return false;
                        }
                    }
                }
            }
            if let Some(n) = names {
                if !self.probe(n, &Value::String(k.clone()), depth + 1) {
                    ok = false;
                    if self.quick {
                        return false;
                    }
                    self.fail(
                        ipath,
                        &format!("{spath}/propertyNames"),
                        format!("the property name `{k}` does not match `propertyNames`"),
                    );
                }
            }
        }
        ok
    }
}

fn multiple_of(n: &serde_json::Number, m: Option<&Value>, x: f64, mf: f64) -> bool {
    if let (Some(a), Some(b)) = (n.as_i64(), m.and_then(Value::as_i64)) {
        return b != 0 && a % b == 0;
    }
    let q = x / mf;
    q.is_finite() && (q - q.round()).abs() < 1e-9
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b.get(i),
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (Some(b'%'), Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (Some(c), _, _) => {
                out.push(*c);
                i += 1;
            }
            (None, _, _) => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(s: Value, i: Value) -> Vec<String> {
        match validate(&s, &i) {
            Ok(()) => vec![],
            Err(v) => v
                .into_iter()
                .map(|v| format!("{} {} {}", v.instance_path, v.schema_path, v.message))
                .collect(),
        }
    }

    #[test]
    fn types_and_numbers() {
        assert!(errs(json!({"type": "integer"}), json!(3.0)).is_empty());
        assert_eq!(
            errs(json!({"type": "integer"}), json!(3.5)),
            [" /type expected integer, got number"]
        );
        assert!(!is_valid(
            &json!({"minimum": 2, "exclusiveMaximum": 5}),
            &json!(5)
        ));
        assert!(is_valid(&json!({"multipleOf": 0.1}), &json!(0.3)));
        assert!(!is_valid(&json!({"multipleOf": 3}), &json!(7)));
        assert!(!is_valid(
            &json!({"maximum": 5, "exclusiveMaximum": true}),
            &json!(5)
        ));
    }

    #[test]
    fn objects_arrays_and_refs() {
        let s = json!({
            "type": "object",
            "required": ["tone", "items"],
            "additionalProperties": false,
            "properties": {
                "tone": {"enum": ["formal", "casual"]},
                "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "uniqueItems": true}
            },
            "$defs": {"item": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}}
        });
        assert!(is_valid(
            &s,
            &json!({"tone": "formal", "items": [{"name": "ab"}]})
        ));
        let e = errs(
            s,
            json!({"tone": "loud", "items": [{"name": "A1"}, {"name": "A1"}], "x": 1}),
        );
        assert_eq!(
            e,
            [
                "/items /properties/items/uniqueItems the array's items are not unique",
                "/items/0/name /properties/items/items/$ref/properties/name/pattern the string does not match the pattern ^[a-z]+$",
                "/items/1/name /properties/items/items/$ref/properties/name/pattern the string does not match the pattern ^[a-z]+$",
                "/tone /properties/tone/enum \"loud\" is not one of \"formal\", \"casual\"",
                " /additionalProperties the property `x` is not allowed",
            ]
        );
    }

    #[test]
    fn pattern_properties() {
        let s = json!({
            "patternProperties": {"^x_": {"type": "integer"}},
            "additionalProperties": false
        });
        assert!(is_valid(&s, &json!({"x_a": 1, "x_b": 2})));
        assert_eq!(
            errs(s, json!({"x_a": "one", "y": 1})),
            [
                "/x_a /patternProperties/^x_/type expected integer, got string",
                " /additionalProperties the property `y` is not allowed",
            ]
        );
        assert_eq!(
            errs(json!({"patternProperties": {"(": {}}}), json!({"a": 1})).len(),
            1,
            "a pattern that does not compile is one violation"
        );
    }

    #[test]
    fn combinators_and_conditionals() {
        let s = json!({"oneOf": [{"type": "string"}, {"type": "number"}]});
        assert!(is_valid(&s, &json!(1)));
        assert!(!is_valid(&s, &json!(null)));
        let s = json!({"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["a"]}, "else": {"required": ["b"]}});
        assert!(is_valid(&s, &json!({"kind": "a", "a": 1})));
        assert!(!is_valid(&s, &json!({"kind": "x", "a": 1})));
        assert!(!is_valid(&json!({"not": {"type": "null"}}), &json!(null)));
        assert!(is_valid(
            &json!({"contains": {"const": 2}, "maxContains": 1}),
            &json!([1, 2])
        ));
        assert!(!is_valid(
            &json!({"contains": {"const": 2}, "maxContains": 1}),
            &json!([2, 2])
        ));
    }

    #[test]
    fn loops_and_bad_refs_end_with_a_violation() {
        let s = json!({"$ref": "#"});
        assert!(!is_valid(&s, &json!(1)));
        let e = errs(json!({"$ref": "https://example.com/x.json"}), json!(1));
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("does not point into this schema"));
        assert!(!is_valid(&json!({"pattern": "("}), &json!("x")));
        assert!(!is_valid(
            &json!({"unevaluatedProperties": false}),
            &json!({})
        ));
    }
}
