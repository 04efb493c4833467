//! The `format` assertions the validator enforces: `date-time` and `date` (RFC 3339),
//! `email` (the HTML standard's form: a dot-atom local part, `@`, a domain of labels),
//! `uri` (RFC 3986: an absolute URI, a scheme and no spaces or control characters) and
//! `uuid` (RFC 4122's hyphenated hex form). Any other format stays an annotation, as
//! 2020-12 leaves it by default.

/// Whether `s` is a valid `format`, or `None` for a format this validator does not assert.
/// Each is a pattern for the shape (run by the validator's own regex engine and cache:
/// no code of its own), and a date's day is checked against its month.
pub fn check(format: &str, s: &str) -> Option<bool> {
    let p = pattern(format)?;
    let shaped = super::regex_is_match(p, s).unwrap_or(false);
    Some(
        shaped
            && if format.starts_with("date") {
                day_of_month(s.as_bytes())
            } else {
                // A mailbox's local part is at most 64 octets.
                format != "email" || s.rfind('@').is_some_and(|at| at <= 64)
            },
    )
}

/// The formats asserted, and the pattern of each one's shape.
const FORMATS: [(&str, &str); 5] = [
    (
        "date-time",
        r"^\d{4}-\d\d-\d\d[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$",
    ),
    ("date", r"^\d{4}-\d\d-\d\d$"),
    ("email", EMAIL),
    (
        "uri",
        r#"^[A-Za-z][A-Za-z0-9+.-]*:([^\x00-\x20"<>\\^`{|}\x7F%]|%[0-9A-Fa-f]{2})*$"#,
    ),
    (
        "uuid",
        r"^[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}$",
    ),
];

/// The pattern of a format's shape, or `None` for a format that is an annotation.
fn pattern(format: &str) -> Option<&'static str> {
    FORMATS.iter().find(|(f, _)| *f == format).map(|(_, p)| *p)
}

/// A mailbox as the HTML standard's `email` input takes one: a dot-atom local part, `@`, and
/// a domain of dot-separated labels (letters, digits, inner hyphens; at most 63 characters).
/// RFC 5321's quoted local parts and address literals are not taken.
const EMAIL: &str = r#"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"#;

/// The `YYYY-MM-DD` that begins `b` (its shape checked) names a day its month has: 29
/// February in leap years only.
fn day_of_month(b: &[u8]) -> bool {
    let n = |r: std::ops::Range<usize>| {
        b.get(r).map_or(0, |d| {
            d.iter()
                .fold(0u32, |a, c| a * 10 + u32::from(c.wrapping_sub(b'0')))
        })
    };
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => 0,
    };
    (1..=days).contains(&d)
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn the_common_formats_are_asserted() {
        let good = [
            ("date-time", "2026-12-08T02:55:00Z"),
            ("date-time", "2024-02-29t23:59:60.123+05:30"),
            ("date-time", "1999-12-31 00:00:00-00:00"),
            ("date", "2024-02-29"),
            ("email", "ada.lovelace+ai@example.co.uk"),
            ("uri", "https://example.com/a%20b?q=1#x"),
            ("uri", "urn:isbn:0451450523"),
            ("uuid", "123e4567-e89b-12d3-A456-426614174000"),
        ];
        for (f, s) in good {
            assert_eq!(check(f, s), Some(true), "{f} {s}");
        }
        let bad = [
            ("date-time", "2026-12-08"),
            ("date-time", "2026-12-08T24:00:00Z"),
            ("date-time", "2026-12-08T10:00:00"),
            ("date-time", "2026-12-08T10:00:00.Z"),
            ("date-time", "2026-12-08T10:00:00+5:30"),
            ("date", "2023-02-29"),
            ("date", "2026-13-01"),
            ("date", "2026-1-01"),
            ("email", "no-at-sign"),
            ("email", "a..b@example.com"),
            ("email", "a@-example.com"),
            ("email", "@example.com"),
            ("email", "\"quoted\"@example.com"),
            ("uri", "/relative/path"),
            ("uri", "http://exa mple.com"),
            ("uri", "1http://x"),
            ("uri", "http://x/%zz"),
            ("uuid", "123e4567e89b12d3a456426614174000"),
            ("uuid", "123e4567-e89b-12d3-a456-42661417400g"),
        ];
        for (f, s) in bad {
            assert_eq!(check(f, s), Some(false), "{f} {s}");
        }
        assert_eq!(check("hostname", "anything at all"), None);
    }
}
#[cfg(test)]
mod compile {
    #[test]
    fn every_pattern_compiles() {
        for (f, p) in super::FORMATS {
            assert!(regex_lite::Regex::new(p).is_ok(), "{f}");
        }
    }
}
