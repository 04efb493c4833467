//! # promptloom
//!
//! Turns multipart user messages (and, in later modules, skills) into provider-native LLM
//! requests. The core is pure Rust — no I/O, no clocks, no randomness — and is bound to
//! JavaScript (`src/js`, wasm-bindgen) and to a WASI component (`src/component`,
//! wit-bindgen); the bindings only convert and delegate.
//!
//! ```
//! use promptloom::{lower, LowerOptions, NoResolver, Provider, UserMessage};
//!
//! let msg = UserMessage::from_json(r#"{"role":"user","parts":[{"type":"text","text":"hi"}],
//!                                       "metadata":{"schema_version":1}}"#)?;
//! let out = lower(&msg, &LowerOptions::new(Provider::Anthropic), &NoResolver)?;
//! assert_eq!(out.body, r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#);
//! # Ok::<(), promptloom::Error>(())
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The surface (ARCHITECTURE.md, "The Rust surface"): the items re-exported below and the
// public modules are the API; the modules marked `#[doc(hidden)]` (the bindings' frames and
// wire forms, the allocation budget, the word tables, the fuzzing entry points) are public
// only so the JS face, the component, the fuzzers and the tests can reach them, and may
// change in any release.

pub mod agent;
#[cfg(feature = "composer")]
pub mod arbiter;
#[cfg(feature = "composer")]
pub mod artifact_run;
pub(crate) mod body;
#[doc(hidden)]
pub mod budget;
pub mod capabilities;
pub mod catalog;
pub mod chat;
#[cfg(feature = "composer")]
pub mod composer;
pub mod compositor;
pub mod conversation;
#[cfg(feature = "composer")]
pub mod dispatch;
pub mod error;
pub mod event_stream;
mod fields;
#[doc(hidden)]
pub mod frame;
#[doc(hidden)]
pub mod fuzzing;
mod fx;
#[cfg(feature = "composer")]
pub mod gateway;
mod json_scan;
#[cfg(feature = "composer")]
pub mod json_schema;
mod json_text;
pub mod limits;
pub mod lower;
pub mod media;
pub mod message;
pub mod models;
pub mod problems;
pub mod provider;
#[cfg(feature = "composer")]
pub mod registry;
pub mod response;
pub mod settings;
pub mod skill;
mod sort;
pub mod store;
pub(crate) mod stream;
pub mod transport;
pub mod turn;
pub mod versions;
#[doc(hidden)]
pub mod wire;
#[doc(hidden)]
pub mod words;

#[cfg(all(feature = "indexeddb", target_arch = "wasm32", target_os = "unknown"))]
pub mod indexeddb;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod js;

// The generated WIT glue uses `unsafe` for the canonical ABI; the module itself has none.
#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
#[allow(unsafe_code)]
mod component;

/// The wasm builds' global allocator.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
mod heap;

pub use error::{Error, ErrorClass, ErrorKind, Result};

/// The README's Rust example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of the guide for Rust apps, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/rust.md")]
pub struct RustGuideDoctests;
pub use agent::{run_agent, AgentHost, AgentOptions, AgentRun};
#[cfg(feature = "composer")]
pub use artifact_run::{run as run_artifact, ArtifactRun, RunHost, RunOptions, SkillRun};
pub use conversation::{
    lower_conversation, Conversation, ConversationOptions, LoweredConversation, Turn,
};
pub use lower::{
    lower, Capabilities, LowerOptions, Lowered, NoResolver, Provider, Report, ResolveRequest,
    Resolved, Resolver, TableResolver, Tool,
};
pub use message::{Part, UserMessage};
pub use response::{parse_response, ResponseParser};
pub use transport::{retry_delay, target, RetryPolicy, Target, TargetOptions};
