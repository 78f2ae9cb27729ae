//! A schema `$ref` translated: a non-recursive one inlined (its translation reused at each
//! further use), a recursive one an entry of the root's `$defs`, a cycle that never descends
//! refused; 3.1 applies the reference's siblings.

use serde_json::{Map, Value};

use super::super::document::Dialect;
use super::super::refs::{self, Kind, RefError};
use super::{SchemaError, SchemaTranslator, def_ref};

impl SchemaTranslator<'_> {
    pub(super) fn reference(
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
    pub(super) fn def_name(&mut self, reference: &str) -> String {
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
}
