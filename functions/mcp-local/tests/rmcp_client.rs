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

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use support::LocalServer;

mod support;

/// The usage events whose `method` is one of `methods`, waiting up to 10 s for `count`.
fn usage_events(server: &LocalServer, methods: &[&str], count: usize) -> Vec<Value> {
    server.usage_events_matching(count, |e| methods.iter().any(|m| e["method"] == *m))
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
    let server = LocalServer::start(&[]);
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
    let usage = usage_events(&server, &["server/discover", "tools/list", "tools/call"], 5);
    // mcp-local writes each serving thread's usage lines when it goes idle: requests on two
    // connections may be logged in either order, so the methods are compared sorted.
    let mut methods: Vec<&str> = usage.iter().filter_map(|e| e["method"].as_str()).collect();
    methods.sort_unstable();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/list"
        ],
        "{usage:#?}"
    );
    for event in &usage {
        assert_eq!(event["era"], "modern", "{event}");
        assert_eq!(event["protocol_version"], "2026-07-28", "{event}");
    }
    let all = server.usage_events_matching(0, |_| true);
    assert!(
        all.iter()
            .all(|e| e["method"] != "initialize" && e["era"] != "legacy"),
        "Auto mode never falls back to initialize: {all:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l1_rmcp_plain_serve_initializes_at_2025_11_25_lists_and_calls() {
    let server = LocalServer::start(&[]);
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

    let usage = usage_events(&server, &["initialize", "tools/list", "tools/call"], 5);
    // Sorted, as above: two connections' lines may come in either order.
    let mut methods: Vec<&str> = usage.iter().filter_map(|e| e["method"].as_str()).collect();
    methods.sort_unstable();
    assert_eq!(
        methods,
        [
            "initialize",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/list"
        ],
        "{usage:#?}"
    );
    for event in &usage {
        assert_eq!(event["era"], "legacy", "{event}");
    }
    for event in usage.iter().filter(|e| e["method"] != "initialize") {
        assert_eq!(event["protocol_version"], "2025-11-25", "{event}");
    }
    let all = server.usage_events_matching(0, |_| true);
    assert!(
        all.iter()
            .all(|e| e["method"] != "server/discover" && e["era"] != "modern"),
        "plain serve() never speaks the modern era: {all:#?}"
    );
}

/// A manifest of `count` tools `tool_00000`, … in one route `large`, each with a description of
/// about 600 bytes, so 10,000 of them list more than the default `MCP_MAX_RESPONSE_BYTES`.
fn large_manifest(count: usize) -> Value {
    let tools: Vec<Value> = (0..count)
        .map(|i| {
            json!({
                "name": format!("tool_{i:05}"),
                "description": format!(
                    "Looks up record {i} of the archive. {}{}",
                    format!("보관소 {i}번 기록을 찾습니다. ").repeat(12),
                    "x".repeat(i % 50)
                ),
                "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}},
                                "required": ["key"]},
                "_meta": {"endpoint": "http://127.0.0.1:9/large"}
            })
        })
        .collect();
    json!({"manifestVersion": 1,
           "routes": [{"routeKey": "large", "server": {"name": "large-tools", "version": "1.0.0"},
                       "tools": tools}]})
}

/// CONTRACT T2: on a 10,000-tool route rmcp's `list_all_tools` follows `nextCursor` through
/// every page in both eras and sees each tool once, in order; the pages are several.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t2_rmcp_lists_every_page_of_a_10000_tool_route_in_both_eras() {
    let count = 10_000;
    let dir = std::env::temp_dir().join(format!("mcp-local-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("large.json");
    std::fs::write(&file, large_manifest(count).to_string()).unwrap();
    let source = format!("file:{}", file.display());
    let server = LocalServer::start(&[
        ("MCP_REGISTRY_SOURCE", source.as_str()),
        ("MCP_ENDPOINT_PATH", "/mcp/large"),
    ]);
    let expected: Vec<String> = (0..count).map(|i| format!("tool_{i:05}")).collect();
    for modern in [true, false] {
        let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp/large"));
        let client = if modern {
            ().serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    legacy_version: Some(ProtocolVersion::V_2025_11_25),
                },
            )
            .await
        } else {
            ().serve(transport).await
        }
        .expect("rmcp connects");
        let tools = client.list_all_tools().await.expect("every page lists");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names.len(), count);
        assert!(
            names
                .iter()
                .copied()
                .eq(expected.iter().map(String::as_str))
        );
        client.cancel().await.expect("the client stops");
        let era = if modern { "modern" } else { "legacy" };
        let pages =
            server.usage_events_matching(2, |e| e["method"] == "tools/list" && e["era"] == era);
        assert!(pages.len() >= 2, "{} pages in the {era} era", pages.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// CONTRACT S1–S4 through the loader's one pass and a real client: a 10,000-tool route with
/// `toolSearch` mode `only` lists `search_tools` and its pinned tool, and rmcp's `call_tool`
/// of `search_tools` finds a tool by an English and by a Korean query, as structured content
/// and as the same JSON in text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s2_rmcp_searches_a_10000_tool_route_whose_list_shows_search_tools_and_pinned_tools() {
    let mut manifest = large_manifest(10_000);
    manifest["routes"][0]["toolSearch"] = json!({"mode": "only", "maxResults": 3});
    manifest["routes"][0]["tools"][42]["_meta"]["pinned"] = json!(true);
    let dir = std::env::temp_dir().join(format!("mcp-local-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("search.json");
    std::fs::write(&file, manifest.to_string()).unwrap();
    let source = format!("file:{}", file.display());
    let server = LocalServer::start(&[
        ("MCP_REGISTRY_SOURCE", source.as_str()),
        ("MCP_ENDPOINT_PATH", "/mcp/large"),
    ]);
    let transport = StreamableHttpClientTransport::from_uri(server.url("/mcp/large"));
    let client = ().serve(transport).await.expect("rmcp initializes");
    let tools = client.list_all_tools().await.expect("tools/list succeeds");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search_tools", "tool_00042"]);
    for query in ["record 7777 of the archive", "보관소 7777번 기록"] {
        let result = client
            .call_tool(
                CallToolRequestParams::new("search_tools")
                    .with_arguments(arguments(&json!({"query": query}))),
            )
            .await
            .expect("search_tools answers");
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let structured = result
            .structured_content
            .clone()
            .expect("structuredContent");
        let found = structured["tools"].as_array().unwrap();
        assert!(found.len() <= 3, "{structured}");
        assert_eq!(found[0]["name"], "tool_07777", "{query}: {structured}");
        assert!(found[0]["inputSchema"].is_object());
        let text: Value = serde_json::from_str(only_text(&result)).unwrap();
        assert_eq!(text, structured);
    }
    client.cancel().await.expect("the client stops");
    let _ = std::fs::remove_dir_all(&dir);
}
