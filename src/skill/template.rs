//! Skill templates (`prompt_template`, `code_template`, a MiniJinja framing): the syntax
//! check run on import, and the bounded render the composer and the dispatcher run.
//!
//! A render can neither hang nor run away: every template runs with a fuel budget (each
//! MiniJinja instruction costs fuel, so loops end), a recursion limit (recursive loops end
//! long before the wasm stack does), and an output ceiling (the writer refuses bytes past
//! it). MiniJinja itself refuses `range()` past 100 000 items and string repetition past
//! 100 MB. What no hook reaches is a chain of self-concatenations that never writes
//! (`{% set s = s ~ s %}` repeated): MiniJinja has no per-value size limit.

use crate::error::{Error, ErrorKind};
use serde_json::Value;
use std::cell::RefCell;
use std::io;

/// Why a template does not parse: the 1-based line and column (when known) and
/// MiniJinja's detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line of the error in the template, when MiniJinja knows it.
    pub line: Option<usize>,
    /// 1-based column (in characters) of the error, when MiniJinja knows its span.
    pub column: Option<usize>,
    /// What is wrong.
    pub detail: String,
}

/// The bounds of one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// MiniJinja fuel: roughly one unit per instruction executed.
    pub fuel: u64,
    /// The recursion limit (each nested loop, `if` or recursive `loop()` call costs one).
    pub recursion: usize,
    /// The most bytes the output may have.
    pub max_output: usize,
}

impl Default for Limits {
    /// 200 000 fuel (a prompt template with a few loops uses a few thousand), recursion 64,
    /// 1 MiB of output.
    fn default() -> Self {
        Limits {
            fuel: 200_000,
            recursion: 64,
            max_output: 1 << 20,
        }
    }
}

thread_local! {
    static ENV: RefCell<minijinja::Environment<'static>> = RefCell::new(minijinja::Environment::new());
}

fn syntax_error(source: &str, e: &minijinja::Error) -> SyntaxError {
    let column = e.range().and_then(|r| {
        let before = source.get(..r.start)?;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Some(before.get(line_start..)?.chars().count() + 1)
    });
    SyntaxError {
        line: e.line(),
        column,
        detail: e
            .detail()
            .map(str::to_owned)
            .unwrap_or_else(|| e.kind().to_string()),
    }
}

/// Parses `source` as a MiniJinja template (the syntax the composer renders: statements,
/// expressions, filters and tests; no macros, `include`, `extends` or `import`, since a
/// skill template stands alone).
pub fn check(source: &str) -> Result<(), SyntaxError> {
    ENV.with(|env| match env.borrow().template_from_str(source) {
        Ok(_) => Ok(()),
        Err(e) => Err(syntax_error(source, &e)),
    })
}

/// The template context value of a JSON value.
pub fn to_template_value(v: &Value) -> minijinja::Value {
    match v {
        Value::Null => minijinja::Value::from(()),
        Value::Bool(b) => minijinja::Value::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                minijinja::Value::from(i)
            } else if let Some(u) = n.as_u64() {
                minijinja::Value::from(u)
            } else {
                minijinja::Value::from(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => minijinja::Value::from(s.as_str()),
        Value::Array(a) => {
            minijinja::Value::from(a.iter().map(to_template_value).collect::<Vec<_>>())
        }
        Value::Object(o) => minijinja::Value::from(
            o.iter()
                .map(|(k, v)| (k.clone(), to_template_value(v)))
                .collect::<std::collections::BTreeMap<String, minijinja::Value>>(),
        ),
    }
}

/// A writer that refuses bytes past a ceiling.
struct Capped {
    buf: Vec<u8>,
    max: usize,
    over: bool,
}

impl io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.buf.len() + b.len() > self.max {
            self.over = true;
            return Err(io::Error::other("output ceiling"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Renders `source` against `context` (a JSON object whose keys become template variables)
/// within `limits`. Every failure is a `MalformedTemplate` error whose details carry
/// `reason` (`syntax`, `render`, `fuel`, `recursion`, `too-large`), `line` and `column`
/// when known, and `artifact` (the `name` given here).
pub fn render(source: &str, context: &Value, limits: Limits, name: &str) -> Result<String, Error> {
    ENV.with(|cell| {
        let mut env = cell.borrow_mut();
        env.set_debug(false);
        env.set_fuel(Some(limits.fuel));
        env.set_recursion_limit(limits.recursion);
        let tmpl = env
            .template_from_str(source)
            .map_err(|e| malformed(source, &e, name, "syntax", None))?;
        let mut out = Capped {
            buf: Vec::new(),
            max: limits.max_output,
            over: false,
        };
        let ctx = to_template_value(context);
        let result = tmpl.render_captured_to(ctx, &mut out).map(drop);
        drop(tmpl);
        match result {
            Ok(()) => String::from_utf8(out.buf)
                .map_err(|_| Error::new(ErrorKind::Internal, "the template wrote invalid UTF-8")),
            Err(e) => {
                let reason = if out.over {
                    "too-large"
                } else {
                    match e.kind() {
                        minijinja::ErrorKind::OutOfFuel => "fuel",
                        minijinja::ErrorKind::InvalidOperation
                            if e.detail().is_some_and(|d| d.contains("recursion")) =>
                        {
                            "recursion"
                        }
                        _ => "render",
                    }
                };
                let extra = match reason {
                    "too-large" => Some(format!("the output exceeds {} bytes", limits.max_output)),
                    "fuel" => Some(format!(
                        "the template ran out of fuel ({} units): a loop runs too long",
                        limits.fuel
                    )),
                    "recursion" => Some(format!(
                        "the template recurses deeper than {} levels",
                        limits.recursion
                    )),
                    _ => None,
                };
                Err(malformed(source, &e, name, reason, extra))
            }
        }
    })
}

fn malformed(
    source: &str,
    e: &minijinja::Error,
    name: &str,
    reason: &str,
    message: Option<String>,
) -> Error {
    let s = syntax_error(source, e);
    let at = match (s.line, s.column) {
        (Some(l), Some(c)) => format!(" at line {l}, column {c}"),
        (Some(l), None) => format!(" at line {l}"),
        _ => String::new(),
    };
    let what = message.unwrap_or_else(|| s.detail.clone());
    let mut err = Error::new(
        ErrorKind::MalformedTemplate,
        format!("the template `{name}` failed{at}: {what}"),
    )
    .with("artifact", name)
    .with("reason", reason)
    .with("detail", s.detail);
    if let Some(l) = s.line {
        err = err.with("line", l as u64);
    }
    if let Some(c) = s.column {
        err = err.with("column", c as u64);
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reason(src: &str, ctx: Value) -> String {
        match render(src, &ctx, Limits::default(), "t") {
            Ok(s) => format!("ok:{}", s.len()),
            Err(e) => e.details()["reason"].as_str().unwrap_or("").to_owned(), // ok: test
        }
    }

    #[test]
    fn renders_loops_filters_and_conditionals() {
        let out = render(
            "{% for c in claims %}{{ loop.index }}. {{ c.text | upper }}{% if not loop.last %}\n{% endif %}{% endfor %}",
            &json!({"claims": [{"text": "a"}, {"text": "b"}]}),
            Limits::default(),
            "t",
        );
        assert_eq!(out.ok().as_deref(), Some("1. A\n2. B"));
    }

    #[test]
    fn bounded() {
        assert_eq!(
            reason(
                "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
                json!({})
            ),
            "fuel"
        );
        assert_eq!(
            reason(
                "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
                json!({})
            ),
            "recursion"
        );
        assert_eq!(reason("{{ 'x' * 5000000 }}", json!({})), "too-large");
        assert_eq!(
            reason(
                "{% for i in range(99999) %}{{ big }}{% endfor %}",
                json!({"big": "y".repeat(1000)})
            ),
            "too-large"
        );
        assert_eq!(reason("{{ 'a' * 100000001 }}", json!({})), "render");
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = render(
            "line one\n  {{ x | nosuchfilter }}",
            &json!({}),
            Limits::default(),
            "Check",
        )
        .err()
        .map(|e| e.details());
        let d = e.unwrap_or_default(); // ok: test
        assert_eq!(d["line"], 2);
        assert_eq!(d["reason"], "render");
        assert_eq!(d["column"], 10);
        let e = render("ok\n\n  {% if %}", &json!({}), Limits::default(), "Check").err();
        let d = e.map(|e| e.details()).unwrap_or_default(); // ok: test
        assert_eq!(
            (
                d["reason"].as_str(),
                d["line"].as_u64(),
                d["column"].as_u64()
            ),
            (Some("syntax"), Some(3), Some(9))
        );
        let e = check("{% for x in y %}").err();
        assert_eq!(e.map(|e| e.line), Some(Some(1)));
    }
}
