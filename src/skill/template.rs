//! Skill templates (`prompt_template`, `code_template`, a MiniJinja framing): the syntax
//! check run on import, and the bounded render the composer and the dispatcher run.
//!
//! A render can neither hang nor run away: every template runs with a fuel budget (each
//! MiniJinja instruction costs fuel, so loops end), a recursion limit (recursive loops end
//! long before the wasm stack does), and an output ceiling (the writer refuses bytes past
//! it). MiniJinja itself refuses `range()` past 100 000 items and string repetition past
//! 100 MB. What no hook reaches is a chain of self-concatenations that never writes
//! (`{% set s = s ~ s %}` repeated): MiniJinja has no per-value size limit, so the render
//! runs inside an allocation budget ([`crate::budget`]) that stops such a value at
//! [`Limits::max_value`] bytes (in wasm, a trap the JS glue turns into `LimitExceeded`).
//! Shapes that would nest deeper than the wasm stack are refused before parsing
//! ([`check_shape`]).

#[cfg(feature = "composer")]
use crate::error::{Error, ErrorKind};
#[cfg(feature = "composer")]
use serde_json::Value;
use std::cell::RefCell;
#[cfg(feature = "composer")]
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

#[cfg(feature = "composer")]
/// The bounds of one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// MiniJinja fuel: roughly one unit per instruction executed.
    pub fuel: u64,
    /// The recursion limit (each nested loop, `if` or recursive `loop()` call costs one).
    pub recursion: usize,
    /// The most bytes the output may have.
    pub max_output: usize,
    /// The largest single value (string, list) the render may build, in bytes: past it
    /// the allocation is refused (see [`crate::budget`]).
    pub max_value: usize,
}

#[cfg(feature = "composer")]
impl Limits {
    /// Reads `{ fuel?, recursion?, max_output?, max_value? }` at `path` (absent fields keep
    /// their defaults); errors are of `kind`.
    pub fn from_map(
        mut o: serde_json::Map<String, Value>,
        path: &str,
        kind: ErrorKind,
    ) -> Result<Limits, Error> {
        let mut l = Limits::default();
        let mut f = crate::fields::Fields::new(&mut o, path, kind);
        if let Some(n) = f.opt_u64("fuel")? {
            l.fuel = n;
        }
        for (key, slot) in [
            ("recursion", &mut l.recursion),
            ("max_output", &mut l.max_output),
            ("max_value", &mut l.max_value),
        ] {
            if let Some(n) = f.opt_u64(key)? {
                *slot = usize::try_from(n).unwrap_or(usize::MAX);
            }
        }
        if let Some(k) = f.leftover() {
            return Err(Error::new(kind, "unknown render limit")
                .at(format!("{path}.{k}"))
                .with("known", "fuel, recursion, max_output, max_value"));
        }
        Ok(l)
    }
}

#[cfg(feature = "composer")]
impl Default for Limits {
    /// 200 000 fuel (a prompt template with a few loops uses a few thousand), recursion 64,
    /// 1 MiB of output, 32 MiB for any one value.
    fn default() -> Self {
        Limits {
            fuel: 200_000,
            recursion: 64,
            max_output: 1 << 20,
            max_value: 32 << 20,
        }
    }
}

thread_local! {
    static ENV: RefCell<minijinja::Environment<'static>> = RefCell::new(environment());
}

/// How many compiled templates a render keeps.
#[cfg(feature = "composer")]
const COMPILED: usize = 32;

#[cfg(feature = "composer")]
thread_local! {
    /// The sources of the compiled templates, oldest first.
    static COMPILED_ORDER: RefCell<std::collections::VecDeque<String>> = const { RefCell::new(std::collections::VecDeque::new()) };
}

/// Without the composer, templates are only parsed: no filters are needed.
#[cfg(not(feature = "composer"))]
fn environment() -> minijinja::Environment<'static> {
    minijinja::Environment::empty()
}

/// `title`: upper case at the start of each word, lower case elsewhere.
#[cfg(feature = "composer")]
fn title(s: &str) -> String {
    use crate::words::{fold, unfold};
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        out.push(if start { unfold(c) } else { fold(c) });
        start = !crate::words::is_word_char(c);
    }
    out
}

/// The template environment: MiniJinja's own filters, tests and `range`/`dict`, minus what
/// a prompt has no use for and what would cost every user bytes for nothing — HTML escaping
/// (`safe`, `escape`), `format` (printf), `pprint`, `urlencode`, `tojson` — and minus
/// `namespace()`, the one builtin that carries growing state across loop iterations. The
/// case filters and tests (`lower`, `upper`, `title`, `capitalize`) are this crate's, over
/// [`crate::words`] (no Unicode case tables). Only the functions named here are linked.
#[cfg(feature = "composer")]
fn environment() -> minijinja::Environment<'static> {
    use crate::words::{fold, unfold};
    use minijinja::{filters as f, functions as g, tests as t};
    let mut env = minijinja::Environment::empty();
    env.add_filter("lower", |s: &str| s.chars().map(fold).collect::<String>());
    env.add_filter("upper", |s: &str| s.chars().map(unfold).collect::<String>());
    env.add_filter("title", title);
    env.add_filter("capitalize", |s: &str| {
        let mut c = s.chars();
        c.next()
            .map(|f| {
                std::iter::once(unfold(f))
                    .chain(c.map(fold))
                    .collect::<String>()
            })
            .unwrap_or_default()
    });
    env.add_filter("replace", f::replace);
    env.add_filter("length", f::length);
    env.add_filter("count", f::length);
    env.add_filter("dictsort", f::dictsort);
    env.add_filter("items", f::items);
    env.add_filter("reverse", f::reverse);
    env.add_filter("trim", f::trim);
    env.add_filter("join", f::join);
    env.add_filter("split", f::split);
    env.add_filter("lines", f::lines);
    env.add_filter("default", f::default);
    env.add_filter("d", f::default);
    env.add_filter("round", f::round);
    env.add_filter("abs", f::abs);
    env.add_filter("int", f::int);
    env.add_filter("float", f::float);
    env.add_filter("attr", f::attr);
    env.add_filter("first", f::first);
    env.add_filter("last", f::last);
    env.add_filter("min", f::min);
    env.add_filter("max", f::max);
    env.add_filter("sort", f::sort);
    env.add_filter("list", f::list);
    env.add_filter("string", f::string);
    env.add_filter("bool", f::bool);
    env.add_filter("batch", f::batch);
    env.add_filter("slice", f::slice);
    env.add_filter("sum", f::sum);
    env.add_filter("indent", f::indent);
    env.add_filter("select", f::select);
    env.add_filter("reject", f::reject);
    env.add_filter("selectattr", f::selectattr);
    env.add_filter("rejectattr", f::rejectattr);
    env.add_filter("map", f::map);
    env.add_filter("groupby", f::groupby);
    env.add_filter("unique", f::unique);
    env.add_filter("chain", f::chain);
    env.add_filter("zip", f::zip);
    env.add_test("undefined", t::is_undefined);
    env.add_test("defined", t::is_defined);
    env.add_test("none", t::is_none);
    env.add_test("boolean", t::is_boolean);
    env.add_test("odd", t::is_odd);
    env.add_test("even", t::is_even);
    env.add_test("divisibleby", t::is_divisibleby);
    env.add_test("number", t::is_number);
    env.add_test("integer", t::is_integer);
    env.add_test("int", t::is_integer);
    env.add_test("float", t::is_float);
    env.add_test("string", t::is_string);
    env.add_test("sequence", t::is_sequence);
    env.add_test("iterable", t::is_iterable);
    env.add_test("mapping", t::is_mapping);
    env.add_test("startingwith", t::is_startingwith);
    env.add_test("endingwith", t::is_endingwith);
    env.add_test("lower", |s: &str| {
        s.chars().all(|c| unfold(c) == c || fold(c) == c) && s.chars().any(|c| unfold(c) != c)
    });
    env.add_test("upper", |s: &str| {
        s.chars().all(|c| fold(c) == c || unfold(c) == c) && s.chars().any(|c| fold(c) != c)
    });
    for (n, x) in [
        (
            "eq",
            t::is_eq as fn(&minijinja::Value, &minijinja::Value) -> bool,
        ),
        ("equalto", t::is_eq),
        ("==", t::is_eq),
        ("ne", t::is_ne),
        ("!=", t::is_ne),
        ("lt", t::is_lt),
        ("lessthan", t::is_lt),
        ("<", t::is_lt),
        ("le", t::is_le),
        ("<=", t::is_le),
        ("gt", t::is_gt),
        ("greaterthan", t::is_gt),
        (">", t::is_gt),
        ("ge", t::is_ge),
        (">=", t::is_ge),
        ("sameas", t::is_sameas),
    ] {
        env.add_test(n, x);
    }
    env.add_test("in", t::is_in);
    env.add_test("true", t::is_true);
    env.add_test("false", t::is_false);
    env.add_function("range", g::range);
    env.add_function("dict", g::dict);
    env
}

fn syntax_error(source: &str, e: &minijinja::Error) -> SyntaxError {
    // Error spans need MiniJinja's `debug` feature, which the composer brings.
    #[cfg(not(feature = "composer"))]
    let column = {
        let _ = source;
        None
    };
    #[cfg(feature = "composer")]
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

/// The most operators, filters, tests and lookups one `{{ … }}` or `{% … %}` tag may hold.
/// MiniJinja parses such chains in loops but compiles, evaluates and drops them
/// recursively, so a tag of thousands of them overflows the wasm stack; a real template
/// has a few dozen.
pub const MAX_TAG_OPERATORS: usize = 500;

/// The most `elif` branches a template may have (each nests one level deeper when
/// compiled).
pub const MAX_ELIF: usize = 500;

/// Refuses, before MiniJinja sees it, a template whose shape would nest deeper than its
/// parser's recursion limit counts: a tag with more than [`MAX_TAG_OPERATORS`] operators
/// (`1 + 1 + …`, `- - 1`, `not not x`, `x|f|f…`, `x.a.a…`, `a if b else …`) or more than
/// [`MAX_ELIF`] `elif` branches. String literals, comments and `raw` blocks are skipped.
pub fn check_shape(source: &str) -> Result<(), SyntaxError> {
    let b = source.as_bytes();
    let mut i = 0;
    let mut elifs = 0usize;
    let mut line = 1usize;
    let too_deep = |line: usize, detail: String| SyntaxError {
        line: Some(line),
        column: None,
        detail,
    };
    while i + 1 < b.len() {
        if b[i] == b'\n' {
            line += 1;
            i += 1;
            continue;
        }
        if b[i] != b'{' || !matches!(b[i + 1], b'{' | b'%' | b'#') {
            i += 1;
            continue;
        }
        let start_line = line;
        let close = match b[i + 1] {
            b'{' => b'}',
            b'%' => b'%',
            _ => b'#',
        };
        i += 2;
        if close == b'#' {
            // A comment: up to `#}`.
            while i + 1 < b.len() && !(b[i] == b'#' && b[i + 1] == b'}') {
                line += usize::from(b[i] == b'\n');
                i += 1;
            }
            i += 2;
            continue;
        }
        let mut ops = 0usize;
        let mut first_word: Option<(usize, usize)> = None;
        let mut quote: Option<u8> = None;
        while i < b.len() {
            let c = b[i];
            line += usize::from(c == b'\n');
            if let Some(q) = quote {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
                i += 1;
                continue;
            }
            if i + 1 < b.len() && c == close && b[i + 1] == b'}' {
                i += 2;
                break;
            }
            match c {
                b'"' | b'\'' => quote = Some(c),
                b'+' | b'-' | b'*' | b'/' | b'%' | b'~' | b'|' | b'.' | b'[' | b'(' | b'<'
                | b'>' | b'=' | b'!' => ops += 1,
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    let s = i;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    let word = &b[s..i];
                    if first_word.is_none() {
                        first_word = Some((s, i));
                    }
                    if matches!(
                        word,
                        b"not" | b"and" | b"or" | b"is" | b"in" | b"if" | b"else"
                    ) {
                        ops += 1;
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        if ops > MAX_TAG_OPERATORS {
            return Err(too_deep(
                start_line,
                format!("a tag chains more than {MAX_TAG_OPERATORS} operators, filters or lookups; split it with `set`"),
            ));
        }
        let word = first_word.map(|(s, e)| &b[s..e]);
        if close == b'%' && word == Some(b"elif".as_slice()) {
            elifs += 1;
            if elifs > MAX_ELIF {
                return Err(too_deep(
                    start_line,
                    format!("more than {MAX_ELIF} `elif` branches"),
                ));
            }
        }
        if close == b'%' && word == Some(b"raw".as_slice()) {
            // The body of `raw` is text up to `endraw`.
            match source.get(i..).and_then(|rest| rest.find("endraw")) {
                Some(at) => {
                    line += source[i..i + at].matches('\n').count();
                    i += at;
                }
                None => break,
            }
        }
    }
    Ok(())
}

/// Parses `source` as a MiniJinja template (the syntax the composer renders: statements,
/// expressions, filters and tests; no macros, `include`, `extends` or `import`, since a
/// skill template stands alone).
pub fn check(source: &str) -> Result<(), SyntaxError> {
    check_shape(source)?;
    ENV.with(|env| match env.borrow().template_from_str(source) {
        Ok(_) => Ok(()),
        Err(e) => Err(syntax_error(source, &e)),
    })
}

#[cfg(feature = "composer")]
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
        Value::Object(o) => minijinja::Value::from(crate::sort::map_of(
            o.iter().map(|(k, v)| (k.clone(), to_template_value(v))),
        )),
    }
}

#[cfg(feature = "composer")]
/// A writer that refuses bytes past a ceiling.
struct Capped {
    buf: Vec<u8>,
    max: usize,
    over: bool,
}

#[cfg(feature = "composer")]
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

#[cfg(feature = "composer")]
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
        // Compiled templates are kept by their source (the last COMPILED of them): a skill
        // composed again skips the parse. The output never depends on the cache.
        if env.get_template(source).is_err() {
            check_shape(source).map_err(|e| shape_error(&e, name))?;
            env.add_template_owned(source.to_owned(), source.to_owned())
                .map_err(|e| malformed(source, &e, name, "syntax", None))?;
            COMPILED_ORDER.with(|o| {
                let mut o = o.borrow_mut();
                o.push_back(source.to_owned());
                if o.len() > COMPILED {
                    if let Some(old) = o.pop_front() {
                        env.remove_template(&old);
                    }
                }
            });
        }
        let tmpl = env
            .get_template(source)
            .map_err(|e| malformed(source, &e, name, "syntax", None))?;
        let mut out = Capped {
            buf: Vec::new(),
            max: limits.max_output,
            over: false,
        };
        let ctx = to_template_value(context);
        let result = crate::budget::within(limits.max_value, || {
            tmpl.render_captured_to(ctx, &mut out).map(drop)
        });
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

#[cfg(feature = "composer")]
fn shape_error(s: &SyntaxError, name: &str) -> Error {
    let mut err = Error::new(
        ErrorKind::MalformedTemplate,
        format!(
            "the template `{name}` failed at line {}: {}",
            s.line.unwrap_or(1),
            s.detail
        ),
    )
    .with("artifact", name)
    .with("reason", "syntax")
    .with("detail", s.detail.clone());
    if let Some(l) = s.line {
        err = err.with("line", l as u64);
    }
    err
}

#[cfg(feature = "composer")]
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

#[cfg(all(test, feature = "composer"))]
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
