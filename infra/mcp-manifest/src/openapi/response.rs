//! An operation's success response as the tool's `outputSchema` (CONTRACT M3): the JSON object
//! schema of its `200` response (else `201`, else its lowest `2xx`, else `2XX`), translated as
//! the input schemas are, its `writeOnly` properties left out. The gateway checks every
//! successful answer against an `outputSchema` and makes any other answer an error, so it is
//! written only when it is safe to: never for a `HEAD` operation, a response that is no JSON
//! object, an operation whose other `2xx` responses say something else, nor one the gateway's
//! loader would refuse (then with a warning).

use mcp_gateway::registry::LazyValidator;
use serde_json::{Map, Value, json};

use super::operation::{Context, Operation};
use super::refs;
use super::request_body::json_media_type;
use super::schema::SchemaTranslator;

/// A tool's `outputSchema` and a lower bound of the bytes it takes as JSON.
#[derive(Debug)]
pub(crate) struct Output {
    /// The schema.
    pub(crate) schema: Value,
    /// A lower bound of its bytes.
    pub(crate) bytes: usize,
}

/// The `outputSchema` of `operation`, if it has one the gateway can check answers against;
/// `warnings` gets why a response schema was left out when it is not for its kind.
pub(crate) fn output_schema(
    context: &Context<'_>,
    operation: &Operation<'_>,
    warnings: &mut Vec<String>,
) -> Option<Output> {
    if operation.method == "HEAD" {
        return None;
    }
    let responses = operation.object.get("responses")?.as_object()?;
    let successes = successes(responses);
    let (code, response) = chosen(&successes)?;
    let schema = match json_schema(context.document, response) {
        Ok(schema) => schema?,
        Err(error) => {
            warnings.push(format!("no outputSchema: the {code} response {error}"));
            return None;
        }
    };
    if context.output_work.get() > context.max_work {
        warnings.push(format!(
            "no outputSchema: the response schemas take more than {} nodes in all",
            context.max_work
        ));
        return None;
    }
    let mut translator = SchemaTranslator::new(context.document, context.dialect)
        .with_max_bytes(context.max_bytes)
        .leaving_out("writeOnly");
    let at = format!("the {code} response");
    let translated = translator.translate(schema, &at);
    context
        .output_work
        .set(context.output_work.get().saturating_add(translator.nodes()));
    let translated = match translated {
        Ok(translated) => translated,
        Err(error) => {
            warnings.push(format!("no outputSchema: {}", error.reason(&at)));
            return None;
        }
    };
    match shape(translator.target(&translated)) {
        Shape::Object => {}
        Shape::NotOnlyObject => {
            warnings.push(format!(
                "no outputSchema: the {code} response admits other types beside an object (an outputSchema is an object schema)"
            ));
            return None;
        }
        Shape::Other => return None,
    }
    if let Some(other) = differing(context.document, &successes, code, schema) {
        warnings.push(format!(
            "no outputSchema: its {code} and {other} responses differ, and every successful answer would have to match it"
        ));
        return None;
    }
    let bytes = translator.bytes();
    let (defs, schema_warnings) = translator.finish();
    let schema = object_schema(translated, defs);
    if let Err(error) = LazyValidator::check(&schema) {
        warnings.push(format!(
            "no outputSchema: the {code} response schema does not compile: {error}"
        ));
        return None;
    }
    warnings.extend(schema_warnings);
    Some(Output { schema, bytes })
}

/// The success responses: `2xx` status codes and the `2XX` range, in document order.
fn successes(responses: &Map<String, Value>) -> Vec<(&str, &Value)> {
    responses
        .iter()
        .filter(|(code, _)| {
            code.len() == 3
                && code.starts_with('2')
                && (code[1..].bytes().all(|b| b.is_ascii_digit())
                    || code.eq_ignore_ascii_case("2XX"))
        })
        .map(|(code, response)| (code.as_str(), response))
        .collect()
}

/// The response the `outputSchema` describes: `200`, else `201`, else the lowest `2xx`, else
/// `2XX`.
fn chosen<'a>(successes: &[(&'a str, &'a Value)]) -> Option<(&'a str, &'a Value)> {
    let find = |code: &str| successes.iter().find(|(c, _)| *c == code).copied();
    find("200")
        .or_else(|| find("201"))
        .or_else(|| {
            successes
                .iter()
                .filter(|(code, _)| code.bytes().all(|b| b.is_ascii_digit()))
                .min_by_key(|(code, _)| *code)
                .copied()
        })
        .or_else(|| successes.first().copied())
}

/// The schema of a response's JSON body: `None` for a response without one (no content, or
/// none of JSON), `{}` for JSON content without a schema.
///
/// # Errors
/// The response is a `$ref` that cannot be followed.
fn json_schema<'a>(document: &'a Value, response: &'a Value) -> Result<Option<&'a Value>, String> {
    static ANY: Value = Value::Bool(true);
    let response =
        refs::follow(document, response, refs::Kind::Response).map_err(|e| e.to_string())?;
    let content = response.get("content").and_then(Value::as_object);
    Ok(content
        .and_then(json_media_type)
        .map(|media| media.get("schema").unwrap_or(&ANY)))
}

/// What a translated response schema admits at its root.
enum Shape {
    /// An object schema: `type: object`, or `properties` without a `type`.
    Object,
    /// A `type` list with `object` and more (a 3.0 `nullable` object).
    NotOnlyObject,
    /// Anything else: an array, a scalar, a schema that does not say.
    Other,
}

fn shape(schema: &Value) -> Shape {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "object" => Shape::Object,
        None if schema.get("properties").is_some_and(Value::is_object) => Shape::Object,
        Some(Value::Array(kinds)) if kinds.contains(&json!("object")) => Shape::NotOnlyObject,
        _ => Shape::Other,
    }
}

/// Another success response whose JSON body schema is not the chosen one's (or that has no JSON
/// body, such as a `204`): the gateway would refuse its answers.
fn differing<'a>(
    document: &Value,
    successes: &[(&'a str, &Value)],
    code: &str,
    schema: &Value,
) -> Option<&'a str> {
    successes
        .iter()
        .filter(|(other, _)| *other != code)
        .find(|(_, response)| json_schema(document, response).ok().flatten() != Some(schema))
        .map(|(other, _)| *other)
}

/// The `outputSchema`: the translated object schema with `"type": "object"` first (MCP's
/// `Tool.outputSchema` requires it) and the recursive references' `$defs`.
fn object_schema(translated: Value, defs: Map<String, Value>) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    if let Value::Object(translated) = translated {
        schema.extend(translated);
    }
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(schema)
}
