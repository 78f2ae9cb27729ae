//! REST-shaped tools (CONTRACT M2, X9) against a real REST server on loopback that records what
//! it receives: where each argument goes for each method, how values are encoded, what is
//! refused before the server is called, and the load-time checks of `_meta.parameters`.

use gateway_tests::{Answer, Harness};
use mcp_gateway::Config;
use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};
use wiremock::{Mock, ResponseTemplate, matchers::any};

/// The REST tools added to route `core` of the test manifest, all on the recording server.
fn rest_tools(base: &str) -> Vec<Value> {
    let tool = |name: &str, method: &str, endpoint: &str, schema: Value, parameters: Value| {
        json!({
            "name": name,
            "description": format!("{method} {endpoint}"),
            "inputSchema": schema,
            "_meta": {"endpoint": format!("{base}{endpoint}"), "method": method,
                      "parameters": parameters}
        })
    };
    vec![
        tool(
            "get_employee",
            "GET",
            "/employees/{id}",
            json!({"type": "object",
                   "properties": {"id": {"type": ["string", "integer"]},
                                  "fields": {"type": "array", "items": {"type": "string"}},
                                  "lang": {"type": "string"},
                                  "verbose": {"type": "boolean"},
                                  "filter": {},
                                  "X-Tenant": {},
                                  "X-Trace": {"type": "array", "items": {"type": "integer"}}},
                   "required": ["id"]}),
            json!({"id": "path", "fields": "query", "lang": "query", "verbose": "query",
                   "filter": "query", "X-Tenant": "header", "X-Trace": "header"}),
        ),
        tool(
            "head_employee",
            "HEAD",
            "/employees/{id}",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
            json!({"id": "path"}),
        ),
        tool(
            "create_ticket",
            "POST",
            "/teams/{team}/tickets?api-version=2",
            json!({"type": "object",
                   "properties": {"team": {"type": "string"}, "title": {"type": "string"},
                                  "priority": {"type": "integer"}, "dryRun": {"type": "boolean"},
                                  "X-Tenant": {"type": "string"}},
                   "required": ["team", "title"]}),
            json!({"team": "path", "dryRun": "query", "X-Tenant": "header"}),
        ),
        tool(
            "replace_labels",
            "PUT",
            "/tickets/{id}/labels",
            json!({"type": "object",
                   "properties": {"id": {"type": "integer"},
                                  "body": {"type": "array", "items": {"type": "string"}}},
                   "required": ["id", "body"]}),
            json!({"id": "path", "body": "wholeBody"}),
        ),
        tool(
            "replace_labels_optional",
            "PUT",
            "/tickets/{id}/labels",
            json!({"type": "object",
                   "properties": {"id": {"type": "integer"},
                                  "body": {"type": "array", "items": {"type": "string"}}},
                   "required": ["id"]}),
            json!({"id": "path", "body": "wholeBody"}),
        ),
        tool(
            "patch_ticket",
            "PATCH",
            "/tickets/{id}",
            json!({"type": "object",
                   "properties": {"id": {"type": "integer"}, "status": {"type": "string"}},
                   "required": ["id"]}),
            json!({"id": "path", "status": "body"}),
        ),
        tool(
            "delete_ticket",
            "DELETE",
            "/tickets/{id}",
            json!({"type": "object", "properties": {"id": {"type": "integer"}},
                   "required": ["id"], "additionalProperties": false}),
            json!({"id": "path"}),
        ),
        tool(
            "report",
            "GET",
            "/reports/{year}/summary.{format}",
            json!({"type": "object",
                   "properties": {"year": {"type": "integer"}, "format": {"type": "string"}},
                   "required": ["year", "format"]}),
            json!({"year": "path", "format": "path"}),
        ),
    ]
}

async fn harness() -> Harness {
    // The recording server is the harness's own Tool Service: its URI is known only inside.
    Harness::with_manifest(Config::fixed_defaults(), |manifest| {
        let base = manifest["routes"][0]["tools"][0]["_meta"]["endpoint"]
            .as_str()
            .unwrap()
            .trim_end_matches("/search")
            .to_string();
        let tools = manifest["routes"][0]["tools"].as_array_mut().unwrap();
        tools.extend(rest_tools(&base));
    })
    .await
}

/// What the recording server received, one entry per request.
struct Received {
    method: String,
    /// The path and query as they arrived on the wire (percent-encoding kept).
    target: String,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

async fn received(h: &Harness) -> Vec<Received> {
    h.tool_service
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .map(|r| Received {
            method: r.method.to_string(),
            target: match r.url.query() {
                Some(query) => format!("{}?{query}", r.url.path()),
                None => r.url.path().to_string(),
            },
            headers: r.headers.clone(),
            body: r.body,
        })
        .collect()
}

async fn answer_ok(h: &Harness) {
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&h.tool_service)
        .await;
}

#[track_caller]
fn assert_ok(answer: &Answer) {
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
}

/// Asserts a `-32602` with exactly `message`, and that nothing reached the server.
async fn assert_refused_before_call(h: &Harness, answer: &Answer, message: &str) {
    answer.assert_rpc_error(-32602, message, &json!(1));
    assert!(received(h).await.is_empty(), "the server was called");
}

#[tokio::test]
async fn x9_get_places_path_query_and_header_arguments() {
    let h = harness().await;
    answer_ok(&h).await;
    let answer = h
        .call_tool(
            "get_employee",
            json!({"id": "E 1/2", "fields": ["name", "부서", "a&b=c"], "lang": "ko KR",
                   "verbose": true, "X-Tenant": "acme-01", "X-Trace": [7, 8], "filter": null}),
        )
        .await;
    assert_ok(&answer);
    let [request] = &received(&h).await[..] else {
        panic!("one request expected")
    };
    assert_eq!(request.method, "GET");
    assert_eq!(
        request.target,
        "/employees/E%201%2F2?fields=name&fields=%EB%B6%80%EC%84%9C&fields=a%26b%3Dc\
         &lang=ko%20KR&verbose=true"
    );
    assert_eq!(request.headers["x-tenant"], "acme-01");
    assert_eq!(request.headers["x-trace"], "7,8");
    assert!(request.headers.get("content-type").is_none());
    assert!(request.body.is_empty());
    // X4's forwarded headers travel as for every tool.
    assert_eq!(
        request.headers["guid"].to_str().unwrap(),
        answer.header("guid").unwrap()
    );
}

#[tokio::test]
async fn x9_numbers_in_the_path_and_a_partial_segment_template() {
    let h = harness().await;
    answer_ok(&h).await;
    assert_ok(&h.call_tool("get_employee", json!({"id": 1042})).await);
    assert_ok(
        &h.call_tool("report", json!({"year": 2026, "format": "csv"}))
            .await,
    );
    let targets: Vec<String> = received(&h).await.into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["/employees/1042", "/reports/2026/summary.csv"]);
}

#[tokio::test]
async fn x9_post_sends_body_members_after_the_endpoints_own_query() {
    let h = harness().await;
    answer_ok(&h).await;
    let answer = h
        .call_tool(
            "create_ticket",
            json!({"team": "플랫폼", "title": "디스크 \"교체\"", "X-Tenant": "acme",
                   "dryRun": false, "priority": 2}),
        )
        .await;
    assert_ok(&answer);
    let [request] = &received(&h).await[..] else {
        panic!("one request expected")
    };
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.target,
        "/teams/%ED%94%8C%EB%9E%AB%ED%8F%BC/tickets?api-version=2&dryRun=false"
    );
    assert_eq!(request.headers["content-type"], "application/json");
    assert_eq!(request.headers["x-tenant"], "acme");
    // Members in argument order, byte for byte.
    assert_eq!(
        String::from_utf8(request.body.clone()).unwrap(),
        r#"{"title":"디스크 \"교체\"","priority":2}"#
    );
}

#[tokio::test]
async fn x9_put_whole_body_patch_members_delete_and_head_without_body() {
    let h = harness().await;
    answer_ok(&h).await;
    assert_ok(
        &h.call_tool("replace_labels", json!({"id": 7, "body": ["urgent", "hw"]}))
            .await,
    );
    assert_ok(
        &h.call_tool("patch_ticket", json!({"id": 7, "status": "closed"}))
            .await,
    );
    // A tool that declares body members sends `{}` when none was given.
    assert_ok(&h.call_tool("patch_ticket", json!({"id": 8})).await);
    assert_ok(&h.call_tool("delete_ticket", json!({"id": 7})).await);
    // An absent wholeBody argument sends no body (the schema makes `body` optional here).
    assert_ok(
        &h.call_tool("replace_labels_optional", json!({"id": 9}))
            .await,
    );
    let requests = received(&h).await;
    let seen: Vec<(&str, &str, &str, Option<&str>)> = requests
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.target.as_str(),
                std::str::from_utf8(&r.body).unwrap(),
                r.headers.get("content-type").map(|v| v.to_str().unwrap()),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "PUT",
                "/tickets/7/labels",
                r#"["urgent","hw"]"#,
                Some("application/json")
            ),
            (
                "PATCH",
                "/tickets/7",
                r#"{"status":"closed"}"#,
                Some("application/json")
            ),
            ("PATCH", "/tickets/8", "{}", Some("application/json")),
            ("DELETE", "/tickets/7", "", None),
            ("PUT", "/tickets/9/labels", "", None),
        ]
    );
}

#[tokio::test]
async fn x9_head_answer_is_an_empty_text_whatever_its_media_type() {
    let h = harness().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).insert_header("content-type", "text/html"))
        .mount(&h.tool_service)
        .await;
    let answer = h.call_tool("head_employee", json!({"id": "E1"})).await;
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "");
    assert_eq!(received(&h).await[0].method, "HEAD");
}

#[tokio::test]
async fn x2_input_schema_violations_are_refused_before_the_server_is_called() {
    let h = harness().await;
    answer_ok(&h).await;
    let answer = h.call_tool("get_employee", json!({"lang": "ko"})).await;
    assert_refused_before_call(&h, &answer, "Invalid params: 'id' is required").await;
    let answer = h
        .call_tool("get_employee", json!({"id": "E1", "fields": "name"}))
        .await;
    assert_refused_before_call(
        &h,
        &answer,
        "Invalid params: \"name\" is not of type \"array\" (at /fields)",
    )
    .await;
}

#[tokio::test]
async fn x6_not_found_and_server_error_are_is_error_results() {
    let h = harness().await;
    for (status, text) in [(404, "no employee E9"), (500, "database down")] {
        h.tool_answers(
            "/employees/E9",
            ResponseTemplate::new(status).set_body_string(text),
        )
        .await;
        let body = h
            .call_tool("get_employee", json!({"id": "E9"}))
            .await
            .json();
        assert_eq!(body["result"]["isError"], true, "{body}");
        let shown = body["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            shown.contains(&status.to_string()) && shown.contains(text),
            "{shown}"
        );
        assert!(!shown.contains("127.0.0.1"), "endpoint leaked: {shown}");
    }
}

#[tokio::test]
async fn x9_dot_segments_and_empty_path_values_are_refused() {
    let h = harness().await;
    answer_ok(&h).await;
    for id in ["", ".", ".."] {
        let answer = h.call_tool("get_employee", json!({ "id": id })).await;
        assert_refused_before_call(
            &h,
            &answer,
            "Invalid params: path argument 'id' must not be empty, '.' or '..'",
        )
        .await;
    }
}

#[tokio::test]
async fn x9_arguments_cannot_change_the_host_or_leave_their_segment() {
    let h = harness().await;
    answer_ok(&h).await;
    let attempts = [
        ("../admin", "/employees/..%2Fadmin"),
        ("%2e%2e", "/employees/%252e%252e"),
        ("//evil.example/x", "/employees/%2F%2Fevil.example%2Fx"),
        ("@evil.example", "/employees/%40evil.example"),
        ("x?admin=1#top", "/employees/x%3Fadmin%3D1%23top"),
        ("a\\..\\b", "/employees/a%5C..%5Cb"),
        (
            "http://evil.example",
            "/employees/http%3A%2F%2Fevil.example",
        ),
    ];
    for (id, _) in attempts {
        assert_ok(&h.call_tool("get_employee", json!({ "id": id })).await);
    }
    // Every request reached the recording server itself (same host and port), one segment deep.
    let targets: Vec<String> = received(&h).await.into_iter().map(|r| r.target).collect();
    let expected: Vec<&str> = attempts.iter().map(|(_, target)| *target).collect();
    assert_eq!(targets, expected);
    // A query name cannot add pairs either.
    h.tool_service.reset().await;
    answer_ok(&h).await;
    assert_ok(
        &h.call_tool("get_employee", json!({"id": "E1", "lang": "ko&admin=true"}))
            .await,
    );
    assert_eq!(
        received(&h).await[0].target,
        "/employees/E1?lang=ko%26admin%3Dtrue"
    );
}

#[tokio::test]
async fn x9_header_injection_and_bad_values_are_refused_without_echo() {
    let h = harness().await;
    answer_ok(&h).await;
    for value in [
        json!("a b"),
        json!("acme\r\nX-Evil: 1"),
        json!("acme\nX-Evil: 1"),
        json!(""),
        json!("테넌트"),
        json!("x".repeat(2049)),
        json!({"tenant": "acme"}),
        json!([{"a": 1}]),
    ] {
        let answer = h
            .call_tool("get_employee", json!({"id": "E1", "X-Tenant": value}))
            .await;
        assert_refused_before_call(
            &h,
            &answer,
            "Invalid params: header argument 'X-Tenant' must be 1-2048 printable ASCII characters without spaces",
        )
        .await;
        assert!(!String::from_utf8_lossy(&answer.body).contains("X-Evil"));
    }
}

#[tokio::test]
async fn x9_values_without_a_place_are_refused() {
    let h = harness().await;
    answer_ok(&h).await;
    let answer = h
        .call_tool(
            "get_employee",
            json!({"id": "E1", "filter": {"dept": "hr"}}),
        )
        .await;
    assert_refused_before_call(
        &h,
        &answer,
        "Invalid params: query argument 'filter' must be a string, number, boolean or an array of them",
    )
    .await;
    let answer = h
        .call_tool("get_employee", json!({"id": "E1", "extra": 1}))
        .await;
    assert_refused_before_call(
        &h,
        &answer,
        "Invalid params: argument 'extra' has no place in a GET request",
    )
    .await;
    let answer = h.call_tool("get_employee", json!({"id": true})).await;
    assert_refused_before_call(
        &h,
        &answer,
        "Invalid params: true is not of types \"integer\", \"string\" (at /id)",
    )
    .await;
}

/// The manifest of one REST tool with `edit` applied.
fn manifest_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut tool = json!({
        "name": "t",
        "inputSchema": {"type": "object",
                        "properties": {"id": {"type": "string"}, "q": {"type": "string"},
                                       "meta": {"type": "object"}, "ids": {"type": "array"}},
                        "required": ["id"]},
        "_meta": {"endpoint": "https://api.example/items/{id}", "method": "POST",
                  "parameters": {"id": "path"}}
    });
    edit(&mut tool);
    json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [tool]}]})
}

#[track_caller]
fn problems(manifest: &Value) -> Vec<String> {
    compile_manifest(manifest)
        .expect_err("refused")
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn m2_valid_rest_tool_compiles() {
    assert!(compile_manifest(&manifest_with(|_| {})).is_ok());
    let get = manifest_with(|t| {
        t["_meta"]["method"] = json!("GET");
        t["_meta"]["parameters"] =
            json!({"id": "path", "q": "query", "meta": "query", "ids": "query"});
        t["inputSchema"]["properties"]["meta"] = json!({"type": ["string", "object"]});
    });
    assert!(compile_manifest(&get).is_ok());
}

#[test]
fn m2_table_of_refused_parameters_with_their_json_paths() {
    let at = "routes[0].tools[0]._meta";
    let cases: Vec<(Value, String)> = vec![
        (
            manifest_with(|t| t["_meta"]["parameters"] = json!(["id"])),
            format!("{at}.parameters: must be an object mapping argument names to locations"),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"]["q"] = json!("cookie")),
            format!(
                "{at}.parameters.q: must be one of \"path\", \"query\", \"header\", \"body\", \"wholeBody\""
            ),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"]["nope"] = json!("query")),
            format!("{at}.parameters.nope: names no property of the inputSchema"),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"] = json!({})),
            format!("{at}.endpoint: placeholder '{{id}}' is not a path parameter"),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"]["q"] = json!("path")),
            format!("{at}.parameters.q: path parameter 'q' has no placeholder in the endpoint"),
        ),
        (
            manifest_with(|t| t["inputSchema"]["required"] = json!([])),
            format!("{at}.parameters.id: path parameter 'id' must be required by the inputSchema"),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["endpoint"] = json!("https://api.example/items/{id}?v={q}");
            }),
            format!("{at}.endpoint: placeholders may only stand in the path"),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["endpoint"] = json!("https://api.example/items/{id");
            }),
            format!("{at}.endpoint: has an unbalanced '{{' or '}}'"),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"]["meta"] = json!("query")),
            format!("{at}.parameters.meta: a query parameter cannot be an object"),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["endpoint"] = json!("https://api.example/items/{id}/{ids}");
                t["_meta"]["parameters"]["ids"] = json!("path");
                t["inputSchema"]["required"] = json!(["id", "ids"]);
            }),
            format!("{at}.parameters.ids: a path parameter cannot be an array"),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"]["meta"] = json!("header")),
            format!("{at}.parameters.meta: a header parameter cannot be an object"),
        ),
        (
            manifest_with(|t| t["_meta"]["method"] = json!("GET")),
            format!("{at}.parameters.q: a GET tool has no body"),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["method"] = json!("HEAD");
                t["_meta"]["parameters"] =
                    json!({"id": "path", "q": "wholeBody", "meta": "query", "ids": "query"});
                t["inputSchema"]["properties"]["meta"] = json!({"type": "string"});
            }),
            format!("{at}.parameters.q: a HEAD tool has no body"),
        ),
        (
            manifest_with(|t| t["_meta"]["parameters"]["q"] = json!("wholeBody")),
            format!("{at}.parameters: wholeBody must be the only body argument"),
        ),
        (
            manifest_with(|t| t["_meta"]["method"] = json!("TRACE")),
            format!("{at}.method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE"),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["parameters"]["q"] = json!("header");
                t["inputSchema"]["properties"]["q "] = json!({"type": "string"});
                t["_meta"]["parameters"]["q "] = json!("header");
            }),
            format!(
                "{at}.parameters.q : header name 'q ' is not an HTTP header token (letters, digits and !#$%&'*+-.^_`|~)"
            ),
        ),
        (
            manifest_with(|t| {
                t["inputSchema"]["properties"]["Q"] = json!({"type": "string"});
                t["_meta"]["parameters"]["q"] = json!("header");
                t["_meta"]["parameters"]["Q"] = json!("header");
            }),
            format!("{at}.parameters.Q: header 'q' is named twice (case-insensitively)"),
        ),
        (
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [{
                "name": "legacy", "inputSchema": {"type": "object"},
                "_meta": {"endpoint": "https://api.example/items/{id}"}}]}]}),
            format!("{at}.endpoint: placeholder '{{id}}' is not a path parameter"),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["endpoint"] = json!("https://user:secret@api.example/items/{id}");
            }),
            format!(
                "{at}.endpoint: must not carry a user name or password (a credential goes in _meta.auth)"
            ),
        ),
        (
            manifest_with(|t| {
                t["_meta"]["endpoint"] = json!("https://api.example/v1/../admin/{id}");
            }),
            format!("{at}.endpoint: must not hold '.' or '..' path segments"),
        ),
        (
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [{
                "name": "legacy", "inputSchema": {"type": "object"},
                "_meta": {"endpoint": "https://api.example/v1/%2E%2e/admin"}}]}]}),
            format!("{at}.endpoint: must not hold '.' or '..' path segments"),
        ),
    ];
    for (manifest, expected) in cases {
        let found = problems(&manifest);
        assert!(
            found.contains(&expected),
            "expected {expected:?} in {found:?}"
        );
    }
}

#[test]
fn m2_every_header_the_gateway_sets_or_forwards_is_reserved() {
    for name in mcp_gateway::registry::RESERVED_HEADERS
        .iter()
        .copied()
        .chain(["Authorization", "X-Request-ID", "Employee-No", "Cookie"])
    {
        let manifest = manifest_with(|t| {
            t["inputSchema"]["properties"][name] = json!({"type": "string"});
            t["_meta"]["parameters"][name] = json!("header");
        });
        assert!(
            problems(&manifest).contains(&format!(
                "routes[0].tools[0]._meta.parameters.{name}: header name '{name}' is reserved by the gateway"
            )),
            "{name}"
        );
    }
}
