//! JSON Schema → the OpenAPI 3 subset Gemini's `functionDeclarations[].parameters` reads.
//!
//! Gemini takes `type`, `format`, `description`, `nullable`, `enum`, `properties`,
//! `required`, `items`, `anyOf` and a few bounds. Types are written as the API's `Type` enum
//! names (`OBJECT`, `STRING`, …, as `@google/genai` types them), the int64 bounds
//! (`minItems`, `maxLength`, …) as strings (proto3 JSON), type unions with `null`
//! become `nullable`, `const` becomes a one-value `enum`, and every other keyword is dropped
//! and named, so the caller can report it.

use serde_json::{Map, Value};

const KEPT: &[&str] = &[
    "description",
    "title",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "pattern",
    "default",
    "nullable",
    "example",
    "propertyOrdering",
];

/// The `Type` enum name of a JSON Schema type name.
fn type_name(t: &Value) -> Value {
    match t.as_str() {
        Some(s) => Value::String(s.to_ascii_uppercase()),
        None => t.clone(),
    }
}

const FORMATS: &[&str] = &["enum", "date-time", "float", "double", "int32", "int64"];

/// Converts one schema; `dropped` collects the JSON paths of keywords left out.
pub fn to_openapi(schema: &Value, path: &str, dropped: &mut Vec<String>) -> Value {
    let Value::Object(src) = schema else {
        // `true` / `false` schemas have no OpenAPI form.
        dropped.push(path.to_owned());
        return Value::Object(Map::new());
    };
    let mut out = Map::new();
    for (k, v) in src {
        let here = format!("{path}.{k}");
        match k.as_str() {
            "type" => match v {
                Value::String(_) => {
                    out.insert("type".into(), type_name(v));
                }
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    match non_null.as_slice() {
                        [] => {}
                        [one] => {
                            out.insert("type".into(), type_name(one));
                        }
                        many => {
                            let any = many
                                .iter()
                                .map(|t| {
                                    let mut m = Map::new();
                                    m.insert("type".into(), type_name(t));
                                    Value::Object(m)
                                })
                                .collect();
                            out.insert("anyOf".into(), Value::Array(any));
                        }
                    }
                }
                _ => dropped.push(here),
            },
            "enum" => {
                // Gemini enums are strings: `null` becomes `nullable`.
                if let Value::Array(vals) = v {
                    if vals.iter().any(Value::is_null) {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    let kept = vals.iter().filter(|x| !x.is_null()).cloned().collect();
                    out.insert(k.clone(), Value::Array(kept));
                } else {
                    dropped.push(here);
                }
            }
            "const" => {
                out.insert("enum".into(), Value::Array(vec![v.clone()]));
            }
            "format" => {
                if v.as_str().is_some_and(|f| FORMATS.contains(&f)) {
                    out.insert(k.clone(), v.clone());
                } else {
                    dropped.push(here);
                }
            }
            "properties" => {
                if let Value::Object(props) = v {
                    let conv = crate::sort::json_map_of(props.iter().map(|(name, p)| {
                        (
                            name.clone(),
                            to_openapi(p, &format!("{here}.{name}"), dropped),
                        )
                    }));
                    out.insert(k.clone(), Value::Object(conv));
                } else {
                    dropped.push(here);
                }
            }
            "items" => {
                out.insert(k.clone(), to_openapi(v, &here, dropped));
            }
            "anyOf" | "oneOf" | "allOf" => {
                if let Value::Array(list) = v {
                    let conv = list
                        .iter()
                        .enumerate()
                        .map(|(i, s)| to_openapi(s, &format!("{here}[{i}]"), dropped))
                        .collect();
                    let key = if k == "allOf" { "allOf" } else { "anyOf" };
                    out.insert(key.into(), Value::Array(conv));
                } else {
                    dropped.push(here);
                }
            }
            // int64 fields: proto3 JSON writes them as strings (`@google/genai` types them so).
            "minItems" | "maxItems" | "minLength" | "maxLength" | "minProperties"
            | "maxProperties" => match v.as_u64() {
                Some(n) => {
                    out.insert(k.clone(), Value::String(n.to_string()));
                }
                None if v.is_string() => {
                    out.insert(k.clone(), v.clone());
                }
                None => dropped.push(here),
            },
            _ if KEPT.contains(&k.as_str()) => {
                out.insert(k.clone(), v.clone());
            }
            _ => dropped.push(here),
        }
    }
    Value::Object(out)
}

/// Whether a converted schema is an object with no properties (Gemini wants none sent).
pub fn is_empty_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("OBJECT")
        && schema
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_unions_const_and_drops_the_rest() {
        let mut dropped = Vec::new();
        let out = to_openapi(
            &json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "q": {"type": ["string", "null"], "format": "uri"},
                    "n": {"type": ["integer", "string"]},
                    "m": {"const": "fast"}
                },
                "required": ["q"]
            }),
            "tools[0].parameters",
            &mut dropped,
        );
        assert_eq!(
            out,
            json!({
                "type": "OBJECT",
                "properties": {
                    "q": {"type": "STRING", "nullable": true},
                    "n": {"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}]},
                    "m": {"enum": ["fast"]}
                },
                "required": ["q"]
            })
        );
        assert_eq!(
            dropped,
            vec![
                "tools[0].parameters.$schema",
                "tools[0].parameters.additionalProperties",
                "tools[0].parameters.properties.q.format",
            ]
        );
        assert!(is_empty_object(&json!({"type": "OBJECT"})));
        assert!(!is_empty_object(
            &json!({"type": "object", "properties": {"a": {}}})
        ));
    }

    #[test]
    fn int64_bounds_are_strings() {
        let mut dropped = Vec::new();
        let out = to_openapi(
            &json!({"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "maxLength": 80}}),
            "p",
            &mut dropped,
        );
        assert_eq!(
            out,
            json!({"type": "ARRAY", "minItems": "1", "maxItems": "3", "items": {"type": "STRING", "maxLength": "80"}})
        );
        assert!(dropped.is_empty());
    }
}
