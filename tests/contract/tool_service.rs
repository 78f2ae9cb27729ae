//! tools/call against a real Tool Service on loopback (CONTRACT X4, X5, X6, X7): what is
//! forwarded, how every kind of answer becomes a result, and that the endpoint URL never leaks.

use std::time::{Duration, Instant};

use gateway_tests::{Answer, Harness, rpc};
use mcp_gateway::{Config, InvocationContext};
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, ResponseTemplate};

#[expect(
    clippy::needless_pass_by_value,
    reason = "callers write the arguments in place, as json!({…})"
)]
fn call(name: &str, arguments: Value) -> Value {
    rpc(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// Asserts an `isError` result and returns its text; checks the URL never appears.
#[track_caller]
fn error_text(answer: &Answer, tool_service: &str) -> String {
    let body = answer.json();
    assert_eq!(answer.status, 200);
    assert!(
        body.get("error").is_none(),
        "execution failures are results: {body}"
    );
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert!(body["result"]["content"][0]["_meta"]["searchTime"].is_u64());
    let raw = String::from_utf8_lossy(&answer.body);
    assert!(!raw.contains(tool_service), "endpoint URL leaked: {raw}");
    assert!(!raw.contains("127.0.0.1"), "endpoint host leaked: {raw}");
    body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn x4_arguments_and_caller_headers_are_forwarded_unchanged() {
    let h = Harness::fixed().await;
    let arguments =
        json!({"query": "연차 휴가 \"규정\"", "limit": 3, "filters": {"from": "2026-01-01"}});
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_json(arguments.clone()))
        .and(header("content-type", "application/json"))
        .and(header("guid", "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"))
        .and(header("x-request-id", "req-42"))
        .and(header("mcp-session-id", "sess-1"))
        .and(header("employee-no", "ENC(AbC+/==)"))
        .and(header("virtual-employee-no", "VENC:xyz"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .expect(1)
        .mount(&h.tool_service)
        .await;
    let answer = h
        .post(
            "/mcp/core",
            &call("search_documents", arguments),
            &[
                ("guid", "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"),
                ("x-request-id", "req-42"),
                ("mcp-session-id", "sess-1"),
                ("employee-no", "ENC(AbC+/==)"),
                ("virtual-employee-no", "VENC:xyz"),
            ],
        )
        .await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], "ok");
    assert_eq!(answer.json()["result"]["isError"], false);
}

#[tokio::test]
async fn x4_absent_caller_headers_are_not_invented_and_manifest_method_is_used() {
    let h = Harness::fixed().await;
    Mock::given(method("PUT"))
        .and(path("/put"))
        .and(body_json(json!({})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"done": true})))
        .expect(1)
        .mount(&h.tool_service)
        .await;
    let answer = h
        .post(
            "/mcp/core",
            &rpc(json!(1), "tools/call", json!({"name": "put_tool"})),
            &[],
        )
        .await;
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        "{\"done\":true}"
    );
    let received = &h.tool_service.received_requests().await.unwrap()[0];
    for absent in ["employee-no", "virtual-employee-no", "mcp-session-id"] {
        assert!(
            received.headers.get(absent).is_none(),
            "{absent} was invented"
        );
    }
    // The generated correlation values are forwarded so the Tool Service logs can be joined.
    assert_eq!(
        received.headers.get("guid").unwrap().to_str().unwrap(),
        answer.header("guid").unwrap()
    );
}

#[tokio::test]
async fn x5_json_scalars_and_arrays_are_compact_and_text_is_kept() {
    let h = Harness::fixed().await;
    for (body, content_type, expected) in [
        ("[ 1, 2 ,\n 3 ]", "application/json", "[1,2,3]"),
        (" \"안녕\" ", "application/json", "\"안녕\""),
        ("42", "text/plain", "42"),
        ("plain 한국어 text\n", "text/plain", "plain 한국어 text\n"),
        (
            "{\"b\": 1, \"a\": {\"z\": null, \"y\": [true, false]}}",
            "application/json",
            "{\"b\":1,\"a\":{\"z\":null,\"y\":[true,false]}}",
        ),
        ("", "text/plain", ""),
    ] {
        h.tool_answers(
            "/search",
            ResponseTemplate::new(200).set_body_raw(body, content_type),
        )
        .await;
        let answer = h.call_tool("search_documents", json!({"query": "q"})).await;
        let result = &answer.json()["result"];
        assert_eq!(result["content"][0]["text"], expected, "{body:?}");
        assert_eq!(result["content"][0]["type"], "text");
        assert_eq!(result["isError"], false);
    }
}

#[tokio::test]
async fn x6_non_2xx_statuses_are_is_error_results_with_the_tools_message() {
    let h = Harness::fixed().await;
    let uri = h.tool_service.uri();
    for (status, body, expected) in [
        (
            400,
            json!({"message": "from must be before to"}),
            "Tool Service returned HTTP 400: from must be before to",
        ),
        (
            401,
            json!({"error": "token expired"}),
            "Tool Service denied the call (HTTP 401): token expired",
        ),
        (
            403,
            json!({}),
            "Tool Service denied the call (HTTP 403): {}",
        ),
        (
            404,
            json!({"detail": "no index"}),
            "Tool Service returned HTTP 404: no index",
        ),
        (
            500,
            json!({"trace": [1, 2]}),
            "Tool Service returned HTTP 500: {\"trace\":[1,2]}",
        ),
        (502, Value::Null, "Tool Service returned HTTP 502"),
    ] {
        h.tool_service.reset().await;
        let template = if body.is_null() {
            ResponseTemplate::new(status)
        } else {
            ResponseTemplate::new(status).set_body_json(body)
        };
        h.tool_answers("/fail", template).await;
        let answer = h.call_tool("failing_tool", json!({})).await;
        assert_eq!(error_text(&answer, &uri), expected);
    }
}

#[tokio::test]
async fn x6_redirects_are_not_followed() {
    let h = Harness::fixed().await;
    let uri = h.tool_service.uri();
    h.tool_answers(
        "/fail",
        ResponseTemplate::new(302).insert_header("location", format!("{uri}/elsewhere")),
    )
    .await;
    Mock::given(path("/elsewhere"))
        .respond_with(ResponseTemplate::new(200).set_body_string("followed"))
        .expect(0)
        .mount(&h.tool_service)
        .await;
    let answer = h.call_tool("failing_tool", json!({})).await;
    assert_eq!(
        error_text(&answer, &uri),
        "Tool Service answered with a redirect (HTTP 302), which is not followed"
    );
}

#[tokio::test]
async fn x6_x7_slow_tool_service_times_out_at_the_tools_timeout() {
    let h = Harness::fixed().await;
    let uri = h.tool_service.uri();
    h.tool_answers(
        "/slow",
        ResponseTemplate::new(200).set_delay(Duration::from_secs(5)),
    )
    .await;
    let answer = h.call_tool("slow_tool", json!({})).await;
    assert_eq!(
        error_text(&answer, &uri),
        "Tool Service did not answer within 300 ms"
    );
    let search_time = answer.json()["result"]["content"][0]["_meta"]["searchTime"]
        .as_u64()
        .unwrap();
    assert!(
        search_time >= 300,
        "searchTime counts the wait: {search_time}"
    );
}

#[tokio::test]
async fn x7_timeout_is_capped_by_the_invocation_deadline_minus_the_margin() {
    let mut config = Config::fixed_defaults();
    config.deadline_margin_ms = 100;
    let h = Harness::with_config(config).await;
    let uri = h.tool_service.uri();
    h.tool_answers(
        "/search",
        ResponseTemplate::new(200).set_delay(Duration::from_secs(5)),
    )
    .await;
    let deadline = Instant::now() + Duration::from_millis(400);
    let answer = h
        .send_with(
            gateway_tests::request(
                "POST",
                "/mcp/core",
                &[("content-type", "application/json"), gateway_tests::VERSION],
                call("search_documents", json!({"query": "q"})).to_string(),
            ),
            InvocationContext {
                deadline: Some(deadline),
                ..InvocationContext::default()
            },
        )
        .await;
    let text = error_text(&answer, &uri);
    // The tool allows 2000 ms; the deadline leaves about 300 ms.
    let ms: u64 = text
        .strip_prefix("Tool Service did not answer within ")
        .and_then(|t| t.strip_suffix(" ms"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(ms <= 300, "{text}");
    assert!(Instant::now() < deadline, "answered before the deadline");
}

#[tokio::test]
async fn x6_connection_refused_is_an_is_error_result() {
    // A port that was just free: bind, read the port, close.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let manifest = json!({"tools": [{
        "name": "down", "inputSchema": {"type": "object"},
        "_meta": {"endpoint": format!("http://127.0.0.1:{port}/x")}
    }]});
    let snapshot = mcp_gateway::registry::compile_manifest(&manifest).unwrap();
    let gateway = mcp_gateway::Gateway::new(
        Config::fixed_defaults(),
        Ok(snapshot),
        mcp_gateway::invoke::HttpInvoker::new().unwrap(),
    );
    let response = gateway
        .handle(
            gateway_tests::request(
                "POST",
                "/mcp/core",
                &[gateway_tests::VERSION],
                call("down", json!({})).to_string(),
            ),
            InvocationContext::default(),
        )
        .await;
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(body["result"]["isError"], true);
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Tool Service is unreachable (connection failed)"
    );
    assert!(!String::from_utf8_lossy(response.body()).contains(&port.to_string()));
}

#[tokio::test]
async fn x6_body_over_the_tool_response_limit_is_an_is_error_result() {
    let mut config = Config::fixed_defaults();
    config.max_tool_response_bytes = 1000;
    let h = Harness::with_config(config).await;
    let uri = h.tool_service.uri();
    h.tool_answers(
        "/search",
        ResponseTemplate::new(200).set_body_string("x".repeat(1001)),
    )
    .await;
    let answer = h.call_tool("search_documents", json!({"query": "q"})).await;
    assert_eq!(
        error_text(&answer, &uri),
        "Tool Service response exceeds 1000 bytes"
    );

    h.tool_answers(
        "/search",
        ResponseTemplate::new(200).set_body_string("x".repeat(1000)),
    )
    .await;
    let answer = h.call_tool("search_documents", json!({"query": "q"})).await;
    assert_eq!(
        answer.json()["result"]["isError"],
        false,
        "exactly the limit is accepted"
    );
}

#[tokio::test]
async fn x6_gateway_response_stays_under_its_limit_counting_json_escaping() {
    let mut config = Config::fixed_defaults();
    config.max_response_bytes = 4096;
    let h = Harness::with_config(config).await;
    let uri = h.tool_service.uri();
    // 1,500 quote characters: 1.5 KB from the Tool Service, over 3 KB once escaped, plus the
    // envelope, still under 4 KB; 2,100 are over.
    for (quotes, over) in [(1500, false), (2100, true)] {
        h.tool_answers(
            "/search",
            ResponseTemplate::new(200).set_body_string("\"".repeat(quotes)),
        )
        .await;
        let answer = h.call_tool("search_documents", json!({"query": "q"})).await;
        assert!(answer.body.len() <= 4096, "{}", answer.body.len());
        if over {
            assert_eq!(
                error_text(&answer, &uri),
                "Tool Service response is too large: the tool result would exceed the gateway's 4096-byte response limit"
            );
        } else {
            assert_eq!(answer.json()["result"]["isError"], false);
        }
    }
}

#[tokio::test]
async fn x6_body_that_is_not_utf8_is_an_is_error_result() {
    let h = Harness::fixed().await;
    let uri = h.tool_service.uri();
    h.tool_answers(
        "/search",
        ResponseTemplate::new(200).set_body_raw(vec![0x7b, 0xff, 0xfe, 0x7d], "application/json"),
    )
    .await;
    let answer = h.call_tool("search_documents", json!({"query": "q"})).await;
    assert_eq!(
        error_text(&answer, &uri),
        "Tool Service response is not valid UTF-8"
    );
}

/// CONTRACT X2 with validators compiled on first use: the first call of a tool is refused with
/// the same messages as a later one, and 32 concurrent first calls compile it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn x2_first_calls_validate_as_later_ones_and_concurrent_first_calls_compile_once() {
    let h = Harness::fixed().await;
    let tool = || match h
        .gateway
        .snapshot()
        .and_then(|s| s.route("core"))
        .and_then(|r| r.tool("search_documents"))
    {
        Some(mcp_gateway::registry::ToolLookup::Active(tool)) => std::sync::Arc::clone(tool),
        _ => panic!("search_documents is active"),
    };
    assert_eq!(
        tool().input_schema.compilations(),
        0,
        "not compiled at load"
    );
    let bad = json!({"query": "", "limit": 99});
    let calls = (0..32).map(|_| {
        let gateway = std::sync::Arc::clone(&h.gateway);
        let body = rpc(
            json!(1),
            "tools/call",
            json!({"name": "search_documents", "arguments": bad}),
        );
        tokio::spawn(async move {
            let request = gateway_tests::request(
                "POST",
                "/mcp/core",
                &[("content-type", "application/json"), gateway_tests::VERSION],
                body.to_string(),
            );
            let response = gateway.handle(request, InvocationContext::default()).await;
            serde_json::from_slice::<Value>(response.body()).unwrap()
        })
    });
    let mut answers = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        answers.push(call.await.unwrap()["error"].clone());
    }
    assert_eq!(tool().input_schema.compilations(), 1);
    let later = h.call_tool("search_documents", bad.clone()).await.json()["error"].clone();
    assert_eq!(later["code"], -32602);
    assert!(
        later["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid params: "),
        "{later}"
    );
    assert_eq!(
        later["data"]["errors"].as_array().unwrap().len(),
        2,
        "{later}"
    );
    for mut answer in answers {
        answer["data"]["guid"] = later["data"]["guid"].clone();
        assert_eq!(answer, later, "a first call answers as a later one");
    }
    assert_eq!(tool().input_schema.compilations(), 1);
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}
