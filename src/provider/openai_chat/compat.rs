//! OpenAI-compatible servers reached through the Chat Completions dialect: what each one
//! does with the reasoning of earlier assistant turns.
//!
//! Every server's reasoning is read the same way (`reasoning_content`, `reasoning`,
//! OpenRouter's `reasoning_details`, Mistral's `thinking` content chunks; see `stream`).
//! Sending it back differs, so it follows the `compat` option (a server's name, or its base
//! URL, matched against the hosts below):
//!
//! | compat | hosts | reasoning sent back |
//! |---|---|---|
//! | `openai` (default) | `api.openai.com`, Azure | none: Chat has no field for it |
//! | `deepseek` | `api.deepseek.com` | `reasoning_content` on the assistant messages after the last user message (the tool loop in progress, where thinking mode needs it); older ones are left out |
//! | `moonshot` | `api.moonshot.ai`, `api.moonshot.cn` | `reasoning_content` on every assistant message (Kimi's thinking models keep it in context) |
//! | `openrouter` | `openrouter.ai` | `reasoning_details` on every assistant message: the items it sent, merged as they streamed (the part's `details`) |
//! | `groq` | `api.groq.com` | none: an assistant message with `reasoning` is refused |
//! | `mistral` | `api.mistral.ai` | none |
//! | `xai` | `api.x.ai` | none |
//! | `vllm`, `ollama` | any other | none: the field is ignored |
//!
//! Left out reasoning is reported (`reasoning-dropped` in the turn's report, or a
//! `ReasoningLeftOut` repair for DeepSeek's older turns).

use crate::error::{Error, ErrorKind, Result};

/// An OpenAI-compatible server's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compat {
    /// Its name (`openai`, `deepseek`, …).
    pub name: &'static str,
    /// The assistant message field reasoning goes back in, if any.
    pub(crate) field: Option<&'static str>,
    /// Only the assistant messages after the last user message get it.
    pub(crate) tool_loop_only: bool,
    /// It takes its own reasoning items (the part's `details`), not the text.
    pub(crate) details: bool,
}

/// The known servers: name, host fragments, field, tool loop only.
const SERVERS: &[(&str, &[&str], Option<&str>, bool)] = &[
    (
        "openai",
        &["api.openai.com", ".openai.azure.com"],
        None,
        false,
    ),
    (
        "deepseek",
        &["api.deepseek.com"],
        Some("reasoning_content"),
        true,
    ),
    (
        "moonshot",
        &["api.moonshot.ai", "api.moonshot.cn"],
        Some("reasoning_content"),
        false,
    ),
    (
        "openrouter",
        &["openrouter.ai"],
        Some("reasoning_details"),
        false,
    ),
    ("groq", &["api.groq.com"], None, false),
    ("mistral", &["api.mistral.ai"], None, false),
    ("xai", &["api.x.ai"], None, false),
    ("vllm", &[], None, false),
    ("ollama", &[], None, false),
];

impl Compat {
    /// A server by name (`deepseek`) or by its API base URL (`https://api.deepseek.com/v1`;
    /// an unknown host is `openai`'s rules).
    pub fn parse(s: &str) -> Result<Compat> {
        let url = s.contains("://");
        let host = s
            .split("://")
            .nth(1)
            .and_then(|r| r.split(['/', ':', '?']).next())
            .unwrap_or("");
        let row = SERVERS.iter().find(|(name, hosts, _, _)| {
            if url {
                hosts
                    .iter()
                    .any(|h| host == h.trim_start_matches('.') || host.ends_with(h))
            } else {
                *name == s
            }
        });
        match (row, url) {
            (Some(&(name, _, field, tool_loop_only)), _) => Ok(Compat {
                name,
                field,
                tool_loop_only,
                details: field == Some("reasoning_details"),
            }),
            (None, true) => Ok(Compat::OPENAI),
            (None, false) => Err(Error::new(
                ErrorKind::InvalidOptions,
                format!("unknown compat `{s}` (expected a base URL or one of openai, deepseek, moonshot, openrouter, groq, mistral, xai, vllm, ollama)"),
            )
            .at("compat")),
        }
    }

    /// OpenAI's own rules (the default).
    pub const OPENAI: Compat = Compat {
        name: "openai",
        field: None,
        tool_loop_only: false,
        details: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name_and_by_base_url() {
        let d = Compat::parse("https://api.deepseek.com/v1").unwrap(); // ok: test
        assert_eq!(
            (d.name, d.field, d.tool_loop_only),
            ("deepseek", Some("reasoning_content"), true)
        );
        assert_eq!(
            Compat::parse("moonshot").unwrap().field,
            Some("reasoning_content")
        ); // ok: test
        assert_eq!(
            Compat::parse("https://x.openai.azure.com/openai")
                .unwrap()
                .name,
            "openai"
        ); // ok: test
        assert_eq!(
            Compat::parse("http://localhost:11434/v1").unwrap(),
            Compat::OPENAI
        ); // ok: test
        assert_eq!(
            Compat::parse("https://openrouter.ai/api/v1").unwrap().name,
            "openrouter"
        ); // ok: test
        let e = Compat::parse("deepsek").unwrap_err();
        assert_eq!(e.code(), "InvalidOptions");
        // The message lists every server of the table.
        for (name, ..) in SERVERS {
            assert!(e.to_string().contains(name), "{name} missing from: {e}");
        }
    }
}
