//! Measurement exports for `bench/serde-wasm-bindgen.mjs` (the `swb-bench` feature, never
//! in the package): the same JSON document crossing the boundary as text (the path every
//! face uses) or as a JS value through serde-wasm-bindgen.

use serde::Serialize;
use serde_json::Value;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    static HELD: RefCell<Value> = const { RefCell::new(Value::Null) };
}

fn size(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(size).sum::<usize>(),
        Value::Object(o) => 1 + o.values().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// In, as text: parses JSON text into a document; returns its node count.
#[wasm_bindgen(js_name = swbTextIn)]
pub fn text_in(json: &str) -> usize {
    serde_json::from_str::<Value>(json).map_or(0, |v| size(&v))
}

/// In, as a value: reads a JS value into a document; returns its node count.
#[wasm_bindgen(js_name = swbValueIn)]
pub fn value_in(v: JsValue) -> usize {
    serde_wasm_bindgen::from_value::<Value>(v).map_or(0, |v| size(&v))
}

/// Holds a document (parsed here, outside the measurement) for the out direction.
#[wasm_bindgen(js_name = swbHold)]
pub fn hold(json: &str) {
    let v = serde_json::from_str(json).unwrap_or(Value::Null);
    HELD.with(|h| *h.borrow_mut() = v);
}

/// Out, as text: the held document written as JSON text.
#[wasm_bindgen(js_name = swbTextOut)]
pub fn text_out() -> String {
    HELD.with(|h| h.borrow().to_string())
}

/// Out, as a value: the held document as a plain JS value (objects, not Maps).
#[wasm_bindgen(js_name = swbValueOut)]
pub fn value_out() -> JsValue {
    let s = serde_wasm_bindgen::Serializer::json_compatible();
    HELD.with(|h| h.borrow().serialize(&s).unwrap_or(JsValue::NULL))
}
