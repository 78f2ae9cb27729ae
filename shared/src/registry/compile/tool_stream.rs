//! One manifest tool read in the one pass over the manifest's text (CONTRACT R5, M, T1, T4):
//! its public fields kept as their raw texts, its `_meta` parsed; no `serde_json::Value` of the
//! tool is built. Its schemas are then checked by reading their texts
//! ([`super::schema_check`]), and its `tools/list` entry is written from the raw texts.
//!
//! The result is the tool [`super::tool::compile_tool`] compiles from the parsed tool, or
//! `None`: a tool this reading cannot prove valid (a problem, or something only the full check
//! judges) is compiled by the full check from its text, which then reports its problems with
//! their paths.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::problems::Problems;
use super::schema_check::{Facts, Key};
use super::threads::CompiledTool;
use super::tool::{PUBLIC_TOOL_FIELDS, compile_meta, header_params, is_tool_name};
use crate::registry::lazy_validator::SchemaText;
use crate::registry::{LazyValidator, Tool};

const NAME: usize = 0;
const INPUT_SCHEMA: usize = 3;
const OUTPUT_SCHEMA: usize = 4;
const ANNOTATIONS: usize = 5;
const ICONS: usize = 6;

/// A tool as the pass read it: the raw text of each field of [`PUBLIC_TOOL_FIELDS`] it has, in
/// that order, and its `_meta`. `None` (in [`StreamedTool::0`]) for a tool that is not an
/// object or repeats a public field or `_meta` (`Value` would keep the last one; the full check
/// reads it so).
pub(super) struct StreamedTool<'de>(Option<Box<ToolDraft<'de>>>);

pub(super) struct ToolDraft<'de> {
    public: [Option<&'de RawValue>; PUBLIC_TOOL_FIELDS.len()],
    meta: Option<Value>,
}

impl<'de> Deserialize<'de> for StreamedTool<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolVisitor)
    }
}

struct ToolVisitor;

/// The scalar `visit_*` methods of a visitor whose value is `StreamedTool(None)`.
macro_rules! scalars_are_unproven {
    ($($method:ident: $type:ty),*) => {
        $(fn $method<E>(self, _: $type) -> Result<Self::Value, E> {
            Ok(StreamedTool(None))
        })*
    };
}

impl<'de> Visitor<'de> for ToolVisitor {
    type Value = StreamedTool<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut draft = ToolDraft {
            public: [None; PUBLIC_TOOL_FIELDS.len()],
            meta: None,
        };
        let mut repeated = false;
        while let Some(Key(key)) = map.next_key()? {
            if let Some(field) = PUBLIC_TOOL_FIELDS.iter().position(|f| *f == key) {
                repeated |= draft.public[field].is_some();
                draft.public[field] = Some(map.next_value()?);
            } else if key == "_meta" {
                repeated |= draft.meta.is_some();
                draft.meta = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(StreamedTool((!repeated).then(|| Box::new(draft))))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(StreamedTool(None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(StreamedTool(None))
    }

    scalars_are_unproven!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
}

/// The `pattern`s found valid in one load, each compiled once to check it.
#[derive(Default)]
pub(super) struct CheckedPatterns(HashSet<String>);

impl CheckedPatterns {
    /// Whether `pattern` compiles as a JSON Schema `pattern` does (the compiler's own check).
    fn compiles(&mut self, pattern: &str) -> bool {
        if self.0.contains(pattern) {
            return true;
        }
        let compiles =
            jsonschema::validator_for(&serde_json::json!({ "pattern": pattern })).is_ok();
        if compiles {
            self.0.insert(pattern.to_owned());
        }
        compiles
    }
}

/// The first byte of a raw JSON text: `"` for a string, `{` for an object, `[` for an array.
fn starts_with(raw: Option<&RawValue>, byte: u8) -> bool {
    raw.is_none_or(|raw| raw.get().as_bytes().first() == Some(&byte))
}

/// One schema's validator from its text: proven by reading it (compiled on first use) or
/// compiled now. `None`: for the full check.
fn validator(
    raw: &str,
    text: SchemaText,
    patterns: &mut CheckedPatterns,
) -> Option<(LazyValidator, bool)> {
    let facts = Facts::of_schema(raw);
    if facts.unproven || !facts.patterns.iter().all(|p| patterns.compiles(p)) {
        return None;
    }
    let refs_resolve = facts
        .local_refs
        .iter()
        .all(|name| facts.root_defs.contains(name));
    let validator = if facts.needs_compile || !refs_resolve {
        let schema: Value = serde_json::from_str(raw).ok()?;
        let compiled = jsonschema::validator_for(&schema).ok()?;
        LazyValidator::checked(text, Some(compiled))
    } else {
        LazyValidator::checked(text, None)
    };
    Some((validator, facts.header_annotations))
}

impl StreamedTool<'_> {
    /// Completes the checks (name, fields' types, schemas, `x-mcp-header`, `_meta`) and builds
    /// the tool and its entry; `None` for the full check.
    pub(super) fn finish(self, patterns: &mut CheckedPatterns) -> Option<CompiledTool> {
        let draft = self.0?;
        let public = &draft.public;
        let name: String = serde_json::from_str(public[NAME]?.get()).ok()?;
        let typed = is_tool_name(&name)
            && starts_with(public[1], b'"')
            && starts_with(public[2], b'"')
            && starts_with(public[ANNOTATIONS], b'{')
            && starts_with(public[ICONS], b'[');
        if !typed {
            return None;
        }
        let input_raw = public[INPUT_SCHEMA]?;
        let entry = Arc::new(serde_json::value::to_raw_value(&Entry(public)).ok()?);
        let (input_schema, header_annotations) = validator(
            input_raw.get(),
            SchemaText::Member(Arc::clone(&entry), "inputSchema"),
            patterns,
        )?;
        let output_schema = match public[OUTPUT_SCHEMA] {
            Some(raw) => Some(
                validator(
                    raw.get(),
                    SchemaText::Member(Arc::clone(&entry), "outputSchema"),
                    patterns,
                )?
                .0,
            ),
            None => None,
        };
        // The parsed input schema, for the two checks that read it as the full check does.
        let needs_parsed = header_annotations
            || draft
                .meta
                .as_ref()
                .is_some_and(|meta| meta.get("parameters").is_some());
        let parsed_input: Option<Value> = if needs_parsed {
            Some(serde_json::from_str(input_raw.get()).ok()?)
        } else {
            None
        };
        let mut problems = Problems::default();
        let header_params = match &parsed_input {
            Some(schema) if header_annotations => header_params(schema, "", &mut problems),
            _ => Vec::new(),
        };
        let meta = compile_meta(
            draft.meta.as_ref(),
            parsed_input.as_ref(),
            "",
            &mut problems,
        );
        if !problems.0.is_empty() {
            return None;
        }
        let meta = meta?;
        let tool = Tool {
            name,
            version: meta.version,
            endpoint: meta.endpoint,
            method: meta.method,
            timeout_ms: meta.timeout_ms,
            input_schema,
            output_schema,
            result_format: meta.result_format,
            header_params,
            rest: meta.rest,
        };
        Some(CompiledTool {
            tool: Some((Arc::new(tool), meta.active)),
            problems: Vec::new(),
            public: meta.active.then_some(entry),
        })
    }
}

/// A tool's `tools/list` entry: its public fields' texts in the order of CONTRACT T1 (T4).
struct Entry<'a>(&'a [Option<&'a RawValue>; PUBLIC_TOOL_FIELDS.len()]);

impl serde::Serialize for Entry<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let count = self.0.iter().flatten().count();
        let mut map = serializer.serialize_map(Some(count))?;
        for (field, text) in PUBLIC_TOOL_FIELDS.iter().zip(self.0) {
            if let Some(text) = text {
                map.serialize_entry(field, text)?;
            }
        }
        map.end()
    }
}
