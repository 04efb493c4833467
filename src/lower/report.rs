//! The lowering report: what each output block came from, and every drop, fallback and
//! adjustment with its reason. Nothing is dropped silently.

use serde::Serialize;

/// One output content block: which part it came from and by which rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BlockNote {
    /// Index of the source part in `message.parts`.
    pub part: usize,
    /// The rule applied (`text`, `file-ref-text`, `attachment-image`, `attachment-descriptor`,
    /// `editor-context`, …).
    pub rule: String,
    /// The media type sent, for media blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub mime: Option<String>,
}

/// A part that produced no block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DropNote {
    /// Index of the part.
    pub part: usize,
    /// The rule applied (`text-empty`, `mention-skill`, `mention-unresolved`).
    pub rule: String,
    /// Why it is absent from the model view.
    pub reason: String,
}

/// A fallback, adjustment or drop the host should know about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Warning {
    /// Index of the part, or none (null) for options (tools, system).
    pub part: Option<usize>,
    /// A stable code (`MimeMismatch`, `UnsupportedMedia`, `TooLarge`, `RequestLimit`,
    /// `Unresolved`, `ResolverFailed`, `RangeClamped`, `UnknownPartType`,
    /// `UnresolvedMention`, `SchemaKeyDropped`, `UnrecognizedMedia`, `NotText`; for tools
    /// `ToolAsFunction` (a custom tool the provider lacks) and `ToolDropped` (another
    /// provider's own tool); for the
    /// call settings `SettingTranslated`, `SettingClamped`, `SettingDefaulted`,
    /// `SettingDropped`, `SettingInUrl`, `ModelUnknown`).
    #[cfg_attr(feature = "ts", ts(type = "WarningCode"))]
    pub code: &'static str,
    /// What happened, for a person.
    pub message: String,
}

/// Everything the lowering decided.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "LoweringReport"))]
pub struct Report {
    /// The target (`anthropic`, `openai-chat`, `openai-responses`, `gemini`).
    #[cfg_attr(feature = "ts", ts(type = "Provider"))]
    pub provider: &'static str,
    /// One note per output content block of the user turn, in order.
    pub blocks: Vec<BlockNote>,
    /// Parts that produced no block.
    pub dropped: Vec<DropNote>,
    /// Fallbacks and adjustments.
    pub warnings: Vec<Warning>,
    /// The model and streaming the request asks for (when the settings name either): the
    /// adapter builds the URL from them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Call"))]
    pub call: Option<serde_json::Value>,
}

impl Report {
    /// The report as JSON text.
    pub fn to_json(&self) -> String {
        crate::json_text::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}
