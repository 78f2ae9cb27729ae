//! An operation's parameters (path-level merged with operation-level, the operation's winning on
//! the same name and `in`) as tool arguments: `path`, `query` and `header` arguments under their
//! own names (CONTRACT M2), with what the gateway cannot send refused.

use mcp_gateway::registry::RESERVED_HEADERS;
use serde_json::{Map, Value, json};

use super::refs;
use super::schema::SchemaTranslator;

/// Header parameters OpenAPI itself says are ignored: dropped from the tool, not the operation.
const IGNORED_HEADERS: [&str; 3] = ["accept", "content-type", "authorization"];

/// A parameter mapped to a tool argument.
#[derive(Debug)]
pub(crate) struct Argument {
    /// The argument's name: the parameter's.
    pub(crate) name: String,
    /// `path`, `query` or `header` (CONTRACT M2).
    pub(crate) location: &'static str,
    /// Whether the `inputSchema` requires it (a path parameter always).
    pub(crate) required: bool,
    /// Its property schema, in JSON Schema 2020-12.
    pub(crate) schema: Value,
}

/// The Parameter Objects of an operation: path item's first, the operation's replacing those
/// with the same name and `in`, `$ref`s followed.
///
/// # Errors
/// The skip reason for a parameter that is a reference that cannot be followed, has no `name`
/// or `in`, or is listed twice in one list.
pub(crate) fn merged<'a>(
    document: &'a Value,
    path_item: &'a Map<String, Value>,
    operation: &'a Map<String, Value>,
) -> Result<Vec<&'a Map<String, Value>>, String> {
    let mut parameters: Vec<&Map<String, Value>> = Vec::new();
    let lists = [path_item.get("parameters"), operation.get("parameters")];
    for list in lists.into_iter().flatten().filter_map(Value::as_array) {
        // The operation's replace the path item's; within one list, OpenAPI forbids repeats.
        let mut listed: Vec<&Map<String, Value>> = Vec::new();
        for parameter in list {
            let parameter = refs::follow(document, parameter, refs::Kind::Parameter)
                .map_err(|e| format!("parameter {e}"))?
                .as_object()
                .filter(|p| {
                    p.get("name").is_some_and(Value::is_string)
                        && p.get("in").is_some_and(Value::is_string)
                })
                .ok_or("a parameter has no name or no 'in'")?;
            let same = |p: &&Map<String, Value>| {
                p.get("name") == parameter.get("name") && p.get("in") == parameter.get("in")
            };
            if listed.iter().any(same) {
                let text = |field: &str| parameter.get(field).and_then(Value::as_str);
                return Err(format!(
                    "{} parameter '{}' is listed twice",
                    text("in").unwrap_or_default(),
                    text("name").unwrap_or_default()
                ));
            }
            listed.push(parameter);
            match parameters.iter().position(same) {
                Some(i) => parameters[i] = parameter,
                None => parameters.push(parameter),
            }
        }
    }
    Ok(parameters)
}

/// The tool arguments of `parameters`; `warnings` gets the ignored header parameters and the
/// serialization styles the gateway does not follow.
///
/// # Errors
/// The skip reason of the first parameter the gateway cannot send.
pub(crate) fn arguments(
    parameters: &[&Map<String, Value>],
    translator: &mut SchemaTranslator<'_>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Argument>, String> {
    let mut arguments: Vec<Argument> = Vec::new();
    for parameter in parameters {
        let name = parameter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let location = parameter
            .get("in")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let required = parameter.get("required") == Some(&Value::Bool(true));
        let location = match location {
            "path" => "path",
            "query" => "query",
            "header" => {
                let lower = name.to_ascii_lowercase();
                if IGNORED_HEADERS.contains(&lower.as_str()) {
                    warnings.push(format!(
                        "header parameter '{name}' ignored: OpenAPI ignores Accept, Content-Type and Authorization header parameters"
                    ));
                    continue;
                }
                if RESERVED_HEADERS.contains(&lower.as_str()) {
                    return Err(format!(
                        "header parameter '{name}' is a header the gateway reserves"
                    ));
                }
                if !is_token(name) {
                    return Err(format!(
                        "header parameter '{name}' is not an HTTP header name"
                    ));
                }
                "header"
            }
            "cookie" => {
                let kind = if required { "required" } else { "optional" };
                return Err(format!(
                    "cookie parameter '{name}' ({kind}) cannot be sent: the gateway sends no cookies"
                ));
            }
            other => {
                return Err(format!(
                    "parameter '{name}' is in '{other}', not path, query, header or cookie"
                ));
            }
        };
        if let Some(other) = arguments.iter().find(|a| {
            a.name == name
                || (a.location == "header"
                    && location == "header"
                    && a.name.eq_ignore_ascii_case(name))
        }) {
            return Err(format!(
                "parameters '{}' ({}) and '{name}' ({location}) would be one argument",
                other.name, other.location
            ));
        }
        let schema = argument_schema(parameter, name, translator)?;
        check_shape(translator.target(&schema), name, location)?;
        if let Some(warning) = style_warning(parameter, name, location, translator.target(&schema))
        {
            warnings.push(warning);
        }
        arguments.push(Argument {
            name: name.to_string(),
            location,
            required: required || location == "path",
            schema,
        });
    }
    Ok(arguments)
}

/// The parameter's schema (or its `content`'s media type schema) translated, with the
/// parameter's `description`, `example` and `deprecated` when the schema lacks them.
fn argument_schema(
    parameter: &Map<String, Value>,
    name: &str,
    translator: &mut SchemaTranslator<'_>,
) -> Result<Value, String> {
    let schema = parameter.get("schema").or_else(|| {
        parameter
            .get("content")
            .and_then(Value::as_object)
            .and_then(|content| content.values().next())
            .and_then(|media| media.get("schema"))
    });
    let mut schema = match schema {
        Some(schema) => translator
            .translate(schema, &format!("'{name}'"))
            .map_err(|e| e.reason(&format!("parameter '{name}'")))?,
        None => json!({"type": "string"}),
    };
    if let Value::Object(object) = &mut schema {
        for (from, to) in [("description", "description"), ("deprecated", "deprecated")] {
            if let Some(value) = parameter.get(from)
                && !object.contains_key(to)
            {
                object.insert(to.into(), value.clone());
            }
        }
        if let Some(example) = parameter.get("example")
            && !object.contains_key("examples")
        {
            object.insert("examples".into(), Value::Array(vec![example.clone()]));
        }
    }
    Ok(schema)
}

/// The JSON Schema types a schema names (none when it names none).
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// CONTRACT M2: a path argument is no object or array, a query or header argument no object.
fn check_shape(schema: &Value, name: &str, location: &str) -> Result<(), String> {
    let types = types(schema);
    let only = |kind: &str| !types.is_empty() && types.iter().all(|t| *t == kind || *t == "null");
    if only("object") {
        return Err(format!(
            "{location} parameter '{name}' is an object, which the gateway cannot send in the {location}"
        ));
    }
    if location == "path" && only("array") {
        return Err(format!(
            "path parameter '{name}' is an array, which the gateway cannot send in the path"
        ));
    }
    Ok(())
}

/// A warning when the parameter's `style`/`explode` differs from what the gateway sends (CONTRACT
/// X9: `simple` in the path and headers, `form` with `explode` in the query).
fn style_warning(
    parameter: &Map<String, Value>,
    name: &str,
    location: &str,
    schema: &Value,
) -> Option<String> {
    let style = parameter.get("style").and_then(Value::as_str);
    let explode = parameter.get("explode").and_then(Value::as_bool);
    let sent = if location == "query" {
        "form"
    } else {
        "simple"
    };
    if style.is_some_and(|s| s != sent) {
        return Some(format!(
            "{location} parameter '{name}' has style '{}': the gateway sends style '{sent}'",
            style.unwrap_or_default()
        ));
    }
    if location == "query" && explode == Some(false) && types(schema).contains(&"array") {
        return Some(format!(
            "query parameter '{name}' has explode false: the gateway sends one '{name}=' pair per item"
        ));
    }
    None
}

/// RFC 9110 `token`.
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}
