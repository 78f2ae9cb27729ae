//! Every file in `manifests/` loads and validates, the JSON Schema of the format accepts them,
//! and invalid manifests are reported by JSON path (CONTRACT R5, M).

use std::path::PathBuf;

use mcp_gateway::registry::compile_manifest;
use serde_json::{Value, json};

fn manifests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../manifests")
}

fn schema_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(manifests_dir().join("manifest.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::meta::validate(&schema).expect("the manifest schema is a valid 2020-12 schema");
    jsonschema::validator_for(&schema).expect("the manifest schema compiles")
}

#[test]
fn m_every_manifest_in_the_folder_compiles_and_matches_the_format_schema() {
    let validator = schema_validator();
    let mut checked = 0;
    for entry in std::fs::read_dir(manifests_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "manifest.schema.json" || path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        compile_manifest(&document).unwrap_or_else(|p| panic!("{name}: {p:?}"));
        checked += 1;
    }
    assert!(checked >= 1);
}

/// Asserts that `manifest` is refused at load with a problem that starts with `expected`.
#[track_caller]
fn assert_refused(manifest: &Value, expected: &str) {
    let problems: Vec<String> = compile_manifest(manifest)
        .expect_err(expected)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        problems.iter().any(|p| p.starts_with(expected)),
        "expected {expected:?} in {problems:?}"
    );
}

#[test]
fn r5_table_of_invalid_manifests_with_their_json_path_messages() {
    let tool = |extra: Value| {
        let mut t = json!({"name": "t", "inputSchema": {"type": "object"},
                           "_meta": {"endpoint": "https://tools.example/t"}});
        if let (Value::Object(t), Value::Object(extra)) = (&mut t, extra) {
            for (k, v) in extra {
                t.insert(k, v);
            }
        }
        t
    };
    let route = |tools: Vec<Value>| json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": tools}]});
    let cases = [
        (json!([]), "manifest must be a JSON object"),
        (json!({"routes": []}), "manifestVersion: is required (1)"),
        (
            json!({"manifestVersion": 2, "routes": []}),
            "manifestVersion: must be 1",
        ),
        (
            json!({"manifestVersion": 1}),
            "'routes' (or 'tools' for a single route) is required",
        ),
        (
            json!({"manifestVersion": 1, "routes": [], "tools": []}),
            "give either 'routes' or 'tools', not both",
        ),
        (
            json!({"manifestVersion": 1, "routes": {}}),
            "routes: must be an array",
        ),
        (
            json!({"manifestVersion": 1, "routes": [{"routeKey": "a/b", "tools": []}]}),
            "routes[0].routeKey: must be a string of 1-64 characters [A-Za-z0-9._-]",
        ),
        (
            json!({"manifestVersion": 1, "routes": [{"routeKey": "core"}]}),
            "routes[0].tools: must be an array",
        ),
        (
            route(vec![tool(json!({"name": ""}))]),
            "routes[0].tools[0].name: must be a string of 1-128 characters [A-Za-z0-9_.-]",
        ),
        (
            route(vec![tool(json!({"name": "a b"}))]),
            "routes[0].tools[0].name: must be a string of 1-128 characters [A-Za-z0-9_.-]",
        ),
        (
            route(vec![tool(json!({"description": 5}))]),
            "routes[0].tools[0].description: must be a string",
        ),
        (
            route(vec![tool(json!({"inputSchema": "object"}))]),
            "routes[0].tools[0].inputSchema: must be a JSON Schema object",
        ),
        (
            route(vec![tool(json!({"inputSchema": {"type": "array"}}))]),
            "routes[0].tools[0].inputSchema: root must be \"type\": \"object\"",
        ),
        (
            route(vec![tool(
                json!({"outputSchema": {"type": "object", "properties": {"a": {"type": "nope"}}}}),
            )]),
            "routes[0].tools[0].outputSchema: does not compile",
        ),
        (
            route(vec![tool(json!({"annotations": []}))]),
            "routes[0].tools[0].annotations: must be an object",
        ),
        (
            route(vec![tool(json!({"_meta": {}}))]),
            "routes[0].tools[0]._meta.endpoint: must be an absolute http(s) URL",
        ),
        (
            route(vec![tool(json!({"_meta": {"endpoint": "/relative"}}))]),
            "routes[0].tools[0]._meta.endpoint: must be an absolute http(s) URL",
        ),
        (
            route(vec![tool(
                json!({"_meta": {"endpoint": "https://x/t", "timeoutMs": 900_001}}),
            )]),
            "routes[0].tools[0]._meta.timeoutMs: must be a whole number of ms from 1 to 900000",
        ),
        (
            route(vec![tool(
                json!({"_meta": {"endpoint": "https://x/t", "active": "yes"}}),
            )]),
            "routes[0].tools[0]._meta.active: must be a boolean",
        ),
        (
            route(vec![tool(json!({})), tool(json!({}))]),
            "routes[0].tools[1]._meta.version: tool 't' version '' is repeated",
        ),
    ];
    for (manifest, expected) in cases {
        assert_refused(&manifest, expected);
    }
}

/// A single-route manifest with one tool whose `inputSchema` is `schema`.
fn with_input_schema(schema: &Value) -> Value {
    json!({"manifestVersion": 1, "routes": [{"routeKey": "core", "tools": [{
        "name": "t",
        "inputSchema": schema,
        "_meta": {"endpoint": "https://tools.example/t"}
    }]}]})
}

#[test]
fn n6_x_mcp_header_on_top_level_string_integer_and_boolean_properties_is_valid() {
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "shard": {"type": "integer", "x-mcp-header": "Shard-Id"},
        "dry": {"type": "boolean", "x-mcp-header": "x!#$%&'*+.^_`|~1"},
        "long": {"type": "string", "x-mcp-header": "L".repeat(118)},
        "x-mcp-header": {"type": "object", "properties": {"a": {"type": "string"}}},
        "note": {"type": "string", "default": {"x-mcp-header": "data, not an annotation"}}
    }});
    let snapshot = compile_manifest(&with_input_schema(&schema)).unwrap();
    let route = snapshot.route("core").unwrap();
    let Some(mcp_gateway::registry::ToolLookup::Active(tool)) = route.tool("t") else {
        panic!("tool t is active");
    };
    let long_header = format!("mcp-param-{}", "l".repeat(118));
    let headers: Vec<(&str, &str)> = tool
        .header_params
        .iter()
        .map(|p| (p.property.as_str(), p.header.as_str()))
        .collect();
    assert_eq!(
        headers,
        [
            ("region", "mcp-param-region"),
            ("shard", "mcp-param-shard-id"),
            ("dry", "mcp-param-x!#$%&'*+.^_`|~1"),
            ("long", long_header.as_str()),
        ]
    );
}

#[test]
fn n6_invalid_x_mcp_header_annotations_make_the_manifest_invalid() {
    let at = "routes[0].tools[0].inputSchema";
    let cases = [
        (
            json!({"a": {"type": "string", "x-mcp-header": ""}}),
            format!("{at}.properties.a.x-mcp-header: must be a non-empty HTTP header token"),
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Re gion"}}),
            format!("{at}.properties.a.x-mcp-header: must be a non-empty HTTP header token"),
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Ré"}}),
            format!("{at}.properties.a.x-mcp-header: must be a non-empty HTTP header token"),
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": 7}}),
            format!("{at}.properties.a.x-mcp-header: must be a non-empty HTTP header token"),
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "H".repeat(119)}}),
            format!(
                "{at}.properties.a.x-mcp-header: must be at most 118 characters, so that a browser's preflight admits Mcp-Param-<Name> (H9)"
            ),
        ),
        (
            json!({"a": {"type": "number", "x-mcp-header": "A"}}),
            format!(
                "{at}.properties.a.x-mcp-header: may only annotate a property of type string, integer or boolean"
            ),
        ),
        (
            json!({"a": {"type": ["string", "null"], "x-mcp-header": "A"}}),
            format!(
                "{at}.properties.a.x-mcp-header: may only annotate a property of type string, integer or boolean"
            ),
        ),
        (
            json!({"a": {"x-mcp-header": "A"}}),
            format!(
                "{at}.properties.a.x-mcp-header: may only annotate a property of type string, integer or boolean"
            ),
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Region"},
                   "b": {"type": "string", "x-mcp-header": "REGION"}}),
            format!(
                "{at}.properties.b.x-mcp-header: 'REGION' is used twice in this tool (case-insensitively)"
            ),
        ),
        (
            json!({"o": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            format!(
                "{at}.properties.o.properties.a.x-mcp-header: may only annotate a top-level property of the inputSchema"
            ),
        ),
        (
            json!({"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
            format!(
                "{at}.properties.l.items.x-mcp-header: may only annotate a top-level property of the inputSchema"
            ),
        ),
        (
            json!({"u": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}),
            format!(
                "{at}.properties.u.anyOf.0.x-mcp-header: may only annotate a top-level property of the inputSchema"
            ),
        ),
    ];
    for (properties, expected) in cases {
        let schema = json!({"type": "object", "properties": properties});
        assert_refused(&with_input_schema(&schema), &expected);
    }
    // On the root itself and under $defs, too.
    for (schema, expected) in [
        (
            json!({"type": "object", "x-mcp-header": "A"}),
            format!("{at}.x-mcp-header: may only annotate a top-level property of the inputSchema"),
        ),
        (
            json!({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "A"}}}),
            format!(
                "{at}.$defs.d.x-mcp-header: may only annotate a top-level property of the inputSchema"
            ),
        ),
    ] {
        assert_refused(&with_input_schema(&schema), &expected);
    }
}

#[test]
fn r5_an_invalid_schema_is_refused_at_load_with_the_compilers_message() {
    // Validators are compiled on first use, but every schema is checked at load: a schema that
    // fails its meta-schema, a reference that does not resolve and a pattern that is no regular
    // expression all fail the load with what a compilation says.
    for (field, schema) in [
        (
            "inputSchema",
            json!({"type": "object", "properties": {"a": {"type": "nope"}}}),
        ),
        (
            "inputSchema",
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}),
        ),
        (
            "inputSchema",
            json!({"type": "object", "properties": {"a": {"pattern": "(x"}}}),
        ),
        (
            "outputSchema",
            json!({"type": "object", "properties": {"a": {"maxItems": -2}}}),
        ),
    ] {
        let mut tool = json!({"name": "t", "inputSchema": {"type": "object"},
                              "_meta": {"endpoint": "https://tools.example/t"}});
        tool[field] = schema.clone();
        let manifest = json!({"manifestVersion": 1, "tools": [tool]});
        let problems: Vec<String> = compile_manifest(&manifest)
            .expect_err(field)
            .iter()
            .map(ToString::to_string)
            .collect();
        let expected = format!(
            "tools[0].{field}: does not compile: {}",
            jsonschema::validator_for(&schema).unwrap_err()
        );
        assert_eq!(problems, [expected], "{schema}");
    }
}
