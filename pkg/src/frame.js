// The control characters that frame text between this glue and wasm (src/frame.rs holds
// the same values; a test keeps them equal). None can occur raw in JSON text.

/** Ends a field (report / body, rows of a row list, a plan's id / its requests). */
export const FIELD = '\u0000';
/** Surrounds a host slot's number in a body: `\u0001n\u0001`. */
export const SLOT = '\u0001';
/** Leads a lowering answer asking for held data inline. */
export const NEEDS_DATA = '\u0002';
/** Leads a failed message's segment. */
export const FAILED = '\u0003';
/** Separates the messages of one lowering answer. */
export const NEXT = '\u0004';
/** Plan first (in place of the answers); leading an answer: what to ask the resolver. */
export const ASK = '\u0005';
/** The messages a plan kept were replaced: send them again. */
export const LOST = '\u0006';
