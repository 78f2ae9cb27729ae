//! Trace context in and out (CONTRACT O1, O2, O3) against a real Tool Service on loopback: what
//! the Tool Service receives for a caller's traceparent, tracestate and baggage in headers
//! (2025-11-25) or `params._meta` (2026-07-28 and 2025-11-25), for malformed values (ignored,
//! never an error), for an unsampled parent, and in a Lambda tool's client context.

use base64::Engine as _;
use gateway_tests::{Answer, Harness, request, rpc};
use mcp_gateway::trace::Tracing;
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const META_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const META_PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// The Tool Service's answer to every call, and the route's call of `search_documents`.
async fn harness() -> Harness {
    let h = Harness::fixed().await;
    h.tool_answers(
        "/search",
        ResponseTemplate::new(200).set_body_json(json!({"hits": 1})),
    )
    .await;
    h
}

fn call_body(meta: Option<Value>) -> Value {
    let mut params = json!({"name": "search_documents", "arguments": {"query": "q"}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    rpc(json!(7), "tools/call", params)
}

/// The trace headers of the Tool Service's last request: traceparent, tracestate, baggage.
async fn received(h: &Harness) -> (Option<String>, Option<String>, Option<String>) {
    let requests = h.tool_service.received_requests().await.unwrap();
    let last = requests.last().expect("the Tool Service was called");
    let header = |name: &str| {
        let mut values = last.headers.get_all(name).iter();
        let first = values.next().map(|v| v.to_str().unwrap().to_string());
        assert!(values.next().is_none(), "{name} sent once");
        first
    };
    (
        header("traceparent"),
        header("tracestate"),
        header("baggage"),
    )
}

/// The parts of a traceparent the gateway sent: trace id, parent id, flags.
fn parts(traceparent: &str) -> (String, String, String) {
    let fields: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(fields.len(), 4, "{traceparent}");
    assert_eq!(fields[0], "00");
    assert_eq!(fields[1].len(), 32);
    assert_eq!(fields[2].len(), 16);
    assert!(
        traceparent
            .bytes()
            .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{traceparent}"
    );
    (fields[1].into(), fields[2].into(), fields[3].into())
}

fn assert_ok(answer: &Answer) {
    assert_eq!(answer.status, 200);
    let body = answer.json();
    assert_eq!(body["result"]["isError"], false, "{body}");
}

#[tokio::test]
async fn o1_o2_a_header_traceparent_continues_into_the_tool_service_with_a_new_parent_span() {
    let h = harness().await;
    let answer = h
        .post(
            "/mcp/core",
            &call_body(None),
            &[
                ("traceparent", PARENT),
                ("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"),
                ("baggage", "userId=alice,serverNode=DF%2028"),
            ],
        )
        .await;
    assert_ok(&answer);
    let (traceparent, tracestate, baggage) = received(&h).await;
    let (trace_id, parent, flags) = parts(&traceparent.unwrap());
    assert_eq!(trace_id, TRACE_ID);
    // The gateway's CLIENT span, not the caller's span.
    assert_ne!(parent, "00f067aa0ba902b7");
    assert_eq!(flags, "01");
    assert_eq!(
        tracestate.as_deref(),
        Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
    );
    let baggage = baggage.unwrap();
    let mut entries: Vec<&str> = baggage.split(',').collect();
    entries.sort_unstable();
    assert_eq!(entries, ["serverNode=DF%2028", "userId=alice"]);
}

#[tokio::test]
async fn o1_meta_trace_context_wins_over_the_headers_in_both_eras() {
    let h = harness().await;
    let meta = json!({"traceparent": META_PARENT, "tracestate": "meta=1", "baggage": "from=meta"});
    // 2025-11-25 with `_meta` on the call.
    let answer = h
        .post(
            "/mcp/core",
            &call_body(Some(meta.clone())),
            &[
                ("traceparent", PARENT),
                ("tracestate", "header=1"),
                ("baggage", "from=header"),
            ],
        )
        .await;
    assert_ok(&answer);
    let (traceparent, tracestate, baggage) = received(&h).await;
    assert_eq!(parts(&traceparent.unwrap()).0, META_TRACE_ID);
    assert_eq!(tracestate.as_deref(), Some("meta=1"));
    assert_eq!(baggage.as_deref(), Some("from=meta"));

    // 2026-07-28: the envelope and the trace context share `_meta`.
    let mut modern_meta = meta;
    modern_meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    modern_meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let body = call_body(Some(modern_meta));
    let answer = h
        .send(request(
            "POST",
            "/mcp/core",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "search_documents"),
                ("traceparent", PARENT),
            ],
            body.to_string(),
        ))
        .await;
    assert_ok(&answer);
    let (traceparent, tracestate, _) = received(&h).await;
    let (trace_id, _, flags) = parts(&traceparent.unwrap());
    assert_eq!(trace_id, META_TRACE_ID);
    assert_eq!(flags, "01");
    assert_eq!(tracestate.as_deref(), Some("meta=1"));
}

#[tokio::test]
async fn o1_malformed_trace_context_is_ignored_and_never_an_error() {
    let h = harness().await;
    let plain = h.post("/mcp/core", &call_body(None), &[]).await;
    assert_ok(&plain);
    let (fresh, _, _) = received(&h).await;
    let fresh_trace = parts(&fresh.unwrap()).0;
    let bad_parents = [
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4bf92f-00f067aa0ba902b7-01",
        "not a traceparent",
    ];
    for bad in bad_parents {
        let answer = h
            .post(
                "/mcp/core",
                &call_body(Some(json!({"traceparent": bad, "baggage": "=broken"}))),
                &[("traceparent", bad), ("tracestate", "=,=,=")],
            )
            .await;
        assert_ok(&answer);
        assert_eq!(
            answer.json()["result"]["content"][0]["text"],
            plain.json()["result"]["content"][0]["text"],
            "{bad}"
        );
        let (traceparent, tracestate, baggage) = received(&h).await;
        let (trace_id, _, flags) = parts(&traceparent.unwrap());
        assert_ne!(trace_id, TRACE_ID, "{bad}");
        assert_ne!(trace_id, fresh_trace, "a new trace for each request");
        assert_eq!(flags, "01");
        assert_eq!(tracestate, None, "{bad}");
        assert_eq!(baggage, None, "{bad}");
    }
    // `_meta` members that are not strings, and a `_meta` that is not an object.
    for meta in [
        json!({"traceparent": 42, "tracestate": ["a=b"], "baggage": {"k": "v"}}),
        json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    ] {
        let answer = h.post("/mcp/core", &call_body(Some(meta)), &[]).await;
        assert_ok(&answer);
        let (traceparent, _, baggage) = received(&h).await;
        assert_ne!(parts(&traceparent.unwrap()).0, TRACE_ID);
        assert_eq!(baggage, None);
    }
    // Line breaks in `_meta` values never reach a header.
    let answer = h
        .post(
            "/mcp/core",
            &call_body(Some(json!({
                "traceparent": PARENT,
                "tracestate": "a=b\r\nx-injected: 1",
                "baggage": "k=v;p\r\nx-injected: 1"
            }))),
            &[],
        )
        .await;
    assert_ok(&answer);
    let requests = h.tool_service.received_requests().await.unwrap();
    let last = requests.last().unwrap();
    assert!(last.headers.get("x-injected").is_none());
    let (traceparent, tracestate, _) = received(&h).await;
    assert_eq!(parts(&traceparent.unwrap()).0, TRACE_ID);
    assert_eq!(tracestate, None);
}

#[tokio::test]
async fn o5_an_unsampled_parent_stays_unsampled_downstream() {
    let h = harness().await;
    let answer = h
        .post(
            "/mcp/core",
            &call_body(None),
            &[(
                "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
            )],
        )
        .await;
    assert_ok(&answer);
    let (traceparent, _, _) = received(&h).await;
    let (trace_id, _, flags) = parts(&traceparent.unwrap());
    assert_eq!(trace_id, TRACE_ID);
    assert_eq!(flags, "00");
}

/// The `custom` map of the last invocation's client context.
async fn client_context(h: &Harness) -> serde_json::Map<String, Value> {
    let requests = h.tool_service.received_requests().await.unwrap();
    let last = requests.last().expect("one invocation");
    let encoded = last.headers.get("x-amz-client-context").unwrap();
    let decoded: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(encoded.as_bytes())
            .unwrap(),
    )
    .unwrap();
    decoded["custom"].as_object().unwrap().clone()
}

#[tokio::test]
async fn o3_lambda_tools_get_trace_keys_in_the_client_context_dropped_first_when_too_large() {
    let h = crate::lambda_tools::answering_ok(Tracing::default()).await;
    let body = rpc(
        json!(1),
        "tools/call",
        json!({"name": "lookup_glossary", "arguments": {"term": "x"}}),
    );
    let baggage = format!("k={}", "b".repeat(900));
    let headers = [
        ("traceparent", PARENT),
        ("tracestate", "rojo=00f067aa0ba902b7"),
        ("baggage", baggage.as_str()),
    ];
    assert_ok(&h.post("/mcp/core", &body, &headers).await);
    let custom = client_context(&h).await;
    let (trace_id, parent, _) = parts(custom["traceparent"].as_str().unwrap());
    assert_eq!(trace_id, TRACE_ID);
    assert_ne!(parent, "00f067aa0ba902b7");
    assert_eq!(custom["tracestate"], "rojo=00f067aa0ba902b7");
    assert_eq!(custom["baggage"], baggage.as_str());
    assert_eq!(custom["mcpToolName"], "lookup_glossary");

    // An employee number that leaves no room for the baggage: the baggage goes first, the call
    // is made.
    let employee = "E".repeat(1800);
    let mut with_employee = headers.to_vec();
    with_employee.push(("employee-no", employee.as_str()));
    assert_ok(&h.post("/mcp/core", &body, &with_employee).await);
    let custom = client_context(&h).await;
    assert!(custom.get("baggage").is_none(), "{custom:?}");
    assert_eq!(custom["tracestate"], "rojo=00f067aa0ba902b7");
    assert_eq!(parts(custom["traceparent"].as_str().unwrap()).0, TRACE_ID);
    assert_eq!(custom["employee-no"], employee.as_str());
}

#[tokio::test]
async fn o1_o2_baggage_goes_on_exactly_as_received_or_not_at_all() {
    let h = harness().await;
    // Valid as a whole: passed on byte for byte, a percent-encoded comma still one entry.
    for baggage in [
        "k=v;p%2Cinjected=evil",
        "token=YWJj==,a=b",
        "userId=alice, n = 1",
    ] {
        let answer = h
            .post("/mcp/core", &call_body(None), &[("baggage", baggage)])
            .await;
        assert_ok(&answer);
        assert_eq!(received(&h).await.2.as_deref(), Some(baggage));
    }
    // Not valid, or over W3C's limits: nothing goes on, and the answer is the same.
    let quotes = format!("k={}", "\"".repeat(8000));
    let spaces = format!("k=a{}b", " ".repeat(3000));
    let members = vec!["k=v"; 65].join(",");
    let long = format!("k={}", "v".repeat(8191));
    for baggage in [
        quotes.as_str(),
        spaces.as_str(),
        members.as_str(),
        long.as_str(),
        "good=1,k=v;p%0D%0Ax\"",
    ] {
        let answer = h
            .post("/mcp/core", &call_body(None), &[("baggage", baggage)])
            .await;
        assert_ok(&answer);
        assert_eq!(
            received(&h).await.2,
            None,
            "{}",
            &baggage[..20.min(baggage.len())]
        );
    }
    // An invalid `_meta.baggage` is ignored as if absent: the header's goes on.
    for meta in [json!("=broken"), json!(""), json!("no-equals-sign")] {
        let answer = h
            .post(
                "/mcp/core",
                &call_body(Some(json!({"baggage": meta}))),
                &[("baggage", "from=header")],
            )
            .await;
        assert_ok(&answer);
        assert_eq!(
            received(&h).await.2.as_deref(),
            Some("from=header"),
            "{meta}"
        );
    }
    // A tracestate with a key twice or an empty value is no tracestate.
    for tracestate in ["a=1,a=2", "k="] {
        let answer = h
            .post(
                "/mcp/core",
                &call_body(None),
                &[("traceparent", PARENT), ("tracestate", tracestate)],
            )
            .await;
        assert_ok(&answer);
        let (traceparent, sent, _) = received(&h).await;
        assert_eq!(parts(&traceparent.unwrap()).0, TRACE_ID);
        assert_eq!(sent, None, "{tracestate}");
    }
}

/// CONTRACT O1: a tracestate of 110,000 distinct members (nearly 1 MB, under the body limit)
/// is dropped as a whole, in `_meta` and in the header, and changes no answer: a `ping` and a
/// notification answer as they do without it, and a call's Tool Service gets the parent but no
/// tracestate. So does a tracestate within the byte limit with a 33rd member.
#[tokio::test]
async fn o1_a_tracestate_past_32_members_or_its_byte_limit_is_dropped_and_changes_no_answer() {
    let h = harness().await;
    let members: Vec<String> = (0..110_000).map(|i| format!("{i:x}=v")).collect();
    let huge = members.join(",");
    assert!(
        huge.len() > 800_000 && huge.len() < 1_000_000,
        "{}",
        huge.len()
    );
    let thirty_three = members[..33].join(",");
    let ping = |meta: Option<Value>| {
        let mut body = rpc(json!(1), "ping", json!({}));
        if let Some(meta) = meta {
            body["params"]["_meta"] = meta;
        }
        body
    };
    let plain = h.post("/mcp/core", &ping(None), &[]).await;
    let with_state = h
        .post(
            "/mcp/core",
            &ping(Some(json!({"traceparent": PARENT, "tracestate": huge}))),
            &[],
        )
        .await;
    assert_eq!(
        (with_state.status, with_state.json()),
        (plain.status, plain.json())
    );
    let mut notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    notification["params"] = json!({"_meta": {"traceparent": PARENT, "tracestate": huge}});
    let accepted = h.post("/mcp/core", &notification, &[]).await;
    assert_eq!(accepted.status, 202);
    for state in [&huge, &thirty_three] {
        let answer = h
            .post(
                "/mcp/core",
                &call_body(Some(json!({"traceparent": PARENT, "tracestate": state}))),
                &[],
            )
            .await;
        assert_ok(&answer);
        let (traceparent, tracestate, _) = received(&h).await;
        assert_eq!(parts(&traceparent.unwrap()).0, &PARENT[3..35]);
        assert_eq!(tracestate, None);
    }
    // In the header too, within the body limit's bytes.
    let answer = h
        .post(
            "/mcp/core",
            &call_body(None),
            &[("traceparent", PARENT), ("tracestate", &thirty_three)],
        )
        .await;
    assert_ok(&answer);
    assert_eq!(received(&h).await.1, None);
}
