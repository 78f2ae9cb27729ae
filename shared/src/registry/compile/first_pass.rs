//! The one pass over a manifest's text (CONTRACT R5 load): the document parsed with each `tools`
//! array's tools read as they stream by ([`super::tool_stream`]): copied into their `tools/list`
//! entries and checked as they are copied. A tool that reading cannot prove valid is compiled by
//! the full check from its raw text, which a second pass keeps (only when there is such a tool).

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::manifest::compile_manifest_with;
use super::problems::{ManifestProblem, join};
use super::threads::{CompiledTool, ToolsInput, compile_tools_at};
use super::tool_stream::{CheckedPatterns, Finished, StreamedTool};
use crate::registry::Snapshot;

/// Each `tools` array's tools, compiled (their places in the document hold empty arrays): per
/// route of `routes`, and of the single-route form.
#[derive(Default)]
pub(super) struct CompiledTools {
    pub(super) routes: Vec<Option<Vec<CompiledTool>>>,
    pub(super) single: Option<Vec<CompiledTool>>,
}

/// A manifest's text compiled in one pass over it (see the module's docs). `None` when the text
/// is not JSON or does not have the shape of a manifest (an object, `routes` an array of
/// objects): the caller then parses and compiles it whole, which gives the same problems in the
/// same words.
pub(crate) fn compile_manifest_text(
    bytes: &[u8],
) -> Option<Result<Snapshot, Vec<ManifestProblem>>> {
    // Checked as UTF-8 once, so that the reading does not check each string again.
    let text = std::str::from_utf8(bytes).ok()?;
    let (document, streamed) = read::<StreamedTool<'_>>(text)?;
    let mut patterns = CheckedPatterns::default();
    let mut not_json = false;
    // `around`: the arrays and objects around a tool's fields: the root, `tools` and the tool;
    // in the `routes` form also `routes` and the route.
    let mut finish = |tools: Vec<StreamedTool<'_>>, around: usize| -> Vec<Option<CompiledTool>> {
        tools
            .into_iter()
            .map(|tool| match tool.finish(around, &mut patterns) {
                Finished::Compiled(tool) => Some(tool),
                Finished::Unproven => None,
                Finished::NotJson => {
                    not_json = true;
                    None
                }
            })
            .collect()
    };
    let routes: Vec<Option<Vec<Option<CompiledTool>>>> = streamed
        .routes
        .into_iter()
        .map(|tools| tools.map(|tools| finish(tools, 5)))
        .collect();
    let single = streamed.single.map(|tools| finish(tools, 3));
    if not_json {
        return None;
    }
    let unproven =
        |tools: &Option<Vec<Option<CompiledTool>>>| tools.iter().flatten().any(Option::is_none);
    // The tools the reading could not prove valid, compiled from their raw texts by the full
    // check, which names their problems.
    let raw = if routes.iter().any(unproven) || unproven(&single) {
        Some(read::<&RawValue>(text)?.1)
    } else {
        None
    };
    let complete = |tools: Option<Vec<Option<CompiledTool>>>,
                    raw: Option<&Vec<&RawValue>>,
                    route_path: &str| {
        let mut tools = tools?;
        let missing: Vec<usize> = (0..tools.len()).filter(|&i| tools[i].is_none()).collect();
        if let Some(raw) = raw.filter(|_| !missing.is_empty()) {
            let compiled =
                compile_tools_at(ToolsInput::Raw(raw), &missing, &join(route_path, "tools"));
            for (i, tool) in missing.into_iter().zip(compiled) {
                tools[i] = Some(tool);
            }
        }
        tools.into_iter().collect::<Option<Vec<_>>>()
    };
    let compiled = CompiledTools {
        routes: routes
            .into_iter()
            .enumerate()
            .map(|(i, tools)| {
                let raw = raw.as_ref().and_then(|raw| raw.routes.get(i)?.as_ref());
                complete(tools, raw, &format!("routes[{i}]"))
            })
            .collect(),
        single: complete(single, raw.as_ref().and_then(|raw| raw.single.as_ref()), ""),
    };
    Some(compile_manifest_with(&document, compiled))
}

/// Each `tools` array's elements as one pass read them.
struct ReadTools<T> {
    routes: Vec<Option<Vec<T>>>,
    single: Option<Vec<T>>,
}

/// One pass over the text: the document without its tools, and the tools read as `T`. `None`
/// when the text is not JSON or does not have the shape of a manifest.
fn read<'de, T: Deserialize<'de>>(text: &'de str) -> Option<(Value, ReadTools<T>)> {
    let IfObject(Some(root)) = serde_json::from_str::<IfObject<Fields<T, true>>>(text).ok()? else {
        return None;
    };
    let Fields {
        mut document,
        tools: single,
        routes,
    } = root;
    let mut tools = ReadTools {
        routes: Vec::new(),
        single,
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
                tools.routes.push(route.tools);
            }
            document.insert("routes".into(), Value::Array(parsed));
        }
        Some(IfArray(None)) => return None,
    }
    Some((Value::Object(document), tools))
}

/// An object of a manifest text (the root, or a route of `routes`) as the one pass reads it:
/// its fields parsed, except a `tools` array, kept as its elements' raw texts (its place in
/// `document` holds an empty array), and at the root `routes`. A `tools` that is not an array
/// is kept as `null`: the compiler reads only that it is there and not an array. A field given
/// twice keeps its last value, as `serde_json::Value` does.
struct Fields<T, const ROOT: bool> {
    document: Map<String, Value>,
    tools: Option<Vec<T>>,
    /// The root's `routes`; always `None` in a route.
    routes: Option<IfArray<IfObject<Fields<T, false>>>>,
}

impl<'de, T: Deserialize<'de>, const ROOT: bool> Fields<T, ROOT> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = Fields {
            document: Map::new(),
            tools: None,
            routes: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            if key == "tools" {
                let IfArray(tools) = map.next_value::<IfArray<T>>()?;
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

/// The manifest root (`ROOT`, the only object with `routes`) or a route of `routes`.
impl<'de, T: Deserialize<'de>, const ROOT: bool> Deserialize<'de> for IfObject<Fields<T, ROOT>> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T, const ROOT: bool>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const ROOT: bool> Visitor<'de> for ObjectVisitor<T, ROOT> {
            type Value = IfObject<Fields<T, ROOT>>;
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
        deserializer.deserialize_any(ObjectVisitor::<T, ROOT>(std::marker::PhantomData))
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
