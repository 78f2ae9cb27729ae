//! Lambda function tools (CONTRACT M4, X10) against a loopback server speaking the Lambda Invoke
//! API: what the gateway sends (path, qualifier, SigV4 headers, client context, payload), how
//! every answer becomes a result, and the faults the local emulator cannot produce (throttling,
//! missing function, access denied, oversized payloads, a body that is not JSON). No result text
//! ever names the ARN, the account or the region.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use gateway_tests::{Answer, Harness, manifest};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::trace::Tracing;
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

const ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:hr-tools";
const ENCODED_ARN: &str = "arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Ahr-tools";
/// A function whose name is a one-letter word.
const SHORT_NAMED_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:a";

/// A gateway whose route `core` also has Lambda tools on [`ARN`], calling the Invoke API of a
/// loopback server (the harness's Tool Service) with fixed credentials.
pub(crate) async fn harness() -> Harness {
    harness_traced(Tracing::default()).await
}

/// [`harness`] with `tracing`'s sampler and span export (CONTRACT O5).
pub(crate) async fn harness_traced(tracing: Tracing) -> Harness {
    let invoke_api = MockServer::start().await;
    let mut document = manifest(&invoke_api.uri());
    let lambda_tool = |name: &str, endpoint: &str, extra: Value| {
        let mut tool = json!({
            "name": name,
            "description": format!("Lambda tool {name}"),
            "inputSchema": {"type": "object", "properties": {"term": {"type": "string"}},
                            "required": ["term"]},
            "_meta": {"endpoint": endpoint}
        });
        if let (Value::Object(meta), Value::Object(extra)) = (&mut tool["_meta"], extra) {
            meta.extend(extra);
        }
        tool
    };
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    tools.push(lambda_tool("lookup_glossary", ARN, json!({})));
    tools.push(lambda_tool(
        "lookup_glossary_live",
        &format!("{ARN}:live"),
        json!({}),
    ));
    tools.push(lambda_tool("slow_glossary", ARN, json!({"timeoutMs": 300})));
    tools.push(lambda_tool("lookup_a", SHORT_NAMED_ARN, json!({})));
    let snapshot = compile_manifest(&document).expect("test manifest compiles");
    let mut config = Config::fixed_defaults();
    config.lambda_endpoint = Some(invoke_api.uri());
    let invoker = HttpInvoker::from_config(&config)
        .unwrap()
        .with_aws_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    Harness {
        gateway: Arc::new(Gateway::new(config, Ok(snapshot), invoker).with_tracing(tracing)),
        tool_service: invoke_api,
    }
}

/// [`harness_traced`] whose functions all answer `{"ok":true}`.
pub(crate) async fn answering_ok(tracing: Tracing) -> Harness {
    let h = harness_traced(tracing).await;
    answers(
        &h,
        ResponseTemplate::new(200).set_body_raw(r#"{"ok":true}"#, "application/json"),
    )
    .await;
    h
}

pub(crate) async fn answers(h: &Harness, template: ResponseTemplate) {
    h.tool_service.reset().await;
    Mock::given(any())
        .respond_with(template)
        .mount(&h.tool_service)
        .await;
}

/// Asserts an `isError` result and returns its text, which names no ARN, account or region.
#[track_caller]
fn error_text(answer: &Answer) -> String {
    let body = answer.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    let raw = String::from_utf8_lossy(&answer.body);
    for secret in ["123456789012", "us-east-1", "arn:", "hr-tools", "127.0.0.1"] {
        assert!(!raw.contains(secret), "{secret} leaked: {raw}");
    }
    body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[track_caller]
fn ok_text(answer: &Answer) -> String {
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
    body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn x10_the_invocation_is_signed_and_carries_payload_and_client_context() {
    let h = harness().await;
    answers(
        &h,
        ResponseTemplate::new(200).set_body_raw(
            r#"{"term":"휴가", "definition" : "쉬는 기간"}"#,
            "application/json",
        ),
    )
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "lookup_glossary", "arguments": {"term": "휴가"}}});
    let answer = h
        .post(
            "/mcp/core",
            &body,
            &[
                ("guid", "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"),
                ("x-request-id", "req-42"),
                ("mcp-session-id", "sess-1"),
                ("employee-no", "ENC(AbC+/==)"),
                ("virtual-employee-no", "VENC:xyz"),
            ],
        )
        .await;
    // X5: a JSON object result is its compact JSON text.
    assert_eq!(
        ok_text(&answer),
        r#"{"term":"휴가","definition":"쉬는 기간"}"#
    );
    let requests = h.tool_service.received_requests().await.unwrap();
    let [request] = &requests[..] else {
        panic!("one invocation expected")
    };
    assert_eq!(request.method.as_str(), "POST");
    assert_eq!(
        request.url.path(),
        format!("/2015-03-31/functions/{ENCODED_ARN}/invocations")
    );
    assert_eq!(request.url.query(), None);
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(
        header("x-amz-invocation-type").as_deref(),
        Some("RequestResponse")
    );
    assert_eq!(header("content-type").as_deref(), Some("application/json"));
    let authorization = header("authorization").unwrap();
    let date = header("x-amz-date").unwrap();
    assert!(
        authorization.starts_with(&format!(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{}/us-east-1/lambda/aws4_request",
            &date[..8]
        )),
        "{authorization}"
    );
    assert!(
        authorization.contains("x-amz-client-context"),
        "{authorization}"
    );
    // The caller headers travel in the client context only, never as HTTP headers to AWS.
    for forwarded in [
        "employee-no",
        "virtual-employee-no",
        "mcp-session-id",
        "guid",
    ] {
        assert!(
            request.headers.get(forwarded).is_none(),
            "{forwarded} sent to AWS"
        );
    }
    let mut context: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(header("x-amz-client-context").unwrap())
            .unwrap(),
    )
    .unwrap();
    // CONTRACT O3: a new trace, as the caller sent none.
    let traceparent = context["custom"]
        .as_object_mut()
        .unwrap()
        .remove("traceparent")
        .expect("a traceparent");
    assert_eq!(traceparent.as_str().unwrap().len(), 55, "{traceparent}");
    assert_eq!(
        context,
        json!({"custom": {
            "bedrockAgentCoreToolName": "lookup_glossary",
            "mcpToolName": "lookup_glossary",
            "guid": "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
            "x-request-id": "req-42",
            "mcp-session-id": "sess-1",
            "employee-no": "ENC(AbC+/==)",
            "virtual-employee-no": "VENC:xyz"
        }})
    );
    let payload: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(payload, json!({"term": "휴가"}));
}

#[tokio::test]
async fn x10_a_qualified_arn_names_its_qualifier() {
    let h = harness().await;
    answers(&h, ResponseTemplate::new(200).set_body_string("[]")).await;
    ok_text(
        &h.call_tool("lookup_glossary_live", json!({"term": "SLA"}))
            .await,
    );
    let request = &h.tool_service.received_requests().await.unwrap()[0];
    assert_eq!(
        request.url.path(),
        format!("/2015-03-31/functions/{ENCODED_ARN}/invocations")
    );
    assert_eq!(request.url.query(), Some("Qualifier=live"));
}

#[tokio::test]
async fn x10_array_and_string_results_map_as_x5_maps_a_2xx_body() {
    let h = harness().await;
    for (body, text) in [
        ("[ \"휴가\", \"SLA\" ]", r#"["휴가","SLA"]"#),
        ("\"일회용 비밀번호.\"", "\"일회용 비밀번호.\""),
        ("42", "42"),
        ("null", "null"),
    ] {
        answers(&h, ResponseTemplate::new(200).set_body_string(body)).await;
        let answer = h.call_tool("lookup_glossary", json!({"term": "x"})).await;
        assert_eq!(ok_text(&answer), text, "{body}");
    }
}

#[tokio::test]
async fn x10_function_errors_are_is_error_results_with_the_error_message() {
    let h = harness().await;
    for (kind, body, text) in [
        (
            "Handled",
            json!({"errorMessage": "term 'nope' is not in the glossary", "errorType": "Error"}),
            "Tool Service function failed: term 'nope' is not in the glossary",
        ),
        (
            "Handled",
            json!({"errorMessage": ARN.to_ascii_uppercase() + " (account 1234-5678-9012, US-EAST-1) failed."}),
            "Tool Service function failed: <function> (account <account>, <region>) failed.",
        ),
        (
            "Unhandled",
            json!({"errorType": "Runtime.ExitError"}),
            "Tool Service function failed: Runtime.ExitError",
        ),
        (
            "Unhandled",
            json!({"errorMessage": format!("2026-12-02T04:00:00Z {ARN}:live Task timed out after 3.00 seconds in us-east-1 for 123456789012; see arn:aws:lambda:eu-west-1:999999999999:function:other."),
                   "errorType": "Sandbox.Timedout"}),
            "Tool Service function failed: 2026-12-02T04:00:00Z <function> Task timed out after 3.00 seconds in <region> for <account>; see <function>.",
        ),
        (
            "Handled",
            json!({"errorMessage": "hr-tools failed: HR-Tools:live could not read /aws/lambda/hr-tools; ask the hr-tools:$LATEST owners"}),
            "Tool Service function failed: <function> failed: <function> could not read /aws/lambda/<function>; ask the <function> owners",
        ),
        (
            "Unhandled",
            json!({"errorType": "hr-tools.GlossaryUnavailable"}),
            "Tool Service function failed: <function>.GlossaryUnavailable",
        ),
    ] {
        answers(
            &h,
            ResponseTemplate::new(200)
                .insert_header("x-amz-function-error", kind)
                .set_body_json(body),
        )
        .await;
        let answer = h
            .call_tool("lookup_glossary", json!({"term": "nope"}))
            .await;
        assert_eq!(error_text(&answer), text);
    }
}

#[tokio::test]
async fn x10_a_function_name_under_three_characters_leaves_ordinary_words_alone() {
    let h = harness().await;
    answers(
        &h,
        ResponseTemplate::new(200)
            .insert_header("x-amz-function-error", "Handled")
            .set_body_json(json!({"errorMessage": format!(
                "a term is missing in a:live ({SHORT_NAMED_ARN})"
            )})),
    )
    .await;
    let answer = h.call_tool("lookup_a", json!({"term": "SLA"})).await;
    assert_eq!(
        error_text(&answer),
        "Tool Service function failed: a term is missing in a:live (<function>)"
    );
    answers(
        &h,
        ResponseTemplate::new(403).insert_header("x-amzn-ErrorType", "AccessDeniedException"),
    )
    .await;
    let answer = h.call_tool("lookup_a", json!({"term": "SLA"})).await;
    assert_eq!(
        error_text(&answer),
        "The gateway may not invoke the Tool Service function (AccessDeniedException)"
    );
}

#[tokio::test]
async fn x10_invoke_api_faults_are_is_error_results_that_name_no_arn() {
    let h = harness().await;
    let aws_error = |status: u16, error_type: &str| {
        ResponseTemplate::new(status)
            .insert_header(
                "x-amzn-ErrorType",
                format!("{error_type}:http://internal.amazon.com/coral/com.amazonaws.awsgirapi/"),
            )
            .set_body_json(json!({"Type": "User", "message": format!("Function not found: {ARN}")}))
    };
    let cases = [
        (
            aws_error(429, "TooManyRequestsException"),
            "Tool Service function is throttled (TooManyRequestsException); try again later",
        ),
        (
            aws_error(404, "ResourceNotFoundException"),
            "Tool Service function was not found (ResourceNotFoundException)",
        ),
        (
            aws_error(403, "AccessDeniedException"),
            "The gateway may not invoke the Tool Service function (AccessDeniedException)",
        ),
        (
            aws_error(413, "RequestTooLargeException"),
            "Tool Service payload exceeds Lambda's limits (RequestTooLargeException)",
        ),
        (
            aws_error(502, "EC2ThrottledException"),
            "Tool Service function could not be invoked (HTTP 502, EC2ThrottledException)",
        ),
        (
            ResponseTemplate::new(500)
                .set_body_json(json!({"__type": "com.amazon.coral#ServiceException",
                                                           "message": ARN})),
            "Tool Service function could not be invoked (HTTP 500, ServiceException)",
        ),
        (
            ResponseTemplate::new(201).set_body_json(
                json!({"Type": "User", "Message": format!("Function not found: {ARN}")}),
            ),
            "Tool Service function could not be invoked (HTTP 201, unknown error)",
        ),
        (
            ResponseTemplate::new(400).set_body_json(json!({"__type": "hr-tools123456789012"})),
            "Tool Service function could not be invoked (HTTP 400, unknown error)",
        ),
        (
            ResponseTemplate::new(503).set_body_string("<html>down</html>"),
            "Tool Service function could not be invoked (HTTP 503, unknown error)",
        ),
        (
            ResponseTemplate::new(200).set_body_raw("<html>ok</html>", "text/html"),
            "Tool Service function answered with a body that is not JSON",
        ),
    ];
    for (template, text) in cases {
        answers(&h, template).await;
        let answer = h.call_tool("lookup_glossary", json!({"term": "SLA"})).await;
        assert_eq!(error_text(&answer), text);
    }
}

#[tokio::test]
async fn x10_a_7_mb_answer_is_refused_at_the_response_limit() {
    let h = harness().await;
    let big = format!("\"{}\"", "가".repeat(7 * 1024 * 1024 / 3));
    answers(&h, ResponseTemplate::new(200).set_body_string(big)).await;
    let answer = h.call_tool("lookup_glossary", json!({"term": "SLA"})).await;
    assert_eq!(
        error_text(&answer),
        "Tool Service response exceeds 4194304 bytes"
    );
}

#[tokio::test]
async fn x10_headers_that_do_not_fit_the_client_context_invoke_nothing() {
    let h = harness().await;
    answers(&h, ResponseTemplate::new(200).set_body_string("{}")).await;
    let long = "E".repeat(2048);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "lookup_glossary", "arguments": {"term": "SLA"}}});
    let answer = h
        .post(
            "/mcp/core",
            &body,
            &[("employee-no", &long), ("virtual-employee-no", &long)],
        )
        .await;
    assert_eq!(
        error_text(&answer),
        "The forwarded caller headers do not fit Lambda's client context (3583 bytes encoded); the function was not invoked"
    );
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
    // One such header fits: the function is invoked.
    let answer = h.post("/mcp/core", &body, &[("employee-no", &long)]).await;
    ok_text(&answer);
}

#[tokio::test]
async fn x2_x7_arguments_are_validated_first_and_the_timeout_holds() {
    let h = harness().await;
    answers(
        &h,
        ResponseTemplate::new(200)
            .set_body_string("{}")
            .set_delay(Duration::from_secs(3)),
    )
    .await;
    let answer = h.call_tool("lookup_glossary", json!({})).await;
    answer.assert_rpc_error(-32602, "Invalid params: 'term' is required", &json!(1));
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
    let answer = h.call_tool("slow_glossary", json!({"term": "SLA"})).await;
    assert_eq!(
        error_text(&answer),
        "Tool Service did not answer within 300 ms"
    );
}

#[test]
fn m4_function_arns_are_checked_at_load() {
    let with_endpoint = |endpoint: &str, extra: Value| {
        let mut meta = json!({"endpoint": endpoint});
        if let (Value::Object(meta), Value::Object(extra)) = (&mut meta, extra) {
            meta.extend(extra);
        }
        json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [
            {"name": "t", "inputSchema": {"type": "object"}, "_meta": meta}]}]})
    };
    let problems = |manifest: &Value| -> Vec<String> {
        compile_manifest(manifest)
            .err()
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    for good in [
        ARN,
        &format!("{ARN}:$LATEST"),
        &format!("{ARN}:7"),
        &format!("{ARN}:live"),
    ] {
        assert_eq!(
            problems(&with_endpoint(good, json!({}))),
            Vec::<String>::new(),
            "{good}"
        );
    }
    for bad in [
        "arn:aws:lambda:us-east-1:123456789012:function",
        "arn:aws:lambda:us-east-1:1234:function:hr-tools",
        "arn:aws:s3:::bucket",
        "arn:aws:lambda:us-east-1:123456789012:function:hr/tools",
        "lambda:hr-tools",
    ] {
        assert_eq!(
            problems(&with_endpoint(bad, json!({}))),
            [
                "routes[0].tools[0]._meta.endpoint: must be an absolute http(s) URL or a Lambda function ARN (arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>])"
            ],
            "{bad}"
        );
    }
    assert_eq!(
        problems(&with_endpoint(
            ARN,
            json!({"method": "GET", "parameters": {}})
        )),
        [
            "routes[0].tools[0]._meta.method: does not apply to a Lambda function tool",
            "routes[0].tools[0]._meta.parameters: does not apply to a Lambda function tool"
        ]
    );
}
