//! Interop of the real `mcp-local` binary with rmcp, the official Rust MCP SDK, over its
//! streamable HTTP client transport on a free loopback port.
//!
//! - rmcp's `Auto` lifecycle mode probes with `server/discover` and stays on protocol revision
//!   2026-07-28: no `initialize`, version and client capabilities in every request's `_meta`,
//!   mirrored headers, every request logged as era `modern` (CONTRACT N1, N2, N3, N4).
//! - rmcp's plain `serve()` keeps the legacy `initialize` handshake and is answered at 2025-11-25,
//!   logged as era `legacy` (CONTRACT L1).
//!
//! Both eras list the sample manifest's tools, call one, see a tool error as an `isError` result
//! and invalid arguments as JSON-RPC `-32602`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

/// A running `mcp-local` (sample Tool Service included, both on free ports) with its log lines
/// collected, as text lines.
struct LocalServer {
    child: Child,
    base: String,
    logs: Arc<Mutex<Vec<String>>>,
}

impl LocalServer {
    fn start() -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-local"));
        command
            .args([
                "--listen",
                "127.0.0.1:0",
                "--sample-tool-service",
                "127.0.0.1:0",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, _) in std::env::vars() {
            if name.starts_with("MCP_") {
                command.env_remove(name);
            }
        }
        let mut child = command.spawn().expect("mcp-local starts");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let sink = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let base = loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("mcp-local prints its endpoint");
            if let Some(rest) = line.strip_prefix("mcp-local: MCP endpoint http://") {
                let addr = rest.split('/').next().unwrap();
                break format!("http://{addr}");
            }
        };
        Self { child, base, logs }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The usage events logged so far whose `method` is one of `methods`, waiting up to 10 s
    /// for `count` of them (the serving threads write their log lines when idle).
    fn usage_events(&self, methods: &[&str], count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let events = self.all_usage_events();
            let matching: Vec<Value> = events
                .into_iter()
                .filter(|e| methods.iter().any(|m| e["method"] == *m))
                .collect();
            if matching.len() >= count || Instant::now() > deadline {
                return matching;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every usage event logged so far, in order.
    fn all_usage_events(&self) -> Vec<Value> {
        self.logs
            .lock()
            .unwrap()
            .iter()
            .filter_map(|line| usage_fields(line))
            .collect()
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fields of a text usage line (`<time>  INFO mcp_gateway::usage: request key=value …`) as
/// a JSON object: quoted values as strings, bare ones as JSON (numbers, booleans) or strings.
fn usage_fields(line: &str) -> Option<Value> {
    let (_, mut rest) = line.split_once(" mcp_gateway::usage: request ")?;
    let mut fields = serde_json::Map::new();
    while let Some((key, after)) = rest.trim_start().split_once('=') {
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let mut text = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                match c {
                    '\\' => text.push(chars.next()?.1),
                    '"' => break i + 1,
                    c => text.push(c),
                }
            };
            (Value::String(text), &quoted[end..])
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            let bare = &after[..end];
            let value = serde_json::from_str(bare).unwrap_or_else(|_| Value::String(bare.into()));
            (value, &after[end..])
        };
        fields.insert(key.to_string(), value);
        rest = tail;
    }
    Some(Value::Object(fields))
}

type Client = RunningService<RoleClient, ()>;

fn arguments(value: &Value) -> rmcp::model::JsonObject {
    value.as_object().expect("arguments are an object").clone()
}

/// The one text content block of `result`.
fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    &result.content[0]
        .as_text()
        .unwrap_or_else(|| panic!("a text block: {result:?}"))
        .text
}

/// Lists the tools and calls them through `client`: a search, a tool error and invalid
/// arguments, as every era must answer them.
async fn list_and_call(client: &Client) {
    let tools = client.list_all_tools().await.expect("tools/list succeeds");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["search_documents", "lookup_glossary", "create_ticket"]
    );

    let found = client
        .call_tool(
            CallToolRequestParams::new("search_documents")
                .with_arguments(arguments(&json!({"query": "VPN", "limit": 1}))),
        )
        .await
        .expect("search_documents succeeds");
    assert_eq!(found.is_error, Some(false), "{found:?}");
    let docs: Value = serde_json::from_str(only_text(&found)).expect("the text is JSON");
    assert_eq!(docs.as_array().map(Vec::len), Some(1), "{docs}");
    assert_eq!(docs[0]["id"], "DOC-2001", "{docs}");

    let missing = client
        .call_tool(
            CallToolRequestParams::new("lookup_glossary")
                .with_arguments(arguments(&json!({"term": "nope"}))),
        )
        .await
        .expect("a tool error is a result, not a JSON-RPC error");
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    assert_eq!(
        only_text(&missing),
        "Tool Service returned HTTP 404: term 'nope' is not in the glossary"
    );

    let invalid = client
        .call_tool(
            CallToolRequestParams::new("create_ticket")
                .with_arguments(arguments(&json!({"title": "printer on fire"}))),
        )
        .await;
    match invalid {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            assert_eq!(error.message, "Invalid params: 'priority' is required");
        }
        other => panic!("invalid arguments are JSON-RPC -32602: {other:?}"),
    }
}

/// The version the client reports it negotiated.
fn negotiated_version(client: &Client) -> ProtocolVersion {
    client
        .peer_info()
        .expect("the client knows its server")
        .protocol_version
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_rmcp_auto_mode_connects_at_2026_07_28_lists_and_calls() {
    let server = LocalServer::start();
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp/core"));
    let client = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
        )
        .await
        .expect("rmcp connects in Auto mode");
    assert_eq!(negotiated_version(&client), ProtocolVersion::V_2026_07_28);
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("core-tools"),
        "server/discover names the route's server (CONTRACT N3): {info:?}"
    );

    list_and_call(&client).await;
    client.cancel().await.expect("the client stops");

    // server/discover, tools/list and three tools/call, all in the modern era.
    let usage = server.usage_events(&["server/discover", "tools/list", "tools/call"], 5);
    let methods: Vec<&str> = usage.iter().filter_map(|e| e["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call"
        ],
        "{usage:#?}"
    );
    for event in &usage {
        assert_eq!(event["era"], "modern", "{event}");
        assert_eq!(event["protocol_version"], "2026-07-28", "{event}");
    }
    let all = server.all_usage_events();
    assert!(
        all.iter()
            .all(|e| e["method"] != "initialize" && e["era"] != "legacy"),
        "Auto mode never falls back to initialize: {all:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l1_rmcp_plain_serve_initializes_at_2025_11_25_lists_and_calls() {
    let server = LocalServer::start();
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp/core"));
    let client = ().serve(transport).await.expect("rmcp initializes");
    assert_eq!(negotiated_version(&client), ProtocolVersion::V_2025_11_25);
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("core-tools"),
        "{info:?}"
    );

    list_and_call(&client).await;
    client.cancel().await.expect("the client stops");

    let usage = server.usage_events(&["initialize", "tools/list", "tools/call"], 5);
    let methods: Vec<&str> = usage.iter().filter_map(|e| e["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call"
        ],
        "{usage:#?}"
    );
    for event in &usage {
        assert_eq!(event["era"], "legacy", "{event}");
    }
    for event in &usage[1..] {
        assert_eq!(event["protocol_version"], "2025-11-25", "{event}");
    }
    let all = server.all_usage_events();
    assert!(
        all.iter()
            .all(|e| e["method"] != "server/discover" && e["era"] != "modern"),
        "plain serve() never speaks the modern era: {all:#?}"
    );
}
