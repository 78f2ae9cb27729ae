//! The tasks extension end to end (CONTRACT K): real `mcp-local` processes, the sample
//! asynchronous Tool Service (`mcp_local::async_jobs`) on loopback, and a task created on one
//! process, read and cancelled on another that holds the same `MCP_TASK_KEY`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{LocalServer, free_port, task_manifest};

#[allow(
    dead_code,
    reason = "the support module serves every test binary of this crate"
)]
mod support;

const KEY: &str = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";
const OTHER_KEY: &str = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";
const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// A process serving `manifest` with `key`; with the sample service at `sample` or none.
fn gateway(manifest: &std::path::Path, key: &str, sample: Option<&str>) -> LocalServer {
    let source = format!("file:{}", manifest.display());
    let env = [
        ("MCP_REGISTRY_SOURCE", source.as_str()),
        ("MCP_TASK_KEY", "env:GATEWAY_TASK_KEY"),
        ("GATEWAY_TASK_KEY", key),
    ];
    match sample {
        Some(addr) => LocalServer::spawn(&["--sample-tool-service", addr], &env),
        None => LocalServer::spawn(&["--no-sample-tool-service"], &env),
    }
}

/// A modern request declaring the extension (or not), with its routing headers.
fn modern(server: &LocalServer, method: &str, mut params: Value, declared: bool) -> Value {
    let extensions = if declared {
        json!({EXTENSION: {}})
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    post::blocking(
        server,
        &body,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
            ("mcp-name", &name),
        ],
    )
}

mod post {
    //! A blocking POST over the async client, for these synchronous tests.
    use serde_json::Value;

    pub(super) fn blocking(
        server: &super::LocalServer,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> Value {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        mcp_gateway::tls::install_crypto_provider();
        runtime.block_on(async {
            let client = reqwest::Client::new();
            let mut request = client
                .post(server.url("/mcp/core"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body.to_string());
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let response = request.send().await.expect("the gateway answers");
            response.json::<Value>().await.expect("a JSON body")
        })
    }
}

fn create(server: &LocalServer, arguments: &Value) -> String {
    let answer = modern(
        server,
        "tools/call",
        json!({"name": "export_report", "arguments": arguments.clone()}),
        true,
    );
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"].as_str().unwrap().to_string()
}

fn get(server: &LocalServer, task_id: &str) -> Value {
    modern(server, "tasks/get", json!({"taskId": task_id}), true)
}

#[test]
fn k3_a_task_created_on_one_process_is_read_and_cancelled_on_another() {
    let sample = format!("127.0.0.1:{}", free_port());
    let manifest = task_manifest(&format!("http://{sample}"));
    let a = gateway(&manifest, KEY, Some(&sample));
    let b = gateway(&manifest, KEY, None);

    let task_id = create(&a, &json!({"rows": 5, "seconds": 1.0}));
    let working = get(&b, &task_id);
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert!(
        working["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.ends_with("% done")),
        "{working}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let done = loop {
        std::thread::sleep(Duration::from_millis(200));
        let answer = get(&b, &task_id);
        if answer["result"]["status"] != "working" || Instant::now() > deadline {
            break answer;
        }
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        r#"{"report":"report-5-rows","rows":5}"#
    );

    // A long one, cancelled on B, seen cancelled on A.
    let long = create(&a, &json!({"rows": 7, "seconds": 600}));
    let ack = modern(&b, "tasks/cancel", json!({"taskId": long}), true);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(get(&a, &long)["result"]["status"], "cancelled");

    // Failed work is a completed task with an isError result.
    let failing = create(&a, &json!({"rows": 1, "seconds": 0, "outcome": "fail"}));
    let failed = get(&b, &failing);
    assert_eq!(failed["result"]["status"], "completed", "{failed}");
    assert_eq!(failed["result"]["result"]["isError"], true);
    assert_eq!(
        failed["result"]["statusMessage"],
        "the report source is unavailable"
    );

    // CONTRACT K9: the usage events name the tool and the task's status, never the task id.
    let created = a.usage_events_matching(3, |e| e["method"] == "tools/call");
    assert!(
        created
            .iter()
            .all(|e| e["task_status"] == "created" && e["tool"] == "export_report")
    );
    for status in ["working", "completed", "cancel_requested", "failed"] {
        let events = b.usage_events_matching(1, |e| e["task_status"] == status);
        assert!(
            events
                .iter()
                .any(|e| e["tool"] == "export_report" && e["tool_ms"].is_u64()),
            "{status}: {events:?}"
        );
    }
    for server in [&a, &b] {
        let logs = server.logs.lock().unwrap();
        assert!(
            logs.iter()
                .all(|line| !line.contains(&task_id) && !line.contains(&long))
        );
    }

    // A process with another key knows none of them.
    let c = gateway(&manifest, OTHER_KEY, None);
    let unknown = get(&c, &task_id);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(unknown["error"]["message"], "Invalid params: unknown task");
    let _ = std::fs::remove_file(manifest);
}

#[test]
fn k8_a_legacy_client_gets_the_polled_result_of_a_required_tool() {
    let sample = format!("127.0.0.1:{}", free_port());
    let manifest = task_manifest(&format!("http://{sample}"));
    let a = gateway(&manifest, KEY, Some(&sample));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "export_report_now", "arguments": {"rows": 2, "seconds": 0.6}}});
    let answer = post::blocking(&a, &body, &[("mcp-protocol-version", "2025-11-25")]);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        r#"{"report":"report-2-rows","rows":2}"#
    );
    // Work longer than the tool's 5 s timeout: an error, and the service was asked to stop.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "export_report_now", "arguments": {"rows": 2, "seconds": 60}}});
    let answer = post::blocking(&a, &body, &[("mcp-protocol-version", "2025-11-25")]);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Tool Service did not finish the work within 5000 ms; the gateway asked it to stop"
    );
    let _ = std::fs::remove_file(manifest);
}

/// Work that takes longer than API Gateway's 30 s request limit completes through polling.
#[test]
fn k6_work_longer_than_thirty_seconds_completes_through_polling() {
    let sample = format!("127.0.0.1:{}", free_port());
    let manifest = task_manifest(&format!("http://{sample}"));
    let a = gateway(&manifest, KEY, Some(&sample));
    let started = Instant::now();
    let task_id = create(&a, &json!({"rows": 31, "seconds": 31}));
    let done = loop {
        std::thread::sleep(Duration::from_secs(2));
        let answer = get(&a, &task_id);
        if answer["result"]["status"] != "working" || started.elapsed() > Duration::from_mins(1) {
            break answer;
        }
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert!(started.elapsed() >= Duration::from_secs(31));
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        r#"{"report":"report-31-rows","rows":31}"#
    );
    let _ = std::fs::remove_file(manifest);
}
