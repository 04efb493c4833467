//! The orchestrator decision (the seed's phase 2 entry): from the phase-1 recommendations
//! for a user message, decide whether to answer directly, activate skill(s), research, or
//! ask the user to clarify, and say which scores led there.
//!
//! The decision is deterministic and reads only the recommendations and the query:
//! - **coverage** of a recommendation is the share of the query's content terms (stemmed,
//!   stop words dropped — the terms the index ranks by) that it matched in any field; a
//!   prefix match of the last word counts.
//! - A recommendation **qualifies** for activation when it is an exact hit (a trigger
//!   phrase or its name), when its coverage reaches [`Policy::activate`], or when embeddings
//!   were blended and its similarity reaches [`Policy::similarity`].
//! - The **contenders** are the qualifying recommendations whose score is within
//!   [`Policy::margin`] of the best qualifying one (exact hits contend only with exact hits).
//!
//! | recommendations | action | reason |
//! |---|---|---|
//! | the query has no content terms and no exact hit | `direct` | `no-terms` |
//! | none | `direct` | `no-match` |
//! | contenders, at most [`Policy::max_skills`] of them | `activate` | `exact` or `scored` |
//! | more contenders than `max_skills` | `clarify` | `ambiguous` |
//! | matches, none qualifying | `research` | `weak-match` |

use crate::catalog::rank;
use crate::error::{Error, ErrorKind, Result};
use crate::fields::Fields;
use crate::json_text::JsonText;
use serde_json::{Map, Value};

/// How the decision weighs the recommendations.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The share of the query's content terms a scored recommendation must match to be
    /// activated (0–1; default 0.5).
    pub activate: f64,
    /// A qualifying recommendation scoring at least `(1 - margin)` × the best one contends
    /// with it (0–1; default 0.15).
    pub margin: f64,
    /// How many skills one decision activates at most; more contenders ask to clarify
    /// (1–10; default 1).
    pub max_skills: usize,
    /// The embedding similarity that qualifies a recommendation on its own, when embeddings
    /// were blended (0–1; default 0.8).
    pub similarity: f64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            activate: 0.5,
            margin: 0.15,
            max_skills: 1,
            similarity: 0.8,
        }
    }
}

impl Policy {
    /// Reads a policy from JSON (`{ activate?, margin?, max_skills?, similarity? }`; `null`
    /// or an empty text is the default). Out-of-range values and unknown keys are
    /// `InvalidOptions` naming the field.
    pub fn from_value(v: &Value) -> Result<Policy> {
        let mut p = Policy::default();
        let mut obj = match v {
            Value::Null => return Ok(p),
            Value::Object(o) => o.clone(),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOptions,
                    "the decision policy must be an object { activate?, margin?, max_skills?, similarity? }",
                ))
            }
        };
        let mut f = Fields::new(&mut obj, "", ErrorKind::InvalidOptions);
        for (key, slot) in [
            ("activate", &mut p.activate),
            ("margin", &mut p.margin),
            ("similarity", &mut p.similarity),
        ] {
            match f.take(key) {
                None => {}
                Some(Value::Number(n)) if n.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)) => {
                    *slot = n.as_f64().unwrap_or(*slot);
                }
                Some(_) => {
                    return Err(f.error(key, format!("`{key}` must be a number from 0 to 1")));
                }
            }
        }
        if let Some(n) = f.opt_u64("max_skills")? {
            if !(1..=10).contains(&n) {
                return Err(f.error("max_skills", "`max_skills` must be an integer from 1 to 10"));
            }
            p.max_skills = n as usize;
        }
        if let Some(k) = f.leftover() {
            let k = k.to_owned();
            return Err(f.error(
                &k,
                format!("unknown policy field `{k}` (activate, margin, max_skills, similarity)"),
            ));
        }
        Ok(p)
    }

    /// Reads a policy from JSON text (empty: the default).
    pub fn from_text(text: &str) -> Result<Policy> {
        if text.trim().is_empty() {
            return Ok(Policy::default());
        }
        let v: Value = serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorKind::InvalidOptions,
                format!("the decision policy is not JSON: {e}"),
            )
        })?;
        Policy::from_value(&v)
    }
}

/// What the orchestrator does with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Answer without a skill.
    Direct,
    /// Activate the chosen skill(s).
    Activate,
    /// The message touches the skills' topics but none clearly applies: gather context
    /// (memory, workspace search) before choosing.
    Research,
    /// Several skills apply equally: ask the user which.
    Clarify,
}

impl Action {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Action::Direct => "direct",
            Action::Activate => "activate",
            Action::Research => "research",
            Action::Clarify => "clarify",
        }
    }
}

/// One recommendation as the decision weighed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Weighed {
    /// The recommendation as phase 1 returned it (`id`, `name`, `scope`, `score`, `tier`, …).
    pub rec: Map<String, Value>,
    /// The share of the query's content terms it matched.
    pub coverage: f64,
    /// Whether it qualifies for activation.
    pub qualifies: bool,
    /// The artifacts to load first when it is activated (the run order), once known.
    pub artifacts: Option<Vec<String>>,
}

impl Weighed {
    /// The skill's name.
    pub fn name(&self) -> &str {
        self.rec.get("name").and_then(Value::as_str).unwrap_or("")
    }

    fn score(&self) -> f64 {
        self.rec.get("score").and_then(Value::as_f64).unwrap_or(0.0)
    }

    fn exact(&self) -> bool {
        self.rec.get("tier").and_then(Value::as_str) == Some("exact")
    }

    fn to_value(&self) -> Value {
        let mut o = Map::new();
        for k in [
            "id",
            "name",
            "scope",
            "score",
            "tier",
            "similarity",
            "trigger",
        ] {
            if let Some(v) = self.rec.get(k) {
                o.insert(k.into(), v.clone());
            }
        }
        o.insert("coverage".into(), round4(self.coverage).into());
        o.insert("qualifies".into(), self.qualifies.into());
        if let Some(a) = &self.artifacts {
            o.insert("artifacts".into(), a.clone().into());
        }
        Value::Object(o)
    }
}

/// The decision and what led to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// What to do.
    pub action: Action,
    /// Why (`exact`, `scored`, `ambiguous`, `weak-match`, `no-match`, `no-terms`).
    pub reason: &'static str,
    /// The skills the action is about: activated, offered to choose from, or matched
    /// partially (research); empty for a direct answer.
    pub skills: Vec<Weighed>,
    /// Every recommendation, weighed, in rank order.
    pub weighed: Vec<Weighed>,
    /// The query's content terms.
    pub terms: Vec<String>,
}

impl Decision {
    /// The JSON form `{ action, reason, skills, scores, terms }`: `skills` and `scores` list
    /// `{ id, name, scope, score, tier, coverage, qualifies, similarity?, trigger?,
    /// artifacts? }`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("action".into(), self.action.name().into());
        o.insert("reason".into(), self.reason.into());
        o.insert(
            "skills".into(),
            Value::Array(self.skills.iter().map(Weighed::to_value).collect()),
        );
        o.insert(
            "scores".into(),
            Value::Array(self.weighed.iter().map(Weighed::to_value).collect()),
        );
        o.insert("terms".into(), self.terms.clone().into());
        Value::Object(o)
    }

    /// The names of the skills to activate (empty unless the action is `activate`).
    pub fn activated(&self) -> Vec<String> {
        if self.action != Action::Activate {
            return Vec::new();
        }
        self.skills.iter().map(|s| s.name().to_owned()).collect()
    }

    /// Records the artifacts an activated skill loads first (its run order).
    pub fn set_artifacts(&mut self, name: &str, artifacts: Vec<String>) {
        if let Some(s) = self.skills.iter_mut().find(|s| s.name() == name) {
            s.artifacts = Some(artifacts);
        }
    }
}

/// Decides for `query` from its phase-1 recommendations (the JSON array a match returns).
/// A recommendation that is not an object is `InvalidRequest` naming its index.
pub fn decide(query: &str, recs: &Value, policy: &Policy) -> Result<Decision> {
    let list = recs.as_array().ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidRequest,
            "the recommendations must be the array a match returns",
        )
    })?;
    let mut terms: Vec<String> = Vec::new();
    for t in rank::terms(query) {
        if !terms.contains(&t) {
            terms.push(t);
        }
    }
    let last = terms.last().cloned();
    let mut weighed = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        let rec = r.as_object().cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                format!("recommendation {i} is not an object"),
            )
            .at(format!("[{i}]"))
        })?;
        let matched: Vec<&str> = rec
            .get("matched")
            .and_then(Value::as_object)
            .map(|m| {
                m.values()
                    .filter_map(Value::as_array)
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect()
            })
            .unwrap_or_default();
        let covered = terms
            .iter()
            .filter(|t| {
                matched.iter().any(|m| {
                    *m == t.as_str() || (last.as_ref() == Some(*t) && m.starts_with(t.as_str()))
                })
            })
            .count();
        let coverage = if terms.is_empty() {
            0.0
        } else {
            covered as f64 / terms.len() as f64
        };
        let mut w = Weighed {
            rec,
            coverage,
            qualifies: false,
            artifacts: None,
        };
        let similar = w
            .rec
            .get("similarity")
            .and_then(Value::as_f64)
            .is_some_and(|s| s >= policy.similarity);
        w.qualifies = w.exact() || (!terms.is_empty() && coverage >= policy.activate) || similar;
        weighed.push(w);
    }
    let pick = |filter: &dyn Fn(&Weighed) -> bool| -> Vec<Weighed> {
        let pool: Vec<&Weighed> = weighed.iter().filter(|w| filter(w)).collect();
        let top = pool.iter().map(|w| w.score()).fold(f64::MIN, f64::max);
        pool.into_iter()
            .filter(|w| w.score() >= top * (1.0 - policy.margin))
            .cloned()
            .collect()
    };
    let exact = pick(&|w: &Weighed| w.exact());
    let (action, reason, skills) = if !exact.is_empty() {
        if exact.len() <= policy.max_skills {
            (Action::Activate, "exact", exact)
        } else {
            (Action::Clarify, "ambiguous", exact)
        }
    } else if terms.is_empty() {
        (Action::Direct, "no-terms", Vec::new())
    } else if weighed.is_empty() {
        (Action::Direct, "no-match", Vec::new())
    } else {
        let contenders = pick(&|w: &Weighed| w.qualifies);
        if contenders.is_empty() {
            (Action::Research, "weak-match", weighed.clone())
        } else if contenders.len() <= policy.max_skills {
            (Action::Activate, "scored", contenders)
        } else {
            (Action::Clarify, "ambiguous", contenders)
        }
    };
    Ok(Decision {
        action,
        reason,
        skills,
        weighed,
        terms,
    })
}

/// [`decide`] over JSON text, for the faces: `recs` the recommendations array, `policy` a
/// policy object (empty: the default).
pub fn decide_json(query: &str, recs: &str, policy: &str) -> Result<String> {
    let recs: Value = serde_json::from_str(recs).map_err(|e| {
        Error::new(
            ErrorKind::InvalidRequest,
            format!("the recommendations are not JSON: {e}"),
        )
    })?;
    Ok(decide(query, &recs, &Policy::from_text(policy)?)?
        .to_value()
        .json_text())
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(name: &str, score: f64, tier: &str, matched: &[&str]) -> Value {
        json!({ "id": name, "name": name, "scope": "workspace", "score": score, "tier": tier,
                "matched": { "description": matched } })
    }

    fn act(q: &str, recs: Value, p: &Policy) -> (String, String, Vec<String>) {
        let d = decide(q, &recs, p).unwrap(); // ok: test
        (
            d.action.name().to_owned(),
            d.reason.to_owned(),
            d.skills.iter().map(|s| s.name().to_owned()).collect(),
        )
    }

    #[test]
    fn each_action_and_reason() {
        let p = Policy::default();
        assert_eq!(act("hello there", json!([]), &p).1, "no-match");
        assert_eq!(act("the of", json!([]), &p).1, "no-terms");
        let recs = json!([rec("pdf", 3.0, "scored", &["pdf", "invoice"])]);
        assert_eq!(
            act("summarise pdf invoice", recs.clone(), &p),
            ("activate".into(), "scored".into(), vec!["pdf".into()])
        );
        let weak = json!([rec("pdf", 3.0, "scored", &["pdf"])]);
        assert_eq!(act("convert pdf invoice to docx", weak, &p).0, "research");
        let two = json!([
            rec("a", 3.0, "scored", &["pdf", "invoice"]),
            rec("b", 2.8, "scored", &["pdf", "invoice"])
        ]);
        assert_eq!(act("pdf invoice", two.clone(), &p).1, "ambiguous");
        let two_ok = Policy {
            max_skills: 2,
            ..Policy::default()
        };
        assert_eq!(act("pdf invoice", two, &two_ok).2, vec!["a", "b"]);
        let exact = json!([
            rec("x", 1.0, "exact", &[]),
            rec("y", 9.0, "scored", &["pdf", "invoice"])
        ]);
        assert_eq!(
            act("pdf invoice", exact, &p),
            ("activate".into(), "exact".into(), vec!["x".into()])
        );
    }

    #[test]
    fn the_last_word_counts_as_a_prefix() {
        let recs = json!([rec("s", 1.0, "scored", &["summary"])]);
        let d = decide("summ", &recs, &Policy::default()).unwrap(); // ok: test
        assert_eq!(d.action, Action::Activate);
        assert_eq!(d.skills[0].coverage, 1.0);
    }

    #[test]
    fn policies_are_checked() {
        for bad in [
            json!({ "activate": 2 }),
            json!({ "max_skills": 0 }),
            json!({ "margin": "x" }),
            json!({ "other": 1 }),
            json!(3),
        ] {
            let e = Policy::from_value(&bad).unwrap_err(); // ok: test
            assert_eq!(e.kind(), ErrorKind::InvalidOptions, "{bad}");
        }
        assert_eq!(Policy::from_text("").unwrap(), Policy::default()); // ok: test
        let e = decide("q", &json!([1]), &Policy::default()).unwrap_err(); // ok: test
        assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    }
}
