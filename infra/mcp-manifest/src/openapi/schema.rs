//! Schema translation: an OpenAPI Schema Object (3.0's dialect or 3.1's JSON Schema 2020-12) to
//! the JSON Schema 2020-12 of a tool's `inputSchema` or `outputSchema` (CONTRACT R5, M3).
//!
//! - `$ref`s are resolved: a non-recursive one is inlined, a recursive one becomes an entry of
//!   the `inputSchema`'s root `$defs` referenced as `#/$defs/<Name>`;
//! - 3.0's `nullable: true` adds `"null"` to `type` (or an `anyOf` with `{"type": "null"}`),
//!   its boolean `exclusiveMinimum`/`exclusiveMaximum` take the numeric form, `example` becomes
//!   `examples: [..]`;
//! - OpenAPI-only keywords (`discriminator`, `xml`, `externalDocs`) and `x-` extensions are
//!   dropped, as are the identifiers that would move a reference's base (`$id`, `$anchor`...);
//! - a request's `readOnly` properties, or a response's `writeOnly` ones, are left out of their
//!   object's `properties` and `required` ([`SchemaTranslator::leaving_out`]);
//! - a `pattern` the gateway's regex engine cannot compile is dropped with a warning, as are
//!   `type` names JSON Schema does not know and `required` entries that are no property names;
//! - the work is bounded: a `$ref` used many times is inlined at each use, so a chain of schemas
//!   that each use the next twice doubles per level; an operation whose schemas expand to more
//!   than [`MAX_NODES`] nodes (or the byte budget) is skipped, and a `$ref` cycle that never
//!   descends into a property or item (which no instance could ever end) is refused.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::document::Dialect;
use super::refs::{self, RefError};

mod keywords;
mod left_out;
mod reference;
use keywords::{child, def_ref, exclusive_bounds, json_size, nullable};

#[cfg(test)]
mod tests;

/// The most schema nodes the schemas of one operation may expand to.
pub(crate) const MAX_NODES: usize = 200_000;

/// The most schema nodes all operations' schemas may take to translate, skipped operations'
/// included, unless the byte budget allows more: beyond, the import stops.
pub(crate) const MAX_WORK_NODES: usize = 10 * MAX_NODES;

/// The byte budget of one operation's schemas unless [`SchemaTranslator::with_max_bytes`] says
/// otherwise: the manifest size limit's default.
pub(crate) const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// Keywords dropped from every schema: OpenAPI-only ones, those translated separately, and the
/// identifiers that would change how `#/$defs/...` references resolve.
const DROPPED: [&str; 16] = [
    "discriminator",
    "xml",
    "externalDocs",
    "nullable",
    "example",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "$id",
    "$schema",
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "$defs",
    "definitions",
];

/// Keywords whose value is one schema.
const ONE_SCHEMA: [&str; 10] = [
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];

/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];

/// Keywords whose schemas apply to a member or item of the instance (not the instance itself):
/// a `$ref` cycle through one of them ends with the instance.
const DESCENDING: [&str; 9] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "prefixItems",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// JSON Schema's type names.
const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// Why a schema cannot be translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SchemaError {
    /// A `$ref` that cannot be followed.
    Ref(RefError),
    /// The operation's schemas expand beyond the budget: the whole skip reason.
    TooLarge(String),
}

impl From<RefError> for SchemaError {
    fn from(error: RefError) -> Self {
        Self::Ref(error)
    }
}

impl SchemaError {
    /// The skip reason, a reference error prefixed with where the schema is (`parameter 'x'`,
    /// `request body`).
    pub(crate) fn reason(self, at: &str) -> String {
        match self {
            Self::Ref(error) => format!("{at}: {error}"),
            Self::TooLarge(reason) => reason,
        }
    }
}

/// Translates the schemas of one tool, collecting the `$defs` its recursive references need and
/// the warnings (dropped patterns and types).
#[derive(Debug)]
pub(crate) struct SchemaTranslator<'a> {
    document: &'a Value,
    dialect: Dialect,
    /// The references being expanded, outermost first, with the [`Self::descents`] at which
    /// each began.
    expanding: Vec<(String, usize)>,
    /// How many [`DESCENDING`] keywords the schema being translated is nested in.
    descents: usize,
    /// The `$defs` name of each reference found to be recursive.
    def_names: HashMap<String, String>,
    defs: Map<String, Value>,
    /// Translations of non-recursive references, reused for each further use, with the nodes
    /// and bytes each use adds.
    inlined: HashMap<String, (Value, usize, usize)>,
    warnings: Vec<String>,
    /// Schema nodes produced so far (each use of an inlined reference counting its own).
    nodes: usize,
    /// A lower bound of the bytes the produced schemas take as JSON.
    bytes: usize,
    max_bytes: usize,
    /// `readOnly` (a request's schemas) or `writeOnly` (a response's): the properties marked
    /// with it are left out ([`Self::leaving_out`]).
    left_out: Option<&'static str>,
}

impl<'a> SchemaTranslator<'a> {
    /// A translator for schemas of `document`.
    pub(crate) fn new(document: &'a Value, dialect: Dialect) -> Self {
        Self {
            document,
            dialect,
            expanding: Vec::new(),
            descents: 0,
            def_names: HashMap::new(),
            defs: Map::new(),
            inlined: HashMap::new(),
            warnings: Vec::new(),
            nodes: 0,
            bytes: 0,
            max_bytes: DEFAULT_MAX_BYTES,
            left_out: None,
        }
    }

    /// The same with a byte budget of `max_bytes` (the manifest size limit).
    pub(crate) fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The schema nodes translated so far (each use of an inlined reference counting its own).
    pub(crate) fn nodes(&self) -> usize {
        self.nodes
    }

    /// A lower bound of the bytes the schemas translated so far take as JSON.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// `schema` in JSON Schema 2020-12; `at` names it in warnings (an argument, `body`...).
    ///
    /// # Errors
    /// A `$ref` that is external, out of place, names nothing, is no string or loops without
    /// descending; or schemas over the budget.
    pub(crate) fn translate(&mut self, schema: &Value, at: &str) -> Result<Value, SchemaError> {
        match schema {
            Value::Bool(_) => {
                self.charge(1, 5)?;
                Ok(schema.clone())
            }
            Value::Object(object) => match object.get("$ref") {
                Some(Value::String(reference)) => self.reference(reference, object, at),
                Some(other) => Err(refs::not_string(other).into()),
                None => Ok(Value::Object(self.object(object, at)?)),
            },
            _ => {
                self.warnings.push(format!(
                    "the schema of {at} is not an object; it admits any value"
                ));
                self.charge(1, 2)?;
                Ok(json!({}))
            }
        }
    }

    /// The `$defs` of the recursive references met, and the warnings.
    pub(crate) fn finish(self) -> (Map<String, Value>, Vec<String>) {
        (self.defs, self.warnings)
    }

    /// The schema a translated schema stands for: itself, or the `$defs` entry of a
    /// `{"$ref": "#/$defs/<Name>"}`.
    pub(crate) fn target<'s>(&'s self, translated: &'s Value) -> &'s Value {
        translated
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| self.defs.get(name))
            .unwrap_or(translated)
    }

    /// Counts `nodes` schema nodes of `bytes` bytes against the budget.
    fn charge(&mut self, nodes: usize, bytes: usize) -> Result<(), SchemaError> {
        self.nodes = self.nodes.saturating_add(nodes);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.nodes > MAX_NODES {
            return Err(SchemaError::TooLarge(format!(
                "its schemas expand to more than {MAX_NODES} nodes (repeated $refs)"
            )));
        }
        if self.bytes > self.max_bytes {
            return Err(SchemaError::TooLarge(format!(
                "its schemas expand to more than {} bytes (repeated $refs)",
                self.max_bytes
            )));
        }
        Ok(())
    }

    /// Counts a value copied as it is (an `enum`, a `default`...).
    fn charge_value(&mut self, value: &Value) -> Result<(), SchemaError> {
        let (nodes, bytes) = json_size(value);
        self.charge(nodes, bytes)
    }

    fn object(
        &mut self,
        object: &Map<String, Value>,
        at: &str,
    ) -> Result<Map<String, Value>, SchemaError> {
        self.charge(1, 2)?;
        let mut out = Map::new();
        for (key, value) in object {
            let key_str = key.as_str();
            if key_str.starts_with("x-") || DROPPED.contains(&key_str) || key_str == "$ref" {
                continue;
            }
            let descends = DESCENDING.contains(&key_str);
            self.descents += usize::from(descends);
            let translated = self.keyword(key_str, value, at);
            self.descents -= usize::from(descends);
            if let Some((key, translated)) = translated? {
                self.charge(0, key.len() + 4)?;
                out.insert(key, translated);
            }
        }
        self.unrequire_left_out(object, &mut out);
        exclusive_bounds(object, &mut out);
        if let Some(example) = object.get("example")
            && !out.contains_key("examples")
        {
            self.charge_value(example)?;
            out.insert("examples".into(), Value::Array(vec![example.clone()]));
        }
        if object.get("nullable") == Some(&Value::Bool(true)) {
            self.charge(1, 20)?;
            out = nullable(out);
        }
        Ok(out)
    }

    /// One keyword of a schema object translated: the keyword and value to write, if any.
    fn keyword(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
    ) -> Result<Option<(String, Value)>, SchemaError> {
        let translated = if SCHEMA_MAPS.contains(&key) {
            let Some(map) = value.as_object() else {
                return Ok(None);
            };
            self.charge(1, 2)?;
            let mut schemas = Map::new();
            for (name, schema) in map {
                if key == "patternProperties" && !self.pattern_compiles(name, at) {
                    continue;
                }
                if key == "properties" && self.is_left_out(schema) {
                    continue;
                }
                let inner = if key == "properties" {
                    child(at, name)
                } else {
                    at.to_string()
                };
                self.charge(0, name.len() + 4)?;
                schemas.insert(name.clone(), self.translate(schema, &inner)?);
            }
            Value::Object(schemas)
        } else if SCHEMA_LISTS.contains(&key) {
            let Some(list) = value.as_array() else {
                return Ok(None);
            };
            Value::Array(self.list(list, at)?)
        } else if ONE_SCHEMA.contains(&key) {
            self.translate(value, at)?
        } else {
            let copied = match key {
                "items" => {
                    if let Value::Array(list) = value {
                        // Draft 4's tuple form: 2020-12 says prefixItems.
                        let items = Value::Array(self.list(list, at)?);
                        return Ok(Some(("prefixItems".into(), items)));
                    }
                    return Ok(Some((
                        key.into(),
                        self.translate(value, &format!("{at}[]"))?,
                    )));
                }
                "pattern" => match value.as_str() {
                    Some(pattern) if self.pattern_compiles(pattern, at) => value.clone(),
                    _ => return Ok(None),
                },
                "type" => match self.types(value, at) {
                    Some(types) => types,
                    None => return Ok(None),
                },
                "required" => match self.required_names(value, at) {
                    Some(names) => names,
                    None => return Ok(None),
                },
                "examples" if !value.is_array() => return Ok(None),
                _ => value.clone(),
            };
            self.charge_value(&copied)?;
            copied
        };
        Ok(Some((key.into(), translated)))
    }

    fn list(&mut self, list: &[Value], at: &str) -> Result<Vec<Value>, SchemaError> {
        self.charge(1, 2)?;
        list.iter()
            .map(|schema| self.translate(schema, at))
            .collect()
    }
}
