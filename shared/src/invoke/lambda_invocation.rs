//! The sans-IO half of Lambda function tools (CONTRACT X10): the client context, the Invoke
//! API URL and the classification of its answers, which never quote AWS's own messages (they
//! name the ARN). The call itself is `invoke/lambda.rs`'s.

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::lambda_redaction::{MIN_BARE_NAME_CHARS, redacted};
use super::{InvokeError, ToolResponse};
use crate::registry::FunctionArn;

/// Every byte but RFC 3986's unreserved characters is percent-encoded in the Invoke API path and
/// query, as the AWS SDKs encode a label (`:` becomes `%3A`).
const LABEL: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Lambda's limit on the `X-Amz-Client-Context` header, in bytes of its base64 text.
pub const MAX_CLIENT_CONTEXT_BYTES: usize = 3583;

/// The `X-Amz-Client-Context` value of one invocation (CONTRACT X10): base64 of
/// `{"custom": {...}}` with the tool name under `bedrockAgentCoreToolName` and `mcpToolName`,
/// then each forwarded caller header under its lower-case name, all strings.
///
/// The trace keys `trace` (CONTRACT O3: `traceparent`, `tracestate`, `baggage`,
/// `x-amzn-trace-id`) follow under their names; when the value would exceed
/// [`MAX_CLIENT_CONTEXT_BYTES`] they are dropped first, `baggage`, then `tracestate`, then
/// `x-amzn-trace-id`, then `traceparent`, until it fits.
///
/// # Errors
/// [`InvokeError::ClientContextTooLarge`] when the encoded value exceeds
/// [`MAX_CLIENT_CONTEXT_BYTES`] without any trace key: the function is then not invoked.
pub fn client_context(
    tool_name: &str,
    headers: &[(HeaderName, HeaderValue)],
    trace: &[(HeaderName, HeaderValue)],
) -> Result<String, InvokeError> {
    let mut custom = Map::new();
    custom.insert("bedrockAgentCoreToolName".into(), tool_name.into());
    custom.insert("mcpToolName".into(), tool_name.into());
    for (name, value) in headers {
        let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
        custom.insert(name.as_str().to_string(), Value::String(text));
    }
    let mut trace: Vec<&(HeaderName, HeaderValue)> = trace.iter().collect();
    loop {
        let mut with_trace = custom.clone();
        for (name, value) in &trace {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            with_trace.insert(name.as_str().to_string(), Value::String(text));
        }
        let mut document = Map::new();
        document.insert("custom".into(), Value::Object(with_trace));
        let json = serde_json::to_vec(&Value::Object(document)).unwrap_or_default();
        let encoded = base64::engine::general_purpose::STANDARD.encode(json);
        if encoded.len() <= MAX_CLIENT_CONTEXT_BYTES {
            return Ok(encoded);
        }
        let Some(drop) = TRACE_DROP_ORDER
            .iter()
            .find_map(|key| trace.iter().position(|(name, _)| name.as_str() == *key))
        else {
            return Err(InvokeError::ClientContextTooLarge);
        };
        trace.remove(drop);
    }
}

/// The order trace keys leave a client context that would be too large (CONTRACT O3).
const TRACE_DROP_ORDER: [&str; 4] = ["baggage", "tracestate", "x-amzn-trace-id", "traceparent"];

/// The Invoke API URL of `function`: `<endpoint>/2015-03-31/functions/<ARN>/invocations`, the
/// unqualified ARN percent-encoded as one segment, `?Qualifier=` when it has one; `<endpoint>`
/// is `endpoint_override` or the function's regional endpoint (CONTRACT X10).
#[must_use]
pub fn invoke_url(endpoint_override: Option<&str>, function: &FunctionArn) -> String {
    let base = endpoint_override.map_or_else(|| function.regional_endpoint(), str::to_string);
    let name = utf8_percent_encode(&function.unqualified(), LABEL).to_string();
    let mut url = format!("{base}/2015-03-31/functions/{name}/invocations");
    if let Some(qualifier) = &function.qualifier {
        url.push_str("?Qualifier=");
        url.extend(utf8_percent_encode(qualifier, LABEL));
    }
    url
}

/// Maps an Invoke API answer (status, whether `X-Amz-Function-Error` was set, the
/// `x-amzn-ErrorType` header, the body) to a tool answer or the reason there is none (CONTRACT
/// X10).
///
/// # Errors
/// The [`InvokeError`] of every answer that is not a function's result.
pub fn classify(
    status: StatusCode,
    function_error: bool,
    header_type: Option<&str>,
    body: Vec<u8>,
    function: &FunctionArn,
) -> Result<ToolResponse, InvokeError> {
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    // A synchronous invocation answers 200; any other status, 2xx included, is no result.
    let ok = status == StatusCode::OK;
    if ok && function_error {
        let field = |key: &str| {
            json.as_ref()
                .and_then(|v| v.get(key))
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
        };
        let message = field("errorMessage")
            .or_else(|| field("errorType"))
            .unwrap_or_else(|| "the function reported an error".into());
        return Err(InvokeError::FunctionError {
            message: redacted(&message, function),
        });
    }
    if ok {
        if json.is_none() {
            return Err(InvokeError::NotJson);
        }
        return Ok(ToolResponse {
            location: None,
            status: StatusCode::OK,
            body: Bytes::from(body),
        });
    }
    let error_type = error_type(header_type, json.as_ref(), function);
    Err(match status.as_u16() {
        429 => InvokeError::Throttled,
        404 => InvokeError::FunctionNotFound,
        403 => InvokeError::AccessDenied { error_type },
        413 => InvokeError::PayloadTooLarge { error_type },
        code => InvokeError::InvokeFailed {
            status: code,
            error_type,
        },
    })
}

/// The error type AWS names: `x-amzn-ErrorType` (before any `:`), else the body's `__type`
/// (after any `#`); letters and digits only; `unknown error` when there is none, or when it
/// would name the function's account, region or name (a name of [`MIN_BARE_NAME_CHARS`] or
/// more), each compared in letters and digits only (CONTRACT X10).
fn error_type(header: Option<&str>, body: Option<&Value>, function: &FunctionArn) -> String {
    let from_header = header.map(|h| h.split(':').next().unwrap_or_default().to_string());
    let from_body = || {
        body.and_then(|b| b.get("__type"))
            .and_then(Value::as_str)
            .map(|t| t.rsplit('#').next().unwrap_or_default().to_string())
    };
    let alphanumeric = |text: &str| -> String {
        text.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let name = Some(alphanumeric(&function.name))
        .filter(|_| function.name.chars().count() >= MIN_BARE_NAME_CHARS)
        .unwrap_or_default();
    let secrets = [
        function.account.clone(),
        alphanumeric(&function.region),
        name,
    ];
    from_header
        .or_else(from_body)
        .map(|t| {
            t.chars()
                .filter(char::is_ascii_alphanumeric)
                .take(64)
                .collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .filter(|t| {
            let lower = t.to_ascii_lowercase();
            !secrets
                .iter()
                .any(|secret| !secret.is_empty() && lower.contains(secret.as_str()))
        })
        .unwrap_or_else(|| "unknown error".into())
}

#[cfg(test)]
#[path = "lambda_invocation_tests.rs"]
mod tests;
