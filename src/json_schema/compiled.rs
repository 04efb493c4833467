//! A schema digested once, for the instances checked against it again and again (a
//! contract's input and output, on every gateway call): each schema object's keywords are
//! read into a typed node when the schema is registered, so a check walks the nodes without
//! looking any keyword up or writing any path.
//!
//! Only the keywords the common schemas use are digested: `type`, `enum`, `const`, the
//! number bounds and `multipleOf`, `minLength`, `maxLength`, `pattern`, `format`, `properties`,
//! `required`, `additionalProperties`, `minProperties`, `maxProperties`, `items` (one
//! schema), `minItems`, `maxItems`, `uniqueItems`. A schema that uses any other keyword
//! anywhere (`$ref`, `allOf`, `patternProperties`, …), or a pattern that does not compile,
//! is not digested ([`Compiled::new`] gives `None`) and is checked by the validator that
//! reads the schema itself. The two agree on every schema both read: the answer is only
//! ever the same yes or no, faster (the tests compare them).

use super::{has_duplicates, is_integer, json_eq, multiple_of, Keywords, MAX_DEPTH};
use serde_json::{Map, Value};

/// Instance kinds as bits of a `type` mask (`integer` is a whole number).
const NULL: u8 = 1;
const BOOL: u8 = 2;
const INT: u8 = 4;
const NUM: u8 = 8;
const STR: u8 = 16;
const ARR: u8 = 32;
const OBJ: u8 = 64;

fn kind(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOL,
        Value::Number(n) if is_integer(n) => INT,
        Value::Number(_) => NUM,
        Value::String(_) => STR,
        Value::Array(_) => ARR,
        Value::Object(_) => OBJ,
    }
}

fn kind_of_name(t: &str) -> u8 {
    match t {
        "null" => NULL,
        "boolean" => BOOL,
        "integer" => INT,
        "number" => INT | NUM,
        "string" => STR,
        "array" => ARR,
        "object" => OBJ,
        _ => 0,
    }
}

/// A digested schema (see the module docs).
pub struct Compiled(Node);

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

enum Node {
    /// `true`, or a schema with nothing to check.
    Any,
    /// `false`.
    Never,
    /// A schema object's checks.
    Checks(Box<Checks>),
}

struct Checks {
    /// The kinds `type` allows (`None`: any).
    types: Option<u8>,
    enum_: Option<Vec<Value>>,
    const_: Option<Value>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    /// Draft 4: `minimum` / `maximum` are exclusive.
    draft4_min: bool,
    draft4_max: bool,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    /// `multipleOf` as written (an integer divides exactly) and as a number.
    multiple_of: Option<(Value, f64)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<regex_lite::Regex>,
    /// A format [`super::format::check`] asserts (another one is an annotation).
    format: Option<String>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    items: Option<Node>,
    required: Vec<String>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    /// By name, sorted (the order of a schema map's keys).
    properties: Vec<(String, Node)>,
    /// Schemas for the other properties (`false`: none allowed).
    additional: Option<Node>,
}

impl Compiled {
    /// Digests `schema`, or `None` when it uses a keyword this form does not hold.
    pub fn new(schema: &Value) -> Option<Compiled> {
        node(schema, 0).map(Compiled)
    }

    /// Whether `instance` matches (exactly what [`super::is_valid`] answers).
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.0.check(instance)
    }
}

fn node(schema: &Value, depth: usize) -> Option<Node> {
    let s = match schema {
        Value::Bool(false) => return Some(Node::Never),
        Value::Object(s) => s,
        _ => return Some(Node::Any),
    };
    if depth > MAX_DEPTH {
        return None;
    }
    let kw = Keywords::of(s);
    let unsupported = [
        kw.ref_,
        kw.additional_items,
        kw.all_of,
        kw.any_of,
        kw.contains,
        kw.dependencies,
        kw.dependent_required,
        kw.dependent_schemas,
        kw.else_,
        kw.if_,
        kw.max_contains,
        kw.min_contains,
        kw.not,
        kw.one_of,
        kw.pattern_properties,
        kw.prefix_items,
        kw.property_names,
        kw.then,
        kw.unevaluated_items,
        kw.unevaluated_properties,
    ];
    if unsupported.iter().any(Option::is_some) {
        return None;
    }
    let num = |v: Option<&Value>| v.and_then(Value::as_f64);
    let count = |v: Option<&Value>| v.and_then(Value::as_u64);
    let flag = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
    let mut c = Checks {
        types: match kw.type_ {
            Some(Value::String(t)) => Some(kind_of_name(t)),
            Some(Value::Array(ts)) => Some(
                ts.iter()
                    .filter_map(Value::as_str)
                    .fold(0, |m, t| m | kind_of_name(t)),
            ),
            _ => None,
        },
        enum_: match kw.enum_ {
            Some(Value::Array(e)) => Some(e.clone()),
            _ => None,
        },
        const_: kw.const_.cloned(),
        minimum: num(kw.minimum),
        maximum: num(kw.maximum),
        draft4_min: flag(kw.exclusive_minimum),
        draft4_max: flag(kw.exclusive_maximum),
        exclusive_minimum: num(kw.exclusive_minimum),
        exclusive_maximum: num(kw.exclusive_maximum),
        multiple_of: kw
            .multiple_of
            .and_then(|v| v.as_f64().filter(|m| *m > 0.0).map(|m| (v.clone(), m))),
        min_length: count(kw.min_length),
        max_length: count(kw.max_length),
        pattern: match kw.pattern.and_then(Value::as_str) {
            Some(p) => Some(regex_lite::Regex::new(p).ok()?),
            None => None,
        },
        format: kw
            .format
            .and_then(Value::as_str)
            .filter(|f| super::format::check(f, "").is_some())
            .map(str::to_owned),
        min_items: count(kw.min_items),
        max_items: count(kw.max_items),
        unique_items: flag(kw.unique_items),
        items: None,
        required: match kw.required {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        },
        min_properties: count(kw.min_properties),
        max_properties: count(kw.max_properties),
        properties: Vec::new(),
        additional: None,
    };
    if let Some(items) = kw.items {
        if items.is_array() {
            return None;
        }
        c.items = Some(node(items, depth + 1)?);
    }
    if let Some(Value::Object(p)) = kw.properties {
        // The checks look names up by binary search: a map that does not keep its keys
        // sorted is left to the validator rather than sorted here.
        if !p.keys().is_sorted() {
            return None;
        }
        for (k, sub) in p {
            c.properties.push((k.clone(), node(sub, depth + 1)?));
        }
    }
    if let Some(a) = kw.additional_properties {
        c.additional = Some(node(a, depth + 1)?);
    }
    Some(Node::Checks(Box::new(c)))
}

impl Node {
    fn check(&self, inst: &Value) -> bool {
        match self {
            Node::Any => true,
            Node::Never => false,
            Node::Checks(c) => c.check(inst),
        }
    }
}

impl Checks {
    fn check(&self, inst: &Value) -> bool {
        if self.types.is_some_and(|t| t & kind(inst) == 0) {
            return false;
        }
        if let Some(e) = &self.enum_ {
            if !e.iter().any(|x| json_eq(x, inst)) {
                return false;
            }
        }
        if let Some(c) = &self.const_ {
            if !json_eq(c, inst) {
                return false;
            }
        }
        match inst {
            Value::Number(n) => self.number(n),
            Value::String(s) => self.string(s),
            Value::Array(items) => self.array(items),
            Value::Object(o) => self.object(o),
            _ => true,
        }
    }

    fn number(&self, n: &serde_json::Number) -> bool {
        let x = n.as_f64().unwrap_or(0.0);
        if let Some(m) = self.minimum {
            if x < m || (self.draft4_min && x <= m) {
                return false;
            }
        }
        if let Some(m) = self.maximum {
            if x > m || (self.draft4_max && x >= m) {
                return false;
            }
        }
        if self.exclusive_minimum.is_some_and(|m| x <= m)
            || self.exclusive_maximum.is_some_and(|m| x >= m)
        {
            return false;
        }
        match &self.multiple_of {
            Some((v, m)) => multiple_of(n, Some(v), x, *m),
            None => true,
        }
    }

    fn string(&self, s: &str) -> bool {
        if self.min_length.is_some() || self.max_length.is_some() {
            let n = s.chars().count() as u64;
            if self.min_length.is_some_and(|m| n < m) || self.max_length.is_some_and(|m| n > m) {
                return false;
            }
        }
        self.pattern.as_ref().is_none_or(|re| re.is_match(s))
            && self
                .format
                .as_deref()
                .is_none_or(|f| super::format::check(f, s) != Some(false))
    }

    fn array(&self, items: &[Value]) -> bool {
        let n = items.len() as u64;
        if self.min_items.is_some_and(|m| n < m) || self.max_items.is_some_and(|m| n > m) {
            return false;
        }
        if self.unique_items && has_duplicates(items) {
            return false;
        }
        self.items
            .as_ref()
            .is_none_or(|sub| items.iter().all(|x| sub.check(x)))
    }

    fn object(&self, o: &Map<String, Value>) -> bool {
        if !self.required.iter().all(|k| o.contains_key(k)) {
            return false;
        }
        let n = o.len() as u64;
        if self.min_properties.is_some_and(|m| n < m) || self.max_properties.is_some_and(|m| n > m)
        {
            return false;
        }
        if self.properties.is_empty() && self.additional.is_none() {
            return true;
        }
        o.iter().all(|(k, v)| {
            match self
                .properties
                .binary_search_by(|(name, _)| name.as_str().cmp(k))
            {
                Ok(i) => self.properties.get(i).is_none_or(|(_, sub)| sub.check(v)),
                Err(_) => self.additional.as_ref().is_none_or(|a| a.check(v)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Compiled;
    use serde_json::{json, Value};

    /// Schemas over every digested keyword, alone and together, with the odd forms the
    /// validator accepts (draft-4 bounds, type lists, unknown type names, wrong-typed
    /// keyword values, boolean sub-schemas).
    fn schemas() -> Vec<Value> {
        vec![
            json!(true),
            json!(false),
            json!({}),
            json!(null),
            json!(3),
            json!({"type": "string"}),
            json!({"type": "integer"}),
            json!({"type": "number"}),
            json!({"type": ["string", "null"]}),
            json!({"type": []}),
            json!({"type": ["nonsense"]}),
            json!({"type": "nonsense"}),
            json!({"type": 5}),
            json!({"enum": [1, "a", null, [1], {"x": 1}]}),
            json!({"enum": "not a list"}),
            json!({"const": 1.0}),
            json!({"const": {"a": [1, 2]}}),
            json!({"minimum": 1, "maximum": 5}),
            json!({"minimum": 1, "exclusiveMinimum": true, "maximum": 5, "exclusiveMaximum": true}),
            json!({"exclusiveMinimum": 1, "exclusiveMaximum": 5}),
            json!({"minimum": "1"}),
            json!({"multipleOf": 3}),
            json!({"multipleOf": 0.5}),
            json!({"multipleOf": 0}),
            json!({"multipleOf": -2}),
            json!({"minLength": 2, "maxLength": 3}),
            json!({"minLength": -1}),
            json!({"pattern": "^[A-Z]{4}_[0-9]{3,6}$"}),
            json!({"pattern": "b"}),
            json!({"pattern": 7}),
            json!({"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true}),
            json!({"items": {"type": "integer"}}),
            json!({"items": false}),
            json!({"items": true, "uniqueItems": false}),
            json!({"required": ["a", "b"], "minProperties": 1, "maxProperties": 2}),
            json!({"required": "a"}),
            json!({"required": ["a", 3]}),
            json!({"properties": {"a": {"type": "string"}, "b": false}, "additionalProperties": false}),
            json!({"properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}}),
            json!({"properties": {"a": {"type": "string"}}, "additionalProperties": true}),
            json!({"properties": "no", "additionalProperties": false}),
            json!({"additionalProperties": 4}),
            json!({"type": "object", "additionalProperties": false,
                   "properties": {"k": {"default": 10, "maximum": 50, "minimum": 1, "type": "integer"},
                                  "locale": {"enum": ["en-US", "ja-JP"], "type": "string"},
                                  "title_id": {"pattern": "^[A-Z]{4}_[0-9]{3,6}$", "type": "string"}},
                   "required": ["locale", "title_id"], "description": "an annotation", "format": "x"}),
            json!({"type": "object", "properties": {"list": {"type": "array", "items": {
                "type": "object", "properties": {"n": {"type": ["integer", "null"], "multipleOf": 2}},
                "required": ["n"]}}}}),
        ]
    }

    fn instances() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(1.0),
            json!(1.5),
            json!(2),
            json!(3),
            json!(4.5),
            json!(5),
            json!(6),
            json!(-4),
            json!(u64::MAX),
            json!(1e300),
            json!(""),
            json!("a"),
            json!("ab"),
            json!("abc"),
            json!("ábcd"),
            json!("ABCD_123"),
            json!("ABCD_1234567"),
            json!("xbx"),
            json!([]),
            json!([1]),
            json!([1, 1]),
            json!([1, 1.0]),
            json!([1, "a", 2, 3]),
            json!([{"n": 2}, {"n": null}]),
            json!([{"n": 3}]),
            json!({}),
            json!({"a": "x"}),
            json!({"a": 1}),
            json!({"a": "x", "b": 1}),
            json!({"a": "x", "c": 2}),
            json!({"a": "x", "c": "y"}),
            json!({"x": 1}),
            json!({"a": [1, 2]}),
            json!({"title_id": "ABCD_001", "locale": "en-US", "k": 10}),
            json!({"title_id": "ABCD_001", "locale": "en-US", "k": 51}),
            json!({"title_id": "ABCD_001", "locale": "fr-FR"}),
            json!({"title_id": "abcd_001", "locale": "en-US"}),
            json!({"title_id": "ABCD_001", "locale": "en-US", "extra": 1}),
            json!({"title_id": "ABCD_001"}),
            json!({"list": [{"n": 2}, {"n": null}]}),
            json!({"list": [{"n": 2.5}]}),
            json!({"list": [{}]}),
            json!({"list": "no"}),
        ]
    }

    #[test]
    fn answers_as_the_validator_does() {
        let mut compared = 0;
        for s in schemas() {
            let c = Compiled::new(&s).unwrap_or_else(|| panic!("not digested: {s}"));
            for i in instances() {
                assert_eq!(c.is_valid(&i), super::super::is_valid(&s, &i), "{s} on {i}");
                compared += 1;
            }
        }
        assert!(compared > 2000);
    }

    #[test]
    fn leaves_other_keywords_to_the_validator() {
        for s in [
            json!({"$ref": "#"}),
            json!({"properties": {"a": {"allOf": [{}]}}}),
            json!({"items": [{"type": "string"}]}),
            json!({"additionalProperties": {"not": {}}}),
            json!({"patternProperties": {"^x": {}}}),
            json!({"pattern": "("}),
            json!({"if": {}, "then": {}}),
            json!({"unevaluatedProperties": false}),
        ] {
            assert!(Compiled::new(&s).is_none(), "{s}");
        }
        // Nested deeper than the validator goes: left to it (it reports the depth).
        let mut deep = json!({});
        for _ in 0..70 {
            deep = json!({"items": deep});
        }
        assert!(Compiled::new(&deep).is_none());
        let mut ok = json!({});
        for _ in 0..20 {
            ok = json!({"items": ok});
        }
        assert!(Compiled::new(&ok).is_some());
    }

    #[test]
    fn validate_with_reports_what_validate_reports() {
        let s =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let c = Compiled::new(&s);
        for i in [json!({"a": "x"}), json!({"a": 1}), json!({}), json!(3)] {
            assert_eq!(
                super::super::validate_with(&s, c.as_ref(), &i),
                super::super::validate(&s, &i)
            );
        }
    }
}
