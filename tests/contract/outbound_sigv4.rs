//! `sigv4` tools (CONTRACT M5, X12): the request a recording Tool Service receives carries a
//! SigV4 signature, made with the gateway's own AWS credentials for the manifest's service and
//! region, that the signer recomputes over exactly what arrived.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use mcp_gateway::Config;
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, Request, ResponseTemplate};

use super::outbound_credentials::{harness, received, result_of, tool_with};

/// `YYYYMMDDTHHMMSSZ` as a time.
fn amz_date(text: &str) -> SystemTime {
    let n = |range: std::ops::Range<usize>| text[range].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(4..6), n(6..8));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + n(9..11) * 3_600 + n(11..13) * 60 + n(13..15);
    UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap())
}

/// The signature SigV4 gives the request as it arrived, and the one it carries.
fn signatures(request: &Request, region: &str, service: &str) -> (String, String) {
    let authorization = request.headers["authorization"].to_str().unwrap();
    let scope = format!("/{region}/{service}/aws4_request, SignedHeaders=");
    assert!(
        authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"),
        "{authorization}"
    );
    assert!(authorization.contains(&scope), "{authorization}");
    let signed_names = authorization
        .split("SignedHeaders=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let carried = authorization
        .rsplit("Signature=")
        .next()
        .unwrap()
        .to_string();
    let headers: Vec<(&str, &str)> = signed_names
        .split(';')
        .filter(|name| !matches!(*name, "host" | "x-amz-date"))
        .map(|name| (name, request.headers[name].to_str().unwrap()))
        .collect();
    assert!(signed_names.contains("host") && signed_names.contains("x-amz-date"));
    let time = amz_date(request.headers["x-amz-date"].to_str().unwrap());
    let identity = Credentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
        None,
        "test",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .unwrap()
        .into();
    // The URL as sent: the recorder names its own host `localhost`.
    let host = request.headers["host"].to_str().unwrap();
    let url = match request.url.query() {
        Some(query) => format!("http://{host}{}?{query}", request.url.path()),
        None => format!("http://{host}{}", request.url.path()),
    };
    let signable = SignableRequest::new(
        request.method.as_str(),
        &url,
        headers.into_iter(),
        SignableBody::Bytes(&request.body),
    )
    .unwrap();
    let expected = sign(signable, &params).unwrap().signature().to_string();
    (expected, carried)
}

#[tokio::test]
async fn x12_sigv4_tools_are_signed_for_their_service_and_region_over_what_is_sent() {
    let tools = vec![
        tool_with(
            "signed",
            "/prod/items?stage=1",
            json!({"type": "sigv4",
            "service": "execute-api", "region": "eu-west-1"}),
            &json!({}),
        ),
        tool_with(
            "signed_get",
            "/prod/items/{id}",
            json!({"type": "sigv4",
            "service": "execute-api", "region": "us-east-2"}),
            &json!({"method": "GET", "parameters": {"id": "path", "q": "query"}}),
        ),
    ];
    let mut tools = tools;
    tools[1]["inputSchema"] = json!({"type": "object", "properties": {
        "id": {"type": "string"}, "q": {"type": "string"}}, "required": ["id"]});
    let h = harness(Config::fixed_defaults(), tools, &[]).await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&h.tool_service)
        .await;
    let answer = h.call_tool("signed", json!({"q": "a b", "n": 1.50})).await;
    assert_eq!(result_of(&answer), (false, "ok".into()));
    let answer = h
        .call_tool("signed_get", json!({"id": "x/1", "q": "ä b"}))
        .await;
    assert_eq!(result_of(&answer), (false, "ok".into()));
    let seen = received(&h).await;
    assert_eq!(seen.len(), 2);
    let (expected, carried) = signatures(&seen[0], "eu-west-1", "execute-api");
    assert_eq!(expected, carried);
    assert_eq!(seen[0].body, br#"{"q":"a b","n":1.5}"#);
    let (expected, carried) = signatures(&seen[1], "us-east-2", "execute-api");
    assert_eq!(expected, carried);
    assert_eq!(seen[1].url.query(), Some("q=%C3%A4%20b"));
}
