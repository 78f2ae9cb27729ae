//! Secrets never come back (CONTRACT X12): every secret value the gateway sent on a call (an
//! API key, a `Basic` credential and its password, an access token) is replaced by
//! `[redacted]` wherever it appears in the Tool Service's answer, before the answer is mapped
//! (X5, X6): so no `isError` text, text content or `structuredContent` made of it holds one,
//! and structured output is checked against the redacted object.
//!
//! A JSON answer is redacted in its decoded strings, object keys and number texts, so no
//! escape (`\/`, `\u0041`) hides a secret; when something was replaced, the answer is
//! `serde_json`'s compact writing of the redacted value. Any other text is redacted as it is.

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::{Map, Value};

/// What stands where a secret was.
pub const REDACTED: &str = "[redacted]";

/// `body` with every one of `secrets` replaced by [`REDACTED`], or `None` when it holds none
/// of them (or is not UTF-8: such a body is never quoted, CONTRACT X6). Empty secrets are
/// ignored. Work: one pass over the body per secret.
#[must_use]
pub fn redact_body(body: &[u8], secrets: &[&str]) -> Option<Bytes> {
    let mut secrets: Vec<&str> = secrets.iter().copied().filter(|s| !s.is_empty()).collect();
    if secrets.is_empty() {
        return None;
    }
    // The longest first, so that a secret holding another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    let text = std::str::from_utf8(body).ok()?;
    if let Ok(mut value) = serde_json::from_str::<Value>(text) {
        let raw_holds = secrets.iter().any(|s| text.contains(s));
        let changed = redact_value(&mut value, &secrets);
        if !changed && !raw_holds {
            return None;
        }
        // Written anew: the decoded value holds no secret, nor does its writing.
        return Some(Bytes::from(value.to_string()));
    }
    match replace_all(text, &secrets) {
        Cow::Borrowed(_) => None,
        Cow::Owned(redacted) => Some(Bytes::from(redacted)),
    }
}

/// `text` with each secret replaced, borrowed when none occurs.
fn replace_all<'a>(text: &'a str, secrets: &[&str]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for secret in secrets {
        if out.contains(secret) {
            out = Cow::Owned(out.replace(secret, REDACTED));
        }
    }
    out
}

/// Redacts `value` in place; whether anything changed.
fn redact_value(value: &mut Value, secrets: &[&str]) -> bool {
    match value {
        Value::String(text) => match replace_all(text, secrets) {
            Cow::Borrowed(_) => false,
            Cow::Owned(redacted) => {
                *text = redacted;
                true
            }
        },
        Value::Number(number) => {
            let written = number.to_string();
            match replace_all(&written, secrets) {
                Cow::Borrowed(_) => false,
                Cow::Owned(redacted) => {
                    *value = Value::String(redacted);
                    true
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| redact_value(item, secrets) | changed),
        Value::Object(object) => {
            let keys_hold = object
                .keys()
                .any(|key| matches!(replace_all(key, secrets), Cow::Owned(_)));
            let mut changed = keys_hold;
            if keys_hold {
                let taken = std::mem::take(object);
                let mut renamed = Map::with_capacity(taken.len());
                for (key, item) in taken {
                    renamed.insert(replace_all(&key, secrets).into_owned(), item);
                }
                *object = renamed;
            }
            for item in object.values_mut() {
                changed |= redact_value(item, secrets);
            }
            changed
        }
        Value::Null | Value::Bool(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(body: &str, secrets: &[&str]) -> Option<String> {
        redact_body(body.as_bytes(), secrets).map(|b| String::from_utf8(b.to_vec()).unwrap())
    }

    #[test]
    fn x12_a_secret_is_redacted_in_text_and_in_every_json_place() {
        assert_eq!(
            redacted("invalid key sk-123 given", &["sk-123"]).as_deref(),
            Some("invalid key [redacted] given")
        );
        assert_eq!(
            redacted(
                r#"{"message":"invalid key sk-123","headers":{"x-api-key":"sk-123","sk-123":1}}"#,
                &["sk-123"]
            )
            .as_deref(),
            Some(
                r#"{"message":"invalid key [redacted]","headers":{"x-api-key":"[redacted]","[redacted]":1}}"#
            )
        );
        // Escapes hide nothing: `\/` and `\u` forms are decoded first.
        assert_eq!(
            redacted(
                r#"{"a":"dXNlcjpw\/dw==","b":"\u0073k-1"}"#,
                &["dXNlcjpw/dw==", "sk-1"]
            )
            .as_deref(),
            Some(r#"{"a":"[redacted]","b":"[redacted]"}"#)
        );
        // A secret of digits in a number.
        assert_eq!(
            redacted(r#"{"pin":12345678}"#, &["12345678"]).as_deref(),
            Some(r#"{"pin":"[redacted]"}"#)
        );
        // The longest first: a password inside its Basic credential's text.
        assert_eq!(
            redacted("Basic abcpw and pw", &["pw", "abcpw"]).as_deref(),
            Some("Basic [redacted] and [redacted]")
        );
    }

    #[test]
    fn x12_an_answer_without_a_secret_is_kept_as_sent() {
        assert_eq!(redacted(r#"{ "a" : 1.50 }"#, &["sk-1"]), None);
        assert_eq!(redacted("plain", &["sk-1", ""]), None);
        assert_eq!(redacted("anything", &[]), None);
        assert_eq!(redact_body(b"\xff\xfe sk-1", &["sk-1"]), None);
    }
}
