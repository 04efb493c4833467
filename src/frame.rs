//! The control characters that frame text between the JS glue and wasm. None of them can
//! occur raw in JSON text (JSON escapes every character below U+0020), so a frame never
//! collides with content. The glue's `pkg/src/constants.js` is written from these values
//! (`tests/constants.rs`); ARCHITECTURE.md describes each protocol.

/// Ends a field: between the report and the body of a lowered message, between the
/// rows of a row list, between a plan's id and its requests.
pub const FIELD: char = '\u{0}';
/// Surrounds a host slot's number in a body (`\u{1}n\u{1}`): the glue splices the data
/// it held back there.
pub const SLOT: char = '\u{1}';
/// Leads a lowering answer that asks for held data inline (the slot numbers follow).
pub const NEEDS_DATA: char = '\u{2}';
/// Leads a failed message's segment (its error JSON follows).
pub const FAILED: char = '\u{3}';
/// Separates the messages of one lowering answer.
pub const NEXT: char = '\u{4}';
/// In place of the resolver answers: plan first. Leading an answer: what to ask the
/// host's resolver (`<id> FIELD <requests JSON>`).
pub const ASK: char = '\u{5}';
/// The answer when the messages a plan kept were replaced by a newer plan.
pub const LOST: char = '\u{6}';

/// Every frame, by name (the test against the JS module reads it).
pub const ALL: [(&str, char); 7] = [
    ("FIELD", FIELD),
    ("SLOT", SLOT),
    ("NEEDS_DATA", NEEDS_DATA),
    ("FAILED", FAILED),
    ("NEXT", NEXT),
    ("ASK", ASK),
    ("LOST", LOST),
];
