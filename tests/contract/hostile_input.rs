//! Hostile input through the real service, property-based (CONTRACT H1–H8, E1–E5, P3–P8, C4,
//! C5, X1, X2): arbitrary bodies, header sets, paths and methods never panic the gateway, always
//! get a well-formed HTTP answer, every JSON-RPC answer is a valid response echoing the right id,
//! and no malformed request ever reaches a Tool Service.
//!
//! `PROPTEST_CASES` sets the case count (default [`DEFAULT_CASES`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use gateway_tests::Harness;
use http::{Request, StatusCode};
use mcp_gateway::{Config, InvocationContext, RequestBody};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};

/// Cases per run when `PROPTEST_CASES` is unset.
const DEFAULT_CASES: u32 = 10_000;
/// `MCP_MAX_REQUEST_BYTES` of the hardened deployment.
const SMALL_BODY_LIMIT: usize = 300;
const ALLOWED_ORIGIN: &str = "https://agent.example";

/// The deployments under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deployment {
    /// `/mcp/core`, default policy.
    Fixed,
    /// `/mcp/{routeKey}`, default policy.
    Dynamic,
    /// `/mcp/core` with allowed origins and hosts and a 300-byte body limit.
    Hardened,
}

/// One generated request.
#[derive(Debug, Clone)]
struct Case {
    deployment: Deployment,
    method: String,
    path: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    /// The adapter stopped reading at the body limit.
    too_large: bool,
}

fn header_value_bytes() -> impl Strategy<Value = Vec<u8>> {
    // Every byte a header value may hold: tab, visible ASCII, space, obs-text.
    let byte = prop_oneof![
        8 => 0x20_u8..0x7f,
        1 => Just(b'\t'),
        1 => 0x80_u8..=0xff,
    ];
    prop::collection::vec(byte, 0..48)
}

fn header_value(name: &'static str) -> BoxedStrategy<Vec<u8>> {
    let meaningful: Vec<&'static str> = match name {
        "content-type" => vec![
            "application/json",
            "application/json; charset=utf-8",
            "application/json-rpc",
            "text/plain",
            "",
            "application/jsonx",
        ],
        "accept" => vec![
            "application/json, text/event-stream",
            "application/json",
            "*/*",
            "text/event-stream",
            "text/html",
            "application/*",
        ],
        "mcp-protocol-version" => vec!["2025-11-25", "2025-06-18", "2025-11-25 ", "", "2024-11-05"],
        "origin" => vec![ALLOWED_ORIGIN, "https://evil.example", "null", ""],
        "host" => vec![
            "localhost",
            "localhost:3000",
            "evil.example",
            "127.0.0.1",
            "",
        ],
        "guid" => vec!["4f1c2a9e-8b7d-4e6f-a5c4-3b2a1f0e9d8c", "not-a-guid", ""],
        "x-request-id" | "mcp-session-id" => vec!["req-1", "a b", "", "x/y:z@w"],
        "employee-no" | "virtual-employee-no" => vec!["ENC(AbC+/==)", "with space", ""],
        _ => vec!["1", ""],
    };
    prop_oneof![
        3 => prop::sample::select(meaningful).prop_map(|v| v.as_bytes().to_vec()),
        1 => header_value_bytes(),
    ]
    .boxed()
}

fn headers() -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    const NAMES: [&str; 13] = [
        "content-type",
        "accept",
        "mcp-protocol-version",
        "origin",
        "host",
        "guid",
        "x-request-id",
        "mcp-session-id",
        "employee-no",
        "virtual-employee-no",
        "last-event-id",
        "authorization",
        "x-forwarded-for",
    ];
    let named = prop::sample::select(NAMES.to_vec())
        .prop_flat_map(|name| (Just(name.to_string()), header_value(name)));
    let random_name =
        "[a-z][a-z0-9-]{0,15}".prop_flat_map(|name| (Just(name), header_value_bytes()));
    // Usually the headers a client sends, then random extra, duplicate or broken ones.
    let base = prop::bool::weighted(0.8).prop_map(|usual| {
        if usual {
            vec![
                ("content-type".to_string(), b"application/json".to_vec()),
                (
                    "accept".to_string(),
                    b"application/json, text/event-stream".to_vec(),
                ),
                ("mcp-protocol-version".to_string(), b"2025-11-25".to_vec()),
                ("host".to_string(), b"localhost:3000".to_vec()),
            ]
        } else {
            Vec::new()
        }
    });
    let extra = prop::collection::vec(prop_oneof![4 => named, 1 => random_name], 0..4);
    (base, extra, any::<prop::sample::Index>()).prop_map(|(mut base, extra, drop)| {
        if !base.is_empty() && extra.len() == 3 {
            base.remove(drop.index(base.len()));
        }
        base.extend(extra);
        base
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6_f64..1e6).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn rpc_id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => any::<i64>().prop_map(|n| Some(json!(n))),
        1 => Just(Some(json!(u64::MAX))),
        3 => ".{0,10}".prop_map(|s| Some(Value::String(s))),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!(1.5))),
        1 => Just(Some(json!(true))),
        1 => Just(Some(json!({"a": 1}))),
        2 => Just(None),
    ]
}

fn tool_arguments() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        3 => ".{0,20}".prop_map(|q| Some(json!({"query": q}))),
        1 => (".{1,10}", 0_i64..80).prop_map(|(q, n)| Some(json!({"query": q, "limit": n}))),
        1 => Just(Some(json!({}))),
        1 => Just(None),
        1 => json_value().prop_map(Some),
    ]
}

/// A well-formed `tools/call` of `search_documents` or `failing_tool`.
fn valid_tool_call() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            any::<i64>().prop_map(Value::from),
            "[a-z0-9-]{0,10}".prop_map(Value::String)
        ],
        prop::bool::weighted(0.8),
        "[a-z가-힣 ]{1,12}",
    )
        .prop_map(|(id, search, query)| {
            let params = if search {
                json!({"name": "search_documents", "arguments": {"query": query}})
            } else {
                json!({"name": "failing_tool"})
            };
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
        })
}

fn rpc_message() -> impl Strategy<Value = Value> {
    prop_oneof![2 => valid_tool_call(), 3 => any_rpc_message()]
}

fn any_rpc_message() -> impl Strategy<Value = Value> {
    let method = prop_oneof![
        6 => Just(json!("tools/call")),
        1 => Just(json!("tools/list")),
        1 => Just(json!("initialize")),
        1 => Just(json!("ping")),
        1 => Just(json!("notifications/initialized")),
        1 => ".{0,16}".prop_map(Value::String),
        1 => json_value(),
    ];
    let tool = prop_oneof![
        5 => Just(json!("search_documents")),
        1 => Just(json!("failing_tool")),
        1 => Just(json!("put_tool")),
        1 => Just(json!("versioned")),
        1 => Just(json!("leave_balance")),
        1 => ".{0,12}".prop_map(Value::String),
        1 => json_value(),
    ];
    let params = prop_oneof![
        6 => (tool, tool_arguments()).prop_map(|(name, arguments)| {
            let mut params = json!({"name": name});
            if let Some(arguments) = arguments {
                params["arguments"] = arguments;
            }
            Some(params)
        }),
        1 => Just(None),
        1 => json_value().prop_map(Some),
    ];
    let jsonrpc = prop_oneof![
        10 => Just(Some(json!("2.0"))),
        1 => Just(Some(json!("1.0"))),
        1 => Just(Some(json!(2.0))),
        1 => Just(None),
    ];
    (
        jsonrpc,
        rpc_id(),
        method,
        params,
        prop::option::of(("[a-z]{1,6}", json_value())),
    )
        .prop_map(|(jsonrpc, id, method, params, extra)| {
            let mut object = Map::new();
            if let Some(v) = jsonrpc {
                object.insert("jsonrpc".into(), v);
            }
            if let Some(v) = id {
                object.insert("id".into(), v);
            }
            object.insert("method".into(), method);
            if let Some(v) = params {
                object.insert("params".into(), v);
            }
            if let Some((k, v)) = extra {
                object.insert(k, v);
            }
            Value::Object(object)
        })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        10 => rpc_message().prop_map(|m| m.to_string().into_bytes()),
        1 => json_value().prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(rpc_message(), 0..3)
            .prop_map(|batch| Value::Array(batch).to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..256),
        // A valid message cut short, or with garbage appended.
        1 => (rpc_message(), any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 0..4))
            .prop_map(|(m, cut, tail)| {
                let mut bytes = m.to_string().into_bytes();
                bytes.truncate(cut.index(bytes.len() + 1));
                bytes.extend(tail);
                bytes
            }),
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => Just("/mcp/core".to_string()),
        1 => Just("/mcp/core/".to_string()),
        2 => Just("/mcp/hr".to_string()),
        1 => Just("/mcp".to_string()),
        1 => "/mcp/[A-Za-z0-9._~%:@!$&'()*+,;=-]{0,70}".prop_map(String::from),
        1 => "/[A-Za-z0-9._~%/-]{0,30}(\\?[a-z=&]{0,10})?".prop_map(String::from),
        1 => Just("/mcp/core//".to_string()),
        1 => Just("/mcp/../mcp/core".to_string()),
    ]
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => Just("POST".to_string()),
        1 => prop::sample::select(vec!["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "post", "TRACE"])
            .prop_map(String::from),
        1 => "[A-Z]{1,10}".prop_map(String::from),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![
            Deployment::Fixed,
            Deployment::Dynamic,
            Deployment::Hardened,
        ]),
        method(),
        path(),
        headers(),
        body(),
        prop::bool::weighted(0.02),
    )
        .prop_map(
            |(deployment, method, path, headers, body, too_large)| Case {
                deployment,
                method,
                path,
                headers,
                body,
                too_large,
            },
        )
}

/// The request, or `None` when `http` itself refuses the method, path or a header (no client
/// could send it).
fn build(case: &Case) -> Option<Request<RequestBody>> {
    let mut builder = Request::builder()
        .method(case.method.as_str())
        .uri(case.path.as_str());
    for (name, value) in &case.headers {
        builder = builder.header(name.as_str(), value.as_slice());
    }
    let body = if case.too_large {
        RequestBody::TooLarge
    } else {
        RequestBody::Full(Bytes::from(case.body.clone()))
    };
    builder.body(body).ok()
}

/// The request id a valid JSON-RPC request carries, as CONTRACT E2 reads it.
fn wire_id(message: &Map<String, Value>) -> Option<&Value> {
    message
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

fn header<'a>(case: &'a Case, name: &str) -> Vec<&'a [u8]> {
    case.headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
        .collect()
}

/// A caller-header rule: whether a header value is acceptable.
type Rule<'a> = &'a dyn Fn(&[u8]) -> bool;

/// What a request must look like for the gateway to call a Tool Service with it: the
/// reference reading of CONTRACT H, P, E and X1/X2, independent of the gateway's code. Returns
/// the tool's `arguments` when the request qualifies.
fn qualifying_arguments(case: &Case) -> Result<Value, String> {
    if case.method != "POST" {
        return Err("not POST".into());
    }
    if case.too_large {
        return Err("body over the limit".into());
    }
    let path = case.path.split('?').next().unwrap_or_default();
    let path = path.strip_suffix('/').unwrap_or(path);
    let route_tools: &[&str] = match (case.deployment, path) {
        (Deployment::Fixed | Deployment::Hardened | Deployment::Dynamic, "/mcp/core") => {
            &["search_documents", "failing_tool", "slow_tool", "put_tool"]
        }
        (Deployment::Dynamic, "/mcp/hr") => &["leave_balance"],
        _ => return Err(format!("path {path} serves no tools")),
    };
    let origins = header(case, "origin");
    if case.deployment == Deployment::Hardened {
        if origins.iter().any(|o| *o != ALLOWED_ORIGIN.as_bytes()) {
            return Err("origin not allowed".into());
        }
        if case.body.len() > SMALL_BODY_LIMIT {
            return Err("body over the limit".into());
        }
    } else if !origins.is_empty() {
        return Err("an Origin on a deployment that allows none".into());
    }
    if case.deployment == Deployment::Hardened {
        let hosts = header(case, "host");
        let host = hosts
            .first()
            .map(|h| String::from_utf8_lossy(h).to_ascii_lowercase());
        let name = host
            .as_deref()
            .map(|h| h.split(':').next().unwrap_or_default());
        if hosts.len() != 1 || !matches!(name, Some("localhost" | "127.0.0.1")) {
            return Err("host not allowed".into());
        }
    }
    if header(case, "mcp-protocol-version") != [b"2025-11-25".as_slice()] {
        return Err("no exact protocol version".into());
    }
    for content_type in header(case, "content-type") {
        let text = String::from_utf8_lossy(content_type).to_ascii_lowercase();
        let essence = text
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        if !matches!(
            essence.as_str(),
            "" | "application/json" | "application/json-rpc"
        ) {
            return Err("not a JSON content type".into());
        }
    }
    let safe = |v: &[u8]| {
        (1..=128).contains(&v.len())
            && v.iter()
                .all(|b| b.is_ascii_alphanumeric() || b"._~:/+=@-".contains(b))
    };
    let opaque =
        |v: &[u8]| (1..=2048).contains(&v.len()) && v.iter().all(|b| (0x21..=0x7e).contains(b));
    let guid = |v: &[u8]| std::str::from_utf8(v).is_ok_and(|g| uuid::Uuid::try_parse(g).is_ok());
    let rules: [(&str, Rule<'_>); 5] = [
        ("guid", &guid),
        ("x-request-id", &safe),
        ("mcp-session-id", &safe),
        ("employee-no", &opaque),
        ("virtual-employee-no", &opaque),
    ];
    for (name, rule) in rules {
        let values = header(case, name);
        if values.len() > 1 || values.first().is_some_and(|v| !rule(v)) {
            return Err(format!("malformed caller header {name}"));
        }
    }
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(&case.body) else {
        return Err("body is not a JSON object".into());
    };
    if message.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("not JSON-RPC 2.0".into());
    }
    if wire_id(&message).is_none() || message.get("method") != Some(&json!("tools/call")) {
        return Err("not a tools/call request".into());
    }
    let Some(Value::Object(params)) = message.get("params") else {
        return Err("params is not an object".into());
    };
    let Some(Value::String(name)) = params.get("name") else {
        return Err("name is not a string".into());
    };
    if !route_tools.contains(&name.as_str()) {
        return Err(format!("'{name}' is no active tool of the route"));
    }
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    if !arguments.is_object() {
        return Err("arguments is not an object".into());
    }
    if name == "search_documents" {
        let query_ok = arguments["query"].as_str().is_some_and(|q| !q.is_empty());
        let limit_ok = arguments
            .get("limit")
            .is_none_or(|l| l.as_i64().is_some_and(|n| (1..=50).contains(&n)));
        if !query_ok || !limit_ok {
            return Err("arguments break the inputSchema".into());
        }
    }
    Ok(arguments)
}

/// Runs one case through the service and checks every property.
async fn check(harness: &Harness, case: &Case) -> Result<bool, TestCaseError> {
    let Some(request) = build(case) else {
        return Ok(false);
    };
    let before = harness
        .tool_service
        .received_requests()
        .await
        .unwrap_or_default();
    let response = harness
        .gateway
        .handle(request, InvocationContext::default())
        .await;
    let after = harness
        .tool_service
        .received_requests()
        .await
        .unwrap_or_default();
    if after.len() > 64 {
        // Keep the recorded requests few: every case reads them all.
        harness.tool_service.reset().await;
    }
    let (parts, body) = response.into_parts();

    // H8: correlation headers on every answer.
    let guid = parts.headers.get("guid").and_then(|v| v.to_str().ok());
    prop_assert!(
        guid.is_some_and(|g| uuid::Uuid::try_parse(g).is_ok()),
        "guid: {parts:?}"
    );
    prop_assert!(parts.headers.contains_key("x-request-id"), "{parts:?}");

    let status = parts.status;
    let json_body = || serde_json::from_slice::<Value>(&body);
    match status {
        StatusCode::ACCEPTED => prop_assert!(body.is_empty(), "202 has an empty body"),
        StatusCode::OK => {
            prop_assert_eq!(
                parts
                    .headers
                    .get("content-type")
                    .map(http::HeaderValue::as_bytes),
                Some(b"application/json".as_slice())
            );
            let answer = json_body().map_err(|e| TestCaseError::fail(format!("200 body: {e}")))?;
            prop_assert_eq!(&answer["jsonrpc"], "2.0", "{}", answer);
            let has_result = answer.get("result").is_some();
            let has_error = answer.get("error").is_some();
            prop_assert!(
                has_result != has_error,
                "exactly one of result, error: {}",
                answer
            );
            if has_error {
                prop_assert!(answer["error"]["code"].is_i64(), "{}", answer);
                prop_assert!(answer["error"]["message"].is_string(), "{}", answer);
            }
            // E5, P8: the request's id, or null when none could be read.
            let request = serde_json::from_slice::<Value>(&case.body).ok();
            let sent_id = request
                .as_ref()
                .and_then(Value::as_object)
                .and_then(wire_id);
            match sent_id {
                Some(id) => prop_assert!(
                    answer["id"] == *id || (has_error && answer["id"].is_null()),
                    "id {} answered as {}",
                    id,
                    answer["id"]
                ),
                None => prop_assert!(answer["id"].is_null(), "no id sent: {}", answer),
            }
            if has_result {
                prop_assert_eq!(
                    Some(&answer["id"]),
                    sent_id,
                    "a result echoes the id exactly"
                );
            }
        }
        StatusCode::BAD_REQUEST
        | StatusCode::FORBIDDEN
        | StatusCode::NOT_FOUND
        | StatusCode::METHOD_NOT_ALLOWED
        | StatusCode::NOT_ACCEPTABLE
        | StatusCode::PAYLOAD_TOO_LARGE
        | StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            let answer =
                json_body().map_err(|e| TestCaseError::fail(format!("{status} body: {e}")))?;
            prop_assert!(answer.is_object(), "{}", answer);
            if status == StatusCode::FORBIDDEN {
                prop_assert!(answer["id"].is_null() && answer["error"]["code"] == -32600);
            }
            if status == StatusCode::METHOD_NOT_ALLOWED {
                prop_assert_eq!(
                    parts.headers.get("allow").map(http::HeaderValue::as_bytes),
                    Some(b"POST".as_slice())
                );
            }
        }
        other => prop_assert!(false, "unexpected status {other}"),
    }

    // No malformed request ever reaches a Tool Service.
    let calls = &after[before.len()..];
    prop_assert!(calls.len() <= 1, "one request, at most one call");
    let qualifying = qualifying_arguments(case);
    if let Some(call) = calls.first() {
        let arguments = qualifying.map_err(|why| {
            TestCaseError::fail(format!(
                "a request that reached the Tool Service is malformed: {why}"
            ))
        })?;
        let forwarded: Value = serde_json::from_slice(&call.body)
            .map_err(|e| TestCaseError::fail(format!("forwarded body: {e}")))?;
        prop_assert_eq!(
            forwarded,
            arguments,
            "the arguments are forwarded unchanged"
        );
        for name in [
            "origin",
            "authorization",
            "mcp-protocol-version",
            "last-event-id",
        ] {
            prop_assert!(
                !call.headers.contains_key(name),
                "{} is never forwarded",
                name
            );
        }
        return Ok(true);
    }
    Ok(false)
}

#[test]
fn hostile_requests_never_panic_always_get_well_formed_answers_and_never_reach_a_tool_service_malformed()
 {
    let cases = gateway_tests::proptest_cases(DEFAULT_CASES);
    let runtime = gateway_tests::two_worker_runtime();
    let (fixed, dynamic, hardened) = runtime.block_on(async {
        let mut hardened = Config::fixed_defaults();
        hardened.allowed_origins = vec![ALLOWED_ORIGIN.into()];
        hardened.allowed_hosts = Some(vec!["localhost".into(), "127.0.0.1".into()]);
        hardened.max_request_bytes = SMALL_BODY_LIMIT;
        (
            Harness::fixed().await,
            Harness::dynamic().await,
            Harness::with_config(hardened).await,
        )
    });
    let reached = AtomicUsize::new(0);
    let built = AtomicUsize::new(0);
    let mut runner = TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let result = runner.run(&case(), |case| {
        let harness = match case.deployment {
            Deployment::Fixed => &fixed,
            Deployment::Dynamic => &dynamic,
            Deployment::Hardened => &hardened,
        };
        if build(&case).is_some() {
            built.fetch_add(1, Ordering::Relaxed);
        }
        if runtime.block_on(check(harness, &case))? {
            reached.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    let reached = reached.load(Ordering::Relaxed);
    let built = built.load(Ordering::Relaxed);
    println!("hostile input: {cases} cases, {built} sent, {reached} reached a Tool Service");
    if let Err(failure) = result {
        panic!("{failure}");
    }
    // Not vacuous: a share of the generated requests were well-formed tool calls.
    assert!(
        reached * 50 >= built,
        "only {reached} of {built} reached a Tool Service"
    );
}

/// CONTRACT E2, E5, T2: a string id over 1,024 bytes is `-32600` with `id: null` in either era,
/// so no answer (a `tools/list` page, an error text) grows with the id past the response budget.
#[tokio::test]
async fn e2_t2_an_id_over_1024_bytes_is_invalid_and_never_echoed() {
    let h = Harness::fixed().await;
    let legacy: [(&str, &str); 0] = [];
    let long = "i".repeat(900_000);
    for method in ["tools/list", "ping", "tools/call"] {
        let body = gateway_tests::rpc(json!(long), method, json!({}));
        let answer = h.post("/mcp/core", &body, &legacy).await;
        answer.assert_rpc_error(
            -32600,
            "Invalid Request: 'id' must be at most 1024 bytes",
            &Value::Null,
        );
        assert!(answer.body.len() < 1024, "{}", answer.body.len());
    }
    // At the limit the id is echoed as sent.
    let at = "i".repeat(1024);
    let answer = h
        .post(
            "/mcp/core",
            &gateway_tests::rpc(json!(at), "ping", json!({})),
            &legacy,
        )
        .await;
    assert_eq!(answer.json()["id"], json!(at));
    // The modern era refuses it too (N2: HTTP 400), without the id.
    let mut modern = gateway_tests::rpc(json!(long), "tools/list", json!({}));
    modern["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let answer = h
        .send(gateway_tests::request(
            "POST",
            "/mcp/core",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2026-07-28"),
            ],
            modern.to_string(),
        ))
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["error"]["code"], -32600);
    assert_eq!(answer.json()["id"], Value::Null);
}
