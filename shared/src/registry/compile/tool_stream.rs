//! One manifest tool read in the one pass over the manifest's text (CONTRACT R5, M, T1, T4):
//! its schemas checked as the parse reads them ([`super::schema_check`]), which also finds
//! where each schema's text stands in the manifest's, every other field parsed as strictly as a
//! `serde_json::Value` parse reads it; no `Value` of the tool is built. Its `tools/list` entry
//! is written around the schemas' texts, slices of the manifest's, not copies
//! ([`super::list_entry`]).
//!
//! The result is the tool [`super::tool::compile_tool`] compiles from the parsed tool, or
//! [`Finished::Unproven`]: a tool this reading cannot prove valid (a problem, something only
//! the full check judges, or a schema whose text it could not place) is compiled by the full
//! check from its text, which then reports its problems with their paths. Text that a `Value`
//! parse of the manifest would refuse is the parse's error: the pass ends, and the manifest is
//! parsed whole and refused with that parse's error.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::header_params::header_params;
use super::list_entry::{entry_head, entry_tail};
use super::meta::{MetaInput, MetaMembers, compile_meta};
use super::origins::Origins;
use super::problems::Problems;
use super::schema_check::Facts;
use super::strict::{Strict, Text};
use super::threads::CompiledTool;
use super::tool::is_tool_name;
use crate::registry::lazy_validator::SchemaText;
use crate::registry::search::FieldSpans;
use crate::registry::snapshot::ListEntry;
use crate::registry::{LazyValidator, Tool};
use crate::text::Key;

/// A tool as the pass read it. `None` for a tool that is not an object.
pub(super) struct StreamedTool<'de>(Option<Box<ToolDraft<'de>>>);

/// A tool's fields as the pass read them: the schemas checked as they were read, with their
/// texts' places in the manifest ([`Schema`]), every other field parsed as strictly as a
/// `Value` parse reads it.
pub(super) struct ToolDraft<'de> {
    name: Option<Text<'de>>,
    title: Option<Text<'de>>,
    description: Option<Text<'de>>,
    input_schema: Option<Schema<'de>>,
    output_schema: Option<Schema<'de>>,
    annotations: Option<Value>,
    icons: Option<Value>,
    meta: Option<MetaMembers<'de>>,
    /// A public field or `_meta` given twice: `Value` keeps the last one; the full check
    /// reads it so.
    repeated: bool,
}

/// A schema as the pass read it: what the read found, and its text in the manifest's, when
/// the pass could tell where it starts and ends (`None`: the tool goes to the full check).
pub(super) struct Schema<'de> {
    facts: Facts<'de>,
    text: Option<&'de str>,
}

/// Reads a schema in the pass ([`Facts::read`]): the value of a tool's `inputSchema` or
/// `outputSchema` key, which ends at `key_end` of the manifest's `text` (the address just past
/// the key's last byte), inside `around` arrays and objects of the manifest.
struct SchemaSeed<'de> {
    text: &'de str,
    key_end: Option<usize>,
    around: usize,
    /// Whether the root properties' texts are noted for a search (CONTRACT S4).
    searched: bool,
}

impl<'de> DeserializeSeed<'de> for SchemaSeed<'de> {
    type Value = Schema<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Schema<'de>, D::Error> {
        let facts = Facts::read(deserializer, self.around, self.searched)?;
        let bytes = self.text.as_bytes();
        // After the key: its closing quote, white space, `:` and white space.
        let start = self.key_end.and_then(|end| {
            let after_quote = end.checked_sub(bytes.as_ptr() as usize)? + 1;
            let colon = after_quote + json_space(bytes.get(after_quote..)?);
            (bytes.get(colon) == Some(&b':')).then(|| colon + 1 + json_space(&bytes[colon + 1..]))
        });
        let text = start.and_then(|start| {
            let end = facts.text_end(self.text, start)?;
            self.text.get(start..end)
        });
        Ok(Schema { facts, text })
    }
}

/// How many bytes of JSON white space `bytes` starts with.
fn json_space(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .count()
}

impl<'de> StreamedTool<'de> {
    /// Reads a tool of the manifest's `text`, inside `around` arrays and objects of it, noting
    /// where its searched texts lie when `searched` (CONTRACT S4).
    ///
    /// # Errors
    /// The parse's error: text a `Value` parse of the manifest refuses.
    pub(super) fn read<D: Deserializer<'de>>(
        deserializer: D,
        text: &'de str,
        around: usize,
        searched: bool,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolVisitor {
            text,
            around,
            searched,
        })
    }
}

/// Reads a tool of the manifest's `text`, inside `around` arrays and objects of it.
struct ToolVisitor<'de> {
    text: &'de str,
    around: usize,
    /// Whether a route may search the tool: its input schema's searched texts are noted.
    searched: bool,
}

/// Sets a field, noting a repeat; the value it replaces.
fn set<T>(field: &mut Option<T>, value: T, repeated: &mut bool) -> Option<T> {
    *repeated |= field.is_some();
    field.replace(value)
}

impl<'de> Visitor<'de> for ToolVisitor<'de> {
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
                    let key_end = match &key {
                        Cow::Borrowed(key) => Some(key.as_ptr() as usize + key.len()),
                        Cow::Owned(_) => None,
                    };
                    let searched = self.searched && key == "inputSchema";
                    let schema = map.next_value_seed(SchemaSeed {
                        text: self.text,
                        key_end,
                        // The schema is inside the tool.
                        around: self.around,
                        searched,
                    })?;
                    drop(set(field, schema, repeated));
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
}

/// The `pattern`s found valid in one load, each compiled once to check it.
#[derive(Default)]
pub(super) struct CheckedPatterns(HashSet<String, foldhash::fast::RandomState>);

/// Draft 4's meta-schema, which [`CheckedPatterns::compiles`] asks the compiler to check a
/// pattern under first.
const DRAFT_4: &str = "http://json-schema.org/draft-04/schema#";

impl CheckedPatterns {
    /// Whether `pattern` compiles as a JSON Schema `pattern` does: the compiler's own check of
    /// `{"pattern": …}` under 2020-12, the draft of a schema that names none.
    ///
    /// A compilation checks its schema against the draft's meta-schema first, and the first
    /// check of a process builds that meta-schema's validator: 2020-12's (eight documents) is
    /// about 3 M instructions more than Draft 4's (one), a millisecond of a cold start. So the
    /// pattern is compiled under Draft 4 first. The regular expression is compiled the same way
    /// under every draft, and 2020-12's meta-schema asks nothing more of a string `pattern`;
    /// Draft 4's also asserts `format: regex`, which refuses some patterns the compiler takes.
    /// So a pattern that compiles under Draft 4 compiles under 2020-12, and one that does not
    /// is compiled again under 2020-12, whose answer is kept: the result is always 2020-12's
    /// (`pattern_check_tests.rs` holds the two to each other).
    pub(super) fn compiles(&mut self, pattern: &str) -> bool {
        if self.0.contains(pattern) {
            return true;
        }
        let under = |draft: Option<&str>| {
            let schema = match draft {
                Some(draft) => serde_json::json!({ "$schema": draft, "pattern": pattern }),
                None => serde_json::json!({ "pattern": pattern }),
            };
            jsonschema::validator_for(&schema).is_ok()
        };
        let compiles = under(Some(DRAFT_4)) || under(None);
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
    /// Completes the checks (name, fields' types, `x-mcp-header`, `_meta`; the schemas were
    /// read with the tool) and builds the tool and its entry, with where its searched texts
    /// lie when `searched` (CONTRACT S4). `manifest` is the manifest's text, which the
    /// schemas' texts are slices of.
    pub(super) fn finish(
        self,
        patterns: &mut CheckedPatterns,
        origins: &mut Origins,
        manifest: &Bytes,
        searched: bool,
    ) -> Finished {
        let Some(draft) = self.0 else {
            return Finished::Unproven;
        };
        match draft.compile(patterns, origins, manifest, searched) {
            Some(tool) => Finished::Compiled(tool),
            None => Finished::Unproven,
        }
    }
}

impl ToolDraft<'_> {
    /// `_meta`'s members, when it is an object.
    fn meta_members(&self) -> Option<&[(Cow<'_, str>, Value)]> {
        self.meta.as_ref().and_then(|meta| meta.0.as_deref())
    }

    fn compile(
        &self,
        patterns: &mut CheckedPatterns,
        origins: &mut Origins,
        manifest: &Bytes,
        searched: bool,
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
        let (true, Some(input)) = (typed, &self.input_schema) else {
            return None;
        };
        // A schema whose text the pass could not place goes to the full check.
        let input_raw = input.text?;
        let output_raw = match &self.output_schema {
            Some(output) => Some(output.text?),
            None => None,
        };
        // The schemas' texts are slices of the manifest's: no copy is made.
        let input_text = manifest.slice_ref(input_raw.as_bytes());
        let output_text = output_raw.map(|raw| manifest.slice_ref(raw.as_bytes()));
        let input_schema = validator(
            &input.facts,
            input_raw,
            SchemaText::Manifest(input_text.clone()),
            patterns,
        )?;
        let output_schema = match (&self.output_schema, output_raw, &output_text) {
            (Some(output), Some(raw), Some(text)) => Some(validator(
                &output.facts,
                raw,
                SchemaText::Manifest(text.clone()),
                patterns,
            )?),
            _ => None,
        };
        // The parsed input schema, for the two checks that read it as the full check does.
        let needs_parsed = input.facts.header_annotations
            || self
                .meta_members()
                .is_some_and(|members| members.iter().any(|(name, _)| name == "parameters"));
        let parsed_input: Option<Value> = if needs_parsed {
            Some(serde_json::from_str(input_raw).ok()?)
        } else {
            None
        };
        let mut problems = Problems::default();
        let header_params = match &parsed_input {
            Some(schema) if input.facts.header_annotations => {
                header_params(schema, "", &mut problems)
            }
            _ => Vec::new(),
        };
        let meta = compile_meta(
            self.meta_members().map(MetaInput::Members),
            parsed_input.as_ref(),
            "",
            &mut problems,
            origins,
        );
        if !problems.0.is_empty() {
            return None;
        }
        let meta = meta?;
        let (entry, searched) = if meta.active {
            let (head, head_fields) = entry_head(name, title, description)?;
            // Where the search's texts lie (CONTRACT S4); escaped ones are read from the JSON.
            let properties = &input.facts.properties;
            let searched = head_fields
                .filter(|_| searched && !properties.escaped)
                .and_then(|head| FieldSpans::new(head, input_raw, &properties.noted));
            let entry = Box::new(ListEntry::Parts {
                head,
                input_schema: input_text,
                output_schema: output_text,
                tail: entry_tail(self.annotations.as_ref(), self.icons.as_ref())?,
            });
            (Some(entry), searched)
        } else {
            (None, None)
        };
        let tool = Tool {
            name: name.to_owned(),
            version: meta.version,
            endpoint: meta.endpoint,
            method: meta.method,
            timeout_ms: meta.timeout_ms,
            input_schema,
            output_schema: output_schema.map(Box::new),
            result_format: meta.result_format,
            header_params,
            rest: meta.rest.map(Box::new),
            auth: meta.auth.map(Box::new),
            pinned: meta.pinned,
            task: meta.task.map(Box::new),
        };
        Some(CompiledTool {
            tool: Some((Arc::new(tool), meta.active)),
            problems: Vec::new(),
            public: entry,
            searched,
        })
    }
}
