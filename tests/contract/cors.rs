//! CONTRACT H9, H10 (browser clients): the CORS preflight of an allowed origin, its refusals, the
//! CORS headers on every answer to an allowed origin (2xx, 4xx and 5xx), none for a refused
//! origin or a request without `Origin`; H1 (`OPTIONS` without preflight headers stays `405`),
//! H5, A2 (a preflight needs no credential), A8 (429), A10 (the root metadata form).

use gateway_tests::auth::{AuthHarness, Issuer, IssuerKey, oauth_harness_with};
use gateway_tests::{Answer, Harness, VERSION, request, rpc};
use http::StatusCode;
use mcp_gateway::Config;
use mcp_gateway::auth::AuthMode;
use serde_json::{Value, json};

const APP: &str = "http://app.example";
const EXPOSED: &str = "mcp-session-id, guid, x-request-id, www-authenticate, retry-after";

fn config() -> Config {
    let mut config = Config::fixed_defaults();
    config.allowed_origins = vec![APP.into(), "https://portal.example".into()];
    config
}

fn list() -> Value {
    rpc(json!(1), "tools/list", Value::Null)
}

fn preflight(origin: &str, method: &str, headers: Option<&str>) -> Vec<(&'static str, String)> {
    let mut sent = vec![
        ("origin", origin.to_string()),
        ("access-control-request-method", method.to_string()),
    ];
    if let Some(headers) = headers {
        sent.push(("access-control-request-headers", headers.to_string()));
    }
    sent
}

async fn options(h: &Harness, path: &str, sent: &[(&'static str, String)]) -> Answer {
    let headers: Vec<(&str, &str)> = sent.iter().map(|(n, v)| (*n, v.as_str())).collect();
    h.send(request("OPTIONS", path, &headers, "")).await
}

/// The H10 headers of an answer to `origin`.
#[track_caller]
fn assert_cors(answer: &Answer, origin: &str) {
    assert_eq!(answer.header("access-control-allow-origin"), Some(origin));
    assert_eq!(answer.header("vary"), Some("Origin"));
    assert_eq!(
        answer.header("access-control-expose-headers"),
        Some(EXPOSED)
    );
}

#[track_caller]
fn assert_no_cors(answer: &Answer) {
    for name in [
        "access-control-allow-origin",
        "access-control-allow-methods",
        "access-control-allow-headers",
        "access-control-expose-headers",
        "vary",
    ] {
        assert_eq!(answer.header(name), None, "{name}");
    }
}

#[tokio::test]
async fn h9_a_preflight_from_an_allowed_origin_is_204_with_the_requested_headers_echoed() {
    let h = Harness::with_config(config()).await;
    let requested = "Content-Type, MCP-Protocol-Version, mcp-session-id, Mcp-Method, Mcp-Name, \
                     Mcp-Param-Region, guid, x-request-id, authorization, accept, employee-no, \
                     virtual-employee-no, last-event-id";
    for path in ["/mcp/core", "/mcp/core/"] {
        let answer = options(&h, path, &preflight(APP, "POST", Some(requested))).await;
        assert_eq!(answer.status, StatusCode::NO_CONTENT, "{path}");
        assert!(answer.body.is_empty());
        assert_cors(&answer, APP);
        assert_eq!(answer.header("access-control-allow-methods"), Some("POST"));
        assert_eq!(
            answer.header("access-control-allow-headers"),
            Some(requested)
        );
        assert_eq!(answer.header("access-control-max-age"), Some("7200"));
        assert!(answer.header("guid").is_some(), "H8");
    }
    // No requested headers: none echoed. The origin is echoed as sent, never `*`.
    let answer = options(
        &h,
        "/mcp/core",
        &preflight("https://portal.example", "POST", None),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_cors(&answer, "https://portal.example");
    assert_eq!(answer.header("access-control-allow-headers"), None);
    // A preflight never reaches a Tool Service.
    assert!(h.tool_service.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn h9_a_preflight_asking_for_another_method_or_header_is_403_naming_it() {
    let h = Harness::with_config(config()).await;
    for (method, headers, message) in [
        (
            "PUT",
            None,
            "CORS preflight refused: method PUT is not allowed",
        ),
        (
            "POST",
            Some("content-type, x-api-key"),
            "CORS preflight refused: header x-api-key is not allowed",
        ),
        (
            "POST",
            Some("Cookie"),
            "CORS preflight refused: header Cookie is not allowed",
        ),
    ] {
        let answer = options(&h, "/mcp/core", &preflight(APP, method, headers)).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{message}");
        let body = answer.json();
        assert_eq!(body["id"], Value::Null);
        assert_eq!(body["error"]["code"], -32600);
        assert_eq!(body["error"]["message"], message);
        assert_cors(&answer, APP);
    }
}

#[tokio::test]
async fn h9_a_preflight_from_a_foreign_origin_is_the_h5_403_without_cors_headers() {
    let h = Harness::with_config(config()).await;
    let answer = options(
        &h,
        "/mcp/core",
        &preflight("https://evil.example", "POST", Some("content-type")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.json()["error"]["message"], "origin is not allowed");
    assert_no_cors(&answer);
}

#[tokio::test]
async fn h1_options_without_preflight_headers_stays_405() {
    let h = Harness::with_config(config()).await;
    let answer = h
        .send(request("OPTIONS", "/mcp/core", &[("origin", APP)], ""))
        .await;
    answer.assert_http_error(405, "method_not_allowed");
    assert_eq!(answer.header("allow"), Some("POST"));
    assert_cors(&answer, APP);
    let answer = h.send(request("OPTIONS", "/mcp/core", &[], "")).await;
    answer.assert_http_error(405, "method_not_allowed");
    assert_no_cors(&answer);
}

#[tokio::test]
async fn h9_a_preflight_outside_the_endpoint_is_the_p6_404() {
    let h = Harness::with_config(config()).await;
    let answer = options(&h, "/other", &preflight(APP, "POST", None)).await;
    answer.assert_http_error(404, "not_found");
    assert_cors(&answer, APP);
}

#[tokio::test]
async fn h10_every_answer_to_an_allowed_origin_carries_the_cors_headers() {
    let h = Harness::with_config(config()).await;
    let origin = ("origin", APP);
    let ok = h.post("/mcp/core", &list(), &[origin]).await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_cors(&ok, APP);
    let bad_version = h
        .send(request(
            "POST",
            "/mcp/core",
            &[("content-type", "application/json"), origin],
            list().to_string(),
        ))
        .await;
    bad_version.assert_http_error(400, "missing_protocol_version");
    assert_cors(&bad_version, APP);
    let rpc_error = h
        .post("/mcp/core", &rpc(json!(2), "no/such", json!({})), &[origin])
        .await;
    assert_eq!(rpc_error.json()["error"]["code"], -32601);
    assert_cors(&rpc_error, APP);
    let accepted = h
        .post(
            "/mcp/core",
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[origin],
        )
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED);
    assert_cors(&accepted, APP);
}

#[tokio::test]
async fn h10_an_agent_without_origin_sees_no_cors_header() {
    let h = Harness::with_config(config()).await;
    let answer = h.post("/mcp/core", &list(), &[]).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_no_cors(&answer);
}

#[tokio::test]
async fn a2_h9_with_token_auth_a_preflight_needs_no_credential_and_401_429_carry_cors() {
    let h = AuthHarness::token(
        config(),
        Some(mcp_gateway::auth::RateLimit {
            requests: 1,
            window_s: 3_600,
        }),
    )
    .await;
    let answer = options(
        &h.harness,
        "/mcp/core",
        &preflight(APP, "POST", Some("authorization, content-type")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_cors(&answer, APP);

    let unauthorized = h
        .harness
        .post("/mcp/core", &list(), &[("origin", APP)])
        .await;
    unauthorized.assert_http_error(401, "unauthorized");
    assert_cors(&unauthorized, APP);
    assert!(unauthorized.header("www-authenticate").is_some());

    let (token, _) = h.issue(&["core"], 600, 86_400).await;
    let bearer = format!("Bearer {}", token.expose());
    let with_token = [("origin", APP), ("authorization", bearer.as_str())];
    let first = h.harness.post("/mcp/core", &list(), &with_token).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_cors(&first, APP);
    let limited = h.harness.post("/mcp/core", &list(), &with_token).await;
    limited.assert_http_error(429, "rate_limited");
    assert_cors(&limited, APP);
    assert!(limited.header("retry-after").is_some());
}

#[tokio::test]
async fn h9_the_preflight_answer_needs_no_protocol_version() {
    // A browser's preflight carries no MCP header values, only their names.
    let h = Harness::with_config(config()).await;
    let mut sent = preflight(APP, "POST", Some("mcp-protocol-version"));
    sent.push((VERSION.0, "1999-01-01".into()));
    let answer = options(&h, "/mcp/core", &sent).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn a10_h9_a_metadata_path_admits_a_get_preflight_and_its_document_varies_by_origin() {
    let rsa = IssuerKey::rsa("rsa-1");
    let issuer = Issuer::start(&[&rsa]).await;
    let h = oauth_harness_with(config(), AuthMode::OAuth, &issuer, &[]).await;
    let path = "/.well-known/oauth-protected-resource/mcp/core";
    let answer = options(
        &h.harness,
        path,
        &preflight(APP, "GET", Some("mcp-protocol-version")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_eq!(answer.header("access-control-allow-methods"), Some("GET"));
    assert_cors(&answer, APP);
    let post = options(&h.harness, path, &preflight(APP, "POST", None)).await;
    assert_eq!(post.status, StatusCode::FORBIDDEN);
    assert_eq!(
        post.json()["error"]["message"],
        "CORS preflight refused: method POST is not allowed"
    );
    // The cacheable document varies by Origin, with and without one (H10, A10).
    let from_app = h
        .harness
        .send(request("GET", path, &[("origin", APP)], ""))
        .await;
    assert_eq!(from_app.status, StatusCode::OK);
    assert_cors(&from_app, APP);
    assert_eq!(from_app.headers.get_all("vary").iter().count(), 1);
    let plain = h.harness.send(request("GET", path, &[], "")).await;
    assert_eq!(plain.header("vary"), Some("Origin"));
    assert_eq!(plain.header("access-control-allow-origin"), None);
    // A path under the prefix that the deployment does not answer is no preflight target.
    let other = options(
        &h.harness,
        "/.well-known/oauth-protected-resource/other",
        &preflight(APP, "GET", None),
    )
    .await;
    other.assert_http_error(404, "not_found");
}

#[tokio::test]
async fn h9_without_oauth_the_metadata_path_is_no_preflight_target() {
    let h = Harness::with_config(config()).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp/core",
        "/.well-known/oauth-protected-resourceEVIL",
    ] {
        let answer = options(&h, path, &preflight(APP, "GET", None)).await;
        answer.assert_http_error(404, "not_found");
        assert_cors(&answer, APP);
    }
}

#[tokio::test]
async fn h9_requested_names_must_be_header_names_and_the_refusal_quotes_the_first() {
    let h = Harness::with_config(config()).await;
    for (requested, message) in [
        (
            "mcp-param-a b",
            "CORS preflight refused: header mcp-param-a b is not allowed",
        ),
        (
            "x-api-key, h\u{e9}ader",
            "CORS preflight refused: header x-api-key is not allowed",
        ),
    ] {
        let mut headers = http::HeaderMap::new();
        headers.insert("origin", APP.parse().unwrap());
        headers.insert("access-control-request-method", "POST".parse().unwrap());
        headers.insert(
            "access-control-request-headers",
            http::HeaderValue::from_bytes(requested.as_bytes()).unwrap(),
        );
        let mut built = request("OPTIONS", "/mcp/core", &[], "");
        *built.headers_mut() = headers;
        let answer = h.send(built).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{requested}");
        assert_eq!(answer.json()["error"]["message"], message);
    }
    let long = format!("mcp-param-{}", "p".repeat(200));
    let answer = options(&h, "/mcp/core", &preflight(APP, "POST", Some(&long))).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    let message = answer.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        message,
        format!(
            "CORS preflight refused: header {} is not allowed",
            &long[..64]
        )
    );
}
