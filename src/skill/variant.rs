//! Model-variant selection, exactly as the seed orders it: an artifact whose
//! `model_variant` is the active model's family; else the default variant (`model_variant`
//! absent, or the literal `"default"` the seed also uses); else the first by ordinal.

use super::model::SkillArtifact;

/// The model family key of a model id or provider name: `claude-…` and `anthropic` →
/// `anthropic`; `gpt-…`, `o1…`/`o3…`/`o4…`, `chatgpt-…`, `openai-chat`, `openai-responses` →
/// `openai`; `gemini-…` and `gemini` → `gemini`; anything else lower-cased as it is (a host
/// may use its own family keys).
pub fn model_family(model: &str) -> String {
    let m = model.trim().to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m).to_owned();
    let o_series =
        m.len() >= 2 && m.starts_with('o') && m.as_bytes().get(1).is_some_and(u8::is_ascii_digit);
    if m.starts_with("claude") || m == "anthropic" {
        "anthropic".into()
    } else if m.starts_with("gpt")
        || m.starts_with("chatgpt")
        || o_series
        || m.starts_with("openai")
    {
        "openai".into()
    } else if m.starts_with("gemini") || m.starts_with("gemma") {
        "gemini".into()
    } else {
        m
    }
}

/// Chooses among the variants of one artifact (rows sharing a name) for `model` (a family
/// key, a model id or a provider name): exact family, then the default, then the first by
/// ordinal (ties by id). `None` only when there are no candidates.
pub fn select_variant<'a, I>(candidates: I, model: &str) -> Option<&'a SkillArtifact>
where
    I: IntoIterator<Item = &'a SkillArtifact>,
{
    let family = model_family(model);
    let exact = |a: &SkillArtifact| {
        a.model_variant
            .as_deref()
            .filter(|v| *v != "default")
            .is_some_and(|v| {
                let v = model_family(v);
                v == family || family.starts_with(&format!("{v}-"))
            })
    };
    // Rank 0: exact family, 1: the default, 2: any; then by ordinal, name, id. One scan.
    candidates.into_iter().min_by(|a, b| {
        let rank = |x: &SkillArtifact| {
            if exact(x) {
                0
            } else if x.is_default_variant() {
                1
            } else {
                2
            }
        };
        (rank(a), a.ordinal, &a.name, &a.id).cmp(&(rank(b), b.ordinal, &b.name, &b.id))
    })
}
