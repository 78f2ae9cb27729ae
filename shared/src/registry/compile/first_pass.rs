//! The one pass over a manifest's text (CONTRACT R5 load): the document parsed with each `tools`
//! array's elements kept as raw JSON texts, so that the tools are parsed on the compiling
//! threads ([`super::threads`]).

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::manifest::compile_manifest_with;
use super::problems::ManifestProblem;
use crate::registry::Snapshot;

/// The `tools` arrays a first pass over the manifest text kept as raw JSON texts (their places
/// in the document hold empty arrays): per route of `routes`, and of the single-route form.
#[derive(Default)]
pub(super) struct RawTools<'a> {
    pub(super) routes: Vec<Option<Vec<&'a RawValue>>>,
    pub(super) single: Option<Vec<&'a RawValue>>,
}

/// A manifest's text compiled with its tools parsed on the compiling threads: one pass over
/// the text parses the document with each `tools` array's elements kept as raw JSON text, so
/// that parsing, compiling and freeing the tools (nearly all of a large manifest) run in
/// parallel (see `compile_tools`). `None` when the text is not JSON or does not have the shape
/// of a manifest (an object, `routes` an array of objects): the caller then parses and
/// compiles it whole, which gives the same problems in the same words.
pub(crate) fn compile_manifest_text(
    bytes: &[u8],
) -> Option<Result<Snapshot, Vec<ManifestProblem>>> {
    let IfObject(Some(root)) = serde_json::from_slice::<IfObject<Fields<'_, true>>>(bytes).ok()?
    else {
        return None;
    };
    let Fields {
        mut document,
        tools: single,
        routes,
    } = root;
    let mut raw = RawTools {
        single,
        ..RawTools::default()
    };
    match routes {
        None => {}
        Some(IfArray(Some(routes))) => {
            let mut parsed = Vec::with_capacity(routes.len());
            for route in routes {
                let IfObject(Some(route)) = route else {
                    return None;
                };
                parsed.push(Value::Object(route.document));
                raw.routes.push(route.tools);
            }
            document.insert("routes".into(), Value::Array(parsed));
        }
        Some(IfArray(None)) => return None,
    }
    Some(compile_manifest_with(&Value::Object(document), &raw))
}

/// An object of a manifest text (the root, or a route of `routes`) as the one pass reads it:
/// its fields parsed, except a `tools` array, kept as its elements' raw texts (its place in
/// `document` holds an empty array), and at the root `routes`. A `tools` that is not an array
/// is kept as `null`: the compiler reads only that it is there and not an array. A field given
/// twice keeps its last value, as `serde_json::Value` does.
struct Fields<'a, const ROOT: bool> {
    document: Map<String, Value>,
    tools: Option<Vec<&'a RawValue>>,
    /// The root's `routes`; always `None` in a route.
    routes: Option<IfArray<IfObject<Fields<'a, false>>>>,
}

impl<'de, const ROOT: bool> Fields<'de, ROOT> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = Fields {
            document: Map::new(),
            tools: None,
            routes: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            if key == "tools" {
                let IfArray(tools) = map.next_value::<IfArray<&'de RawValue>>()?;
                let placeholder = if tools.is_some() {
                    Value::Array(Vec::new())
                } else {
                    Value::Null
                };
                fields.tools = tools;
                fields.document.insert(key, placeholder);
            } else if ROOT && key == "routes" {
                fields.routes = Some(map.next_value()?);
            } else {
                let value = map.next_value::<Value>()?;
                fields.document.insert(key, value);
            }
        }
        Ok(fields)
    }
}

/// `Some` when the JSON value is an object (read as [`Fields`]), `None` (the value skipped)
/// when it is anything else.
struct IfObject<T>(Option<T>);

/// `Some` of the elements when the JSON value is an array, `None` (the value skipped) when it is
/// anything else.
struct IfArray<T>(Option<Vec<T>>);

/// The scalar `visit_*` methods of a visitor that answers `$none` for every scalar.
macro_rules! scalars_are {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// The manifest root (`ROOT`, the only object with `routes`) or a route of `routes`.
impl<'de, const ROOT: bool> Deserialize<'de> for IfObject<Fields<'de, ROOT>> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<const ROOT: bool>;
        impl<'de, const ROOT: bool> Visitor<'de> for ObjectVisitor<ROOT> {
            type Value = IfObject<Fields<'de, ROOT>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Fields::read(map).map(|fields| IfObject(Some(fields)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IfObject(None))
            }
            scalars_are!(IfObject(None));
        }
        deserializer.deserialize_any(ObjectVisitor::<ROOT>)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for IfArray<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArrayVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrayVisitor<T> {
            type Value = IfArray<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(element) = seq.next_element()? {
                    elements.push(element);
                }
                Ok(IfArray(Some(elements)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IfArray(None))
            }
            scalars_are!(IfArray(None));
        }
        deserializer.deserialize_any(ArrayVisitor(std::marker::PhantomData))
    }
}
