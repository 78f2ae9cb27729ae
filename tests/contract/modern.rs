//! The 2026-07-28 era on the same URL (CONTRACT N1–N7): era classification, every row of the
//! modern validation ladder with its HTTP status, code, message and id echo, `server/discover`,
//! the fields modern results add (and legacy results never carry), a deployment without a
//! modern version and `x-mcp-header` tools. The usage event's era and version (N7) are in
//! `tests/usage/main.rs`, a test binary of its own.

use std::sync::Arc;

use gateway_tests::{Answer, Harness, request, rpc};
use mcp_gateway::config::AuthMode;
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::protocol::ProtocolVersion;
use mcp_gateway::registry::RegistryError;
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const MODERN: &str = "2026-07-28";

/// The envelope of a modern request (CONTRACT N, MCP 2026-07-28 basic).
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "contract-tests", "version": "1.0.0"}
    })
}

/// A modern request body: `params` with the envelope at `version`.
pub(super) fn modern_body(id: &Value, method: &str, params: &Value, version: &str) -> Value {
    let mut params = params.clone();
    if params.is_null() {
        params = json!({});
    }
    params["_meta"] = meta(version);
    rpc(id.clone(), method, params)
}

/// The headers a conforming modern client sends: version, method and, for tools/call, name.
pub(super) fn modern_headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        (
            "accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
        ("mcp-protocol-version".to_string(), MODERN.to_string()),
        ("mcp-method".to_string(), method.to_string()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name".to_string(), name.to_string()));
    }
    headers
}

pub(super) async fn send(
    h: &Harness,
    path: &str,
    headers: &[(String, String)],
    body: &str,
) -> Answer {
    let refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    h.send(request("POST", path, &refs, body.to_string())).await
}

/// A conforming modern request to `/mcp/core`.
async fn modern(h: &Harness, id: i64, method: &str, params: &Value) -> Answer {
    let name = params.get("name").and_then(Value::as_str);
    let body = modern_body(&json!(id), method, params, MODERN);
    send(
        h,
        "/mcp/core",
        &modern_headers(method, name),
        &body.to_string(),
    )
    .await
}

/// Asserts a modern JSON-RPC error: the HTTP status, `application/json`, the code, the exact
/// message, the echoed id and `data.guid` (CONTRACT N2, E5).
#[track_caller]
fn assert_modern_error(answer: &Answer, status: u16, code: i64, message: &str, id: &Value) {
    assert_eq!(answer.status.as_u16(), status, "body: {:?}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let body = answer.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(&body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["message"], message, "{body}");
    assert_eq!(
        body["error"]["data"]["guid"].as_str(),
        answer.header("guid")
    );
    assert!(answer.header("mcp-session-id").is_none(), "N2: no session");
}

fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: Option<&str>) {
    headers.retain(|(k, _)| k != name);
    if let Some(value) = value {
        headers.push((name.to_string(), value.to_string()));
    }
}

/// A tool on route `core` whose arguments `region` (string), `shard` (integer) and `dry`
/// (boolean) are mirrored into `Mcp-Param-*` headers (CONTRACT N2, N6).
fn with_header_tool(manifest: &mut Value) {
    let mut tool = manifest["routes"][0]["tools"][0].clone();
    tool["name"] = json!("execute_sql");
    tool["inputSchema"] = json!({
        "type": "object",
        "properties": {
            "sql": {"type": "string"},
            "region": {"type": "string", "x-mcp-header": "Region"},
            "shard": {"type": "integer", "x-mcp-header": "Shard"},
            "dry": {"type": ["boolean", "null"]},
            "flag": {"type": "boolean", "x-mcp-header": "Dry-Run"}
        },
        "required": ["sql"]
    });
    tool["_meta"]["endpoint"] = json!(
        tool["_meta"]["endpoint"]
            .as_str()
            .unwrap()
            .replace("/search", "/sql")
    );
    manifest["routes"][0]["tools"]
        .as_array_mut()
        .unwrap()
        .push(tool);
}

async fn answer_search(h: &Harness) {
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"id": "DOC-1"}])))
        .mount(&h.tool_service)
        .await;
}

// ---- N1: era ---------------------------------------------------------------------------------

#[tokio::test]
async fn n1_a_body_envelope_makes_the_request_modern_whatever_the_header_says() {
    let h = Harness::fixed().await;
    let mut headers = modern_headers("tools/list", None);
    set_header(&mut headers, "mcp-protocol-version", Some("2025-11-25"));
    let body = modern_body(&json!(1), "tools/list", &Value::Null, MODERN);
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_modern_error(
        &answer,
        400,
        -32020,
        "Header mismatch: MCP-Protocol-Version header does not match params._meta[\"io.modelcontextprotocol/protocolVersion\"]",
        &json!(1),
    );
}

#[tokio::test]
async fn n1_a_later_date_in_the_header_alone_makes_the_request_modern() {
    let h = Harness::fixed().await;
    for version in [MODERN, "2027-01-01", "2025-11-26"] {
        let mut headers = modern_headers("tools/list", None);
        set_header(&mut headers, "mcp-protocol-version", Some(version));
        let answer = send(
            &h,
            "/mcp/core",
            &headers,
            &rpc(json!(2), "tools/list", Value::Null).to_string(),
        )
        .await;
        assert_modern_error(
            &answer,
            400,
            -32602,
            "Invalid params: 'params._meta' is required in this protocol version",
            &json!(2),
        );
    }
}

#[tokio::test]
async fn n1_a_modern_version_in_any_of_repeated_headers_makes_the_request_modern() {
    let h = Harness::fixed().await;
    for order in [["2025-11-25", MODERN], [MODERN, "2025-11-25"]] {
        let headers = [
            ("content-type", "application/json"),
            ("mcp-protocol-version", order[0]),
            ("mcp-protocol-version", order[1]),
        ];
        let body = rpc(json!(2), "tools/list", Value::Null).to_string();
        let answer = h.send(request("POST", "/mcp/core", &headers, body)).await;
        assert_modern_error(
            &answer,
            400,
            -32602,
            "Invalid params: 'params._meta' is required in this protocol version",
            &json!(2),
        );
    }
}

#[tokio::test]
async fn n1_n2_a_notification_whose_body_names_the_version_is_modern_and_accepted() {
    let h = Harness::fixed().await;
    let mut body = modern_body(&json!(1), "notifications/initialized", &Value::Null, MODERN);
    body.as_object_mut().unwrap().remove("id");
    // No MCP-Protocol-Version header: the legacy path would answer H4's 400.
    let headers = [("content-type", "application/json")];
    let answer = h
        .send(request("POST", "/mcp/core", &headers, body.to_string()))
        .await;
    assert_eq!(answer.status, 202, "{:?}", answer.body);
    assert!(answer.body.is_empty());
}

#[tokio::test]
async fn n1_other_header_values_stay_legacy_and_h4_answers_them() {
    let h = Harness::fixed().await;
    for version in [
        "2025-06-18",
        "2026-07-28 beta",
        "latest",
        "2026-7-28",
        "2026-13-01",
        "2026-02-30",
    ] {
        let mut headers = modern_headers("tools/list", None);
        set_header(&mut headers, "mcp-protocol-version", Some(version));
        let answer = send(
            &h,
            "/mcp/core",
            &headers,
            &rpc(json!(2), "tools/list", Value::Null).to_string(),
        )
        .await;
        answer.assert_http_error(400, "unsupported_protocol_version");
        assert_eq!(answer.json()["supportedVersions"], json!(["2025-11-25"]));
    }
}

#[tokio::test]
async fn n1_legacy_initialize_answers_2025_11_25_even_when_asked_for_a_modern_version() {
    let h = Harness::fixed().await;
    let body = rpc(
        json!(1),
        "initialize",
        json!({"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    let answer = h.post("/mcp/core", &body, &[]).await;
    assert_eq!(answer.status, 200);
    let result = &answer.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    for field in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(
            result.get(field).is_none(),
            "N1: no {field} on legacy: {result}"
        );
    }
    assert!(answer.header("mcp-session-id").is_some());
}

#[tokio::test]
async fn n1_server_discover_on_the_legacy_path_is_method_not_found_e4() {
    let h = Harness::fixed().await;
    h.post(
        "/mcp/core",
        &rpc(json!(5), "server/discover", Value::Null),
        &[],
    )
    .await
    .assert_rpc_error(-32601, "Method not found: server/discover", &json!(5));
}

#[tokio::test]
async fn n1_n4_legacy_results_never_carry_modern_fields() {
    let h = Harness::fixed().await;
    answer_search(&h).await;
    let list = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", Value::Null), &[])
        .await;
    let call = h.call_tool("search_documents", json!({"query": "q"})).await;
    for answer in [list, call] {
        let result = &answer.json()["result"];
        for field in ["resultType", "ttlMs", "cacheScope", "_meta"] {
            assert!(
                result.get(field).is_none(),
                "N1: no {field} on legacy: {result}"
            );
        }
    }
}

// ---- N2: the modern ladder -------------------------------------------------------------------

#[tokio::test]
async fn n2_body_not_json_is_400_parse_error_with_null_id() {
    let h = Harness::fixed().await;
    let answer = send(
        &h,
        "/mcp/core",
        &modern_headers("tools/list", None),
        "{not json",
    )
    .await;
    assert_modern_error(&answer, 400, -32700, "Parse error", &Value::Null);
}

/// CONTRACT E6 in the modern era: N2's status, 400, and no id.
#[tokio::test]
async fn n2_e6_a_body_over_its_json_limits_is_400_invalid_request() {
    let h = Harness::fixed().await;
    let headers = modern_headers("tools/list", None);
    let mut body = modern_body(&json!(1), "tools/list", &Value::Null, MODERN);
    body["params"]["x"] = json!(vec![1; 10_000]);
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_modern_error(
        &answer,
        400,
        -32600,
        "Invalid Request: message holds more than 10000 JSON values and member names",
        &Value::Null,
    );
    let mut body = modern_body(&json!(1), "tools/list", &Value::Null, MODERN);
    body["params"]["x"] = json!(1);
    let text = body
        .to_string()
        .replace(r#""x":1"#, &format!(r#""x":{}"#, "1".repeat(65)));
    let answer = send(&h, "/mcp/core", &headers, &text).await;
    assert_modern_error(
        &answer,
        400,
        -32600,
        "Invalid Request: message holds a number longer than 64 characters",
        &Value::Null,
    );
}

#[tokio::test]
async fn n2_batch_and_non_requests_are_400_invalid_request() {
    let h = Harness::fixed().await;
    let headers = modern_headers("tools/list", None);
    let batch = json!([modern_body(&json!(1), "tools/list", &Value::Null, MODERN)]);
    let answer = send(&h, "/mcp/core", &headers, &batch.to_string()).await;
    assert_modern_error(
        &answer,
        400,
        -32600,
        "Invalid Request: batch requests are not supported",
        &Value::Null,
    );
    let mut null_id = modern_body(&json!(1), "tools/list", &Value::Null, MODERN);
    null_id["id"] = Value::Null;
    let answer = send(&h, "/mcp/core", &headers, &null_id.to_string()).await;
    assert_modern_error(
        &answer,
        400,
        -32600,
        "Invalid Request: 'id' must be a string or an integer",
        &Value::Null,
    );
    // The body's envelope alone makes it modern (N1), the id is echoed.
    let mut old = modern_body(&json!("x"), "tools/list", &Value::Null, MODERN);
    old["jsonrpc"] = json!("1.0");
    let legacy_headers = [("content-type", "application/json")];
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &legacy_headers,
            old.to_string(),
        ))
        .await;
    assert_modern_error(
        &answer,
        400,
        -32600,
        "Invalid Request: 'jsonrpc' must be \"2.0\"",
        &json!("x"),
    );
}

#[tokio::test]
async fn n2_route_key_errors_keep_http_200_and_the_p3_messages() {
    let h = Harness::dynamic().await;
    let body = modern_body(&json!(3), "tools/list", &Value::Null, MODERN);
    let headers = modern_headers("tools/list", None);
    for (path, message) in [
        ("/mcp/nope", "route key is not registered"),
        ("/mcp", "route key is required"),
        ("/mcp/a+b", "route key is invalid"),
    ] {
        let answer = send(&h, path, &headers, &body.to_string()).await;
        answer.assert_rpc_error(-32600, message, &json!(3));
    }
    let answer = send(&h, "/mcp/hr", &headers, &body.to_string()).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.json()["result"]["tools"][0]["name"], "leave_balance");
}

#[tokio::test]
async fn n2_caller_header_errors_keep_http_200_and_the_c4_c5_messages() {
    let h = Harness::fixed().await;
    let body = modern_body(&json!(4), "tools/list", &Value::Null, MODERN);
    let mut headers = modern_headers("tools/list", None);
    headers.push(("employee-no".into(), "a b".into()));
    send(&h, "/mcp/core", &headers, &body.to_string())
        .await
        .assert_rpc_error(
            -32600,
            "Invalid Request: header 'employee-no' must be 1-2048 printable ASCII characters without spaces",
            &json!(4),
        );
    let mut headers = modern_headers("tools/list", None);
    headers.push(("guid".into(), "g1".into()));
    headers.push(("guid".into(), "g2".into()));
    send(&h, "/mcp/core", &headers, &body.to_string())
        .await
        .assert_rpc_error(
            -32600,
            "Invalid Request: header 'guid' must be sent at most once",
            &json!(4),
        );
}

#[tokio::test]
async fn n2_a_sent_session_id_is_neither_checked_nor_forwarded_and_none_is_minted() {
    let h = Harness::fixed().await;
    answer_search(&h).await;
    let params = json!({"name": "search_documents", "arguments": {"query": "q"}});
    let body = modern_body(&json!(6), "tools/call", &params, MODERN);
    let mut headers = modern_headers("tools/call", Some("search_documents"));
    headers.push(("mcp-session-id".into(), "not a valid session id!".into()));
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.json()["result"]["isError"], false);
    assert!(answer.header("mcp-session-id").is_none());
    let received = h.tool_service.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    assert!(received[0].headers.get("mcp-session-id").is_none());
}

#[tokio::test]
async fn n2_a_missing_envelope_is_400_invalid_params() {
    let h = Harness::fixed().await;
    let headers = modern_headers("tools/list", None);
    let cases = [
        (
            rpc(json!(7), "tools/list", Value::Null),
            "'params._meta' is required in this protocol version",
        ),
        (
            rpc(json!(7), "tools/list", json!({"_meta": "x"})),
            "'params._meta' must be an object in this protocol version",
        ),
        (
            rpc(
                json!(7),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            ),
            "'params._meta[\"io.modelcontextprotocol/protocolVersion\"]' must be a string",
        ),
        (
            rpc(
                json!(7),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 20_260_728, "io.modelcontextprotocol/clientCapabilities": {}}}),
            ),
            "'params._meta[\"io.modelcontextprotocol/protocolVersion\"]' must be a string",
        ),
        (
            rpc(
                json!(7),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
            ),
            "'params._meta[\"io.modelcontextprotocol/clientCapabilities\"]' must be an object",
        ),
    ];
    for (body, detail) in cases {
        let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
        assert_modern_error(
            &answer,
            400,
            -32602,
            &format!("Invalid params: {detail}"),
            &json!(7),
        );
        assert_eq!(answer.json()["error"]["data"]["detail"], detail);
    }
}

#[tokio::test]
async fn n2_the_protocol_version_header_must_repeat_the_body() {
    let h = Harness::fixed().await;
    let body = modern_body(&json!(8), "tools/list", &Value::Null, MODERN).to_string();
    let mut headers = modern_headers("tools/list", None);
    set_header(&mut headers, "mcp-protocol-version", None);
    assert_modern_error(
        &send(&h, "/mcp/core", &headers, &body).await,
        400,
        -32020,
        "Header mismatch: MCP-Protocol-Version header is required",
        &json!(8),
    );
    for sent in ["2027-01-01", "2026-07-29"] {
        set_header(&mut headers, "mcp-protocol-version", Some(sent));
        assert_modern_error(
            &send(&h, "/mcp/core", &headers, &body).await,
            400,
            -32020,
            "Header mismatch: MCP-Protocol-Version header does not match params._meta[\"io.modelcontextprotocol/protocolVersion\"]",
            &json!(8),
        );
    }
    // Surrounding spaces and tabs are trimmed.
    set_header(&mut headers, "mcp-protocol-version", Some(" 2026-07-28\t"));
    assert_eq!(send(&h, "/mcp/core", &headers, &body).await.status, 200);
}

#[tokio::test]
async fn n2_the_method_header_must_repeat_the_method_exactly() {
    let h = Harness::fixed().await;
    let body = modern_body(&json!(9), "tools/list", &Value::Null, MODERN).to_string();
    let mut headers = modern_headers("tools/list", None);
    set_header(&mut headers, "mcp-method", None);
    assert_modern_error(
        &send(&h, "/mcp/core", &headers, &body).await,
        400,
        -32020,
        "Header mismatch: Mcp-Method header is required",
        &json!(9),
    );
    for sent in ["Tools/List", "tools/call", "=?base64?dG9vbHMvY2FsbA==?="] {
        set_header(&mut headers, "mcp-method", Some(sent));
        assert_modern_error(
            &send(&h, "/mcp/core", &headers, &body).await,
            400,
            -32020,
            "Header mismatch: Mcp-Method header does not match method",
            &json!(9),
        );
    }
    // The base64 form of the right value is the value.
    set_header(
        &mut headers,
        "mcp-method",
        Some("=?base64?dG9vbHMvbGlzdA==?="),
    );
    assert_eq!(send(&h, "/mcp/core", &headers, &body).await.status, 200);
}

#[tokio::test]
async fn n2_a_tool_call_needs_the_name_header_plain_or_base64() {
    let h = Harness::fixed().await;
    answer_search(&h).await;
    let params = json!({"name": "search_documents", "arguments": {"query": "q"}});
    let body = modern_body(&json!(10), "tools/call", &params, MODERN).to_string();
    let mut headers = modern_headers("tools/call", None);
    assert_modern_error(
        &send(&h, "/mcp/core", &headers, &body).await,
        400,
        -32020,
        "Header mismatch: Mcp-Name header is required",
        &json!(10),
    );
    for sent in [
        "search",
        "SEARCH_DOCUMENTS",
        "=?base64?c2VhcmNoX2RvY3VtZW50cw?=",
        "=?base64?not base64?=",
    ] {
        set_header(&mut headers, "mcp-name", Some(sent));
        assert_modern_error(
            &send(&h, "/mcp/core", &headers, &body).await,
            400,
            -32020,
            "Header mismatch: Mcp-Name header does not match params.name",
            &json!(10),
        );
    }
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
    for sent in ["search_documents", "=?base64?c2VhcmNoX2RvY3VtZW50cw==?="] {
        set_header(&mut headers, "mcp-name", Some(sent));
        let answer = send(&h, "/mcp/core", &headers, &body).await;
        assert_eq!(answer.status, 200, "{:?}", answer.body);
        assert_eq!(answer.json()["result"]["isError"], false);
    }
}

#[tokio::test]
async fn n2_x_mcp_header_arguments_must_be_mirrored_in_mcp_param_headers() {
    let h = Harness::with_manifest(Config::fixed_defaults(), with_header_tool).await;
    Mock::given(method("POST"))
        .and(path("/sql"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"rows": 1})))
        .mount(&h.tool_service)
        .await;
    let arguments = json!({"sql": "select 1", "region": "서울 1", "shard": 42, "flag": true});
    let params = json!({"name": "execute_sql", "arguments": arguments});
    let body = modern_body(&json!(11), "tools/call", &params, MODERN).to_string();
    let full = {
        let mut headers = modern_headers("tools/call", Some("execute_sql"));
        // "서울 1" is not ASCII: clients send it in the base64 form.
        headers.push(("Mcp-Param-Region".into(), "=?base64?7ISc7Jq4IDE=?=".into()));
        headers.push(("mcp-param-shard".into(), "42".into()));
        headers.push(("MCP-PARAM-DRY-RUN".into(), " true ".into()));
        headers
    };
    let answer = send(&h, "/mcp/core", &full, &body).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.json()["result"]["isError"], false);

    let cases: [(&str, Option<&str>, &str); 6] = [
        // Raw UTF-8 is not header text: only the base64 form carries it.
        (
            "mcp-param-region",
            Some("서울 1"),
            "Header mismatch: Mcp-Param-Region header does not match arguments.region",
        ),
        (
            "mcp-param-region",
            None,
            "Header mismatch: Mcp-Param-Region header is required",
        ),
        (
            "mcp-param-region",
            Some("=?base64?c2VvdWwgMQ==?="),
            "Header mismatch: Mcp-Param-Region header does not match arguments.region",
        ),
        (
            "mcp-param-shard",
            Some("41"),
            "Header mismatch: Mcp-Param-Shard header does not match arguments.shard",
        ),
        (
            "mcp-param-dry-run",
            Some("True"),
            "Header mismatch: Mcp-Param-Dry-Run header does not match arguments.flag",
        ),
        (
            "mcp-param-dry-run",
            None,
            "Header mismatch: Mcp-Param-Dry-Run header is required",
        ),
    ];
    for (name, value, message) in cases {
        let mut headers: Vec<(String, String)> = full
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case(name))
            .cloned()
            .collect();
        if let Some(value) = value {
            headers.push((name.into(), value.into()));
        }
        assert_modern_error(
            &send(&h, "/mcp/core", &headers, &body).await,
            400,
            -32020,
            message,
            &json!(11),
        );
    }
    assert_eq!(h.tool_service.received_requests().await.unwrap().len(), 1);

    // Numbers compare by value (42.0 is 42), and a float-valued integer needs its header too.
    let mut numeric = full.clone();
    set_header(&mut numeric, "mcp-param-shard", Some("42.0"));
    assert_eq!(send(&h, "/mcp/core", &numeric, &body).await.status, 200);
    let float_body = body.replace("\"shard\":42", "\"shard\":42.0");
    assert!(float_body.contains("42.0"), "{float_body}");
    let mut missing = full.clone();
    set_header(&mut missing, "mcp-param-shard", None);
    assert_modern_error(
        &send(&h, "/mcp/core", &missing, &float_body).await,
        400,
        -32020,
        "Header mismatch: Mcp-Param-Shard header is required",
        &json!(11),
    );

    // An argument that is absent (or null) expects no header.
    let params = json!({"name": "execute_sql", "arguments": {"sql": "select 2", "region": null}});
    let body = modern_body(&json!(12), "tools/call", &params, MODERN).to_string();
    let answer = send(
        &h,
        "/mcp/core",
        &modern_headers("tools/call", Some("execute_sql")),
        &body,
    )
    .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
}

#[tokio::test]
async fn n2_a_version_the_deployment_does_not_serve_is_32022_with_supported_and_requested() {
    let h = Harness::fixed().await;
    for requested in ["2027-01-01", "2025-11-25", "draft"] {
        let body = modern_body(&json!(13), "tools/list", &Value::Null, requested).to_string();
        let mut headers = modern_headers("tools/list", None);
        set_header(&mut headers, "mcp-protocol-version", Some(requested));
        let answer = send(&h, "/mcp/core", &headers, &body).await;
        assert_modern_error(
            &answer,
            400,
            -32022,
            "Unsupported protocol version",
            &json!(13),
        );
        let data = &answer.json()["error"]["data"];
        assert_eq!(data["supported"], json!([MODERN]));
        assert_eq!(data["requested"], requested);
    }
}

#[tokio::test]
async fn n2_every_method_the_modern_era_does_not_serve_is_404_method_not_found() {
    let h = Harness::fixed().await;
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "subscriptions/listen",
        "tools/unknown",
    ] {
        let answer = modern(&h, 14, method, &json!({})).await;
        assert_modern_error(
            &answer,
            404,
            -32601,
            &format!("Method not found: {method}"),
            &json!(14),
        );
    }
}

#[tokio::test]
async fn n2_tool_level_errors_keep_http_200_and_the_legacy_messages() {
    let h = Harness::fixed().await;
    let cases = [
        (
            json!({"name": "nope", "arguments": {}}),
            -32602,
            "Invalid params: unknown tool 'nope'",
        ),
        (
            json!({"name": "search_documents", "arguments": []}),
            -32602,
            "Invalid params: 'arguments' must be an object",
        ),
        (
            json!({"name": "search_documents", "arguments": {}}),
            -32602,
            "Invalid params: 'query' is required",
        ),
        (
            json!({"name": "versioned", "arguments": {}}),
            -32603,
            "Internal error: tool 'versioned' has 2 active versions",
        ),
    ];
    for (params, code, message) in cases {
        modern(&h, 15, "tools/call", &params)
            .await
            .assert_rpc_error(code, message, &json!(15));
    }
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn n2_x8_without_a_snapshot_discover_answers_and_tool_methods_are_internal_errors() {
    let gateway = Gateway::new(
        Config::fixed_defaults(),
        Err(RegistryError::Unreadable {
            source_name: "file:/missing.json".into(),
            reason: "not found".into(),
        }),
        HttpInvoker::new().unwrap(),
    );
    let h = Harness {
        gateway: Arc::new(gateway),
        tool_service: wiremock::MockServer::start().await,
    };
    let discover = modern(&h, 16, "server/discover", &json!({})).await;
    assert_eq!(discover.status, 200);
    let result = &discover.json()["result"];
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-gateway"
    );
    modern(&h, 17, "tools/list", &json!({}))
        .await
        .assert_rpc_error(
            -32603,
            "Internal error: the tool registry is not loaded",
            &json!(17),
        );
}

#[tokio::test]
async fn n2_a_modern_notification_is_202_and_get_and_delete_stay_405() {
    let h = Harness::fixed().await;
    let mut body = modern_body(&json!(1), "notifications/cancelled", &Value::Null, MODERN);
    body.as_object_mut().unwrap().remove("id");
    let answer = send(
        &h,
        "/mcp/core",
        &modern_headers("notifications/cancelled", None),
        &body.to_string(),
    )
    .await;
    assert_eq!(answer.status, 202);
    assert!(answer.body.is_empty());
    for verb in ["GET", "DELETE"] {
        let headers = [
            ("mcp-protocol-version", MODERN),
            ("accept", "application/json"),
        ];
        let answer = h.send(request(verb, "/mcp/core", &headers, "")).await;
        answer.assert_http_error(405, "method_not_allowed");
    }
}

#[tokio::test]
async fn n2_order_envelope_then_version_header_then_method_then_name_then_version_then_method() {
    let h = Harness::fixed().await;
    // Every later check fails too: the first one answers.
    let mut headers = modern_headers("x", None);
    set_header(&mut headers, "mcp-protocol-version", Some("2027-01-01"));
    let body = rpc(
        json!(18),
        "initialize",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01"}}),
    );
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(answer.json()["error"]["code"], -32602);
    let body = modern_body(&json!(18), "initialize", &Value::Null, "2027-01-02");
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(
        answer.json()["error"]["message"],
        "Header mismatch: MCP-Protocol-Version header does not match params._meta[\"io.modelcontextprotocol/protocolVersion\"]"
    );
    let body = modern_body(&json!(18), "initialize", &Value::Null, "2027-01-01");
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(
        answer.json()["error"]["message"],
        "Header mismatch: Mcp-Method header does not match method"
    );
    set_header(&mut headers, "mcp-method", Some("initialize"));
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(answer.json()["error"]["code"], -32022);
    set_header(&mut headers, "mcp-protocol-version", Some(MODERN));
    let body = modern_body(&json!(18), "initialize", &Value::Null, MODERN);
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(answer.status, 404);
    // Mcp-Name comes before the version check.
    let params = json!({"name": "search_documents", "arguments": {}});
    let body = modern_body(&json!(18), "tools/call", &params, "2027-01-01");
    let mut headers = modern_headers("tools/call", None);
    set_header(&mut headers, "mcp-protocol-version", Some("2027-01-01"));
    let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
    assert_eq!(
        answer.json()["error"]["message"],
        "Header mismatch: Mcp-Name header is required"
    );
}

// ---- N3, N4: results -------------------------------------------------------------------------

#[tokio::test]
async fn n3_server_discover_answers_versions_capabilities_identity_and_cache_fields() {
    let h = Harness::fixed().await;
    let answer = modern(&h, 21, "server/discover", &json!({})).await;
    assert_eq!(answer.status, 200);
    assert!(answer.header("mcp-session-id").is_none());
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 21, "result": {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {"listChanged": false}},
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "core-tools", "title": "Core tools", "version": "1.0.0"}},
            "ttlMs": 300_000,
            "cacheScope": "public"
        }})
    );
}

#[tokio::test]
async fn n3_discover_carries_instructions_when_the_deployment_has_any() {
    let config = Config {
        instructions: Some("Search before you ask.".into()),
        ..Config::fixed_defaults()
    };
    let h = Harness::with_config(config).await;
    let answer = modern(&h, 22, "server/discover", &json!({})).await;
    assert_eq!(
        answer.json()["result"]["instructions"],
        "Search before you ask."
    );
}

#[tokio::test]
async fn n4_a_modern_tools_list_adds_result_type_server_info_ttl_and_scope() {
    let h = Harness::fixed().await;
    let legacy = h
        .post("/mcp/core", &rpc(json!(23), "tools/list", Value::Null), &[])
        .await;
    let answer = modern(&h, 23, "tools/list", &json!({})).await;
    assert_eq!(answer.status, 200);
    let mut result = answer.json()["result"].clone();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 300_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "core-tools", "title": "Core tools", "version": "1.0.0"})
    );
    let object = result.as_object_mut().unwrap();
    for field in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        object.remove(field);
    }
    assert_eq!(
        result,
        legacy.json()["result"],
        "otherwise the legacy result"
    );
}

#[tokio::test]
async fn n4_ttl_comes_from_mcp_list_ttl_ms_and_scope_is_private_with_authentication() {
    let mut config = Config::fixed_defaults();
    config.list_ttl_ms = 0;
    config.auth.mode = AuthMode::Token;
    let h = Harness::with_config(config).await;
    for method in ["tools/list", "server/discover"] {
        let result = modern(&h, 24, method, &json!({})).await.json()["result"].clone();
        assert_eq!(result["ttlMs"], 0, "{method}");
        assert_eq!(result["cacheScope"], "private", "{method}");
    }
}

#[tokio::test]
async fn n4_a_modern_tools_call_result_is_the_legacy_result_plus_two_fields() {
    let h = Harness::fixed().await;
    answer_search(&h).await;
    let params = json!({"name": "search_documents", "arguments": {"query": "q"}});
    let legacy = h.call_tool("search_documents", json!({"query": "q"})).await;
    let answer = modern(&h, 1, "tools/call", &params).await;
    let mut result = answer.json()["result"].clone();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "core-tools"
    );
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none());
    let object = result.as_object_mut().unwrap();
    object.remove("resultType");
    object.remove("_meta");
    let mut expected = legacy.json()["result"].clone();
    // searchTime is measured per call.
    expected["content"][0]["_meta"]["searchTime"] =
        result["content"][0]["_meta"]["searchTime"].clone();
    assert_eq!(result, expected);
}

#[tokio::test]
async fn n4_an_is_error_tool_result_carries_the_modern_fields_too() {
    let h = Harness::fixed().await;
    Mock::given(method("POST"))
        .and(path("/fail"))
        .respond_with(ResponseTemplate::new(503).set_body_string("down"))
        .mount(&h.tool_service)
        .await;
    let answer = modern(
        &h,
        25,
        "tools/call",
        &json!({"name": "failing_tool", "arguments": {}}),
    )
    .await;
    let result = &answer.json()["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["resultType"], "complete");
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
}

// ---- N5: versions ----------------------------------------------------------------------------

#[test]
fn n5_the_default_list_serves_both_eras() {
    assert_eq!(
        Config::fixed_defaults().supported_protocol_versions,
        vec![ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28]
    );
}

#[tokio::test]
async fn n5_the_h4_body_lists_the_legacy_versions_only() {
    let h = Harness::fixed().await;
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[("content-type", "application/json")],
            rpc(json!(1), "tools/list", Value::Null).to_string(),
        ))
        .await;
    answer.assert_http_error(400, "missing_protocol_version");
    assert_eq!(answer.json()["supportedVersions"], json!(["2025-11-25"]));
}

#[tokio::test]
async fn n5_a_deployment_without_a_modern_version_answers_400_invalid_request_with_the_legacy_list()
{
    let mut config = Config::fixed_defaults();
    config.supported_protocol_versions = vec![ProtocolVersion::V2025_11_25];
    let h = Harness::with_config(config).await;
    // A conforming probe, one with mismatched headers, and one the header alone makes modern.
    let conforming = modern_body(&json!(31), "server/discover", &Value::Null, MODERN);
    let mut mismatched = modern_headers("tools/list", None);
    set_header(&mut mismatched, "mcp-protocol-version", None);
    let mut header_only = modern_headers("tools/list", None);
    set_header(&mut header_only, "mcp-protocol-version", Some("2027-01-01"));
    let cases = [
        (
            modern_headers("server/discover", None),
            conforming.clone(),
            MODERN,
        ),
        (mismatched, conforming, MODERN),
        (
            header_only,
            rpc(json!(31), "tools/list", Value::Null),
            "2027-01-01",
        ),
    ];
    for (headers, body, requested) in cases {
        let answer = send(&h, "/mcp/core", &headers, &body.to_string()).await;
        assert_modern_error(
            &answer,
            400,
            -32600,
            "Invalid Request: unsupported protocol version",
            &json!(31),
        );
        let data = &answer.json()["error"]["data"];
        assert_eq!(data["supported"], json!(["2025-11-25"]));
        assert_eq!(data["requested"], requested);
    }
    // The legacy exchange is untouched.
    let answer = h
        .post("/mcp/core", &rpc(json!(32), "tools/list", Value::Null), &[])
        .await;
    assert_eq!(answer.status, 200);
}

#[test]
fn n5_a_version_list_without_a_legacy_version_is_a_configuration_error() {
    let lookup =
        |name: &str| (name == "MCP_SUPPORTED_PROTOCOL_VERSIONS").then(|| MODERN.to_string());
    let error = Config::from_env_with(Config::fixed_defaults(), lookup).unwrap_err();
    assert_eq!(error.variable, "MCP_SUPPORTED_PROTOCOL_VERSIONS");
    assert_eq!(
        error.reason,
        "must name a version of the legacy era (2025-11-25)"
    );
    let lookup =
        |name: &str| (name == "MCP_SUPPORTED_PROTOCOL_VERSIONS").then(|| "2025-11-25".to_string());
    let config = Config::from_env_with(Config::fixed_defaults(), lookup).unwrap();
    assert_eq!(
        config.supported_protocol_versions,
        vec![ProtocolVersion::V2025_11_25]
    );
    let lookup = |name: &str| (name == "MCP_LIST_TTL_MS").then(|| "60000".to_string());
    assert_eq!(
        Config::from_env_with(Config::fixed_defaults(), lookup)
            .unwrap()
            .list_ttl_ms,
        60_000
    );
    let lookup = |name: &str| (name == "MCP_LIST_TTL_MS").then(|| "-1".to_string());
    let error = Config::from_env_with(Config::fixed_defaults(), lookup).unwrap_err();
    assert_eq!(error.variable, "MCP_LIST_TTL_MS");
}
