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
        Text::Kept(text) | Text::Read(text) => text.to_owned(),
    }
}

/// Each document's texts as the index reads them, and as the entry's JSON gives them.
fn both(search: &ToolSearch, route: &Route) -> Vec<(bool, Fields, Fields)> {
    (0..search.documents.len())
        .map(|doc| {
            let mut read = Vec::new();
            search.each_field(route, doc, &mut Vec::new(), &mut |field, text| {
                read.push((field, owned(text)));
            });
            let mut json = Vec::new();
            let mut text = Vec::new();
            let entry = search
                .entry(route, search.documents[doc].0)
                .expect("an entry");
            super::write_searched(entry, &mut text);
            // An empty text has no terms: the spans pass it over.
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
