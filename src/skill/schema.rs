//! The structural check of a JSON Schema document (a skill's `parameters` and
//! `output_schema`, a structural assertion's `schema`): every keyword the composer and the
//! providers read must have the shape the JSON Schema specification gives it. Unknown
//! keywords are annotations and pass. This is a well-formedness check, not a validator of
//! instances.

use crate::problems::Problems;
use serde_json::Value;

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Keywords whose value is one schema.
const ONE: [&str; 9] = [
    "not",
    "additionalProperties",
    "propertyNames",
    "contains",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "additionalItems",
];

/// Keywords whose value is a non-empty array of schemas.
const MANY: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords whose value is an object of schemas.
const MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a non-negative integer.
const COUNTS: [&str; 7] = [
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
];

/// Keywords whose value is a number.
const NUMBERS: [&str; 5] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// Keywords whose value is a string.
const STRINGS: [&str; 6] = ["pattern", "format", "title", "description", "$ref", "$id"];

/// Checks the schema at `path`, adding a problem for every malformed keyword.
pub(crate) fn check(schema: &Value, path: &str, out: &mut Problems) {
    check_depth(schema, path, out, 0);
}

fn check_depth(schema: &Value, path: &str, out: &mut Problems, depth: usize) {
    let o = match schema {
        Value::Bool(_) => return,
        Value::Object(o) => o,
        _ => {
            out.error(
                path,
                "invalid-schema",
                "a JSON Schema must be an object or a boolean",
            );
            return;
        }
    };
    if depth > 64 {
        out.error(
            path,
            "invalid-schema",
            "the schema nests deeper than 64 levels",
        );
        return;
    }
    let at = |k: &str| format!("{path}.{k}");
    if let Some(t) = o.get("type") {
        let ok = |s: &Value| s.as_str().is_some_and(|s| TYPES.contains(&s));
        let valid = match t {
            Value::String(_) => ok(t),
            Value::Array(a) => !a.is_empty() && a.iter().all(ok),
            _ => false,
        };
        if !valid {
            out.error(
                &at("type"),
                "invalid-schema",
                format!(
                    "`type` must be one of {} (or a non-empty array of them)",
                    TYPES.join(", ")
                ),
            );
        }
    }
    for k in ONE {
        if let Some(s) = o.get(k) {
            check_depth(s, &at(k), out, depth + 1);
        }
    }
    if let Some(items) = o.get("items") {
        match items {
            Value::Array(a) => {
                for (i, s) in a.iter().enumerate() {
                    check_depth(s, &format!("{path}.items[{i}]"), out, depth + 1);
                }
            }
            s => check_depth(s, &at("items"), out, depth + 1),
        }
    }
    for k in MANY {
        match o.get(k) {
            None => {}
            Some(Value::Array(a)) if !a.is_empty() => {
                for (i, s) in a.iter().enumerate() {
                    check_depth(s, &format!("{path}.{k}[{i}]"), out, depth + 1);
                }
            }
            Some(_) => out.error(
                &at(k),
                "invalid-schema",
                format!("`{k}` must be a non-empty array of schemas"),
            ),
        }
    }
    for k in MAPS {
        match o.get(k) {
            None => {}
            Some(Value::Object(m)) => {
                for (name, s) in m {
                    check_depth(s, &format!("{path}.{k}.{name}"), out, depth + 1);
                }
            }
            Some(_) => out.error(
                &at(k),
                "invalid-schema",
                format!("`{k}` must be an object of schemas"),
            ),
        }
    }
    for k in COUNTS {
        if o.get(k).is_some_and(|v| v.as_u64().is_none()) {
            out.error(
                &at(k),
                "invalid-schema",
                format!("`{k}` must be a non-negative integer"),
            );
        }
    }
    for k in NUMBERS {
        if o.get(k).is_some_and(|v| !v.is_number()) {
            out.error(&at(k), "invalid-schema", format!("`{k}` must be a number"));
        }
    }
    for k in STRINGS {
        if o.get(k).is_some_and(|v| !v.is_string()) {
            out.error(&at(k), "invalid-schema", format!("`{k}` must be a string"));
        }
    }
    if let Some(r) = o.get("required") {
        let names: Option<Vec<&str>> = r
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect());
        match names {
            None => out.error(
                &at("required"),
                "invalid-schema",
                "`required` must be an array of property names",
            ),
            Some(names) => {
                let props = o.get("properties").and_then(Value::as_object);
                for (i, n) in names.iter().enumerate() {
                    if names[..i].contains(n) {
                        out.error(
                            &format!("{path}.required[{i}]"),
                            "invalid-schema",
                            format!("`{n}` is listed twice in `required`"),
                        );
                    } else if props.is_some_and(|p| !p.contains_key(*n)) {
                        out.warning(
                            &format!("{path}.required[{i}]"),
                            "required-not-declared",
                            format!("`{n}` is required but not declared in `properties`"),
                        );
                    }
                }
            }
        }
    }
    if let Some(e) = o.get("enum") {
        if e.as_array().is_none_or(|a| a.is_empty()) {
            out.error(
                &at("enum"),
                "invalid-schema",
                "`enum` must be a non-empty array",
            );
        }
    }
}
