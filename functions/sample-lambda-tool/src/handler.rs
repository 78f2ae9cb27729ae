//! A sample *Lambda Tool Service* (CONTRACT M4, X10): one Lambda function serving several MCP
//! tools, which the gateway invokes directly through the Lambda Invoke API when a tool's
//! `_meta.endpoint` is a function ARN such as
//! `arn:aws:lambda:us-east-1:123456789012:function:sample-lambda-tool[:live]`.
//!
//! # What the function receives
//!
//! - **The payload** is the tool call's `arguments` object, exactly as the MCP client sent it
//!   (after the gateway validated it against the tool's `inputSchema`).
//! - **The client context** (`context.client_context`, which the gateway sends base64-encoded in
//!   `X-Amz-Client-Context` and Lambda hands to the runtime decoded) carries a `custom` map whose
//!   values are all strings:
//!   - `mcpToolName`: the name of the tool called, and the same name under
//!     `bedrockAgentCoreToolName` (the key AgentCore Gateway's Lambda targets read), so one
//!     function can serve both gateways. This function reads `mcpToolName` and falls back to
//!     `bedrockAgentCoreToolName`.
//!   - the caller headers the gateway forwards to every Tool Service (X4), under their lower-case
//!     names and unchanged, when the MCP request carried them: `guid`, `x-request-id`,
//!     `mcp-session-id`, `employee-no` and `virtual-employee-no`.
//!
//! # What it returns
//!
//! - **Any JSON value.** The gateway turns it into the tool result's text, compact JSON: an
//!   object or an array as is, a string with its quotes (X10, like X5 for an HTTP body).
//! - **An error** (the handler's `Err`, or a panic) becomes an `isError` result whose text is
//!   `Tool Service function failed: <errorMessage>`.
//!
//! # Tools
//!
//! | tool | arguments | answer |
//! |---|---|---|
//! | `lookup_glossary` | `{term, language?}` | `{"term", "definition"}` (`language: "en"` for English); an unknown term is an error `term '<term>' is not in the glossary` |
//! | `list_glossary_terms` | `{}` | the terms, an array of strings |
//! | `define_term` | `{term}` | the Korean definition, a JSON string |
//! | `echo_client_context` | `{}` | the client context's `custom` map, as an object |
//! | `fail_hard` | `{}` | panics (an unhandled function error) |
//! | `slow_lookup` | `{term, delayMs}` | waits `delayMs` milliseconds, then answers as `lookup_glossary` |
//!
//! Any other tool name is an error `unknown tool '<name>'`.
//!
//! The function logs nothing about a call: employee numbers and the rest of the client context
//! never reach its log.

use std::collections::HashMap;
use std::time::Duration;

use lambda_runtime::{Context, LambdaEvent};
use serde_json::{Map, Value};

use crate::glossary::{answer, lookup};
use crate::tool_error::ToolError;

/// The client context key the MCP gateway names the tool under.
const MCP_TOOL_NAME: &str = "mcpToolName";
/// The client context key AgentCore Gateway names the tool under (the gateway sends it too).
const AGENTCORE_TOOL_NAME: &str = "bedrockAgentCoreToolName";
/// The longest wait `slow_lookup` accepts, in milliseconds.
const MAX_DELAY_MS: u64 = 60_000;

/// The client context's `custom` map, empty when the invocation carried none.
fn custom(context: &Context) -> HashMap<String, String> {
    context
        .client_context
        .as_ref()
        .map(|client_context| client_context.custom.clone())
        .unwrap_or_default()
}

/// The tool the invocation is for: `mcpToolName`, else `bedrockAgentCoreToolName`.
fn tool_name(custom: &HashMap<String, String>) -> Option<&str> {
    custom
        .get(MCP_TOOL_NAME)
        .or_else(|| custom.get(AGENTCORE_TOOL_NAME))
        .map(String::as_str)
}

/// One invocation: the tool named in the client context, applied to the payload (its
/// arguments).
pub(crate) async fn handle(event: LambdaEvent<Value>) -> Result<Value, ToolError> {
    let (arguments, context) = event.into_parts();
    let custom = custom(&context);
    let Some(tool) = tool_name(&custom) else {
        return Err(ToolError::new(
            "MissingToolName",
            format!("the client context names no tool ({MCP_TOOL_NAME})"),
        ));
    };
    match tool {
        "echo_client_context" => Ok(Value::Object(
            custom
                .iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect::<Map<String, Value>>(),
        )),
        "fail_hard" => panic!("fail_hard always panics"),
        "slow_lookup" => {
            let delay = arguments["delayMs"].as_u64().unwrap_or(0).min(MAX_DELAY_MS);
            tokio::time::sleep(Duration::from_millis(delay)).await;
            lookup(&arguments)
        }
        _ => answer(tool, &arguments),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use http::{HeaderMap, HeaderValue};
    use lambda_runtime::Diagnostic;
    use serde_json::json;

    /// A context as the runtime builds it from the Runtime API's headers, with the client
    /// context (JSON, as Lambda hands it to the runtime) when there is one.
    fn context(client_context: Option<&Value>) -> Context {
        let mut headers = HeaderMap::new();
        headers.insert("lambda-runtime-deadline-ms", HeaderValue::from_static("0"));
        if let Some(client_context) = client_context {
            headers.insert(
                "lambda-runtime-client-context",
                HeaderValue::from_str(&client_context.to_string()).unwrap(),
            );
        }
        Context::new(
            "request-1",
            Arc::new(lambda_runtime::Config::default()),
            &headers,
        )
        .expect("a context")
    }

    fn event(tool: Option<&str>, arguments: Value) -> LambdaEvent<Value> {
        let client_context = tool.map(|tool| {
            json!({"custom": {
                MCP_TOOL_NAME: tool,
                AGENTCORE_TOOL_NAME: tool,
                "employee-no": "ENC(AbC+/==)",
            }})
        });
        LambdaEvent::new(arguments, context(client_context.as_ref()))
    }

    async fn call(tool: &str, arguments: Value) -> Result<Value, ToolError> {
        handle(event(Some(tool), arguments)).await
    }

    #[tokio::test]
    async fn lookup_glossary_answers_an_object_in_either_language() {
        assert_eq!(
            call("lookup_glossary", json!({"term": "sla"})).await,
            Ok(json!({"term": "SLA",
                "definition": "서비스 수준 협약: 서비스 제공자가 보장하는 가용성과 응답 시간."}))
        );
        assert_eq!(
            call("lookup_glossary", json!({"term": "OTP", "language": "en"})).await,
            Ok(json!({"term": "OTP", "definition": "One-time password."}))
        );
    }

    #[tokio::test]
    async fn an_unknown_term_is_a_handled_error_naming_it() {
        let error = call("lookup_glossary", json!({"term": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(error.message, "term 'nope' is not in the glossary");
        let diagnostic = Diagnostic::from(error);
        assert_eq!(diagnostic.error_type, "TermNotFound");
        assert_eq!(
            call("define_term", json!({"term": "nope"}))
                .await
                .unwrap_err()
                .message,
            "term 'nope' is not in the glossary"
        );
    }

    #[tokio::test]
    async fn list_glossary_terms_answers_an_array_and_define_term_a_string() {
        assert_eq!(
            call("list_glossary_terms", json!({})).await,
            Ok(json!(["휴가", "SLA", "OTP"]))
        );
        assert_eq!(
            call("define_term", json!({"term": "휴가"})).await,
            Ok(json!("근로자가 근로 의무를 면제받고 쉬는 기간."))
        );
    }

    #[tokio::test]
    async fn echo_client_context_answers_the_custom_map() {
        let answer = call("echo_client_context", json!({})).await.unwrap();
        assert_eq!(answer[MCP_TOOL_NAME], "echo_client_context");
        assert_eq!(answer[AGENTCORE_TOOL_NAME], "echo_client_context");
        assert_eq!(answer["employee-no"], "ENC(AbC+/==)");
        assert_eq!(answer.as_object().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn the_agentcore_key_names_the_tool_when_mcp_tool_name_is_absent() {
        let context = context(Some(
            &json!({"custom": {AGENTCORE_TOOL_NAME: "define_term"}}),
        ));
        let answer = handle(LambdaEvent::new(json!({"term": "OTP"}), context)).await;
        assert_eq!(answer, Ok(json!("일회용 비밀번호.")));
    }

    #[tokio::test]
    async fn an_unknown_or_missing_tool_name_is_a_handled_error() {
        let error = call("nope_tool", json!({})).await.unwrap_err();
        assert_eq!(error.message, "unknown tool 'nope_tool'");
        assert_eq!(error.kind, "UnknownTool");
        let error = handle(event(None, json!({}))).await.unwrap_err();
        assert_eq!(error.kind, "MissingToolName");
    }

    #[tokio::test]
    async fn a_missing_term_is_a_handled_error() {
        let error = call("lookup_glossary", json!({})).await.unwrap_err();
        assert_eq!(error.message, "'term' is required and must be a string");
    }

    #[tokio::test(start_paused = true)]
    async fn slow_lookup_waits_then_answers_like_lookup_glossary() {
        let started = tokio::time::Instant::now();
        let answer = call("slow_lookup", json!({"term": "OTP", "delayMs": 3000})).await;
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        assert_eq!(
            answer,
            Ok(json!({"term": "OTP", "definition": "일회용 비밀번호."}))
        );
    }

    #[tokio::test]
    #[should_panic(expected = "fail_hard always panics")]
    async fn fail_hard_panics() {
        let _ = call("fail_hard", json!({})).await;
    }
}
