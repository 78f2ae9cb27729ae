//! Small text helpers the core shares: cutting a text at a byte limit on a character boundary,
//! and a JSON Schema violation's message (CONTRACT X2, X5, U1).

use std::borrow::Cow;

use serde_json::Value;

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character boundary.
#[must_use]
pub fn prefix_within(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` as is when it fits in `max_bytes`, else its [`prefix_within`] the limit followed by
/// `…`.
#[must_use]
pub fn ellipsized(text: &str, max_bytes: usize) -> String {
    let prefix = prefix_within(text, max_bytes);
    if prefix.len() == text.len() {
        text.to_string()
    } else {
        format!("{prefix}…")
    }
}

/// The message of one JSON Schema violation, at most `max_bytes` long as [`ellipsized`] cuts
/// it: `'<name>' is required` for a missing property, the validator's own text otherwise,
/// followed by ` (at <pointer>)` when `at_pointer` is set and the violation is below the root.
///
/// The validator's text quotes the offending value whole (a string or a list of unexpected
/// properties may be as long as the request): it is written into a buffer that stops taking
/// text at the limit, so a long value costs no more than its first `max_bytes` (CONTRACT O1,
/// X2).
#[must_use]
pub fn violation_message(
    error: &jsonschema::ValidationError<'_>,
    at_pointer: bool,
    max_bytes: usize,
) -> String {
    use std::fmt::Write as _;
    let mut out = Bounded {
        text: String::new(),
        room: max_bytes,
        cut: false,
    };
    // An Err here only says the buffer is full: what it holds is the text's prefix.
    let _ = match error.kind() {
        jsonschema::error::ValidationErrorKind::Required { property } => match property {
            Value::String(name) => write!(out, "'{name}' is required"),
            other => write!(out, "'{other}' is required"),
        },
        _ => match error.instance().as_ref() {
            // A string longer than the limit: its JSON text would be escaped whole before the
            // buffer refuses it (about 0.3 ms per MiB), so only the prefix the buffer can take is
            // written, in the instance's place.
            Value::String(text) if text.len() > max_bytes => {
                // A character is at most 4 bytes: the prefix holds more than `max_bytes`, so
                // the buffer's cut falls inside it, where the whole text's would.
                let kept = prefix_within(text, max_bytes + 4);
                let quoted = serde_json::to_string(kept).unwrap_or_default();
                // Without its closing quote: the text goes on past the cut.
                let open = quoted.strip_suffix('"').unwrap_or(&quoted);
                write!(out, "{}", error.masked_with(open))
            }
            _ => write!(out, "{error}"),
        },
    };
    let pointer = error.instance_path().as_str();
    if at_pointer && !pointer.is_empty() && !out.cut {
        let _ = write!(out, " (at {pointer})");
    }
    if out.cut {
        out.text.push('…');
    }
    out.text
}

/// A text buffer that takes at most `room` more bytes, cut on a character boundary, and then
/// refuses the rest with [`std::fmt::Error`], which stops the formatting that writes into it.
struct Bounded {
    text: String,
    room: usize,
    cut: bool,
}

impl std::fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.cut {
            return Err(std::fmt::Error);
        }
        if s.len() <= self.room {
            self.text.push_str(s);
            self.room -= s.len();
            return Ok(());
        }
        self.text.push_str(prefix_within(s, self.room));
        self.cut = true;
        Err(std::fmt::Error)
    }
}

/// A JSON number as the whole number it stands for, when it is one from `min` to `max`: `2`,
/// `2.0` and `2e0` alike, as JSON Schema's `integer` takes them (CONTRACT S1, S2). A fraction,
/// a number out of range and any other value are `None`.
#[must_use]
pub fn whole_number(value: &Value, min: u64, max: u64) -> Option<u64> {
    let whole = value.as_u64().or_else(|| {
        let n = value.as_f64()?;
        // Compared in f64 only within the range, where every whole number is exact.
        (n.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&n)).then(|| {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a whole, non-negative f64 at most 2^53: exact"
            )]
            let whole = n as u64;
            whole
        })
    })?;
    (min..=max).contains(&whole).then_some(whole)
}

/// A JSON object's key as serde_json reads it from a text: borrowed from the text when it
/// has no escapes, decoded into its own string when it has (serde's own `Cow<str>` always
/// copies).
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s2_a_whole_number_is_read_whatever_its_json_form() {
        let read = |text: &str| whole_number(&serde_json::from_str(text).unwrap(), 1, 50);
        for text in ["2", "2.0", "2e0", "0.2e1", "20E-1"] {
            assert_eq!(read(text), Some(2), "{text}");
        }
        for text in ["2.5", "0", "51", "-1", "\"2\"", "null", "1e300"] {
            assert_eq!(read(text), None, "{text}");
        }
        assert_eq!(read("50.0"), Some(50));
    }

    /// CONTRACT X2, O1: a long string's violation reads the same whether it is written whole
    /// and cut or written from its prefix, for every keyword that quotes a string.
    #[test]
    fn x2_a_long_string_violation_is_the_cut_of_the_whole_text() {
        let schemas = [
            serde_json::json!({"maxLength": 3}),
            serde_json::json!({"minLength": 5000}),
            serde_json::json!({"pattern": "^z"}),
            serde_json::json!({"type": "integer"}),
            serde_json::json!({"type": ["integer", "null"]}),
            serde_json::json!({"enum": ["a", "b"]}),
            serde_json::json!({"const": "a"}),
            serde_json::json!({"format": "email"}),
            serde_json::json!({"anyOf": [{"type": "integer"}, {"maxLength": 1}]}),
            serde_json::json!({"oneOf": [{"type": "integer"}, {"maxLength": 1}]}),
            serde_json::json!({"not": {"type": "string"}}),
            serde_json::json!(false),
        ];
        let texts = [
            "가\"\\\n".repeat(300),
            "x".repeat(513),
            "é".repeat(257),
            // Characters of 3 and 4 bytes that end short of a cut (the quote before them).
            "가".repeat(200),
            format!("a{}", "😀".repeat(200)),
            "가".repeat(171),
        ];
        for text in texts {
            let instance = Value::String(text);
            for schema in &schemas {
                let validator = jsonschema::options()
                    .should_validate_formats(true)
                    .build(schema)
                    .unwrap();
                let error = validator.iter_errors(&instance).next().unwrap();
                for max_bytes in [8, 100, 512] {
                    let whole = format!("{error}");
                    let expected = ellipsized(&whole, max_bytes);
                    assert_eq!(
                        violation_message(&error, false, max_bytes),
                        expected,
                        "{schema} at {max_bytes}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_cut_never_splits_a_character_and_is_marked() {
        assert_eq!(prefix_within("héllo", 2), "h");
        assert_eq!(prefix_within("héllo", 3), "hé");
        assert_eq!(prefix_within("abc", 9), "abc");
        assert_eq!(ellipsized("héllo", 2), "h…");
        assert_eq!(ellipsized("abc", 3), "abc");
    }
}
