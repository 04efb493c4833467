//! The error codes are one list, in the core: the WIT `error` variant and the TypeScript
//! `ErrorCode` union must name the same codes in the same order.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::ErrorKind;

fn kebab(code: &str) -> String {
    let mut out = String::new();
    for (i, c) in code.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn wit_error_variant_matches_the_core() {
    let wit = std::fs::read_to_string("wit/world.wit").expect("wit/world.wit"); // ok: test
    let start = wit.find("variant error {").expect("the error variant"); // ok: test
    let body = &wit[start..];
    let end = body.find('}').expect("its end"); // ok: test
    let cases: Vec<String> = body[..end]
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().split('(').next().map(str::to_owned))
        .filter(|c| !c.is_empty())
        .collect();
    let core: Vec<String> = ErrorKind::ALL.iter().map(|k| kebab(k.code())).collect();
    assert_eq!(cases, core);
}

#[test]
fn typescript_error_code_matches_the_core() {
    let dts = std::fs::read_to_string("pkg/index.d.ts").expect("pkg/index.d.ts"); // ok: test
    let start = dts.find("export type ErrorCode =").expect("ErrorCode"); // ok: test
    let body = &dts[start..];
    let end = body.find(';').expect("its end"); // ok: test
    let codes: Vec<&str> = body[..end]
        .split('|')
        .skip(1)
        .map(|c| c.trim().trim_matches('\''))
        .collect();
    let core: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
    assert_eq!(codes, core);
}

#[test]
fn every_code_is_distinct() {
    let mut codes: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), ErrorKind::ALL.len());
}

/// The frames between the JS glue and wasm are written once per side: the values in
/// `pkg/src/frame.js` are the core's (`frame`), name by name.
#[test]
fn js_frames_are_the_cores() {
    let js =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pkg/src/frame.js")).unwrap(); // ok: test
    let mut seen = 0;
    for line in js.lines() {
        let Some(rest) = line.strip_prefix("export const ") else {
            continue;
        };
        let (name, value) = rest.split_once(" = ").unwrap(); // ok: test
        let hex = value
            .trim_end_matches(';')
            .trim_matches('\'')
            .trim_start_matches("\\u");
        let code = u32::from_str_radix(hex, 16).unwrap(); // ok: test
        let core = promptloom::frame::ALL.iter().find(|(n, _)| *n == name);
        assert_eq!(core.map(|(_, c)| *c as u32), Some(code), "{name}");
        seen += 1;
    }
    assert_eq!(seen, promptloom::frame::ALL.len());
}
