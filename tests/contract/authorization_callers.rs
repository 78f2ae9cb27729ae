//! Who the policies see (CONTRACT Z3) in the three authentication modes: `anonymous` without
//! authentication, a personal token's delegation and its groups (`mcp-admin token create
//! --group`) in moto's DynamoDB, and an OAuth token's subject, scopes, groups claim and other
//! string claims signed by a real issuer on loopback.

use gateway_tests::auth::{
    AuthHarness, Issuer, IssuerKey, ManualClock, RESOURCE_URL, T0, fresh_store,
    harness_with_auth_over, oauth_harness_over,
};
use gateway_tests::{Answer, Harness, rpc};
use mcp_gateway::Config;
use mcp_gateway::auth::{AuthMode, Authenticator, NewDelegation, PersonalToken, oauth_key};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, ResponseTemplate};

use super::authorization::with_policies;

/// Payroll reports for HR; searches for OAuth callers of the sales department with the
/// `mcp:tools` scope; refunds for the anonymous caller only.
const POLICIES: &str = r#"
@id("hr-reports")
permit(principal, action == Gateway::Action::"payroll_report", resource)
when { principal.groups.contains("hr") };

@id("sales-searches")
permit(principal, action == Gateway::Action::"search_documents", resource)
when {
  principal.auth == "oauth" && principal.scopes.contains("mcp:tools") &&
  principal.hasTag("dept") && principal.getTag("dept") == "sales"
};

@id("anonymous-refunds")
permit(principal == Gateway::Caller::"anonymous", action == Gateway::Action::"refund", resource)
when { principal.auth == "none" };
"#;

fn edit(document: &mut Value) {
    with_policies(document, "enforce", POLICIES);
}

async fn serve_tools(h: &Harness) {
    Mock::given(path("/payroll"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true})))
        .mount(&h.tool_service)
        .await;
}

async fn list(h: &Harness, bearer: Option<&str>) -> Vec<String> {
    let authorization = bearer.map(|b| format!("Bearer {b}"));
    let headers: Vec<(&str, &str)> = authorization
        .iter()
        .map(|a| ("authorization", a.as_str()))
        .collect();
    let answer = h
        .post(
            "/mcp/core",
            &rpc(json!(1), "tools/list", json!({})),
            &headers,
        )
        .await;
    let json = answer.json();
    json["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{json}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

async fn call(h: &Harness, bearer: &str, name: &str) -> Answer {
    let authorization = format!("Bearer {bearer}");
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    );
    h.post(
        "/mcp/core",
        &body,
        &[("authorization", authorization.as_str())],
    )
    .await
}

#[tokio::test]
async fn z3_without_authentication_the_caller_is_anonymous_with_empty_sets() {
    let h = Harness::with_manifest(Config::fixed_defaults(), edit).await;
    assert_eq!(list(&h, None).await, ["refund"]);
}

async fn token_harness() -> AuthHarness {
    let store = fresh_store().await;
    let clock = ManualClock::at(T0);
    let auth = Authenticator::new(
        AuthMode::Token,
        None,
        Some(Box::new(store.clone())),
        None,
        None,
        clock.epoch_clock(),
    );
    AuthHarness {
        harness: harness_with_auth_over(Config::fixed_defaults(), auth, edit).await,
        store,
        clock,
    }
}

async fn token_with_groups(h: &AuthHarness, groups: &[&str]) -> PersonalToken {
    let token = PersonalToken::generate().expect("random");
    h.store
        .put_delegation(&NewDelegation {
            key: token.store_key(),
            delegation_id: uuid::Uuid::new_v4().to_string(),
            routes: vec!["core".into()],
            idle_ttl_s: 3_600,
            expires_at: T0 + 86_400,
            created_at: T0,
            description: None,
            groups: groups.iter().map(ToString::to_string).collect(),
        })
        .await
        .expect("delegation written");
    token
}

#[tokio::test]
async fn z3_a_personal_tokens_groups_come_from_its_delegation() {
    let h = token_harness().await;
    serve_tools(&h.harness).await;
    let hr = token_with_groups(&h, &["hr", "ops"]).await;
    let other = token_with_groups(&h, &[]).await;
    assert_eq!(
        list(&h.harness, Some(hr.expose())).await,
        ["payroll_report"]
    );
    assert!(list(&h.harness, Some(other.expose())).await.is_empty());
    let allowed = call(&h.harness, hr.expose(), "payroll_report").await;
    assert_eq!(
        allowed.json()["result"]["isError"],
        false,
        "{}",
        allowed.json()
    );
    let hidden = call(&h.harness, other.expose(), "payroll_report").await;
    hidden.assert_rpc_error(
        -32602,
        "Invalid params: unknown tool 'payroll_report'",
        &json!(1),
    );
}

#[tokio::test]
async fn z3_an_oauth_callers_groups_scopes_and_string_claims_are_what_the_policies_read() {
    let key = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&key]).await;
    let h = oauth_harness_over(
        Config::fixed_defaults(),
        AuthMode::OAuth,
        &issuer,
        &[],
        edit,
    )
    .await;
    for sub in ["alice", "bob", "mallory"] {
        h.grant(
            oauth_key(&issuer.issuer, sub, "agent-cli"),
            &["core"],
            3_600,
            86_400,
        )
        .await;
    }
    let token = |sub: &str, extra: Value| {
        let mut claims = issuer.claims(RESOURCE_URL, sub);
        if let (Value::Object(claims), Value::Object(extra)) = (&mut claims, extra) {
            claims.extend(extra);
        }
        key.sign(&claims)
    };
    let alice = token("alice", json!({"groups": ["hr"], "dept": "sales"}));
    assert_eq!(
        list(&h.harness, Some(&alice)).await,
        ["search_documents", "payroll_report"]
    );
    let bob = token("bob", json!({"dept": "support"}));
    assert!(list(&h.harness, Some(&bob)).await.is_empty());
    // Claims shaped to look like groups are no groups: only an array of strings counts, and a
    // string claim named like a group is only a tag.
    let mallory = token(
        "mallory",
        json!({"groups": "hr", "hr": "true", "dept": ["sales"]}),
    );
    assert!(list(&h.harness, Some(&mallory)).await.is_empty());
}
