//! Tool call ids in the form each provider accepts.
//!
//! | target | accepted | length |
//! |---|---|---|
//! | Anthropic | `[A-Za-z0-9_-]` | ≤ 64 (what Bedrock and Vertex take) |
//! | OpenAI Chat | `[A-Za-z0-9_-]` | ≤ 40 (longer ids are a 400) |
//! | OpenAI Responses | `[A-Za-z0-9_-]` | ≤ 64 |
//! | Gemini | ids are not sent: calls and responses match by name and order |
//!
//! An id already in the target's form is sent as it is. Any other id is mapped to its
//! accepted characters (others become `_`), cut to leave room, and given `_` and 8 hex
//! digits of the SHA-256 of the original, so the mapping is a pure function of the id
//! (byte-stable, the same in every turn and every host) and two ids cannot meet. The report
//! lists every mapping so that a host can map a provider's answer back.

use super::Provider;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

fn max_len(p: Provider) -> usize {
    p.spec().max_id_len.unwrap_or(64)
}

fn accepted(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The id to send to `provider` for the call id `id`.
pub fn provider_id(provider: Provider, id: &str) -> Cow<'_, str> {
    let max = max_len(provider);
    if !id.is_empty() && id.len() <= max && id.bytes().all(accepted) {
        return Cow::Borrowed(id);
    }
    let digest = Sha256::digest(id.as_bytes());
    let mut hex = String::with_capacity(8);
    for b in digest.iter().take(4) {
        hex.push_str(&format!("{b:02x}"));
    }
    let keep = max - 9;
    let mut out: String = id
        .chars()
        .map(|c| {
            if c.is_ascii() && accepted(c as u8) {
                c
            } else {
                '_'
            }
        })
        .take(keep)
        .collect();
    out.push('_');
    out.push_str(&hex);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_good_ids_and_maps_the_rest() {
        assert_eq!(provider_id(Provider::Anthropic, "toolu_01A"), "toolu_01A");
        let m = provider_id(Provider::Anthropic, "call.1:x");
        assert!(m.starts_with("call_1_x_") && m.len() == 17, "{m}");
        let long = "c".repeat(50);
        assert_eq!(provider_id(Provider::OpenAiResponses, &long), long.as_str());
        let m = provider_id(Provider::OpenAiChat, &long);
        assert_eq!(m.len(), 40);
        assert_ne!(provider_id(Provider::OpenAiChat, &"c".repeat(51)), m);
        assert!(provider_id(Provider::Anthropic, "é").bytes().all(accepted));
    }
}
