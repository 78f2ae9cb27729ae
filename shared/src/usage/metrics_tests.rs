//! Unit tests of the EMF document of a usage event (CONTRACT U1, C6, Z10).

use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Value, json};

use super::*;

fn record() -> UsageRecord {
    UsageRecord {
        route: Some("core".into()),
        route_checked: true,
        method: Some("tools/call".into()),
        tool: Some("search_documents".into()),
        tool_ms: Some(12),
        outcome: Some("tool_error".into()),
        status: Some(200),
        code: None,
        rejection: None,
        duration_ms: Some(15),
        guid: Some("4f1c2a9e-8b7d-4e6f-a5c4-3b2a1f0e9d8c".into()),
        x_request_id: Some("req-1".into()),
        era: Some("modern".into()),
        protocol_version: Some("2026-07-28".into()),
        ..UsageRecord::default()
    }
}

fn document(record: &UsageRecord) -> Value {
    let mut out = Vec::new();
    EmfFormatter::new("TestNs")
        .format(
            record,
            UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            &mut out,
        )
        .expect("a valid EMF document");
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n'), "one line: {text}");
    assert_eq!(text.matches('\n').count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Checks a document against the EMF specification: `_aws` with an integer `Timestamp` and
/// `CloudWatchMetrics` directives whose every dimension is a top-level string member and
/// whose every metric is a top-level number; at most 30 dimensions per set and 100 metrics
/// per directive.
fn assert_emf_spec(doc: &Value) {
    let aws = &doc["_aws"];
    assert!(aws["Timestamp"].is_u64(), "{doc}");
    let directives = aws["CloudWatchMetrics"].as_array().expect("directives");
    assert!(!directives.is_empty());
    for directive in directives {
        assert!(
            directive["Namespace"]
                .as_str()
                .is_some_and(|n| !n.is_empty())
        );
        for set in directive["Dimensions"].as_array().unwrap() {
            let set = set.as_array().unwrap();
            assert!(set.len() <= 30);
            for name in set {
                let name = name.as_str().unwrap();
                assert!(doc[name].is_string(), "dimension {name} is a string: {doc}");
            }
        }
        let metrics = directive["Metrics"].as_array().unwrap();
        assert!(metrics.len() <= 100);
        for metric in metrics {
            let name = metric["Name"].as_str().unwrap();
            assert!(doc[name].is_number(), "metric {name} is a number: {doc}");
        }
    }
}

fn declared(doc: &Value) -> Vec<(Vec<String>, String, String)> {
    let mut out = Vec::new();
    for directive in doc["_aws"]["CloudWatchMetrics"].as_array().unwrap() {
        for set in directive["Dimensions"].as_array().unwrap() {
            let dims: Vec<String> = set
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap().to_string())
                .collect();
            for metric in directive["Metrics"].as_array().unwrap() {
                out.push((
                    dims.clone(),
                    metric["Name"].as_str().unwrap().to_string(),
                    metric["Unit"].as_str().unwrap_or("None").to_string(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn u1_a_tool_call_is_one_emf_document_with_request_and_tool_metrics() {
    let doc = document(&record());
    assert_emf_spec(&doc);
    assert_eq!(doc["_aws"]["Timestamp"], 1_700_000_000_123_u64);
    assert_eq!(
        doc["_aws"]["CloudWatchMetrics"][0]["Namespace"],
        json!("TestNs")
    );
    let request_dims = vec!["Route".to_string(), "Method".into(), "Outcome".into()];
    let route_dims = vec!["Route".to_string()];
    let tool_dims = vec!["Route".to_string(), "Tool".into()];
    let entry =
        |dims: &Vec<String>, name: &str, unit: &str| (dims.clone(), name.into(), unit.into());
    let mut expected = vec![
        entry(&request_dims, "FailedRequests", "Count"),
        entry(&request_dims, "Latency", "Milliseconds"),
        entry(&request_dims, "Requests", "Count"),
        entry(&route_dims, "FailedRequests", "Count"),
        entry(&route_dims, "Latency", "Milliseconds"),
        entry(&route_dims, "Requests", "Count"),
        entry(&route_dims, "RateLimited", "Count"),
        entry(&route_dims, "ColdStarts", "Count"),
        entry(&route_dims, "TasksCreated", "Count"),
        entry(&route_dims, "TasksCompleted", "Count"),
        entry(&route_dims, "TasksFailed", "Count"),
        entry(&route_dims, "TasksCancelled", "Count"),
        entry(&tool_dims, "ToolCalls", "Count"),
        entry(&tool_dims, "ToolErrors", "Count"),
        entry(&tool_dims, "ToolLatency", "Milliseconds"),
    ];
    expected.sort();
    assert_eq!(declared(&doc), expected);
    assert_eq!(doc["RateLimited"], 0);
    assert_eq!(doc["ColdStarts"], 0);
    // The Logs Insights fields, as logged.
    for (field, value) in [
        ("target", json!("mcp_gateway::usage")),
        ("route", json!("core")),
        ("method", json!("tools/call")),
        ("tool", json!("search_documents")),
        ("outcome", json!("tool_error")),
        ("status", json!(200)),
        ("duration_ms", json!(15)),
        ("tool_ms", json!(12)),
        ("guid", json!("4f1c2a9e-8b7d-4e6f-a5c4-3b2a1f0e9d8c")),
        ("x_request_id", json!("req-1")),
        ("era", json!("modern")),
        ("protocol_version", json!("2026-07-28")),
    ] {
        assert_eq!(doc[field], value, "{field}: {doc}");
    }
    // The metric values.
    for (field, value) in [
        ("Route", json!("core")),
        ("Method", json!("tools/call")),
        ("Outcome", json!("tool_error")),
        ("Tool", json!("search_documents")),
        ("Requests", json!(1)),
        ("FailedRequests", json!(0)),
        ("Latency", json!(15)),
        ("ToolCalls", json!(1)),
        ("ToolErrors", json!(1)),
        ("ToolLatency", json!(12)),
    ] {
        assert_eq!(doc[field], value, "{field}: {doc}");
    }
}

#[test]
fn u1_h5_an_origin_rejection_is_a_failed_request_and_never_tool_use() {
    let record = UsageRecord {
        outcome: Some("http_error".into()),
        status: Some(403),
        rejection: Some("origin_not_allowed".into()),
        duration_ms: Some(0),
        guid: Some("g".into()),
        x_request_id: Some("r".into()),
        ..UsageRecord::default()
    };
    let doc = document(&record);
    assert_emf_spec(&doc);
    assert_eq!(doc["Requests"], 1);
    assert_eq!(doc["FailedRequests"], 1);
    assert_eq!(doc["Outcome"], "http_error");
    assert_eq!(doc["Route"], "none");
    assert_eq!(doc["Method"], "none");
    assert_eq!(doc["rejection"], "origin_not_allowed");
    assert_eq!(doc["status"], 403);
    // The request directive and the route directive; no tool directive.
    assert_eq!(
        doc["_aws"]["CloudWatchMetrics"].as_array().unwrap().len(),
        2
    );
    for absent in [
        "Tool",
        "ToolCalls",
        "ToolErrors",
        "ToolLatency",
        "tool",
        "tool_ms",
    ] {
        assert!(doc.get(absent).is_none(), "{absent}: {doc}");
    }
}

#[test]
fn u1_rpc_errors_carry_their_negative_code_as_a_number_and_count_as_failed() {
    let record = UsageRecord {
        outcome: Some("rpc_error".into()),
        code: Some(-32602),
        // The tool was named but never called: not tool use.
        tool_ms: None,
        ..record()
    };
    let doc = document(&record);
    assert_emf_spec(&doc);
    assert_eq!(doc["code"], json!(-32602));
    assert_eq!(doc["FailedRequests"], 1);
    assert_eq!(doc["tool"], "search_documents");
    assert!(doc.get("ToolCalls").is_none(), "{doc}");
    let mut names: Vec<String> = declared(&doc).into_iter().map(|d| d.1).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names,
        [
            "ColdStarts",
            "FailedRequests",
            "Latency",
            "RateLimited",
            "Requests",
            "TasksCancelled",
            "TasksCompleted",
            "TasksCreated",
            "TasksFailed"
        ]
    );
}

#[test]
fn u1_a_429_and_an_instance_first_request_count_under_the_route_alone() {
    let record = UsageRecord {
        method: Some("tools/list".into()),
        tool: None,
        tool_ms: None,
        outcome: Some("http_error".into()),
        status: Some(429),
        cold_start: true,
        trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
        ..record()
    };
    let doc = document(&record);
    assert_emf_spec(&doc);
    assert_eq!(doc["RateLimited"], 1);
    assert_eq!(doc["ColdStarts"], 1);
    assert_eq!(doc["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    let route_only: Vec<String> = declared(&doc)
        .into_iter()
        .filter(|(dims, _, _)| dims == &["Route"])
        .map(|d| d.1)
        .collect();
    assert_eq!(
        route_only,
        [
            "ColdStarts",
            "FailedRequests",
            "Latency",
            "RateLimited",
            "Requests",
            "TasksCancelled",
            "TasksCompleted",
            "TasksCreated",
            "TasksFailed"
        ]
    );
}

#[test]
fn k9_task_statuses_count_under_the_route() {
    for (status, metric) in [
        ("created", "TasksCreated"),
        ("completed", "TasksCompleted"),
        ("failed", "TasksFailed"),
        ("cancelled", "TasksCancelled"),
    ] {
        let record = UsageRecord {
            method: Some("tasks/get".into()),
            task_status: Some(status.into()),
            ..record()
        };
        assert_eq!(record.method_dimension(), "tasks/get");
        let doc = document(&record);
        assert_emf_spec(&doc);
        assert_eq!(doc["task_status"], status);
        for other in [
            "TasksCreated",
            "TasksCompleted",
            "TasksFailed",
            "TasksCancelled",
        ] {
            assert_eq!(doc[other], u64::from(other == metric), "{status}: {other}");
        }
    }
    let working = document(&UsageRecord {
        task_status: Some("working".into()),
        ..record()
    });
    assert_eq!(working["TasksCompleted"], 0);
}

#[test]
fn u1_dimension_values_are_bounded_whatever_the_client_sends() {
    let mut record = UsageRecord {
        method: Some("x".repeat(100)),
        ..record()
    };
    assert_eq!(record.method_dimension(), "other");
    record.method = Some("notifications/cancelled".into());
    assert_eq!(record.method_dimension(), "notification");
    record.method = Some("notifications/initialized".into());
    assert_eq!(record.method_dimension(), "notifications/initialized");
    record.method = Some("server/discover".into());
    assert_eq!(record.method_dimension(), "server/discover");
    record.route_checked = false;
    assert_eq!(record.route_dimension(), "none");
    record.outcome = Some("whatever".into());
    assert_eq!(record.outcome_dimension(), "none");
    record.tool_ms = None;
    assert_eq!(record.tool_dimension(), None);
}

#[test]
fn c6_strings_are_json_escaped_inside_the_document() {
    let record = UsageRecord {
        method: Some("a\"b\\c\nd\u{0}é".into()),
        ..record()
    };
    let doc = document(&record);
    assert_eq!(doc["method"], "a\"b\\c\nd\u{0}é");
    assert_eq!(doc["Method"], "other");
}

#[test]
fn z10_a_policy_denial_is_counted_per_route_and_tool_with_its_decision_and_policies() {
    for (tool_ms, decision) in [(None, "deny"), (None, "error"), (Some(3), "shadow_deny")] {
        let denied = UsageRecord {
            tool: Some("refund".into()),
            tool_ms,
            decision: Some(decision.into()),
            policies: Some("big-refunds".into()),
            ..record()
        };
        let doc = document(&denied);
        assert_emf_spec(&doc);
        assert_eq!(doc["PolicyDenials"], 1, "{doc}");
        assert_eq!(doc["Tool"], "refund");
        assert_eq!(doc["decision"], decision);
        assert_eq!(doc["policies"], "big-refunds");
        let directives = doc["_aws"]["CloudWatchMetrics"].as_array().unwrap();
        assert!(
            directives
                .iter()
                .any(|d| d["Metrics"][0]["Name"] == "PolicyDenials"
                    && d["Dimensions"] == json!([["Route", "Tool"]]))
        );
    }
    let allowed = UsageRecord {
        decision: Some("allow".into()),
        ..record()
    };
    let doc = document(&allowed);
    assert!(doc.get("PolicyDenials").is_none(), "{doc}");
    assert_eq!(doc["decision"], "allow");
}
