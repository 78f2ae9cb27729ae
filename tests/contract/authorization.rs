//! Authorization policies (CONTRACT Z1–Z8): Cedar policies on a route decide every
//! `tools/call` in both eras, before the Tool Service is called; a tool no policy could permit
//! is hidden from `tools/list` and `search_tools` and answered as an unknown tool; shadow mode
//! enforces nothing; policies that fail to parse or validate fail the load.

use gateway_tests::{Answer, Harness, rpc};
use mcp_gateway::Config;
use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, ResponseTemplate};

use super::modern::{modern_body, modern_headers, send};

/// The policies of the `core` route: searches for anyone, refunds up to 500 and never in KRW,
/// an overflow that errors for any `count` of 2 or more, payroll reports for HR only.
pub(crate) const POLICIES: &str = r#"
@id("anyone-searches")
permit(principal, action == Gateway::Action::"search_documents", resource);

@id("refunds")
permit(principal, action == Gateway::Action::"refund", resource);

@id("big-refunds")
@reason("refunds above 500 need a person")
forbid(principal, action == Gateway::Action::"refund", resource)
when { context.input.amount.greaterThan(decimal("500.0")) };

@id("no-krw")
forbid(principal, action == Gateway::Action::"refund", resource)
when { context.input has currency && context.input.currency == "KRW" };

@id("count-guard")
forbid(principal, action == Gateway::Action::"refund", resource)
when { context.input has count && context.input.count * 4611686018427387904 > 0 };

@id("hr-reports")
permit(principal, action == Gateway::Action::"payroll_report", resource)
when { principal.groups.contains("hr") };
"#;

/// The `core` route's tools with `refund` and `payroll_report` added, and `authorization`.
pub(super) fn with_policies(document: &mut Value, mode: &str, policies: &str) {
    let service = document["routes"][0]["tools"][0]["_meta"]["endpoint"]
        .as_str()
        .unwrap()
        .rsplit_once('/')
        .unwrap()
        .0
        .to_string();
    let tools = document["routes"][0]["tools"].as_array_mut().unwrap();
    tools.push(json!({
        "name": "refund", "description": "Refunds an order.",
        "inputSchema": {"type": "object", "properties": {
            "amount": {"type": "number"}, "currency": {"type": "string"},
            "count": {"type": "integer"}}, "required": ["amount"]},
        "_meta": {"endpoint": format!("{service}/refund")}
    }));
    tools.push(json!({
        "name": "payroll_report", "description": "Payroll of a month.",
        "inputSchema": {"type": "object", "properties": {
            "month": {"type": "string", "x-mcp-header": "Month"}}},
        "_meta": {"endpoint": format!("{service}/payroll")}
    }));
    document["routes"][0]["authorization"] = json!({"mode": mode, "policies": policies});
}

async fn harness(mode: &str) -> Harness {
    harness_with(|d| with_policies(d, mode, POLICIES)).await
}

/// A harness on the manifest `edit` makes, with the Tool Service answering `/refund`,
/// `/payroll` and `/search`.
pub(super) async fn harness_with(edit: impl FnOnce(&mut Value)) -> Harness {
    let h = Harness::with_manifest(Config::fixed_defaults(), edit).await;
    for route in ["/refund", "/payroll", "/search"] {
        Mock::given(path(route))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
            .mount(&h.tool_service)
            .await;
    }
    h
}

const GUID: (&str, &str) = ("guid", "0b5e7c0a-1d2e-4f3a-9b8c-7d6e5f4a3b2c");

pub(super) async fn call(h: &Harness, name: &str, arguments: Value) -> Answer {
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    h.post("/mcp/core", &body, &[GUID]).await
}

async fn modern_call(h: &Harness, name: &str, arguments: Value) -> Answer {
    let body = modern_body(
        &json!(1),
        "tools/call",
        &json!({"name": name, "arguments": arguments}),
        "2026-07-28",
    );
    let mut headers = modern_headers("tools/call", Some(name));
    headers.push((GUID.0.into(), GUID.1.into()));
    send(h, "/mcp/core", &headers, &body.to_string()).await
}

pub(super) fn text(answer: &Answer) -> String {
    let json = answer.json();
    assert_eq!(json["result"]["isError"], true, "{json}");
    json["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(super) async fn tool_service_calls(h: &Harness, route: &str) -> usize {
    let requests = h.tool_service.received_requests().await.unwrap_or_default();
    requests.iter().filter(|r| r.url.path() == route).count()
}

#[tokio::test]
async fn z4_a_permitted_call_reaches_the_tool_service_in_both_eras() {
    let h = harness("enforce").await;
    for answer in [
        call(&h, "refund", json!({"amount": 20})).await,
        modern_call(&h, "refund", json!({"amount": 20.5, "currency": "EUR"})).await,
    ] {
        assert_eq!(
            answer.json()["result"]["isError"],
            false,
            "{}",
            answer.json()
        );
    }
    assert_eq!(tool_service_calls(&h, "/refund").await, 2);
}

#[tokio::test]
async fn z6_a_call_a_forbid_denies_names_its_id_and_reason_and_sends_nothing() {
    let h = harness("enforce").await;
    for answer in [
        call(&h, "refund", json!({"amount": 900})).await,
        modern_call(&h, "refund", json!({"amount": 900})).await,
    ] {
        assert_eq!(
            text(&answer),
            "Tool call denied by policy 'big-refunds': refunds above 500 need a person"
        );
        assert!(!text(&answer).contains("forbid"), "never the policy text");
    }
    let krw = call(&h, "refund", json!({"amount": 5, "currency": "KRW"})).await;
    assert_eq!(text(&krw), "Tool call denied by policy 'no-krw'");
    assert_eq!(tool_service_calls(&h, "/refund").await, 0);
}

#[tokio::test]
async fn z5_a_forbid_whose_condition_errors_denies_the_call() {
    let h = harness("enforce").await;
    // 2 * 2^62 overflows a Long: Cedar's authorizer would skip the forbid and allow.
    let answer = call(&h, "refund", json!({"amount": 5, "count": 2})).await;
    assert_eq!(
        text(&answer),
        "Tool call denied: policy 'count-guard' could not be evaluated for these arguments"
    );
    let fine = call(&h, "refund", json!({"amount": 5, "count": 0})).await;
    assert_eq!(fine.json()["result"]["isError"], false);
    assert_eq!(tool_service_calls(&h, "/refund").await, 1);
}

#[tokio::test]
async fn z5_decimals_up_to_four_places_are_held_exactly_and_more_are_denied_never_rounded() {
    let h = harness("enforce").await;
    let at_four = call(&h, "refund", json!({"amount": 500.0001})).await;
    assert_eq!(
        text(&at_four),
        "Tool call denied by policy 'big-refunds': refunds above 500 need a person"
    );
    let exactly = call(&h, "refund", json!({"amount": 500.0000})).await;
    assert_eq!(exactly.json()["result"]["isError"], false);
    // 500.00001 would round to 500.0000, which the forbid lets through.
    let past_four = call(&h, "refund", json!({"amount": 500.00001})).await;
    assert_eq!(
        text(&past_four),
        "Tool call denied: argument '/amount' is a number the policies cannot hold exactly"
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":1,"count":12345678901234567890123}}}"#;
    let huge = h
        .send(gateway_tests::request(
            "POST",
            "/mcp/core",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            body.to_string(),
        ))
        .await;
    assert_eq!(
        text(&huge),
        "Tool call denied: argument '/count' is a number the policies cannot hold exactly"
    );
    assert_eq!(tool_service_calls(&h, "/refund").await, 1);
}

#[tokio::test]
async fn z6_a_call_no_permit_covers_says_no_policy_permits_these_arguments() {
    let h = harness("enforce").await;
    // `failing_tool` has no policy at all: hidden, so answered as unknown (Z4).
    let answer = call(&h, "failing_tool", json!({})).await;
    answer.assert_rpc_error(
        -32602,
        "Invalid params: unknown tool 'failing_tool'",
        &json!(1),
    );
    let small = Harness::with_manifest(Config::fixed_defaults(), |d| {
        with_policies(
            d,
            "enforce",
            r#"permit(principal, action == Gateway::Action::"refund", resource)
               when { context.input.amount.lessThan(decimal("100.0")) };"#,
        );
    })
    .await;
    let denied = call(&small, "refund", json!({"amount": 200})).await;
    assert_eq!(
        text(&denied),
        "Tool call denied: no policy permits these arguments"
    );
    assert_eq!(tool_service_calls(&small, "/refund").await, 0);
}

#[tokio::test]
async fn z4_a_tool_no_policy_permits_for_the_caller_is_answered_byte_for_byte_as_an_unknown_tool() {
    let h = harness("enforce").await;
    let plain = Harness::with_manifest(Config::fixed_defaults(), |_| {}).await;
    for arguments in [json!({"month": "2026-01"}), json!({"month": 7})] {
        let hidden = call(&h, "payroll_report", arguments.clone()).await;
        let unknown = call(&plain, "payroll_report", arguments).await;
        assert_eq!(hidden.status, unknown.status);
        assert_eq!(hidden.body, unknown.body);
        // No `Mcp-Param-Month` header: a hidden tool's are not checked, as an unknown one's.
        let hidden = modern_call(&h, "payroll_report", json!({"month": "2026-01"})).await;
        let unknown = modern_call(&plain, "payroll_report", json!({"month": "2026-01"})).await;
        assert_eq!(
            (hidden.status, &hidden.body),
            (unknown.status, &unknown.body)
        );
    }
    assert_eq!(tool_service_calls(&h, "/payroll").await, 0);
}

fn listed(answer: &Answer) -> Vec<String> {
    answer.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn z4_tools_list_shows_only_the_tools_some_policy_could_permit_in_both_eras() {
    let h = harness("enforce").await;
    let legacy = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await;
    assert_eq!(listed(&legacy), ["search_documents", "refund"]);
    let body = modern_body(&json!(2), "tools/list", &json!({}), "2026-07-28");
    let modern = send(
        &h,
        "/mcp/core",
        &modern_headers("tools/list", None),
        &body.to_string(),
    )
    .await;
    assert_eq!(listed(&modern), ["search_documents", "refund"]);
    // Z4: the list depends on the caller.
    assert_eq!(modern.json()["result"]["cacheScope"], "private");
}

/// Z4: a list asks Cedar once for tools whose slices hold the same policies, but not when a
/// condition reads `action` (then tools with the same policies are still decided apart).
#[tokio::test]
async fn z4_a_condition_on_the_action_is_decided_per_tool_in_lists() {
    let policies = r#"
@id("all-but-refund")
permit(principal, action in Gateway::Action::"call_tool", resource)
when { action != Gateway::Action::"refund" };
"#;
    let h = Harness::with_manifest(Config::fixed_defaults(), move |d| {
        with_policies(d, "enforce", policies);
    })
    .await;
    let answer = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await;
    let names = listed(&answer);
    assert!(!names.contains(&"refund".to_string()), "{names:?}");
    assert!(names.contains(&"payroll_report".to_string()), "{names:?}");
    assert!(names.contains(&"search_documents".to_string()), "{names:?}");

    // Tools named by the same policies are decided alike: both or neither.
    let grouped = r#"
@id("pair")
permit(principal, action in [Gateway::Action::"refund", Gateway::Action::"payroll_report"], resource)
when { principal.groups.contains("hr") };
@id("searches")
permit(principal, action == Gateway::Action::"search_documents", resource);
"#;
    let h = Harness::with_manifest(Config::fixed_defaults(), move |d| {
        with_policies(d, "enforce", grouped);
    })
    .await;
    let answer = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await;
    assert_eq!(listed(&answer), ["search_documents"]);
}

#[tokio::test]
async fn z7_shadow_mode_lists_everything_and_enforces_nothing() {
    let h = harness("shadow").await;
    let list = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await;
    let plain = Harness::with_manifest(Config::fixed_defaults(), |d| {
        with_policies(d, "shadow", "");
        d["routes"][0]
            .as_object_mut()
            .unwrap()
            .remove("authorization");
    })
    .await;
    let all = plain
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await;
    assert_eq!(listed(&list), listed(&all));
    for (name, arguments) in [
        ("refund", json!({"amount": 900})),
        ("refund", json!({"amount": 1, "count": 2})),
        ("payroll_report", json!({})),
    ] {
        let answer = call(&h, name, arguments).await;
        assert_eq!(
            answer.json()["result"]["isError"],
            false,
            "{}",
            answer.json()
        );
    }
    assert_eq!(tool_service_calls(&h, "/refund").await, 2);
    assert_eq!(tool_service_calls(&h, "/payroll").await, 1);
}

#[tokio::test]
async fn z4_search_tools_returns_only_the_tools_the_caller_could_call() {
    let h = Harness::with_manifest(Config::fixed_defaults(), |d| {
        with_policies(d, "enforce", POLICIES);
        d["routes"][0]["toolSearch"] = json!({"mode": "add"});
    })
    .await;
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": "payroll refund documents"}}),
    );
    let answer = h.post("/mcp/core", &body, &[]).await;
    let json = answer.json();
    let names: Vec<&str> = json["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"payroll_report"), "{names:?}");
    assert!(names.contains(&"refund"), "{names:?}");
    let list = h
        .post("/mcp/core", &rpc(json!(2), "tools/list", json!({})), &[])
        .await;
    assert_eq!(
        listed(&list),
        ["search_tools", "search_documents", "refund"]
    );
}

fn problems(policies: &str) -> Vec<String> {
    let mut document = gateway_tests::manifest("http://127.0.0.1:9");
    with_policies(&mut document, "enforce", policies);
    compile_manifest(&document)
        .expect_err("the policies do not load")
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[tokio::test]
async fn z8_policies_that_fail_to_parse_or_validate_fail_the_load_naming_the_policy() {
    let parse = problems("permit(principal, action, resource) when { oops");
    assert_eq!(parse.len(), 1, "{parse:?}");
    assert!(
        parse[0].starts_with(
            "routes[0].authorization.policies: Cedar cannot parse the policies (line 1, column"
        ),
        "{parse:?}"
    );
    let typo = problems(
        r#"@id("typo") permit(principal, action == Gateway::Action::"refund", resource) when { context.input.amout > decimal("1.0") };"#,
    );
    assert_eq!(typo.len(), 1, "{typo:?}");
    assert!(
        typo[0].starts_with("routes[0].authorization.policies: for policy `typo`, "),
        "{typo:?}"
    );
    let unknown_tool =
        problems(r#"permit(principal, action == Gateway::Action::"nope", resource);"#);
    assert!(
        unknown_tool[0].contains("for policy `policy0`"),
        "{unknown_tool:?}"
    );
    let mode = {
        let mut document = gateway_tests::manifest("http://127.0.0.1:9");
        with_policies(&mut document, "audit", POLICIES);
        compile_manifest(&document).unwrap_err()[0].to_string()
    };
    assert_eq!(
        mode,
        r#"routes[0].authorization.mode: must be "enforce" or "shadow""#
    );
    let repeated = problems(
        r#"@id("a") permit(principal, action, resource); @id("a") forbid(principal, action, resource);"#,
    );
    assert_eq!(
        repeated,
        ["routes[0].authorization.policies: policy 'a': the @id is repeated"]
    );
}

/// The digest `mcp-manifest policy embed` would write for `document`'s route 0 and `policies`
/// (without a JSON form, CONTRACT Z11).
fn digest_of(document: &Value, policies: &str) -> String {
    let tools = schema_texts(document);
    mcp_gateway::authz::policies::validation_digest(
        tools.iter().map(|(n, t)| (n.as_str(), t.as_slice())),
        policies,
    )
}

/// The digest of `document`'s route 0 and `policies` as releases before XXH3-128 wrote it
/// (CONTRACT Z11): `sha256:` and the SHA-256 of the contract's lines, computed here from the
/// lines themselves.
fn sha256_digest_of(document: &Value, policies: &str) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let tools = schema_texts(document);
    let mut lines = String::from("mcp-gateway authorization v2\ncedar 4.14.1\n");
    for (name, schema) in &tools {
        let _ = writeln!(
            lines,
            "{}: {}",
            serde_json::to_string(name).unwrap(),
            std::str::from_utf8(schema).unwrap()
        );
    }
    let _ = write!(lines, "tools {}\n{policies}", tools.len());
    format!(
        "sha256:{}",
        hex::encode(sha2::Sha256::digest(lines.as_bytes()))
    )
}

/// What the digest reads of `document`'s route 0: its tools' names and `inputSchema` texts in
/// order, but for the two entries of `versioned`, which the route's Cedar schema leaves out as
/// the load does.
pub(super) fn schema_texts(document: &Value) -> Vec<(String, Vec<u8>)> {
    document["routes"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] != "versioned")
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                serde_json::to_vec(&t["inputSchema"]).unwrap(),
            )
        })
        .collect()
}

const MISTYPED: &str = r#"@id("typo") permit(principal, action == Gateway::Action::"refund", resource) when { context.input.amout > decimal("1.0") };"#;

#[tokio::test]
async fn z11_a_matching_digest_stands_for_strict_validation_and_a_stale_one_does_not() {
    let mut document = gateway_tests::manifest("http://127.0.0.1:9");
    with_policies(&mut document, "enforce", MISTYPED);
    // What strict validation refuses (Z8) loads when its digest vouches for it: the digest is
    // `mcp-manifest policy embed`'s, written only after its own validation passed.
    let digest = digest_of(&document, MISTYPED);
    assert!(
        digest.starts_with("xxh3:") && digest.len() == 37,
        "{digest}"
    );
    document["routes"][0]["authorization"]["validated"] = json!(digest);
    let snapshot = compile_manifest(&document).expect("a matching digest is not validated again");
    let policies = snapshot.route("core").unwrap().policies().unwrap();
    assert_eq!(policies.validation_digest(), digest);
    // A digest of other policies, other tools or made up is stale: the load validates in full.
    for stale in [
        digest_of(&document, POLICIES),
        format!("xxh3:{}", "0".repeat(32)),
        format!("sha256:{}", "0".repeat(64)),
        sha256_digest_of(&document, POLICIES),
        "anything".to_string(),
    ] {
        document["routes"][0]["authorization"]["validated"] = json!(stale);
        let problems = compile_manifest(&document).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0]
                .to_string()
                .starts_with("routes[0].authorization.policies: for policy `typo`, "),
            "{problems:?}"
        );
    }
    let mut changed = document.clone();
    changed["routes"][0]["authorization"]["validated"] = json!(digest);
    let refund = changed["routes"][0]["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "refund")
        .unwrap();
    refund["inputSchema"]["properties"]["amount"]["type"] = json!("integer");
    assert!(compile_manifest(&changed).is_err(), "a tool's type changed");
    document["routes"][0]["authorization"]["validated"] = json!(1);
    assert_eq!(
        compile_manifest(&document).unwrap_err()[0].to_string(),
        "routes[0].authorization.validated: must be the string `mcp-manifest policy embed` writes"
    );
}

#[tokio::test]
async fn z11_a_sha256_digest_an_earlier_release_wrote_still_stands() {
    let mut document = gateway_tests::manifest("http://127.0.0.1:9");
    with_policies(&mut document, "enforce", MISTYPED);
    // Strict validation refuses MISTYPED (Z8): it loads only when the digest stands.
    let earlier = sha256_digest_of(&document, MISTYPED);
    document["routes"][0]["authorization"]["validated"] = json!(earlier);
    let snapshot = compile_manifest(&document).expect("an earlier release's digest stands");
    let policies = snapshot.route("core").unwrap().policies().unwrap();
    assert_eq!(policies.validation_digest(), earlier);
    // Of other policies, it is stale like any other: the load validates in full.
    document["routes"][0]["authorization"]["validated"] =
        json!(sha256_digest_of(&document, POLICIES));
    let problems = compile_manifest(&document).unwrap_err();
    assert!(
        problems[0]
            .to_string()
            .starts_with("routes[0].authorization.policies: for policy `typo`, "),
        "{problems:?}"
    );
}

#[tokio::test]
async fn z11_policies_loaded_on_a_digest_still_deny_what_errors() {
    let h = Harness::with_manifest(Config::fixed_defaults(), |d| {
        with_policies(d, "enforce", MISTYPED);
        let digest = digest_of(d, MISTYPED);
        d["routes"][0]["authorization"]["validated"] = json!(digest);
    })
    .await;
    let answer = call(&h, "refund", json!({"amount": 5})).await;
    assert_eq!(
        text(&answer),
        "Tool call denied: policy 'typo' could not be evaluated for these arguments"
    );
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn z11_a_digest_written_by_hand_for_text_that_does_not_parse_denies_every_call() {
    const BROKEN: &str = r#"@id("open") permit(principal, action, resource) when { true "#;
    let h = Harness::with_manifest(Config::fixed_defaults(), |d| {
        with_policies(d, "enforce", BROKEN);
        let digest = digest_of(d, BROKEN);
        d["routes"][0]["authorization"]["validated"] = json!(digest);
    })
    .await;
    // The policies are parsed by the first request that needs them: none is left, so no tool
    // is listed and every call is answered as an unknown tool's (Z4), nothing sent.
    let list = h
        .post(
            "/mcp/core",
            &gateway_tests::rpc(json!(1), "tools/list", json!({})),
            &[],
        )
        .await;
    assert_eq!(list.json()["result"]["tools"], json!([]), "{}", list.json());
    call(&h, "refund", json!({"amount": 5}))
        .await
        .assert_rpc_error(-32602, "Invalid params: unknown tool 'refund'", &json!(1));
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
    // Without the digest the same text fails the load (Z8).
    let mut document = gateway_tests::manifest("http://127.0.0.1:9");
    with_policies(&mut document, "enforce", BROKEN);
    assert!(compile_manifest(&document).is_err());
}

#[tokio::test]
async fn z5_argument_forms_do_not_bypass_a_forbid() {
    let h = harness("enforce").await;
    let send = |body: &'static str| {
        h.send(gateway_tests::request(
            "POST",
            "/mcp/core",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            body.to_string(),
        ))
    };
    for body in [
        // An escaped string is the same string.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":5,"currency":"\u004bRW"}}}"#,
        // A repeated key takes its last value, the one validated and sent (X11).
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":1,"amount":900}}}"#,
        // Exponent and fraction forms are the same number.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":9e2}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refund","arguments":{"amount":500.00010}}}"#,
    ] {
        let answer = send(body).await;
        assert!(
            text(&answer).starts_with("Tool call denied by policy '"),
            "{body}: {}",
            answer.json()
        );
    }
    // Tool names are exact: another case or a look-alike is another (unknown) tool.
    for name in ["Refund", "refund ", "re\u{0301}fund", "ｒｅｆｕｎｄ"] {
        let answer = call(&h, name, json!({"amount": 1})).await;
        answer.assert_rpc_error(
            -32602,
            &format!("Invalid params: unknown tool '{name}'"),
            &json!(1),
        );
    }
    assert_eq!(tool_service_calls(&h, "/refund").await, 0);
}

#[tokio::test]
async fn z2_a_policy_reads_the_employee_headers_and_the_protocol_version() {
    let h = Harness::with_manifest(Config::fixed_defaults(), |d| {
        with_policies(
            d,
            "enforce",
            r#"permit(principal, action == Gateway::Action::"refund", resource);
               @id("suspended")
               @reason("this account is suspended")
               forbid(principal, action in Gateway::Action::"call_tool", resource)
               when { context.request has employeeNo && context.request.employeeNo == "ENC-7f3a9c" };
               @id("modern-only")
               forbid(principal, action == Gateway::Action::"refund", resource)
               when { context.request.protocolVersion == "2025-11-25" && context.input.amount.greaterThan(decimal("100.0")) };"#,
        );
    })
    .await;
    Mock::given(path("/refund"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&h.tool_service)
        .await;
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": "refund", "arguments": {"amount": 5}}),
    );
    // The forbid holds whatever the arguments: for this caller the tool is not there (Z4).
    let suspended = h
        .post("/mcp/core", &body, &[("employee-no", "ENC-7f3a9c")])
        .await;
    suspended.assert_rpc_error(-32602, "Invalid params: unknown tool 'refund'", &json!(1));
    let other = h
        .post("/mcp/core", &body, &[("employee-no", "ENC-0000")])
        .await;
    assert_eq!(other.json()["result"]["isError"], false);
    let legacy = call(&h, "refund", json!({"amount": 200})).await;
    assert_eq!(text(&legacy), "Tool call denied by policy 'modern-only'");
    let modern = modern_call(&h, "refund", json!({"amount": 200})).await;
    assert_eq!(
        modern.json()["result"]["isError"],
        false,
        "{}",
        modern.json()
    );
}

#[tokio::test]
async fn z1_a_single_route_manifest_carries_its_policies_at_the_top_level_through_the_served_load()
{
    use mcp_gateway::invoke::HttpInvoker;
    use mcp_gateway::registry::compile_bytes;
    use mcp_gateway::{Gateway, InvocationContext};

    let manifest = json!({
        "tools": [
            {"name": "open_ticket", "inputSchema": {"type": "object", "properties": {
                "priority": {"type": "integer"}}, "required": ["priority"]},
             "_meta": {"endpoint": "http://127.0.0.1:9/open"}},
            {"name": "close_ticket", "inputSchema": {"type": "object"},
             "_meta": {"endpoint": "http://127.0.0.1:9/close"}}
        ],
        "authorization": {"mode": "enforce", "policies":
            r#"permit(principal, action == Gateway::Action::"open_ticket", resource)
               when { context.input.priority < 3 };"#}
    });
    // The text path the functions load with (R5's one pass), not the parsed one.
    let snapshot = compile_bytes("test", &bytes::Bytes::from(manifest.to_string())).expect("loads");
    let route = snapshot.fixed_route("core").expect("the single route");
    let policies = route.policies().expect("top-level authorization");
    assert_eq!(policies.unreachable_tools(), ["close_ticket"]);
    let gateway = Gateway::new(
        Config::fixed_defaults(),
        Ok(snapshot),
        HttpInvoker::new().unwrap(),
    );
    let body = rpc(json!(1), "tools/list", json!({})).to_string();
    let response = gateway
        .handle(
            gateway_tests::request(
                "POST",
                "/mcp/core",
                &[
                    ("content-type", "application/json"),
                    ("mcp-protocol-version", "2025-11-25"),
                ],
                body,
            ),
            InvocationContext::default(),
        )
        .await;
    let list: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(list["result"]["tools"][0]["name"], "open_ticket");
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 1);
}
