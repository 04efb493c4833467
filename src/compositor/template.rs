//! Command arguments and template bodies.
//!
//! The rules (where the tools users know disagree, this is the one promptloom follows):
//!
//! - Arguments split on whitespace; `"a b"` and `'a b'` are one argument; inside double
//!   quotes `\"` and `\\` are escapes. An unclosed quote is an `InvalidCommand` error.
//! - `$1`, `$2`, … are 1-based positional arguments (shell style). A `$N` with no N-th
//!   argument is empty when the command declares an N-th argument (an optional one left
//!   out), and stays in the text as typed otherwise (a `$5` in prose). A declared
//!   required argument left out is a `MissingArgument` error before expansion.
//! - `$ARGUMENTS` and its synonym `$@` are everything after the command name, verbatim.
//! - `${name}` is a declared argument by name.
//! - `\$` is a literal `$`.
//! - A body with no placeholder gets the arguments appended after a blank line.
//! - Substituted values are never expanded again (one left-to-right pass).

use crate::error::{Error, ErrorKind, Result};

/// Splits typed arguments into positional values by the quoting rules above.
pub fn split_args(raw: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_arg = false;
    let mut quote: Option<(char, usize)> = None;
    let mut chars = raw.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match quote {
            Some((q, _)) if c == q => quote = None,
            Some(('"', _)) if c == '\\' => match chars.peek() {
                Some(&(_, n @ ('"' | '\\'))) => {
                    cur.push(n);
                    chars.next();
                }
                _ => cur.push(c),
            },
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some((c, at));
                in_arg = true;
            }
            None if c.is_whitespace() => {
                if in_arg {
                    out.push(std::mem::take(&mut cur));
                    in_arg = false;
                }
            }
            None => {
                cur.push(c);
                in_arg = true;
            }
        }
    }
    if let Some((q, at)) = quote {
        return Err(Error::new(
            ErrorKind::InvalidCommand,
            format!("unbalanced quote: the {q} at character {at} is never closed"),
        )
        .with("offset", at as u64)
        .with("quote", q.to_string()));
    }
    if in_arg {
        out.push(cur);
    }
    Ok(out)
}

/// Expands a template body. `named` answers `${name}`; `positional` answers `$N`.
pub fn expand(
    body: &str,
    raw: &str,
    positional: &[String],
    declared: usize,
    named: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(body.len() + raw.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find(['$', '\\']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("\\$") {
            out.push('$');
            rest = after;
        } else if let Some(after) = tail.strip_prefix('\\') {
            out.push('\\');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("$ARGUMENTS") {
            out.push_str(raw);
            used = true;
            rest = after;
        } else if let Some(after) = tail.strip_prefix("$@") {
            out.push_str(raw);
            used = true;
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            match after.find('}') {
                Some(end) => {
                    let name = &after[..end];
                    used = true;
                    match named(name) {
                        Some(v) => out.push_str(&v),
                        None => out.push_str(&tail[..end + 3]),
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    out.push('$');
                    rest = &tail[1..];
                }
            }
        } else {
            let digits = tail[1..].bytes().take_while(u8::is_ascii_digit).count();
            let n: usize = tail[1..1 + digits].parse().unwrap_or(0);
            if digits > 0 && n >= 1 {
                used = true;
                match positional.get(n - 1) {
                    Some(v) => out.push_str(v),
                    None if n <= declared => {}
                    None => out.push_str(&tail[..1 + digits]),
                }
                rest = &tail[1 + digits..];
            } else {
                out.push('$');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    if !used && !raw.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(raw);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn quoting() {
        assert_eq!(
            split_args(r#"src/a.ts "very critical" 'x y'"#).ok(),
            Some(s(&["src/a.ts", "very critical", "x y"]))
        );
        assert_eq!(
            split_args(r#""say \"hi\"" a\b"#).ok(),
            Some(s(&["say \"hi\"", "a\\b"]))
        );
        assert_eq!(split_args(r#""" x"#).ok(), Some(s(&["", "x"])));
        assert_eq!(split_args("  ").ok(), Some(vec![]));
        let e = split_args(r#"a "b c"#).err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidCommand));
    }

    #[test]
    fn expansion_rules() {
        let none = |_: &str| None;
        let p = s(&["src/a.ts", "critical"]);
        assert_eq!(
            expand("Review $1 for $2 issues", "src/a.ts critical", &p, 0, &none),
            "Review src/a.ts for critical issues"
        );
        assert_eq!(
            expand("All: $ARGUMENTS / $@", "x y", &s(&["x", "y"]), 0, &none),
            "All: x y / x y"
        );
        // No placeholder: appended after a blank line.
        assert_eq!(
            expand("Summarise.", "the diff", &s(&["the", "diff"]), 0, &none),
            "Summarise.\n\nthe diff"
        );
        // A missing positional stays as typed; `\$` is literal; `$0` and `$x` are literal.
        assert_eq!(
            expand("$1 $3 \\$1 $0 $x", "a", &s(&["a"]), 0, &none),
            "a $3 $1 $0 $x"
        );
        // … unless the command declares a third argument (an optional one left out).
        assert_eq!(expand("$1 [$3]", "a", &s(&["a"]), 3, &none), "a []");
        // Substituted values are not expanded again.
        assert_eq!(expand("[$1]", "$2", &s(&["$2", "boom"]), 0, &none), "[$2]");
        let named = |n: &str| (n == "file").then(|| "f.ts".to_string());
        assert_eq!(
            expand("${file} ${other}", "", &[], 0, &named),
            "f.ts ${other}"
        );
        assert_eq!(
            expand("", "only args", &s(&["only", "args"]), 0, &none),
            "only args"
        );
        // Multi-digit positions.
        let ten: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
        assert_eq!(expand("$10-$1", "", &ten, 0, &none), "10-1");
    }
}
