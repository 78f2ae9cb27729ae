//! OAuth 2.1 resource server (CONTRACT A1, A4–A7, A9, A10): JWT access tokens signed by RSA and
//! EC keys generated here (A5), the key set served on loopback, delegations in the real
//! DynamoDB-protocol store (moto; A4); the metadata document (RFC 9728, A10) and the challenge
//! headers (A6, A7).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gateway_tests::auth::{
    AuthHarness, Issuer, IssuerKey, RESOURCE_URL, oauth_harness, system_now,
};
use gateway_tests::{Answer, request, rpc};
use http::StatusCode;
use mcp_gateway::auth::{AuthMode, PersonalToken, oauth_key};
use serde_json::{Value, json};

const METADATA_URL: &str = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp/core";

fn list() -> Value {
    rpc(json!(1), "tools/list", Value::Null)
}

async fn list_with(h: &AuthHarness, bearer: &str) -> Answer {
    let authorization = format!("Bearer {bearer}");
    h.harness
        .post(
            "/mcp/core",
            &list(),
            &[("authorization", authorization.as_str())],
        )
        .await
}

/// Lets `sub` of `issuer` (client `agent-cli`) call `core`.
async fn grant(h: &AuthHarness, issuer: &Issuer, sub: &str) -> String {
    h.grant(
        oauth_key(&issuer.issuer, sub, "agent-cli"),
        &["core"],
        3_600,
        86_400,
    )
    .await
}

#[track_caller]
fn assert_invalid_token(answer: &Answer) {
    answer.assert_http_error(401, "unauthorized");
    assert_eq!(
        answer.header("www-authenticate"),
        Some(
            format!(
                r#"Bearer realm="mcp", resource_metadata="{METADATA_URL}", error="invalid_token""#
            )
            .as_str()
        )
    );
}

#[tokio::test]
async fn a5_rsa_and_ec_signed_tokens_of_a_granted_subject_are_admitted() {
    let rsa = IssuerKey::rsa("rsa-1");
    let ec = IssuerKey::ec("ec-1");
    let issuer = Issuer::start(&[&rsa, &ec]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    for key in [&rsa, &ec] {
        let token = key.sign(&issuer.claims(RESOURCE_URL, "alice"));
        let answer = list_with(&h, &token).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
        assert!(answer.json()["result"]["tools"].is_array());
    }
    let key = oauth_key(&issuer.issuer, "alice", "agent-cli");
    assert_eq!(h.number(&key, "use_count").await, Some(2));
}

#[tokio::test]
async fn a5_wrong_audience_wrong_issuer_expired_not_yet_valid_and_ungranted_tokens_get_401() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    let now = system_now();
    let valid = issuer.claims(RESOURCE_URL, "alice");
    let with = |field: &str, value: Value| {
        let mut claims = valid.clone();
        claims[field] = value;
        rsa.sign(&claims)
    };
    let other_key = IssuerKey::rsa("rsa-1");
    for token in [
        with("aud", json!("https://mcp.example.test/mcp/hr")),
        with("aud", json!("https://evil.example/mcp/core")),
        with("iss", json!("https://other-issuer.test")),
        with("exp", json!(now - 120)),
        with("nbf", json!(now + 600)),
        with("sub", json!("mallory")),
        // Signed by another key under the same kid: a bad signature.
        other_key.sign(&valid),
    ] {
        assert_invalid_token(&list_with(&h, &token).await);
    }
    // Within the leeway (30 s here) an just-expired token still passes.
    let answer = list_with(&h, &with("exp", json!(now - 10))).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
}

#[tokio::test]
async fn a5_unsigned_and_hmac_tokens_are_refused() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    let claims = URL_SAFE_NO_PAD.encode(issuer.claims(RESOURCE_URL, "alice").to_string());
    for header in [
        json!({"alg": "none", "kid": "rsa-1"}),
        json!({"alg": "HS256", "kid": "rsa-1"}),
    ] {
        let header = URL_SAFE_NO_PAD.encode(header.to_string());
        let token = format!("{header}.{claims}.c2ln");
        assert_invalid_token(&list_with(&h, &token).await);
    }
}

#[tokio::test]
async fn a5_an_unknown_kid_is_refused_until_the_rotated_key_set_names_it() {
    let old = IssuerKey::rsa("2026-11");
    let new = IssuerKey::ec("2026-12");
    let issuer = Issuer::start(&[&old]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    let claims = issuer.claims(RESOURCE_URL, "alice");
    assert_eq!(
        list_with(&h, &old.sign(&claims)).await.status,
        StatusCode::OK
    );
    // The issuer rotates; the gateway's cached set does not know the new kid yet, and a refetch
    // right after the last fetch is held back.
    issuer.serve(&[&old, &new]).await;
    assert_invalid_token(&list_with(&h, &new.sign(&claims)).await);
    h.clock.set(h.clock.now() + 31);
    let answer = list_with(&h, &new.sign(&claims)).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let fetches = issuer.jwks.received_requests().await.unwrap().len();
    assert_eq!(fetches, 1, "one fetch after the rotation");
}

#[tokio::test]
async fn a9_a_key_set_outage_answers_503_not_401() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    issuer.go_down().await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    let answer = list_with(&h, &rsa.sign(&issuer.claims(RESOURCE_URL, "alice"))).await;
    answer.assert_http_error(503, "auth_unavailable");
    assert_eq!(answer.header("retry-after"), Some("5"));
    assert!(answer.header("www-authenticate").is_none());
}

/// CONTRACT A5, A9: requests that arrive together while the key set is down cause one fetch
/// and share its failure, instead of each waiting in turn for a fetch of its own.
#[tokio::test]
async fn a9_concurrent_requests_during_an_outage_share_one_key_set_fetch() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    issuer.jwks.reset().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(
            wiremock::ResponseTemplate::new(503).set_delay(std::time::Duration::from_millis(500)),
        )
        .mount(&issuer.jwks)
        .await;
    let h = std::sync::Arc::new(oauth_harness(AuthMode::OAuth, &issuer, &[]).await);
    let token = rsa.sign(&issuer.claims(RESOURCE_URL, "alice"));
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (h, token) = (h.clone(), token.clone());
            tokio::spawn(async move { list_with(&h, &token).await })
        })
        .collect();
    for call in calls {
        call.await
            .unwrap()
            .assert_http_error(503, "auth_unavailable");
    }
    let fetches = issuer.jwks.received_requests().await.unwrap().len();
    assert_eq!(fetches, 1, "one fetch for the requests that came together");
}

#[tokio::test]
async fn a6_the_challenge_names_the_metadata_document_and_the_required_scopes() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &["mcp:tools"]).await;
    let answer = h.harness.post("/mcp/core", &list(), &[]).await;
    answer.assert_http_error(401, "unauthorized");
    assert_eq!(
        answer.header("www-authenticate"),
        Some(
            format!(r#"Bearer realm="mcp", resource_metadata="{METADATA_URL}", scope="mcp:tools""#)
                .as_str()
        )
    );
}

#[tokio::test]
async fn a7_a_token_without_a_required_scope_gets_403_insufficient_scope_and_counts_nothing() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &["mcp:admin"]).await;
    grant(&h, &issuer, "alice").await;
    let answer = list_with(&h, &rsa.sign(&issuer.claims(RESOURCE_URL, "alice"))).await;
    answer.assert_http_error(403, "insufficient_scope");
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"Bearer realm="mcp", resource_metadata="{METADATA_URL}", scope="mcp:admin", error="insufficient_scope""#).as_str())
    );
    let key = oauth_key(&issuer.issuer, "alice", "agent-cli");
    assert_eq!(h.number(&key, "use_count").await, None);
}

#[tokio::test]
async fn a10_the_metadata_document_is_served_unauthenticated_for_get_only() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &["mcp:tools"]).await;
    let path = "/.well-known/oauth-protected-resource/mcp/core";
    let answer = h.harness.send(request("GET", path, &[], "")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(
        answer.json(),
        json!({
            "resource": RESOURCE_URL,
            "authorization_servers": [issuer.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:tools"],
        })
    );
    let post = h.harness.send(request("POST", path, &[], "{}")).await;
    post.assert_http_error(405, "method_not_allowed");
    assert_eq!(post.header("allow"), Some("GET"));
    for other in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp/hr",
        "/.well-known/oauth-authorization-server",
    ] {
        h.harness
            .send(request("GET", other, &[], ""))
            .await
            .assert_http_error(404, "not_found");
    }
}

#[tokio::test]
async fn a1_token_and_oauth_mode_accepts_both_credentials() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::TokenAndOAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    let token = PersonalToken::generate().unwrap();
    h.grant(token.store_key(), &["core"], 600, 86_400).await;
    let jwt = rsa.sign(&issuer.claims(RESOURCE_URL, "alice"));
    for bearer in [token.expose(), jwt.as_str()] {
        let answer = list_with(&h, bearer).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }
}

#[tokio::test]
async fn a4_a_subject_refused_as_unknown_is_admitted_once_granted() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    let token = rsa.sign(&issuer.claims(RESOURCE_URL, "bob"));
    assert_invalid_token(&list_with(&h, &token).await);
    grant(&h, &issuer, "bob").await;
    assert_eq!(list_with(&h, &token).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a5_a_token_whose_alg_differs_from_the_keys_own_alg_is_refused() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let mut jwk = rsa.jwk();
    jwk["alg"] = json!("RS384");
    issuer.jwks.reset().await;
    wiremock::Mock::given(wiremock::matchers::path("/jwks"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(json!({"keys": [jwk]})))
        .mount(&issuer.jwks)
        .await;
    let h = oauth_harness(AuthMode::OAuth, &issuer, &[]).await;
    grant(&h, &issuer, "alice").await;
    let token = rsa.sign(&issuer.claims(RESOURCE_URL, "alice"));
    assert_invalid_token(&list_with(&h, &token).await);
}
