//! Arbitrary `Authorization` values (CONTRACT A3) through the real service in `token+oauth` mode,
//! over the real store (moto) and a key set on loopback: every answer is 200, 401, 429 or 503
//! (A6, A8, A9), never a 5xx from a panic, and only a real credential is ever admitted (A3).
//!
//! `PROPTEST_CASES` sets the case count (default [`DEFAULT_CASES`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use gateway_tests::auth::{Issuer, IssuerKey, RESOURCE_URL, oauth_harness};
use gateway_tests::{VERSION, request, rpc};
use mcp_gateway::auth::{AuthMode, PersonalToken, oauth_key};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};
use serde_json::{Value, json};

/// Cases per run when `PROPTEST_CASES` is unset.
const DEFAULT_CASES: u32 = 2_000;

/// An `Authorization` value: raw bytes, a scheme with junk, token-like strings, mutated real
/// credentials.
fn authorization(valid: Vec<String>) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![8 => 0x20_u8..0x7f, 1 => Just(b'\t'), 1 => 0x80_u8..=0xff];
    let raw = prop::collection::vec(byte, 0..96);
    let scheme = prop::sample::select(vec!["Bearer ", "bearer ", "BEARER  ", "Basic ", "Bearer"]);
    let token_like = (
        scheme,
        prop::sample::select(vec!["mcpat_", "", "eyJ", "a.b."]),
        "[A-Za-z0-9._~+/=-]{0,80}",
    )
        .prop_map(|(s, p, t)| format!("{s}{p}{t}").into_bytes());
    let mutated = (
        prop::sample::select(valid),
        any::<prop::sample::Index>(),
        any::<u8>(),
    )
        .prop_map(|(v, i, b)| {
            let mut bytes = v.into_bytes();
            let i = i.index(bytes.len());
            bytes[i] = b;
            bytes
        });
    prop_oneof![3 => raw, 4 => token_like, 3 => mutated]
}

#[test]
fn a3_arbitrary_authorization_values_get_only_200_401_429_or_503() {
    let cases = gateway_tests::proptest_cases(DEFAULT_CASES);
    let runtime = gateway_tests::two_worker_runtime();
    let key = IssuerKey::ec("ec-1");
    let (issuer, h, valid) = runtime.block_on(async {
        let issuer = Issuer::start(&[&key]).await;
        let h = oauth_harness(AuthMode::TokenAndOAuth, &issuer, &[]).await;
        let token = PersonalToken::generate().unwrap();
        h.grant(token.store_key(), &["core"], 600, 86_400).await;
        h.grant(
            oauth_key(&issuer.issuer, "alice", "agent-cli"),
            &["core"],
            600,
            86_400,
        )
        .await;
        let jwt = key.sign(&issuer.claims(RESOURCE_URL, "alice"));
        let valid = vec![
            format!("Bearer {}", token.expose()),
            format!("Bearer {jwt}"),
        ];
        (issuer, h, valid)
    });
    let admitted = AtomicUsize::new(0);
    let body = rpc(json!(1), "tools/list", Value::Null).to_string();
    let mut runner = TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let result = runner.run(&authorization(valid.clone()), |value| {
        let Ok(header) = http::HeaderValue::from_bytes(&value) else {
            return Ok(());
        };
        let mut req = request(
            "POST",
            "/mcp/core",
            &[("content-type", "application/json"), VERSION],
            body.clone(),
        );
        req.headers_mut().insert("authorization", header);
        let answer = runtime.block_on(h.harness.send(req));
        let status = answer.status.as_u16();
        prop_assert!(
            matches!(status, 200 | 401 | 429 | 503),
            "status {status} for {:?}",
            String::from_utf8_lossy(&value)
        );
        if status == 200 {
            // Only an unchanged real credential (or one whose mutation kept it equal) passes.
            let text = String::from_utf8_lossy(&value);
            let real = valid.iter().any(|v| {
                let (scheme, rest) = text.split_once(' ').unwrap_or_default();
                scheme.eq_ignore_ascii_case("bearer") && v.ends_with(rest.trim_start())
            });
            prop_assert!(real, "admitted {text:?}");
            admitted.fetch_add(1, Ordering::Relaxed);
        }
        Ok::<(), TestCaseError>(())
    });
    drop(issuer);
    if let Err(failure) = result {
        panic!("{failure}");
    }
    println!(
        "authorization: {cases} cases, {} admitted",
        admitted.load(Ordering::Relaxed)
    );
}
