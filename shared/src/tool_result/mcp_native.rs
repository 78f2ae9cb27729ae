//! The shape check of an MCP-native Tool Service answer (manifest `_meta.resultFormat: "mcp"`):
//! an MCP 2025-11-25 `CallToolResult` object whose `content` blocks the gateway passes through
//! unchanged.
//!
//! Checked: the body is a JSON object; `content` is a non-empty array of blocks of type `text`
//! (`text`), `image` and `audio` (base64 `data`, `mimeType`), `resource` (`resource` with `uri`
//! and `text` or base64 `blob`) or `resource_link` (`uri`, `name`); a block's `annotations` and
//! `_meta` are objects; `structuredContent` is an object and `isError` a boolean when present.
//! Any other top-level field is dropped.

use serde_json::{Map, Value};

/// A Tool Service's MCP tool result after its shape check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NativeResult {
    /// The content blocks, as sent.
    pub blocks: Vec<Map<String, Value>>,
    /// `structuredContent`, when sent.
    pub structured: Option<Value>,
    /// `isError` (absent = `false`).
    pub is_error: bool,
}

/// The content block types of MCP 2025-11-25.
const BLOCK_TYPES: &str = "text, image, audio, resource, resource_link";

/// A shape problem: the JSON pointer of the offending value and what is wrong.
struct Problem {
    pointer: String,
    what: String,
}

fn problem(pointer: impl Into<String>, what: impl Into<String>) -> Problem {
    Problem {
        pointer: pointer.into(),
        what: what.into(),
    }
}

/// Standard base64 with padding (the `format: byte` of the MCP schema).
fn is_base64(text: &str) -> bool {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = text.trim_end_matches('=');
    bytes.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
}

fn string_field(
    object: &Map<String, Value>,
    field: &str,
    pointer: &str,
    base64: bool,
) -> Result<(), Problem> {
    match object.get(field) {
        None => Err(problem(
            format!("{pointer}/{field}"),
            format!("'{field}' is required"),
        )),
        Some(Value::String(text)) if base64 && !is_base64(text) => Err(problem(
            format!("{pointer}/{field}"),
            format!("'{field}' must be base64"),
        )),
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err(problem(
            format!("{pointer}/{field}"),
            format!("'{field}' must be a string"),
        )),
    }
}

fn optional_object(object: &Map<String, Value>, field: &str, pointer: &str) -> Result<(), Problem> {
    match object.get(field) {
        None | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(problem(
            format!("{pointer}/{field}"),
            format!("'{field}' must be an object"),
        )),
    }
}

fn check_block(block: &Value, pointer: &str) -> Result<Map<String, Value>, Problem> {
    let Value::Object(object) = block else {
        return Err(problem(pointer, "a content block must be an object"));
    };
    let kind = match object.get("type") {
        None => return Err(problem(format!("{pointer}/type"), "'type' is required")),
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => {
            return Err(problem(
                format!("{pointer}/type"),
                "'type' must be a string",
            ));
        }
    };
    match kind {
        "text" => string_field(object, "text", pointer, false)?,
        "image" | "audio" => {
            string_field(object, "data", pointer, true)?;
            string_field(object, "mimeType", pointer, false)?;
        }
        "resource" => {
            let inner = format!("{pointer}/resource");
            let Some(Value::Object(resource)) = object.get("resource") else {
                return Err(problem(
                    inner,
                    "'resource' is required and must be an object",
                ));
            };
            string_field(resource, "uri", &inner, false)?;
            match (resource.get("text"), resource.get("blob")) {
                (Some(_), _) => string_field(resource, "text", &inner, false)?,
                (None, Some(_)) => string_field(resource, "blob", &inner, true)?,
                (None, None) => {
                    return Err(problem(inner, "'text' or 'blob' is required"));
                }
            }
            optional_object(resource, "_meta", &inner)?;
        }
        "resource_link" => {
            string_field(object, "uri", pointer, false)?;
            string_field(object, "name", pointer, false)?;
        }
        other => {
            return Err(problem(
                format!("{pointer}/type"),
                format!("'{other}' is not a content block type ({BLOCK_TYPES})"),
            ));
        }
    }
    optional_object(object, "annotations", pointer)?;
    optional_object(object, "_meta", pointer)?;
    Ok(object.clone())
}

fn check(document: &Value) -> Result<NativeResult, Problem> {
    let Value::Object(object) = document else {
        return Err(problem("", "an MCP tool result must be a JSON object"));
    };
    let blocks = match object.get("content") {
        None => return Err(problem("/content", "'content' is required")),
        Some(Value::Array(blocks)) if blocks.is_empty() => {
            return Err(problem("/content", "'content' needs at least one block"));
        }
        Some(Value::Array(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, block)| check_block(block, &format!("/content/{i}")))
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(problem("/content", "'content' must be an array")),
    };
    let structured = match object.get("structuredContent") {
        None => None,
        Some(value @ Value::Object(_)) => Some(value.clone()),
        Some(_) => {
            return Err(problem(
                "/structuredContent",
                "'structuredContent' must be an object",
            ));
        }
    };
    let is_error = match object.get("isError") {
        None => false,
        Some(Value::Bool(is_error)) => *is_error,
        Some(_) => return Err(problem("/isError", "'isError' must be a boolean")),
    };
    Ok(NativeResult {
        blocks,
        structured,
        is_error,
    })
}

/// Reads a 2xx body as an MCP tool result.
///
/// # Errors
/// The result text of the `isError` result that replaces a malformed answer:
/// `Tool Service answer is not a valid MCP tool result at <pointer>: <what is wrong>`.
pub(crate) fn parse_native(body: &str) -> Result<NativeResult, String> {
    let document: Value = serde_json::from_str(body)
        .map_err(|_| "Tool Service answer is not a valid MCP tool result: the body is not JSON")?;
    check(&document).map_err(|Problem { pointer, what }| {
        let at = if pointer.is_empty() {
            "the root"
        } else {
            &pointer
        };
        format!("Tool Service answer is not a valid MCP tool result at {at}: {what}")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error_of(document: &Value) -> String {
        parse_native(&document.to_string()).unwrap_err()
    }

    #[test]
    fn every_block_type_of_the_spec_passes_unchanged() {
        let content = json!([
            {"type": "text", "text": "a", "annotations": {"audience": ["user"]}},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "_meta": {"k": 1}},
            {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "t"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}},
            {"type": "resource_link", "uri": "file:///x", "name": "x", "size": 3}
        ]);
        let parsed = parse_native(
            &json!({"content": content, "structuredContent": {"a": 1}, "isError": false, "extra": 1})
                .to_string(),
        )
        .unwrap();
        assert_eq!(Value::from(parsed.blocks.clone()), content);
        assert_eq!(parsed.structured, Some(json!({"a": 1})));
        assert!(!parsed.is_error);
    }

    #[test]
    fn malformed_answers_name_the_pointer_of_the_problem() {
        for (document, expected) in [
            (
                json!([1]),
                "at the root: an MCP tool result must be a JSON object",
            ),
            (
                json!({"isError": true}),
                "at /content: 'content' is required",
            ),
            (
                json!({"content": []}),
                "at /content: 'content' needs at least one block",
            ),
            (
                json!({"content": "hi"}),
                "at /content: 'content' must be an array",
            ),
            (
                json!({"content": ["hi"]}),
                "at /content/0: a content block must be an object",
            ),
            (
                json!({"content": [{"type": "text", "text": "a"}, {"type": "video"}]}),
                "at /content/1/type: 'video' is not a content block type (text, image, audio, resource, resource_link)",
            ),
            (
                json!({"content": [{"text": "a"}]}),
                "at /content/0/type: 'type' is required",
            ),
            (
                json!({"content": [{"type": "text", "text": 1}]}),
                "at /content/0/text: 'text' must be a string",
            ),
            (
                json!({"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]}),
                "at /content/0/data: 'data' must be base64",
            ),
            (
                json!({"content": [{"type": "audio", "data": "AAAA"}]}),
                "at /content/0/mimeType: 'mimeType' is required",
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "u"}}]}),
                "at /content/0/resource: 'text' or 'blob' is required",
            ),
            (
                json!({"content": [{"type": "resource_link", "uri": "u"}]}),
                "at /content/0/name: 'name' is required",
            ),
            (
                json!({"content": [{"type": "text", "text": "a", "annotations": []}]}),
                "at /content/0/annotations: 'annotations' must be an object",
            ),
            (
                json!({"content": [{"type": "text", "text": "a"}], "structuredContent": [1]}),
                "at /structuredContent: 'structuredContent' must be an object",
            ),
            (
                json!({"content": [{"type": "text", "text": "a"}], "isError": "yes"}),
                "at /isError: 'isError' must be a boolean",
            ),
        ] {
            assert_eq!(
                error_of(&document),
                format!("Tool Service answer is not a valid MCP tool result {expected}"),
                "{document}"
            );
        }
        assert_eq!(
            parse_native("plain text").unwrap_err(),
            "Tool Service answer is not a valid MCP tool result: the body is not JSON"
        );
    }

    #[test]
    fn base64_needs_the_standard_alphabet_and_padding() {
        for good in ["", "AAAA", "AAA=", "AA==", "a+/9"] {
            assert!(is_base64(good), "{good}");
        }
        for bad in ["A", "AAA", "A===", "AA=A", "AA-_", "AA AA=="] {
            assert!(!is_base64(bad), "{bad}");
        }
    }
}
