//! The one error type of the core.
//!
//! Every failure is an [`Error`]: a [`ErrorKind`] with a stable [`ErrorKind::code`] (what JS
//! sees as `error.code` and what the WIT `error` variant is named after), a human message,
//! an optional JSON path into the input, and structured details. Each boundary formats it
//! once: the JS face as an `Error` object, the component as a WIT variant.

use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;

/// What went wrong, as a closed set of stable codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The message is not shaped as the spec says (not JSON, a missing field, a wrong type).
    InvalidMessage,
    /// The lowering options are not valid (unknown provider, malformed tools, capabilities).
    InvalidOptions,
    /// A `command` part reached the lowering stage unresolved: the model never sees `/foo`.
    UnresolvedCommand,
    /// A `file-ref` range is malformed (start after end).
    InvalidRange,
    /// Attachment bytes are not valid base64 or not a valid data URL.
    InvalidData,
    /// After lowering, the user turn has no content block at all.
    EmptyMessage,
    /// A command is malformed: unbalanced quotes in its arguments, or a catalog entry that
    /// cannot be registered.
    InvalidCommand,
    /// A command was invoked without an argument it declares as required.
    MissingArgument,
    /// An attachment is larger than the host allows.
    TooLarge,
    /// A storage backend failed or holds a row this library cannot read; nothing was written.
    StoreFailed,
    /// The store has no record under the requested id.
    NotFound,
    /// A skill package, `SKILL.md` or artifact is malformed; `details.problems` lists every
    /// problem with its JSON path.
    InvalidSkill,
    /// A record with this id or name already exists (a skill name in one scope, an artifact's
    /// name and model variant in one skill).
    AlreadyExists,
    /// A marketplace sync failed (HTTP error, malformed catalog); nothing was changed.
    SyncFailed,
    /// A compose request, dispatch request or model answer is not shaped as documented.
    InvalidRequest,
    /// The skill package lacks a field the composer needs (name, framing, a parameter
    /// schema for the parameters given).
    MissingRequiredField,
    /// A MiniJinja template failed to parse or render (with line and column), ran out of
    /// fuel, recursed too deep or wrote too much.
    MalformedTemplate,
    /// The skill references a tool that is not available to this invocation.
    UnknownTool,
    /// The invocation parameters do not match the skill's parameter schema.
    ParameterMismatch,
    /// The selected artifacts exceed the context budget; `details.suggested_trimming` says
    /// what to drop.
    ArtifactBudgetExceeded,
    /// The skill requires tools and none of its surface is within the caller's capabilities.
    CapabilityNarrowing,
    /// A step needs the host's model adapter and none was given.
    NoModelAdapter,
    /// An artifact needs a host executor (`code_template`: a sandbox; `dspy_module` without
    /// a fallback: a DSPy executor) and none is registered.
    NoExecutor,
    /// A hard assertion on an artifact's output failed; the skill stopped.
    AssertionFailed,
    /// The host's model adapter or executor failed or answered in an unusable shape.
    AdapterFailed,
    /// Input past a named resource limit: nesting depth, the size of a value a template
    /// builds, the call stack an input needs. The details name the limit.
    LimitExceeded,
    /// The storage backend refused a write for lack of space (IndexedDB's
    /// `QuotaExceededError`, a host store's quota); nothing was written.
    QuotaExceeded,
    /// The object was made by a wasm instance that has since been replaced (after a trap,
    /// the JS glue serves later calls from a fresh instance); make the object again.
    InstanceLost,
    /// The provider refused the request for its rate limit (HTTP 429, `rate_limit_error`, `RESOURCE_EXHAUSTED`); retryable, `details.retry_after_ms` when the provider said when.
    RateLimited,
    /// The provider is overloaded or unavailable (Anthropic `overloaded_error` / 529, HTTP 503, Gemini `UNAVAILABLE`); retryable.
    Overloaded,
    /// The provider failed on its side (HTTP 5xx, `api_error`, `server_error`, Gemini `INTERNAL`); retryable.
    ProviderError,
    /// The provider rejected the request as invalid (HTTP 4xx, `invalid_request_error`, `INVALID_ARGUMENT`, an exhausted quota); not retryable, `details` carry the provider's type, code and param.
    ProviderRejected,
    /// The provider refused the credentials or the permission (HTTP 401 / 403).
    AuthenticationFailed,
    /// The request is longer than the model's context window (`context_length_exceeded`, "prompt is too long").
    ContextTooLong,
    /// A response stream or body is not what the provider sends (bytes that are not SSE, an event that is not JSON, a body of another provider); everything parsed before it is kept.
    StreamMalformed,
    /// A response stream ended before the provider's last event; everything parsed before the cut is kept.
    StreamTruncated,
    /// A tool call's streamed arguments are not valid JSON; the call keeps the raw text and the rest of the turn is kept.
    InvalidToolInput,
    /// The caller's `AbortSignal` cancelled the request, the stream or a retry wait.
    Aborted,
    /// A skill contract is malformed or breaks a registration rule; `details.problems` lists every problem with its path.
    InvalidContract,
    /// A gateway call's input does not match the contract's input schema; `details.violations` lists them.
    InvalidInput,
    /// The caller lacks a feature flag, tier or surface the contract requires.
    CapabilityDenied,
    /// The contract version's circuit breaker is open; `details.retry_after_ms` says when a probe is let through.
    CircuitOpen,
    /// The contract version was sunset before the call; pin a newer version.
    Sunset,
    /// The handler did not answer within the contract's `timeout_ms` (after the retries the policy allows).
    Timeout,
    /// The handler's output does not match the contract's output schema; `details.violations` lists them.
    InvalidOutput,
    /// The contract's handler failed; `details.error_code` is the code it declared (or none), `details.retry` its retry class.
    HandlerFailed,
    /// A call with the same idempotency key is still running; `details.retry_after_ms` says when to ask again.
    InFlight,
    /// No handler is registered for the contract (or the artifact kind).
    NoHandler,
    /// An internal invariant did not hold (a bug, never caused by input alone).
    Internal,
}

impl ErrorKind {
    /// The stable code string (`error.code` in JS, the variant name in WIT is its kebab form).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidMessage => "InvalidMessage",
            ErrorKind::InvalidOptions => "InvalidOptions",
            ErrorKind::UnresolvedCommand => "UnresolvedCommand",
            ErrorKind::InvalidRange => "InvalidRange",
            ErrorKind::InvalidData => "InvalidData",
            ErrorKind::EmptyMessage => "EmptyMessage",
            ErrorKind::InvalidCommand => "InvalidCommand",
            ErrorKind::MissingArgument => "MissingArgument",
            ErrorKind::TooLarge => "TooLarge",
            ErrorKind::StoreFailed => "StoreFailed",
            ErrorKind::NotFound => "NotFound",
            ErrorKind::InvalidSkill => "InvalidSkill",
            ErrorKind::AlreadyExists => "AlreadyExists",
            ErrorKind::SyncFailed => "SyncFailed",
            ErrorKind::InvalidRequest => "InvalidRequest",
            ErrorKind::MissingRequiredField => "MissingRequiredField",
            ErrorKind::MalformedTemplate => "MalformedTemplate",
            ErrorKind::UnknownTool => "UnknownTool",
            ErrorKind::ParameterMismatch => "ParameterMismatch",
            ErrorKind::ArtifactBudgetExceeded => "ArtifactBudgetExceeded",
            ErrorKind::CapabilityNarrowing => "CapabilityNarrowing",
            ErrorKind::NoModelAdapter => "NoModelAdapter",
            ErrorKind::NoExecutor => "NoExecutor",
            ErrorKind::AssertionFailed => "AssertionFailed",
            ErrorKind::AdapterFailed => "AdapterFailed",
            ErrorKind::LimitExceeded => "LimitExceeded",
            ErrorKind::QuotaExceeded => "QuotaExceeded",
            ErrorKind::InstanceLost => "InstanceLost",
            ErrorKind::RateLimited => "RateLimited",
            ErrorKind::Overloaded => "Overloaded",
            ErrorKind::ProviderError => "ProviderError",
            ErrorKind::ProviderRejected => "ProviderRejected",
            ErrorKind::AuthenticationFailed => "AuthenticationFailed",
            ErrorKind::ContextTooLong => "ContextTooLong",
            ErrorKind::StreamMalformed => "StreamMalformed",
            ErrorKind::StreamTruncated => "StreamTruncated",
            ErrorKind::InvalidToolInput => "InvalidToolInput",
            ErrorKind::Aborted => "Aborted",
            ErrorKind::InvalidContract => "InvalidContract",
            ErrorKind::InvalidInput => "InvalidInput",
            ErrorKind::CapabilityDenied => "CapabilityDenied",
            ErrorKind::CircuitOpen => "CircuitOpen",
            ErrorKind::Sunset => "Sunset",
            ErrorKind::Timeout => "Timeout",
            ErrorKind::InvalidOutput => "InvalidOutput",
            ErrorKind::HandlerFailed => "HandlerFailed",
            ErrorKind::InFlight => "InFlight",
            ErrorKind::NoHandler => "NoHandler",
            ErrorKind::Internal => "Internal",
        }
    }

    /// The kind whose [`code`](ErrorKind::code) is `code`, if any.
    pub fn from_code(code: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// What a caller can do about an error of this kind: the case of the WIT `error`
    /// variant it travels in.
    pub fn class(self) -> ErrorClass {
        use ErrorKind::*;
        match self {
            InvalidMessage
            | InvalidOptions
            | UnresolvedCommand
            | InvalidRange
            | InvalidData
            | EmptyMessage
            | InvalidCommand
            | MissingArgument
            | TooLarge
            | InvalidSkill
            | InvalidRequest
            | MissingRequiredField
            | MalformedTemplate
            | UnknownTool
            | ParameterMismatch
            | ArtifactBudgetExceeded
            | LimitExceeded
            | ContextTooLong
            | InvalidContract
            | InvalidInput => ErrorClass::Invalid,
            NotFound | AlreadyExists | CapabilityNarrowing | CapabilityDenied | Sunset
            | QuotaExceeded | AuthenticationFailed | ProviderRejected => ErrorClass::Refused,
            RateLimited | Overloaded | ProviderError | Timeout | CircuitOpen | InFlight => {
                ErrorClass::Unavailable
            }
            StoreFailed | SyncFailed | NoModelAdapter | NoExecutor | NoHandler | AdapterFailed
            | HandlerFailed | AssertionFailed | InvalidOutput | StreamMalformed
            | StreamTruncated | InvalidToolInput | Aborted | InstanceLost => ErrorClass::Failed,
            Internal => ErrorClass::Internal,
        }
    }

    /// Every kind, in the order of the WIT `error-code` enum and the TypeScript `ErrorCode`
    /// union (a test keeps the three lists equal).
    pub const ALL: [ErrorKind; 49] = [
        ErrorKind::InvalidMessage,
        ErrorKind::InvalidOptions,
        ErrorKind::UnresolvedCommand,
        ErrorKind::InvalidRange,
        ErrorKind::InvalidData,
        ErrorKind::EmptyMessage,
        ErrorKind::InvalidCommand,
        ErrorKind::MissingArgument,
        ErrorKind::TooLarge,
        ErrorKind::StoreFailed,
        ErrorKind::NotFound,
        ErrorKind::InvalidSkill,
        ErrorKind::AlreadyExists,
        ErrorKind::SyncFailed,
        ErrorKind::InvalidRequest,
        ErrorKind::MissingRequiredField,
        ErrorKind::MalformedTemplate,
        ErrorKind::UnknownTool,
        ErrorKind::ParameterMismatch,
        ErrorKind::ArtifactBudgetExceeded,
        ErrorKind::CapabilityNarrowing,
        ErrorKind::NoModelAdapter,
        ErrorKind::NoExecutor,
        ErrorKind::AssertionFailed,
        ErrorKind::AdapterFailed,
        ErrorKind::LimitExceeded,
        ErrorKind::QuotaExceeded,
        ErrorKind::InstanceLost,
        ErrorKind::RateLimited,
        ErrorKind::Overloaded,
        ErrorKind::ProviderError,
        ErrorKind::ProviderRejected,
        ErrorKind::AuthenticationFailed,
        ErrorKind::ContextTooLong,
        ErrorKind::StreamMalformed,
        ErrorKind::StreamTruncated,
        ErrorKind::InvalidToolInput,
        ErrorKind::Aborted,
        ErrorKind::InvalidContract,
        ErrorKind::InvalidInput,
        ErrorKind::CapabilityDenied,
        ErrorKind::CircuitOpen,
        ErrorKind::Sunset,
        ErrorKind::Timeout,
        ErrorKind::InvalidOutput,
        ErrorKind::HandlerFailed,
        ErrorKind::InFlight,
        ErrorKind::NoHandler,
        ErrorKind::Internal,
    ];
}

/// What a caller can do about an error: [`ErrorKind::class`]. The WIT `error` variant has
/// one case per class, each carrying the exact code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The input breaks its documented shape or a limit: the same call fails the same way
    /// until the input changes.
    Invalid,
    /// Well-formed, but the state or a policy refuses it (not found, already exists, a
    /// capability, a sunset version, a quota, credentials, the provider's rejection).
    Refused,
    /// Unavailable for now: the same call may succeed later (`details.retry_after_ms`
    /// when known).
    Unavailable,
    /// Something the host plugged in (or did not), or a response stream, failed.
    Failed,
    /// An internal invariant did not hold: a bug, never caused by input alone.
    Internal,
}

impl ErrorClass {
    /// The class's name: the WIT `error` variant's case and `error.class` in JS.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Invalid => "invalid",
            ErrorClass::Refused => "refused",
            ErrorClass::Unavailable => "unavailable",
            ErrorClass::Failed => "failed",
            ErrorClass::Internal => "internal",
        }
    }
}

/// A failure with a stable code, a message, an optional JSON path and structured details.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<String>,
    details: Map<String, Value>,
}

impl Error {
    /// The error for text that does not parse as JSON: `kind` with `what` and serde's
    /// reason (line and column), a hint for a lone UTF-16 surrogate, and `LimitExceeded`
    /// (details `limit: "depth"`) for nesting past the parser's depth limit (128).
    pub fn json(kind: ErrorKind, what: &str, e: &serde_json::Error) -> Self {
        let reason = e.to_string();
        if reason.starts_with("recursion limit exceeded") {
            return Error::new(
                ErrorKind::LimitExceeded,
                format!("{what} nests deeper than 128 levels ({reason})"),
            )
            .with("limit", "depth");
        }
        let hint = if reason.contains("surrogate") || reason.contains("hex escape") {
            " (a string holds half of a UTF-16 surrogate pair; text must be well-formed Unicode)"
        } else {
            ""
        };
        Error::new(kind, format!("{what} is not valid JSON: {reason}{hint}"))
    }

    /// A new error of `kind` with a human-readable `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            path: None,
            details: Map::new(),
        }
    }

    /// Sets the JSON path (e.g. `parts[3].ref.range`) of the offending input.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Puts `prefix` in front of the JSON path (`turns[3]` + `parts[1].call_id` →
    /// `turns[3].parts[1].call_id`), or sets it when there is none.
    pub fn within(mut self, prefix: &str) -> Self {
        self.path = Some(match self.path.take() {
            Some(p) if p == "$" || p.is_empty() => prefix.to_owned(),
            Some(p) if p.starts_with('[') => format!("{prefix}{p}"),
            Some(p) => format!("{prefix}.{p}"),
            None => prefix.to_owned(),
        });
        self
    }

    /// Adds one structured detail.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code (`InvalidMessage`, `UnresolvedCommand`, …).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The human-readable message (without the path).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON path of the offending input, when known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Structured details (always an object; `path` is included when known).
    pub fn details(&self) -> Value {
        let mut d = self.details.clone();
        if let Some(p) = &self.path {
            d.insert("path".into(), Value::String(p.clone()));
        }
        Value::Object(d)
    }

    /// The error as one JSON object `{code, message, details}` — the wire form the bindings use.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Wire<'a> {
            code: &'a str,
            message: String,
            details: Value,
        }
        let wire = Wire {
            code: self.code(),
            message: self.to_string(),
            details: self.details(),
        };
        crate::json_text::to_string(&wire).unwrap_or_else(|_| {
            String::from(
                r#"{"code":"Internal","message":"error serialization failed","details":{}}"#,
            )
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{} (at {})", self.message, p),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// The core's result type.
pub type Result<T> = std::result::Result<T, Error>;
