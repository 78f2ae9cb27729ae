//! The sans-IO half of Lambda function tools (CONTRACT X10): the client context, the Invoke
//! API URL and the classification of its answers, which never quote AWS's own messages (they
//! name the ARN). The call itself is `invoke/lambda.rs`'s.

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::{InvokeError, ToolResponse};
use crate::registry::FunctionArn;

/// Lambda's limit on the `X-Amz-Client-Context` header, in bytes of its base64 text.
pub const MAX_CLIENT_CONTEXT_BYTES: usize = 3583;

/// The `X-Amz-Client-Context` value of one invocation (CONTRACT X10): base64 of
/// `{"custom": {...}}` with the tool name under `bedrockAgentCoreToolName` and `mcpToolName`,
/// then each forwarded caller header under its lower-case name, all strings.
///
/// # Errors
/// [`InvokeError::ClientContextTooLarge`] when the encoded value exceeds
/// [`MAX_CLIENT_CONTEXT_BYTES`]: the function is then not invoked.
pub fn client_context(
    tool_name: &str,
    headers: &[(HeaderName, HeaderValue)],
) -> Result<String, InvokeError> {
    let mut custom = Map::new();
    custom.insert("bedrockAgentCoreToolName".into(), tool_name.into());
    custom.insert("mcpToolName".into(), tool_name.into());
    for (name, value) in headers {
        let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
        custom.insert(name.as_str().to_string(), Value::String(text));
    }
    let mut document = Map::new();
    document.insert("custom".into(), Value::Object(custom));
    let json = serde_json::to_vec(&Value::Object(document)).unwrap_or_default();
    let encoded = base64::engine::general_purpose::STANDARD.encode(json);
    if encoded.len() > MAX_CLIENT_CONTEXT_BYTES {
        return Err(InvokeError::ClientContextTooLarge);
    }
    Ok(encoded)
}

/// The Invoke API URL of `function`: `<endpoint>/2015-03-31/functions/<ARN>/invocations`, the
/// unqualified ARN percent-encoded as one segment, `?Qualifier=` when it has one; `<endpoint>`
/// is `endpoint_override` or the function's regional endpoint (CONTRACT X10).
#[must_use]
pub fn invoke_url(endpoint_override: Option<&str>, function: &FunctionArn) -> String {
    let base = endpoint_override.map_or_else(|| function.regional_endpoint(), str::to_string);
    let name = utf8_percent_encode(&function.unqualified(), NON_ALPHANUMERIC).to_string();
    let mut url = format!("{base}/2015-03-31/functions/{name}/invocations");
    if let Some(qualifier) = &function.qualifier {
        url.push_str("?Qualifier=");
        url.extend(utf8_percent_encode(qualifier, NON_ALPHANUMERIC));
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
    if status.is_success() && function_error {
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
    if status.is_success() {
        if json.is_none() {
            return Err(InvokeError::NotJson);
        }
        return Ok(ToolResponse {
            status: StatusCode::OK,
            body: Bytes::from(body),
        });
    }
    let error_type = error_type(header_type, json.as_ref());
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
/// (after any `#`); letters and digits only; `unknown error` when there is none.
fn error_type(header: Option<&str>, body: Option<&Value>) -> String {
    let from_header = header.map(|h| h.split(':').next().unwrap_or_default().to_string());
    let from_body = || {
        body.and_then(|b| b.get("__type"))
            .and_then(Value::as_str)
            .map(|t| t.rsplit('#').next().unwrap_or_default().to_string())
    };
    from_header
        .or_else(from_body)
        .map(|t| {
            t.chars()
                .filter(char::is_ascii_alphanumeric)
                .take(64)
                .collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "unknown error".into())
}

/// A function's error message with every ARN (`arn:` and what follows of `[A-Za-z0-9:/_$-]`), the
/// function's account and its region replaced (CONTRACT X10).
fn redacted(message: &str, function: &FunctionArn) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("arn:") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| {
                !(c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '_' | '$' | '-'))
            })
            .unwrap_or(tail.len());
        out.push_str("<function>");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out.replace(&function.account, "<account>")
        .replace(&function.region, "<region>")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arn() -> FunctionArn {
        FunctionArn::parse("arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live").unwrap()
    }

    #[test]
    fn x10_client_context_carries_the_tool_name_and_headers_as_strings() {
        let headers = [
            (
                HeaderName::from_static("guid"),
                HeaderValue::from_static("0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"),
            ),
            (
                HeaderName::from_static("employee-no"),
                HeaderValue::from_static("ENC(AbC+/==)"),
            ),
        ];
        let encoded = client_context("lookup_glossary", &headers).unwrap();
        let decoded: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            decoded,
            serde_json::json!({"custom": {
                "bedrockAgentCoreToolName": "lookup_glossary",
                "mcpToolName": "lookup_glossary",
                "guid": "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
                "employee-no": "ENC(AbC+/==)"
            }})
        );
    }

    #[test]
    fn x10_a_client_context_over_the_limit_is_refused() {
        let long = HeaderValue::from_str(&"E".repeat(2048)).unwrap();
        let headers = [
            (HeaderName::from_static("employee-no"), long.clone()),
            (HeaderName::from_static("virtual-employee-no"), long),
        ];
        assert_eq!(
            client_context("t", &headers),
            Err(InvokeError::ClientContextTooLarge)
        );
        let fits = HeaderValue::from_str(&"E".repeat(2048)).unwrap();
        assert!(client_context("t", &[(HeaderName::from_static("employee-no"), fits)]).is_ok());
    }

    #[test]
    fn x10_invoke_url_encodes_the_arn_and_names_the_qualifier() {
        assert_eq!(
            invoke_url(None, &arn()),
            "https://lambda.eu-west-1.amazonaws.com/2015-03-31/functions/\
             arn%3Aaws%3Alambda%3Aeu%2Dwest%2D1%3A123456789012%3Afunction%3Ahr%2Dtools/invocations?Qualifier=live"
        );
        assert_eq!(
            invoke_url(Some("http://127.0.0.1:9001"), &arn()),
            "http://127.0.0.1:9001/2015-03-31/functions/\
             arn%3Aaws%3Alambda%3Aeu%2Dwest%2D1%3A123456789012%3Afunction%3Ahr%2Dtools/invocations?Qualifier=live"
        );
    }

    #[test]
    fn x10_answers_are_classified_without_aws_messages() {
        let f = arn();
        let ok = classify(StatusCode::OK, false, None, b"\"hi\"".to_vec(), &f).unwrap();
        assert_eq!(ok.body, Bytes::from_static(b"\"hi\""));
        assert_eq!(
            classify(StatusCode::OK, false, None, b"not json".to_vec(), &f),
            Err(InvokeError::NotJson)
        );
        let message = br#"{"errorMessage":"no access to arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live","errorType":"Boom"}"#;
        assert_eq!(
            classify(StatusCode::OK, true, None, message.to_vec(), &f),
            Err(InvokeError::FunctionError {
                message: "no access to <function>".into()
            })
        );
        assert_eq!(
            classify(
                StatusCode::NOT_FOUND,
                false,
                Some("ResourceNotFoundException:http://internal.amazon.com/coral/"),
                br#"{"Type":"User","Message":"Function not found: arn:aws:lambda:eu-west-1:123456789012:function:hr-tools"}"#.to_vec(),
                &f
            ),
            Err(InvokeError::FunctionNotFound)
        );
        assert_eq!(
            classify(
                StatusCode::BAD_GATEWAY,
                false,
                None,
                br#"{"__type":"com.amazon#ServiceException"}"#.to_vec(),
                &f
            ),
            Err(InvokeError::InvokeFailed {
                status: 502,
                error_type: "ServiceException".into()
            })
        );
        assert_eq!(
            error_type(None, None),
            "unknown error",
            "no type named: a fixed text"
        );
    }
}
