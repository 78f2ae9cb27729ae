//! Inbound authentication with personal access tokens (CONTRACT A1–A4, A6, A8–A11) against a
//! real DynamoDB-protocol server (moto) on loopback: the chain after Origin (H5) and Host (H6)
//! (A2), one 401 for every token rejection (A6), the atomic decision + limit + usage record (A4,
//! A8), 429 with `Retry-After` (A8), 503 when the store is down or the settings are broken (A9,
//! A1), the metadata path a JSON 404 in token mode (A10), and no token passthrough to the Tool
//! Service (A11).

use std::time::Duration;

use gateway_tests::auth::{AuthHarness, T0, dynamodb_client, fresh_store};
use gateway_tests::{Answer, rpc};
use http::StatusCode;
use mcp_gateway::Config;
use mcp_gateway::auth::{DynamoStore, PersonalToken, RateLimit};
use serde_json::{Value, json};

fn list() -> Value {
    rpc(json!(1), "tools/list", Value::Null)
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "it stands where the configuration's optional limit goes"
)]
fn per_minute(requests: u32) -> Option<RateLimit> {
    Some(RateLimit {
        requests,
        window_s: 60,
    })
}

async fn core(limit: Option<RateLimit>) -> AuthHarness {
    AuthHarness::token(Config::fixed_defaults(), limit).await
}

/// POSTs tools/list to `/mcp/core` with `Authorization: Bearer <token>`.
async fn list_with(h: &AuthHarness, token: &str) -> Answer {
    let bearer = format!("Bearer {token}");
    h.harness
        .post("/mcp/core", &list(), &[("authorization", bearer.as_str())])
        .await
}

const CHALLENGE: &str = r#"Bearer realm="mcp""#;
const INVALID: &str = r#"Bearer realm="mcp", error="invalid_token""#;

/// The one 401 of every token rejection: status, challenge and body.
#[track_caller]
fn assert_unauthorized(answer: &Answer, challenge: &str) {
    answer.assert_http_error(401, "unauthorized");
    assert_eq!(answer.header("www-authenticate"), Some(challenge));
    let body = answer.json();
    assert_eq!(
        body["message"],
        "a valid bearer token for this MCP endpoint is required"
    );
    assert_eq!(
        body.as_object().map(serde_json::Map::len),
        Some(3),
        "{body}"
    );
    assert!(answer.header("guid").is_some());
}

/// A store whose endpoint refuses connections.
fn dead_store() -> DynamoStore {
    let port = gateway_tests::auth::free_port();
    DynamoStore::new(
        dynamodb_client(&format!("http://127.0.0.1:{port}"), Duration::from_secs(2)),
        "delegations",
    )
}

#[tokio::test]
async fn a4_a_valid_token_is_admitted_counted_and_extends_its_idle_expiry() {
    let h = core(per_minute(10)).await;
    let (token, id) = h.issue(&["core"], 600, 86_400).await;
    let key = token.store_key();
    assert_eq!(h.number(&key, "idle_expires_at").await, Some(T0 + 600));
    h.clock.set(T0 + 100);
    let answer = list_with(&h, token.expose()).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert!(answer.json()["result"]["tools"].is_array());
    assert_eq!(h.number(&key, "idle_expires_at").await, Some(T0 + 700));
    assert_eq!(h.number(&key, "use_count").await, Some(1));
    assert_eq!(h.number(&key, "last_used_at").await, Some(T0 + 100));
    assert_eq!(h.number(&key, "rl_count").await, Some(1));
    assert!(!id.is_empty());
}

#[tokio::test]
async fn a6_a_missing_credential_gets_the_challenge_without_an_error_code() {
    let h = core(None).await;
    let answer = h.harness.post("/mcp/core", &list(), &[]).await;
    assert_unauthorized(&answer, CHALLENGE);
}

#[tokio::test]
async fn a2_an_unauthenticated_get_gets_the_401_challenge_before_the_405() {
    let h = core(None).await;
    let answer = h
        .harness
        .send(gateway_tests::request(
            "GET",
            "/mcp/core",
            &[("accept", "text/event-stream")],
            "",
        ))
        .await;
    assert_unauthorized(&answer, CHALLENGE);
}

#[tokio::test]
async fn a3_malformed_credentials_and_bad_checksums_are_401_without_touching_the_store() {
    // The gateway's store is down: any store call would answer 503, so a 401 proves none happened.
    let writer = fresh_store().await;
    let h = AuthHarness::token_over(Config::fixed_defaults(), None, writer, dead_store()).await;
    let good = PersonalToken::generate().unwrap().expose().to_string();
    let mut bad_checksum = good.clone();
    let last = bad_checksum.pop().unwrap();
    bad_checksum.push(if last == 'a' { 'b' } else { 'a' });
    for authorization in [
        format!("Bearer {bad_checksum}"),
        "Bearer mcpat_short".to_string(),
        format!("Basic {good}"),
        format!("Bearer{good}"),
        "Bearer ".to_string(),
        format!("Bearer {good} extra"),
        "Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig".to_string(),
    ] {
        let answer = h
            .harness
            .post(
                "/mcp/core",
                &list(),
                &[("authorization", authorization.as_str())],
            )
            .await;
        assert_unauthorized(&answer, INVALID);
    }
}

#[tokio::test]
async fn a6_unknown_revoked_expired_idle_expired_and_wrong_route_tokens_get_the_same_401() {
    let h = AuthHarness::token(Config::dynamic_defaults(), None).await;
    let call = |token: String, route: &'static str| {
        let h = &h;
        async move {
            let bearer = format!("Bearer {token}");
            h.harness
                .post(
                    &format!("/mcp/{route}"),
                    &list(),
                    &[("authorization", bearer.as_str())],
                )
                .await
        }
    };
    let unknown = PersonalToken::generate().unwrap();
    let (expiring, _) = h.issue(&["core"], 600, 120).await;
    let (idle, _) = h.issue(&["core"], 60, 86_400).await;
    let (core_only, _) = h.issue(&["core"], 600, 86_400).await;
    let (revoked, revoked_id) = h.issue(&["core", "hr"], 600, 86_400).await;

    // Before: every token but the unknown one works on its route.
    for token in [&expiring, &idle, &core_only, &revoked] {
        let answer = call(token.expose().to_string(), "core").await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }
    h.store.revoke(&revoked_id).await.unwrap();
    h.clock.set(T0 + 130);
    let bodies: Vec<Value> = [
        call(unknown.expose().to_string(), "core").await,
        call(revoked.expose().to_string(), "core").await,
        call(expiring.expose().to_string(), "core").await,
        call(idle.expose().to_string(), "core").await,
        call(core_only.expose().to_string(), "hr").await,
    ]
    .iter()
    .map(|answer| {
        assert_unauthorized(answer, INVALID);
        let mut body = answer.json();
        body["guid"] = Value::Null;
        body
    })
    .collect();
    assert!(
        bodies.windows(2).all(|pair| pair[0] == pair[1]),
        "{bodies:?}"
    );
    // The wrong-route token still works on its own route.
    let answer = call(core_only.expose().to_string(), "core").await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn a4_a_revocation_between_two_requests_turns_the_second_into_401() {
    let h = core(per_minute(10)).await;
    let (token, id) = h.issue(&["core"], 600, 86_400).await;
    assert_eq!(list_with(&h, token.expose()).await.status, StatusCode::OK);
    h.store.revoke(&id).await.unwrap();
    assert_unauthorized(&list_with(&h, token.expose()).await, INVALID);
    // And stays refused (the negative cache answers now; the item says revoked as well).
    assert_unauthorized(&list_with(&h, token.expose()).await, INVALID);
}

#[tokio::test]
async fn a8_the_limit_answers_429_with_the_exact_retry_after_and_extends_nothing() {
    let h = core(per_minute(2)).await;
    let (token, _) = h.issue(&["core"], 600, 86_400).await;
    let key = token.store_key();
    h.clock.set(T0 + 10);
    assert_eq!(list_with(&h, token.expose()).await.status, StatusCode::OK);
    h.clock.set(T0 + 15);
    assert_eq!(list_with(&h, token.expose()).await.status, StatusCode::OK);
    assert_eq!(h.number(&key, "idle_expires_at").await, Some(T0 + 615));
    h.clock.set(T0 + 20);
    let limited = list_with(&h, token.expose()).await;
    limited.assert_http_error(429, "rate_limited");
    assert_eq!(limited.header("retry-after"), Some("40"));
    assert_eq!(limited.json()["retryAfter"], 40);
    assert_eq!(
        limited.json()["message"],
        "request limit reached; retry after 40 s"
    );
    // Nothing was extended or counted by the refused request.
    assert_eq!(h.number(&key, "idle_expires_at").await, Some(T0 + 615));
    assert_eq!(h.number(&key, "use_count").await, Some(2));
    assert_eq!(h.number(&key, "rl_count").await, Some(2));
    // A token that only meets the limit does not keep itself alive.
    h.clock.set(T0 + 59);
    let last = list_with(&h, token.expose()).await;
    assert_eq!(last.header("retry-after"), Some("1"));
    assert_eq!(h.number(&key, "idle_expires_at").await, Some(T0 + 615));
}

#[tokio::test]
async fn a8_the_next_window_admits_again() {
    let h = core(per_minute(1)).await;
    let (token, _) = h.issue(&["core"], 600, 86_400).await;
    let key = token.store_key();
    assert_eq!(list_with(&h, token.expose()).await.status, StatusCode::OK);
    assert_eq!(list_with(&h, token.expose()).await.status.as_u16(), 429);
    h.clock.set(T0 + 60);
    assert_eq!(list_with(&h, token.expose()).await.status, StatusCode::OK);
    assert_eq!(h.number(&key, "rl_window").await, Some(T0 + 60));
    assert_eq!(h.number(&key, "rl_count").await, Some(1));
    assert_eq!(list_with(&h, token.expose()).await.status.as_u16(), 429);
    assert_eq!(h.number(&key, "use_count").await, Some(2));
}

#[tokio::test]
async fn a8_concurrent_requests_admit_exactly_the_limit() {
    let h = core(per_minute(5)).await;
    let (token, _) = h.issue(&["core"], 600, 86_400).await;
    let requests = (0..20).map(|_| list_with(&h, token.expose()));
    let answers = futures::future::join_all(requests).await;
    let admitted = answers
        .iter()
        .filter(|a| a.status == StatusCode::OK)
        .count();
    let limited = answers.iter().filter(|a| a.status.as_u16() == 429).count();
    assert_eq!((admitted, limited), (5, 15));
    assert_eq!(h.number(&token.store_key(), "use_count").await, Some(5));
}

#[tokio::test]
async fn a9_a_store_that_is_down_answers_503_with_retry_after_never_401() {
    let writer = fresh_store().await;
    let h = AuthHarness::token_over(Config::fixed_defaults(), None, writer, dead_store()).await;
    let token = PersonalToken::generate().unwrap();
    let answer = list_with(&h, token.expose()).await;
    answer.assert_http_error(503, "auth_unavailable");
    assert_eq!(answer.header("retry-after"), Some("5"));
    assert_eq!(answer.json()["retryAfter"], 5);
    assert!(answer.header("www-authenticate").is_none());
}

#[tokio::test]
async fn a2_origin_and_host_run_before_authentication() {
    let h = core(None).await;
    let answer = h
        .harness
        .post("/mcp/core", &list(), &[("origin", "https://evil.example")])
        .await;
    assert_eq!(answer.status.as_u16(), 403);
    assert!(answer.header("www-authenticate").is_none());
}

#[tokio::test]
async fn a11_neither_authorization_nor_cookies_reach_the_tool_service() {
    let h = core(None).await;
    let (token, _) = h.issue(&["core"], 600, 86_400).await;
    h.harness
        .tool_answers(
            "/search",
            wiremock::ResponseTemplate::new(200).set_body_json(json!({"hits": []})),
        )
        .await;
    let bearer = format!("Bearer {}", token.expose());
    let body = rpc(
        json!(7),
        "tools/call",
        json!({"name": "search_documents", "arguments": {"query": "q"}}),
    );
    let answer = h
        .harness
        .post(
            "/mcp/core",
            &body,
            &[
                ("authorization", bearer.as_str()),
                ("cookie", "session=abc"),
                ("employee-no", "ENC(123)"),
            ],
        )
        .await;
    assert_eq!(
        answer.json()["result"]["isError"],
        false,
        "{:?}",
        answer.body
    );
    let received = h.harness.tool_service.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    let headers = &received[0].headers;
    assert!(headers.get("authorization").is_none());
    assert!(headers.get("cookie").is_none());
    assert_eq!(
        headers.get("employee-no").and_then(|v| v.to_str().ok()),
        Some("ENC(123)")
    );
}

#[tokio::test]
async fn a10_token_mode_serves_no_metadata_document_a_json_404_instead() {
    let h = core(None).await;
    let answer = h
        .harness
        .send(gateway_tests::request(
            "GET",
            "/.well-known/oauth-protected-resource/mcp/core",
            &[],
            "",
        ))
        .await;
    answer.assert_http_error(404, "not_found");
}

#[tokio::test]
async fn a2_a_path_without_a_route_needs_a_credential_but_counts_nothing() {
    let h = AuthHarness::token(Config::dynamic_defaults(), per_minute(1)).await;
    let (token, _) = h.issue(&["core"], 600, 86_400).await;
    assert_unauthorized(&h.harness.post("/mcp", &list(), &[]).await, CHALLENGE);
    let bearer = format!("Bearer {}", token.expose());
    let answer = h
        .harness
        .post("/mcp", &list(), &[("authorization", bearer.as_str())])
        .await;
    answer.assert_rpc_error(-32600, "route key is required", &json!(1));
    assert_eq!(h.number(&token.store_key(), "use_count").await, None);
}

#[tokio::test]
async fn a1_broken_auth_settings_answer_503_to_everything_never_serve_unauthenticated() {
    let h = gateway_tests::auth::harness_with_auth(
        Config::fixed_defaults(),
        mcp_gateway::auth::Authenticator::misconfigured(),
    )
    .await;
    let initialize = rpc(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    for body in [initialize, list()] {
        let answer = h.post("/mcp/core", &body, &[]).await;
        answer.assert_http_error(503, "auth_unavailable");
        assert_eq!(answer.header("retry-after"), Some("5"));
    }
}
