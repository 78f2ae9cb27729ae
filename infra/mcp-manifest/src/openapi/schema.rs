//! Schema translation: an OpenAPI Schema Object (3.0's dialect or 3.1's JSON Schema 2020-12) to
//! the JSON Schema 2020-12 of a tool's `inputSchema` (CONTRACT R5).
//!
//! - `$ref`s are resolved: a non-recursive one is inlined, a recursive one becomes an entry of
//!   the `inputSchema`'s root `$defs` referenced as `#/$defs/<Name>`;
//! - 3.0's `nullable: true` adds `"null"` to `type` (or an `anyOf` with `{"type": "null"}`),
//!   its boolean `exclusiveMinimum`/`exclusiveMaximum` take the numeric form, `example` becomes
//!   `examples: [..]`;
//! - OpenAPI-only keywords (`discriminator`, `xml`, `externalDocs`) and `x-` extensions are
//!   dropped, as are the identifiers that would move a reference's base (`$id`, `$anchor`...);
//! - a `pattern` the gateway's regex engine cannot compile is dropped with a warning, as are
//!   `type` names JSON Schema does not know and `required` entries that are no property names;
//! - the work is bounded: a `$ref` used many times is inlined at each use, so a chain of schemas
//!   that each use the next twice doubles per level; an operation whose schemas expand to more
//!   than [`MAX_NODES`] nodes (or the byte budget) is skipped, and a `$ref` cycle that never
//!   descends into a property or item (which no instance could ever end) is refused.

use std::collections::HashMap;

use mcp_gateway::registry::LazyValidator;
use serde_json::{Map, Value, json};

use super::document::Dialect;
use super::refs::{self, Kind, RefError};

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

    fn reference(
        &mut self,
        reference: &str,
        object: &Map<String, Value>,
        at: &str,
    ) -> Result<Value, SchemaError> {
        let target = if let Some(name) = self.def_names.get(reference).cloned() {
            self.charge(1, name.len() + 20)?;
            def_ref(&name)
        } else if let Some((_, descents)) = self.expanding.iter().find(|(r, _)| r == reference) {
            if *descents == self.descents {
                // Back at the same instance without descending: no validation could end.
                return Err(RefError::Cycle(reference.to_string()).into());
            }
            let name = self.def_name(reference);
            self.charge(1, name.len() + 20)?;
            def_ref(&name)
        } else if let Some((nodes, bytes)) = self.inlined.get(reference).map(|(_, n, b)| (*n, *b)) {
            self.charge(nodes, bytes)?;
            self.inlined
                .get(reference)
                .map(|(inlined, _, _)| inlined.clone())
                .unwrap_or_default()
        } else {
            let schema = refs::resolve(self.document, reference, Kind::Schema)?;
            let (nodes, bytes) = (self.nodes, self.bytes);
            self.expanding.push((reference.to_string(), self.descents));
            let translated = self.translate(schema, at);
            self.expanding.pop();
            let translated = translated?;
            if let Some(name) = self.def_names.get(reference).cloned() {
                self.defs.insert(name.clone(), translated);
                def_ref(&name)
            } else {
                self.inlined.insert(
                    reference.to_string(),
                    (translated.clone(), self.nodes - nodes, self.bytes - bytes),
                );
                translated
            }
        };
        // OpenAPI 3.0 ignores a `$ref`'s siblings; 3.1 (JSON Schema 2020-12) applies them.
        let siblings: Map<String, Value> = object
            .iter()
            .filter(|(key, _)| *key != "$ref")
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        if self.dialect == Dialect::V3_0 || siblings.is_empty() {
            return Ok(target);
        }
        let mut combined = self.object(&siblings, at)?;
        if combined.is_empty() {
            return Ok(target);
        }
        self.charge(1, 12)?;
        combined.insert("allOf".into(), Value::Array(vec![target]));
        Ok(Value::Object(combined))
    }

    /// The `$defs` name of a recursive reference: its last pointer segment, made unique.
    fn def_name(&mut self, reference: &str) -> String {
        if let Some(name) = self.def_names.get(reference) {
            return name.clone();
        }
        let last = reference
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .replace("~1", "/")
            .replace("~0", "~");
        let mut base: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = "schema".into();
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.def_names.values().any(|taken| *taken == name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.def_names.insert(reference.to_string(), name.clone());
        name
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

    /// Whether the gateway compiles `pattern` (as a load does: CONTRACT R5); warns when not.
    fn pattern_compiles(&mut self, pattern: &str, at: &str) -> bool {
        match LazyValidator::check(&json!({"pattern": pattern})) {
            Ok(_) => true,
            Err(error) => {
                self.warnings.push(format!(
                    "dropped pattern '{pattern}' of {at}: the gateway's regex engine cannot compile it ({error})"
                ));
                false
            }
        }
    }

    /// `type` with the names JSON Schema knows; the others (a 2.0 `file`...) and an empty list
    /// are dropped with a warning.
    fn types(&mut self, value: &Value, at: &str) -> Option<Value> {
        let known = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
        match value {
            Value::String(_) if known(value) => Some(value.clone()),
            Value::Array(list) if list.is_empty() => {
                self.warnings
                    .push(format!("dropped type [] of {at}: it names no type"));
                None
            }
            Value::Array(list) => {
                let mut kept: Vec<Value> = Vec::new();
                for t in list {
                    if !known(t) {
                        self.warnings
                            .push(format!("dropped type {t} of {at}: not a JSON Schema type"));
                    } else if !kept.contains(t) {
                        kept.push(t.clone());
                    }
                }
                (!kept.is_empty()).then_some(Value::Array(kept))
            }
            _ => {
                self.warnings.push(format!(
                    "dropped type {value} of {at}: not a JSON Schema type"
                ));
                None
            }
        }
    }

    /// `required` as a list of unique names: the entries that are no strings, or a `required`
    /// that is no list (a 3.0 `required: true` on a property), dropped with a warning.
    fn required_names(&mut self, value: &Value, at: &str) -> Option<Value> {
        let Some(list) = value.as_array() else {
            self.warnings.push(format!(
                "dropped required {value} of {at}: not a list of property names (a property is required by its object's 'required' list)"
            ));
            return None;
        };
        let mut names: Vec<Value> = Vec::new();
        let mut dropped: Vec<String> = Vec::new();
        for name in list {
            if !name.is_string() {
                dropped.push(name.to_string());
            } else if !names.contains(name) {
                names.push(name.clone());
            }
        }
        if !dropped.is_empty() {
            self.warnings.push(format!(
                "dropped required entries {} of {at}: not property names",
                dropped.join(", ")
            ));
        }
        Some(Value::Array(names))
    }
}

/// The JSON nodes of a value and a lower bound of its bytes as JSON.
fn json_size(value: &Value) -> (usize, usize) {
    match value {
        Value::Null | Value::Bool(_) => (1, 4),
        Value::Number(_) => (1, 1),
        Value::String(s) => (1, s.len() + 2),
        Value::Array(items) => items.iter().fold((1, 2), |(n, b), item| {
            let (in_, ib) = json_size(item);
            (n + in_, b + ib + 1)
        }),
        Value::Object(members) => members.iter().fold((1, 2), |(n, b), (key, member)| {
            let (mn, mb) = json_size(member);
            (n + mn, b + key.len() + 4 + mb)
        }),
    }
}

/// `{"$ref": "#/$defs/<name>"}`.
fn def_ref(name: &str) -> Value {
    json!({"$ref": format!("#/$defs/{name}")})
}

/// How warnings name a property of `at`.
fn child(at: &str, name: &str) -> String {
    match at.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')) {
        Some(parent) => format!("'{parent}.{name}'"),
        None => format!("'{name}'"),
    }
}

/// 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` (with `minimum`/`maximum`) in
/// 2020-12's numeric form; 3.1's numeric form kept.
fn exclusive_bounds(object: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match object.get(exclusive) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = out.remove(bound) {
                    out.insert(exclusive.into(), limit);
                }
            }
            Some(limit @ Value::Number(_)) => {
                out.insert(exclusive.into(), limit.clone());
            }
            _ => {}
        }
    }
}

/// 3.0's `nullable: true`: `"null"` added to `type` (and to `enum`), or, without a `type`, an
/// `anyOf` of the schema and `{"type": "null"}`.
fn nullable(mut out: Map<String, Value>) -> Map<String, Value> {
    let null = Value::String("null".into());
    if !out.contains_key("type") {
        if out.is_empty() {
            return out;
        }
        let mut wrapped = Map::new();
        wrapped.insert(
            "anyOf".into(),
            json!([Value::Object(out), {"type": "null"}]),
        );
        return wrapped;
    }
    match out.get_mut("type") {
        Some(Value::String(single)) if single != "null" => {
            let single = Value::String(std::mem::take(single));
            out.insert("type".into(), Value::Array(vec![single, null]));
        }
        Some(Value::Array(types)) if !types.contains(&null) => types.push(null),
        _ => {}
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translate(document: &Value, schema: &Value) -> (Value, Map<String, Value>, Vec<String>) {
        let mut translator = SchemaTranslator::new(document, Dialect::V3_0);
        let translated = translator.translate(schema, "'x'").unwrap();
        let (defs, warnings) = translator.finish();
        (translated, defs, warnings)
    }

    #[test]
    fn openapi_3_0_keywords_become_json_schema_2020_12() {
        let (schema, defs, warnings) = translate(
            &json!({}),
            &json!({
                "type": "object",
                "x-internal": true,
                "discriminator": {"propertyName": "kind"},
                "xml": {"name": "x"},
                "externalDocs": {"url": "https://x"},
                "properties": {
                    "name": {"type": "string", "nullable": true, "example": "rex", "readOnly": true},
                    "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true,
                            "maximum": 30, "exclusiveMaximum": false},
                    "kind": {"type": "string", "enum": ["a", "b"], "nullable": true},
                    "any": {"description": "anything", "nullable": true},
                    "x-not-an-extension": {"type": "string"}
                }
            }),
        );
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": ["string", "null"], "readOnly": true, "examples": ["rex"]},
                    "age": {"type": "integer", "exclusiveMinimum": 0, "maximum": 30},
                    "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "any": {"anyOf": [{"description": "anything"}, {"type": "null"}]},
                    "x-not-an-extension": {"type": "string"}
                }
            })
        );
        assert!(defs.is_empty());
        assert!(warnings.is_empty());
    }

    #[test]
    fn non_recursive_refs_are_inlined_and_recursive_ones_become_defs() {
        let document = json!({"components": {"schemas": {
            "Tag": {"type": "object", "properties": {"name": {"type": "string"}}},
            "Node": {"type": "object", "properties": {
                "tag": {"$ref": "#/components/schemas/Tag"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
            }}
        }}});
        let (schema, defs, _) = translate(
            &document,
            &json!({"type": "object", "properties": {
                "root": {"$ref": "#/components/schemas/Node"},
                "other": {"$ref": "#/components/schemas/Node"},
                "tag": {"$ref": "#/components/schemas/Tag"}
            }}),
        );
        assert_eq!(
            schema["properties"]["root"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(
            schema["properties"]["other"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(
            schema["properties"]["tag"]["properties"]["name"]["type"],
            "string"
        );
        assert_eq!(
            defs["Node"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(defs["Node"]["properties"]["tag"]["type"], "object");
        assert_eq!(defs.len(), 1);
    }

    #[test]
    fn a_pattern_the_gateway_cannot_compile_is_dropped_with_a_warning() {
        let (schema, _, warnings) = translate(
            &json!({}),
            &json!({"type": "object", "properties": {
                "bad": {"type": "string", "pattern": "(?<=a)b[", "minLength": 1},
                "good": {"type": "string", "pattern": "^[a-z]+$"}
            }}),
        );
        assert_eq!(
            schema["properties"]["bad"],
            json!({"type": "string", "minLength": 1})
        );
        assert_eq!(schema["properties"]["good"]["pattern"], "^[a-z]+$");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with(
                "dropped pattern '(?<=a)b[' of 'x.bad': the gateway's regex engine cannot compile it"
            ),
            "{warnings:?}"
        );
    }

    #[test]
    fn openapi_3_1_applies_a_refs_siblings_and_3_0_ignores_them() {
        let document = json!({"components": {"schemas": {"Id": {"type": "string"}}}});
        let schema = json!({"$ref": "#/components/schemas/Id", "description": "the id"});
        let mut translator = SchemaTranslator::new(&document, Dialect::V3_1);
        assert_eq!(
            translator.translate(&schema, "'id'").unwrap(),
            json!({"description": "the id", "allOf": [{"type": "string"}]})
        );
        let (translated, _, _) = translate(&document, &schema);
        assert_eq!(translated, json!({"type": "string"}));
    }

    #[test]
    fn external_and_dangling_refs_are_errors() {
        let document = json!({});
        let mut translator = SchemaTranslator::new(&document, Dialect::V3_0);
        assert!(matches!(
            translator.translate(&json!({"$ref": "common.yaml#/Pet"}), "'x'"),
            Err(SchemaError::Ref(RefError::External(_)))
        ));
        assert!(matches!(
            translator.translate(&json!({"$ref": "#/components/schemas/Nope"}), "'x'"),
            Err(SchemaError::Ref(RefError::Unresolved(_)))
        ));
    }
}
