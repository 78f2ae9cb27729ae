//! A tool's JSON Schema validator, compiled the first time a call needs it, once per instance
//! (CONTRACT R5, X2).
//!
//! A cold start pays for what the instance serves, not for the size of its manifest: the load
//! proves a schema valid by reading its text (`compile::schema_check`), or, for a tool checked
//! in full, checks it against its meta-schema ([`LazyValidator::check`]); it compiles at load
//! only a schema whose validity the compiler alone decides. An invalid schema is therefore a
//! load failure with the message a compilation gives, never a surprise at the first call.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use serde_json::Value;
use serde_json::value::RawValue;

/// Keywords whose compilation can fail although the schema passes its meta-schema: references
/// that may not resolve, regular expressions that may not compile, and anything that changes
/// the draft or the base URI. A schema that has any of them anywhere is compiled at load.
const COMPILED_AT_LOAD: [&str; 10] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "pattern",
    "patternProperties",
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
];

/// A JSON Schema checked at load and compiled on first use (CONTRACT R5, X2).
pub struct LazyValidator {
    /// The schema's JSON text (compact as serde_json writes it, or the manifest's own), parsed
    /// again only to compile it.
    schema: SchemaText,
    /// Boxed: a route keeps one validator per tool for its life and compiles few of them (an
    /// empty cell of 16 bytes against 64).
    compiled: OnceLock<Box<jsonschema::Validator>>,
    compilations: AtomicU32,
}

/// Where a [`LazyValidator`] reads its schema's text when it compiles it.
pub(crate) enum SchemaText {
    /// The schema's own text.
    Own(Box<RawValue>),
    /// The schema's text in the manifest, which the instance keeps (its `tools/list` entry
    /// writes the same text): no copy of the schema is made.
    Manifest(Bytes),
}

impl SchemaText {
    fn len(&self) -> usize {
        match self {
            Self::Own(text) => text.get().len(),
            Self::Manifest(text) => text.len(),
        }
    }

    /// The schema, parsed.
    pub(crate) fn parse(&self) -> Result<Value, String> {
        match self {
            Self::Own(text) => serde_json::from_str(text.get()).map_err(|e| e.to_string()),
            Self::Manifest(text) => serde_json::from_slice(text).map_err(|e| e.to_string()),
        }
    }
}

impl std::fmt::Debug for LazyValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyValidator")
            .field("schema_bytes", &self.schema.len())
            .field("compiled", &self.is_compiled())
            .finish_non_exhaustive()
    }
}

impl LazyValidator {
    /// Checks `schema` as a load does (CONTRACT R5): against its meta-schema, and by compiling
    /// it when it has a keyword whose compilation can fail beyond that check (`$ref`,
    /// `pattern`, `$schema` and the like).
    ///
    /// # Errors
    /// The text of the error a compilation of `schema` gives (`jsonschema::validator_for`),
    /// whichever check found it.
    pub fn check(schema: &Value) -> Result<Self, String> {
        let compiled = OnceLock::new();
        let mut compilations = 0;
        if has_keyword(schema, &COMPILED_AT_LOAD) {
            let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
            let _ = compiled.set(Box::new(validator));
            compilations = 1;
        } else if jsonschema::meta::validate(schema).is_err() {
            // The compiler's own message, so that a manifest reads the same whichever check
            // refused it.
            return Err(jsonschema::validator_for(schema)
                .err()
                .map_or_else(|| "is not a valid JSON Schema".into(), |e| e.to_string()));
        }
        let schema = serde_json::value::to_raw_value(schema).map_err(|e| e.to_string())?;
        Ok(Self {
            schema: SchemaText::Own(schema),
            compiled,
            compilations: AtomicU32::new(compilations),
        })
    }

    /// A schema the load proved valid without compiling it (`compiled`: `None`), or compiled
    /// at load (`Some`); read from `schema` when it is compiled on first use.
    pub(crate) fn checked(schema: SchemaText, compiled: Option<jsonschema::Validator>) -> Self {
        let compilations = u32::from(compiled.is_some());
        let cell = OnceLock::new();
        if let Some(validator) = compiled {
            let _ = cell.set(Box::new(validator));
        }
        Self {
            schema,
            compiled: cell,
            compilations: AtomicU32::new(compilations),
        }
    }

    /// The compiled validator: compiled by the first caller, which concurrent first callers
    /// wait for; never compiled twice.
    pub fn get(&self) -> &jsonschema::Validator {
        self.compiled.get_or_init(|| {
            self.compilations.fetch_add(1, Ordering::Relaxed);
            let compiled = self
                .schema
                .parse()
                .and_then(|schema| jsonschema::validator_for(&schema).map_err(|e| e.to_string()));
            Box::new(compiled.unwrap_or_else(|error| {
                // Unreachable when the load check holds: the schema passed its meta-schema and
                // has no keyword whose compilation can fail beyond it. Fail closed.
                tracing::error!(%error, "a schema checked at load did not compile; every value is refused");
                jsonschema::validator_for(&Value::Bool(false))
                    .unwrap_or_else(|_| unreachable!("the false schema compiles"))
            }))
        })
    }

    /// Whether the validator is compiled (at load, or by a call).
    #[must_use]
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// How many times this schema was compiled: 0 or 1, whatever the number of calls.
    #[must_use]
    pub fn compilations(&self) -> u32 {
        self.compilations.load(Ordering::Relaxed)
    }
}

/// Whether any object in `value` has a key of `keywords` (a property named like one counts
/// too: that only moves the compilation to the load).
fn has_keyword(value: &Value, keywords: &[&str]) -> bool {
    match value {
        Value::Object(object) => object
            .iter()
            .any(|(key, value)| keywords.contains(&key.as_str()) || has_keyword(value, keywords)),
        Value::Array(items) => items.iter().any(|item| has_keyword(item, keywords)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn r5_a_plain_schema_is_checked_at_load_and_compiled_on_first_use() {
        let lazy = LazyValidator::check(&json!({
            "type": "object",
            "properties": {"q": {"type": "string", "minLength": 1}},
            "required": ["q"]
        }))
        .unwrap();
        assert!(!lazy.is_compiled());
        assert_eq!(lazy.compilations(), 0);
        assert!(lazy.get().is_valid(&json!({"q": "x"})));
        assert!(!lazy.get().is_valid(&json!({"q": ""})));
        assert_eq!(lazy.compilations(), 1);
    }

    #[test]
    fn r5_a_schema_with_references_or_patterns_is_compiled_at_load() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        ] {
            let lazy = LazyValidator::check(&schema).unwrap();
            assert!(lazy.is_compiled(), "{schema}");
            assert_eq!(lazy.compilations(), 1);
        }
    }

    #[test]
    fn x2_thirty_two_concurrent_first_uses_compile_once_and_agree() {
        let lazy = LazyValidator::check(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 3}}
        }))
        .unwrap();
        let barrier = std::sync::Barrier::new(32);
        std::thread::scope(|scope| {
            for i in 0..32 {
                let (lazy, barrier) = (&lazy, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    assert_eq!(lazy.get().is_valid(&json!({"n": i})), i <= 3);
                });
            }
        });
        assert_eq!(lazy.compilations(), 1);
    }

    #[test]
    fn r5_invalid_schemas_fail_the_check_with_the_compilers_message() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "nope"}}}),
            json!({"type": "object", "properties": {"a": {"minLength": -1}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}}),
        ] {
            let expected = jsonschema::validator_for(&schema).unwrap_err().to_string();
            assert_eq!(
                LazyValidator::check(&schema).unwrap_err(),
                expected,
                "{schema}"
            );
        }
    }
}
