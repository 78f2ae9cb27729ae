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
    // A byte order mark before JSON (as some stacks write it) hides nothing either.
    let json_text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Ok(mut value) = serde_json::from_str::<Value>(json_text) {
        let raw_holds = secrets.iter().any(|s| text.contains(s));
        let changed = redact_value(&mut value, &secrets);
        if !changed && !raw_holds {
            return None;
        }
        // Written anew: the decoded value holds no secret, nor does its writing.
        return Some(Bytes::from(value.to_string()));
    }
    let replaced = replace_all(text, &secrets);
    // Text that is almost JSON (nested too deep, a lone surrogate, trailing bytes) may write a
    // secret with escapes (`\/`, `\u0073`): when one shows once escapes are read, nothing of
    // the answer is kept.
    if replaced.contains('\\') {
        let view = json_unescaped(&replaced);
        if secrets.iter().any(|secret| view.contains(secret)) {
            return Some(Bytes::from_static(WITHHELD.as_bytes()));
        }
    }
    match replaced {
        Cow::Borrowed(_) => None,
        Cow::Owned(redacted) => Some(Bytes::from(redacted)),
    }
}

/// The whole answer of a call whose text wrote a secret it sent in escapes (CONTRACT X12).
pub const WITHHELD: &str =
    "[redacted: the Tool Service's answer held a credential the gateway sent]";

/// `text` with JSON string escapes read (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`,
/// `\uXXXX`, a lone surrogate as U+FFFD), everything else as it is.
fn json_unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut pending_high: Option<u32> = None;
    while let Some(c) = chars.next() {
        if c != '\\' {
            if pending_high.take().is_some() {
                out.push(char::REPLACEMENT_CHARACTER);
            }
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match escape {
            '"' => Some('"'),
            '\\' => Some('\\'),
            '/' => Some('/'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            _ => None,
        };
        if let Some(simple) = simple {
            if pending_high.take().is_some() {
                out.push(char::REPLACEMENT_CHARACTER);
            }
            out.push(simple);
            continue;
        }
        let hex: String = chars.clone().take(4).collect();
        let code = (escape == 'u' && hex.len() == 4)
            .then(|| u32::from_str_radix(&hex, 16).ok())
            .flatten();
        let Some(code) = code else {
            out.push('\\');
            out.push(escape);
            continue;
        };
        chars.nth(3);
        match (pending_high.take(), code) {
            (Some(high), 0xDC00..=0xDFFF) => {
                let joined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                out.push(char::from_u32(joined).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            (high, 0xD800..=0xDBFF) => {
                if high.is_some() {
                    out.push(char::REPLACEMENT_CHARACTER);
                }
                pending_high = Some(code);
            }
            (high, code) => {
                if high.is_some() {
                    out.push(char::REPLACEMENT_CHARACTER);
                }
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }
    if pending_high.is_some() {
        out.push(char::REPLACEMENT_CHARACTER);
    }
    out
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
    fn x12_almost_json_that_writes_a_secret_in_escapes_is_withheld() {
        let secret = "sk/Secret_123";
        // A byte order mark before JSON: read as JSON.
        assert_eq!(
            redacted(
                "\u{feff}{\"error\":\"invalid key sk\\/Secret_123\"}",
                &[secret]
            )
            .as_deref(),
            Some(r#"{"error":"invalid key [redacted]"}"#)
        );
        // Nested past the parser's depth, a lone surrogate, trailing bytes: withheld whole.
        let deep = format!("{}\"sk\\/Secret_123\"{}", "[".repeat(200), "]".repeat(200));
        for body in [
            deep.as_str(),
            r#"{"e":"\ud800 \u0073k\/Secret_123"}"#,
            r#"{"e":"sk\/Secret_123"} trailing"#,
        ] {
            assert_eq!(
                redacted(body, &[secret]).as_deref(),
                Some(WITHHELD),
                "{body}"
            );
        }
        // Escapes that hide no secret change nothing.
        assert_eq!(redacted(r#"{"e":"a\/b"} trailing"#, &[secret]), None);
        assert_eq!(
            json_unescaped(r"\ud83d\ude00 \ud800x \n\q"),
            "😀 \u{fffd}x \n\\q"
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
