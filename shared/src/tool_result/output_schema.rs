//! Checking a result's `structuredContent` against the tool's `outputSchema`, compiled at load.
//!
//! A mismatch is never a JSON-RPC error: it becomes an `isError` result (as every execution
//! failure does, CONTRACT X6) whose text names the JSON pointer of the offending value.

use jsonschema::error::ValidationErrorKind;
use std::fmt::Write as _;

use serde_json::Value;

use crate::text::violation_message;

/// Most violations a mismatch text lists before it says how many more there are.
const MAX_LISTED_VIOLATIONS: usize = 3;

/// Most bytes of one violation's description (values in it are quoted).
const MAX_VIOLATION_BYTES: usize = 512;

/// The JSON pointer of the offending value: for a missing required property or an unexpected
/// additional one, the pointer of that property; otherwise the instance path.
fn pointer_of(error: &jsonschema::ValidationError<'_>) -> String {
    let path = error.instance_path();
    let pointer = match error.kind() {
        ValidationErrorKind::Required {
            property: Value::String(name),
        } => path.join(name.as_str()),
        ValidationErrorKind::AdditionalProperties { unexpected } if unexpected.len() == 1 => {
            path.join(unexpected[0].as_str())
        }
        _ => path.clone(),
    };
    let pointer = pointer.as_str();
    if pointer.is_empty() {
        "the root".to_string()
    } else {
        pointer.to_string()
    }
}

fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    violation_message(error, false, MAX_VIOLATION_BYTES)
}

/// Validates `structured` against the compiled `outputSchema`.
///
/// # Errors
/// The mismatch as result text: `structuredContent does not match the tool's outputSchema at
/// <pointer>: <violation>`, further violations after `;`.
pub(crate) fn check_output(
    validator: &jsonschema::Validator,
    structured: &Value,
) -> Result<(), String> {
    if validator.is_valid(structured) {
        return Ok(());
    }
    let violations: Vec<String> = validator
        .iter_errors(structured)
        .map(|error| format!("at {}: {}", pointer_of(&error), describe(&error)))
        .collect();
    let mut text = String::from("structuredContent does not match the tool's outputSchema ");
    let listed = violations.len().min(MAX_LISTED_VIOLATIONS);
    text.push_str(&violations[..listed].join("; "));
    if violations.len() > listed {
        let _ = write!(text, " (and {} more)", violations.len() - listed);
    }
    Err(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn validator() -> jsonschema::Validator {
        jsonschema::validator_for(&json!({
            "type": "object",
            "properties": {
                "total": {"type": "integer"},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"score": {"type": "number"}}
                }}
            },
            "required": ["total"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn a_matching_object_passes() {
        assert_eq!(
            check_output(
                &validator(),
                &json!({"total": 1, "items": [{"score": 0.5}]})
            ),
            Ok(())
        );
    }

    #[test]
    fn a_mismatch_names_the_json_pointer_of_the_offending_value() {
        let text = check_output(
            &validator(),
            &json!({"total": 1, "items": [{"score": "high"}]}),
        )
        .unwrap_err();
        assert_eq!(
            text,
            r#"structuredContent does not match the tool's outputSchema at /items/0/score: "high" is not of type "number""#
        );
    }

    #[test]
    fn a_missing_property_is_named_by_its_own_pointer() {
        let text = check_output(&validator(), &json!({"items": []})).unwrap_err();
        assert_eq!(
            text,
            "structuredContent does not match the tool's outputSchema at /total: 'total' is required"
        );
        let text = check_output(&validator(), &json!({"total": 1, "a/b": 2})).unwrap_err();
        assert!(text.contains("at /a~1b: "), "{text}");
    }

    #[test]
    fn many_violations_are_counted_after_the_first_three() {
        let text = check_output(
            &validator(),
            &json!({"total": "x", "items": [{"score": "a"}, {"score": "b"}, {"score": "c"}]}),
        )
        .unwrap_err();
        assert!(text.ends_with(" (and 1 more)"), "{text}");
        assert_eq!(text.matches("; at ").count(), 2, "{text}");
    }
}
