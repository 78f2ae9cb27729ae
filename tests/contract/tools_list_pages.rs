//! `tools/list` pages (CONTRACT T2), in both eras: a list that fits is one page as before; a
//! longer one comes in pages that fit `MCP_MAX_RESPONSE_BYTES` (and `MCP_LIST_PAGE_SIZE`), each
//! as full as the budget allows, whose cursors any instance of the same list continues and
//! that list every tool exactly once in order; a cursor the list did not issue is refused; a
//! tool whose entry fits on no page fails the load.

use gateway_tests::{Answer, Harness, rpc};
use mcp_gateway::Config;
use mcp_gateway::registry::{FileSource, LoadLimits, RegistryError, load_from};
use serde_json::{Value, json};

use super::modern::{modern_body, modern_headers, send};

/// The `core` route's tools replaced by `n` tools `t0000`, `t0001`, … whose descriptions
/// (some with Korean text and escapes) vary in length, so pages end at different counts.
fn with_tools(document: &mut Value, n: usize, flavour: &str) {
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("t{i:04}"),
                "description": format!("{flavour} 도구 {i} \"quoted\" {}", "x".repeat(i % 97)),
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                "_meta": {"endpoint": "http://127.0.0.1:9/t"}
            })
        })
        .collect();
    document["routes"][0]["tools"] = Value::Array(tools);
}

async fn harness(n: usize, budget: usize, page_size: Option<usize>) -> Harness {
    harness_of(n, budget, page_size, "Tool").await
}

async fn harness_of(n: usize, budget: usize, page_size: Option<usize>, flavour: &str) -> Harness {
    let mut config = Config::fixed_defaults();
    config.max_response_bytes = budget;
    config.list_page_size = page_size;
    Harness::with_manifest(config, |document| with_tools(document, n, flavour)).await
}

/// One `tools/list` request with `id` and `params`, in the legacy (`modern == false`) or
/// modern era.
async fn list(h: &Harness, modern: bool, id: impl Into<Value>, params: &Value) -> Answer {
    let id: Value = id.into();
    if modern {
        let body = modern_body(&id, "tools/list", params, "2026-07-28");
        send(
            h,
            "/mcp/core",
            &modern_headers("tools/list", None),
            &body.to_string(),
        )
        .await
    } else {
        h.post("/mcp/core", &rpc(id, "tools/list", params.clone()), &[])
            .await
    }
}

/// Every page from the first, following `nextCursor`: the answers' bodies, as sent.
async fn all_pages(h: &Harness, modern: bool) -> Vec<Answer> {
    let mut pages = Vec::new();
    let mut params = json!({});
    loop {
        let answer = list(h, modern, 1, &params).await;
        let body = answer.json();
        assert!(body["result"]["tools"].is_array(), "{body}");
        let next = body["result"].get("nextCursor").cloned();
        pages.push(answer);
        match next {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => return pages,
        }
        assert!(pages.len() < 1000, "the cursors never end");
    }
}

/// The limits of a load from a file in these tests: 5 s, 1 MiB, and `max_response_bytes`.
fn limits(max_response_bytes: usize) -> LoadLimits {
    LoadLimits {
        timeout: std::time::Duration::from_secs(5),
        max_bytes: 1 << 20,
        max_response_bytes,
    }
}

fn names(answer: &Answer) -> Vec<String> {
    names_of(&answer.json())
}

fn names_of(body: &Value) -> Vec<String> {
    body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

fn expected_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("t{i:04}")).collect()
}

#[tokio::test]
async fn t2_a_list_that_fits_is_one_page_without_next_cursor_in_both_eras() {
    let h = Harness::fixed().await;
    for modern in [false, true] {
        let answer = list(&h, modern, 1, &json!({})).await;
        let body = answer.json();
        assert!(body["result"].get("nextCursor").is_none(), "{body}");
        assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 7);
        // `null` is no cursor: the same first page.
        let again = list(&h, modern, 1, &json!({"cursor": null})).await;
        assert_eq!(again.body, answer.body);
    }
    // A list of 300 tools under the default budget (5 MiB) is still one page.
    let h = harness(300, Config::fixed_defaults().max_response_bytes, None).await;
    let pages = all_pages(&h, false).await;
    assert_eq!(pages.len(), 1);
    assert_eq!(names(&pages[0]), expected_names(300));
}

#[tokio::test]
async fn t2_pages_fit_the_budget_hold_all_that_fit_and_list_every_tool_once_in_order() {
    let budget = 8 * 1024;
    let n = 200;
    let h = harness(n, budget, None).await;
    for modern in [false, true] {
        let pages = all_pages(&h, modern).await;
        assert!(pages.len() >= 4, "{} pages", pages.len());
        let listed: Vec<String> = pages.iter().flat_map(names).collect();
        assert_eq!(listed, expected_names(n), "every tool once, in order");
        for (i, page) in pages.iter().enumerate() {
            assert!(
                page.body.len() <= budget,
                "page {i}: {} bytes",
                page.body.len()
            );
            let body = page.json();
            let last = i + 1 == pages.len();
            assert_eq!(body["result"].get("nextCursor").is_none(), last, "{body}");
            if let Some(cursor) = body["result"].get("nextCursor") {
                let cursor = cursor.as_str().unwrap();
                assert_eq!(cursor.len(), 22, "{cursor}");
                assert!(
                    cursor
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                    "{cursor}"
                );
                // As full as the budget allows: the next page's first tool, with its comma,
                // would not have fit.
                let next = pages[i + 1].json()["result"]["tools"][0].to_string();
                assert!(
                    page.body.len() + 1 + next.len() > budget,
                    "page {i} ({} bytes) had room for {next}",
                    page.body.len()
                );
            }
            if modern {
                // CONTRACT N4 on every page.
                assert_eq!(body["result"]["resultType"], "complete", "{body}");
                assert_eq!(body["result"]["ttlMs"], 300_000, "{body}");
                assert!(body["result"]["cacheScope"].is_string(), "{body}");
            } else {
                assert!(body["result"].get("resultType").is_none(), "{body}");
            }
        }
    }
}

#[tokio::test]
async fn t2_list_page_size_caps_the_tools_of_a_page() {
    let h = harness(23, Config::fixed_defaults().max_response_bytes, Some(7)).await;
    for modern in [false, true] {
        let pages = all_pages(&h, modern).await;
        let counts: Vec<usize> = pages.iter().map(|page| names(page).len()).collect();
        assert_eq!(counts, [7, 7, 7, 2]);
        let listed: Vec<String> = pages.iter().flat_map(names).collect();
        assert_eq!(listed, expected_names(23));
    }
    // A list no longer than the page size is one page without a cursor.
    let h = harness(7, Config::fixed_defaults().max_response_bytes, Some(7)).await;
    assert_eq!(all_pages(&h, false).await.len(), 1);
}

#[tokio::test]
async fn t2_a_cursor_continues_on_any_instance_of_the_same_list_and_any_budget() {
    let (one, other) = (
        harness(120, 6 * 1024, None).await,
        harness(120, 6 * 1024, None).await,
    );
    let first = list(&one, false, 1, &json!({})).await.json();
    let cursor = first["result"]["nextCursor"].clone();
    let here = list(&one, false, 2, &json!({"cursor": cursor})).await;
    let there = list(&other, false, 2, &json!({"cursor": cursor})).await;
    assert_eq!(here.body, there.body, "the same page from another instance");
    // The cursor is the era's too, and an instance with other limits continues from it.
    let modern = list(&other, true, 2, &json!({"cursor": cursor})).await;
    assert_eq!(names(&modern)[0], names(&here)[0]);
    let roomy = harness(120, 1 << 20, None).await;
    let rest = list(&roomy, false, 3, &json!({"cursor": cursor})).await;
    let mut listed = names_of(&first);
    listed.extend(names(&rest));
    assert_eq!(listed, expected_names(120));
    assert!(rest.json()["result"].get("nextCursor").is_none());
}

#[tokio::test]
async fn t2_a_cursor_this_list_did_not_issue_is_invalid_params_in_both_eras() {
    let h = harness(60, 4 * 1024, None).await;
    let first = list(&h, false, 1, &json!({})).await.json();
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();
    // The same tools described otherwise: another list, whose cursors are not this one's.
    let other = harness_of(60, 4 * 1024, None, "Other").await;
    let foreign = list(&other, false, 1, &json!({})).await.json()["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(foreign, cursor);
    let mut edited = cursor.clone().into_bytes();
    edited[3] = if edited[3] == b'A' { b'B' } else { b'A' };
    let edited = String::from_utf8(edited).unwrap();
    let unknown = "Invalid params: cursor is not one this tool list issued";
    let not_string = "Invalid params: cursor must be a string";
    let cases = [
        (json!(foreign), unknown),
        (json!(edited), unknown),
        (json!("abc"), unknown),
        (json!(""), unknown),
        (json!(format!("{cursor}=")), unknown),
        (json!("AAAAAAAAAAAAAAAAAAAAAA"), unknown),
        (json!("!!!!!!!!!!!!!!!!!!!!!!"), unknown),
        (json!(5), not_string),
        (json!({"page": 2}), not_string),
        (json!([cursor]), not_string),
        (json!(true), not_string),
    ];
    for (bad, message) in cases {
        for modern in [false, true] {
            let answer = list(&h, modern, 9, &json!({"cursor": bad})).await;
            answer.assert_rpc_error(-32602, message, &json!(9));
        }
    }
    // The issued one still works here, and the foreign one there.
    let answer = list(&h, false, 1, &json!({"cursor": cursor})).await;
    assert!(answer.json()["result"]["tools"].is_array());
    let answer = list(&other, false, 1, &json!({"cursor": foreign})).await;
    assert!(answer.json()["result"]["tools"].is_array());
}

#[tokio::test]
async fn t2_a_tool_whose_entry_fits_on_no_page_fails_the_load_with_its_name() {
    let dir = std::env::temp_dir().join(format!("gateway-pages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big-entry.json");
    let manifest = json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [
        {"name": "small", "description": "fits", "inputSchema": {"type": "object"},
         "_meta": {"endpoint": "http://127.0.0.1:9/s"}},
        {"name": "huge", "description": "y".repeat(6000), "inputSchema": {"type": "object"},
         "_meta": {"endpoint": "http://127.0.0.1:9/h"}}
    ]}]});
    std::fs::write(&file, manifest.to_string()).unwrap();
    let source = FileSource(file.to_string_lossy().into_owned());
    let error = load_from(&source, limits(6 * 1024)).await.unwrap_err();
    let RegistryError::Invalid { problems, .. } = &error else {
        panic!("{error}");
    };
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    // The envelope allowance: 2,048 bytes and the serverInfo texts as JSON strings ("mcp-core",
    // "mcp-core", "0.0.0").
    let envelope = 2048 + "\"mcp-core\"".len() * 2 + "\"0.0.0\"".len();
    let room = 6 * 1024 - envelope;
    let entry = json!({"name": "huge", "description": "y".repeat(6000),
                       "inputSchema": {"type": "object"}})
    .to_string()
    .len();
    assert_eq!(
        messages,
        [format!(
            "route 'core': tool 'huge': its tools/list entry is {entry} bytes, more than a page \
             holds ({room} bytes: MCP_MAX_RESPONSE_BYTES 6144 less {envelope} for the response \
             around it)"
        )]
    );
    // Under a budget it fits, the same file loads and lists both tools.
    let snapshot = load_from(&source, limits(8 * 1024)).await.unwrap();
    assert_eq!(
        snapshot
            .fixed_route("core")
            .unwrap()
            .tools_list_result()
            .len(),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn t2_the_load_counts_the_server_info_as_a_modern_page_writes_it_escaped() {
    let dir = std::env::temp_dir().join(format!("gateway-pages-escaped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("quoted-title.json");
    let title = "\"".repeat(1900);
    let manifest = json!({"manifestVersion": 1, "routes": [{"routeKey": "core",
        "server": {"name": "big", "title": title, "version": "1.0.0"},
        "tools": [{"name": "t1", "description": "d".repeat(1000), "inputSchema": {"type": "object"},
                   "_meta": {"endpoint": "http://127.0.0.1:9/t"}}]}]});
    std::fs::write(&file, manifest.to_string()).unwrap();
    let source = FileSource(file.to_string_lossy().into_owned());
    // 1,900 quotes are 3,802 bytes in a modern page's serverInfo: no room is left at 4 KiB.
    let error = load_from(&source, limits(4096)).await.unwrap_err();
    let envelope = 2048 + "\"big\"".len() + 2 + 2 * 1900 + "\"1.0.0\"".len();
    assert!(
        error.to_string().contains(&format!(
            "route 'core': tool 't1': its tools/list entry is 1062 bytes, more than a page holds \
             (0 bytes: MCP_MAX_RESPONSE_BYTES 4096 less {envelope} for the response around it)"
        )),
        "{error}"
    );
    // Under a budget it fits, a modern client lists the tool.
    let snapshot = load_from(&source, limits(8192)).await.unwrap();
    let mut config = Config::fixed_defaults();
    config.max_response_bytes = 8192;
    let gateway = mcp_gateway::Gateway::new(
        config,
        Ok(snapshot),
        mcp_gateway::invoke::HttpInvoker::new().unwrap(),
    );
    let h = Harness {
        gateway: std::sync::Arc::new(gateway),
        tool_service: wiremock::MockServer::start().await,
    };
    let answer = list(&h, true, 1, &json!({})).await;
    assert!(answer.body.len() <= 8192);
    assert_eq!(names(&answer), ["t1"], "{:?}", answer.body);
    let _ = std::fs::remove_dir_all(&dir);
}

/// CONTRACT T2, E2: the load leaves room on every page for the longest `id` E2 lets through.
/// A route whose largest entry just passes the load check, listed with a string `id` of 1,024
/// bytes as written (170 control characters, 6 bytes each escaped, and 4 letters), answers
/// every page in both eras, each within `MCP_MAX_RESPONSE_BYTES`, and lists every tool once.
#[tokio::test]
async fn t2_e2_the_longest_id_fits_on_every_page_of_a_list_whose_largest_entry_just_loads() {
    let big = json!({"name": "big", "description": "b".repeat(3000),
                     "inputSchema": {"type": "object"}});
    let entry = big.to_string().len();
    // The route's serverInfo texts as JSON strings ("mcp-core", "mcp-core", "0.0.0").
    let budget = entry + 2048 + "\"mcp-core\"".len() * 2 + "\"0.0.0\"".len();
    let mut config = Config::fixed_defaults();
    config.max_response_bytes = budget;
    let h = Harness::with_manifest(config, |document| {
        with_tools(document, 5, "Tool");
        let mut tool = big.clone();
        tool["_meta"] = json!({"endpoint": "http://127.0.0.1:9/t"});
        document["routes"][0]["tools"]
            .as_array_mut()
            .unwrap()
            .insert(2, tool);
    })
    .await;
    // The budget is the least the load accepts: a byte less and the big tool fits on no page.
    let dir = std::env::temp_dir().join(format!("gateway-pages-id-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("margin.json");
    let mut tool = big.clone();
    tool["_meta"] = json!({"endpoint": "http://127.0.0.1:9/t"});
    let manifest = json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [tool]}]});
    std::fs::write(&file, manifest.to_string()).unwrap();
    let source = FileSource(file.to_string_lossy().into_owned());
    assert!(load_from(&source, limits(budget)).await.is_ok());
    assert!(load_from(&source, limits(budget - 1)).await.is_err());
    let _ = std::fs::remove_dir_all(&dir);
    let id = Value::String("\u{1}".repeat(170) + "abcd");
    assert_eq!(serde_json::to_string(&id).unwrap().len(), 1026);
    for modern in [false, true] {
        let mut listed = Vec::new();
        let mut params = json!({});
        loop {
            let answer = list(&h, modern, id.clone(), &params).await;
            assert_eq!(answer.status, 200);
            assert!(
                answer.body.len() <= budget,
                "{} > {budget}",
                answer.body.len()
            );
            let body = answer.json();
            assert_eq!(body["id"], id);
            listed.extend(names(&answer));
            match body["result"].get("nextCursor") {
                Some(cursor) => params = json!({"cursor": cursor}),
                None => break,
            }
            assert!(listed.len() < 100, "the cursors never end");
        }
        assert_eq!(listed, ["t0000", "t0001", "big", "t0002", "t0003", "t0004"]);
    }
}
