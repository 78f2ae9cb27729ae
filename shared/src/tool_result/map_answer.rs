//! Mapping a Tool Service answer to an MCP `tools/call` result (CONTRACT X5, X6), by the tool's
//! result format: plain JSON or text (X5, with `structuredContent` when the tool has an
//! `outputSchema`) or an MCP-native tool result passed through after a shape check.

use serde::de::IgnoredAny;
use serde_json::Value;

use super::mcp_native::parse_native;
use super::model::{CallResult, Content};
use super::output_schema::check_output;
use crate::invoke::{InvokeError, ToolResponse};
use crate::registry::{ResultFormat, ResultShape};
use crate::text::ellipsized;

/// Most bytes of a Tool Service's own error text quoted in an `isError` result.
pub const MAX_QUOTED_ERROR_BYTES: usize = 4096;

/// Removes insignificant white space from a document already known to be valid JSON, keeping
/// key order, number text and string escapes exactly as sent.
fn compact_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

/// The body as result text: compact JSON when it is JSON, else the text as is (CONTRACT X5).
fn body_text(text: &str) -> String {
    if serde_json::from_str::<IgnoredAny>(text).is_ok() {
        compact_json(text)
    } else {
        text.to_string()
    }
}

/// The Tool Service's own message in an error answer: `message`, `error` or `detail` of a JSON
/// object, else the body text, cut to [`MAX_QUOTED_ERROR_BYTES`].
fn quoted_error(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(serde_json::Value::Object(object)) = serde_json::from_str(text) {
        for key in ["message", "error", "detail"] {
            if let Some(serde_json::Value::String(message)) = object.get(key) {
                return Some(truncate(message));
            }
        }
    }
    Some(truncate(&body_text(text)))
}

fn truncate(text: &str) -> String {
    ellipsized(text, MAX_QUOTED_ERROR_BYTES)
}

/// What a JSON value is, for a mismatch text.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A 2xx body of a `"json"` tool: its compact text, and with an `outputSchema` also its
/// `structuredContent` (a JSON object that matches the schema).
fn json_result(text: &str, output_schema: Option<&jsonschema::Validator>, ms: u64) -> CallResult {
    let compact = body_text(text);
    let Some(validator) = output_schema else {
        return CallResult::text(compact, false, ms);
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => value,
        Ok(other) => {
            return CallResult::text(
                format!(
                    "structuredContent does not match the tool's outputSchema at the root: the Tool Service answered with {}, not a JSON object",
                    kind_of(&other)
                ),
                true,
                ms,
            );
        }
        Err(_) => {
            return CallResult::text(
                "structuredContent does not match the tool's outputSchema at the root: the Tool Service answered with text that is not JSON, not a JSON object",
                true,
                ms,
            );
        }
    };
    match check_output(validator, &value) {
        Err(mismatch) => CallResult::text(mismatch, true, ms),
        Ok(()) => CallResult {
            structured_content: Some(compact.clone()),
            content: Content::Text(compact),
            is_error: false,
            tool_ms: ms,
        },
    }
}

/// A 2xx body of an `"mcp"` tool: its blocks passed through after the shape check; without
/// `isError`, a tool with an `outputSchema` needs `structuredContent` that matches it.
fn native_result(text: &str, output_schema: Option<&jsonschema::Validator>, ms: u64) -> CallResult {
    let native = match parse_native(text) {
        Ok(native) => native,
        Err(problem) => return CallResult::text(problem, true, ms),
    };
    if let (Some(validator), false) = (output_schema, native.is_error) {
        let checked = match &native.structured {
            None => Err(
                "structuredContent does not match the tool's outputSchema at the root: the Tool Service answer has no structuredContent"
                    .to_string(),
            ),
            Some(structured) => check_output(validator, structured),
        };
        if let Err(mismatch) = checked {
            return CallResult::text(mismatch, true, ms);
        }
    }
    CallResult {
        content: Content::Blocks(native.blocks),
        structured_content: native.structured.as_ref().map(Value::to_string),
        is_error: native.is_error,
        tool_ms: ms,
    }
}

/// The `isError` text of a non-2xx answer (CONTRACT X6).
fn status_text(status: http::StatusCode, text: &str) -> String {
    let what = if status.is_redirection() {
        format!(
            "Tool Service answered with a redirect (HTTP {}), which is not followed",
            status.as_u16()
        )
    } else if matches!(status.as_u16(), 401 | 403) {
        format!("Tool Service denied the call (HTTP {})", status.as_u16())
    } else {
        format!("Tool Service returned HTTP {}", status.as_u16())
    };
    match quoted_error(text) {
        Some(message) if !status.is_redirection() => format!("{what}: {message}"),
        _ => what,
    }
}

/// Maps an answer (or its absence) to a result by the tool's result shape (CONTRACT X5, X6).
/// Texts never name the endpoint.
#[must_use]
pub fn map_tool_answer(
    answer: Result<ToolResponse, InvokeError>,
    tool_ms: u64,
    shape: ResultShape<'_>,
) -> CallResult {
    let ms = tool_ms;
    let response = match answer {
        Err(error) => return CallResult::text(error.to_string(), true, ms),
        Ok(response) => response,
    };
    let Ok(text) = std::str::from_utf8(&response.body) else {
        return CallResult::text("Tool Service response is not valid UTF-8", true, ms);
    };
    if !response.status.is_success() {
        return CallResult::text(status_text(response.status, text), true, ms);
    }
    match shape.format {
        ResultFormat::Json => json_result(text, shape.output_schema, ms),
        ResultFormat::Mcp => native_result(text, shape.output_schema, ms),
    }
}

/// The `isError` result that replaces an answer too large for the gateway's own response
/// (`MCP_MAX_RESPONSE_BYTES`, CONTRACT X6).
#[must_use]
pub fn oversized_result(limit_bytes: usize, tool_ms: u64) -> CallResult {
    CallResult::text(
        format!(
            "Tool Service response is too large: the tool result would exceed the gateway's {limit_bytes}-byte response limit"
        ),
        true,
        tool_ms,
    )
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::StatusCode;
    use serde_json::json;

    use super::*;

    #[expect(
        clippy::unnecessary_wraps,
        reason = "it stands where an invoker's answer, a Result, goes"
    )]
    fn ok(status: u16, body: &[u8]) -> Result<ToolResponse, InvokeError> {
        Ok(ToolResponse {
            location: None,
            status: StatusCode::from_u16(status).unwrap(),
            body: Bytes::copy_from_slice(body),
        })
    }

    fn plain(answer: Result<ToolResponse, InvokeError>, ms: u64) -> CallResult {
        map_tool_answer(answer, ms, ResultShape::default())
    }

    fn text_of(r: &CallResult) -> &str {
        r.first_text().unwrap()
    }

    fn output_schema() -> jsonschema::Validator {
        jsonschema::validator_for(&json!({
            "type": "object",
            "properties": {"total": {"type": "integer"}},
            "required": ["total"]
        }))
        .unwrap()
    }

    #[test]
    fn x5_json_is_compacted_with_key_order_numbers_and_escapes_kept() {
        let body =
            br#" { "z" : 1 , "a" : [ 1.50 , 18446744073709551616 ] , "s" : "a \" b\u00e9 c" } "#;
        let r = plain(ok(200, body), 7);
        assert_eq!(
            text_of(&r),
            r#"{"z":1,"a":[1.50,18446744073709551616],"s":"a \" b\u00e9 c"}"#
        );
        assert!(!r.is_error);
        assert_eq!(r.structured_content, None);
    }

    #[test]
    fn x5_plain_text_is_kept_as_is() {
        let r = plain(ok(200, "  안녕하세요 \n".as_bytes()), 0);
        assert_eq!(text_of(&r), "  안녕하세요 \n");
    }

    #[test]
    fn x6_error_statuses_quote_the_tools_message() {
        let r = plain(ok(400, br#"{"message":"date range too wide"}"#), 3);
        assert_eq!(
            text_of(&r),
            "Tool Service returned HTTP 400: date range too wide"
        );
        assert!(r.is_error);
        let r = plain(ok(403, b""), 3);
        assert_eq!(text_of(&r), "Tool Service denied the call (HTTP 403)");
        let r = plain(ok(302, b"see elsewhere"), 3);
        assert_eq!(
            text_of(&r),
            "Tool Service answered with a redirect (HTTP 302), which is not followed"
        );
        let r = plain(ok(200, &[0xff, 0xfe]), 3);
        assert_eq!(text_of(&r), "Tool Service response is not valid UTF-8");
        assert!(r.is_error);
    }

    #[test]
    fn x5_an_object_answer_of_a_tool_with_output_schema_is_also_structured_content_exactly() {
        let schema = output_schema();
        let shape = ResultShape {
            format: ResultFormat::Json,
            output_schema: Some(&schema),
        };
        let r = map_tool_answer(
            ok(200, br#"{ "total": 2, "big": 18446744073709551616 }"#),
            4,
            shape,
        );
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"text","text":"{\"total\":2,\"big\":18446744073709551616}","_meta":{"searchTime":4}}],"structuredContent":{"total":2,"big":18446744073709551616},"isError":false}"#
        );
    }

    #[test]
    fn x6_an_answer_that_breaks_the_output_schema_is_an_is_error_result() {
        let schema = output_schema();
        let shape = ResultShape {
            format: ResultFormat::Json,
            output_schema: Some(&schema),
        };
        for (body, expected) in [
            (
                &br#"{"total":"2"}"#[..],
                r#"structuredContent does not match the tool's outputSchema at /total: "2" is not of type "integer""#,
            ),
            (
                b"[1]",
                "structuredContent does not match the tool's outputSchema at the root: the Tool Service answered with an array, not a JSON object",
            ),
            (
                b"done",
                "structuredContent does not match the tool's outputSchema at the root: the Tool Service answered with text that is not JSON, not a JSON object",
            ),
        ] {
            let r = map_tool_answer(ok(200, body), 1, shape);
            assert!(r.is_error);
            assert_eq!(text_of(&r), expected);
            assert_eq!(r.structured_content, None);
        }
    }

    #[test]
    fn mcp_native_blocks_pass_through_with_search_time_on_the_first() {
        let shape = ResultShape {
            format: ResultFormat::Mcp,
            output_schema: None,
        };
        let body = json!({
            "content": [
                {"type": "image", "data": "AAAA", "mimeType": "image/png", "_meta": {"k": "v", "searchTime": 999}},
                {"type": "text", "text": "second"}
            ],
            "isError": true,
            "_meta": {"dropped": true}
        });
        let r = map_tool_answer(ok(200, body.to_string().as_bytes()), 5, shape);
        assert!(r.is_error);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"image","data":"AAAA","mimeType":"image/png","_meta":{"k":"v","searchTime":5}},{"type":"text","text":"second"}],"isError":true}"#
        );
    }

    #[test]
    fn mcp_native_structured_content_must_match_the_output_schema_unless_is_error() {
        let schema = output_schema();
        let shape = ResultShape {
            format: ResultFormat::Mcp,
            output_schema: Some(&schema),
        };
        let call = |body: Value| map_tool_answer(ok(200, body.to_string().as_bytes()), 0, shape);
        let text = json!([{"type": "text", "text": "t"}]);
        let r = call(json!({"content": text, "structuredContent": {"total": 1}}));
        assert!(!r.is_error);
        assert_eq!(r.structured_content.as_deref(), Some(r#"{"total":1}"#));
        let r = call(json!({"content": text}));
        assert_eq!(
            text_of(&r),
            "structuredContent does not match the tool's outputSchema at the root: the Tool Service answer has no structuredContent"
        );
        let r = call(json!({"content": text, "structuredContent": {}}));
        assert_eq!(
            text_of(&r),
            "structuredContent does not match the tool's outputSchema at /total: 'total' is required"
        );
        let r = call(json!({"content": text, "isError": true}));
        assert!(r.is_error);
        assert_eq!(text_of(&r), "t");
    }
}
