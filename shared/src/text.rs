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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_a_character_and_is_marked() {
        assert_eq!(prefix_within("héllo", 2), "h");
        assert_eq!(prefix_within("héllo", 3), "hé");
        assert_eq!(prefix_within("abc", 9), "abc");
        assert_eq!(ellipsized("héllo", 2), "h…");
        assert_eq!(ellipsized("abc", 3), "abc");
    }
}
