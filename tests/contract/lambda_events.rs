//! Real Lambda event JSON (API Gateway REST v1 and HTTP API v2, Function URL, ALB, the
//! `cargo lambda watch` emulator) through `lambda_http::request::from_str` into the gateway's
//! Lambda adapter (CONTRACT P9, P3, P6, H1, H2, H3, H4, H8, C5, L1, A6): the stage and emulator
//! prefixes are not part of the public path, base64 bodies parse like plain ones, repeated or
//! mixed-case headers answer as on the local server, and so does the 401 challenge.

use gateway_tests::{Harness, request};
use lambda_http::{Body, RequestExt};
use mcp_gateway::lambda::{handle_event, request_from_event};
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, ResponseTemplate};

/// A fixture from `tests/events/` as JSON, to be sent as is or changed first.
fn fixture(name: &str) -> Value {
    let path = format!("{}/events/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The event as `lambda_http` hands it to a handler.
fn parse(event: &Value) -> lambda_http::Request {
    lambda_http::request::from_str(&event.to_string()).expect("event parses")
}

/// A gateway answer from the Lambda adapter, body decoded.
struct Reply {
    status: u16,
    headers: http::HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// CONTRACT H2, H8: a JSON answer with the correlation headers.
    #[track_caller]
    fn assert_json_with_correlation(&self) {
        assert_eq!(self.header("content-type"), Some("application/json"));
        assert!(
            self.header("guid")
                .is_some_and(|g| uuid::Uuid::try_parse(g).is_ok())
        );
        assert!(self.header("x-request-id").is_some());
    }
}

async fn serve(h: &Harness, event: lambda_http::Request) -> Reply {
    let response = handle_event(&h.gateway, event).await;
    let (parts, body) = response.into_parts();
    let text = match body {
        Body::Text(text) => text,
        Body::Binary(bytes) => String::from_utf8(bytes).unwrap(),
        _ => String::new(),
    };
    Reply {
        status: parts.status.as_u16(),
        headers: parts.headers,
        text,
    }
}

/// Removes every `guid` field: generated per request, so two answers differ there only.
fn without_guids(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("guid");
        for child in map.values_mut() {
            *child = without_guids(child.take());
        }
    }
    value
}

/// What the local server answers to the request a REST API event describes: the same method,
/// path, every value of every header in `multiValueHeaders`, and the body.
async fn local_answer(h: &Harness, event: &Value) -> (u16, Value) {
    let mut headers = Vec::new();
    for (name, values) in event["multiValueHeaders"].as_object().unwrap() {
        for value in values.as_array().unwrap() {
            headers.push((name.as_str(), value.as_str().unwrap()));
        }
    }
    let local = request(
        event["httpMethod"].as_str().unwrap(),
        event["path"].as_str().unwrap(),
        &headers,
        event["body"].as_str().unwrap().to_string(),
    );
    let answer = h.send(local).await;
    (answer.status.as_u16(), without_guids(answer.json()))
}

#[tokio::test]
async fn p9_rest_api_stage_prefix_is_not_part_of_the_public_path() {
    let h = Harness::fixed().await;
    let reply = serve(&h, parse(&fixture("apigw-v1-stage-post.json"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.assert_json_with_correlation();
    // Mixed-case `X-Request-Id` is read like the lower-case name (CONTRACT C2).
    assert_eq!(reply.header("x-request-id"), Some("req-rest-1"));
    let session = reply.header("mcp-session-id").expect("L2 session id");
    assert!(uuid::Uuid::try_parse(session).is_ok(), "{session}");
    let body = reply.json();
    assert_eq!(body["id"], "init-1");
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(body["result"]["serverInfo"]["name"], "core-tools");
}

#[tokio::test]
async fn p9_rest_api_stage_named_like_the_first_path_segment_is_still_removed_once() {
    let h = Harness::fixed().await;
    let mut event = fixture("apigw-v1-stage-post.json");
    event["requestContext"]["stage"] = json!("mcp");
    event["requestContext"]["path"] = json!("/mcp/mcp/core");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["result"]["serverInfo"]["name"], "core-tools");
}

#[tokio::test]
async fn p3_decoded_rest_api_path_that_no_uri_can_hold_is_an_invalid_route_key_not_a_404() {
    let h = Harness::dynamic().await;
    for raw_path in ["/mcp/a b", "/mcp/50%", "/mcp/\u{d734}\u{ac00}"] {
        let mut event = fixture("apigw-v1-stage-post.json");
        event["path"] = json!(raw_path);
        event["requestContext"]["path"] = json!(format!("/prod{raw_path}"));
        let reply = serve(&h, parse(&event)).await;
        assert_eq!(reply.status, 200, "{raw_path}: {}", reply.text);
        let body = reply.json();
        assert_eq!(
            body["error"]["message"], "route key is invalid",
            "{raw_path}"
        );
        assert_eq!(body["id"], "init-1");
    }
}

#[tokio::test]
async fn p9_rest_api_stage_get_is_405_not_404_or_redirect() {
    let h = Harness::fixed().await;
    let reply = serve(&h, parse(&fixture("apigw-v1-stage-get.json"))).await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST"));
    reply.assert_json_with_correlation();
    assert_eq!(reply.json()["error"], "method_not_allowed");
}

#[tokio::test]
async fn p9_http_api_default_stage_serves_tools_call_end_to_end() {
    let h = Harness::fixed().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_json(json!({"query": "vacation"})))
        .and(header("employee-no", "ZW5jcnlwdGVkLTAwMQ=="))
        .and(header(
            "mcp-session-id",
            "83325a0a-770a-4259-afa6-452b4ec6db62",
        ))
        .and(header("x-request-id", "req-http-5"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"id": "DOC-1"}])))
        .expect(1)
        .mount(&h.tool_service)
        .await;
    let reply = serve(&h, parse(&fixture("apigw-v2-default-stage.json"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.assert_json_with_correlation();
    assert_eq!(reply.header("x-request-id"), Some("req-http-5"));
    let body = reply.json();
    assert_eq!(body["id"], 5);
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], r#"[{"id":"DOC-1"}]"#);
}

#[tokio::test]
async fn p9_http_api_named_stage_with_base64_body_and_trailing_slash_reaches_the_route() {
    let h = Harness::fixed().await;
    let event = fixture("apigw-v2-named-stage-base64.json");
    assert_eq!(event["isBase64Encoded"], true);
    assert_eq!(event["rawPath"], "/prod/mcp/core/");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.assert_json_with_correlation();
    let body = reply.json();
    assert_eq!(body["id"], 1);
    assert!(body["result"]["tools"].is_array(), "{body}");
    assert_eq!(
        reply.header("guid"),
        Some("0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c")
    );
}

#[tokio::test]
async fn p3_route_keys_under_a_named_stage_select_the_route() {
    let h = Harness::dynamic().await;
    let event = fixture("apigw-v2-named-stage-dynamic.json");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["result"]["serverInfo"]["name"], "hr-tools");

    let with_path = |raw_path: &str| {
        let mut event = event.clone();
        event["rawPath"] = json!(raw_path);
        event["requestContext"]["http"]["path"] = json!(raw_path);
        parse(&event)
    };
    let reply = serve(&h, with_path("/prod/mcp/hr/")).await;
    assert_eq!(reply.json()["result"]["serverInfo"]["name"], "hr-tools");
    for (raw_path, message) in [
        ("/prod/mcp/nope", "route key is not registered"),
        ("/prod/mcp", "route key is required"),
        ("/prod/mcp/hr/x", "route key is invalid"),
    ] {
        let reply = serve(&h, with_path(raw_path)).await;
        assert_eq!(reply.status, 200, "{raw_path}");
        let body = reply.json();
        assert_eq!(body["id"], 6, "{raw_path}: {body}");
        assert_eq!(body["error"]["code"], -32600, "{raw_path}: {body}");
        assert_eq!(body["error"]["message"], message, "{raw_path}");
    }
    let reply = serve(&h, with_path("/prod/other")).await;
    assert_eq!(reply.status, 404, "P6: outside the endpoint path");
}

#[tokio::test]
async fn h4_http_api_message_without_or_with_an_unknown_protocol_version_is_http_400() {
    let h = Harness::fixed().await;
    for (version, code) in [
        (None, "missing_protocol_version"),
        (Some("2024-11-05"), "unsupported_protocol_version"),
    ] {
        let mut event = fixture("apigw-v2-default-stage.json");
        let headers = event["headers"].as_object_mut().unwrap();
        headers.remove("mcp-protocol-version");
        if let Some(version) = version {
            headers.insert("MCP-Protocol-Version".into(), json!(version));
        }
        let reply = serve(&h, parse(&event)).await;
        assert_eq!(reply.status, 400, "{}", reply.text);
        reply.assert_json_with_correlation();
        let body = reply.json();
        assert_eq!(body["error"], code);
        assert_eq!(body["supportedVersions"], json!(["2025-11-25"]));
        assert_eq!(body["guid"].as_str(), reply.header("guid"));
        assert!(body.get("jsonrpc").is_none(), "not JSON-RPC: {body}");
    }
}

#[tokio::test]
async fn h1_http_api_get_and_delete_are_405_with_allow_post() {
    let h = Harness::fixed().await;
    for verb in ["GET", "DELETE"] {
        let mut event = fixture("apigw-v2-default-stage.json");
        event["requestContext"]["http"]["method"] = json!(verb);
        let reply = serve(&h, parse(&event)).await;
        assert_eq!(reply.status, 405, "{verb}");
        assert_eq!(reply.header("allow"), Some("POST"));
        reply.assert_json_with_correlation();
    }
}

#[tokio::test]
async fn p9_function_url_event_with_base64_json_rpc_body_answers_ping() {
    let h = Harness::fixed().await;
    let event = fixture("function-url.json");
    assert_eq!(event["isBase64Encoded"], true);
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.assert_json_with_correlation();
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );
}

#[tokio::test]
async fn p6_alb_event_with_trailing_slash_and_charset_reaches_the_route() {
    let h = Harness::fixed().await;
    let reply = serve(&h, parse(&fixture("alb.json"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.assert_json_with_correlation();
    let body = reply.json();
    assert_eq!(body["id"], 8);
    assert!(body["result"]["tools"].is_array(), "{body}");
}

#[tokio::test]
async fn h2_alb_multi_value_accept_admits_json_when_any_value_does() {
    let h = Harness::fixed().await;
    let event = fixture("alb-multi-value-headers.json");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["id"], 9);
}

#[tokio::test]
async fn h2_rest_api_repeated_accept_reads_every_value_as_the_local_server_does() {
    let h = Harness::fixed().await;
    let event = fixture("apigw-v1-multi-value-headers.json");
    // `headers` holds the last value only: `text/html`, which alone would be a 406.
    assert_eq!(event["headers"]["accept"], "text/html");
    let (local_status, local_body) = local_answer(&h, &event).await;
    assert_eq!(local_status, 200);

    let reply = serve(&h, request_from_event(&event.to_string()).unwrap()).await;
    assert_eq!(reply.status, local_status, "{}", reply.text);
    assert_eq!(without_guids(reply.json()), local_body);
}

#[tokio::test]
async fn h4_rest_api_repeated_mixed_case_protocol_version_is_400_as_on_the_local_server() {
    let h = Harness::fixed().await;
    let mut event = fixture("apigw-v1-multi-value-headers.json");
    event["multiValueHeaders"]["mcp-protocol-version"] = json!(["2025-11-25"]);
    event["multiValueHeaders"]["accept"] = json!(["application/json"]);
    event["headers"]["accept"] = json!("application/json");
    let (local_status, local_body) = local_answer(&h, &event).await;
    assert_eq!(local_status, 400);
    assert_eq!(local_body["error"], "unsupported_protocol_version");

    let reply = serve(&h, request_from_event(&event.to_string()).unwrap()).await;
    assert_eq!(reply.status, local_status, "{}", reply.text);
    assert_eq!(without_guids(reply.json()), local_body);
}

#[tokio::test]
async fn c5_rest_api_repeated_guid_is_rejected_as_on_the_local_server() {
    let h = Harness::fixed().await;
    let mut event = fixture("apigw-v1-multi-value-headers.json");
    let (first, second) = (
        "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
        "1b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c",
    );
    event["multiValueHeaders"]["guid"] = json!([first, second]);
    event["headers"]["guid"] = json!(second);
    let (local_status, local_body) = local_answer(&h, &event).await;
    assert_eq!(local_status, 200);
    assert_eq!(local_body["error"]["code"], -32600, "{local_body}");

    let reply = serve(&h, request_from_event(&event.to_string()).unwrap()).await;
    assert_eq!(reply.status, local_status, "{}", reply.text);
    assert_eq!(without_guids(reply.json()), local_body);
}

#[test]
fn p9_every_fixture_converts_the_same_way_in_the_functions_when_headers_do_not_repeat() {
    for name in [
        "apigw-v1-stage-get.json",
        "apigw-v1-stage-post.json",
        "apigw-v2-default-stage.json",
        "apigw-v2-named-stage-base64.json",
        "function-url.json",
        "alb.json",
        "alb-multi-value-headers.json",
        "cargo-lambda-watch.json",
    ] {
        let json = fixture(name).to_string();
        let plain = lambda_http::request::from_str(&json).unwrap();
        let functions = request_from_event(&json).unwrap();
        assert_eq!(plain.method(), functions.method(), "{name}");
        assert_eq!(plain.uri(), functions.uri(), "{name}");
        assert_eq!(plain.headers(), functions.headers(), "{name}");
        assert_eq!(plain.raw_http_path(), functions.raw_http_path(), "{name}");
    }
}

#[tokio::test]
async fn p9_cargo_lambda_watch_event_is_served_as_the_post_it_carries() {
    let h = Harness::fixed().await;
    Mock::given(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_string("found"))
        .mount(&h.tool_service)
        .await;
    let event = fixture("cargo-lambda-watch.json");
    // The emulator adds a stray top-level `httpMethod: GET` to a v2 event; the method is the
    // one in `requestContext.http`.
    assert_eq!(event["httpMethod"], "GET");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = reply.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "found");
}

#[tokio::test]
async fn p9_lambda_url_prefix_left_in_the_path_is_removed() {
    let h = Harness::fixed().await;
    let mut event = fixture("cargo-lambda-watch.json");
    event["rawPath"] = json!("/lambda-url/mcp-core/mcp/core/");
    event["body"] = json!(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["result"], json!({}));
}

#[tokio::test]
async fn p9_a_request_without_lambda_extensions_is_served_by_its_uri_path() {
    let h = Harness::fixed().await;
    let request = http::Request::builder()
        .method("POST")
        .uri("/mcp/core")
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
        ))
        .unwrap();
    let reply = serve(&h, request).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["result"]["serverInfo"]["name"], "core-tools");
}

#[tokio::test]
async fn a6_with_token_auth_http_api_events_get_the_401_challenge_or_are_served_with_a_token() {
    let auth =
        gateway_tests::auth::AuthHarness::token(mcp_gateway::Config::fixed_defaults(), None).await;
    let (token, _) = auth.issue(&["core"], 600, 86_400).await;
    let h = &auth.harness;
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"id": "DOC-1"}])))
        .expect(1)
        .mount(&h.tool_service)
        .await;
    let unauthenticated = serve(h, parse(&fixture("apigw-v2-default-stage.json"))).await;
    assert_eq!(unauthenticated.status, 401, "{}", unauthenticated.text);
    unauthenticated.assert_json_with_correlation();
    assert_eq!(
        unauthenticated.header("www-authenticate"),
        Some(r#"Bearer realm="mcp""#)
    );
    assert_eq!(unauthenticated.json()["error"], "unauthorized");

    let mut event = fixture("apigw-v2-default-stage.json");
    event["headers"]["authorization"] = json!(format!("Bearer {}", token.expose()));
    let served = serve(h, parse(&event)).await;
    assert_eq!(served.status, 200, "{}", served.text);
    assert_eq!(served.json()["result"]["isError"], false);

    // A REST API stage event with a mixed-case header name.
    let mut event = fixture("apigw-v1-stage-post.json");
    event["headers"]["Authorization"] = json!(format!("Bearer {}x", token.expose()));
    let refused = serve(h, parse(&event)).await;
    assert_eq!(refused.status, 401, "{}", refused.text);
    assert_eq!(
        refused.header("www-authenticate"),
        Some(r#"Bearer realm="mcp", error="invalid_token""#)
    );
}

/// A modern `tools/call` body (CONTRACT N): the envelope in `params._meta`.
fn modern_call_body(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "search_documents",
        "arguments": {"query": "vacation"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string()
}

async fn expect_one_modern_search(h: &Harness) {
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_json(json!({"query": "vacation"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"id": "DOC-1"}])))
        .expect(1)
        .mount(&h.tool_service)
        .await;
}

#[track_caller]
fn assert_modern_call_result(reply: &Reply, id: i64) {
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.assert_json_with_correlation();
    assert!(reply.header("mcp-session-id").is_none(), "N2: no session");
    let body = reply.json();
    assert_eq!(body["id"], id);
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    assert_eq!(
        body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "core-tools"
    );
    assert_eq!(body["result"]["content"][0]["text"], r#"[{"id":"DOC-1"}]"#);
}

#[tokio::test]
async fn n2_http_api_event_serves_a_modern_tools_call_in_one_request() {
    let h = Harness::fixed().await;
    expect_one_modern_search(&h).await;
    let mut event = fixture("apigw-v2-default-stage.json");
    let headers = event["headers"].as_object_mut().unwrap();
    headers.remove("content-length");
    headers.insert("mcp-protocol-version".into(), json!("2026-07-28"));
    headers.insert("mcp-method".into(), json!("tools/call"));
    headers.insert("mcp-name".into(), json!("search_documents"));
    event["body"] = json!(modern_call_body(7));
    let reply = serve(&h, parse(&event)).await;
    assert_modern_call_result(&reply, 7);
    // The sent Mcp-Session-Id is ignored: not forwarded (CONTRACT N2); employee-no is (X4).
    let received = h.tool_service.received_requests().await.unwrap();
    assert!(received[0].headers.get("mcp-session-id").is_none());
    assert_eq!(
        received[0].headers.get("employee-no").unwrap(),
        "ZW5jcnlwdGVkLTAwMQ=="
    );
}

#[tokio::test]
async fn n2_rest_api_event_serves_a_modern_tools_call_and_answers_its_errors_with_400() {
    let h = Harness::fixed().await;
    expect_one_modern_search(&h).await;
    let modern_event = |with_name: bool| {
        let mut event = fixture("apigw-v1-stage-post.json");
        let mut pairs = vec![
            ("Mcp-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
        ];
        if with_name {
            pairs.push(("Mcp-Name", "search_documents"));
        }
        for (name, value) in pairs {
            event["headers"][name] = json!(value);
            event["multiValueHeaders"][name] = json!([value]);
        }
        event["body"] = json!(modern_call_body(8));
        event
    };
    let reply = serve(&h, parse(&modern_event(true))).await;
    assert_modern_call_result(&reply, 8);
    let reply = serve(&h, parse(&modern_event(false))).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    reply.assert_json_with_correlation();
    let body = reply.json();
    assert_eq!(body["id"], 8);
    assert_eq!(body["error"]["code"], -32020);
    assert_eq!(
        body["error"]["message"],
        "Header mismatch: Mcp-Name header is required"
    );
}

/// A fixed deployment of route `hr`, as a route stack's function is configured (CONTRACT M1).
fn route_stack_config(key: &str) -> mcp_gateway::Config {
    mcp_gateway::Config {
        endpoint_path: format!("/mcp/{key}"),
        ..mcp_gateway::Config::fixed_defaults()
    }
}

#[tokio::test]
async fn m1_a_route_stack_function_answers_its_route_under_default_and_named_stages() {
    let h = Harness::with_config(route_stack_config("hr")).await;
    let with_path = |fixture_name: &str, raw_path: &str| {
        let mut event = fixture(fixture_name);
        event["rawPath"] = json!(raw_path);
        event["requestContext"]["http"]["path"] = json!(raw_path);
        event
    };
    let mut event = with_path("apigw-v2-default-stage.json", "/mcp/hr");
    event["body"] = json!(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    event["headers"]
        .as_object_mut()
        .unwrap()
        .remove("content-length");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["result"]["tools"][0]["name"], "leave_balance");

    let event = with_path("apigw-v2-named-stage-base64.json", "/prod/mcp/hr/");
    let reply = serve(&h, parse(&event)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let names: Vec<Value> = reply.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("leave_balance")],
        "never another route's tools"
    );
}

#[tokio::test]
async fn m1_r4_a_route_stack_whose_manifest_lacks_its_route_serves_initialize_and_32603() {
    let dir = std::env::temp_dir().join(format!("m1-missing-route-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("manifest.json");
    let h = Harness::fixed().await;
    // A routes manifest with `core` and `hr`, but not `payroll`.
    let document = gateway_tests::manifest(&h.tool_service.uri());
    std::fs::write(&path, document.to_string()).unwrap();
    let mut config = route_stack_config("payroll");
    config.registry_source = mcp_gateway::RegistrySource::File(path.to_string_lossy().into());
    let registry = mcp_gateway::build::load_registry(&config).await;
    assert!(
        registry.current().is_none(),
        "M1: a load failure, never another route"
    );
    let gateway = mcp_gateway::Gateway::with_registry(
        config,
        registry,
        mcp_gateway::invoke::HttpInvoker::new().unwrap(),
    );
    let h = Harness {
        gateway: std::sync::Arc::new(gateway),
        tool_service: h.tool_service,
    };
    let with_body = |body: &str| {
        let mut event = fixture("apigw-v2-default-stage.json");
        event["rawPath"] = json!("/mcp/payroll");
        event["requestContext"]["http"]["path"] = json!("/mcp/payroll");
        event["body"] = json!(body);
        event["headers"]
            .as_object_mut()
            .unwrap()
            .remove("content-length");
        parse(&event)
    };
    let reply = serve(
        &h,
        with_body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["result"]["protocolVersion"], "2025-11-25");
    let reply = serve(
        &h,
        with_body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let body = reply.json();
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Internal error: the tool registry is not loaded"
    );
}
