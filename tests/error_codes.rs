//! The error codes are one list, in the core: the WIT `error-code` enum and the TypeScript
//! `ErrorCode` union must name the same codes in the same order, and the WIT
//! `error-class` enum has one case per [`ErrorClass`].
#![cfg(not(target_arch = "wasm32"))]

use promptloom::{ErrorClass, ErrorKind};

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

/// The cases of a WIT `variant` or `enum` (doc comments skipped, payloads cut).
fn wit_cases(wit: &str, head: &str) -> Vec<String> {
    let start = wit.find(head).expect(head); // ok: test
    let body = &wit[start..];
    let end = body.find('}').expect("its end"); // ok: test
    body[..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .filter_map(|l| l.split(['(', ',']).next().map(str::to_owned))
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn wit_error_code_matches_the_core() {
    let wit = std::fs::read_to_string("wit/world.wit").expect("wit/world.wit"); // ok: test
    let core: Vec<String> = ErrorKind::ALL.iter().map(|k| kebab(k.code())).collect();
    assert_eq!(wit_cases(&wit, "enum error-code {"), core);
}

#[test]
fn wit_error_class_enum_names_every_class() {
    let wit = std::fs::read_to_string("wit/world.wit").expect("wit/world.wit"); // ok: test
    let classes = [
        (ErrorClass::Invalid, "invalid"),
        (ErrorClass::Refused, "refused"),
        (ErrorClass::Unavailable, "unavailable"),
        (ErrorClass::Failed, "failed"),
        (ErrorClass::Internal, "internal"),
    ];
    let names: Vec<String> = classes.iter().map(|(_, n)| n.to_string()).collect();
    assert_eq!(wit_cases(&wit, "enum error-class {"), names);
    for (class, name) in classes {
        assert_eq!(class.name(), name);
    }
    // The TypeScript `ErrorClass` (what `PromptloomError#class` reads) names the same cases.
    let dts = std::fs::read_to_string("pkg/index.d.ts").expect("pkg/index.d.ts"); // ok: test
    let start = dts.find("export type ErrorClass =").expect("ErrorClass"); // ok: test
    let body = &dts[start + "export type ErrorClass =".len()..];
    let end = body.find(';').expect("its end"); // ok: test
    let ts: Vec<&str> = body[..end]
        .split('|')
        .map(|c| c.trim().trim_matches('\''))
        .collect();
    assert_eq!(ts, names);
    // Every class holds a code, and the retryable provider errors are all `unavailable`.
    for (class, name) in classes {
        assert!(ErrorKind::ALL.iter().any(|k| k.class() == class), "{name}");
    }
    for k in ErrorKind::ALL {
        if promptloom::response::errors::is_retryable(k) {
            assert_eq!(k.class(), ErrorClass::Unavailable, "{k:?}");
        }
    }
    assert_eq!(ErrorKind::Internal.class(), ErrorClass::Internal);
    assert_eq!(ErrorKind::InvalidMessage.class(), ErrorClass::Invalid);
    assert_eq!(ErrorKind::NotFound.class(), ErrorClass::Refused);
    assert_eq!(ErrorKind::StoreFailed.class(), ErrorClass::Failed);
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
