//! The tasks extension (CONTRACT K) through rmcp, the official Rust MCP SDK: the real
//! `mcp-local` binary with the sample asynchronous Tool Service on loopback, and rmcp's
//! streamable HTTP client in `Auto` lifecycle mode (protocol revision 2026-07-28).
//!
//! - A client whose capabilities declare `io.modelcontextprotocol/tasks` (rmcp sends them in
//!   every request's `_meta`) calls the `optional` task tool `export_report` with
//!   `Peer::call_tool_once`, gets a `CreateTaskResult` (K4), and polls `Peer::get_task`
//!   (`tasks/get`, `Mcp-Name` = the task id, K5) every `pollIntervalMs` until the task is
//!   `completed` with the tool's result (K6).
//! - The same client without the declaration, and rmcp's legacy `serve()`, get a plain result
//!   for the same tool (K8).
//!
//! rmcp 3.11.0 has no client helper that drives a task to its end: `call_tool` answers a task
//! with `ServiceError::UnexpectedResponse`, so the polling loop is written here.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ExtensionCapabilities, GetTaskParams, JsonObject, ProtocolVersion, TASKS_EXTENSION_ID,
    TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use support::{LocalServer, free_port, task_manifest};

#[allow(
    dead_code,
    reason = "the support module serves every test binary of this crate"
)]
mod support;

const KEY: &str = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

type Client = RunningService<RoleClient, ClientConfig>;

/// A gateway serving the task manifest, with the sample asynchronous Tool Service.
fn gateway() -> (LocalServer, std::path::PathBuf) {
    let sample = format!("127.0.0.1:{}", free_port());
    let manifest = task_manifest(&format!("http://{sample}"));
    let source = format!("file:{}", manifest.display());
    let env = [
        ("MCP_REGISTRY_SOURCE", source.as_str()),
        ("MCP_TASK_KEY", "env:GATEWAY_TASK_KEY"),
        ("GATEWAY_TASK_KEY", KEY),
    ];
    let server = LocalServer::spawn(&["--sample-tool-service", &sample], &env);
    (server, manifest)
}

/// rmcp's client configuration, declaring the tasks extension or not.
fn config(declare_tasks: bool) -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    if declare_tasks {
        let mut extensions = ExtensionCapabilities::new();
        extensions.insert(TASKS_EXTENSION_ID.to_string(), JsonObject::new());
        capabilities.extensions = Some(extensions);
    }
    let mut config = ClientConfig::default();
    config.capabilities = capabilities;
    assert_eq!(config.capabilities.supports_tasks(), declare_tasks);
    config
}

/// rmcp's client in `Auto` mode, which probes `server/discover` and stays on 2026-07-28.
async fn modern_client(server: &LocalServer, declare_tasks: bool) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp/core"));
    let client = config(declare_tasks)
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
        )
        .await
        .expect("rmcp connects in Auto mode");
    let info = client.peer_info().expect("the client knows its server");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    client
}

fn export_report(arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new("export_report").with_arguments(
        arguments
            .as_object()
            .expect("arguments are an object")
            .clone(),
    )
}

/// The one text content block of `result`.
fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    &result.content[0]
        .as_text()
        .unwrap_or_else(|| panic!("a text block: {result:?}"))
        .text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k4_rmcp_calls_a_task_tool_and_polls_tasks_get_to_the_result() {
    let (server, manifest) = gateway();
    let client = modern_client(&server, true).await;
    let info = client.peer_info().unwrap();
    assert!(
        info.capabilities.supports_tasks(),
        "server/discover declares the extension (CONTRACT K5): {info:?}"
    );

    let created = client
        .call_tool_once(export_report(&json!({"rows": 4, "seconds": 1.5})))
        .await
        .expect("tools/call succeeds");
    let CallToolResponse::Task(created) = created else {
        panic!("a task, not an immediate result: {created:?}");
    };
    assert!(created.result_type.is_task(), "{created:?}");
    let task = created.task;
    assert!(task.task_id.starts_with("t1."), "{task:?}");
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.created_at, task.last_updated_at);
    assert_eq!(task.ttl_ms, Some(600_000));
    assert_eq!(task.poll_interval_ms, Some(200));

    // Poll as the extension asks: every pollIntervalMs until the status is terminal.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut interval = task.poll_interval_ms.unwrap_or(1_000);
    let mut seen_working = 0;
    let done = loop {
        tokio::time::sleep(Duration::from_millis(interval)).await;
        let polled = client
            .get_task(GetTaskParams::new(task.task_id.clone()))
            .await
            .expect("tasks/get succeeds");
        assert!(polled.result_type.is_complete(), "{polled:?}");
        assert_eq!(polled.task.task.task_id, task.task_id);
        if polled.task.status().is_terminal() {
            break polled.task;
        }
        assert_eq!(polled.task.status(), TaskStatus::Working, "{polled:?}");
        seen_working += 1;
        interval = polled.task.task.poll_interval_ms.unwrap_or(interval);
        assert!(
            Instant::now() < deadline,
            "the task never ended: {polled:?}"
        );
    };
    assert!(seen_working > 0, "1.5 s of work is seen working first");
    assert_eq!(done.status(), TaskStatus::Completed, "{done:?}");
    let TaskPayload::Completed { result } = done.payload else {
        panic!("a completed task carries its result: {done:?}");
    };
    let result: CallToolResult =
        serde_json::from_value(Value::Object(result)).expect("the result is a CallToolResult");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(only_text(&result), r#"{"report":"report-4-rows","rows":4}"#);
    client.cancel().await.expect("the client stops");

    // CONTRACT K9. Usage lines of different connections may come in any order.
    let created = server.usage_events_matching(1, |e| e["method"] == "tools/call");
    assert_eq!(created.len(), 1, "{created:#?}");
    assert_eq!(created[0]["tool"], "export_report", "{created:#?}");
    assert_eq!(created[0]["task_status"], "created", "{created:#?}");
    let all = server.usage_events_matching(0, |_| true);
    assert!(
        all.iter()
            .all(|e| e["era"] == "modern" && e["protocol_version"] == "2026-07-28"),
        "{all:#?}"
    );
    let completed = server.usage_events_matching(1, |e| {
        e["method"] == "tasks/get" && e["task_status"] == "completed"
    });
    assert_eq!(completed.len(), 1, "{completed:#?}");
    let _ = std::fs::remove_file(manifest);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k8_rmcp_without_the_extension_gets_a_plain_result_in_both_eras() {
    let (server, manifest) = gateway();
    for modern in [true, false] {
        let client = if modern {
            modern_client(&server, false).await
        } else {
            let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp/core"));
            let client = config(false)
                .serve(transport)
                .await
                .expect("rmcp initializes");
            let info = client.peer_info().unwrap();
            assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
            client
        };
        let answer = client
            .call_tool_once(export_report(&json!({"rows": 2, "seconds": 0.2})))
            .await
            .expect("tools/call succeeds");
        let CallToolResponse::Complete(result) = answer else {
            panic!("a plain result without the extension (modern: {modern}): {answer:?}");
        };
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_eq!(only_text(&result), r#"{"report":"report-2-rows","rows":2}"#);
        client.cancel().await.expect("the client stops");
    }
    let _ = std::fs::remove_file(manifest);
}
