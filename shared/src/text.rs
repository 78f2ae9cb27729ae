//! Small text helpers the core shares: cutting a text at a byte limit on a character boundary,
//! and a JSON Schema violation's message (CONTRACT X2, X5, U1).

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

/// The message of one JSON Schema violation: `'<name>' is required` for a missing property,
/// the validator's own text otherwise. Where the violation is, is the caller's to say.
#[must_use]
pub fn violation_message(error: &jsonschema::ValidationError<'_>) -> String {
    match error.kind() {
        jsonschema::error::ValidationErrorKind::Required { property } => match property {
            Value::String(name) => format!("'{name}' is required"),
            other => format!("'{other}' is required"),
        },
        _ => error.to_string(),
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

    #[test]
    fn a_cut_never_splits_a_character_and_is_marked() {
        assert_eq!(prefix_within("héllo", 2), "h");
        assert_eq!(prefix_within("héllo", 3), "hé");
        assert_eq!(prefix_within("abc", 9), "abc");
        assert_eq!(ellipsized("héllo", 2), "h…");
        assert_eq!(ellipsized("abc", 3), "abc");
    }
}
