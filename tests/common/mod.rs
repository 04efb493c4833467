//! Shared test helpers.
#![allow(dead_code)]

/// A small deterministic generator (no dependency, reproducible failures).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits (xorshift).
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// One of `xs`.
    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
}

/// Indents compact JSON text without reordering keys (so the snapshot shows the real order).
pub fn indent(json: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut in_str = false;
    let mut esc = false;
    let nl = |out: &mut String, d: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(d));
    };
    let chars: Vec<char> = json.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.get(i + 1) != Some(&close) {
                    depth += 1;
                    nl(&mut out, depth);
                }
            }
            '}' | ']' => {
                let open = if c == '}' { '{' } else { '[' };
                if i == 0 || chars[i - 1] != open {
                    depth = depth.saturating_sub(1);
                    nl(&mut out, depth);
                }
                out.push(c);
            }
            ',' => {
                out.push(c);
                nl(&mut out, depth);
            }
            ':' => out.push_str(": "),
            _ => out.push(c),
        }
    }
    out
}

/// A lowered body's snapshot: the exact body on the first line (what every host's tier
/// compares with), the body indented, then the report.
pub fn body_snapshot(body: &str, report: &impl serde::Serialize) -> String {
    format!(
        "{}\n\n{}\n\nreport:\n{}",
        body,
        indent(body),
        serde_json::to_string_pretty(report).unwrap_or_default()
    )
}

/// The package's system skills seed (`pkg/system-skills.json`).
pub const SYSTEM_SKILLS: &str = include_str!("../../pkg/system-skills.json");

/// The SkillSpecs of the package's system skills (tool-builder, skill-builder), as a store
/// seeded with them gives them.
pub fn system_specs() -> Vec<serde_json::Value> {
    promptloom::store::seed::read_seed(SYSTEM_SKILLS, "")
        .unwrap() // ok: test
        .skill_specs()
}

/// The provider of a recorded response, from its folder (`tests/response/<provider>/…`).
pub fn provider_of(path: &std::path::Path) -> promptloom::lower::Provider {
    let dir = path
        .parent()
        .and_then(std::path::Path::file_name)
        .and_then(|d| d.to_str())
        .unwrap();
    promptloom::lower::Provider::parse(dir).unwrap()
}
