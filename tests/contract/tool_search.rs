//! A route's `search_tools` (CONTRACT S1–S4): the manifest's `toolSearch`, the listing in modes
//! `add` and `only`, the result's shape in both eras, argument validation, ranking in English,
//! Korean and mixed text, and the load problems.

use gateway_tests::{Answer, Harness, rpc};
use mcp_gateway::Config;
use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, ResponseTemplate};

use super::modern::{modern_body, modern_headers, send};

/// The exact `inputSchema` of `search_tools` (CONTRACT S2).
const INPUT_SCHEMA: &str = r#"{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":500},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["query"],"additionalProperties":false}"#;

/// Tools of the `core` route for the search: English, Korean and mixed descriptions.
fn search_tools(tool_service: &str) -> Vec<Value> {
    let tool = |name: &str, title: &str, description: &str, properties: Value| {
        json!({"name": name, "title": title, "description": description,
               "inputSchema": {"type": "object", "properties": properties},
               "_meta": {"endpoint": format!("{tool_service}/{name}")}})
    };
    vec![
        tool(
            "search_documents",
            "Document search",
            "Searches the company's documents by keywords.",
            json!({"query": {"type": "string", "description": "Words to look for"}}),
        ),
        tool(
            "leave_balance",
            "연차 잔여 조회",
            "직원의 남은 연차휴가 일수를 조회합니다.",
            json!({"employeeNo": {"type": "string", "description": "사번"}}),
        ),
        tool(
            "createJiraTicket",
            "Jira 티켓 생성",
            "장애나 요청을 Jira티켓으로 등록합니다.",
            json!({"summary": {"type": "string"}}),
        ),
        tool(
            "vpn_status",
            "VPN status",
            "VPN연결 상태와 오류를 확인합니다.",
            json!({}),
        ),
        tool(
            "weather_forecast",
            "Weather",
            "Gives the weather forecast for a city.",
            json!({"city": {"type": "string", "description": "City name"}}),
        ),
    ]
}

/// A fixed deployment whose `core` route has the search tools and `toolSearch`, and whose `hr`
/// route also has `payroll_slip`.
async fn harness(tool_search: Value, pinned: &[&str]) -> Harness {
    let pinned: Vec<String> = pinned.iter().map(ToString::to_string).collect();
    Harness::with_manifest(Config::fixed_defaults(), move |document| {
        let service = document["routes"][0]["tools"][0]["_meta"]["endpoint"]
            .as_str()
            .unwrap()
            .rsplit_once('/')
            .unwrap()
            .0
            .to_string();
        let mut tools = search_tools(&service);
        for tool in &mut tools {
            if pinned.iter().any(|p| tool["name"] == p.as_str()) {
                tool["_meta"]["pinned"] = json!(true);
            }
        }
        document["routes"][0]["tools"] = Value::Array(tools);
        document["routes"][0]["toolSearch"] = tool_search;
        // A tool of another route, which the core route's search never returns.
        let payroll = json!({"name": "payroll_slip", "description": "Shows an employee's payroll slip.",
                             "inputSchema": {"type": "object"},
                             "_meta": {"endpoint": format!("{service}/payroll")}});
        document["routes"][1]["tools"].as_array_mut().unwrap().push(payroll);
    })
    .await
}

async fn list(h: &Harness, modern: bool) -> Value {
    request(h, modern, "tools/list", json!({})).await.json()
}

async fn request(h: &Harness, modern: bool, method: &str, params: Value) -> Answer {
    if modern {
        let name = params.get("name").and_then(Value::as_str);
        let body = modern_body(&json!(3), method, &params, "2026-07-28");
        send(
            h,
            "/mcp/core",
            &modern_headers(method, name),
            &body.to_string(),
        )
        .await
    } else {
        h.post("/mcp/core", &rpc(json!(3), method, params), &[])
            .await
    }
}

async fn search(h: &Harness, modern: bool, arguments: Value) -> Answer {
    request(
        h,
        modern,
        "tools/call",
        json!({"name": "search_tools", "arguments": arguments}),
    )
    .await
}

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The names a search found, after checking the result's shape (CONTRACT S3).
fn found(answer: &Answer) -> Vec<String> {
    let body = answer.json();
    let result = &body["result"];
    assert_eq!(result["isError"], false, "{body}");
    let structured = &result["structuredContent"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["content"][0]["type"], "text");
    assert_eq!(result["content"].as_array().unwrap().len(), 1);
    // The same JSON, compact, in the text.
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), *structured);
    assert!(!text.contains(": ") && !text.contains(", "), "{text}");
    names(&structured["tools"])
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn s1_s2_mode_add_lists_search_tools_first_then_every_tool_in_both_eras() {
    let h = harness(json!({"mode": "add"}), &[]).await;
    for modern in [false, true] {
        let body = list(&h, modern).await;
        let tools = &body["result"]["tools"];
        assert_eq!(
            names(tools),
            [
                "search_tools",
                "search_documents",
                "leave_balance",
                "createJiraTicket",
                "vpn_status",
                "weather_forecast"
            ]
        );
        let entry = &tools[0];
        assert_eq!(entry["title"], "Search tools");
        assert_eq!(
            entry["inputSchema"],
            serde_json::from_str::<Value>(INPUT_SCHEMA).unwrap()
        );
        assert_eq!(entry["outputSchema"]["required"], json!(["tools"]));
        assert_eq!(
            entry["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": false})
        );
        assert!(entry.get("_meta").is_none());
    }
    // The entry's text holds the inputSchema exactly as S2 writes it.
    let raw = request(&h, false, "tools/list", json!({})).await;
    let text = String::from_utf8(raw.body.to_vec()).unwrap();
    assert!(
        text.contains(&format!("\"inputSchema\":{INPUT_SCHEMA}")),
        "{text}"
    );
}

#[tokio::test]
async fn s2_mode_only_lists_search_tools_and_pinned_tools_and_every_tool_stays_callable() {
    let h = harness(json!({"mode": "only"}), &["weather_forecast"]).await;
    let body = list(&h, false).await;
    assert_eq!(
        names(&body["result"]["tools"]),
        ["search_tools", "weather_forecast"]
    );
    // An unlisted tool is found by the search and called as usual.
    assert_eq!(
        found(&search(&h, false, json!({"query": "document search"})).await)[0],
        "search_documents"
    );
    Mock::given(path("/search_documents"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"hits": 1})))
        .mount(&h.tool_service)
        .await;
    let called = h
        .call_tool("search_documents", json!({"query": "vpn"}))
        .await;
    let result = &called.json()["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], r#"{"hits":1}"#);
}

#[tokio::test]
async fn s3_results_are_list_entries_best_first_limited_never_itself_nor_another_routes() {
    let h = harness(json!({"mode": "add", "maxResults": 2}), &[]).await;
    let listed = list(&h, false).await["result"]["tools"].clone();
    for modern in [false, true] {
        let answer = search(&h, modern, json!({"query": "weather forecast for a city"})).await;
        assert_eq!(found(&answer), ["weather_forecast"]);
        // Each entry exactly as tools/list writes it.
        let body = answer.json();
        let entry = &body["result"]["structuredContent"]["tools"][0];
        assert_eq!(entry, &listed[5]);
        if modern {
            assert_eq!(body["result"]["resultType"], "complete");
        }
    }
    // maxResults is the default limit; limit overrides it.
    let many = json!({"query": "search documents weather VPN Jira 연차"});
    assert_eq!(found(&search(&h, false, many.clone()).await).len(), 2);
    let mut more = many.clone();
    more["limit"] = json!(4);
    assert_eq!(found(&search(&h, false, more).await).len(), 4);
    // CONTRACT S2: a whole number in any JSON form is the same limit (2.0 and 2e0 pass the
    // schema as integers).
    for written in ["3", "3.0", "3e0", "0.3e1"] {
        let mut limited = many.clone();
        limited["limit"] = serde_json::from_str(written).unwrap();
        assert_eq!(
            found(&search(&h, false, limited).await).len(),
            3,
            "{written}"
        );
    }
    // Nothing matches: an empty list, not an error.
    assert!(found(&search(&h, false, json!({"query": "zzzz qqqq"})).await).is_empty());
    // Never itself (its own name and words), never the hr route's tools.
    let own = found(&search(&h, false, json!({"query": "search tools", "limit": 50})).await);
    assert!(!own.iter().any(|n| n == "search_tools"), "{own:?}");
    let other = found(&search(&h, false, json!({"query": "payroll slip", "limit": 50})).await);
    assert!(other.is_empty(), "{other:?}");
}

#[tokio::test]
async fn s4_korean_and_mixed_queries_find_their_tools_whatever_the_spacing_and_particles() {
    let h = harness(json!({"mode": "add"}), &[]).await;
    let cases = [
        // Particles and other spacing than the description's.
        ("연차 휴가가 며칠 남았는지", "leave_balance"),
        ("남은연차", "leave_balance"),
        ("사번으로 잔여 연차 조회", "leave_balance"),
        ("Jira 티켓을 만들어 줘", "createJiraTicket"),
        ("create a jira ticket", "createJiraTicket"),
        ("VPN 연결이 안 돼요", "vpn_status"),
        ("vpn 오류", "vpn_status"),
        ("날씨 weather in Seoul", "weather_forecast"),
        ("find documents about the budget", "search_documents"),
    ];
    for (query, tool) in cases {
        let names = found(&search(&h, false, json!({"query": query})).await);
        assert_eq!(
            names.first().map(String::as_str),
            Some(tool),
            "{query}: {names:?}"
        );
    }
}

#[tokio::test]
async fn s2_x2_search_arguments_are_validated_like_any_tools() {
    let h = harness(json!({"mode": "add"}), &[]).await;
    let cases = [
        (json!({}), "Invalid params: 'query' is required"),
        (
            json!({"query": ""}),
            "Invalid params: \"\" is shorter than 1 character (at /query)",
        ),
        (
            json!({"query": "x", "limit": 0}),
            "Invalid params: 0 is less than the minimum of 1 (at /limit)",
        ),
        (
            json!({"query": "x", "limit": 51}),
            "Invalid params: 51 is greater than the maximum of 50 (at /limit)",
        ),
        (
            json!({"query": "x", "top": 3}),
            "Invalid params: Additional properties are not allowed ('top' was unexpected)",
        ),
        (
            json!({"query": 5}),
            "Invalid params: 5 is not of type \"string\" (at /query)",
        ),
    ];
    for (arguments, message) in cases {
        for modern in [false, true] {
            search(&h, modern, arguments.clone())
                .await
                .assert_rpc_error(-32602, message, &json!(3));
        }
    }
    let long = "가".repeat(501);
    let answer = search(&h, false, json!({"query": long})).await;
    assert_eq!(answer.json()["error"]["code"], -32602);
}

#[tokio::test]
async fn s1_without_tool_search_there_is_no_search_tool() {
    let h = Harness::fixed().await;
    let body = list(&h, false).await;
    assert!(!names(&body["result"]["tools"]).contains(&"search_tools"));
    search(&h, false, json!({"query": "x"}))
        .await
        .assert_rpc_error(
            -32602,
            "Invalid params: unknown tool 'search_tools'",
            &json!(3),
        );
}

#[test]
fn s1_s2_wrong_tool_search_and_pinned_are_load_problems() {
    let tool = |name: &str, meta: Value| {
        let mut meta_object = json!({"endpoint": "http://127.0.0.1:9/t"});
        for (key, value) in meta.as_object().unwrap() {
            meta_object[key] = value.clone();
        }
        json!({"name": name, "inputSchema": {"type": "object"}, "_meta": meta_object})
    };
    let problems = |search: Value, tools: Vec<Value>| -> Vec<String> {
        let document = json!({"manifestVersion": 1, "routes": [
            {"routeKey": "core", "toolSearch": search, "tools": tools}]});
        compile_manifest(&document)
            .err()
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let plain = || vec![tool("a", json!({}))];
    assert_eq!(
        problems(json!("add"), plain()),
        ["routes[0].toolSearch: must be an object with the search's mode"]
    );
    assert_eq!(
        problems(json!({"mode": "all"}), plain()),
        ["routes[0].toolSearch.mode: must be \"add\" or \"only\""]
    );
    for bad in [json!(0), json!(51), json!(2.5), json!(51.0), json!("5")] {
        assert_eq!(
            problems(json!({"mode": "add", "maxResults": bad}), plain()),
            ["routes[0].toolSearch.maxResults: must be a whole number from 1 to 50"]
        );
    }
    let taken = vec![
        tool("search_tools", json!({"active": false})),
        tool("a", json!({})),
    ];
    assert_eq!(
        problems(json!({"mode": "only"}), taken),
        [
            "routes[0].toolSearch: the route has a tool named 'search_tools', the name of its search tool: rename that tool or leave toolSearch out"
        ]
    );
    assert_eq!(
        problems(
            json!({"mode": "only"}),
            vec![tool("a", json!({"pinned": "yes"}))]
        ),
        ["routes[0].tools[0]._meta.pinned: must be a boolean"]
    );
    // A whole number written 5.0 is 5, as search_tools' own limit takes it.
    let five = json!({"manifestVersion": 1, "routes": [
        {"routeKey": "core", "toolSearch": {"mode": "add", "maxResults": 5.0}, "tools": plain()}]});
    let snapshot = compile_manifest(&five).unwrap();
    let route = snapshot.fixed_route("core").unwrap();
    assert_eq!(route.search().map(|s| s.max_results), Some(5));
    // Without toolSearch a tool may be named search_tools.
    let document = json!({"manifestVersion": 1, "routes": [
        {"routeKey": "core", "tools": [tool("search_tools", json!({}))]}]});
    assert!(compile_manifest(&document).is_ok());
    // The single-route form takes toolSearch at the top level.
    let single = json!({"toolSearch": {"mode": "add", "maxResults": 50},
                        "tools": [tool("a", json!({"pinned": true}))]});
    let snapshot = compile_manifest(&single).unwrap();
    let route = snapshot.fixed_route("core").unwrap();
    assert_eq!(route.search().map(|s| s.max_results), Some(50));
    assert_eq!(route.tools_list_result().len(), 2);
}

#[tokio::test]
async fn s3_a_result_over_the_response_limit_is_the_searchs_own_is_error_result() {
    let mut config = Config::fixed_defaults();
    config.max_response_bytes = 1500;
    let h = Harness::with_manifest(config, |document| {
        let service = "http://127.0.0.1:9";
        document["routes"][0]["tools"] = Value::Array(search_tools(service));
        document["routes"][0]["toolSearch"] = json!({"mode": "add"});
    })
    .await;
    // One tool fits; five do not.
    let one = search(&h, false, json!({"query": "weather", "limit": 1})).await;
    assert_eq!(found(&one), ["weather_forecast"]);
    let many = json!({"query": "search documents weather VPN Jira 연차", "limit": 5});
    let answer = search(&h, false, many).await;
    assert!(answer.body.len() <= 1500);
    let body = answer.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "search_tools result is too large: it would exceed the gateway's 1500-byte response \
         limit; ask for fewer tools with limit"
    );
}
