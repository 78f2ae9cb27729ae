//! `tools/call` of a route's `search_tools` (CONTRACT S2, S3): its arguments validated like any
//! tool's (X2) against its fixed `inputSchema`, and the route's best matching tools as the
//! result, answered by the gateway without a Tool Service.

use std::sync::LazyLock;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::tools_call::validate_with;
use super::{Call, MethodOutcome};
use crate::protocol::{ErrorObject, RequestId};
use crate::registry::Route;
use crate::registry::search::{SEARCH_INPUT_SCHEMA, ToolSearch};
use crate::tool_result::CallResult;

/// The compiled `inputSchema` of `search_tools`.
static INPUT_SCHEMA: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(SEARCH_INPUT_SCHEMA).unwrap_or(Value::Bool(true));
    jsonschema::validator_for(&schema).unwrap_or_else(|_| {
        jsonschema::validator_for(&Value::Bool(true)).unwrap_or_else(|_| unreachable!())
    })
});

/// A `search_tools` result: the matches as one compact text block and as `structuredContent`
/// (CONTRACT S3).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchResult<'a> {
    content: [TextBlock; 1],
    structured_content: &'a RawValue,
    is_error: bool,
}

#[derive(Serialize)]
struct TextBlock {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

/// `json` (valid JSON text) without the whitespace between its tokens: strings and numbers
/// keep their text.
fn compact(json: &[u8]) -> String {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &byte in json {
        if in_string {
            out.push(byte);
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
            in_string = byte == b'"';
            out.push(byte);
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

pub(super) fn handle(
    call: &Call<'_>,
    id: &RequestId,
    route: &Route,
    search: &ToolSearch,
    arguments: &Value,
) -> MethodOutcome {
    if let Err(e) = validate_with(&INPUT_SCHEMA, arguments) {
        return MethodOutcome::Error(e);
    }
    let query = arguments["query"].as_str().unwrap_or_default();
    // CONTRACT S2: `2`, `2.0` and `2e0` are the same limit (the schema took each as an
    // integer).
    let limit = arguments
        .get("limit")
        .and_then(|limit| crate::text::whole_number(limit, 1, u64::MAX))
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(search.max_results);
    // CONTRACT Z4: only the tools this caller could call.
    let view = super::authorize::view(call, route);
    let keep = view
        .as_ref()
        .map(|view| move |name: &str| view.visible(name));
    let found = search.results(
        route,
        query,
        limit,
        keep.as_ref().map(|k| k as &dyn Fn(&str) -> bool),
    );
    let text = compact(&found);
    let Ok(structured) = RawValue::from_string(String::from_utf8_lossy(&found).into_owned()) else {
        return MethodOutcome::Error(ErrorObject::internal_error(
            "the search_tools result could not be written",
        ));
    };
    let result = SearchResult {
        content: [TextBlock { kind: "text", text }],
        structured_content: &structured,
        is_error: false,
    };
    let mut body = call.encode(id, &result, false);
    let mut tool_error = false;
    let limit = call.config.max_response_bytes;
    if body.len() > limit {
        // CONTRACT S3: the result that does not fit, said as the search's own.
        let oversized = CallResult::text(
            format!(
                "search_tools result is too large: it would exceed the gateway's {limit}-byte \
                 response limit; ask for fewer tools with limit"
            ),
            true,
            0,
        );
        body = call.encode(id, &oversized, false);
        tool_error = true;
    }
    MethodOutcome::Result {
        body,
        session_id: None,
        tool_error,
    }
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn s3_compact_drops_whitespace_between_tokens_only() {
        let text = br#"{ "tools" : [ {"name": "a b", "x": 1e2, "s": "q\" }  ", "n" : -0 } ] }"#;
        assert_eq!(
            compact(text),
            r#"{"tools":[{"name":"a b","x":1e2,"s":"q\" }  ","n":-0}]}"#
        );
    }
}
