//! Cedar's JSON form of a route's policies (CONTRACT Z12): what `mcp-manifest policy embed`
//! writes beside the text as `authorization.policiesJson`, covered by the validation digest
//! (Z11), and what a load whose digest matches parses in place of the text.

use gateway_tests::rpc;
use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};

use super::authorization::{
    POLICIES, call, harness_with, schema_texts, text, tool_service_calls, with_policies,
};

/// The JSON form and digest `mcp-manifest policy embed` writes for `document`'s route 0, as
/// the route's compiled policies give them.
fn embedded(document: &Value) -> (String, String) {
    let snapshot = compile_manifest(document).expect("the policies validate");
    let policies = snapshot.route("core").unwrap().policies().unwrap();
    policies.embedded_form().expect("the text parses")
}

/// The digest of `document`'s route 0 with the policy `text` and the JSON form `json`.
fn digest_with_json(document: &Value, text: &str, json: &str) -> String {
    let tools = schema_texts(document);
    mcp_gateway::authz::policies::validation_digest_with_json(
        tools.iter().map(|(n, t)| (n.as_str(), t.as_slice())),
        text,
        json,
    )
}

fn set(document: &mut Value, member: &str, value: Value) {
    document["routes"][0]["authorization"][member] = value;
}

#[tokio::test]
async fn z12_a_route_loaded_from_its_json_form_decides_as_its_text_does() {
    let h = harness_with(|d| {
        with_policies(d, "enforce", POLICIES);
        let (json, digest) = embedded(d);
        set(d, "policiesJson", json!(json));
        set(d, "validated", json!(digest));
    })
    .await;
    // Z6's texts name the forbid by its `@id` and give its `@reason` as the text's would.
    assert_eq!(
        text(&call(&h, "refund", json!({"amount": 600})).await),
        "Tool call denied by policy 'big-refunds': refunds above 500 need a person"
    );
    assert_eq!(
        text(&call(&h, "refund", json!({"amount": 5, "currency": "KRW"})).await),
        "Tool call denied by policy 'no-krw'"
    );
    assert_eq!(
        text(&call(&h, "refund", json!({"amount": 5, "count": 3})).await),
        "Tool call denied: policy 'count-guard' could not be evaluated for these arguments"
    );
    assert_eq!(tool_service_calls(&h, "/refund").await, 0);
    let allowed = call(&h, "refund", json!({"amount": 5})).await.json();
    assert_eq!(allowed["result"]["isError"], false, "{allowed}");
    assert_eq!(tool_service_calls(&h, "/refund").await, 1);
    // Z4: the anonymous caller is not in `hr`, so `payroll_report` is hidden.
    call(&h, "payroll_report", json!({}))
        .await
        .assert_rpc_error(
            -32602,
            "Invalid params: unknown tool 'payroll_report'",
            &json!(1),
        );
    let list = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await
        .json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_documents", "refund"], "{list}");
}

#[tokio::test]
async fn z12_the_json_form_is_what_a_matching_digest_loads_and_a_stale_one_is_ignored() {
    // The text permits every call; the JSON form is that of POLICIES, which forbid refunds
    // above 500. Only a digest written by hand pairs them: the load parses the JSON form.
    const OPEN: &str = r#"@id("open") permit(principal, action, resource);"#;
    let vouched = harness_with(|d| {
        with_policies(d, "enforce", POLICIES);
        let (json, _) = embedded(d);
        set(d, "policies", json!(OPEN));
        let digest = digest_with_json(d, OPEN, &json);
        set(d, "policiesJson", json!(json));
        set(d, "validated", json!(digest));
    })
    .await;
    assert_eq!(
        text(&call(&vouched, "refund", json!({"amount": 600})).await),
        "Tool call denied by policy 'big-refunds': refunds above 500 need a person"
    );
    // The same with the digest of the text alone: stale, so the text is validated and
    // enforced, and the JSON form is not read.
    let stale = harness_with(|d| {
        with_policies(d, "enforce", POLICIES);
        let (json, _) = embedded(d);
        set(d, "policies", json!(OPEN));
        let (_, digest) = embedded(d);
        set(d, "policiesJson", json!(json));
        set(d, "validated", json!(digest));
    })
    .await;
    let answer = call(&stale, "refund", json!({"amount": 600})).await.json();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(tool_service_calls(&stale, "/refund").await, 1);
}

#[tokio::test]
async fn z12_a_json_form_that_cedar_cannot_read_denies_every_call() {
    let h = harness_with(|d| {
        with_policies(d, "enforce", POLICIES);
        let broken = r#"{"staticPolicies":{"policy0":{"effect":"permit"}}}"#;
        let digest = digest_with_json(d, POLICIES, broken);
        set(d, "policiesJson", json!(broken));
        set(d, "validated", json!(digest));
    })
    .await;
    let list = h
        .post("/mcp/core", &rpc(json!(1), "tools/list", json!({})), &[])
        .await
        .json();
    assert_eq!(list["result"]["tools"], json!([]), "{list}");
    call(&h, "refund", json!({"amount": 5}))
        .await
        .assert_rpc_error(-32602, "Invalid params: unknown tool 'refund'", &json!(1));
    assert_eq!(tool_service_calls(&h, "/refund").await, 0);
}

#[test]
fn z12_policies_json_other_than_a_string_fails_the_load() {
    let mut document = gateway_tests::manifest("http://127.0.0.1:9");
    with_policies(&mut document, "enforce", POLICIES);
    let (json, _) = embedded(&document);
    let object: Value = serde_json::from_str(&json).unwrap();
    for wrong in [object, json!(1), json!(null)] {
        set(&mut document, "policiesJson", wrong);
        let problems = compile_manifest(&document).unwrap_err();
        assert_eq!(
            problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "routes[0].authorization.policiesJson: must be the string `mcp-manifest policy \
              embed` writes"
            ]
        );
    }
}

#[test]
fn z12_the_json_form_is_the_same_text_for_the_same_policies() {
    let mut document = gateway_tests::manifest("http://127.0.0.1:9");
    with_policies(&mut document, "enforce", POLICIES);
    let (first, digest) = embedded(&document);
    assert_eq!(embedded(&document), (first.clone(), digest));
    let parsed: Value = serde_json::from_str(&first).unwrap();
    let names: Vec<&String> = parsed["staticPolicies"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        names,
        [
            "anyone-searches",
            "refunds",
            "big-refunds",
            "no-krw",
            "count-guard",
            "hr-reports"
        ]
    );
    assert_eq!(
        parsed["staticPolicies"]["big-refunds"]["annotations"],
        json!({"id": "big-refunds", "reason": "refunds above 500 need a person"})
    );
    assert_eq!(parsed["templates"], json!({}));
    assert_eq!(parsed["templateLinks"], json!([]));
}
