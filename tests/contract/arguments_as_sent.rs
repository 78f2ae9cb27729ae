//! Arguments as sent (CONTRACT X11): every kind of endpoint receives the request's numbers with
//! the text the agent wrote (`1e2`, `1.0`, `-0`, `12345678901234567890123`), while X2's validation
//! judges their values as JSON Schema does. A real recording server on loopback is the Tool
//! Service, the REST API and the Lambda Invoke API at once.

use std::sync::Arc;

use gateway_tests::{Answer, Harness, VERSION, request};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

const ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:numbers";

/// The arguments every test sends, written as an agent might: exponents, a fraction on a whole
/// number, a negative zero, an integer past 64 bits, whitespace between tokens.
const ARGUMENTS: &str = r#"{ "i" : 1e2, "f": 1.0, "z": -0, "big": 12345678901234567890123,
    "items": [ 2.50, 1E-7 ], "nested": {"x": 0.1e1}, "id": 7 }"#;

/// `ARGUMENTS` without the whitespace between tokens: what each endpoint must receive.
const COMPACT: &str = r#"{"i":1e2,"f":1.0,"z":-0,"big":12345678901234567890123,"items":[2.50,1E-7],"nested":{"x":0.1e1},"id":7}"#;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "i": {"type": "integer", "maximum": 100},
            "f": {"type": "integer"},
            "z": {"type": "number"},
            "big": {"type": "integer", "minimum": 1e22},
            "items": {"type": "array", "items": {"type": "number"}},
            "nested": {"type": "object"},
            "id": {"type": "integer"}
        },
        "required": ["i"]
    })
}

async fn harness() -> Harness {
    let server = MockServer::start().await;
    let base = server.uri();
    let tool = |name: &str, meta: Value| json!({"name": name, "description": name, "inputSchema": schema(), "_meta": meta});
    let mut rest_members = tool(
        "rest_members",
        json!({
        "endpoint": format!("{base}/items/{{id}}"), "method": "POST",
        "parameters": {"id": "path", "f": "query"}}),
    );
    rest_members["inputSchema"]["required"] = json!(["i", "id"]);
    let mut rest_whole = tool(
        "rest_whole",
        json!({
        "endpoint": format!("{base}/items/{{id}}/big"), "method": "PUT",
        "parameters": {"id": "path", "nested": "wholeBody"}}),
    );
    rest_whole["inputSchema"] = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "nested": {"type": "object"}},
        "required": ["id"],
        "additionalProperties": false
    });
    let manifest = json!({
        "manifestVersion": 1,
        "routes": [{
            "routeKey": "core",
            "server": {"name": "core-tools", "title": "Core tools", "version": "1.0.0"},
            "tools": [
                tool("plain", json!({"endpoint": format!("{base}/plain")})),
                tool("put_plain", json!({"endpoint": format!("{base}/put"), "method": "PUT"})),
                rest_members,
                rest_whole,
                tool("lambda", json!({"endpoint": ARN})),
            ]
        }]
    });
    let snapshot = compile_manifest(&manifest).expect("test manifest compiles");
    let mut config = Config::fixed_defaults();
    config.lambda_endpoint = Some(server.uri());
    let invoker = HttpInvoker::from_config(&config)
        .unwrap()
        .with_aws_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&server)
        .await;
    Harness {
        gateway: Arc::new(Gateway::new(config, Ok(snapshot), invoker)),
        tool_service: server,
    }
}

/// `tools/call` of `name` with `arguments` written into the body as they are.
async fn call(h: &Harness, name: &str, arguments: &str) -> Answer {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    );
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        VERSION,
    ];
    h.send(request("POST", "/mcp/core", &headers, body)).await
}

/// The one request the server received: its path and query, and its body as text.
async fn received(h: &Harness) -> (String, String) {
    let requests = h.tool_service.received_requests().await.unwrap();
    let [request] = &requests[..] else {
        panic!("one request expected, got {}", requests.len())
    };
    let target = match request.url.query() {
        Some(query) => format!("{}?{query}", request.url.path()),
        None => request.url.path().to_string(),
    };
    (target, String::from_utf8(request.body.clone()).unwrap())
}

#[track_caller]
fn assert_ok(answer: &Answer) {
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
}

#[tokio::test]
async fn x11_an_http_tool_receives_the_numbers_as_written() {
    for (tool, path) in [("plain", "/plain"), ("put_plain", "/put")] {
        let h = harness().await;
        assert_ok(&call(&h, tool, ARGUMENTS).await);
        assert_eq!(received(&h).await, (path.to_string(), COMPACT.to_string()));
    }
}

#[tokio::test]
async fn x11_a_rest_tools_body_members_and_whole_body_keep_the_numbers_as_written() {
    let h = harness().await;
    assert_ok(&call(&h, "rest_members", ARGUMENTS).await);
    // Path and query values are X9's text (a whole number without its fraction); the body
    // members keep the request's text, in argument order.
    assert_eq!(
        received(&h).await,
        (
            "/items/7?f=1".to_string(),
            r#"{"i":1e2,"z":-0,"big":12345678901234567890123,"items":[2.50,1E-7],"nested":{"x":0.1e1}}"#
                .to_string()
        )
    );
    let h = harness().await;
    let whole = r#"{"id": 7.0, "nested": { "x": 0.1e1, "y": [ 1e2, -0.0 ] }}"#;
    assert_ok(&call(&h, "rest_whole", whole).await);
    assert_eq!(
        received(&h).await,
        (
            "/items/7/big".to_string(),
            r#"{"x":0.1e1,"y":[1e2,-0.0]}"#.to_string()
        )
    );
}

#[tokio::test]
async fn x11_a_lambda_tools_payload_keeps_the_numbers_as_written() {
    let h = harness().await;
    assert_ok(&call(&h, "lambda", ARGUMENTS).await);
    let (target, payload) = received(&h).await;
    assert!(target.ends_with("/invocations"), "{target}");
    assert_eq!(payload, COMPACT);
}

#[tokio::test]
async fn x11_a_repeated_key_sends_the_value_that_was_validated() {
    let h = harness().await;
    // The later `i` is the one validated (and refused: over the maximum).
    call(&h, "plain", r#"{"i": 1, "i": 1e3}"#)
        .await
        .assert_rpc_error(
            -32602,
            "Invalid params: 1000.0 is greater than the maximum of 100 (at /i)",
            &json!(1),
        );
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
    let h = harness().await;
    assert_ok(&call(&h, "plain", r#"{"i": "x", "z": 1, "i": 100.0}"#).await);
    assert_eq!(received(&h).await.1, r#"{"i":100.0,"z":1}"#);
}

#[tokio::test]
async fn x2_validation_judges_the_values_of_numbers_written_any_way() {
    let h = harness().await;
    // 1.0 and 1e2 are integers; 12345678901234567890123 is an integer over its minimum.
    assert_ok(
        &call(
            &h,
            "plain",
            r#"{"i": 1e2, "f": 1.0, "big": 12345678901234567890123}"#,
        )
        .await,
    );
    for (arguments, message) in [
        (
            r#"{"i": 1.5}"#,
            "Invalid params: 1.5 is not of type \"integer\" (at /i)",
        ),
        (
            r#"{"i": 1e3}"#,
            "Invalid params: 1000.0 is greater than the maximum of 100 (at /i)",
        ),
        (
            r#"{"i": 1, "big": 9e21}"#,
            "Invalid params: 9e+21 is less than the minimum of 1e+22 (at /big)",
        ),
    ] {
        call(&h, "plain", arguments)
            .await
            .assert_rpc_error(-32602, message, &json!(1));
    }
    // Only the accepted call reached the Tool Service.
    assert_eq!(h.tool_service.received_requests().await.unwrap().len(), 1);
}
