//! Assertions on an artifact's output, read from its `metadata.assertions`: structural (a
//! JSON Schema the output, parsed as JSON, must match), length (a character, word or
//! estimated-token range), pattern (a regex that must or must not match) and semantic (a
//! yes/no question the host's model answers). A `hard` failure (the default) stops the
//! skill; a `soft` one is a warning and the skill continues.
//!
//! Evaluation is two-phase so the core stays synchronous: [`evaluate`] settles every
//! assertion it can and returns the semantic questions; the host asks its model and calls
//! [`evaluate`] again with the answers.

use crate::json_schema;
use serde_json::{json, Map, Value};

/// The outcome of one assertion.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Position in `metadata.assertions`.
    pub index: usize,
    /// `structural`, `length`, `pattern` or `semantic`.
    pub kind: String,
    /// `hard` or `soft`.
    pub severity: &'static str,
    /// What it checks, in words.
    pub description: String,
    /// `passed`, `failed`, or `pending` (a semantic question awaiting the model's answer).
    pub status: &'static str,
    /// Why it failed.
    pub explanation: Option<String>,
    /// The question for the model (semantic assertions).
    pub question: Option<String>,
}

impl Outcome {
    /// The JSON form.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("index".into(), self.index.into());
        o.insert("type".into(), self.kind.clone().into());
        o.insert("severity".into(), self.severity.into());
        o.insert("description".into(), self.description.clone().into());
        o.insert("status".into(), self.status.into());
        o.insert(
            "explanation".into(),
            self.explanation.clone().map_or(Value::Null, Value::String),
        );
        if let Some(q) = &self.question {
            o.insert("question".into(), q.clone().into());
        }
        Value::Object(o)
    }
}

/// The outcome of every assertion of an artifact.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// One outcome per assertion, in order.
    pub outcomes: Vec<Outcome>,
}

impl Report {
    /// Assertions settled (passed or failed).
    pub fn run(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.status != "pending")
            .count()
    }

    /// Assertions passed.
    pub fn passed(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.status == "passed")
            .count()
    }

    /// The first failed hard assertion.
    pub fn hard_failure(&self) -> Option<&Outcome> {
        self.outcomes
            .iter()
            .find(|o| o.status == "failed" && o.severity == "hard")
    }

    /// Semantic questions still open: `(index, question)`.
    pub fn pending(&self) -> Vec<(usize, &str)> {
        self.outcomes
            .iter()
            .filter(|o| o.status == "pending")
            .filter_map(|o| o.question.as_deref().map(|q| (o.index, q)))
            .collect()
    }

    /// The JSON form `{ run, passed, outcomes, pending }`.
    pub fn to_value(&self) -> Value {
        json!({
            "run": self.run(),
            "passed": self.passed(),
            "hard_failure": self.hard_failure().map(|o| o.index),
            "pending": self.pending().iter().map(|(i, q)| json!({"index": i, "question": q})).collect::<Vec<_>>(),
            "outcomes": self.outcomes.iter().map(Outcome::to_value).collect::<Vec<_>>(),
        })
    }
}

/// The JSON an output holds: the whole text, or the body of one fenced code block.
fn json_of(output: &str) -> Option<Value> {
    let t = output.trim();
    if let Ok(v) = serde_json::from_str(t) {
        return Some(v);
    }
    let inner = t.strip_prefix("```")?;
    let inner = inner.split_once('\n')?.1;
    let inner = inner.trim_end().strip_suffix("```")?;
    serde_json::from_str(inner).ok()
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Whether a model's answer to a yes/no question is `expected` (first word, case and
/// punctuation ignored).
pub fn answer_matches(answer: &str, expected: &str) -> bool {
    let first = |s: &str| {
        s.split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_ascii_lowercase()
    };
    first(answer) == first(expected)
}

/// Evaluates `assertions` (the artifact's `metadata.assertions`) on `output`. `answers`
/// holds the model's answers to semantic questions, by assertion index; without one, a
/// semantic assertion stays `pending`.
pub fn evaluate(assertions: Option<&Value>, output: &str, answers: &Map<String, Value>) -> Report {
    let mut outcomes = Vec::new();
    for (index, a) in assertions
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let kind = a
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let severity = if a.get("severity").and_then(Value::as_str) == Some("soft") {
            "soft"
        } else {
            "hard"
        };
        let mut description = a
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_default();
        let mut question = None;
        let result: Option<std::result::Result<(), String>> = match kind.as_str() {
            "structural" => {
                if description.is_empty() {
                    description = "the output is JSON matching the schema".into();
                }
                let schema = a.get("schema").cloned().unwrap_or(Value::Bool(true));
                Some(match json_of(output) {
                    None => Err("the output is not JSON".into()),
                    Some(v) => json_schema::validate(&schema, &v).map_err(|e| {
                        e.iter()
                            .map(|x| {
                                if x.instance_path.is_empty() {
                                    x.message.clone()
                                } else {
                                    format!("{}: {}", x.instance_path, x.message)
                                }
                            })
                            .collect::<Vec<_>>()
                            .join("; ")
                    }),
                })
            }
            "length" => {
                let check = a
                    .get("check")
                    .and_then(Value::as_str)
                    .unwrap_or("char_range");
                let (n, unit) = match check {
                    "word_range" => (words(output), "words"),
                    "token_range" => (output.chars().count().div_ceil(4), "estimated tokens"),
                    _ => (output.chars().count(), "characters"),
                };
                let min = a.get("min").and_then(Value::as_u64).map(|x| x as usize);
                let max = a.get("max").and_then(Value::as_u64).map(|x| x as usize);
                if description.is_empty() {
                    description = format!(
                        "the output has {} to {} {unit}",
                        min.map_or("0".into(), |x| x.to_string()),
                        max.map_or("any number of".into(), |x| x.to_string())
                    );
                }
                Some(
                    if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                        Err(format!("the output has {n} {unit}"))
                    } else {
                        Ok(())
                    },
                )
            }
            "pattern" => {
                let p = a.get("pattern").and_then(Value::as_str).unwrap_or("");
                let check = a.get("check").and_then(Value::as_str).unwrap_or("match");
                let must_match = !matches!(check, "no_match" | "regex_no_match" | "not_match")
                    && a.get("match") != Some(&Value::Bool(false))
                    && a.get("must_match") != Some(&Value::Bool(false));
                if description.is_empty() {
                    description = format!(
                        "the output {} /{p}/",
                        if must_match {
                            "matches"
                        } else {
                            "does not match"
                        }
                    );
                }
                Some(match regex_lite::Regex::new(p) {
                    Err(e) => Err(format!("the pattern does not compile: {e}")),
                    Ok(re) => match (re.is_match(output), must_match) {
                        (true, true) | (false, false) => Ok(()),
                        (false, true) => Err(format!("the output does not match /{p}/")),
                        (true, false) => Err(format!("the output matches /{p}/")),
                    },
                })
            }
            "semantic" => {
                let prompt = a.get("prompt").and_then(Value::as_str).unwrap_or("");
                let expected = a.get("expected").and_then(Value::as_str).unwrap_or("yes");
                if description.is_empty() {
                    description = prompt.to_owned();
                }
                question = Some(format!(
                    "{prompt}\n\nAnswer with one word: yes or no.\n\nOutput:\n{output}"
                ));
                answers
                    .get(&index.to_string())
                    .and_then(Value::as_str)
                    .map(|ans| {
                        if answer_matches(ans, expected) {
                            Ok(())
                        } else {
                            Err(format!(
                                "the model answered `{}`; expected `{expected}`",
                                ans.trim()
                            ))
                        }
                    })
            }
            other => Some(Err(format!("unknown assertion type `{other}`"))),
        };
        let (status, explanation) = match result {
            None => ("pending", None),
            Some(Ok(())) => ("passed", None),
            Some(Err(e)) => ("failed", Some(e)),
        };
        outcomes.push(Outcome {
            index,
            kind,
            severity,
            description,
            status,
            explanation,
            question,
        });
    }
    Report { outcomes }
}
