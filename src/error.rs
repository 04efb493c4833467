//! The one error type of the core.
//!
//! Every failure is an [`Error`]: a [`ErrorKind`] with a stable [`ErrorKind::code`] (what JS
//! sees as `error.code` and the WIT `error-code` case), its [`ErrorClass`], a human message,
//! an optional JSON path into the input, and structured details. Each boundary formats it
//! once: the JS face as a `PromptloomError`, the component as the WIT `error` record.

use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;

/// Declares [`ErrorKind`] from one list — each kind with its documentation and its
/// [`ErrorClass`] — and from it [`ErrorKind::ALL`], [`ErrorKind::code`] (the variant's name),
/// [`ErrorKind::class`], and `each_error_kind!`, which hands the list to another macro (the
/// component maps the WIT `error-code` enum with it; `tests/constants.rs` writes the
/// TypeScript union from `ALL`).
macro_rules! error_kinds {
    ($($(#[doc = $doc:literal])* $kind:ident: $class:ident,)*) => {
        /// What went wrong, as a closed set of stable codes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[doc = $doc])* $kind,)*
        }

        impl ErrorKind {
            /// Every kind, in declaration order.
            pub const ALL: [ErrorKind; [$(ErrorKind::$kind),*].len()] = [$(ErrorKind::$kind),*];

            /// The stable code: the variant's name (`InvalidMessage`, …).
            pub fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => stringify!($kind),)*
                }
            }

            /// What a caller can do about an error of this kind: the `class` of the WIT
            /// `error` record and of a JS `PromptloomError`.
            pub fn class(self) -> ErrorClass {
                match self {
                    $(ErrorKind::$kind => ErrorClass::$class,)*
                }
            }
        }

        /// Calls `$m!(Kind, …)` with every kind, in declaration order.
        #[allow(unused_macros)]
        macro_rules! each_error_kind {
            ($m:ident) => {
                $m!($($kind),*);
            };
        }
        #[allow(unused_imports)]
        pub(crate) use each_error_kind;
    };
}

error_kinds! {
    /// The message is not shaped as the spec says (not JSON, a missing field, a wrong type).
    InvalidMessage: Invalid,
    /// The lowering options are not valid (unknown provider, malformed tools, capabilities).
    InvalidOptions: Invalid,
    /// A `command` part reached the lowering stage unresolved: the model never sees `/foo`.
    UnresolvedCommand: Invalid,
    /// A `file-ref` range is malformed (start after end).
    InvalidRange: Invalid,
    /// Attachment bytes are not valid base64 or not a valid data URL.
    InvalidData: Invalid,
    /// After lowering, the user turn has no content block at all.
    EmptyMessage: Invalid,
    /// A command is malformed: unbalanced quotes in its arguments, or a catalog entry that
    /// cannot be registered.
    InvalidCommand: Invalid,
    /// A command was invoked without an argument it declares as required.
    MissingArgument: Invalid,
    /// An attachment is larger than the host allows.
    TooLarge: Invalid,
    /// A storage backend failed or holds a row this library cannot read; nothing was written.
    StoreFailed: Failed,
    /// The store has no record under the requested id.
    NotFound: Refused,
    /// A skill package, `SKILL.md` or artifact is malformed; `details.problems` lists every
    /// problem with its JSON path.
    InvalidSkill: Invalid,
    /// A record with this id or name already exists (a skill name in one scope, an artifact's
    /// name and model variant in one skill).
    AlreadyExists: Refused,
    /// A marketplace sync failed (HTTP error, malformed catalog); nothing was changed.
    SyncFailed: Failed,
    /// A compose request, dispatch request or model answer is not shaped as documented.
    InvalidRequest: Invalid,
    /// The skill package lacks a field the composer needs (name, framing, a parameter
    /// schema for the parameters given).
    MissingRequiredField: Invalid,
    /// A MiniJinja template failed to parse or render (with line and column), ran out of
    /// fuel, recursed too deep or wrote too much.
    MalformedTemplate: Invalid,
    /// The skill references a tool that is not available to this invocation.
    UnknownTool: Invalid,
    /// The invocation parameters do not match the skill's parameter schema.
    ParameterMismatch: Invalid,
    /// The selected artifacts exceed the context budget; `details.suggested_trimming` says
    /// what to drop.
    ArtifactBudgetExceeded: Invalid,
    /// The skill requires tools and none of its surface is within the caller's capabilities.
    CapabilityNarrowing: Refused,
    /// A step needs the host's model adapter and none was given.
    NoModelAdapter: Failed,
    /// An artifact needs a host executor (`code_template`: a sandbox; `dspy_module` without
    /// a fallback: a DSPy executor) and none is registered.
    NoExecutor: Failed,
    /// A hard assertion on an artifact's output failed; the skill stopped.
    AssertionFailed: Failed,
    /// A function the host passed (a model adapter, an executor, a clock, an embedder, a
    /// step's input, an observer) failed or answered in an unusable shape; the details name
    /// it (`callback`).
    AdapterFailed: Failed,
    /// Input past a named resource limit: nesting depth, the size of a value a template
    /// builds, the call stack an input needs. The details name the limit.
    LimitExceeded: Invalid,
    /// The storage backend refused a write for lack of space (IndexedDB's
    /// `QuotaExceededError`, a host store's quota); nothing was written.
    QuotaExceeded: Refused,
    /// The object was made by a wasm instance that has since been replaced (after a trap,
    /// the JS glue serves later calls from a fresh instance); make the object again.
    InstanceLost: Failed,
    /// The provider refused the request for its rate limit (HTTP 429, `rate_limit_error`, `RESOURCE_EXHAUSTED`); retryable, `details.retry_after_ms` when the provider said when.
    RateLimited: Unavailable,
    /// The provider is overloaded or unavailable (Anthropic `overloaded_error` / 529, HTTP 503, Gemini `UNAVAILABLE`); retryable.
    Overloaded: Unavailable,
    /// The provider failed on its side (HTTP 5xx, `api_error`, `server_error`, Gemini `INTERNAL`); retryable.
    ProviderError: Unavailable,
    /// The provider rejected the request as invalid (HTTP 4xx, `invalid_request_error`, `INVALID_ARGUMENT`, an exhausted quota); not retryable, `details` carry the provider's type, code and param.
    ProviderRejected: Refused,
    /// The provider refused the credentials or the permission (HTTP 401 / 403).
    AuthenticationFailed: Refused,
    /// The request is longer than the model's context window (`context_length_exceeded`, "prompt is too long").
    ContextTooLong: Invalid,
    /// A response stream or body is not what the provider sends (bytes that are not SSE, an event that is not JSON, a body of another provider); everything parsed before it is kept.
    StreamMalformed: Failed,
    /// A response stream ended before the provider's last event; everything parsed before the cut is kept.
    StreamTruncated: Failed,
    /// A tool call's streamed arguments are not valid JSON; the call keeps the raw text and the rest of the turn is kept.
    InvalidToolInput: Failed,
    /// The caller's `AbortSignal` cancelled the request, the stream or a retry wait.
    Aborted: Failed,
    /// A skill contract is malformed or breaks a registration rule; `details.problems` lists every problem with its path.
    InvalidContract: Invalid,
    /// A gateway call's input does not match the contract's input schema; `details.violations` lists them.
    InvalidInput: Invalid,
    /// The caller lacks a feature flag, tier or surface the contract requires.
    CapabilityDenied: Refused,
    /// The contract version's circuit breaker is open; `details.retry_after_ms` says when a probe is let through.
    CircuitOpen: Unavailable,
    /// The contract version was sunset before the call; pin a newer version.
    Sunset: Refused,
    /// The handler did not answer within the contract's `timeout_ms` (after the retries the policy allows).
    Timeout: Unavailable,
    /// The handler's output does not match the contract's output schema; `details.violations` lists them.
    InvalidOutput: Failed,
    /// The contract's handler failed; `details.error_code` is the code it declared (or none), `details.retry` its retry class.
    HandlerFailed: Failed,
    /// A call with the same idempotency key is still running; `details.retry_after_ms` says when to ask again.
    InFlight: Unavailable,
    /// No handler is registered for the contract (or the artifact kind).
    NoHandler: Failed,
    /// An internal invariant did not hold (a bug, never caused by input alone).
    Internal: Internal,
}

impl ErrorKind {
    /// The kind whose [`code`](ErrorKind::code) is `code`, if any.
    pub fn from_code(code: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// What a caller can do about an error: [`ErrorKind::class`]. The WIT `error` record carries
/// it beside the exact code (`error-class`).
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
    /// Every class, in declaration order.
    pub const ALL: [ErrorClass; 5] = [
        ErrorClass::Invalid,
        ErrorClass::Refused,
        ErrorClass::Unavailable,
        ErrorClass::Failed,
        ErrorClass::Internal,
    ];

    /// The class's name: the WIT `error-class` case and `error.class` in JS.
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

    /// An error of `kind` with `message` and the details of a JSON object (anything else:
    /// none), as an error's wire form or a host passes them back.
    pub fn with_details(kind: ErrorKind, message: impl Into<String>, details: Value) -> Self {
        let mut e = Error::new(kind, message);
        if let Value::Object(d) = details {
            e.details = d;
        }
        e
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
