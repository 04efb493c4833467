//! A contract's `input` and `output`: the seed's compact field syntax
//! (`title_id: { type: string, required: true, regex: "^[A-Z]{4}_[0-9]{3,6}$" }`,
//! `similarity: float`) or a full JSON Schema, turned into one JSON Schema the gateway
//! validates with; and the synthetic input registration sends through the handler.

use crate::problems::Problems;
use serde_json::{Map, Value};

/// How deep compact fields may nest (objects in arrays in objects …).
const MAX_DEPTH: usize = 32;

/// Keys a compact field may carry.
const FIELD_KEYS: [&str; 12] = [
    "type",
    "required",
    "regex",
    "enum",
    "default",
    "min",
    "max",
    "items",
    "fields",
    "description",
    "format",
    "nullable",
];

/// JSON Schema keywords a compact field does not have.
const SCHEMA_KEYS: [&str; 24] = [
    "properties",
    "additionalProperties",
    "patternProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "prefixItems",
    "const",
    "title",
    "examples",
    "$defs",
    "definitions",
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
];

/// A field object written in JSON Schema: it uses a keyword compact fields lack, none that
/// only compact fields have (`regex`, `min`, `max`, `fields`, `nullable`, a boolean
/// `required`), and no key that is neither (a misspelt compact key is reported, not
/// passed as an annotation).
fn is_schema_object(o: &Map<String, Value>) -> bool {
    let compact_only = ["regex", "min", "max", "fields", "nullable"]
        .iter()
        .any(|k| o.contains_key(*k))
        || matches!(o.get("required"), Some(Value::Bool(_)));
    !compact_only
        && o.keys().any(|k| SCHEMA_KEYS.contains(&k.as_str()))
        && o.keys().all(|k| {
            SCHEMA_KEYS.contains(&k.as_str())
                || FIELD_KEYS.contains(&k.as_str())
                || k == "required"
                || k.starts_with('$')
                || k.starts_with("x-")
        })
}

/// Whether `v` is written as a full JSON Schema rather than compact fields: its `type` is a
/// text, or it carries a keyword no field can be named by mistake (`$schema`, `$ref`, a
/// combinator).
pub(crate) fn is_full_schema(v: &Value) -> bool {
    match v {
        Value::Bool(_) => true,
        Value::Object(o) => {
            matches!(o.get("type"), Some(Value::String(_)))
                || ["$schema", "$ref", "anyOf", "oneOf", "allOf"]
                    .iter()
                    .any(|k| o.contains_key(*k))
        }
        _ => false,
    }
}

/// The JSON Schema of a contract's `input` or `output` at `path`. `closed` forbids
/// properties the compact fields do not name (inputs: a misspelt argument is an error, not
/// a silently dropped value).
pub(crate) fn to_schema(v: &Value, path: &str, closed: bool, out: &mut Problems) -> Value {
    if is_full_schema(v) {
        crate::skill::schema::check(v, path, out);
        check_patterns(v, path, out, 0);
        return v.clone();
    }
    match v {
        Value::Object(fields) => object(fields, path, closed, out, 0),
        Value::Null => {
            let mut o = Map::new();
            o.insert("type".into(), "object".into());
            Value::Object(o)
        }
        _ => {
            out.error(
                path,
                "invalid-schema",
                "expected compact fields (`name: { type, required, … }`) or a JSON Schema object",
            );
            Value::Bool(true)
        }
    }
}

fn join(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

fn object(
    fields: &Map<String, Value>,
    path: &str,
    closed: bool,
    out: &mut Problems,
    depth: usize,
) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (name, spec) in fields {
        let p = join(path, name);
        let (schema, req) = field(spec, &p, closed, out, depth + 1);
        if req {
            required.push(Value::String(name.clone()));
        }
        props.insert(name.clone(), schema);
    }
    let mut o = Map::new();
    o.insert("type".into(), "object".into());
    o.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        o.insert("required".into(), Value::Array(required));
    }
    if closed {
        o.insert("additionalProperties".into(), false.into());
    }
    Value::Object(o)
}

/// The JSON Schema `type` of a compact type name.
fn json_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "string" | "str" | "text" => "string",
        "integer" | "int" => "integer",
        "number" | "float" | "double" => "number",
        "boolean" | "bool" => "boolean",
        "object" | "map" => "object",
        "array" | "list" => "array",
        "null" => "null",
        "any" => "any",
        _ => return None,
    })
}

/// One field → (its schema, whether it is required).
fn field(
    spec: &Value,
    path: &str,
    closed: bool,
    out: &mut Problems,
    depth: usize,
) -> (Value, bool) {
    if depth > MAX_DEPTH {
        out.error(
            path,
            "too-deep",
            format!("fields nest deeper than {MAX_DEPTH} levels"),
        );
        return (Value::Bool(true), false);
    }
    match spec {
        Value::String(t) => (type_only(t, path, out), false),
        Value::Object(o) if is_full_schema(spec) && is_schema_object(o) => {
            crate::skill::schema::check(spec, path, out);
            check_patterns(spec, path, out, 0);
            (spec.clone(), false)
        }
        Value::Object(o)
            if o.contains_key("type") && !matches!(o.get("type"), Some(Value::Object(_))) =>
        {
            compact_field(o, path, closed, out, depth)
        }
        // An object without `type` is a nested group of fields.
        Value::Object(o) => (object(o, path, closed, out, depth), false),
        _ => {
            out.error(
                path,
                "invalid-field",
                "a field is a type name (`string`) or `{ type, required, regex, enum, default, min, max }`",
            );
            (Value::Bool(true), false)
        }
    }
}

fn type_only(t: &str, path: &str, out: &mut Problems) -> Value {
    let mut o = Map::new();
    match json_type(t) {
        Some("any") => {}
        Some(j) => {
            o.insert("type".into(), j.into());
        }
        None => out.error(
            path,
            "unknown-type",
            format!(
                "unknown type `{t}` (string, integer, number, float, boolean, object, array, any)"
            ),
        ),
    }
    Value::Object(o)
}

fn compact_field(
    o: &Map<String, Value>,
    path: &str,
    closed: bool,
    out: &mut Problems,
    depth: usize,
) -> (Value, bool) {
    for k in o.keys() {
        if !FIELD_KEYS.contains(&k.as_str()) {
            out.error(
                &join(path, k),
                "unknown-key",
                format!("`{k}` is not a field key ({})", FIELD_KEYS.join(", ")),
            );
        }
    }
    let t = match o.get("type") {
        Some(Value::String(t)) => json_type(t).map(|_| t.as_str()),
        _ => None,
    };
    let mut s = match o.get("type") {
        Some(Value::String(t)) => type_only(t, &join(path, "type"), out),
        _ => {
            out.error(
                &join(path, "type"),
                "unknown-type",
                "`type` must be a type name",
            );
            Value::Object(Map::new())
        }
    };
    let jt = t.and_then(json_type).unwrap_or("any");
    let required = match o.get("required") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            out.error(
                &join(path, "required"),
                "invalid-field",
                "`required` must be true or false",
            );
            false
        }
    };
    let Value::Object(m) = &mut s else {
        return (s, required);
    };
    if let Some(d) = o.get("description") {
        m.insert("description".into(), d.clone());
    }
    if let Some(f) = o.get("format") {
        m.insert("format".into(), f.clone());
    }
    if let Some(r) = o.get("regex") {
        match r {
            Value::String(p) => {
                if jt != "string" && jt != "any" {
                    out.error(
                        &join(path, "regex"),
                        "invalid-field",
                        format!("`regex` applies to strings, not {jt}"),
                    );
                }
                if let Err(e) = crate::json_schema::regex_is_match(p, "") {
                    out.error(
                        &join(path, "regex"),
                        "invalid-regex",
                        format!("the regex does not compile: {e}"),
                    );
                }
                m.insert("pattern".into(), r.clone());
            }
            _ => out.error(
                &join(path, "regex"),
                "invalid-regex",
                "`regex` must be a text",
            ),
        }
    }
    let (lo, hi) = match jt {
        "string" => ("minLength", "maxLength"),
        "array" => ("minItems", "maxItems"),
        "object" => ("minProperties", "maxProperties"),
        _ => ("minimum", "maximum"),
    };
    let mut bounds = [None, None];
    for (i, (k, kw)) in [("min", lo), ("max", hi)].into_iter().enumerate() {
        if let Some(v) = o.get(k) {
            match v.as_f64() {
                Some(n) if kw == "minimum" || kw == "maximum" || (n >= 0.0 && n.fract() == 0.0) => {
                    bounds[i] = Some(n);
                    m.insert(kw.into(), v.clone());
                }
                _ => out.error(
                    &join(path, k),
                    "invalid-field",
                    format!("`{k}` must be a number (a count for {jt})"),
                ),
            }
        }
    }
    if let [Some(a), Some(b)] = bounds {
        if a > b {
            out.error(
                &join(path, "min"),
                "invalid-range",
                format!("`min` ({a}) is above `max` ({b})"),
            );
        }
    }
    match o.get("items") {
        None => {}
        Some(_) if jt != "array" => out.error(
            &join(path, "items"),
            "invalid-field",
            "`items` applies to arrays",
        ),
        Some(i) => {
            let (is, _) = field(i, &join(path, "items"), closed, out, depth + 1);
            m.insert("items".into(), is);
        }
    }
    if let Some(f) = o.get("fields") {
        match f {
            Value::Object(f) if jt == "object" => {
                if let Value::Object(inner) =
                    object(f, &join(path, "fields"), closed, out, depth + 1)
                {
                    m.extend(inner);
                }
            }
            _ => out.error(
                &join(path, "fields"),
                "invalid-field",
                "`fields` is a map of fields on an object",
            ),
        }
    }
    if let Some(e) = o.get("enum") {
        match e {
            Value::Array(a) if !a.is_empty() => {
                let probe = Value::Object(m.clone());
                for (i, x) in a.iter().enumerate() {
                    if !crate::json_schema::is_valid(&probe, x) {
                        out.error(
                            &format!("{path}.enum[{i}]"),
                            "invalid-enum",
                            format!("{x} is not a valid {jt}"),
                        );
                    }
                }
                m.insert("enum".into(), e.clone());
            }
            _ => out.error(
                &join(path, "enum"),
                "invalid-enum",
                "`enum` must be a non-empty list",
            ),
        }
    }
    if o.get("nullable") == Some(&Value::Bool(true)) {
        if let Some(Value::String(t)) = m.get("type").cloned() {
            m.insert("type".into(), Value::Array(vec![t.into(), "null".into()]));
        }
        if let Some(Value::Array(e)) = m.get_mut("enum") {
            e.push(Value::Null);
        }
    }
    if let Some(d) = o.get("default") {
        if let Err(v) = crate::json_schema::validate(&Value::Object(m.clone()), d) {
            let why = v
                .first()
                .map(|v| v.message.as_str())
                .unwrap_or("does not match");
            out.error(
                &join(path, "default"),
                "invalid-default",
                format!("the default {d} is outside the field's type, enum or range: {why}"),
            );
        }
        m.insert("default".into(), d.clone());
    }
    (s, required)
}

/// Every `pattern` in a full schema compiles.
fn check_patterns(v: &Value, path: &str, out: &mut Problems, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let p = join(path, k);
                match (k.as_str(), x) {
                    ("pattern", Value::String(s)) => {
                        if let Err(e) = crate::json_schema::regex_is_match(s, "") {
                            out.error(
                                &p,
                                "invalid-regex",
                                format!("the pattern does not compile: {e}"),
                            );
                        }
                    }
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => check_patterns(x, &p, out, depth + 1),
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                check_patterns(x, &format!("{path}[{i}]"), out, depth + 1);
            }
        }
        _ => {}
    }
}

/// `input` with the defaults of its schema's top-level properties filled in (what the
/// handler receives and the idempotency key reads).
pub fn apply_defaults(schema: &Value, input: &Value) -> Value {
    let (Some(Value::Object(props)), Value::Object(o)) = (schema.get("properties"), input) else {
        return input.clone();
    };
    let mut o = o.clone();
    for (k, s) in props {
        if let Some(d) = s.get("default") {
            o.entry(k.clone()).or_insert_with(|| d.clone());
        }
    }
    Value::Object(o)
}

/// An input made from the schema alone (defaults, then enum values, then the smallest value
/// of each type; a `pattern` is read for one matching text), or `None` when a pattern is
/// past what the generator reads. Registration sends it through the handler.
pub fn synthetic(schema: &Value) -> Option<Value> {
    gen(schema, 0)
}

fn gen(s: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let o = match s {
        Value::Object(o) => o,
        _ => return Some(Value::Null),
    };
    if let Some(d) = o.get("default").or_else(|| o.get("const")) {
        return Some(d.clone());
    }
    if let Some(Value::Array(e)) = o.get("enum") {
        return e.first().cloned();
    }
    if let Some(Value::Array(ex)) = o.get("examples") {
        if let Some(x) = ex.first() {
            return Some(x.clone());
        }
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = o.get(k) {
            return a.first().and_then(|x| gen(x, depth + 1));
        }
    }
    let t = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if o.contains_key("properties") => "object",
        _ => "null",
    };
    let num = |k: &str| o.get(k).and_then(Value::as_f64);
    Some(match t {
        "string" => {
            let mut text = match o.get("pattern") {
                Some(Value::String(p)) => pattern_text(p)?,
                _ => String::new(),
            };
            let min = num("minLength").unwrap_or(0.0) as usize;
            while text.chars().count() < min {
                text.push('a');
            }
            Value::String(text)
        }
        "integer" | "number" => {
            let lo = num("minimum").or_else(|| num("exclusiveMinimum").map(|x| x + 1.0));
            let v = lo
                .unwrap_or(0.0)
                .max(num("maximum").map_or(f64::MIN, |_| f64::MIN));
            let v = match num("maximum") {
                Some(hi) if v > hi => hi,
                _ => v,
            };
            if t == "integer" {
                Value::from(v.ceil() as i64)
            } else {
                serde_json::Number::from_f64(v).map_or(Value::from(0), Value::Number)
            }
        }
        "boolean" => Value::Bool(false),
        "array" => {
            let n = num("minItems").unwrap_or(0.0) as usize;
            let item = o
                .get("items")
                .map_or(Some(Value::Null), |i| gen(i, depth + 1))?;
            Value::Array(vec![item; n.min(16)])
        }
        "object" => {
            let mut m = Map::new();
            let req: Vec<&str> = o
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(Value::Object(p)) = o.get("properties") {
                for (k, ps) in p {
                    if req.contains(&k.as_str()) || ps.get("default").is_some() {
                        m.insert(k.clone(), gen(ps, depth + 1)?);
                    }
                }
            }
            Value::Object(m)
        }
        _ => Value::Null,
    })
}

/// One text matching a pattern made of literals, escapes (`\d \w \s`, escaped
/// punctuation), classes (`[A-Z0-9_]`), groups with alternatives (the first is taken),
/// anchors and quantifiers (`? * + {n} {n,m}`); `None` past that.
fn pattern_text(p: &str) -> Option<String> {
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    let out = seq(&chars, &mut i, 0)?;
    (i == chars.len()).then_some(out)
}

fn seq(c: &[char], i: &mut usize, depth: usize) -> Option<String> {
    if depth > 16 {
        return None;
    }
    let mut out = String::new();
    while let Some(&ch) = c.get(*i) {
        let atom: String = match ch {
            '^' | '$' => {
                *i += 1;
                continue;
            }
            ')' => return Some(out),
            '|' => {
                // The first alternative is enough: skip the rest of this group.
                let mut level = 0usize;
                while let Some(&x) = c.get(*i) {
                    match x {
                        '\\' => *i += 1,
                        '(' => level += 1,
                        ')' if level == 0 => return Some(out),
                        ')' => level -= 1,
                        _ => {}
                    }
                    *i += 1;
                }
                return Some(out);
            }
            '(' => {
                *i += 1;
                if c.get(*i) == Some(&'?') {
                    // `(?:…)` only.
                    if c.get(*i + 1) != Some(&':') {
                        return None;
                    }
                    *i += 2;
                }
                let inner = seq(c, i, depth + 1)?;
                if c.get(*i) != Some(&')') {
                    return None;
                }
                *i += 1;
                inner
            }
            '[' => {
                *i += 1;
                let negated = c.get(*i) == Some(&'^');
                if negated {
                    return None;
                }
                let first = match c.get(*i)? {
                    '\\' => {
                        *i += 1;
                        escape(*c.get(*i)?)?
                    }
                    x => *x,
                };
                while c.get(*i)? != &']' {
                    if c.get(*i)? == &'\\' {
                        *i += 1;
                    }
                    *i += 1;
                }
                *i += 1;
                first.to_string()
            }
            '\\' => {
                *i += 1;
                let e = escape(*c.get(*i)?)?;
                *i += 1;
                e.to_string()
            }
            '.' => {
                *i += 1;
                "a".into()
            }
            '*' | '+' | '?' | '{' => return None,
            x => {
                *i += 1;
                x.to_string()
            }
        };
        let n = quantifier(c, i)?;
        for _ in 0..n {
            out.push_str(&atom);
        }
    }
    Some(out)
}

fn escape(e: char) -> Option<char> {
    Some(match e {
        'd' => '0',
        'w' => 'a',
        's' => ' ',
        'D' | 'W' | 'S' => '_',
        x if x.is_ascii_punctuation() => x,
        _ => return None,
    })
}

/// The count of the quantifier at `i` (its smallest, at least 1 for `+`), 1 when none.
fn quantifier(c: &[char], i: &mut usize) -> Option<usize> {
    let n = match c.get(*i) {
        Some('?') | Some('*') => {
            *i += 1;
            0
        }
        Some('+') => {
            *i += 1;
            1
        }
        Some('{') => {
            let end = (*i..c.len()).find(|&j| c[j] == '}')?;
            let body: String = c[*i + 1..end].iter().collect();
            *i = end + 1;
            body.split(',').next()?.trim().parse().ok()?
        }
        _ => return Some(1),
    };
    if c.get(*i) == Some(&'?') {
        *i += 1;
    }
    Some(n.min(64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pattern_texts_match_their_pattern() {
        for p in [
            "^[A-Z]{4}_[0-9]{3,6}$",
            r"^\d+-\w*$",
            "^(?:ab|cd)+x?$",
            r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$",
            "^v(1|2)\\.[0-9]$",
        ] {
            let t = pattern_text(p).unwrap_or_else(|| panic!("{p}"));
            assert!(
                crate::json_schema::regex_is_match(p, &t).unwrap(),
                "{p}: {t}"
            );
        }
        assert_eq!(pattern_text("[^a]"), None);
    }

    #[test]
    fn compact_fields_become_a_schema() {
        let mut out = Problems::default();
        let s = to_schema(
            &json!({"title_id": {"type": "string", "required": true, "regex": "^[A-Z]{4}_[0-9]{3,6}$"},
                    "k": {"type": "integer", "default": 10, "min": 1, "max": 50}}),
            "input",
            true,
            &mut out,
        );
        assert!(out.0.is_empty(), "{:?}", out.0);
        assert_eq!(s["required"], json!(["title_id"]));
        assert_eq!(s["properties"]["k"]["maximum"], json!(50));
        let input = synthetic(&s).unwrap();
        assert!(crate::json_schema::is_valid(&s, &input), "{input}");
        let mut out = Problems::default();
        to_schema(
            &json!({"k": {"type": "integer", "default": 99, "max": 50}, "x": {"type": "string", "regex": "("}}),
            "input",
            true,
            &mut out,
        );
        let codes: Vec<_> = out.0.iter().map(|p| (p.path.as_str(), p.code)).collect();
        assert_eq!(
            codes,
            [
                ("input.k.default", "invalid-default"),
                ("input.x.regex", "invalid-regex")
            ]
        );
    }
}
