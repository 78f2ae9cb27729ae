//! One manifest tool read in the one pass over the manifest's text (CONTRACT R5, M, T1, T4):
//! its schemas kept as their raw texts, every other field parsed as strictly as a
//! `serde_json::Value` parse reads it; no `Value` of the tool is built. Its schemas are then
//! checked by reading their texts ([`super::schema_check`]), and its `tools/list` entry is
//! written with the schemas' texts.
//!
//! The result is the tool [`super::tool::compile_tool`] compiles from the parsed tool, or
//! [`Finished::Unproven`]: a tool this reading cannot prove valid (a problem, or something only
//! the full check judges) is compiled by the full check from its text, which then reports its
//! problems with their paths. Text that a `Value` parse of the manifest would refuse is
//! [`Finished::NotJson`]: the manifest is then parsed whole, and refused with that parse's error.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::problems::Problems;
use super::schema_check::{Facts, Key};
use super::threads::CompiledTool;
use super::tool::{compile_meta, header_params, is_tool_name};
use crate::registry::lazy_validator::SchemaText;
use crate::registry::{LazyValidator, Tool};

/// A tool as the pass read it. `None` for a tool that is not an object.
pub(super) struct StreamedTool<'de>(Option<Box<ToolDraft<'de>>>);

/// A tool's fields as the pass read them: the schemas as their raw texts (checked later,
/// [`Facts::of_schema`]), every other field parsed as strictly as a `Value` parse reads it.
pub(super) struct ToolDraft<'de> {
    name: Option<Text<'de>>,
    title: Option<Text<'de>>,
    description: Option<Text<'de>>,
    input_schema: Option<&'de RawValue>,
    output_schema: Option<&'de RawValue>,
    annotations: Option<Value>,
    icons: Option<Value>,
    meta: Option<Value>,
    /// A public field or `_meta` given twice: `Value` keeps the last one; the full check
    /// reads it so.
    repeated: bool,
    /// The texts of schemas given again later, checked as JSON all the same.
    replaced_schemas: Vec<&'de RawValue>,
}

/// A field that must be a string: the string, or `Other` for any other JSON value (read).
pub(super) enum Text<'de> {
    Str(Cow<'de, str>),
    Other,
}

impl Text<'_> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(text) => Some(text),
            Self::Other => None,
        }
    }
}

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Text<'de>, A::Error> {
                Strict::drain_seq(seq).map(|()| Text::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'de>, A::Error> {
                Strict::drain_map(map).map(|()| Text::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_unit<E>(self) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

/// Any JSON value read and dropped as strictly as a `Value` parse reads it: escapes and
/// surrogates, number ranges and the nesting limit (serde_json's `IgnoredAny` skips without
/// those checks).
pub(super) struct Strict;

impl Strict {
    /// Reads the rest of an array strictly.
    pub(super) fn drain_seq<'de, A: de::SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(())
    }

    /// Reads the rest of an object strictly.
    pub(super) fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<Strict, Strict>()?.is_some() {}
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrictVisitor;
        impl<'de> Visitor<'de> for StrictVisitor {
            type Value = Strict;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Strict, A::Error> {
                Strict::drain_seq(seq).map(|()| Strict)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Strict, A::Error> {
                Strict::drain_map(map).map(|()| Strict)
            }
            scalars_are!(Strict);
        }
        deserializer.deserialize_any(StrictVisitor)
    }
}

impl<'de> Deserialize<'de> for StreamedTool<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolVisitor)
    }
}

struct ToolVisitor;

/// Sets a field, noting a repeat; the value it replaces.
fn set<T>(field: &mut Option<T>, value: T, repeated: &mut bool) -> Option<T> {
    *repeated |= field.is_some();
    field.replace(value)
}

impl<'de> Visitor<'de> for ToolVisitor {
    type Value = StreamedTool<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut draft = ToolDraft {
            name: None,
            title: None,
            description: None,
            input_schema: None,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            repeated: false,
            replaced_schemas: Vec::new(),
        };
        let repeated = &mut draft.repeated;
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "name" => drop(set(&mut draft.name, map.next_value()?, repeated)),
                "title" => drop(set(&mut draft.title, map.next_value()?, repeated)),
                "description" => drop(set(&mut draft.description, map.next_value()?, repeated)),
                "inputSchema" | "outputSchema" => {
                    let field = if key == "inputSchema" {
                        &mut draft.input_schema
                    } else {
                        &mut draft.output_schema
                    };
                    if let Some(replaced) = set(field, map.next_value()?, repeated) {
                        draft.replaced_schemas.push(replaced);
                    }
                }
                "annotations" => drop(set(&mut draft.annotations, map.next_value()?, repeated)),
                "icons" => drop(set(&mut draft.icons, map.next_value()?, repeated)),
                "_meta" => drop(set(&mut draft.meta, map.next_value()?, repeated)),
                _ => {
                    map.next_value::<Strict>()?;
                }
            }
        }
        Ok(StreamedTool(Some(Box::new(draft))))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Strict::drain_seq(seq).map(|()| StreamedTool(None))
    }

    scalars_are!(StreamedTool(None));
}

/// What [`StreamedTool::finish`] made of a tool.
pub(super) enum Finished {
    /// Compiled, as the full check would compile it.
    Compiled(CompiledTool),
    /// For the full check.
    Unproven,
    /// Text a `Value` parse of the manifest refuses: the whole manifest goes to that parse.
    NotJson,
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

/// One schema's validator from its facts: proven (compiled on first use) or compiled now.
/// `None`: for the full check.
fn validator(
    facts: &Facts<'_>,
    raw: &str,
    text: SchemaText,
    patterns: &mut CheckedPatterns,
) -> Option<LazyValidator> {
    if facts.unproven || !facts.patterns.iter().all(|p| patterns.compiles(p)) {
        return None;
    }
    let refs_resolve = facts
        .local_refs
        .iter()
        .all(|name| facts.root_defs.contains(name));
    Some(if facts.needs_compile || !refs_resolve {
        let schema: Value = serde_json::from_str(raw).ok()?;
        let compiled = jsonschema::validator_for(&schema).ok()?;
        LazyValidator::checked(text, Some(compiled))
    } else {
        LazyValidator::checked(text, None)
    })
}

impl StreamedTool<'_> {
    /// Completes the checks (the schemas' texts, read inside `around` arrays and objects of
    /// the manifest; name, fields' types, `x-mcp-header`, `_meta`) and builds the tool and its
    /// entry.
    pub(super) fn finish(self, around: usize, patterns: &mut CheckedPatterns) -> Finished {
        let Some(draft) = self.0 else {
            return Finished::Unproven;
        };
        // Every schema text is read first: one a `Value` parse refuses fails the manifest.
        let input = draft
            .input_schema
            .map(|raw| Facts::of_schema(raw.get(), around));
        let output = draft
            .output_schema
            .map(|raw| Facts::of_schema(raw.get(), around));
        let replaced = draft
            .replaced_schemas
            .iter()
            .any(|raw| Facts::of_schema(raw.get(), around).not_json);
        if replaced || [&input, &output].into_iter().flatten().any(|f| f.not_json) {
            return Finished::NotJson;
        }
        match draft.compile(input.as_ref(), output.as_ref(), patterns) {
            Some(tool) => Finished::Compiled(tool),
            None => Finished::Unproven,
        }
    }
}

impl ToolDraft<'_> {
    fn compile(
        &self,
        input: Option<&Facts<'_>>,
        output: Option<&Facts<'_>>,
        patterns: &mut CheckedPatterns,
    ) -> Option<CompiledTool> {
        // A field that must be a string and is not: the full check names it.
        let not_text = [&self.name, &self.title, &self.description]
            .into_iter()
            .any(|field| matches!(field, Some(Text::Other)));
        let name = self.name.as_ref().and_then(Text::as_str)?;
        let title = self.title.as_ref().and_then(Text::as_str);
        let description = self.description.as_ref().and_then(Text::as_str);
        let typed = !self.repeated
            && !not_text
            && is_tool_name(name)
            && self.annotations.as_ref().is_none_or(Value::is_object)
            && self.icons.as_ref().is_none_or(Value::is_array);
        let (true, Some(input_raw), Some(input)) = (typed, self.input_schema, input) else {
            return None;
        };
        let entry = Arc::new(
            serde_json::value::to_raw_value(&Entry {
                name,
                title,
                description,
                input_schema: input_raw,
                output_schema: self.output_schema,
                annotations: self.annotations.as_ref(),
                icons: self.icons.as_ref(),
            })
            .ok()?,
        );
        let input_schema = validator(
            input,
            input_raw.get(),
            SchemaText::Member(Arc::clone(&entry), "inputSchema"),
            patterns,
        )?;
        let output_schema = match (self.output_schema, output) {
            (Some(raw), Some(facts)) => Some(validator(
                facts,
                raw.get(),
                SchemaText::Member(Arc::clone(&entry), "outputSchema"),
                patterns,
            )?),
            _ => None,
        };
        // The parsed input schema, for the two checks that read it as the full check does.
        let needs_parsed = input.header_annotations
            || self
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
            Some(schema) if input.header_annotations => header_params(schema, "", &mut problems),
            _ => Vec::new(),
        };
        let meta = compile_meta(self.meta.as_ref(), parsed_input.as_ref(), "", &mut problems);
        if !problems.0.is_empty() {
            return None;
        }
        let meta = meta?;
        let tool = Tool {
            name: name.to_owned(),
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

/// A tool's `tools/list` entry: its public fields in the order of CONTRACT T1, the schemas as
/// the manifest's texts (T4).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<&'a Value>,
}
