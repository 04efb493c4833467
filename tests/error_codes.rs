//! The error codes are one list, in the core (`error_kinds!` in `src/error.rs`): the
//! component maps the WIT `error-code` enum from it (a code on one side only fails to
//! compile), and `tests/constants.rs` writes the TypeScript `ErrorCode` and `ErrorClass`
//! unions from it. What is left to check here is what the list means.
#![cfg(not(target_arch = "wasm32"))]

use promptloom::{ErrorClass, ErrorKind};

#[test]
fn every_code_is_distinct_and_round_trips() {
    let mut codes: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), ErrorKind::ALL.len());
    for k in ErrorKind::ALL {
        assert_eq!(ErrorKind::from_code(k.code()), Some(k));
    }
    assert_eq!(ErrorKind::from_code("NoSuchCode"), None);
}

#[test]
fn the_classes_mean_what_they_say() {
    // Every class holds a code, and the retryable provider errors are all `unavailable`.
    for class in ErrorClass::ALL {
        assert!(
            ErrorKind::ALL.iter().any(|k| k.class() == class),
            "{}",
            class.name()
        );
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
    let names: Vec<&str> = ErrorClass::ALL.map(ErrorClass::name).to_vec();
    assert_eq!(
        names,
        ["invalid", "refused", "unavailable", "failed", "internal"]
    );
}
