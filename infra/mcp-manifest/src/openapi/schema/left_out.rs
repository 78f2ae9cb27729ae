//! The properties a schema's direction leaves out (CONTRACT M3): `readOnly` ones from what a
//! request sends, `writeOnly` ones from what a response holds, in every object schema the
//! translation writes (nested objects and inlined references included).

use serde_json::{Map, Value};

use super::super::document::Dialect;
use super::super::refs::{self, Kind};
use super::SchemaTranslator;

/// The most `$ref` hops followed to tell whether a property is marked.
const MAX_HOPS: usize = 32;

impl SchemaTranslator<'_> {
    /// The same, leaving out the properties marked `keyword: true` (`readOnly` for a request's
    /// schemas, `writeOnly` for a response's).
    pub(crate) fn leaving_out(mut self, keyword: &'static str) -> Self {
        self.left_out = Some(keyword);
        self
    }

    /// Whether the property schema `schema` is marked with the keyword left out: on itself or,
    /// through its `$ref`s, on the schema it names (3.0 ignores a `$ref`'s siblings, as the
    /// translation does).
    pub(super) fn is_left_out(&self, schema: &Value) -> bool {
        let Some(keyword) = self.left_out else {
            return false;
        };
        let mut current = schema;
        for _ in 0..MAX_HOPS {
            let reference = current.get("$ref");
            let siblings_count = reference.is_none() || self.dialect == Dialect::V3_1;
            if siblings_count && current.get(keyword) == Some(&Value::Bool(true)) {
                return true;
            }
            let Some(Value::String(reference)) = reference else {
                return false;
            };
            match refs::resolve(self.document, reference, Kind::Schema) {
                Ok(target) => current = target,
                // The translation reports the reference.
                Err(_) => return false,
            }
        }
        false
    }

    /// `out`'s `required` without the properties of `object` that are left out.
    pub(super) fn unrequire_left_out(
        &self,
        object: &Map<String, Value>,
        out: &mut Map<String, Value>,
    ) {
        if self.left_out.is_none() {
            return;
        }
        let Some(properties) = object.get("properties").and_then(Value::as_object) else {
            return;
        };
        let left_out: Vec<&String> = properties
            .iter()
            .filter(|(_, schema)| self.is_left_out(schema))
            .map(|(name, _)| name)
            .collect();
        if left_out.is_empty() {
            return;
        }
        if let Some(Value::Array(required)) = out.get_mut("required") {
            required.retain(|name| {
                name.as_str()
                    .is_none_or(|name| !left_out.iter().any(|l| *l == name))
            });
        }
    }
}
