//! An operation's JSON request body as tool arguments (CONTRACT M2): the members of an object
//! body as `body` arguments under their own names, or any other body as one `body` argument
//! that is the whole body (`wholeBody`).

use serde_json::{Map, Value, json};

use super::refs;
use super::schema::SchemaTranslator;

/// The keywords an object body may have and still be spread into arguments: its members, and
/// annotations that say nothing about which members it admits.
const SPREADABLE: [&str; 12] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// How a request body becomes arguments.
#[derive(Debug)]
pub(crate) enum Body {
    /// No body.
    None,
    /// The members of an object body, each a `body` argument.
    Members {
        /// The member schemas by name.
        properties: Map<String, Value>,
        /// The members the `inputSchema` requires.
        required: Vec<String>,
        /// Whether the body admits no other members (`additionalProperties: false`).
        closed: bool,
    },
    /// One `wholeBody` argument.
    Whole {
        /// The argument's name: `body`, unless a parameter has it.
        name: String,
        /// The body's schema.
        schema: Value,
        /// Whether the `inputSchema` requires it (`requestBody.required`).
        required: bool,
    },
}

/// The body arguments of `operation`; `taken` are the parameter arguments' names.
///
/// # Errors
/// The skip reason: a body with no JSON media type, or a reference that cannot be followed.
pub(crate) fn body(
    document: &Value,
    operation: &Map<String, Value>,
    method: &str,
    taken: &[&str],
    translator: &mut SchemaTranslator<'_>,
    warnings: &mut Vec<String>,
) -> Result<Body, String> {
    let Some(request_body) = operation.get("requestBody") else {
        return Ok(Body::None);
    };
    let request_body = refs::follow(document, request_body, refs::Kind::RequestBody)
        .map_err(|e| format!("request body {e}"))?;
    let content = request_body.get("content").and_then(Value::as_object);
    let Some(content) = content.filter(|c| !c.is_empty()) else {
        return Ok(Body::None);
    };
    if matches!(method, "GET" | "HEAD") {
        warnings.push(format!(
            "request body ignored: a {method} request has no body"
        ));
        return Ok(Body::None);
    }
    let Some(media) = json_media_type(content) else {
        let types: Vec<&str> = content.keys().map(String::as_str).collect();
        return Err(format!("request body is {}, not JSON", types.join(" or ")));
    };
    let schema = match media.get("schema") {
        Some(schema) => translator
            .translate(schema, "the request body")
            .map_err(|e| e.reason("request body"))?,
        None => json!({}),
    };
    let required = request_body.get("required") == Some(&Value::Bool(true));
    let target = translator.target(&schema);
    if let Some(members) = spreadable_members(target, taken) {
        let required_members = if required {
            target
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|name| members.contains_key(*name))
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        return Ok(Body::Members {
            properties: members.clone(),
            required: required_members,
            closed: target.get("additionalProperties") == Some(&Value::Bool(false)),
        });
    }
    let mut schema = schema;
    if let (Value::Object(object), Some(description)) =
        (&mut schema, request_body.get("description"))
        && !object.contains_key("description")
    {
        object.insert("description".into(), description.clone());
    }
    let name = ["body", "requestBody", "body_"]
        .into_iter()
        .find(|name| !taken.contains(name))
        .unwrap_or("requestBody_");
    Ok(Body::Whole {
        name: name.to_string(),
        schema,
        required,
    })
}

/// The body's JSON media type: `application/json` first, else the first `*+json` (parameters
/// such as `; charset=utf-8` ignored).
pub(crate) fn json_media_type(content: &Map<String, Value>) -> Option<&Value> {
    let essence = |media_type: &str| {
        media_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    };
    content
        .iter()
        .find(|(media_type, _)| essence(media_type) == "application/json")
        .or_else(|| {
            content
                .iter()
                .find(|(media_type, _)| essence(media_type).ends_with("+json"))
        })
        .map(|(_, media)| media)
}

/// The members of an object body that can be spread into arguments: an object schema with
/// `properties` and nothing that constrains members beyond them, none of whose names a
/// parameter already has.
fn spreadable_members<'s>(schema: &'s Value, taken: &[&str]) -> Option<&'s Map<String, Value>> {
    let object = schema.as_object()?;
    let is_object = match object.get("type") {
        Some(Value::String(t)) => t == "object",
        None => true,
        Some(_) => false,
    };
    let plain = object.keys().all(|key| SPREADABLE.contains(&key.as_str()))
        && object
            .get("additionalProperties")
            .is_none_or(Value::is_boolean);
    let members = object.get("properties").and_then(Value::as_object)?;
    let collides = members.keys().any(|name| taken.contains(&name.as_str()));
    (is_object && plain && !members.is_empty() && !collides).then_some(members)
}

#[cfg(test)]
mod tests {
    use super::super::document::Dialect;
    use super::*;

    fn map(document: &Value, operation: &Value, taken: &[&str]) -> Result<Body, String> {
        let mut translator = SchemaTranslator::new(document, Dialect::V3_0);
        let mut warnings = Vec::new();
        body(
            document,
            operation.as_object().unwrap(),
            "POST",
            taken,
            &mut translator,
            &mut warnings,
        )
    }

    #[test]
    fn an_object_body_is_spread_into_members() {
        let document = json!({"components": {"requestBodies": {"Pet": {"required": true, "content": {
            "application/json": {"schema": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}}}}}}});
        let Ok(Body::Members {
            properties,
            required,
            closed,
        }) = map(
            &document,
            &json!({"requestBody": {"$ref": "#/components/requestBodies/Pet"}}),
            &["id"],
        )
        else {
            panic!("members expected");
        };
        assert_eq!(properties.keys().collect::<Vec<_>>(), ["name", "age"]);
        assert_eq!(required, ["name"]);
        assert!(!closed);
    }

    #[test]
    fn a_member_that_collides_with_a_parameter_makes_the_body_whole() {
        let operation = json!({"requestBody": {"content": {"application/json; charset=utf-8": {
            "schema": {"type": "object", "properties": {"id": {"type": "string"}}}}}}});
        let Ok(Body::Whole {
            name,
            schema,
            required,
        }) = map(&json!({}), &operation, &["id"])
        else {
            panic!("whole body expected");
        };
        assert_eq!(name, "body");
        assert_eq!(schema["properties"]["id"]["type"], "string");
        assert!(!required);
        let Ok(Body::Whole { name, .. }) = map(&json!({}), &operation, &["id", "body"]) else {
            panic!("whole body expected");
        };
        assert_eq!(name, "requestBody");
    }

    #[test]
    fn a_non_object_body_is_whole_and_required_when_the_request_body_is() {
        let operation = json!({"requestBody": {"required": true, "description": "the pets",
            "content": {"application/vnd.api+json": {"schema": {"type": "array", "items": {"type": "string"}}}}}});
        let Ok(Body::Whole {
            schema, required, ..
        }) = map(&json!({}), &operation, &[])
        else {
            panic!("whole body expected");
        };
        assert!(required);
        assert_eq!(schema["description"], "the pets");
    }

    #[test]
    fn a_form_body_is_refused() {
        let operation =
            json!({"requestBody": {"content": {"multipart/form-data": {"schema": {}}}}});
        assert_eq!(
            map(&json!({}), &operation, &[]).unwrap_err(),
            "request body is multipart/form-data, not JSON"
        );
    }
}
