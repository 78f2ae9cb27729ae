//! The schemas' texts in a load by the one pass (CONTRACT T1, T4, X2): a `tools/list` entry
//! holds the manifest's own schema texts, wherever a schema's text ends and however its key is
//! written, and a validator read from such a text compiles once, on first use.

use bytes::Bytes;
use serde_json::{Value, json};

use super::first_pass::compile_manifest_text;
use super::schema_check::Facts;
use super::stream_tests::with_schema;
use crate::registry::ToolLookup;

#[test]
fn t4_an_entry_holds_the_manifests_own_schema_texts_in_t1_order() {
    let manifest = "{\"tools\": [{\"_meta\": {\"endpoint\": \"http://127.0.0.1:9/a\"},\n \
        \"inputSchema\": { \"type\": \"object\", \"properties\": {\"n\": {\"maximum\": 1e2}} },\n \
        \"name\": \"a\", \"title\": \"\\u00e9\", \"x-private\": 1}]}";
    let snapshot = compile_manifest_text(&Bytes::copy_from_slice(manifest.as_bytes()))
        .unwrap()
        .unwrap();
    let route = snapshot.single.as_deref().unwrap();
    assert_eq!(
        route.tools_list_result().to_json(),
        r#"{"tools":[{"name":"a","title":"é","inputSchema":{ "type": "object", "properties": {"n": {"maximum": 1e2}} }}]}"#
    );
}

#[test]
fn t4_the_pass_finds_where_each_schema_text_ends_whatever_follows_its_last_string() {
    // Each schema written with white space a `Value` would not keep, so that an entry that
    // holds it verbatim was written from the manifest's text by the one pass.
    let schemas = [
        "{ }",
        "{\n}",
        r#"{ "type" : "object" }"#,
        r#"{"type":"object" , "properties" : { "n" : { "type":"number", "maximum" : 1e2 } } , "minProperties" : 0 }"#,
        r#"{"type":"object", "properties": {"a": {"enum": [[1, [2]], {"b": {}}, null]}} }"#,
        r#"{"type":"object", "description": "ends with an escape \" } ] \\" }"#,
        r#"{"type":"object", "properties": {"a": {"default": {"\u00e9": ["}", "]", "\"{"]}}} }"#,
        r#"{"type":"object", "properties": {"a": {"const": "x"}}, "required" : [ "a" ] , "examples": [ {}, [ ] ] }"#,
        r#"{"t\u0079pe" : "object" }"#,
        r#"{ "required": [], "properties": {} }"#,
    ];
    for schema in schemas {
        for (around_key, around_value) in [("", ""), (" \n\t", " \r\n ")] {
            let manifest = format!(
                r#"{{"tools":[{{"name":"a","inputSchema"{around_key}:{around_value}{schema}{around_value},"outputSchema":{schema},"_meta":{{"endpoint":"http://127.0.0.1:9/a"}}}}]}}"#
            );
            let snapshot = compile_manifest_text(&Bytes::copy_from_slice(manifest.as_bytes()))
                .unwrap()
                .unwrap_or_else(|problems| panic!("{schema}: {problems:?}"));
            let route = snapshot.single.as_deref().unwrap();
            assert_eq!(
                route.tools_list_result().to_json(),
                format!(
                    r#"{{"tools":[{{"name":"a","inputSchema":{schema},"outputSchema":{schema}}}]}}"#
                ),
                "{manifest}"
            );
            let Some(ToolLookup::Active(tool)) = route.tool("a") else {
                panic!("a is active")
            };
            let parsed: Value = serde_json::from_str(schema).unwrap();
            let direct = jsonschema::validator_for(&parsed).unwrap();
            for arguments in [json!({}), json!({"a": "x", "n": 500}), json!({"a": 1})] {
                assert_eq!(
                    tool.input_schema.get().is_valid(&arguments),
                    direct.is_valid(&arguments),
                    "{schema} {arguments}"
                );
            }
        }
    }
}

#[test]
fn t4_a_schema_key_written_with_escapes_sends_its_tool_to_the_full_check() {
    // The pass places a schema's text after its key's closing quote; a key with escapes is
    // not lent from the text, so the tool is checked in full and its schemas written as
    // serde_json writes them (CONTRACT T4).
    for key in [r#""input\u0053chema""#, r#""inputSchema""#] {
        let manifest = format!(
            r#"{{"tools":[{{"name":"b",{key}:{{ "type" : "object" }},"_meta":{{"endpoint":"http://127.0.0.1:9/b"}}}}]}}"#
        );
        let snapshot = compile_manifest_text(&Bytes::copy_from_slice(manifest.as_bytes()))
            .unwrap()
            .unwrap();
        let schema = if key.contains('\\') {
            r#"{"type":"object"}"#
        } else {
            r#"{ "type" : "object" }"#
        };
        assert_eq!(
            snapshot
                .single
                .as_deref()
                .unwrap()
                .tools_list_result()
                .to_json(),
            format!(r#"{{"tools":[{{"name":"b","inputSchema":{schema}}}]}}"#),
            "{key}"
        );
    }
}

#[test]
fn t4_a_schema_that_is_not_an_object_or_array_has_no_text_place() {
    // A string schema: the pass finds no bracket to close (the full check refuses it).
    let text = r#"{"inputSchema":"x","outputSchema":{"type":"object"}}"#;
    let start = text.find("\"x\"").unwrap();
    let mut value = serde_json::Deserializer::from_str(&text[start..start + 3]);
    let facts = Facts::read(&mut value, 1, false).unwrap();
    assert_eq!(facts.text_end(text, start), None);
    let object = text.find("{\"type\"").unwrap();
    let mut value = serde_json::Deserializer::from_str(&text[object..text.len() - 1]);
    let facts = Facts::read(&mut value, 1, false).unwrap();
    assert_eq!(facts.text_end(text, object), Some(text.len() - 1));
}

#[test]
fn x2_a_schema_read_from_the_manifest_text_compiles_once_for_thirty_two_concurrent_first_calls() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}},
                        "required": ["n"]});
    let text = serde_json::to_vec(&json!({"tools": [with_schema("a", &schema)]})).unwrap();
    let snapshot = compile_manifest_text(&Bytes::from(text.clone()))
        .unwrap()
        .unwrap();
    let Some(ToolLookup::Active(tool)) = snapshot.single.as_deref().unwrap().tool("a") else {
        panic!("a is active")
    };
    assert!(!tool.input_schema.is_compiled());
    let direct = jsonschema::validator_for(&schema).unwrap();
    let barrier = std::sync::Barrier::new(32);
    std::thread::scope(|scope| {
        for i in 0..32i64 {
            let (tool, barrier, direct) = (&tool, &barrier, &direct);
            scope.spawn(move || {
                barrier.wait();
                let arguments = if i % 4 == 0 {
                    json!({})
                } else {
                    json!({"n": i})
                };
                let errors = |v: &jsonschema::Validator| -> Vec<String> {
                    v.iter_errors(&arguments).map(|e| e.to_string()).collect()
                };
                assert_eq!(errors(tool.input_schema.get()), errors(direct));
            });
        }
    });
    assert_eq!(tool.input_schema.compilations(), 1);
}
