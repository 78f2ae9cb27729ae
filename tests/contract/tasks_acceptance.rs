//! How the gateway takes a Tool Service's `202 Accepted` and polls its work (CONTRACT K2, K8):
//! the acceptance is read by its status and `Location` alone, whatever its body; an empty
//! `Location` is no status location; the gateway's own polling reads the status at least once
//! however long `pollIntervalMs` is, and never more often than every 100 ms. The Tool Service
//! is a real HTTP server on loopback (wiremock).

use std::sync::Arc;

use gateway_tests::{Harness, manifest};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::tasks::TaskKeys;
use mcp_gateway::{Config, Gateway};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::tasks::{create_task, key, requests_to, with_task_tools};

/// The route of `tasks.rs`, its `deploy` tool (required) given `pollIntervalMs` and
/// `timeoutMs`.
async fn harness_with_deploy(poll_interval_ms: u64, timeout_ms: u64) -> Harness {
    let tool_service = MockServer::start().await;
    let mut document = manifest(&tool_service.uri());
    with_task_tools(&mut document, &tool_service.uri(), 3_600_000);
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    let deploy = tools.iter_mut().find(|t| t["name"] == "deploy").unwrap();
    deploy["_meta"]["task"]["pollIntervalMs"] = json!(poll_interval_ms);
    deploy["_meta"]["timeoutMs"] = json!(timeout_ms);
    let snapshot = compile_manifest(&document).expect("test manifest compiles");
    let gateway = Gateway::new(
        Config::fixed_defaults(),
        Ok(snapshot),
        HttpInvoker::new().expect("client"),
    )
    .with_task_keys(TaskKeys::parse(&key(1)).expect("keys"));
    Harness {
        gateway: Arc::new(gateway),
        tool_service,
    }
}

async fn accept_with(h: &Harness, tool_path: &str, template: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(tool_path))
        .respond_with(template)
        .mount(&h.tool_service)
        .await;
}

/// `POST <tool_path>` answers `202 Accepted` with `Location: /jobs/1`.
async fn accept_to_job(h: &Harness, tool_path: &str) {
    let accepted = ResponseTemplate::new(202).insert_header("location", "/jobs/1");
    accept_with(h, tool_path, accepted).await;
}

async fn status_is(h: &Harness, document: serde_json::Value) {
    Mock::given(method("GET"))
        .and(path("/jobs/1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(document))
        .mount(&h.tool_service)
        .await;
}

/// A web framework's default `202`: an HTML page, an octet stream, or a body larger than
/// `MCP_MAX_TOOL_RESPONSE_BYTES` (4 MiB here). None of them loses the task.
fn acceptances() -> Vec<(&'static str, ResponseTemplate)> {
    let accepted = || ResponseTemplate::new(202).insert_header("location", "/jobs/1");
    vec![
        (
            "text/html",
            accepted().set_body_raw("<html><body>Accepted</body></html>", "text/html"),
        ),
        (
            "application/octet-stream",
            accepted().set_body_raw(vec![0_u8, 159, 146, 150], "application/octet-stream"),
        ),
        (
            "over the limit",
            accepted().set_body_raw(vec![b' '; 5 * 1024 * 1024], "application/json"),
        ),
    ]
}

#[tokio::test]
async fn k2_a_202_is_taken_by_its_location_whatever_its_body() {
    for (what, template) in acceptances() {
        let h = harness_with_deploy(50, 1_500).await;
        accept_with(&h, "/export", template).await;
        let (answer, task_id) = create_task(&h, &[]).await;
        let body = answer.json();
        assert_eq!(body["result"]["resultType"], "task", "{what}: {body}");
        assert!(task_id.starts_with("t1."), "{what}: {body}");
    }
}

#[tokio::test]
async fn k8_a_legacy_call_polls_a_202_whatever_its_body() {
    for (what, template) in acceptances() {
        let h = harness_with_deploy(50, 1_500).await;
        accept_with(&h, "/deploy", template).await;
        status_is(
            &h,
            json!({"status": "succeeded", "result": {"deployed": true}}),
        )
        .await;
        let answer = h.call_tool("deploy", json!({})).await;
        let body = answer.json();
        assert_eq!(body["result"]["isError"], false, "{what}: {body}");
        assert_eq!(body["result"]["content"][0]["text"], r#"{"deployed":true}"#);
    }
}

#[tokio::test]
async fn k2_an_empty_location_is_no_status_location() {
    for location in ["", "   "] {
        let h = harness_with_deploy(50, 1_500).await;
        accept_with(
            &h,
            "/export",
            ResponseTemplate::new(202).insert_header("location", location),
        )
        .await;
        let (answer, task_id) = create_task(&h, &[]).await;
        assert!(task_id.is_empty(), "{location:?}");
        let result = &answer.json()["result"];
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            "Tool Service answered 202 Accepted without a status Location on the tool \
             endpoint's origin; nothing was requested there"
        );
        assert_eq!(requests_to(&h, "GET", "/export").await, 0);
    }
}

/// A `pollIntervalMs` longer than the tool's whole timeout still reads the status before the
/// gateway gives the work up.
#[tokio::test]
async fn k8_an_interval_longer_than_the_timeout_still_reads_the_status() {
    let h = harness_with_deploy(3_600_000, 1_000).await;
    accept_to_job(&h, "/deploy").await;
    status_is(
        &h,
        json!({"status": "succeeded", "result": {"deployed": true}}),
    )
    .await;
    let answer = h.call_tool("deploy", json!({})).await;
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(requests_to(&h, "GET", "/jobs/1").await, 1);
    assert_eq!(requests_to(&h, "DELETE", "/jobs/1").await, 0);
}

/// `pollIntervalMs: 1` is a hint for clients; the gateway's own polling waits at least
/// 100 ms between reads, so a 1,000 ms timeout reads the status at most 10 times plus the
/// halvings of its last interval.
#[tokio::test]
async fn k8_the_gateways_polling_waits_at_least_100_ms_between_reads() {
    let h = harness_with_deploy(1, 1_000).await;
    accept_to_job(&h, "/deploy").await;
    status_is(&h, json!({"status": "running"})).await;
    Mock::given(method("DELETE"))
        .and(path("/jobs/1"))
        .respond_with(ResponseTemplate::new(202))
        .mount(&h.tool_service)
        .await;
    let answer = h.call_tool("deploy", json!({})).await;
    let body = answer.json();
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Tool Service did not finish the work within 1000 ms; the gateway asked it to stop"
    );
    let reads = requests_to(&h, "GET", "/jobs/1").await;
    assert!((1..=10).contains(&reads), "{reads} status reads");
    assert_eq!(requests_to(&h, "DELETE", "/jobs/1").await, 1);
}
