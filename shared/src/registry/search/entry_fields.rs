//! The fields of a tool's `tools/list` entry that a search reads (CONTRACT S4), borrowed from
//! the entry's text: every other member, and any value of an unexpected type, is read past
//! without being built.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::index::Text as Read;
use super::spans::Field;
use crate::text::Key;

/// Gives each searched text of a tool's entry (`text`, its JSON) to `out`, in the entry's
/// order: name, title, description, then each root property's name and description (text
/// that is not JSON, which the load never writes, has none).
pub(super) fn each_field<'a>(text: &[u8], out: &mut dyn FnMut(Field, Read<'a, '_>)) {
    let entry: Entry<'_> = serde_json::from_slice(text).unwrap_or_default();
    let fields = [
        (&entry.name, Field::Name),
        (&entry.title, Field::Title),
        (&entry.description, Field::Description),
    ];
    for (text, field) in fields {
        if let Some(text) = &text.0 {
            out(field, Read::Read(text));
        }
    }
    for (name, description) in &entry.input_schema.0 {
        out(Field::PropertyName, Read::Read(name));
        if let Some(text) = &description.0 {
            out(Field::PropertyDescription, Read::Read(text));
        }
    }
}

/// A tool's searched fields.
#[derive(Default, Deserialize)]
pub(super) struct Entry<'a> {
    #[serde(borrow, default)]
    pub(super) name: Text<'a>,
    #[serde(borrow, default)]
    pub(super) title: Text<'a>,
    #[serde(borrow, default)]
    pub(super) description: Text<'a>,
    #[serde(borrow, default, rename = "inputSchema")]
    pub(super) input_schema: Properties<'a>,
}

/// A string, or `None` for any other JSON value.
#[derive(Default)]
pub(super) struct Text<'a>(pub(super) Option<Cow<'a, str>>);

/// A schema's `properties`: each name with its own schema's `description`.
#[derive(Default)]
pub(super) struct Properties<'a>(pub(super) Vec<(Cow<'a, str>, Text<'a>)>);

/// A property's schema, for its `description`.
#[derive(Default)]
struct PropertySchema<'a>(Text<'a>);

/// The `properties` member's value, as a list.
#[derive(Default)]
struct PropertyList<'a>(Vec<(Cow<'a, str>, Text<'a>)>);

/// Reads past the JSON values a visitor does not want, giving its default value.
macro_rules! read_past_others {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Self::Value::default())
        }
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
    };
}

/// Reads past the JSON strings a visitor does not want.
macro_rules! read_past_strings {
    () => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
    };
}

/// Reads past the JSON objects a visitor does not want.
macro_rules! read_past_objects {
    () => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Self::Value::default())
        }
    };
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            read_past_others!();
            read_past_objects!();
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(text))))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(text.to_owned()))))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The value of a member named `key` that the object visitors below want, as `T`; any other
/// member's value is read past.
fn member<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    wanted: bool,
) -> Result<Option<T>, A::Error> {
    if wanted {
        map.next_value::<T>().map(Some)
    } else {
        map.next_value::<IgnoredAny>().map(|_| None)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Properties<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Properties<'de>;
            read_past_others!();
            read_past_strings!();
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut properties = Properties::default();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if let Some(list) =
                        member::<A, PropertyList<'de>>(&mut map, key == "properties")?
                    {
                        properties.0 = list.0;
                    }
                }
                Ok(properties)
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for PropertyList<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PropertyList<'de>;
            read_past_others!();
            read_past_strings!();
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut list = PropertyList::default();
                while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
                    let schema = map.next_value::<PropertySchema<'de>>()?;
                    list.0.push((name, schema.0));
                }
                Ok(list)
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for PropertySchema<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PropertySchema<'de>;
            read_past_others!();
            read_past_strings!();
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut schema = PropertySchema::default();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if let Some(text) = member::<A, Text<'de>>(&mut map, key == "description")? {
                        schema.0 = text;
                    }
                }
                Ok(schema)
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::Entry;

    fn read(text: &str) -> Entry<'_> {
        serde_json::from_str(text).expect("an entry")
    }

    /// CONTRACT S4: the searched fields are read, escaped text decoded, the rest read past.
    #[test]
    fn s4_the_searched_fields_are_read_and_the_rest_passed_over() {
        let entry = read(
            r#"{"name":"get_pet","title":"Get \"pet\"","description":"Finds a pet",
            "inputSchema":{"type":"object","$defs":{"x":{"properties":{"no":{}}}},
            "properties":{"petId":{"type":"string","description":"The pet's id"},"verbose":true}},
            "outputSchema":{"properties":{"hidden":{"description":"not searched"}}},
            "annotations":{"readOnlyHint":true},"_meta":{"a":[1,2,{"b":null}]}}"#,
        );
        assert_eq!(entry.name.0.as_deref(), Some("get_pet"));
        assert_eq!(entry.title.0.as_deref(), Some("Get \"pet\""));
        assert_eq!(entry.description.0.as_deref(), Some("Finds a pet"));
        let properties: Vec<(&str, Option<&str>)> = entry
            .input_schema
            .0
            .iter()
            .map(|(name, description)| (name.as_ref(), description.0.as_deref()))
            .collect();
        assert_eq!(
            properties,
            [("petId", Some("The pet's id")), ("verbose", None)]
        );
    }

    /// A field of another type than the search expects is no text, never an error.
    #[test]
    fn s4_fields_of_other_types_are_empty() {
        let entry = read(r#"{"name":"n","title":7,"description":["x"],"inputSchema":true}"#);
        assert!(entry.title.0.is_none() && entry.description.0.is_none());
        assert!(entry.input_schema.0.is_empty());
        let entry = read(r#"{"name":null,"inputSchema":{"properties":[{"a":1}]}}"#);
        assert!(entry.name.0.is_none() && entry.input_schema.0.is_empty());
        let entry =
            read(r#"{"inputSchema":{"properties":{"a":{"description":{"en":"x"}},"b":"s"}}}"#);
        let names: Vec<&str> = entry
            .input_schema
            .0
            .iter()
            .map(|(n, _)| n.as_ref())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(entry.input_schema.0.iter().all(|(_, d)| d.0.is_none()));
    }
}
