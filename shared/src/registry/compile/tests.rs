//! Unit tests of manifest compilation (CONTRACT R5, M, T1, T3).

use bytes::Bytes;
use serde_json::{Value, json};

use super::first_pass::compile_manifest_text;
use super::*;
use crate::registry::{ResultFormat, Snapshot, ToolLookup};

fn tool(name: &str, version: &str, active: bool) -> Value {
    json!({
        "name": name,
        "inputSchema": {"type": "object"},
        "_meta": {"version": version, "active": active, "endpoint": "http://127.0.0.1:9/x"}
    })
}

/// What a load made of a manifest: per route key, its serverInfo, instructions,
/// `tools/list` text and tool lookups; or the problems.
fn outcome(compiled: Result<Snapshot, Vec<ManifestProblem>>) -> Result<Vec<String>, Vec<String>> {
    let snapshot = compiled.map_err(|p| p.iter().map(ToString::to_string).collect::<Vec<_>>())?;
    let mut routes: Vec<_> = snapshot
        .routes
        .iter()
        .map(|(k, r)| (Some(k.clone()), r))
        .chain(snapshot.single.iter().map(|r| (None, r)))
        .map(|(k, r)| {
            let mut lookups: Vec<String> = r
                .tools
                .iter()
                .map(|(name, lookup)| match lookup {
                    ToolLookup::Active(t) => {
                        format!(
                            "{name}={}@{} {} {:?}",
                            t.version, t.endpoint, t.method, t.timeout_ms
                        )
                    }
                    ToolLookup::Conflict { active_versions } => {
                        format!("{name}!{active_versions}")
                    }
                })
                .collect();
            lookups.sort();
            format!(
                "{k:?} {:?} {:?} {:?} {} {lookups:?}",
                r.key,
                r.server,
                r.instructions,
                r.tools_list_result().to_json()
            )
        })
        .collect();
    routes.sort();
    Ok(routes)
}

#[test]
fn r5_the_text_loader_and_the_document_loader_agree_on_every_manifest() {
    let many: Vec<Value> = (0..150)
        .map(|i| {
            let mut t = tool(&format!("t{}", i % 140), &format!("{i}"), i % 7 != 0);
            t["description"] = json!(format!("tool {i} \u{00e9} \"quoted\""));
            t["annotations"] = json!({"readOnlyHint": true});
            t["_hidden"] = json!(i);
            t
        })
        .collect();
    let mut broken = many.clone();
    broken[3]["inputSchema"] = json!({"type": "object", "properties": {"a": {"type": 5}}});
    broken[90]["_meta"]["endpoint"] = json!("ftp://x");
    broken[120] = json!("not a tool");
    let cases = [
        json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": many.clone(),
               "server": {"name": "core", "version": "2"}, "instructions": "use it"},
               {"routeKey": "small", "tools": [tool("a", "1", true), tool("a", "2", true)]}]}),
        json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": broken.clone()}]}),
        json!({"tools": many.clone(), "routeKey": "one"}),
        json!({"tools": broken}),
        json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": "nope"}]}),
        json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": many}], "tools": []}),
        json!({"manifestVersion": 2, "routes": []}),
        json!({"manifestVersion": 1, "routes": [{"routeKey": "bad key!", "tools": []}, "x"]}),
        json!({"manifestVersion": 1, "routes": {"core": {}}}),
        json!({"manifestVersion": 1}),
        json!([1, 2]),
    ];
    for (n, case) in cases.iter().enumerate() {
        let text = serde_json::to_vec(case).unwrap();
        let by_document = outcome(compile_manifest(case));
        let by_text = match compile_manifest_text(&Bytes::from(text.clone())) {
            Some(compiled) => outcome(compiled),
            None => by_document.clone(),
        };
        assert_eq!(by_text, by_document, "case {n}");
    }
    // The shapes that take the text path do take it.
    for n in [0, 1, 2, 3, 4, 5, 6] {
        assert!(
            compile_manifest_text(&serde_json::to_vec(&cases[n]).unwrap().into()).is_some(),
            "case {n}"
        );
    }
    assert!(outcome(compile_manifest(&cases[0])).is_ok());
    assert!(outcome(compile_manifest(&cases[1])).unwrap_err().len() == 3);

    // Texts a `Value` cannot write: repeated fields keep their last value on both paths.
    let a = tool("a", "1", true).to_string();
    let b = tool("b", "1", true).to_string();
    let texts = [
        format!(
            r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","tools":[{a}]}}],"routes":[{{"routeKey":"y","tools":[{b}]}}]}}"#
        ),
        format!(r#"{{"tools":[{a}],"tools":"x"}}"#),
        format!(r#"{{"tools":"x","tools":[{a},{b}]}}"#),
        r#"{"tools":{"a":1}}"#.to_string(),
        format!(
            r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","routes":5,"tools":[{a}],"tools":[{b}]}}]}}"#
        ),
        format!(r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","tools":[{a}]}},[]]}}"#),
        format!(
            r#"{{"manifestVersion":1,"routes":[{{"routeKey":"x","tools":[{a}]}}],"routes":7}}"#
        ),
        format!(r#"{{"tools":[{a}]"#),
    ];
    for (n, text) in texts.iter().enumerate() {
        let by_text = compile_manifest_text(&Bytes::copy_from_slice(text.as_bytes())).map(outcome);
        let Ok(document) = serde_json::from_str::<Value>(text) else {
            assert!(by_text.is_none(), "text {n}: not JSON, not compiled");
            continue;
        };
        let by_document = outcome(compile_manifest(&document));
        assert_eq!(
            by_text.unwrap_or_else(|| by_document.clone()),
            by_document,
            "text {n}"
        );
    }
    assert!(
        compile_manifest_text(&Bytes::copy_from_slice(texts[0].as_bytes()))
            .is_some_and(|r| r.is_ok())
    );
    assert!(compile_manifest_text(&Bytes::copy_from_slice(texts[5].as_bytes())).is_none());
}

#[test]
fn r5_every_problem_is_reported_with_its_json_path() {
    let manifest = json!({
        "manifestVersion": 1,
        "routes": [{
            "routeKey": "core",
            "tools": [
                {"name": "bad name!", "inputSchema": {"type": "string"},
                 "_meta": {"endpoint": "ftp://x", "timeoutMs": 0}},
                {"name": "ok", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}},
                 "_meta": {"endpoint": "http://127.0.0.1:9/x"}}
            ]
        }, {"routeKey": "core", "tools": []}]
    });
    let problems: Vec<String> = compile_manifest(&manifest)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    let has = |prefix: &str| problems.iter().any(|p| p.starts_with(prefix));
    assert!(
        has("routes[0].tools[0].name: must be a string"),
        "{problems:?}"
    );
    assert!(
        has("routes[0].tools[0].inputSchema: root must be \"type\": \"object\""),
        "{problems:?}"
    );
    assert!(
        has("routes[0].tools[0]._meta.endpoint: must be an absolute http(s) URL"),
        "{problems:?}"
    );
    assert!(
        has("routes[0].tools[0]._meta.timeoutMs: must be a whole number"),
        "{problems:?}"
    );
    assert!(
        has("routes[0].tools[1].inputSchema: does not compile"),
        "{problems:?}"
    );
    assert!(
        has("routes[1].routeKey: 'core' is repeated"),
        "{problems:?}"
    );
}

#[test]
fn r5_repeated_name_and_version_is_rejected() {
    let manifest = json!({"tools": [tool("a", "1", true), tool("a", "1", false)]});
    let problems = compile_manifest(&manifest).unwrap_err();
    assert_eq!(problems[0].path, "tools[1]._meta.version");
}

#[test]
fn t3_two_active_versions_are_not_listed_and_resolve_to_a_conflict() {
    let manifest = json!({"tools": [tool("a", "1", true), tool("a", "2", true), tool("b", "1", true), tool("c", "1", false)]});
    let snapshot = compile_manifest(&manifest).unwrap();
    let route = snapshot.fixed_route("core").unwrap();
    let list: Value = serde_json::from_str(&route.tools_list_result().to_json()).unwrap();
    assert_eq!(
        list,
        json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}]})
    );
    assert!(matches!(
        route.tool("a"),
        Some(ToolLookup::Conflict { active_versions: 2 })
    ));
    assert!(route.tool("c").is_none());
}

#[test]
fn r5_result_format_is_json_or_mcp_and_output_schema_is_compiled_at_load() {
    let mut mcp = tool("m", "1", true);
    mcp["_meta"]["resultFormat"] = json!("mcp");
    mcp["outputSchema"] = json!({"type": "object", "required": ["n"]});
    let snapshot = compile_manifest(&json!({"tools": [mcp, tool("j", "1", true)]})).unwrap();
    let route = snapshot.fixed_route("core").unwrap();
    let Some(ToolLookup::Active(m)) = route.tool("m") else {
        panic!("m is active")
    };
    assert_eq!(m.result_format, ResultFormat::Mcp);
    assert!(
        m.output_schema
            .as_ref()
            .is_some_and(|v| !v.get().is_valid(&json!({})))
    );
    let Some(ToolLookup::Active(j)) = route.tool("j") else {
        panic!("j is active")
    };
    assert_eq!(j.result_format, ResultFormat::Json);
    assert!(j.output_schema.is_none());

    let mut bad = tool("b", "1", true);
    bad["_meta"]["resultFormat"] = json!("xml");
    bad["outputSchema"] = json!({"type": "array"});
    let problems: Vec<String> = compile_manifest(&json!({"tools": [bad]}))
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        problems,
        [
            "tools[0].outputSchema: root must be \"type\": \"object\"",
            "tools[0]._meta.resultFormat: must be \"json\" or \"mcp\""
        ]
    );
}

/// A route keeps one `Tool` per tool for its life, each in an `Arc` (CONTRACT T4's written-once
/// entries beside it): with the `Arc`'s two counts it fits the allocator's 320-byte size class,
/// not the 448-byte one it took while the validator's cell, a Lambda endpoint and the task
/// support were held inline (10,000 tools: 1.25 MiB).
#[test]
fn t4_a_routes_tool_fits_a_320_byte_allocation() {
    let size = std::mem::size_of::<crate::registry::Tool>() + 2 * std::mem::size_of::<usize>();
    assert!(size <= 320, "Arc<Tool> takes {size} bytes");
}
