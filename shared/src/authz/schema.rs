//! The Cedar schema of one route, generated from its tools' `inputSchema`s (CONTRACT Z2).
//!
//! Namespace `Gateway`: principal `Gateway::Caller` (`auth`, `subject`, `groups`, `scopes`,
//! `clientId`, and the token's other string claims as tags), resource `Gateway::Route`, one
//! action per tool (`Gateway::Action::"<tool>"`, each `in Gateway::Action::"call_tool"`), and a
//! context of `input` (the arguments) and `request` (`employeeNo`, `virtualEmployeeNo`,
//! `protocolVersion`).
//!
//! Types follow the Cedar team's `cedar-policy-mcp-schema-generator` (integer → `Long`, number →
//! `decimal`, string, boolean, object → record, array → set, optional properties optional), but
//! the generator itself is not used: its request side writes numbers with `format!("{:.4}")`,
//! rounding what Z5 refuses; it names a type `<tool>Input` after each tool, which is no Cedar
//! identifier for the names R5 allows (`get.user`, `get-user`); and it pins another release of
//! Cedar's core than `cedar-policy`, which would put two copies of it in every binary.

use serde_json::{Map, Value, json};

/// The namespace of every route's schema.
pub const NAMESPACE: &str = "Gateway";
/// The action every tool's action is a member of (CONTRACT Z2).
pub const CALL_TOOL: &str = "call_tool";
/// Nesting deeper than this in an `inputSchema` is left out of the Cedar type.
pub(super) const MAX_DEPTH: usize = 32;

/// The Cedar type of an argument, as the schema declares it and a request builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CedarType {
    /// `Long`: a JSON Schema `integer`.
    Long,
    /// `decimal`: a JSON Schema `number` (four decimal places at most, CONTRACT Z5).
    Decimal,
    /// `String`.
    String,
    /// `Boolean`.
    Boolean,
    /// A record: each property with its type and whether it is required.
    Record(Vec<Attribute>),
    /// A set of one element type: a JSON Schema `array` with `items`.
    Set(Box<CedarType>),
}

/// One attribute of a record type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// The property name, as the `inputSchema` spells it.
    pub name: String,
    /// Its type.
    pub ty: CedarType,
    /// Whether the `inputSchema` requires it.
    pub required: bool,
}

/// The Cedar type of a tool's `inputSchema`: a record of the properties whose type maps
/// (CONTRACT Z2). A property of another shape (no `type`, several types, `null`, `oneOf`,
/// `$ref`, an array without `items`) is left out: no policy can read it, and strict validation
/// refuses one that tries.
#[must_use]
pub fn input_type(schema: &Value) -> CedarType {
    object_type(schema, 0)
}

fn object_type(schema: &Value, depth: usize) -> CedarType {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut attributes = Vec::new();
    for (name, property) in properties.into_iter().flatten() {
        if let Some(ty) = property_type(property, depth + 1) {
            attributes.push(Attribute {
                name: name.clone(),
                ty,
                required: required.contains(&name.as_str()),
            });
        }
    }
    CedarType::Record(attributes)
}

fn property_type(schema: &Value, depth: usize) -> Option<CedarType> {
    if depth > MAX_DEPTH {
        return None;
    }
    match schema.get("type")?.as_str()? {
        "integer" => Some(CedarType::Long),
        "number" => Some(CedarType::Decimal),
        "string" => Some(CedarType::String),
        "boolean" => Some(CedarType::Boolean),
        "object" => Some(object_type(schema, depth)),
        "array" => {
            let items = schema.get("items")?;
            Some(CedarType::Set(Box::new(property_type(items, depth + 1)?)))
        }
        _ => None,
    }
}

impl CedarType {
    /// The type in Cedar's JSON schema format.
    fn to_json(&self) -> Value {
        match self {
            Self::Long => json!({"type": "Long"}),
            Self::Decimal => json!({"type": "Extension", "name": "decimal"}),
            Self::String => json!({"type": "String"}),
            Self::Boolean => json!({"type": "Boolean"}),
            Self::Set(element) => json!({"type": "Set", "element": element.to_json()}),
            Self::Record(attributes) => {
                let mut out = Map::new();
                for attribute in attributes {
                    let mut ty = attribute.ty.to_json();
                    if let Value::Object(ty) = &mut ty {
                        ty.insert("required".into(), Value::Bool(attribute.required));
                    }
                    out.insert(attribute.name.clone(), ty);
                }
                json!({"type": "Record", "attributes": out})
            }
        }
    }
}

/// The route's schema in Cedar's JSON schema format: `tools` are each tool's name and input
/// type, in manifest order (CONTRACT Z2).
#[must_use]
pub fn schema_json<'a>(tools: impl IntoIterator<Item = (&'a str, &'a CedarType)>) -> Value {
    let string = json!({"type": "String"});
    let strings = json!({"type": "Set", "element": {"type": "String"}});
    let optional = json!({"type": "String", "required": false});
    let request = json!({"type": "Record", "attributes": {
        "employeeNo": optional,
        "virtualEmployeeNo": optional,
        "protocolVersion": string,
    }});
    let mut actions = Map::new();
    actions.insert(CALL_TOOL.into(), json!({}));
    for (name, input) in tools {
        actions.insert(
            name.to_string(),
            json!({
                "memberOf": [{"id": CALL_TOOL}],
                "appliesTo": {
                    "principalTypes": ["Caller"],
                    "resourceTypes": ["Route"],
                    "context": {"type": "Record", "attributes": {
                        "input": input.to_json(),
                        "request": request,
                    }},
                },
            }),
        );
    }
    json!({(NAMESPACE): {
        "entityTypes": {
            "Caller": {
                "shape": {"type": "Record", "attributes": {
                    "auth": string,
                    "subject": string,
                    "groups": strings,
                    "scopes": strings,
                    "clientId": string,
                }},
                "tags": {"type": "String"},
            },
            "Route": {},
        },
        "actions": actions,
    }})
}

/// The `.cedarschema` text of a route whose tools are `tools` (name and `inputSchema`, in
/// manifest order; CONTRACT Z2, Z9): what `mcp-manifest policy schema` prints. Cedar's
/// `__cedar::` prefix of its built-in types is left out: the namespace declares no type of
/// those names, so `String` and `decimal` mean the built-ins.
///
/// # Errors
/// Cedar's message when it cannot write the schema (not expected for a generated one).
pub fn schema_text<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> Result<String, String> {
    let types: Vec<(&str, CedarType)> =
        tools.into_iter().map(|(n, s)| (n, input_type(s))).collect();
    let json = schema_json(types.iter().map(|(n, t)| (*n, t)));
    cedar_policy::SchemaFragment::from_json_value(json)
        .map_err(|e| e.to_string())?
        .to_cedarschema()
        .map(|text| text.replace("__cedar::", ""))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z2_input_types_follow_the_input_schema() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "amount": {"type": "number"}, "s": {"type": "string"},
            "b": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
            "o": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            "free": {}, "either": {"type": ["string", "null"]}, "list": {"type": "array"},
        }, "required": ["n", "free"]});
        let CedarType::Record(attributes) = input_type(&schema) else {
            panic!("a record")
        };
        let names: Vec<(&str, bool)> = attributes
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(
            names,
            [
                ("n", true),
                ("amount", false),
                ("s", false),
                ("b", false),
                ("tags", false),
                ("o", false)
            ]
        );
        assert_eq!(attributes[1].ty, CedarType::Decimal);
        assert_eq!(
            attributes[4].ty,
            CedarType::Set(Box::new(CedarType::String))
        );
    }
}
