//! Mapping a Tool Service answer to an MCP `tools/call` result (CONTRACT X5, X6).

use serde::Serialize;
use serde::de::IgnoredAny;

use super::{InvokeError, ToolResponse};

/// Most bytes of a Tool Service's own error text quoted in an `isError` result.
pub const MAX_QUOTED_ERROR_BYTES: usize = 4096;

/// A `tools/call` result with one text block:
/// `{"content":[{"type":"text","text":…,"_meta":{"searchTime":ms}}],"isError":…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallResult {
    /// The text of the one content block.
    pub text: String,
    /// `isError`: `false` for a 2xx answer, `true` for every execution failure.
    pub is_error: bool,
    /// Whole milliseconds the Tool Service call took (`_meta.searchTime`).
    pub search_time_ms: u64,
}

impl Serialize for CallResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Meta {
            #[serde(rename = "searchTime")]
            search_time: u64,
        }
        #[derive(Serialize)]
        struct Block<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            text: &'a str,
            #[serde(rename = "_meta")]
            meta: Meta,
        }
        #[derive(Serialize)]
        struct Out<'a> {
            content: [Block<'a>; 1],
            #[serde(rename = "isError")]
            is_error: bool,
        }
        Out {
            content: [Block {
                kind: "text",
                text: &self.text,
                meta: Meta {
                    search_time: self.search_time_ms,
                },
            }],
            is_error: self.is_error,
        }
        .serialize(serializer)
    }
}

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
    if text.len() <= MAX_QUOTED_ERROR_BYTES {
        return text.to_string();
    }
    let mut end = MAX_QUOTED_ERROR_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Maps an answer (or its absence) to a result (CONTRACT X5, X6). Texts never name the endpoint.
#[must_use]
pub fn map_tool_answer(
    answer: Result<ToolResponse, InvokeError>,
    search_time_ms: u64,
) -> CallResult {
    let (text, is_error) = match answer {
        Err(error) => (error.to_string(), true),
        Ok(response) => match std::str::from_utf8(&response.body) {
            Err(_) => ("Tool Service response is not valid UTF-8".to_string(), true),
            Ok(text) => {
                let status = response.status;
                if status.is_success() {
                    (body_text(text), false)
                } else {
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
                        Some(message) if !status.is_redirection() => {
                            (format!("{what}: {message}"), true)
                        }
                        _ => (what, true),
                    }
                }
            }
        },
    };
    CallResult {
        text,
        is_error,
        search_time_ms,
    }
}

/// The `isError` result that replaces an answer too large for the gateway's own response
/// (`MCP_MAX_RESPONSE_BYTES`, CONTRACT X6).
#[must_use]
pub fn oversized_result(limit_bytes: usize, search_time_ms: u64) -> CallResult {
    CallResult {
        text: format!(
            "Tool Service response is too large: the tool result would exceed the gateway's {limit_bytes}-byte response limit"
        ),
        is_error: true,
        search_time_ms,
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::StatusCode;

    use super::*;

    fn ok(status: u16, body: &[u8]) -> Result<ToolResponse, InvokeError> {
        Ok(ToolResponse {
            status: StatusCode::from_u16(status).unwrap(),
            body: Bytes::copy_from_slice(body),
        })
    }

    #[test]
    fn x5_json_is_compacted_with_key_order_numbers_and_escapes_kept() {
        let body =
            br#" { "z" : 1 , "a" : [ 1.50 , 18446744073709551616 ] , "s" : "a \" b\u00e9 c" } "#;
        let r = map_tool_answer(ok(200, body), 7);
        assert_eq!(
            r.text,
            r#"{"z":1,"a":[1.50,18446744073709551616],"s":"a \" b\u00e9 c"}"#
        );
        assert!(!r.is_error);
    }

    #[test]
    fn x5_plain_text_is_kept_as_is() {
        let r = map_tool_answer(ok(200, "  안녕하세요 \n".as_bytes()), 0);
        assert_eq!(r.text, "  안녕하세요 \n");
    }

    #[test]
    fn x6_error_statuses_quote_the_tools_message() {
        let r = map_tool_answer(ok(400, br#"{"message":"date range too wide"}"#), 3);
        assert_eq!(
            r.text,
            "Tool Service returned HTTP 400: date range too wide"
        );
        assert!(r.is_error);
        let r = map_tool_answer(ok(403, b""), 3);
        assert_eq!(r.text, "Tool Service denied the call (HTTP 403)");
        let r = map_tool_answer(ok(302, b"see elsewhere"), 3);
        assert_eq!(
            r.text,
            "Tool Service answered with a redirect (HTTP 302), which is not followed"
        );
        let r = map_tool_answer(ok(200, &[0xff, 0xfe]), 3);
        assert_eq!(r.text, "Tool Service response is not valid UTF-8");
        assert!(r.is_error);
    }

    #[test]
    fn x5_result_shape() {
        let r = CallResult {
            text: "t".into(),
            is_error: false,
            search_time_ms: 12,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"text","text":"t","_meta":{"searchTime":12}}],"isError":false}"#
        );
    }
}
