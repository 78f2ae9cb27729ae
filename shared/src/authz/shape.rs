//! The parts of an `inputSchema` that its Cedar type reads (CONTRACT Z2), deserialized from the
//! schema's text without building it as a `serde_json::Value`: `type` when it is a string,
//! `properties` (in order), `required` (its strings) and `items`; every other member is skipped
//! unread. At a cold start with policies this is each active tool's `inputSchema` once: a
//! `Value` of each (1,000 tools) was most of the load's time at a 256 MB function's CPU share.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::schema::{Attribute, CedarType, MAX_DEPTH};

/// One schema object: what its Cedar type reads. A JSON value that is not an object reads as a
/// schema with none of the members (no `type`: no Cedar type), as `Value::get` would.
#[derive(Debug, Default)]
struct Shape<'a> {
    ty: Option<Cow<'a, str>>,
    properties: Vec<(Cow<'a, str>, Shape<'a>)>,
    required: Vec<Cow<'a, str>>,
    items: Option<Box<Shape<'a>>>,
}

/// The Cedar type of the `inputSchema` whose JSON text is `text`, the same as
/// [`super::schema::input_type`] of its parsed value; `None` when `text` is not JSON.
#[must_use]
pub fn input_type_of_text(text: &[u8]) -> Option<CedarType> {
    let shape: Shape<'_> = serde_json::from_slice(text).ok()?;
    Some(object_type(&shape, 0))
}

fn object_type(shape: &Shape<'_>, depth: usize) -> CedarType {
    let mut attributes = Vec::new();
    for (name, property) in &shape.properties {
        if let Some(ty) = property_type(property, depth + 1) {
            attributes.push(Attribute {
                name: name.to_string(),
                ty,
                required: shape.required.iter().any(|r| r == name),
            });
        }
    }
    CedarType::Record(attributes)
}

fn property_type(shape: &Shape<'_>, depth: usize) -> Option<CedarType> {
    if depth > MAX_DEPTH {
        return None;
    }
    match shape.ty.as_deref()? {
        "integer" => Some(CedarType::Long),
        "number" => Some(CedarType::Decimal),
        "string" => Some(CedarType::String),
        "boolean" => Some(CedarType::Boolean),
        "object" => Some(object_type(shape, depth)),
        "array" => {
            let items = shape.items.as_deref()?;
            Some(CedarType::Set(Box::new(property_type(items, depth + 1)?)))
        }
        _ => None,
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Shape<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

/// Visitor methods that read a JSON scalar as `$empty`.
macro_rules! scalars_are {
    ($empty:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($empty)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($empty)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($empty)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($empty)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($empty)
        }
    };
}

/// A visitor method that reads a JSON string as `$empty`.
macro_rules! strings_are {
    ($empty:expr) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($empty)
        }
    };
}

/// A visitor method that skips a JSON array and reads it as `$empty`.
macro_rules! arrays_are {
    ($empty:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($empty)
        }
    };
}

/// A visitor method that skips a JSON object and reads it as `$empty`.
macro_rules! objects_are {
    ($empty:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($empty)
        }
    };
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    scalars_are!(Shape::default());
    strings_are!(Shape::default());
    arrays_are!(Shape::default());

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // A repeated member: the last one counts, as in a parsed `Value`.
        let mut shape = Shape::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => shape.ty = map.next_value::<AnyString<'de>>()?.0,
                "properties" => shape.properties = map.next_value::<Properties<'de>>()?.0,
                "required" => shape.required = map.next_value::<Strings<'de>>()?.0,
                "items" => shape.items = Some(Box::new(map.next_value::<Shape<'de>>()?)),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(shape)
    }
}

/// A string, or any other JSON value read as none.
struct AnyString<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for AnyString<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AnyStringVisitor)
    }
}

struct AnyStringVisitor;

impl<'de> Visitor<'de> for AnyStringVisitor {
    type Value = AnyString<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    scalars_are!(AnyString(None));
    arrays_are!(AnyString(None));
    objects_are!(AnyString(None));

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(AnyString(Some(Cow::Borrowed(text))))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(AnyString(Some(Cow::Owned(text.to_owned()))))
    }
}

/// The strings of an array (its other elements skipped), or none for any other value.
struct Strings<'a>(Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Strings<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StringsVisitor)
    }
}

struct StringsVisitor;

impl<'de> Visitor<'de> for StringsVisitor {
    type Value = Strings<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    scalars_are!(Strings(Vec::new()));
    strings_are!(Strings(Vec::new()));
    objects_are!(Strings(Vec::new()));

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut strings = Vec::new();
        while let Some(item) = seq.next_element::<AnyString<'de>>()? {
            strings.extend(item.0);
        }
        Ok(Strings(strings))
    }
}

/// An object's members in order, a repeated name keeping its first place and its last value
/// (as a parsed `Value` keeps it); none for any other value.
struct Properties<'a>(Vec<(Cow<'a, str>, Shape<'a>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Properties<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PropertiesVisitor)
    }
}

struct PropertiesVisitor;

impl<'de> Visitor<'de> for PropertiesVisitor {
    type Value = Properties<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    scalars_are!(Properties(Vec::new()));
    strings_are!(Properties(Vec::new()));
    arrays_are!(Properties(Vec::new()));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Shape<'de>)> = Vec::new();
        while let Some(name) = map.next_key::<Cow<'de, str>>()? {
            let shape = map.next_value::<Shape<'de>>()?;
            if let Some(at) = members.iter_mut().find(|(n, _)| *n == name) {
                at.1 = shape;
            } else {
                members.push((name, shape));
            }
        }
        Ok(Properties(members))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::input_type_of_text;
    use crate::authz::schema::input_type;

    /// CONTRACT Z2: the type read from the text is the type read from the parsed value, for
    /// every shape Z2 names and the odd ones a manifest can hold.
    #[test]
    fn z2_the_type_read_from_the_text_is_the_type_of_the_parsed_schema() {
        let schemas = [
            json!({"type": "object", "properties": {
                "n": {"type": "integer"}, "amount": {"type": "number"}, "s": {"type": "string"},
                "b": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
                "o": {"type": "object", "properties": {"x": {"type": "integer"}},
                      "required": ["x", 3, null]},
                "free": {}, "either": {"type": ["string", "null"]}, "list": {"type": "array"},
                "tuple": {"type": "array", "items": [{"type": "string"}]},
                "weird": {"type": 7, "properties": "x", "required": {"a": 1}},
                "nested": {"type": "array", "items": {"type": "array",
                           "items": {"type": "object", "properties": {"k": {"type": "boolean"}}}}},
                "esc\u{e9}\"": {"type": "str\u{69}ng", "description": "a \"quoted\" \u{2603}"},
            }, "required": ["n", "free", "esc\u{e9}\"", "o"], "$defs": {"x": [1, {"a": null}]}}),
            json!({}),
            json!({"type": "object", "properties": []}),
            json!(null),
            json!([1, 2]),
        ];
        for schema in schemas {
            let text = serde_json::to_vec(&schema).unwrap();
            assert_eq!(
                input_type_of_text(&text),
                Some(input_type(&schema)),
                "{schema}"
            );
        }
        // Escapes the parser cannot borrow through, and a repeated member: the last counts.
        let text = br#"{"properties":{"a\u0062":{"type":"integer"},"ab":{"type":"boolean"},
            "c":{"type":"string"}},"required":["a\u0062"],"type":"object","type":"object"}"#;
        let schema: Value = serde_json::from_slice(text).unwrap();
        assert_eq!(input_type_of_text(text), Some(input_type(&schema)));
        assert_eq!(input_type_of_text(b"{not json"), None);
    }

    /// A schema-like JSON value: objects whose members are drawn from the keywords the type
    /// reads (`type`, `properties`, `required`, `items`) and others, with any value in them.
    fn schema_like() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let names = prop_oneof![
            Just("type".to_string()),
            Just("properties".to_string()),
            Just("required".to_string()),
            Just("items".to_string()),
            Just("a".to_string()),
            Just("b\u{e9}\"".to_string()),
            "[a-c]{1,2}",
        ];
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop_oneof![
                Just("integer"),
                Just("number"),
                Just("string"),
                Just("boolean"),
                Just("object"),
                Just("array"),
                Just("null"),
                Just("a"),
                Just("ab"),
            ]
            .prop_map(Value::from),
        ];
        scalar.prop_recursive(6, 96, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((names.clone(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// CONTRACT Z2: for any schema-like value, the type read from its text is the type of
        /// the parsed value.
        #[test]
        fn z2_any_schema_reads_the_same_from_its_text(schema in schema_like()) {
            let text = serde_json::to_vec(&schema).unwrap();
            proptest::prop_assert_eq!(input_type_of_text(&text), Some(input_type(&schema)));
        }
    }

    /// Nesting past 32 levels is left out of the type, from the text as from the value.
    #[test]
    fn z2_deep_nesting_is_cut_alike() {
        let mut schema = json!({"type": "integer"});
        for _ in 0..40 {
            schema = json!({"type": "object", "properties": {"p": schema}});
        }
        let text = serde_json::to_vec(&schema).unwrap();
        assert_eq!(input_type_of_text(&text), Some(input_type(&schema)));
    }
}
