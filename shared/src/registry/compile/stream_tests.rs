//! The one-pass reading of a manifest's tools ([`super::tool_stream`], [`super::schema_check`])
//! against the full check ([`super::tool::compile_tool`]): the same manifests load, with the
//! same problems in the same words, the same tools and `tools/list` entries, and validators
//! that judge arguments alike (CONTRACT R5, T1, T4, X2).

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::first_pass::compile_manifest_text;
use super::*;
use crate::registry::{Route, Snapshot, ToolLookup};

/// Arguments each tool's validators are asked about.
fn samples() -> Vec<Value> {
    vec![
        json!({}),
        json!({"a": "x", "b": 1}),
        json!({"a": 3, "n": -1.5, "tags": ["x", "x"]}),
        json!({"q": "", "limit": 51, "when": {"from": "2026-01-01"}}),
        json!({"x-mcp-header": true, "a": null}),
    ]
}

/// Everything a load made of a manifest, for comparing two loads: per route, its tools/list
/// entries parsed, and per tool its fields and what its validators say of [`samples`].
pub(super) fn outcome(
    compiled: Result<Snapshot, Vec<ManifestProblem>>,
) -> Result<Vec<String>, Vec<String>> {
    let snapshot = compiled.map_err(|p| p.iter().map(ToString::to_string).collect::<Vec<_>>())?;
    let mut routes: Vec<&Route> = snapshot.routes.values().map(AsRef::as_ref).collect();
    routes.extend(snapshot.single.as_deref());
    let mut out = Vec::new();
    for route in routes {
        let list: Value = serde_json::from_str(&route.tools_list_result().to_json()).unwrap();
        out.push(format!("{:?} {list}", route.key));
        let mut names: Vec<&String> = route.tools.keys().collect();
        names.sort();
        for name in names {
            let line = match &route.tools[name] {
                ToolLookup::Active(tool) => {
                    let judge = |v: &crate::registry::LazyValidator| -> Vec<String> {
                        samples()
                            .iter()
                            .map(|s| {
                                let mut errors: Vec<String> =
                                    v.get().iter_errors(s).map(|e| e.to_string()).collect();
                                errors.sort();
                                errors.join("; ")
                            })
                            .collect()
                    };
                    format!(
                        "{name} {} {} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                        tool.version,
                        tool.endpoint,
                        tool.method,
                        tool.timeout_ms,
                        tool.result_format,
                        tool.header_params,
                        tool.rest.is_some(),
                        tool.auth,
                        judge(&tool.input_schema),
                        tool.output_schema.as_deref().map(judge),
                    )
                }
                ToolLookup::Conflict { active_versions } => format!("{name}!{active_versions}"),
            };
            out.push(line);
        }
    }
    out.sort();
    Ok(out)
}

/// Loads `tools` as a single-route manifest both ways and compares the loads.
fn assert_same_load(tools: &[Value]) -> Result<(), Vec<String>> {
    let document = json!({"tools": tools, "routeKey": "core"});
    let by_document = outcome(compile_manifest(&document));
    let text = serde_json::to_vec(&document).unwrap();
    let by_text =
        outcome(compile_manifest_text(&Bytes::from(text.clone())).expect("a manifest's shape"));
    assert_eq!(by_text, by_document, "{document}");
    by_document.map(|_| ())
}

pub(super) fn with_schema(name: &str, schema: &Value) -> Value {
    json!({
        "name": name,
        "description": "d",
        "inputSchema": schema,
        "_meta": {"endpoint": format!("http://127.0.0.1:9/{name}")}
    })
}

#[test]
fn r5_t4_tools_read_in_one_pass_load_as_the_full_check_loads_them() {
    let schemas = [
        // Proven by reading.
        json!({"type": "object"}),
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"], "minLength": 1},
               "n": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
               "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "uniqueItems": true}},
               "required": ["a"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"when": {"$ref": "#/$defs/period"}},
               "$defs": {"period": {"type": "object", "properties": {"from": {"type": "string", "format": "date"}}}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x+$"}}}),
        json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}], "x-extra": {"k": 1}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region"}}}),
        json!({"properties": {"a": {"const": null, "default": [1, {"b": 2}], "examples": []}}}),
        // Compiled at load.
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
               "properties": {"a": {"type": "integer"}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/definitions/a"}},
               "definitions": {"a": {"type": "string"}}}),
        json!({"type": "object", "patternProperties": {"^x": {"type": "integer"}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
        // Left to the full check, valid.
        json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 2.0}}}),
        json!({"type": "object", "required": []}),
        // Invalid, with the full check's messages.
        json!({"type": "object", "properties": {"a": {"type": "nope"}}}),
        json!({"type": "object", "properties": {"a": {"minLength": -1}}}),
        json!({"type": "object", "required": ["a", "a"]}),
        json!({"type": "object", "properties": {"a": {"type": ["string", "string"]}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(open"}}}),
        json!({"type": "object", "properties": {"a": {"enum": []}}}),
        json!({"type": "object", "properties": {"a": {"multipleOf": 0}}}),
        json!({"type": "object", "allOf": []}),
        json!({"type": "string"}),
        json!({"type": ["object"]}),
        json!(true),
        json!("object"),
        json!({"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "items": {"x-mcp-header": "B"}}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "bad header"}}}),
    ];
    for (i, schema) in schemas.iter().enumerate() {
        let _ = assert_same_load(&[with_schema(&format!("t{i}"), schema)]);
    }
    let _ = assert_same_load(
        &schemas
            .iter()
            .take(7)
            .enumerate()
            .map(|(i, s)| with_schema(&format!("t{i}"), s))
            .collect::<Vec<_>>(),
    );

    let base = with_schema(
        "a",
        &json!({"type": "object", "properties": {"id": {"type": "integer"}}}),
    );
    let mut tools = Vec::new();
    let mut change = |f: &dyn Fn(&mut Value)| {
        let mut tool = base.clone();
        f(&mut tool);
        tools.push(tool);
    };
    change(&|t| t["title"] = json!(5));
    change(&|t| t["description"] = Value::Null);
    change(&|t| t["annotations"] = json!([1]));
    change(&|t| t["icons"] = json!({"src": "x"}));
    change(&|t| t["icons"] = json!([{"src": "https://example.com/a.png"}]));
    change(&|t| t["outputSchema"] = json!({"type": "object", "required": ["n"]}));
    change(&|t| t["outputSchema"] = json!({"type": "array"}));
    change(&|t| t["outputSchema"] = Value::Null);
    change(&|t| t["name"] = json!("bad name"));
    change(&|t| t["name"] = json!(7));
    change(&|t| {
        t.as_object_mut().unwrap().remove("inputSchema");
    });
    change(&|t| {
        t.as_object_mut().unwrap().remove("_meta");
    });
    change(&|t| t["_meta"] = json!("x"));
    change(&|t| t["_meta"]["endpoint"] = json!("ftp://x"));
    change(&|t| t["_meta"]["endpoint"] = json!("http://user:pw@127.0.0.1/x"));
    change(&|t| t["_meta"]["endpoint"] = json!("http://127.0.0.1/a/%2E%2e/b"));
    change(&|t| t["_meta"]["endpoint"] = json!("http://127.0.0.1/{id}"));
    change(&|t| {
        t["_meta"]["endpoint"] = json!("arn:aws:lambda:eu-west-1:123456789012:function:f");
    });
    change(&|t| {
        t["_meta"]["endpoint"] = json!("arn:aws:lambda:eu-west-1:123456789012:function:f");
        t["_meta"]["method"] = json!("GET");
    });
    change(&|t| {
        t["_meta"]["endpoint"] = json!("http://127.0.0.1:9/items/{id}");
        t["_meta"]["method"] = json!("get");
        t["_meta"]["parameters"] = json!({"id": "path"});
    });
    change(&|t| t["_meta"]["parameters"] = json!({"nope": "path"}));
    change(&|t| t["_meta"]["timeoutMs"] = json!(0));
    change(&|t| t["_meta"]["timeoutMs"] = json!(250));
    change(&|t| t["_meta"]["resultFormat"] = json!("mcp"));
    change(&|t| t["_meta"]["resultFormat"] = json!("xml"));
    change(&|t| t["_meta"]["active"] = json!(false));
    change(&|t| t["_meta"]["active"] = json!("no"));
    change(&|t| t["_meta"]["version"] = json!(2));
    for (i, tool) in tools.iter().enumerate() {
        let mut tool = tool.clone();
        if tool["name"] == "a" {
            tool["name"] = json!(format!("a{i}"));
        }
        let _ = assert_same_load(&[tool]);
    }
    assert!(assert_same_load(&[json!([1]), json!("x"), base.clone()]).is_err());
}

#[test]
fn r5_t4_texts_a_value_cannot_write_load_as_the_full_check_loads_them() {
    let tool = |schema: &str, extra: &str| {
        format!(
            r#"{{"name":"a","inputSchema":{schema},"_meta":{{"endpoint":"http://127.0.0.1:9/a"}}{extra}}}"#
        )
    };
    let with_meta =
        |meta: &str| format!(r#"{{"name":"a","inputSchema":{{"type":"object"}},"_meta":{meta}}}"#);
    let texts = [
        // A repeated keyword, property, public field and `_meta`.
        tool(r#"{"type":"object","type":"string"}"#, ""),
        tool(
            r#"{"type":"object","properties":{"a":{"type":"string"},"a":{"type":5}}}"#,
            "",
        ),
        tool(
            r#"{"type":"object"}"#,
            r#","inputSchema":{"type":"string"}"#,
        ),
        tool(r#"{"type":"object"}"#, r#","_meta":{"endpoint":"ftp://x"}"#),
        tool(r#"{"type":"object"}"#, r#","name":"b""#),
        // A member of `_meta` given twice (its last value counts), and escaped in its name.
        with_meta(r#"{"endpoint":"ftp://x","timeoutMs":5,"endpoint":"http://127.0.0.1:9/a"}"#),
        with_meta(r#"{"endpoint":"http://127.0.0.1:9/a","endpoint":"ftp://x"}"#),
        with_meta(
            r#"{"\u0065ndpoint":"http://127.0.0.1:9/a","timeout\u004ds":7,"active":true,"active":false}"#,
        ),
        with_meta("[1,{}]"),
        // Escaped keys and strings.
        tool(
            r#"{"t\u0079pe":"object","properties":{"\u00e9":{"type":"str\u0069ng"}}}"#,
            "",
        ),
        tool(r#"{"type":"object","required":["a","\u0061"]}"#, ""),
        // Numbers as the manifest writes them, and whitespace.
        tool(
            "{ \"type\" : \"object\",\n  \"properties\": {\"n\": {\"type\": \"number\", \"maximum\": 1e2, \"minimum\": -0}}}",
            r#","title":"T\u00e9""#,
        ),
    ];
    for text in &texts {
        let manifest = format!(r#"{{"routeKey":"core","tools":[{text}]}}"#);
        let document: Value = serde_json::from_str(&manifest).unwrap();
        let by_text =
            outcome(compile_manifest_text(&Bytes::copy_from_slice(manifest.as_bytes())).unwrap());
        let by_document = outcome(compile_manifest(&document));
        assert_eq!(by_text, by_document, "{text}");
    }
}

/// A value of one of `options`.
fn one_of(options: &[Value]) -> prop::sample::Select<Value> {
    prop::sample::select(options.to_vec())
}

/// An object of members named from `names`, each value from `values`.
fn members_of(
    names: &'static [&'static str],
    values: impl Strategy<Value = Value>,
) -> impl Strategy<Value = Value> {
    prop::collection::btree_map(prop::sample::select(names), values, 0..3)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

/// A JSON Schema object, mostly valid: each keyword with a value of its kind, now and then one
/// of another kind, nested through the keywords that hold schemas.
fn schema_like() -> impl Strategy<Value = Value> {
    let leaf = Just(json!({"type": "string"}));
    leaf.prop_recursive(3, 32, 4, |inner| {
        let schema = prop_oneof![4 => inner, 1 => any::<bool>().prop_map(Value::Bool)];
        let number = one_of(&[json!(-1), json!(0), json!(1), json!(3), json!(2.0), json!(0.5), json!(-1.5), json!("1")]);
        let count = one_of(&[json!(0), json!(1), json!(5), json!(-1), json!(2.0), json!(null)]);
        let names = prop::collection::vec(one_of(&[json!("a"), json!("b"), json!("c"), json!(1)]), 0..4);
        let simple = one_of(&[json!("object"), json!("string"), json!("integer"), json!("number"),
                              json!("array"), json!("boolean"), json!("null"), json!("nope")]);
        let member = prop_oneof![
            3 => simple.clone().prop_map(|t| ("type", t)),
            1 => prop::collection::vec(simple, 0..3).prop_map(|t| ("type", Value::Array(t))),
            3 => members_of(&["a", "b", "x-mcp-header"], schema.clone()).prop_map(|m| ("properties", m)),
            1 => members_of(&["a", "b"], schema.clone()).prop_map(|m| ("$defs", m)),
            2 => names.clone().prop_map(|n| ("required", Value::Array(n))),
            2 => schema.clone().prop_map(|s| ("items", s)),
            1 => schema.clone().prop_map(|s| ("not", s)),
            1 => schema.clone().prop_map(|s| ("additionalProperties", s)),
            1 => prop::collection::vec(schema.clone(), 0..3).prop_map(|s| ("anyOf", Value::Array(s))),
            1 => prop::collection::vec(schema.clone(), 0..3).prop_map(|s| ("prefixItems", Value::Array(s))),
            1 => schema.prop_map(|s| ("patternProperties", json!({"^a": s}))),
            2 => names.prop_map(|n| ("enum", Value::Array(n))),
            1 => one_of(&[json!(null), json!([1, {"a": 2}]), json!({"x-mcp-header": "A"})]).prop_map(|v| ("const", v)),
            2 => number.clone().prop_map(|v| ("minimum", v)),
            1 => number.prop_map(|v| ("multipleOf", v)),
            2 => count.clone().prop_map(|v| ("maxLength", v)),
            1 => count.prop_map(|v| ("minItems", v)),
            1 => one_of(&[json!(true), json!(false), json!(1)]).prop_map(|v| ("uniqueItems", v)),
            1 => one_of(&[json!("#/$defs/a"), json!("#/$defs/b"), json!("#/definitions/a"), json!("#"), json!(4)]).prop_map(|v| ("$ref", v)),
            1 => one_of(&[json!("^a+$"), json!("(open"), json!("\\d{2}"), json!(1)]).prop_map(|v| ("pattern", v)),
            1 => one_of(&[json!("date"), json!("unknown-format"), json!(5)]).prop_map(|v| ("format", v)),
            1 => one_of(&[json!("A"), json!("bad header"), json!(2)]).prop_map(|v| ("x-mcp-header", v)),
            1 => one_of(&[json!("t"), json!(2)]).prop_map(|v| ("title", v)),
            1 => one_of(&[json!({"any": [1]}), json!("x")]).prop_map(|v| ("x-vendor", v)),
        ];
        prop::collection::vec(member, 0..5).prop_map(|members| {
            Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Whatever the schema, the one-pass reading never loads what the full check refuses, nor
    /// refuses what it loads, and the loads agree in every detail.
    #[test]
    fn r5_the_one_pass_reading_agrees_with_the_full_check_on_any_schema(
        schema in schema_like(),
        typed in any::<bool>(),
    ) {
        let mut schema = schema;
        if typed && let Some(object) = schema.as_object_mut() {
            object.insert("type".into(), json!("object"));
        }
        let _ = assert_same_load(&[with_schema("p", &schema)]);
    }
}
