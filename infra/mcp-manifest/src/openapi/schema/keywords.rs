//! Keyword-level helpers of the schema translation: `type`, `required` and `pattern` checked
//! (dropped with a warning where the gateway would refuse them), 3.0's bounds and `nullable`
//! rewritten, and the size of copied values.

use mcp_gateway::registry::LazyValidator;
use serde_json::{Map, Value, json};

use super::{SchemaTranslator, TYPES};

impl SchemaTranslator<'_> {
    /// Whether the gateway compiles `pattern` (as a load does: CONTRACT R5); warns when not.
    pub(super) fn pattern_compiles(&mut self, pattern: &str, at: &str) -> bool {
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
    pub(super) fn types(&mut self, value: &Value, at: &str) -> Option<Value> {
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
    pub(super) fn required_names(&mut self, value: &Value, at: &str) -> Option<Value> {
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
pub(super) fn json_size(value: &Value) -> (usize, usize) {
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
pub(super) fn def_ref(name: &str) -> Value {
    json!({"$ref": format!("#/$defs/{name}")})
}

/// How warnings name a property of `at`.
pub(super) fn child(at: &str, name: &str) -> String {
    match at.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')) {
        Some(parent) => format!("'{parent}.{name}'"),
        None => format!("'{name}'"),
    }
}

/// 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` (with `minimum`/`maximum`) in
/// 2020-12's numeric form; 3.1's numeric form kept.
pub(super) fn exclusive_bounds(object: &Map<String, Value>, out: &mut Map<String, Value>) {
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
pub(super) fn nullable(mut out: Map<String, Value>) -> Map<String, Value> {
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
