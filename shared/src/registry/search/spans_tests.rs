//! The search's texts read where the load noted them ([`super::FieldSpans`]) against the same
//! texts read from each entry's JSON (CONTRACT S4): the same fields, in the same order, for
//! plain, escaped, non-ASCII and fully checked tools.

use bytes::Bytes;

use super::index::Text;
use super::spans::Field;
use super::{ToolSearch, entry_fields};
use crate::registry::Route;

const MANIFEST: &str = r#"{"manifestVersion": 1, "toolSearch": {"mode": "add"}, "tools": [
  {"name": "getPetById", "title": "Get a pet", "description": "Finds a pet by its id.",
   "inputSchema": {"type": "object", "$defs": {"d": {"properties": {"hidden": {}}}},
     "properties": {
       "petId": {"type": "string", "description": "The pet's id"},
       "verbose": true,
       "owner": {"type": "object", "properties": {"inner": {"description": "not searched"}},
                 "description": "The owner"},
       "tags": {"type": "array", "items": {"description": "not searched either"}}},
     "required": ["petId"]},
   "outputSchema": {"type": "object", "properties": {"out": {"description": "not searched"}}},
   "annotations": {"readOnlyHint": true},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/a", "timeoutMs": 1000}},
  {"name": "leave_balance", "description": "연차휴가 잔여일수를 조회합니다 (HR).",
   "inputSchema": {"type": "object", "properties": {"사번": {"description": "직원 번호"}}},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/b", "timeoutMs": 1000}},
  {"name": "quoted", "title": "Say \"hi\"", "description": "Two\nlines",
   "inputSchema": {"type": "object", "properties": {"a": {"description": "plain"}}},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/c", "timeoutMs": 1000}},
  {"name": "escaped_property",
   "inputSchema": {"type": "object", "properties": {"pet\u0049d": {"description": "x\ty"}}},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/d", "timeoutMs": 1000}},
  {"name": "escaped_description",
   "inputSchema": {"type": "object", "properties": {"a": {"description": "caf\u00e9"}}},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/e", "timeoutMs": 1000}},
  {"name": "repeated_key",
   "inputSchema": {"type": "object", "properties": {"first": {}},
                   "properties": {"second": {"description": "the one kept"}}},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/f", "timeoutMs": 1000}},
  {"name": "no_properties", "title": "", "inputSchema": {"type": "object"},
   "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/g", "timeoutMs": 1000}}
]}"#;

type Fields = Vec<(Field, String)>;

fn owned(text: Text<'_, '_>) -> String {
    match text {
        Text::Kept(bytes) => String::from_utf8(bytes.to_vec()).expect("a kept text is UTF-8"),
        Text::Read(text) => text.to_owned(),
    }
}

/// Each document's texts as the index reads them, and as the entry's JSON gives them.
fn both(search: &ToolSearch, route: &Route) -> Vec<(bool, Fields, Fields)> {
    (0..search.documents.len())
        .map(|doc| {
            let mut read = Vec::new();
            // An empty text has no terms: either reading may pass it over.
            search.each_field(route, doc, &mut Vec::new(), &mut |field, text| {
                let text = owned(text);
                if !text.is_empty() {
                    read.push((field, text));
                }
            });
            let mut json = Vec::new();
            let mut text = Vec::new();
            let entry = search
                .entry(route, search.documents[doc].0)
                .expect("an entry");
            super::write_searched(entry, &mut text);
            entry_fields::each_field(&text, &mut |field, text| {
                let text = owned(text);
                if !text.is_empty() {
                    json.push((field, text));
                }
            });
            (search.documents[doc].1.is_some(), read, json)
        })
        .collect()
}

/// CONTRACT S4: the texts the load noted are the entry's own, field for field; a tool with an
/// escaped text, or one the full check compiled, is read from its JSON instead.
#[test]
fn s4_the_texts_noted_at_load_are_the_entries_own() {
    let snapshot = crate::registry::compile_bytes("t", &Bytes::from_static(MANIFEST.as_bytes()))
        .expect("the manifest loads");
    let route = snapshot.single.as_deref().expect("a single route");
    let search = route.search.as_ref().expect("toolSearch");
    let documents = both(search, route);
    let noted: Vec<bool> = documents.iter().map(|(noted, ..)| *noted).collect();
    assert_eq!(noted, [true, true, false, false, false, false, true]);
    for (doc, (_, read, json)) in documents.iter().enumerate() {
        assert_eq!(read, json, "document {doc}");
    }
    let owned = |fields: &[(Field, &str)]| -> Fields {
        fields.iter().map(|&(f, t)| (f, t.to_owned())).collect()
    };
    assert_eq!(
        documents[0].1,
        owned(&[
            (Field::Name, "getPetById"),
            (Field::Title, "Get a pet"),
            (Field::Description, "Finds a pet by its id."),
            (Field::PropertyName, "petId"),
            (Field::PropertyDescription, "The pet's id"),
            (Field::PropertyName, "verbose"),
            (Field::PropertyName, "owner"),
            (Field::PropertyDescription, "The owner"),
            (Field::PropertyName, "tags"),
        ])
    );
    assert_eq!(
        documents[2].1,
        owned(&[
            (Field::Name, "quoted"),
            (Field::Title, "Say \"hi\""),
            (Field::Description, "Two\nlines"),
            (Field::PropertyName, "a"),
            (Field::PropertyDescription, "plain"),
        ])
    );
    assert_eq!(documents[3].1[1], (Field::PropertyName, "petId".to_owned()));
    assert_eq!(
        documents[4].1[2],
        (Field::PropertyDescription, "café".to_owned())
    );
    assert_eq!(
        documents[5].1,
        owned(&[
            (Field::Name, "repeated_key"),
            (Field::PropertyName, "second"),
            (Field::PropertyDescription, "the one kept"),
        ])
    );
    assert_eq!(documents[6].1, owned(&[(Field::Name, "no_properties")]));
}

/// CONTRACT S4: a tool whose input schema is longer than a noted place can point into (65,535
/// bytes) is read from its JSON, with the same texts; the tools around it are noted.
#[test]
fn s4_a_schema_past_the_noted_places_reach_is_read_from_its_json() {
    let long = "long ".repeat(14_000);
    let tool = |name: &str, description: &str| {
        serde_json::json!({
            "name": name,
            "description": "Finds orders.",
            "inputSchema": {"type": "object", "properties": {
                "first": {"type": "string", "description": description},
                "lateProperty": {"type": "string", "description": "found after the long one"}}},
            "_meta": {"version": "1.0.0", "endpoint": "http://127.0.0.1:9/o", "timeoutMs": 1000}
        })
    };
    let manifest = serde_json::json!({
        "manifestVersion": 1, "toolSearch": {"mode": "add"},
        "tools": [tool("short_before", "short"), tool("long_one", &long),
                  tool("short_after", "short")]
    });
    let bytes = Bytes::from(serde_json::to_vec(&manifest).expect("JSON"));
    let snapshot = crate::registry::compile_bytes("t", &bytes).expect("the manifest loads");
    let route = snapshot.single.as_deref().expect("a single route");
    let search = route.search.as_ref().expect("toolSearch");
    let documents = both(search, route);
    let noted: Vec<bool> = documents.iter().map(|(noted, ..)| *noted).collect();
    assert_eq!(noted, [true, false, true]);
    for (doc, (_, read, json)) in documents.iter().enumerate() {
        assert_eq!(read, json, "document {doc}");
        assert_eq!(
            read.len(),
            6,
            "document {doc}: name, description, two properties"
        );
    }
    assert_eq!(
        documents[1].1[4],
        (Field::PropertyName, "lateProperty".to_owned())
    );
    assert_eq!(documents[1].1[3].1, long);
}

mod any_manifest {
    use bytes::Bytes;
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::both;

    /// Texts with what a noted span must get right: nothing, quotes, control characters,
    /// backslashes, letters outside ASCII, Hangul.
    const TEXTS: &[&str] = &[
        "",
        "plain words",
        "getPetById",
        "Say \"hi\"",
        "two\nlines",
        "back\\slash",
        "café au lait",
        "연차휴가 잔여",
        "tab\there",
        "Jira티켓",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::sample::select(TEXTS).prop_map(str::to_owned)
    }

    /// A property's schema: a description (now and then of another type, or absent), maybe
    /// nested properties and other keywords, or a boolean schema.
    fn property() -> impl Strategy<Value = Value> {
        let description = prop_oneof![
            6 => text().prop_map(Value::String),
            1 => Just(json!(3)),
            1 => Just(Value::Null),
        ];
        prop_oneof![
            6 => (prop::option::of(description), any::<bool>(), text()).prop_map(
                |(description, nested, inner)| {
                    let mut schema = Map::new();
                    schema.insert("type".into(), json!(if nested { "object" } else { "string" }));
                    if nested {
                        schema.insert(
                            "properties".into(),
                            json!({ inner: {"description": "inner, not searched"} }),
                        );
                    }
                    if let Some(description) = description {
                        schema.insert("description".into(), description);
                    }
                    Value::Object(schema)
                }
            ),
            1 => any::<bool>().prop_map(Value::Bool),
        ]
    }

    fn tool(at: usize) -> impl Strategy<Value = Value> {
        (
            prop::option::of(text()),
            prop::option::of(text()),
            prop::collection::vec((text(), property()), 0..5),
            any::<bool>(),
        )
            .prop_map(move |(title, description, properties, defs)| {
                let mut schema = Map::new();
                schema.insert("type".into(), json!("object"));
                if defs {
                    schema.insert("$defs".into(), json!({"d": {"properties": {"x": {}}}}));
                }
                let properties: Map<String, Value> = properties.into_iter().collect();
                schema.insert("properties".into(), Value::Object(properties));
                let mut tool = Map::new();
                tool.insert("name".into(), json!(format!("tool_{at}")));
                if let Some(title) = title {
                    tool.insert("title".into(), json!(title));
                }
                if let Some(description) = description {
                    tool.insert("description".into(), json!(description));
                }
                tool.insert("inputSchema".into(), Value::Object(schema));
                tool.insert(
                    "_meta".into(),
                    json!({"version": "1.0.0", "endpoint": "http://127.0.0.1:9/t", "timeoutMs": 1000}),
                );
                Value::Object(tool)
            })
    }

    fn manifest() -> impl Strategy<Value = (Vec<Value>, bool)> {
        let tools = (0..4_usize).map(tool).collect::<Vec<_>>();
        (tools, any::<bool>())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// CONTRACT S4: whatever the tools' texts (escaped by the writer or by `\u`, in any
        /// script, of other types), the texts the load noted are those the entries' JSON
        /// gives, field for field.
        #[test]
        fn s4_noted_texts_agree_with_the_entries_json((tools, unicode_escapes) in manifest()) {
            let mut text = json!({
                "manifestVersion": 1,
                "tools": tools,
                "toolSearch": {"mode": "add"},
            })
            .to_string();
            if unicode_escapes {
                text = text.replace('é', "\\u00e9").replace('연', "\\uc5f0");
            }
            let loaded = crate::registry::compile_bytes("t", &Bytes::from(text));
            prop_assume!(loaded.is_ok());
            let snapshot = loaded.expect("loaded");
            let route = snapshot.single.as_deref().expect("a single route");
            let search = route.search.as_ref().expect("toolSearch");
            for (doc, (_, read, json)) in both(search, route).into_iter().enumerate() {
                prop_assert_eq!(read, json, "document {}", doc);
            }
        }
    }
}
