//! The tasks extension over asynchronous Tool Services (CONTRACT K1–K8): `Prefer:
//! respond-async`, the `202` turned into a `CreateTaskResult`, `tasks/get`, `tasks/cancel` and
//! `tasks/update` answered by asking the status location, sealed task ids refused when
//! changed, made up, expired or another caller's, the other-origin `Location`, the routing
//! header and capability checks, and the clients that did not declare the extension. The Tool
//! Service is a real HTTP server on loopback (wiremock); the sample asynchronous service and
//! two processes sharing a key are in `functions/mcp-local/tests/tasks.rs`.

use std::sync::Arc;

use base64::Engine as _;
use gateway_tests::auth::{T0, fresh_store};
use gateway_tests::{Answer, Harness, manifest, request, rpc};
use mcp_gateway::auth::{AuthMode, Authenticator, NewDelegation, PersonalToken};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::tasks::TaskKeys;
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MODERN: &str = "2026-07-28";
const EXTENSION: &str = "io.modelcontextprotocol/tasks";

pub(super) fn key(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

/// Task tools on route `core`: `export_report` (optional, POST /export, pollIntervalMs 50)
/// and `deploy` (required, POST /deploy, timeoutMs 1500, pollIntervalMs 50).
pub(super) fn with_task_tools(document: &mut Value, tool_service: &str, ttl_ms: u64) {
    let tool = |name: &str, path: &str, task: Value, timeout: u64| {
        json!({
            "name": name,
            "description": format!("Long work: {name}"),
            "inputSchema": {"type": "object", "properties": {"rows": {"type": "integer"}}},
            "_meta": {"version": "1.0.0", "endpoint": format!("{tool_service}{path}"),
                      "timeoutMs": timeout, "task": task}
        })
    };
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    tools.push(tool(
        "export_report",
        "/export",
        json!({"support": "optional", "ttlMs": ttl_ms, "pollIntervalMs": 50}),
        2_000,
    ));
    tools.push(tool(
        "deploy",
        "/deploy",
        json!({"support": "required", "pollIntervalMs": 50}),
        1_500,
    ));
}

async fn gateway_over(auth: Option<Authenticator>, keys: &str, ttl_ms: u64) -> Harness {
    gateway_at(MockServer::start().await, auth, keys, ttl_ms)
}

fn gateway_at(
    tool_service: MockServer,
    auth: Option<Authenticator>,
    keys: &str,
    ttl_ms: u64,
) -> Harness {
    let mut document = manifest(&tool_service.uri());
    with_task_tools(&mut document, &tool_service.uri(), ttl_ms);
    let snapshot = compile_manifest(&document).expect("test manifest compiles");
    let mut gateway = Gateway::new(
        Config::fixed_defaults(),
        Ok(snapshot),
        HttpInvoker::new().expect("client"),
    )
    .with_task_keys(TaskKeys::parse(keys).expect("keys"));
    if let Some(auth) = auth {
        gateway = gateway.with_auth(auth);
    }
    Harness {
        gateway: Arc::new(gateway),
        tool_service,
    }
}

async fn harness() -> Harness {
    gateway_over(None, &key(1), 3_600_000).await
}

/// The envelope of a modern request, declaring the extension or not.
fn meta(declared: bool) -> Value {
    let extensions = if declared {
        json!({EXTENSION: {}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
    })
}

/// Sends a conforming modern request: `Mcp-Name` is `params.name` or `params.taskId`.
pub(super) async fn modern(
    h: &Harness,
    method_name: &str,
    mut params: Value,
    declared: bool,
    extra: &[(&str, &str)],
) -> Answer {
    params["_meta"] = meta(declared);
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", method_name),
    ];
    if let Some(name) = name.as_deref() {
        headers.push(("mcp-name", name));
    }
    headers.extend_from_slice(extra);
    let body = rpc(json!(7), method_name, params);
    h.send(request("POST", "/mcp/core", &headers, body.to_string()))
        .await
}

pub(super) async fn create_task(h: &Harness, extra: &[(&str, &str)]) -> (Answer, String) {
    let answer = modern(
        h,
        "tools/call",
        json!({"name": "export_report", "arguments": {"rows": 3}}),
        true,
        extra,
    )
    .await;
    let task_id = answer.json()["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (answer, task_id)
}

pub(super) async fn accept_at(h: &Harness, tool_path: &str, location: &str) {
    Mock::given(method("POST"))
        .and(path(tool_path))
        .and(header("prefer", "respond-async"))
        .respond_with(
            ResponseTemplate::new(202)
                .insert_header("location", location)
                .set_body_json(json!({"status": "running"})),
        )
        .mount(&h.tool_service)
        .await;
}

async fn status_answers(h: &Harness, template: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path("/jobs/1"))
        .respond_with(template)
        .mount(&h.tool_service)
        .await;
}

pub(super) async fn requests_to(h: &Harness, method_name: &str, at: &str) -> usize {
    h.tool_service
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.method.as_str() == method_name && r.url.path() == at)
        .count()
}

#[tokio::test]
async fn k4_a_declaring_call_answered_202_returns_a_create_task_result() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (answer, task_id) = create_task(&h, &[]).await;
    assert_eq!(answer.status.as_u16(), 200);
    let result = &answer.json()["result"];
    assert_eq!(result["resultType"], "task", "{result}");
    assert_eq!(result["status"], "working");
    assert!(task_id.starts_with("t1."), "{result}");
    assert!(!task_id.contains("jobs"), "the id reveals nothing");
    assert_eq!(result["ttlMs"], 3_600_000);
    assert_eq!(result["pollIntervalMs"], 50);
    assert_eq!(result["createdAt"], result["lastUpdatedAt"]);
    assert!(result["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "core-tools"
    );
    assert!(result.get("content").is_none(), "{result}");
}

#[tokio::test]
async fn k5_discover_offers_the_extension_only_where_a_task_tool_is() {
    let h = harness().await;
    let answer = modern(&h, "server/discover", json!({}), false, &[]).await;
    assert_eq!(
        answer.json()["result"]["capabilities"]["extensions"],
        json!({EXTENSION: {}})
    );
    let plain = Harness::fixed().await;
    let answer = modern(&plain, "server/discover", json!({}), false, &[]).await;
    assert!(
        answer.json()["result"]["capabilities"]
            .get("extensions")
            .is_none()
    );
}

#[tokio::test]
async fn k6_tasks_get_reads_the_status_location_once_per_request() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    status_answers(
        &h,
        ResponseTemplate::new(200)
            .set_body_json(json!({"status": "running", "message": "40% done"})),
    )
    .await;
    let answer = modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[]).await;
    let result = &answer.json()["result"];
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["taskId"], task_id.as_str());
    assert_eq!(result["status"], "working");
    assert_eq!(result["statusMessage"], "40% done");
    assert_eq!(result["pollIntervalMs"], 50);
    assert!(result.get("result").is_none());
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 1);

    h.tool_service.reset().await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_raw(
            r#"{"status":"succeeded","result":{"rows": 3, "total": 12345678901234567890}}"#,
            "application/json",
        ),
    )
    .await;
    let answer = modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[]).await;
    let result = &answer.json()["result"];
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["result"]["isError"], false);
    assert_eq!(
        result["result"]["content"][0]["text"], r#"{"rows":3,"total":12345678901234567890}"#,
        "X5: the value as a synchronous body, number text kept"
    );
}

#[tokio::test]
async fn k6_failed_and_canceled_work_and_gone_tasks() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    status_answers(
        &h,
        ResponseTemplate::new(200)
            .set_body_json(json!({"status": "failed", "error": {"message": "disk full"}})),
    )
    .await;
    let result = modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .json()["result"]
        .clone();
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["statusMessage"], "disk full");
    assert_eq!(result["result"]["isError"], true);
    assert_eq!(
        result["result"]["content"][0]["text"],
        "Tool Service reported the work as failed: disk full"
    );

    // A JSON-RPC error of the work: a failed task with the error, no result.
    h.tool_service.reset().await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(
            json!({"status": "failed", "error": {"code": -32603, "message": "lost the worker"}}),
        ),
    )
    .await;
    let result = modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .json()["result"]
        .clone();
    assert_eq!(result["status"], "failed", "{result}");
    assert_eq!(
        result["error"],
        json!({"code": -32603, "message": "lost the worker"})
    );
    assert_eq!(result["statusMessage"], "lost the worker");
    assert!(result.get("result").is_none(), "{result}");

    h.tool_service.reset().await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(json!({"status": "canceled"})),
    )
    .await;
    let result = modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .json()["result"]
        .clone();
    assert_eq!(result["status"], "cancelled", "{result}");

    for gone in [404, 410] {
        h.tool_service.reset().await;
        status_answers(&h, ResponseTemplate::new(gone)).await;
        modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
            .await
            .assert_rpc_error(-32602, "Invalid params: unknown task", &json!(7));
    }

    h.tool_service.reset().await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_raw("<html>", "text/html"),
    )
    .await;
    modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .assert_rpc_error(
            -32603,
            "Internal error: the task's status could not be read: Tool Service answered with \
             content type 'text/html', which is neither JSON nor plain text",
            &json!(7),
        );
}

#[tokio::test]
async fn k6_changed_made_up_and_foreign_ids_are_one_unknown_task_and_ask_nothing() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(json!({"status": "running"})),
    )
    .await;
    let mut changed = task_id.clone().into_bytes();
    let last = changed.len() - 5;
    changed[last] = if changed[last] == b'A' { b'B' } else { b'A' };
    let changed = String::from_utf8(changed).unwrap();
    let foreign = TaskKeys::parse(&key(9))
        .unwrap()
        .seal(&mcp_gateway::tasks::TaskClaims {
            route: "core".into(),
            tool: "export_report".into(),
            location: format!("{}/jobs/1", h.tool_service.uri()),
            caller: String::new(),
            created_ms: mcp_gateway::tasks::now_ms(),
            ttl_ms: 60_000,
        })
        .unwrap();
    for id in [
        changed.as_str(),
        "786512e2-9e0d-44bd-8f29-789f320fe840",
        "t1.",
        &foreign,
    ] {
        for method_name in ["tasks/get", "tasks/cancel", "tasks/update"] {
            modern(
                &h,
                method_name,
                json!({"taskId": id, "inputResponses": {}}),
                true,
                &[],
            )
            .await
            .assert_rpc_error(-32602, "Invalid params: unknown task", &json!(7));
        }
    }
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 0);
    assert_eq!(requests_to(&h, "DELETE", "/jobs/1").await, 0);
}

#[tokio::test]
async fn k6_an_expired_task_is_unknown() {
    let h = gateway_over(None, &key(1), 1).await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .assert_rpc_error(-32602, "Invalid params: unknown task", &json!(7));
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 0);
}

#[tokio::test]
async fn k3_a_rotated_key_set_continues_tasks_of_the_old_key() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(json!({"status": "running"})),
    )
    .await;
    // Another instance whose key set puts a new key first and keeps the old one.
    let Harness { tool_service, .. } = h;
    let rotated = gateway_at(
        tool_service,
        None,
        &format!("{},{}", key(2), key(1)),
        3_600_000,
    );
    let answer = modern(&rotated, "tasks/get", json!({"taskId": task_id}), true, &[]).await;
    assert_eq!(
        answer.json()["result"]["status"],
        "working",
        "{:?}",
        answer.json()
    );
    assert_eq!(requests_to(&rotated, "GET", "/jobs/1").await, 1);
    // Its new tasks are sealed with the new key: the old key alone does not open them.
    let (_, new_id) = create_task(&rotated, &[]).await;
    assert!(TaskKeys::parse(&key(1)).unwrap().open(&new_id).is_none());
    assert!(TaskKeys::parse(&key(2)).unwrap().open(&new_id).is_some());
}

#[tokio::test]
async fn k2_a_task_whose_tool_moved_to_another_host_is_unknown() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(json!({"status": "running"})),
    )
    .await;
    // The same key, a manifest whose tool now lives on another service.
    let moved = gateway_over(None, &key(1), 3_600_000).await;
    modern(&moved, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .assert_rpc_error(-32602, "Invalid params: unknown task", &json!(7));
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 0);
}

#[tokio::test]
async fn k7_cancel_sends_delete_and_is_acknowledged_update_is_acknowledged() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    Mock::given(method("DELETE"))
        .and(path("/jobs/1"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&h.tool_service)
        .await;
    let answer = modern(&h, "tasks/cancel", json!({"taskId": task_id}), true, &[]).await;
    let body = answer.json();
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    assert!(body["result"].get("taskId").is_none());
    assert_eq!(requests_to(&h, "DELETE", "/jobs/1").await, 1);
    let answer = modern(
        &h,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {"name": {"action": "accept"}}}),
        true,
        &[],
    )
    .await;
    assert_eq!(answer.json()["result"]["resultType"], "complete");
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 0);
}

#[tokio::test]
async fn k5_task_requests_need_the_routing_header_and_the_extension() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    // Mcp-Name differs from params.taskId.
    let mut params = json!({"taskId": task_id, "_meta": meta(true)});
    let body = rpc(json!(7), "tasks/get", params.take()).to_string();
    let base = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tasks/get"),
    ];
    let mut other = base.to_vec();
    other.push(("mcp-name", "t1.other"));
    let answer = h
        .send(request("POST", "/mcp/core", &other, body.clone()))
        .await;
    assert_eq!(answer.status.as_u16(), 400);
    assert_eq!(answer.json()["error"]["code"], -32020);
    assert_eq!(
        answer.json()["error"]["message"],
        "Header mismatch: Mcp-Name header does not match params.taskId"
    );
    let answer = h.send(request("POST", "/mcp/core", &base, body)).await;
    assert_eq!(answer.status.as_u16(), 400);
    assert_eq!(
        answer.json()["error"]["message"],
        "Header mismatch: Mcp-Name header is required"
    );
    // Not declared: -32021 with the capability it needs, HTTP 400.
    for method_name in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let answer = modern(&h, method_name, json!({"taskId": task_id}), false, &[]).await;
        assert_eq!(answer.status.as_u16(), 400, "{method_name}");
        let body = answer.json();
        assert_eq!(body["id"], 7);
        assert_eq!(body["error"]["code"], -32021, "{body}");
        assert_eq!(
            body["error"]["message"],
            "Missing required client capability"
        );
        assert_eq!(
            body["error"]["data"]["requiredCapabilities"],
            json!({"extensions": {EXTENSION: {}}})
        );
    }
    // tasks/list and tasks/result are not served (HTTP 404, -32601); legacy has no tasks.
    for method_name in ["tasks/list", "tasks/result"] {
        let answer = modern(&h, method_name, json!({"taskId": task_id}), true, &[]).await;
        assert_eq!(answer.status.as_u16(), 404);
        assert_eq!(answer.json()["error"]["code"], -32601);
    }
    h.post(
        "/mcp/core",
        &rpc(json!(7), "tasks/get", json!({"taskId": task_id})),
        &[],
    )
    .await
    .assert_rpc_error(-32601, "Method not found: tasks/get", &json!(7));
    let answer = modern(&h, "tasks/get", json!({}), true, &[]).await;
    answer.assert_rpc_error(-32602, "Invalid params: 'taskId' is required", &json!(7));
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 0);
}

#[tokio::test]
async fn k2_a_location_on_another_origin_is_refused_and_never_requested() {
    let h = harness().await;
    let elsewhere = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "running"})))
        .mount(&elsewhere)
        .await;
    let far = format!("{}/jobs/1", elsewhere.uri());
    let userinfo = h.tool_service.uri().replace("http://", "http://user:pw@") + "/jobs/1";
    for location in [
        far.as_str(),
        "//evil.example/jobs/1",
        "file:///etc/passwd",
        &userinfo,
    ] {
        h.tool_service.reset().await;
        accept_at(&h, "/export", location).await;
        let (answer, task_id) = create_task(&h, &[]).await;
        assert!(task_id.is_empty(), "{location}");
        let result = &answer.json()["result"];
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            "Tool Service answered 202 Accepted without a status Location on the tool \
             endpoint's origin; nothing was requested there"
        );
    }
    // A Location on the origin that percent-encoding makes longer than 2,048 bytes.
    h.tool_service.reset().await;
    let long = format!("/jobs/{}", "{".repeat(700));
    accept_at(&h, "/export", &long).await;
    let (answer, task_id) = create_task(&h, &[]).await;
    assert!(task_id.is_empty());
    assert_eq!(answer.json()["result"]["isError"], true);
    // No Location at all.
    h.tool_service.reset().await;
    Mock::given(path("/export"))
        .respond_with(ResponseTemplate::new(202))
        .mount(&h.tool_service)
        .await;
    let (answer, _) = create_task(&h, &[]).await;
    assert_eq!(answer.json()["result"]["isError"], true);
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn k8_clients_without_the_extension_get_plain_results() {
    let h = harness().await;
    Mock::given(path("/export"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"rows": 3})))
        .mount(&h.tool_service)
        .await;
    // A 2026-07-28 client that did not declare, and a 2025-11-25 client: no Prefer sent.
    let answer = modern(
        &h,
        "tools/call",
        json!({"name": "export_report", "arguments": {"rows": 3}}),
        false,
        &[],
    )
    .await;
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        r#"{"rows":3}"#
    );
    let answer = h.call_tool("export_report", json!({"rows": 3})).await;
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        r#"{"rows":3}"#
    );
    let sent = h.tool_service.received_requests().await.unwrap();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|r| !r.headers.contains_key("prefer")));

    // A required tool and a 2026-07-28 client that did not declare: -32021, nothing sent.
    let answer = modern(
        &h,
        "tools/call",
        json!({"name": "deploy", "arguments": {}}),
        false,
        &[],
    )
    .await;
    assert_eq!(answer.status.as_u16(), 400);
    assert_eq!(answer.json()["error"]["code"], -32021);
    assert_eq!(requests_to(&h, "POST", "/deploy").await, 0);
}

#[tokio::test]
async fn k8_a_legacy_call_of_a_required_tool_is_polled_to_its_result() {
    let h = harness().await;
    accept_at(&h, "/deploy", "/jobs/1").await;
    Mock::given(method("GET"))
        .and(path("/jobs/1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "running"})))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&h.tool_service)
        .await;
    status_answers(
        &h,
        ResponseTemplate::new(200)
            .set_body_json(json!({"status": "succeeded", "result": {"deployed": true}})),
    )
    .await;
    let answer = h.call_tool("deploy", json!({})).await;
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], r#"{"deployed":true}"#);
    assert!(body["result"].get("resultType").is_none(), "legacy result");
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 3);
    let sent = h.tool_service.received_requests().await.unwrap();
    assert_eq!(sent[0].headers.get("prefer").unwrap(), "respond-async");
}

#[tokio::test]
async fn k8_work_that_outlives_the_timeout_is_an_error_and_is_canceled() {
    let h = harness().await;
    accept_at(&h, "/deploy", "/jobs/1").await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(json!({"status": "running"})),
    )
    .await;
    Mock::given(method("DELETE"))
        .and(path("/jobs/1"))
        .respond_with(ResponseTemplate::new(202))
        .mount(&h.tool_service)
        .await;
    let answer = h.call_tool("deploy", json!({})).await;
    let body = answer.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Tool Service did not finish the work within 1500 ms; the gateway asked it to stop"
    );
    assert_eq!(requests_to(&h, "DELETE", "/jobs/1").await, 1);
    assert!(requests_to(&h, "GET", "/jobs/1").await >= 2);
}

#[tokio::test]
async fn k6_a_huge_status_document_is_refused_whole() {
    let h = harness().await;
    accept_at(&h, "/export", "/jobs/1").await;
    let (_, task_id) = create_task(&h, &[]).await;
    let huge = format!(
        r#"{{"status":"running","message":"{}"}}"#,
        "x".repeat(5 * 1024 * 1024)
    );
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_raw(huge, "application/json"),
    )
    .await;
    modern(&h, "tasks/get", json!({"taskId": task_id}), true, &[])
        .await
        .assert_rpc_error(
            -32603,
            "Internal error: the task's status could not be read: Tool Service response \
             exceeds 4194304 bytes",
            &json!(7),
        );
}

async fn token_for(store: &mcp_gateway::auth::DynamoStore) -> PersonalToken {
    let token = PersonalToken::generate().expect("random");
    store
        .put_delegation(&NewDelegation {
            key: token.store_key(),
            delegation_id: uuid::Uuid::new_v4().to_string(),
            routes: vec!["core".into()],
            idle_ttl_s: 3_600,
            expires_at: T0 + 86_400,
            created_at: T0,
            description: None,
            groups: Vec::new(),
        })
        .await
        .expect("delegation written");
    token
}

#[tokio::test]
async fn k3_another_callers_task_is_unknown_token_mode() {
    let store = fresh_store().await;
    let clock = gateway_tests::auth::ManualClock::at(T0);
    let auth = Authenticator::new(
        AuthMode::Token,
        None,
        Some(Box::new(store.clone())),
        None,
        None,
        clock.epoch_clock(),
    );
    let h = gateway_over(Some(auth), &key(1), 3_600_000).await;
    accept_at(&h, "/export", "/jobs/1").await;
    status_answers(
        &h,
        ResponseTemplate::new(200).set_body_json(json!({"status": "running"})),
    )
    .await;
    let alice = token_for(&store).await;
    let mallory = token_for(&store).await;
    let bearer = |t: &PersonalToken| format!("Bearer {}", t.expose());
    let alice_auth = bearer(&alice);
    let (answer, task_id) = create_task(&h, &[("authorization", alice_auth.as_str())]).await;
    assert_eq!(answer.json()["result"]["resultType"], "task");
    let mallory_auth = bearer(&mallory);
    for method_name in ["tasks/get", "tasks/cancel"] {
        modern(
            &h,
            method_name,
            json!({"taskId": task_id}),
            true,
            &[("authorization", mallory_auth.as_str())],
        )
        .await
        .assert_rpc_error(-32602, "Invalid params: unknown task", &json!(7));
    }
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 0);
    let answer = modern(
        &h,
        "tasks/get",
        json!({"taskId": task_id}),
        true,
        &[("authorization", alice_auth.as_str())],
    )
    .await;
    assert_eq!(answer.json()["result"]["status"], "working");
}
