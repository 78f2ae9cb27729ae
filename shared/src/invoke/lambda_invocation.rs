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
             arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Ahr-tools/invocations?Qualifier=live"
        );
        assert_eq!(
            invoke_url(Some("http://127.0.0.1:9001"), &arn()),
            "http://127.0.0.1:9001/2015-03-31/functions/\
             arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Ahr-tools/invocations?Qualifier=live"
        );
    }

    #[test]
    fn x10_redaction_finds_arns_in_any_spelling() {
        let f = arn();
        for (message, shown) in [
            (
                "ARN:AWS:LAMBDA:EU-WEST-1:123456789012:FUNCTION:HR-TOOLS failed.",
                "<function> failed.",
            ),
            (
                "see Arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live, then",
                "see <function>, then",
            ),
            (
                "arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Ahr-tools gone",
                "<function> gone",
            ),
            ("arn:\u{200b}aws:lambda:x:function:hr-tools", "<function>"),
            (
                "account 1234-5678-9012 region EU-WEST-1 (1234 5678 9012)",
                "account <account> region <region> (<account>)",
            ),
            ("no secrets here", "no secrets here"),
        ] {
            assert_eq!(redacted(message, &f), shown, "{message}");
        }
    }

    #[test]
    fn x10_redaction_finds_the_bare_function_name_as_a_whole_word() {
        let f = arn();
        for (message, shown) in [
            ("hr-tools failed", "<function> failed"),
            (
                "HR-Tools:live timed out; Hr-tools:$LATEST and hr-tools:7 too",
                "<function> timed out; <function> and <function> too",
            ),
            (
                "log group /aws/lambda/hr-tools.",
                "log group /aws/lambda/<function>.",
            ),
            ("hr-tools: bad input", "<function>: bad input"),
            ("'hr-tools'에서 실패", "'<function>'에서 실패"),
            (
                "arn:aws:lambda:eu-west-1:123456789012:function:hr-tools:live calls hr-tools in \
                 eu-west-1",
                "<function> calls <function> in <region>",
            ),
            // Part of a longer name: another function's, left as it is.
            (
                "hr-tools-v2, my-hr-tools, hr-tools_old and hr-toolsx stay",
                "hr-tools-v2, my-hr-tools, hr-tools_old and hr-toolsx stay",
            ),
        ] {
            assert_eq!(redacted(message, &f), shown, "{message}");
        }
    }

    #[test]
    fn x10_redaction_never_rewrites_its_own_placeholders() {
        let named = |name: &str| {
            FunctionArn::parse(&format!(
                "arn:aws:lambda:eu-west-1:123456789012:function:{name}"
            ))
            .unwrap()
        };
        assert_eq!(
            redacted(
                "arn:aws:lambda:eu-west-1:123456789012:function:function failed in function",
                &named("function")
            ),
            "<function> failed in <function>"
        );
        assert_eq!(
            redacted("region eu-west-1 of account 123456789012", &named("region")),
            "<function> <region> of account <account>"
        );
        assert_eq!(
            redacted("no account in eu-west-1", &named("account")),
            "no <function> in <region>"
        );
    }

    #[test]
    fn x10_names_under_three_characters_are_not_looked_for_on_their_own() {
        let named = |name: &str| {
            FunctionArn::parse(&format!(
                "arn:aws:lambda:us-east-1:123456789012:function:{name}"
            ))
            .unwrap()
        };
        // As whole words these are ordinary words and numbers: the message stays readable.
        assert_eq!(
            redacted("a timeout: a:live is a bug", &named("a")),
            "a timeout: a:live is a bug"
        );
        assert_eq!(
            redacted("go on, Go:42 went 42 ms", &named("go")),
            "go on, Go:42 went 42 ms"
        );
        assert_eq!(
            redacted(
                "a failed: arn:aws:lambda:us-east-1:123456789012:function:a",
                &named("a")
            ),
            "a failed: <function>",
            "its ARN is hidden whatever the name's length"
        );
        assert_eq!(
            redacted("hr1 failed, hr1:live too", &named("hr1")),
            "<function> failed, <function> too"
        );
        // Nor do they make every error type that holds their letters `unknown error`.
        assert_eq!(
            error_type(Some("AccessDeniedException"), None, &named("a")),
            "AccessDeniedException"
        );
        assert_eq!(
            error_type(Some("Hr1Error"), None, &named("hr1")),
            "unknown error"
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
            error_type(None, None, &f),
            "unknown error",
            "no type named: a fixed text"
        );
        for secret in ["hrtools123456789012", "EUWEST1Error", "Hr-Tools"] {
            assert_eq!(
                error_type(Some(secret), None, &f),
                "unknown error",
                "{secret}"
            );
        }
        // Only a 200 is a result: another 2xx is an invocation failure.
        assert_eq!(
            classify(StatusCode::CREATED, false, None, b"{}".to_vec(), &f),
            Err(InvokeError::InvokeFailed {
                status: 201,
                error_type: "unknown error".into()
            })
        );
    }
}
