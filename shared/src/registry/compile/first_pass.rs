//! The one pass over a manifest's text (CONTRACT R5 load): the document parsed with each `tools`
//! array's tools read as they stream by ([`super::tool_stream`]), their schemas checked as the
//! parse reads them, and finished before the next tool is read: their `tools/list` entries
//! written (the schemas as slices of the manifest's text, which the snapshot keeps) and compiled
//! while their text is fresh, so that a load holds one tool's reading at a time. A tool that
//! reading cannot prove valid is compiled by the full check from its raw text, which a second
//! pass keeps (only when there is such a tool). Text a `Value` parse refuses ends the pass: the
//! manifest is then parsed whole, and refused with that parse's error.

use std::fmt;

use bytes::Bytes;
use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::manifest::{CompiledTools, compile_manifest_with};
use super::origins::Origins;
use super::problems::{ManifestProblem, join};
use super::strict::Strict;
use super::threads::{CompiledTool, ToolsInput, compile_tools_at};
use super::tool_stream::{CheckedPatterns, Finished, StreamedTool};
use crate::registry::Snapshot;

/// A manifest's text compiled in one pass over it (see the module's docs). `None` when the text
/// is not JSON or does not have the shape of a manifest (an object, `routes` an array of
/// objects): the caller then parses and compiles it whole, which gives the same problems in the
/// same words.
///
/// The snapshot keeps `bytes` (not a copy): the tools' `tools/list` entries and validators
/// hold slices of it, their schemas' texts.
pub(crate) fn compile_manifest_text(
    bytes: &Bytes,
) -> Option<Result<Snapshot, Vec<ManifestProblem>>> {
    // Checked as UTF-8 once, so that the reading does not check each string again.
    let text = std::str::from_utf8(bytes).ok()?;
    let (document, finished) = read(
        text,
        &mut Finishing {
            patterns: CheckedPatterns::default(),
            origins: Origins::default(),
            // A manifest without the key has no route with a search: its tools' searched texts
            // are not noted (a mention elsewhere only notes them for nothing).
            searched: memchr::memmem::find(bytes, br#""toolSearch""#).is_some(),
            manifest: bytes,
            text,
        },
    )?;
    let unproven =
        |tools: &Option<Vec<Option<CompiledTool>>>| tools.iter().flatten().any(Option::is_none);
    // The tools the reading could not prove valid, compiled from their raw texts by the full
    // check, which names their problems.
    let raw = if finished.routes.iter().any(unproven) || unproven(&finished.single) {
        Some(read(text, &mut RawTexts)?.1)
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
        routes: finished
            .routes
            .into_iter()
            .enumerate()
            .map(|(i, tools)| {
                let raw = raw.as_ref().and_then(|raw| raw.routes.get(i)?.as_ref());
                complete(tools, raw, &format!("routes[{i}]"))
            })
            .collect(),
        single: complete(
            finished.single,
            raw.as_ref().and_then(|raw| raw.single.as_ref()),
            "",
        ),
    };
    Some(compile_manifest_with(&document, compiled))
}

/// What one pass does with each tool of a `tools` array, as the tool streams by.
trait ToolReader<'de> {
    /// A tool as the pass keeps it.
    type Tool;
    /// Reads one tool, which sits inside `around` arrays and objects of the manifest.
    fn read_tool<D: Deserializer<'de>>(
        &mut self,
        tool: D,
        around: usize,
    ) -> Result<Self::Tool, D::Error>;
}

/// The one pass: each tool read ([`StreamedTool`]) and finished while its text is fresh, its
/// reading dropped before the next tool's: compiled, or `None` for the full check. A tool with
/// text a `Value` parse refuses ends the pass (the manifest is then parsed whole).
struct Finishing<'m> {
    patterns: CheckedPatterns,
    /// The endpoints' origins parsed so far (CONTRACT R5).
    origins: Origins,
    /// Whether a route may have a search (CONTRACT S1): the tools' searched texts are noted.
    searched: bool,
    /// The manifest's text, which the pass reads, as bytes and as text.
    manifest: &'m Bytes,
    text: &'m str,
}

impl<'de, 'm: 'de> ToolReader<'de> for Finishing<'m> {
    type Tool = Option<CompiledTool>;

    fn read_tool<D: Deserializer<'de>>(
        &mut self,
        tool: D,
        around: usize,
    ) -> Result<Self::Tool, D::Error> {
        let read = StreamedTool::read(tool, self.text, around, self.searched)?;
        match read.finish(
            &mut self.patterns,
            &mut self.origins,
            self.manifest,
            self.searched,
        ) {
            Finished::Compiled(tool) => Ok(Some(tool)),
            Finished::Unproven => Ok(None),
        }
    }
}

/// The second pass: each tool's raw text, for the full check.
struct RawTexts;

impl<'de> ToolReader<'de> for RawTexts {
    type Tool = &'de RawValue;

    fn read_tool<D: Deserializer<'de>>(
        &mut self,
        tool: D,
        _around: usize,
    ) -> Result<Self::Tool, D::Error> {
        <&'de RawValue>::deserialize(tool)
    }
}

/// Each `tools` array's elements as one pass read them.
struct ReadTools<T> {
    routes: Vec<Option<Vec<T>>>,
    single: Option<Vec<T>>,
}

/// One pass over the text: the document without its tools, and the tools as `reader` reads
/// them. `None` when the text is not JSON or does not have the shape of a manifest, or when the
/// reader ends the pass.
fn read<'de, R: ToolReader<'de>>(
    text: &'de str,
    reader: &mut R,
) -> Option<(Value, ReadTools<R::Tool>)> {
    // As `serde_json::from_str`: the value, then nothing but whitespace.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let root = ObjectSeed::<R, true>(reader)
        .deserialize(&mut deserializer)
        .ok()?;
    deserializer.end().ok()?;
    let IfObject(Some(root)) = root else {
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
/// its fields parsed, except a `tools` array, whose elements the pass's [`ToolReader`] reads
/// (its place in `document` holds an empty array), and at the root `routes`. A `tools` that is
/// not an array is kept as `null`: the compiler reads only that it is there and not an array. A
/// field given twice keeps its last value, as `serde_json::Value` does.
struct Fields<T, const ROOT: bool> {
    document: Map<String, Value>,
    tools: Option<Vec<T>>,
    /// The root's `routes`; always `None` in a route.
    routes: Option<IfArray<IfObject<Fields<T, false>>>>,
}

impl<T, const ROOT: bool> Fields<T, ROOT> {
    fn read<'de, A: MapAccess<'de>, R: ToolReader<'de, Tool = T>>(
        mut map: A,
        reader: &mut R,
    ) -> Result<Self, A::Error> {
        let mut fields = Fields {
            document: Map::new(),
            tools: None,
            routes: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            if key == "tools" {
                // The arrays and objects around a tool: the root, `tools` and the tool; in the
                // `routes` form also `routes` and the route.
                let around = if ROOT { 3 } else { 5 };
                let IfArray(tools) = map.next_value_seed(ToolsSeed {
                    reader: &mut *reader,
                    around,
                })?;
                let placeholder = if tools.is_some() {
                    Value::Array(Vec::new())
                } else {
                    Value::Null
                };
                fields.tools = tools;
                fields.document.insert(key, placeholder);
            } else if ROOT && key == "routes" {
                fields.routes = Some(map.next_value_seed(RoutesSeed(&mut *reader))?);
            } else {
                let value = map.next_value::<Value>()?;
                fields.document.insert(key, value);
            }
        }
        Ok(fields)
    }
}

/// `Some` when the JSON value is an object (read as [`Fields`]), `None` (the value read as
/// strictly as a `Value` parse reads it, and dropped) when it is anything else.
struct IfObject<T>(Option<T>);

/// `Some` of the elements when the JSON value is an array, `None` (the value read as strictly
/// as a `Value` parse reads it, and dropped) when it is anything else.
struct IfArray<T>(Option<Vec<T>>);

/// Reads the manifest root (`ROOT`, the only object with `routes`) or a route of `routes`.
struct ObjectSeed<'r, R, const ROOT: bool>(&'r mut R);

impl<'de, R: ToolReader<'de>, const ROOT: bool> DeserializeSeed<'de> for ObjectSeed<'_, R, ROOT> {
    type Value = IfObject<Fields<R::Tool, ROOT>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, R: ToolReader<'de>, const ROOT: bool> Visitor<'de> for ObjectSeed<'_, R, ROOT> {
    type Value = IfObject<Fields<R::Tool, ROOT>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Fields::read(map, self.0).map(|fields| IfObject(Some(fields)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Strict::drain_seq(seq).map(|()| IfObject(None))
    }

    scalars_are!(IfObject(None));
}

/// Reads a `tools` array, each element with the pass's [`ToolReader`].
struct ToolsSeed<'r, R> {
    reader: &'r mut R,
    around: usize,
}

impl<'de, R: ToolReader<'de>> DeserializeSeed<'de> for ToolsSeed<'_, R> {
    type Value = IfArray<R::Tool>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, R: ToolReader<'de>> Visitor<'de> for ToolsSeed<'_, R> {
    type Value = IfArray<R::Tool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut tools = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(tool) = seq.next_element_seed(ToolSeed {
            reader: &mut *self.reader,
            around: self.around,
        })? {
            tools.push(tool);
        }
        Ok(IfArray(Some(tools)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Strict::drain_map(map).map(|()| IfArray(None))
    }

    scalars_are!(IfArray(None));
}

/// Reads one element of a `tools` array with the pass's [`ToolReader`].
struct ToolSeed<'r, R> {
    reader: &'r mut R,
    around: usize,
}

impl<'de, R: ToolReader<'de>> DeserializeSeed<'de> for ToolSeed<'_, R> {
    type Value = R::Tool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.reader.read_tool(deserializer, self.around)
    }
}

/// Reads the root's `routes`: each element a route object ([`ObjectSeed`]).
struct RoutesSeed<'r, R>(&'r mut R);

impl<'de, R: ToolReader<'de>> DeserializeSeed<'de> for RoutesSeed<'_, R> {
    type Value = IfArray<IfObject<Fields<R::Tool, false>>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, R: ToolReader<'de>> Visitor<'de> for RoutesSeed<'_, R> {
    type Value = IfArray<IfObject<Fields<R::Tool, false>>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut routes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(route) = seq.next_element_seed(ObjectSeed::<R, false>(&mut *self.0))? {
            routes.push(route);
        }
        Ok(IfArray(Some(routes)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Strict::drain_map(map).map(|()| IfArray(None))
    }

    scalars_are!(IfArray(None));
}
