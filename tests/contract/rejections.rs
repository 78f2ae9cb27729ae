//! One test per row of CONTRACT's rejection tables, with the exact HTTP status, JSON-RPC code and
//! message (CONTRACT P3, P4, P6, P8, H1–H7, C4, C5, E1–E5, T2, X2, X3, X8), and the order of
//! checks.

use gateway_tests::{Harness, VERSION, request, rpc};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::RegistryError;
use mcp_gateway::{Config, Gateway, RequestBody};
use serde_json::{Value, json};

const JSON: (&str, &str) = ("content-type", "application/json");

fn list(id: i64) -> Value {
    rpc(json!(id), "tools/list", Value::Null)
}

// ---- P: route keys -------------------------------------------------------------------------

#[tokio::test]
async fn p3_dynamic_path_without_route_segment_is_route_key_is_required() {
    let h = Harness::dynamic().await;
    for path in ["/mcp", "/mcp/"] {
        h.post(path, &list(1), &[]).await.assert_rpc_error(
            -32600,
            "route key is required",
            &json!(1),
        );
    }
}

#[tokio::test]
async fn p3_route_key_with_slash_or_bad_characters_is_invalid() {
    let h = Harness::dynamic().await;
    let long = format!("/mcp/{}", "a".repeat(65));
    for path in [
        "/mcp/core/extra",
        "/mcp/co%20re",
        "/mcp/co+re",
        "/mcp/한글",
        long.as_str(),
        "/mcp/core//",
    ] {
        let path = if path.is_ascii() {
            path.to_string()
        } else {
            "/mcp/%ED%95%9C".to_string()
        };
        h.post(&path, &list(2), &[]).await.assert_rpc_error(
            -32600,
            "route key is invalid",
            &json!(2),
        );
    }
}

#[tokio::test]
async fn p3_well_formed_but_unregistered_route_key_is_rejected_before_dispatch() {
    let h = Harness::dynamic().await;
    let call = rpc(
        json!(3),
        "tools/call",
        json!({"name": "search_documents", "arguments": {"query": "x"}}),
    );
    h.post("/mcp/finance", &call, &[]).await.assert_rpc_error(
        -32600,
        "route key is not registered",
        &json!(3),
    );
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn p3_registered_route_keys_are_independent_servers() {
    let h = Harness::dynamic().await;
    let init = rpc(json!(1), "initialize", json!({}));
    let core = h.post("/mcp/core/", &init, &[]).await.json();
    let hr = h.post("/mcp/hr", &init, &[]).await.json();
    assert_eq!(core["result"]["serverInfo"]["name"], "core-tools");
    assert_eq!(hr["result"]["serverInfo"]["name"], "hr-tools");
    let tools = h.post("/mcp/hr", &list(2), &[]).await.json();
    assert_eq!(tools["result"]["tools"][0]["name"], "leave_balance");
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn p4_fixed_endpoint_with_extra_segment_is_rejected() {
    let h = Harness::fixed().await;
    for path in ["/mcp/core/hr", "/mcp/core/hr/", "/mcp/core//"] {
        h.post(path, &list(4), &[]).await.assert_rpc_error(
            -32600,
            "route key is not allowed for fixed endpoint path",
            &json!(4),
        );
    }
}

#[tokio::test]
async fn p6_trailing_slash_is_ignored() {
    let h = Harness::fixed().await;
    let answer = h.post("/mcp/core/", &list(5), &[]).await;
    assert!(answer.json()["result"]["tools"].is_array());
}

#[tokio::test]
async fn p6_path_outside_the_endpoint_is_404_json() {
    let h = Harness::fixed().await;
    for path in ["/", "/mcp", "/mcp/corex", "/other/mcp/core"] {
        h.post(path, &list(6), &[])
            .await
            .assert_http_error(404, "not_found");
    }
}

#[tokio::test]
async fn p8_route_key_errors_echo_the_id_or_null() {
    let h = Harness::dynamic().await;
    h.post(
        "/mcp",
        &json!({"jsonrpc": "2.0", "id": "abc", "method": "ping"}),
        &[],
    )
    .await
    .assert_rpc_error(-32600, "route key is required", &json!("abc"));
}

// ---- H: HTTP policy ------------------------------------------------------------------------

#[tokio::test]
async fn h1_get_delete_put_are_405_with_allow_post_and_no_sse() {
    let h = Harness::fixed().await;
    for method in ["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"] {
        let answer = h
            .send(request(
                method,
                "/mcp/core",
                &[("accept", "text/event-stream")],
                "",
            ))
            .await;
        answer.assert_http_error(405, "method_not_allowed");
        assert_eq!(answer.header("allow"), Some("POST"));
        assert_ne!(answer.header("content-type"), Some("text/event-stream"));
    }
}

#[tokio::test]
async fn h2_only_an_accept_without_json_is_406() {
    let h = Harness::fixed().await;
    for accept in [
        "application/json, text/event-stream",
        "application/json",
        "*/*",
        "application/*",
    ] {
        let answer = h
            .send(request(
                "POST",
                "/mcp/core",
                &[JSON, VERSION, ("accept", accept)],
                list(1).to_string(),
            ))
            .await;
        assert_eq!(answer.status, 200, "{accept}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
    }
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            list(1).to_string(),
        ))
        .await;
    assert_eq!(answer.status, 200, "missing Accept is served");
    for accept in ["text/event-stream", "text/html"] {
        h.send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION, ("accept", accept)],
            list(1).to_string(),
        ))
        .await
        .assert_http_error(406, "not_acceptable");
    }
}

#[tokio::test]
async fn h3_json_rpc_content_types_and_missing_content_type_are_read_as_json() {
    let h = Harness::fixed().await;
    for ct in [
        "application/json",
        "application/json; charset=utf-8",
        "application/json-rpc",
    ] {
        let answer = h
            .send(request(
                "POST",
                "/mcp/core",
                &[VERSION, ("content-type", ct)],
                list(1).to_string(),
            ))
            .await;
        assert_eq!(answer.status, 200, "{ct}");
    }
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[VERSION],
            list(1).to_string(),
        ))
        .await;
    assert_eq!(answer.status, 200);
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        h.send(request(
            "POST",
            "/mcp/core",
            &[VERSION, ("content-type", ct)],
            list(1).to_string(),
        ))
        .await
        .assert_http_error(415, "unsupported_media_type");
    }
}

#[tokio::test]
async fn h4_missing_version_on_every_non_initialize_message_is_400() {
    let h = Harness::fixed().await;
    for body in [
        list(1),
        rpc(
            json!(1),
            "tools/call",
            json!({"name": "search_documents", "arguments": {"query": "x"}}),
        ),
        rpc(json!(1), "ping", Value::Null),
        rpc(json!(1), "resources/list", Value::Null),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        let answer = h
            .send(request(
                "POST",
                "/mcp/core",
                &[JSON, ("version", "2025-11-25")],
                body.to_string(),
            ))
            .await;
        answer.assert_http_error(400, "missing_protocol_version");
        assert_eq!(answer.json()["supportedVersions"], json!(["2025-11-25"]));
        assert_eq!(
            answer.json()["message"],
            "MCP-Protocol-Version header is required"
        );
    }
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn h4_unsupported_version_is_400_and_header_name_is_case_insensitive() {
    let h = Harness::fixed().await;
    // A later date (2026-07-28) makes the request modern (CONTRACT N1): see modern.rs.
    for version in ["2025-06-18", "2025-11-25 beta", "2025-11-24"] {
        let answer = h
            .send(request(
                "POST",
                "/mcp/core",
                &[JSON, ("MCP-Protocol-Version", version)],
                list(1).to_string(),
            ))
            .await;
        answer.assert_http_error(400, "unsupported_protocol_version");
        assert_eq!(answer.json()["supportedVersions"], json!(["2025-11-25"]));
    }
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, ("Mcp-Protocol-Version", "2025-11-25")],
            list(1).to_string(),
        ))
        .await;
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn h4_initialize_needs_no_version_header_and_tolerates_odd_params() {
    let h = Harness::fixed().await;
    for params in [
        json!({}),
        json!({"protocolVersion": "2099-01-01"}),
        json!({"protocolVersion": 7, "capabilities": "x"}),
        Value::Null,
    ] {
        let answer = h
            .send(request(
                "POST",
                "/mcp/core/",
                &[("content-type", "application/json; charset=utf-8")],
                rpc(json!(1), "initialize", params.clone()).to_string(),
            ))
            .await;
        assert_eq!(answer.status, 200, "{params}");
        assert_eq!(answer.json()["result"]["protocolVersion"], "2025-11-25");
        assert!(uuid::Uuid::parse_str(answer.header("mcp-session-id").unwrap()).is_ok());
    }
}

#[tokio::test]
async fn h5_foreign_origin_is_403_json_rpc_error_with_null_id() {
    let h = Harness::fixed().await;
    let answer = h
        .post("/mcp/core", &list(9), &[("origin", "https://evil.example")])
        .await;
    assert_eq!(answer.status, 403);
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["error"]["message"], "origin is not allowed");

    let mut config = Config::fixed_defaults();
    config.allowed_origins = vec!["https://builder.example".into()];
    let h = Harness::with_config(config).await;
    let answer = h
        .post(
            "/mcp/core",
            &list(9),
            &[("origin", "https://builder.example")],
        )
        .await;
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn h6_host_outside_allowed_hosts_is_403() {
    let mut config = Config::fixed_defaults();
    config.allowed_hosts = Some(vec!["localhost".into(), "127.0.0.1".into()]);
    let h = Harness::with_config(config).await;
    let answer = h
        .post("/mcp/core", &list(1), &[("host", "attacker.example:3000")])
        .await;
    assert_eq!(answer.status, 403);
    assert_eq!(answer.json()["error"]["message"], "host is not allowed");
    assert_eq!(answer.json()["id"], Value::Null);
    let answer = h
        .post("/mcp/core", &list(1), &[("host", "localhost:3000")])
        .await;
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn h7_body_over_the_limit_is_413_without_parsing() {
    let mut config = Config::fixed_defaults();
    config.max_request_bytes = 64;
    let h = Harness::with_config(config).await;
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "a".repeat(100)
    );
    h.send(request("POST", "/mcp/core", &[JSON, VERSION], big))
        .await
        .assert_http_error(413, "payload_too_large");
    // Not parsed: an over-limit body that is not even JSON gets 413, not -32700.
    h.send(request(
        "POST",
        "/mcp/core",
        &[JSON, VERSION],
        "x".repeat(65),
    ))
    .await
    .assert_http_error(413, "payload_too_large");
    // What an adapter stopped reading is 413 too.
    let mut req = request("POST", "/mcp/core", &[JSON, VERSION], "");
    *req.body_mut() = RequestBody::TooLarge;
    h.send(req)
        .await
        .assert_http_error(413, "payload_too_large");
}

#[tokio::test]
async fn h8_every_response_carries_guid_and_request_id_echoed_or_generated() {
    let h = Harness::fixed().await;
    let guid = "7d444840-9dc0-11d1-b245-5ffdce74fad2";
    for (method, path) in [
        ("POST", "/mcp/core"),
        ("GET", "/mcp/core"),
        ("POST", "/nope"),
    ] {
        let answer = h
            .send(request(
                method,
                path,
                &[JSON, VERSION, ("guid", guid), ("x-request-id", "req-1")],
                list(1).to_string(),
            ))
            .await;
        assert_eq!(answer.header("guid"), Some(guid), "{method} {path}");
        assert_eq!(answer.header("x-request-id"), Some("req-1"));
    }
    let answer = h.post("/mcp/core", &list(1), &[]).await;
    assert!(uuid::Uuid::parse_str(answer.header("guid").unwrap()).is_ok());
    assert!(!answer.header("x-request-id").unwrap().is_empty());
}

// ---- order of checks -----------------------------------------------------------------------

#[tokio::test]
async fn order_origin_before_404_before_405_before_413_before_415_before_406() {
    let mut config = Config::fixed_defaults();
    config.max_request_bytes = 8;
    let h = Harness::with_config(config).await;
    let evil = ("origin", "https://evil.example");
    let big = "x".repeat(100);
    assert_eq!(
        h.send(request("GET", "/nope", &[evil], big.clone()))
            .await
            .status,
        403
    );
    h.send(request("GET", "/nope", &[], big.clone()))
        .await
        .assert_http_error(404, "not_found");
    h.send(request(
        "GET",
        "/mcp/core",
        &[("content-type", "text/plain")],
        big.clone(),
    ))
    .await
    .assert_http_error(405, "method_not_allowed");
    h.send(request(
        "POST",
        "/mcp/core",
        &[("content-type", "text/plain")],
        big,
    ))
    .await
    .assert_http_error(413, "payload_too_large");
    h.send(request(
        "POST",
        "/mcp/core",
        &[("content-type", "text/plain"), ("accept", "text/html")],
        "{}",
    ))
    .await
    .assert_http_error(415, "unsupported_media_type");
    h.send(request(
        "POST",
        "/mcp/core",
        &[("accept", "text/html")],
        "nope",
    ))
    .await
    .assert_http_error(406, "not_acceptable");
}

#[tokio::test]
async fn order_parse_error_before_route_key_before_headers_before_version() {
    let h = Harness::dynamic().await;
    // -32700 comes before the route-key check and the version check.
    h.send(request("POST", "/mcp", &[JSON], "{not json"))
        .await
        .assert_rpc_error(-32700, "Parse error", &Value::Null);
    // Route key before a malformed caller header and before the missing version.
    h.send(request(
        "POST",
        "/mcp/nope",
        &[JSON, ("employee-no", "a b")],
        list(1).to_string(),
    ))
    .await
    .assert_rpc_error(-32600, "route key is not registered", &json!(1));
    // Caller header before the version.
    h.send(request("POST", "/mcp/core", &[JSON, ("employee-no", "a b")], list(1).to_string()))
        .await
        .assert_rpc_error(
            -32600,
            "Invalid Request: header 'employee-no' must be 1-2048 printable ASCII characters without spaces",
            &json!(1),
        );
}

// ---- C: caller headers ---------------------------------------------------------------------

#[tokio::test]
async fn c4_employee_numbers_with_spaces_control_or_non_ascii_characters_are_rejected() {
    let h = Harness::fixed().await;
    let message = |name: &str| {
        format!(
            "Invalid Request: header '{name}' must be 1-2048 printable ASCII characters without spaces"
        )
    };
    let too_long = "A".repeat(2049);
    let mut bad: Vec<http::HeaderValue> = ["enc value", "enc\tvalue", "", too_long.as_str()]
        .iter()
        .map(|v| http::HeaderValue::from_str(v).unwrap())
        .collect();
    bad.push(http::HeaderValue::from_bytes("암호".as_bytes()).unwrap());
    bad.push(http::HeaderValue::from_bytes(b"enc\x80value").unwrap());
    for name in ["employee-no", "virtual-employee-no"] {
        for value in &bad {
            let mut req = request("POST", "/mcp/core", &[JSON, VERSION], list(7).to_string());
            req.headers_mut()
                .insert(http::HeaderName::from_static(name), value.clone());
            let answer = h.send(req).await;
            answer.assert_rpc_error(-32600, &message(name), &json!(7));
            let text = String::from_utf8_lossy(&answer.body).into_owned();
            if value.len() > 3 {
                assert!(
                    !text.contains(value.to_str().unwrap_or("암호")),
                    "value never repeated"
                );
            }
        }
    }
    // CR/LF can never reach a downstream header: the HTTP layer refuses to build such a value.
    assert!(http::HeaderValue::from_str("enc\r\nx-admin: 1").is_err());
    let ok = h
        .post(
            "/mcp/core",
            &list(7),
            &[
                ("employee-no", "ENC:QUJD+/=="),
                ("virtual-employee-no", &"Z".repeat(2048)),
            ],
        )
        .await;
    assert!(ok.json()["result"].is_object());
}

#[tokio::test]
async fn c5_malformed_guid_request_id_or_session_id_is_rejected_naming_only_the_header() {
    let h = Harness::fixed().await;
    let long = "r".repeat(129);
    let cases = [
        (
            "guid",
            "not-a-uuid",
            "Invalid Request: header 'guid' must be a UUID",
        ),
        (
            "x-request-id",
            "req id",
            "Invalid Request: header 'x-request-id' must be 1-128 characters of [A-Za-z0-9._~:/+=@-]",
        ),
        (
            "x-request-id",
            long.as_str(),
            "Invalid Request: header 'x-request-id' must be 1-128 characters of [A-Za-z0-9._~:/+=@-]",
        ),
        (
            "mcp-session-id",
            "sess;drop",
            "Invalid Request: header 'mcp-session-id' must be 1-128 characters of [A-Za-z0-9._~:/+=@-]",
        ),
        (
            "mcp-session-id",
            "",
            "Invalid Request: header 'mcp-session-id' must be 1-128 characters of [A-Za-z0-9._~:/+=@-]",
        ),
    ];
    for (name, value, message) in cases {
        let answer = h.post("/mcp/core", &list(8), &[(name, value)]).await;
        answer.assert_rpc_error(-32600, message, &json!(8));
        if !value.is_empty() {
            assert!(!String::from_utf8_lossy(&answer.body).contains(value));
        }
        assert_ne!(
            answer.header(name),
            Some(value),
            "a malformed value is never echoed"
        );
    }
}

// ---- E: envelope ---------------------------------------------------------------------------

#[tokio::test]
async fn e1_body_that_is_not_json_is_parse_error_with_null_id() {
    let h = Harness::fixed().await;
    for body in [
        "",
        "{",
        "{\"jsonrpc\":\"2.0\",\"id\":1,",
        "\u{feff}{}",
        "nul",
    ] {
        h.send(request("POST", "/mcp/core", &[JSON, VERSION], body))
            .await
            .assert_rpc_error(-32700, "Parse error", &Value::Null);
    }
}

#[tokio::test]
async fn e2_envelope_violations_are_invalid_request_with_the_detail() {
    let h = Harness::fixed().await;
    let cases = [
        (
            json!({"id": 1, "method": "ping"}),
            "Invalid Request: 'jsonrpc' must be \"2.0\"",
            json!(1),
        ),
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            "Invalid Request: 'jsonrpc' must be \"2.0\"",
            json!(1),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
            "Invalid Request: 'method' must be a string",
            json!(1),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1}),
            "Invalid Request: 'method' is required",
            json!(1),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            "Invalid Request: 'id' must be a string or an integer",
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
            "Invalid Request: 'id' must be a string or an integer",
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
            "Invalid Request: 'id' must be a string or an integer",
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            "Invalid Request: 'id' must be a string or an integer",
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": [1]}),
            "Invalid Request: 'params' must be an object",
            json!(2),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": "x"}),
            "Invalid Request: 'params' must be an object",
            json!(2),
        ),
        (
            json!("ping"),
            "Invalid Request: message must be a JSON object",
            Value::Null,
        ),
    ];
    for (body, message, id) in cases {
        h.send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            body.to_string(),
        ))
        .await
        .assert_rpc_error(-32600, message, &id);
    }
}

#[tokio::test]
async fn e2_params_null_counts_as_absent() {
    let h = Harness::fixed().await;
    let answer = h
        .post(
            "/mcp/core",
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": null}),
            &[],
        )
        .await;
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
}

#[tokio::test]
async fn e2_ids_are_echoed_exactly() {
    let h = Harness::fixed().await;
    for raw in [
        "\"1\"",
        "0",
        "-7",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551615",
        "\"\"",
    ] {
        let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":{raw},\"method\":\"ping\"}}");
        let answer = h
            .send(request("POST", "/mcp/core", &[JSON, VERSION], body))
            .await;
        let text = String::from_utf8(answer.body.to_vec()).unwrap();
        assert_eq!(
            text,
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{raw},\"result\":{{}}}}")
        );
    }
    // The id is echoed on errors too.
    let answer = h
        .post("/mcp/core", &rpc(json!("1"), "tools/call", json!({})), &[])
        .await;
    answer.assert_rpc_error(-32602, "Invalid params: 'name' is required", &json!("1"));
}

#[tokio::test]
async fn e3_batch_is_not_supported() {
    let h = Harness::fixed().await;
    for body in ["[]", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"] {
        h.send(request("POST", "/mcp/core", &[JSON, VERSION], body))
            .await
            .assert_rpc_error(
                -32600,
                "Invalid Request: batch requests are not supported",
                &Value::Null,
            );
    }
}

/// A `ping` whose params hold `numbers` copies of `number` in one array: 11 items and `numbers`.
fn ping_with_numbers(numbers: usize, number: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"a":[{}]}}}}"#,
        vec![number; numbers].join(",")
    )
}

#[tokio::test]
async fn e6_a_body_over_10000_json_items_is_invalid_request_with_null_id() {
    let h = Harness::fixed().await;
    // At the limit (11 + 9,989 = 10,000 items) the request is answered.
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            ping_with_numbers(9_989, "1"),
        ))
        .await;
    assert_eq!(answer.json()["result"], json!({}), "{:?}", answer.body);
    // One more is refused before it is parsed, with nothing of it echoed.
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            ping_with_numbers(9_990, "1"),
        ))
        .await;
    assert_eq!(answer.status, http::StatusCode::OK);
    answer.assert_rpc_error(
        -32600,
        "Invalid Request: message holds more than 10000 JSON values and member names",
        &Value::Null,
    );
    // Member names count: 5,000 members of one object are 10,000 items with their values.
    let members: Vec<String> = (0..5_000).map(|i| format!(r#""k{i}":1"#)).collect();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{{}}}}}"#,
        members.join(",")
    );
    h.send(request("POST", "/mcp/core", &[JSON, VERSION], body))
        .await
        .assert_rpc_error(
            -32600,
            "Invalid Request: message holds more than 10000 JSON values and member names",
            &Value::Null,
        );
    // A member name counts one item per 32 bytes: 1,000 members with names of 300 bytes
    // (10 each) and their values are 11,000 items.
    let members: Vec<String> = (0..1_000).map(|i| format!(r#""{i:0>300}":1"#)).collect();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{{}}}}}"#,
        members.join(",")
    );
    h.send(request("POST", "/mcp/core", &[JSON, VERSION], body))
        .await
        .assert_rpc_error(
            -32600,
            "Invalid Request: message holds more than 10000 JSON values and member names",
            &Value::Null,
        );
    // Brackets, commas and literals inside a string count nothing.
    let inside = r#"[1,true,{\"a\":null},"#.repeat(20_000);
    let body = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"s":"{inside}"}}}}"#);
    let answer = h
        .send(request("POST", "/mcp/core", &[JSON, VERSION], body))
        .await;
    assert_eq!(answer.json()["result"], json!({}), "{:?}", answer.body);
}

#[tokio::test]
async fn e6_a_number_over_64_characters_is_invalid_request_with_null_id() {
    let h = Harness::fixed().await;
    let at_limit = format!("-0.{}e+10", "1".repeat(57));
    assert_eq!(at_limit.len(), 64);
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            ping_with_numbers(1, &at_limit),
        ))
        .await;
    assert_eq!(answer.json()["result"], json!({}), "{:?}", answer.body);
    // A number counts one item per 8 characters: 11 items and 1,248 numbers of 64 characters
    // (8 each) fit, 1,249 do not.
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            ping_with_numbers(1_248, &at_limit),
        ))
        .await;
    assert_eq!(answer.json()["result"], json!({}), "{:?}", answer.body);
    h.send(request(
        "POST",
        "/mcp/core",
        &[JSON, VERSION],
        ping_with_numbers(1_249, &at_limit),
    ))
    .await
    .assert_rpc_error(
        -32600,
        "Invalid Request: message holds more than 10000 JSON values and member names",
        &Value::Null,
    );
    // An integer of more than 15 digits counts 50 items: 11 items and 199 of them fit, 200
    // do not; the same digits with a fraction count by their length.
    let big = "9223372036854779904";
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            ping_with_numbers(199, big),
        ))
        .await;
    assert_eq!(answer.json()["result"], json!({}), "{:?}", answer.body);
    h.send(request(
        "POST",
        "/mcp/core",
        &[JSON, VERSION],
        ping_with_numbers(200, big),
    ))
    .await
    .assert_rpc_error(
        -32600,
        "Invalid Request: message holds more than 10000 JSON values and member names",
        &Value::Null,
    );
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[JSON, VERSION],
            ping_with_numbers(2_000, &format!("{big}.5")),
        ))
        .await;
    assert_eq!(answer.json()["result"], json!({}), "{:?}", answer.body);
    for over in [format!("{at_limit}1"), "9".repeat(1_000_000)] {
        let answer = h
            .send(request(
                "POST",
                "/mcp/core",
                &[JSON, VERSION],
                ping_with_numbers(1, &over),
            ))
            .await;
        assert_eq!(answer.status, http::StatusCode::OK);
        answer.assert_rpc_error(
            -32600,
            "Invalid Request: message holds a number longer than 64 characters",
            &Value::Null,
        );
    }
}

#[tokio::test]
async fn e4_unknown_method_is_method_not_found() {
    let h = Harness::fixed().await;
    for method in ["resources/list", "prompts/get", "tools/delete", ""] {
        h.post("/mcp/core", &rpc(json!(11), method, Value::Null), &[])
            .await
            .assert_rpc_error(-32601, &format!("Method not found: {method}"), &json!(11));
    }
}

// ---- L: lifecycle --------------------------------------------------------------------------

#[tokio::test]
async fn l3_notifications_and_client_responses_are_202_with_empty_body() {
    let h = Harness::fixed().await;
    for body in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "method": "some/unknown"}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "x"}}),
    ] {
        let answer = h.post("/mcp/core", &body, &[]).await;
        assert_eq!(answer.status, 202, "{body}");
        assert!(answer.body.is_empty());
    }
}

#[tokio::test]
async fn l3_tools_work_without_a_prior_initialized_notification() {
    let h = Harness::fixed().await;
    assert!(h.post("/mcp/core", &list(1), &[]).await.json()["result"]["tools"].is_array());
}

#[tokio::test]
async fn l4_ping_answers_an_empty_object() {
    let h = Harness::fixed().await;
    let answer = h
        .post("/mcp/core", &rpc(json!("p"), "ping", Value::Null), &[])
        .await;
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );
}

#[tokio::test]
async fn l1_instructions_are_included_when_configured() {
    let mut config = Config::fixed_defaults();
    config.instructions = Some("Use search_documents first.".into());
    let h = Harness::with_config(config).await;
    let answer = h
        .post("/mcp/core", &rpc(json!(1), "initialize", json!({})), &[])
        .await;
    assert_eq!(
        answer.json()["result"]["instructions"],
        "Use search_documents first."
    );
}

// ---- T: tools/list -------------------------------------------------------------------------

// T2 (pages, cursors and their refusals): tools_list_pages.rs.

#[tokio::test]
async fn t1_tools_list_never_exposes_execution_metadata() {
    let h = Harness::fixed().await;
    let answer = h.post("/mcp/core", &list(1), &[]).await;
    let text = String::from_utf8(answer.body.to_vec()).unwrap();
    for secret in [
        "_meta",
        "endpoint",
        "timeoutMs",
        "ttlSeconds",
        &h.tool_service.uri(),
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

// ---- X: tools/call params ------------------------------------------------------------------

#[tokio::test]
async fn x2_params_rows_are_invalid_params_with_exact_messages() {
    let h = Harness::fixed().await;
    let cases = [
        (Value::Null, "Invalid params: 'name' is required"),
        (json!({}), "Invalid params: 'name' is required"),
        (
            json!({"name": 5}),
            "Invalid params: 'name' must be a string",
        ),
        (
            json!({"name": null}),
            "Invalid params: 'name' must be a string",
        ),
        (
            json!({"name": "search_documents", "arguments": [1]}),
            "Invalid params: 'arguments' must be an object",
        ),
        (
            json!({"name": "search_documents", "arguments": "q"}),
            "Invalid params: 'arguments' must be an object",
        ),
        (
            json!({"name": "search_documents", "arguments": null}),
            "Invalid params: 'arguments' must be an object",
        ),
        (
            json!({"name": "no_such_tool", "arguments": {}}),
            "Invalid params: unknown tool 'no_such_tool'",
        ),
        (
            json!({"name": "search_documents"}),
            "Invalid params: 'query' is required",
        ),
        (
            json!({"name": "search_documents", "arguments": {}}),
            "Invalid params: 'query' is required",
        ),
        (
            json!({"name": "search_documents", "arguments": {"query": 5}}),
            "Invalid params: 5 is not of type \"string\" (at /query)",
        ),
        (
            json!({"name": "search_documents", "arguments": {"query": "x", "limit": 0}}),
            "Invalid params: 0 is less than the minimum of 1 (at /limit)",
        ),
        (
            json!({"name": "search_documents", "arguments": {"query": "x", "filters": {}}}),
            "Invalid params: 'from' is required (at /filters)",
        ),
    ];
    for (params, message) in cases {
        let answer = h
            .post(
                "/mcp/core",
                &rpc(json!(12), "tools/call", params.clone()),
                &[],
            )
            .await;
        answer.assert_rpc_error(-32602, message, &json!(12));
        let data = &answer.json()["error"]["data"];
        assert_eq!(
            data["detail"].as_str(),
            message.strip_prefix("Invalid params: "),
            "{params}"
        );
    }
    assert!(
        h.tool_service.received_requests().await.unwrap().is_empty(),
        "no invalid call reached the Tool Service"
    );
}

#[tokio::test]
async fn x2_every_violation_is_listed_in_data_errors() {
    let h = Harness::fixed().await;
    let params = json!({"name": "search_documents", "arguments": {"limit": 99, "filters": {}}});
    let answer = h
        .post("/mcp/core", &rpc(json!(1), "tools/call", params), &[])
        .await;
    let errors = answer.json()["error"]["data"]["errors"].clone();
    let errors: Vec<&str> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors.contains(&"'query' is required"));
    assert!(errors.contains(&"99 is greater than the maximum of 50 (at /limit)"));
    assert!(errors.contains(&"'from' is required (at /filters)"));
}

/// CONTRACT X2: the validator quotes the offending value; a text over 512 bytes is cut with
/// `…`, and `errors` holds at most 100 violations, so a -32602 stays small whatever was sent.
#[tokio::test]
async fn x2_violation_texts_are_cut_and_counted_so_no_argument_makes_a_huge_error() {
    let h = Harness::with_manifest(Config::fixed_defaults(), |document| {
        let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
        tools.push(
            json!({"name": "numbers", "inputSchema": {"type": "object", "properties": {
            "xs": {"type": "array", "items": {"type": "integer"}}}},
            "_meta": {"endpoint": "http://127.0.0.1:9/numbers"}}),
        );
    })
    .await;
    // A 520,000-character string of quotes where an integer belongs: escaped twice in a text.
    let quotes = "\"".repeat(520_000);
    let params = json!({"name": "search_documents", "arguments": {"query": "q", "limit": quotes}});
    let answer = h
        .post("/mcp/core", &rpc(json!(1), "tools/call", params), &[])
        .await;
    assert!(answer.body.len() < 8 * 1024, "{} bytes", answer.body.len());
    let body = answer.json();
    let message = body["error"]["message"].as_str().unwrap();
    assert_eq!(body["error"]["code"], -32602);
    assert!(message.starts_with("Invalid params: \"\\\""), "{message}");
    assert!(message.ends_with('…'), "{message}");
    assert!(message.len() <= "Invalid params: ".len() + 512 + '…'.len_utf8());
    assert_eq!(
        body["error"]["data"]["detail"],
        message["Invalid params: ".len()..]
    );
    // 150 violations: the first 100 are listed, each with its pointer.
    let xs: Vec<Value> = (0..150).map(|i| json!(format!("n{i}"))).collect();
    let params = json!({"name": "numbers", "arguments": {"xs": xs}});
    let answer = h
        .post("/mcp/core", &rpc(json!(2), "tools/call", params), &[])
        .await;
    let body = answer.json();
    let errors = body["error"]["data"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 100);
    assert_eq!(errors[0], "\"n0\" is not of type \"integer\" (at /xs/0)");
    assert_eq!(errors[99], "\"n99\" is not of type \"integer\" (at /xs/99)");
}

#[tokio::test]
async fn x3_name_with_two_active_versions_is_never_resolved() {
    let h = Harness::fixed().await;
    h.post(
        "/mcp/core",
        &rpc(
            json!(13),
            "tools/call",
            json!({"name": "versioned", "arguments": {}}),
        ),
        &[],
    )
    .await
    .assert_rpc_error(
        -32603,
        "Internal error: tool 'versioned' has 2 active versions",
        &json!(13),
    );
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn x8_without_a_snapshot_initialize_works_and_tool_methods_are_internal_errors() {
    // Both modes serve /mcp/core: fixed as its endpoint, dynamic as route key `core`.
    let path = "/mcp/core";
    for config in [Config::fixed_defaults(), Config::dynamic_defaults()] {
        let error = RegistryError::Unreadable {
            source_name: "file:/missing.json".into(),
            reason: "not found".into(),
        };
        let gateway = Gateway::new(config, Err(error), HttpInvoker::new().unwrap());
        let send = |body: Value| {
            let gateway = &gateway;
            async move {
                let response = gateway
                    .handle(
                        request("POST", path, &[JSON, VERSION], body.to_string()),
                        mcp_gateway::InvocationContext::default(),
                    )
                    .await;
                serde_json::from_slice::<Value>(response.body()).unwrap()
            }
        };
        let init = send(rpc(json!(1), "initialize", json!({}))).await;
        assert_eq!(init["result"]["serverInfo"]["name"], "mcp-gateway");
        for body in [
            list(2),
            rpc(
                json!(2),
                "tools/call",
                json!({"name": "search_documents", "arguments": {"query": "x"}}),
            ),
        ] {
            let answer = send(body).await;
            assert_eq!(answer["error"]["code"], -32603);
            assert_eq!(
                answer["error"]["message"],
                "Internal error: the tool registry is not loaded"
            );
        }
    }
}

#[tokio::test]
async fn x8_fixed_deployment_whose_route_is_missing_says_so() {
    let mut config = Config::fixed_defaults();
    config.endpoint_path = "/mcp/finance".into();
    let h = Harness::with_config(config).await;
    h.post("/mcp/finance", &list(1), &[])
        .await
        .assert_rpc_error(
            -32603,
            "Internal error: route 'finance' is not in the tool registry",
            &json!(1),
        );
    let init = h
        .post("/mcp/finance", &rpc(json!(1), "initialize", json!({})), &[])
        .await;
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
}
