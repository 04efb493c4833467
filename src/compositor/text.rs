//! The text front end: typed text (a TUI, a CLI flag, a voice transcript) into parts.
//!
//! - `/name args…` at the very start of the input (leading whitespace allowed) is a
//!   `command` part; everything after the name is its `args` string, verbatim.
//! - `@file:path`, `@file:path:10-25`, `@file:path:7` and `@file:"a path with spaces"` are
//!   file mentions (trailing `.,;!?)` after an unquoted path are sentence punctuation).
//! - `@skill:name` is a skill mention.
//! - `@kind` (and `@kind:value`) for a mention kind in the catalog (`@selection`, `@open`,
//!   …) is a mention of that kind. Any other `@word` (an e-mail, a decorator) stays text.
//! - A mention starts a word: it follows the start, whitespace or an opening bracket.
//! - `\@` and a leading `\/` are a literal `@` and `/`.
//! - Everything else is text, verbatim; whitespace-only text between tokens is dropped.

use super::catalog::{valid_name, CommandCatalog};
use crate::message::{Mention, Part};
use serde_json::{Map, Value};

/// Parses typed text into parts (see the module docs). Never fails: what is not a token is
/// text.
pub fn parse_input(text: &str, catalog: &CommandCatalog) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut body = text;
    let trimmed = text.trim_start();
    if let Some(after) = trimmed.strip_prefix('/') {
        let name_len = after
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':'))
            .count();
        let name = &after[..name_len];
        let rest = &after[name_len..];
        if valid_name(name) && rest.chars().next().is_none_or(char::is_whitespace) {
            let args = rest.trim();
            parts.push(Part::Command {
                id: format!("/{name}"),
                args: if args.is_empty() {
                    Value::Null
                } else {
                    Value::String(args.to_owned())
                },
                resolved: None,
            });
            return parts;
        }
    } else if let Some(after) = trimmed.strip_prefix("\\/") {
        let mut s = String::from("/");
        s.push_str(after);
        return scan(&s, catalog);
    }
    if body.is_empty() {
        body = "";
    }
    parts.extend(scan(body, catalog));
    parts
}

fn scan(text: &str, catalog: &CommandCatalog) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut buf = String::new();
    let mut i = 0;
    let b = text.as_bytes();
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && b.get(i + 1) == Some(&b'@') {
            buf.push('@');
            i += 2;
            continue;
        }
        let starts_word = i == 0
            || matches!(
                b[i - 1],
                b' ' | b'\t' | b'\n' | b'\r' | b'(' | b'[' | b'{' | b'"' | b'\''
            );
        if c == b'@' && starts_word {
            if let Some((part, used)) = mention_at(&text[i + 1..], catalog) {
                flush(&mut buf, &mut parts);
                parts.push(part);
                i += 1 + used;
                continue;
            }
        }
        // Copy one whole UTF-8 character.
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        buf.push_str(&text[i..i + len]);
        i += len;
    }
    flush(&mut buf, &mut parts);
    parts
}

fn flush(buf: &mut String, parts: &mut Vec<Part>) {
    if !buf.trim().is_empty() {
        parts.push(Part::Text {
            text: std::mem::take(buf),
        });
    }
    buf.clear();
}

fn mention(kind: &str, fields: &[(&str, Value)]) -> Part {
    let mut target = Map::new();
    target.insert("kind".into(), kind.into());
    for (k, v) in fields {
        target.insert((*k).into(), v.clone());
    }
    Part::Mention(Mention {
        kind: kind.into(),
        target,
        resolved: None,
    })
}

/// Reads a mention after its `@`; returns the part and the bytes used.
fn mention_at(s: &str, catalog: &CommandCatalog) -> Option<(Part, usize)> {
    let word_len = s
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        .count();
    let kind = &s[..word_len];
    let after = &s[word_len..];
    match kind {
        "file" => {
            let rest = after.strip_prefix(':')?;
            let (path, used) = path_token(rest)?;
            let (path, range) = split_range(&path);
            let mut fields = vec![("path", Value::String(path))];
            if let Some((start, end)) = range {
                let mut r = Map::new();
                r.insert("start".into(), start.into());
                if let Some(e) = end {
                    r.insert("end".into(), e.into());
                }
                fields.push(("range", Value::Object(r)));
            }
            Some((mention("file", &fields), word_len + 1 + used))
        }
        "skill" => {
            let rest = after.strip_prefix(':')?;
            let n = rest
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':'))
                .count();
            let name = rest[..n].trim_end_matches(['.', ':']);
            if name.is_empty() {
                return None;
            }
            Some((
                mention("skill", &[("name", name.into())]),
                word_len + 1 + name.len(),
            ))
        }
        _ => {
            let kind = kind.trim_end_matches('.');
            catalog.mention_kind(kind)?;
            let rest = &s[kind.len()..];
            if let Some(v) = rest.strip_prefix(':') {
                if let Some((id, used)) = path_token(v) {
                    return Some((mention(kind, &[("id", id.into())]), kind.len() + 1 + used));
                }
            }
            Some((mention(kind, &[]), kind.len()))
        }
    }
}

/// A path after `@file:` — quoted, or up to whitespace without trailing punctuation.
fn path_token(s: &str) -> Option<(String, usize)> {
    if let Some(q) = s.strip_prefix('"') {
        let end = q.find('"')?;
        let inner = &q[..end];
        // A range may follow the closing quote: `@file:"a b.ts":3-4`.
        let tail = &q[end + 1..];
        let rlen = range_suffix_len(tail);
        let mut p = inner.to_owned();
        p.push_str(&tail[..rlen]);
        return (!inner.is_empty()).then_some((p, end + 2 + rlen));
    }
    let n = s.find(char::is_whitespace).unwrap_or(s.len());
    let token = s[..n].trim_end_matches(['.', ',', ';', '!', '?', ')', ']', '}', '"', '\'']);
    (!token.is_empty()).then(|| (token.to_owned(), token.len()))
}

/// The length of a `:a-b` / `:a` suffix at the start of `s`.
fn range_suffix_len(s: &str) -> usize {
    let Some(r) = s.strip_prefix(':') else {
        return 0;
    };
    let a = r.bytes().take_while(u8::is_ascii_digit).count();
    if a == 0 {
        return 0;
    }
    let rest = &r[a..];
    let b = rest
        .strip_prefix('-')
        .map_or(0, |x| x.bytes().take_while(u8::is_ascii_digit).count());
    1 + a + if b > 0 { 1 + b } else { 0 }
}

/// Splits `path:10-25` / `path:7` into the path and a line range.
fn split_range(token: &str) -> (String, Option<(u64, Option<u64>)>) {
    if let Some(colon) = token.rfind(':') {
        let (path, spec) = (&token[..colon], &token[colon + 1..]);
        let (a, b) = match spec.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (spec, None),
        };
        let start = a.parse::<u64>().ok();
        let end = b.map(|x| x.parse::<u64>().ok());
        if let (Some(start), false, false) = (start, path.is_empty(), matches!(end, Some(None))) {
            return (path.to_owned(), Some((start, end.flatten())));
        }
    }
    (token.to_owned(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        let cat = CommandCatalog::with_builtins();
        Value::Array(parse_input(s, &cat).iter().map(Part::to_value).collect())
    }

    #[test]
    fn commands_and_mentions() {
        assert_eq!(
            parse("/review src/a.ts critical").to_string(),
            r#"[{"args":"src/a.ts critical","id":"/review","type":"command"}]"#
        );
        assert_eq!(
            parse("  /compact").to_string(),
            r#"[{"id":"/compact","type":"command"}]"#
        );
        assert_eq!(
            parse("fix @file:src/a.ts:10-25, then @selection please").to_string(),
            r#"[{"text":"fix ","type":"text"},{"target":{"kind":"file","path":"src/a.ts","range":{"end":25,"start":10}},"type":"mention"},{"text":", then ","type":"text"},{"target":{"kind":"selection"},"type":"mention"},{"text":" please","type":"text"}]"#
        );
        assert_eq!(
            parse("use @skill:pdf-tools.").to_string(),
            r#"[{"text":"use ","type":"text"},{"target":{"kind":"skill","name":"pdf-tools"},"type":"mention"},{"text":".","type":"text"}]"#
        );
        assert_eq!(
            parse(r#"@file:"my docs/a b.md":3"#).to_string(),
            r#"[{"target":{"kind":"file","path":"my docs/a b.md","range":{"start":3}},"type":"mention"}]"#
        );
    }

    #[test]
    fn text_stays_text() {
        // E-mails, decorators, unknown kinds, escapes, a slash that is not at the start.
        assert_eq!(
            parse(r"mail a@b.com, @Override @nobody \@selection and a/b /x").to_string(),
            r#"[{"text":"mail a@b.com, @Override @nobody @selection and a/b /x","type":"text"}]"#
        );
        assert_eq!(
            parse(r"\/compact is a command").to_string(),
            r#"[{"text":"/compact is a command","type":"text"}]"#
        );
        assert_eq!(
            parse("/ not a command").to_string(),
            r#"[{"text":"/ not a command","type":"text"}]"#
        );
        assert_eq!(
            parse("@file: nothing").to_string(),
            r#"[{"text":"@file: nothing","type":"text"}]"#
        );
        assert_eq!(parse("").to_string(), "[]");
        assert_eq!(
            parse("é @selection ü").to_string(),
            r#"[{"text":"é ","type":"text"},{"target":{"kind":"selection"},"type":"mention"},{"text":" ü","type":"text"}]"#
        );
    }
}
