//! The model table: what each known model takes (its context window, its largest output,
//! how it reasons, whether it samples, whether it has native structured output) and what it
//! costs, as data. The settings' defaults and clamps read it (Anthropic's required
//! `max_tokens` is the model's largest output), and so does the response side's cost.
//!
//! A row matches its ids exactly, or an id followed by a dated snapshot suffix
//! (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`); Gemini's `models/` prefix is
//! ignored. An unknown model still lowers: its provider's settings are written as given,
//! with a `ModelUnknown` note, and a host describes it (or corrects a row) with the
//! `modelInfo` option. The rows are the providers' published figures as of [`DATE`]; the
//! package ships them as `pkg/src/models.json` (written from this table by
//! `tests/constants.rs`).

use crate::error::{Error, ErrorKind, Result};
use serde_json::{Map, Value};

/// The day the table's figures were read from the providers' pages.
pub const DATE: &str = "2026-11-27";

/// How a model is asked to reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// It does not reason (or cannot be asked to).
    None,
    /// A token budget (Anthropic `thinking.budget_tokens`, Gemini 2.5 `thinkingBudget`)
    /// from `min` to `max`; `off`: reasoning can be switched off.
    Budget {
        /// The smallest budget.
        min: u32,
        /// The largest budget.
        max: u32,
        /// Whether a budget of nothing (no reasoning) is accepted.
        off: bool,
    },
    /// An effort level (OpenAI `reasoning_effort` / `reasoning.effort`).
    Effort,
    /// A thinking level (Gemini 3 `thinkingLevel`).
    Level,
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    /// Input tokens.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache (0: not charged apart).
    pub cache_write: f64,
}

impl Prices {
    /// The cost in USD of a call's tokens: `input` every input token (cached ones and cache
    /// writes among them), `output` every output token.
    pub fn cost(&self, input: u64, output: u64, cached: u64, cache_write: u64) -> f64 {
        let fresh = input.saturating_sub(cached).saturating_sub(cache_write);
        let write = if self.cache_write > 0.0 {
            self.cache_write
        } else {
            self.input
        };
        let usd = fresh as f64 * self.input
            + cached as f64 * self.cache_read
            + cache_write as f64 * write
            + output as f64 * self.output;
        // Rounded to a millionth of a cent, so the figure reads the same everywhere.
        (usd / 1e6 * 1e8).round() / 1e8
    }
}

/// One model's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The ids the row matches (an alias and its older spellings).
    pub ids: &'static [&'static str],
    /// The provider family: `anthropic`, `openai` or `gemini`.
    pub family: &'static str,
    /// The context window in tokens.
    pub context_window: u32,
    /// The largest output in tokens.
    pub max_output_tokens: u32,
    /// How it reasons.
    pub reasoning: Reasoning,
    /// Whether it takes `temperature`, `top_p` and the penalties (OpenAI's reasoning
    /// models refuse them).
    pub sampling: bool,
    /// Whether it takes a JSON Schema for its answer natively (if not, Anthropic gets a
    /// forced tool).
    pub structured_output: bool,
    /// Whether it takes images and PDFs (the provider's media table applies); a text-only
    /// model gets them as descriptors, each reported.
    pub vision: bool,
    /// What it costs, where published.
    pub prices: Option<Prices>,
}

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Option<Prices> {
    Some(Prices {
        input,
        output,
        cache_read,
        cache_write,
    })
}

const CLAUDE_THINKING: Reasoning = Reasoning::Budget {
    min: 1024,
    max: 128_000,
    off: true,
};

#[allow(clippy::too_many_arguments)]
const fn row(
    ids: &'static [&'static str],
    family: &'static str,
    context_window: u32,
    max_output_tokens: u32,
    reasoning: Reasoning,
    sampling: bool,
    structured_output: bool,
    prices: Option<Prices>,
) -> Model {
    Model {
        ids,
        family,
        context_window,
        max_output_tokens,
        reasoning,
        sampling,
        structured_output,
        vision: true,
        prices,
    }
}

/// `m`, taking no images or PDFs.
const fn text_only(m: Model) -> Model {
    Model { vision: false, ..m }
}

/// The table.
pub static MODELS: &[Model] = &[
    // Anthropic.
    row(
        &["claude-opus-4-5"],
        "anthropic",
        200_000,
        64_000,
        CLAUDE_THINKING,
        true,
        true,
        p(5.0, 25.0, 0.5, 6.25),
    ),
    row(
        &["claude-sonnet-4-5"],
        "anthropic",
        200_000,
        64_000,
        CLAUDE_THINKING,
        true,
        true,
        p(3.0, 15.0, 0.3, 3.75),
    ),
    row(
        &["claude-haiku-4-5"],
        "anthropic",
        200_000,
        64_000,
        CLAUDE_THINKING,
        true,
        true,
        p(1.0, 5.0, 0.1, 1.25),
    ),
    row(
        &["claude-opus-4-1"],
        "anthropic",
        200_000,
        32_000,
        CLAUDE_THINKING,
        true,
        true,
        p(15.0, 75.0, 1.5, 18.75),
    ),
    row(
        &["claude-opus-4-0", "claude-opus-4"],
        "anthropic",
        200_000,
        32_000,
        CLAUDE_THINKING,
        true,
        false,
        p(15.0, 75.0, 1.5, 18.75),
    ),
    row(
        &["claude-sonnet-4-0", "claude-sonnet-4"],
        "anthropic",
        200_000,
        64_000,
        CLAUDE_THINKING,
        true,
        false,
        p(3.0, 15.0, 0.3, 3.75),
    ),
    row(
        &["claude-3-7-sonnet", "claude-3-7-sonnet-latest"],
        "anthropic",
        200_000,
        64_000,
        CLAUDE_THINKING,
        true,
        false,
        p(3.0, 15.0, 0.3, 3.75),
    ),
    row(
        &["claude-3-5-haiku", "claude-3-5-haiku-latest"],
        "anthropic",
        200_000,
        8_192,
        Reasoning::None,
        true,
        false,
        p(0.8, 4.0, 0.08, 1.0),
    ),
    row(
        &["claude-3-haiku"],
        "anthropic",
        200_000,
        4_096,
        Reasoning::None,
        true,
        false,
        p(0.25, 1.25, 0.03, 0.3),
    ),
    // OpenAI.
    row(
        &["gpt-5.1"],
        "openai",
        400_000,
        128_000,
        Reasoning::Effort,
        false,
        true,
        p(1.25, 10.0, 0.125, 0.0),
    ),
    row(
        &["gpt-5"],
        "openai",
        400_000,
        128_000,
        Reasoning::Effort,
        false,
        true,
        p(1.25, 10.0, 0.125, 0.0),
    ),
    row(
        &["gpt-5-mini"],
        "openai",
        400_000,
        128_000,
        Reasoning::Effort,
        false,
        true,
        p(0.25, 2.0, 0.025, 0.0),
    ),
    row(
        &["gpt-5-nano"],
        "openai",
        400_000,
        128_000,
        Reasoning::Effort,
        false,
        true,
        p(0.05, 0.4, 0.005, 0.0),
    ),
    row(
        &["gpt-5-chat-latest"],
        "openai",
        128_000,
        16_384,
        Reasoning::None,
        true,
        true,
        p(1.25, 10.0, 0.125, 0.0),
    ),
    row(
        &["gpt-4.1"],
        "openai",
        1_047_576,
        32_768,
        Reasoning::None,
        true,
        true,
        p(2.0, 8.0, 0.5, 0.0),
    ),
    row(
        &["gpt-4.1-mini"],
        "openai",
        1_047_576,
        32_768,
        Reasoning::None,
        true,
        true,
        p(0.4, 1.6, 0.1, 0.0),
    ),
    row(
        &["gpt-4.1-nano"],
        "openai",
        1_047_576,
        32_768,
        Reasoning::None,
        true,
        true,
        p(0.1, 0.4, 0.025, 0.0),
    ),
    row(
        &["gpt-4o"],
        "openai",
        128_000,
        16_384,
        Reasoning::None,
        true,
        true,
        p(2.5, 10.0, 1.25, 0.0),
    ),
    row(
        &["gpt-4o-mini"],
        "openai",
        128_000,
        16_384,
        Reasoning::None,
        true,
        true,
        p(0.15, 0.6, 0.075, 0.0),
    ),
    row(
        &["o3"],
        "openai",
        200_000,
        100_000,
        Reasoning::Effort,
        false,
        true,
        p(2.0, 8.0, 0.5, 0.0),
    ),
    row(
        &["o4-mini"],
        "openai",
        200_000,
        100_000,
        Reasoning::Effort,
        false,
        true,
        p(1.1, 4.4, 0.275, 0.0),
    ),
    // Text only: OpenAI refuses image input for o3-mini.
    text_only(row(
        &["o3-mini"],
        "openai",
        200_000,
        100_000,
        Reasoning::Effort,
        false,
        true,
        p(1.1, 4.4, 0.55, 0.0),
    )),
    row(
        &["o1"],
        "openai",
        200_000,
        100_000,
        Reasoning::Effort,
        false,
        true,
        p(15.0, 60.0, 7.5, 0.0),
    ),
    // Gemini.
    row(
        &["gemini-3-pro-preview"],
        "gemini",
        1_048_576,
        65_536,
        Reasoning::Level,
        true,
        true,
        p(2.0, 12.0, 0.2, 0.0),
    ),
    row(
        &["gemini-2.5-pro"],
        "gemini",
        1_048_576,
        65_536,
        Reasoning::Budget {
            min: 128,
            max: 32_768,
            off: false,
        },
        true,
        true,
        p(1.25, 10.0, 0.125, 0.0),
    ),
    row(
        &["gemini-2.5-flash"],
        "gemini",
        1_048_576,
        65_536,
        Reasoning::Budget {
            min: 1,
            max: 24_576,
            off: true,
        },
        true,
        true,
        p(0.3, 2.5, 0.03, 0.0),
    ),
    row(
        &["gemini-2.5-flash-lite"],
        "gemini",
        1_048_576,
        65_536,
        Reasoning::Budget {
            min: 512,
            max: 24_576,
            off: true,
        },
        true,
        true,
        p(0.1, 0.4, 0.01, 0.0),
    ),
    row(
        &["gemini-2.0-flash"],
        "gemini",
        1_048_576,
        8_192,
        Reasoning::None,
        true,
        true,
        p(0.1, 0.4, 0.025, 0.0),
    ),
    row(
        &["gemini-2.0-flash-lite"],
        "gemini",
        1_048_576,
        8_192,
        Reasoning::None,
        true,
        true,
        p(0.075, 0.3, 0.0, 0.0),
    ),
];

/// Whether `rest` (what follows a row id in a model id) is a dated snapshot:
/// `-20250929` or `-2024-08-06`.
fn dated(rest: &str) -> bool {
    let b = rest.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    match b {
        [b'-', d @ ..] if d.len() == 8 => digits(d),
        [b'-', y @ ..] if y.len() == 10 => {
            digits(&y[..4]) && y[4] == b'-' && digits(&y[5..7]) && y[7] == b'-' && digits(&y[8..])
        }
        _ => false,
    }
}

/// The row of `model` in `family`, if the table has one.
pub fn find(family: &str, model: &str) -> Option<&'static Model> {
    let id = model.strip_prefix("models/").unwrap_or(model);
    MODELS.iter().find(|m| {
        m.family == family
            && m.ids.iter().any(|r| {
                id.strip_prefix(r)
                    .is_some_and(|rest| rest.is_empty() || dated(rest))
            })
    })
}

/// The row a caller's `modelInfo` makes: `base` (the table's row, if any) with the given
/// fields over it; a field left out of an unknown model is taken as unknown (no window, no
/// output limit, no reasoning, sampling, no native structured output, no prices).
#[inline(never)]
pub(crate) fn with_info(
    base: Option<&Model>,
    family: &'static str,
    info: &Map<String, Value>,
) -> Result<Model> {
    let mut m = base.copied().unwrap_or(Model {
        ids: &[],
        family,
        context_window: 0,
        max_output_tokens: 0,
        reasoning: Reasoning::None,
        sampling: true,
        structured_output: false,
        vision: true,
        prices: None,
    });
    let count = |v: &Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
    for (k, v) in info {
        let ok = match (k.as_str(), v) {
            ("contextWindow", v) => count(v).map(|n| m.context_window = n).is_some(),
            ("maxOutputTokens", v) => count(v).map(|n| m.max_output_tokens = n).is_some(),
            ("reasoning", Value::String(r)) => {
                m.reasoning = match r.as_str() {
                    "none" => Reasoning::None,
                    "budget" => Reasoning::Budget {
                        min: 1,
                        max: u32::MAX,
                        off: true,
                    },
                    "effort" => Reasoning::Effort,
                    "level" => Reasoning::Level,
                    _ => return Err(bad(k, "\"none\", \"budget\", \"effort\" or \"level\"")),
                };
                true
            }
            ("sampling", Value::Bool(b)) => {
                m.sampling = *b;
                true
            }
            ("structuredOutput", Value::Bool(b)) => {
                m.structured_output = *b;
                true
            }
            ("vision", Value::Bool(b)) => {
                m.vision = *b;
                true
            }
            ("prices", Value::Object(p)) => {
                let price = |k: &str| {
                    p.get(k)
                        .map_or(Some(0.0), |v| v.as_f64().filter(|x| *x >= 0.0))
                };
                let known = ["input", "output", "cacheRead", "cacheWrite"];
                match [
                    price(known[0]),
                    price(known[1]),
                    price(known[2]),
                    price(known[3]),
                ] {
                    [Some(input), Some(output), Some(cache_read), Some(cache_write)]
                        if p.keys().all(|k| known.contains(&k.as_str())) =>
                    {
                        m.prices = Some(Prices {
                            input,
                            output,
                            cache_read,
                            cache_write,
                        });
                        true
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if !ok {
            return Err(bad(k, "contextWindow and maxOutputTokens (counts), reasoning (none, budget, effort, level), sampling and structuredOutput (booleans), prices ({ input, output, cacheRead, cacheWrite }: USD per million tokens)"));
        }
    }
    Ok(m)
}

fn bad(k: &str, known: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOptions,
        "a `modelInfo` field is unknown or of the wrong type",
    )
    .at(format!("modelInfo.{k}"))
    .with("known", known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_aliases_and_dated_snapshots_only() {
        let id = |m: &str, f: &str| find(f, m).map(|r| r.ids[0]);
        assert_eq!(
            id("claude-sonnet-4-5-20250929", "anthropic"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(
            id("claude-opus-4-20250514", "anthropic"),
            Some("claude-opus-4-0")
        );
        assert_eq!(id("claude-opus-4-6", "anthropic"), None);
        assert_eq!(id("gpt-4o-2024-08-06", "openai"), Some("gpt-4o"));
        assert_eq!(id("gpt-4o-mini", "openai"), Some("gpt-4o-mini"));
        assert_eq!(id("gpt-5.2", "openai"), None);
        assert_eq!(
            id("models/gemini-2.5-flash", "gemini"),
            Some("gemini-2.5-flash")
        );
        assert_eq!(id("gemini-2.5-flash", "openai"), None);
    }
}
