//! One OpenAPI operation as one REST-shaped MCP tool (CONTRACT M2, M3): its `inputSchema` from
//! the parameters and the JSON request body, its `outputSchema` from the success response, its
//! `_meta` (endpoint template, method, argument locations, the credential of its security
//! requirement), its annotations; or the reason it is skipped.

use std::cell::Cell;

use mcp_gateway::registry::LazyValidator;
use serde_json::{Map, Value, json};
use url::Url;

use super::credentials::Bindings;
use super::document::Dialect;
use super::parameters::{self, Argument};
use super::request_body::{self, Body};
use super::response;
use super::schema::SchemaTranslator;
use super::security::{self, Security};
use super::servers::{self, ServerError};

/// The methods the gateway calls (CONTRACT M2).
pub(crate) const GATEWAY_METHODS: [&str; 6] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/// What every operation of one import shares.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    /// The whole document, for `$ref`s and the document's `servers` and `security`.
    pub(crate) document: &'a Value,
    /// Its schema dialect.
    pub(crate) dialect: Dialect,
    /// `info.version`, each tool's `_meta.version`.
    pub(crate) version: &'a str,
    /// `--base-url`.
    pub(crate) base_url: Option<&'a Url>,
    /// `--skip-secured`.
    pub(crate) skip_secured: bool,
    /// The security schemes bound with `--credential`.
    pub(crate) bindings: &'a Bindings,
    /// `--max-bytes`: also the byte budget of one operation's schemas.
    pub(crate) max_bytes: usize,
    /// The schema nodes translated so far, skipped operations' included (the import's work).
    pub(crate) work: Cell<usize>,
    /// The response schema nodes translated so far, for `outputSchema`s.
    pub(crate) output_work: Cell<usize>,
    /// The most nodes the operations' schemas may take in all (and their response schemas
    /// apart).
    pub(crate) max_work: usize,
}

/// An operation of the document: where it is and what it says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operation<'a> {
    /// The path template, e.g. `/pet/{petId}`.
    pub(crate) path: &'a str,
    /// The HTTP method, upper case.
    pub(crate) method: &'a str,
    /// The Path Item Object.
    pub(crate) path_item: &'a Map<String, Value>,
    /// The Operation Object.
    pub(crate) object: &'a Map<String, Value>,
}

impl<'a> Operation<'a> {
    /// The operation's `operationId`.
    pub(crate) fn id(&self) -> Option<&'a str> {
        self.object.get("operationId").and_then(Value::as_str)
    }

    /// How skip and warning lines name it: `GET /pet/{petId} (getPetById)`.
    pub(crate) fn label(&self) -> String {
        match self.id() {
            Some(id) => format!("{} {} ({id})", self.method, self.path),
            None => format!("{} {}", self.method, self.path),
        }
    }
}

/// Why an operation gives no tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Skip {
    /// It cannot be mapped: the reason, for its `skipped` line.
    Reason(String),
    /// Its server URL is relative or missing and no `--base-url` was given.
    NeedsBaseUrl(String),
}

impl From<String> for Skip {
    fn from(reason: String) -> Self {
        Self::Reason(reason)
    }
}

/// A mapped operation: its tool (without a name yet) and its warnings.
#[derive(Debug)]
pub(crate) struct Mapped {
    /// The tool's fields but `name`, in manifest order once the name is put first.
    pub(crate) tool: Map<String, Value>,
    /// Warnings for this operation (without its label).
    pub(crate) warnings: Vec<String>,
    /// A lower bound of the bytes its input schema takes as JSON.
    pub(crate) schema_bytes: usize,
    /// A lower bound of the bytes its `outputSchema` takes as JSON (0 without one).
    pub(crate) output_bytes: usize,
}

/// Maps one operation to a tool.
///
/// # Errors
/// Why it is skipped.
pub(crate) fn map(context: &Context<'_>, operation: &Operation<'_>) -> Result<Mapped, Skip> {
    let method = operation.method;
    if !GATEWAY_METHODS.contains(&method) {
        return Err(Skip::Reason(format!(
            "method {method} is not one the gateway calls (GET, HEAD, POST, PUT, PATCH, DELETE)"
        )));
    }
    let server = servers::server_url(
        context.document,
        operation.path_item,
        operation.object,
        context.base_url,
    )
    .map_err(|error| match error {
        ServerError::NeedsBaseUrl(message) => Skip::NeedsBaseUrl(message),
        ServerError::Unusable(reason) => Skip::Reason(reason),
    })?;
    let mut warnings = Vec::new();
    let mut translator = SchemaTranslator::new(context.document, context.dialect)
        .with_max_bytes(context.max_bytes)
        .leaving_out("readOnly");
    let inputs = inputs(context, operation, &mut translator, &mut warnings);
    context
        .work
        .set(context.work.get().saturating_add(translator.nodes()));
    let (arguments, body) = inputs?;
    let schema_bytes = translator.bytes();
    let (defs, schema_warnings) = translator.finish();
    warnings.extend(schema_warnings);
    let (input_schema, locations) = input_schema(arguments, body, defs);
    LazyValidator::check(&input_schema)
        .map_err(|e| format!("its input schema does not compile: {e}"))?;
    let security = security::requirement(context.document, context.bindings, operation.object);
    if let Security::Unbound {
        schemes,
        partly_bound,
    } = &security
    {
        if context.skip_secured {
            return Err(Skip::Reason(format!(
                "secured by {schemes} (--skip-secured)"
            )));
        }
        warnings.push(if *partly_bound {
            format!(
                "secured by {schemes}: no alternative of its security requirement is one scheme bound with --credential, so the gateway sends it no credentials"
            )
        } else {
            format!("secured by {schemes}: no --credential binds it, so the gateway sends it no credentials")
        });
    }
    let output = response::output_schema(context, operation, &mut warnings);
    let output_bytes = output.as_ref().map_or(0, |output| output.bytes);
    let schemas = (input_schema, output.map(|output| output.schema));
    let mut tool = tool_fields(context, operation, &server, schemas, locations);
    // The credential, a step of its own (CONTRACT M5).
    if let Security::Bound { scheme, auth } = security {
        security::attach(&mut tool, &scheme, auth, &mut warnings);
    }
    Ok(Mapped {
        tool,
        warnings,
        schema_bytes,
        output_bytes,
    })
}

/// The operation's parameters as arguments and its request body.
fn inputs(
    context: &Context<'_>,
    operation: &Operation<'_>,
    translator: &mut SchemaTranslator<'_>,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Argument>, Body), String> {
    let parameters = parameters::merged(context.document, operation.path_item, operation.object)?;
    let arguments = parameters::arguments(&parameters, translator, warnings)?;
    check_path_template(operation.path, &arguments)?;
    let taken: Vec<&str> = arguments.iter().map(|a| a.name.as_str()).collect();
    let body = request_body::body(
        context.document,
        operation.object,
        operation.method,
        &taken,
        translator,
        warnings,
    )?;
    Ok((arguments, body))
}

/// CONTRACT M2: each `{name}` of the path is a path argument, and each path argument has its
/// `{name}`.
fn check_path_template(path: &str, arguments: &[Argument]) -> Result<(), String> {
    if !path.starts_with('/') || path.contains(['?', '#']) {
        return Err(format!(
            "the path '{path}' is not a path template (it must start with '/' and hold no query or fragment)"
        ));
    }
    let placeholders = placeholders(path)?;
    for name in &placeholders {
        if !arguments
            .iter()
            .any(|a| a.location == "path" && a.name == *name)
        {
            return Err(format!(
                "path placeholder '{{{name}}}' has no path parameter"
            ));
        }
    }
    for argument in arguments.iter().filter(|a| a.location == "path") {
        if !placeholders.contains(&argument.name.as_str()) {
            return Err(format!(
                "path parameter '{}' has no placeholder in the path",
                argument.name
            ));
        }
    }
    Ok(())
}

/// The `{name}` placeholders of a path template.
fn placeholders(path: &str) -> Result<Vec<&str>, String> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("the path '{path}' has an unclosed '{{'"));
        };
        let name = &rest[open + 1..open + close];
        if name.is_empty() || name.contains(['{', '/']) {
            return Err(format!("the path '{path}' has a malformed placeholder"));
        }
        names.push(name);
        rest = &rest[open + close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("the path '{path}' has an unopened '}}'"));
    }
    Ok(names)
}

/// The `inputSchema` and `_meta.parameters` of the arguments and the body.
fn input_schema(
    arguments: Vec<Argument>,
    body: Body,
    defs: Map<String, Value>,
) -> (Value, Map<String, Value>) {
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    let mut locations = Map::new();
    for argument in arguments {
        if argument.required {
            required.push(Value::String(argument.name.clone()));
        }
        locations.insert(argument.name.clone(), json!(argument.location));
        properties.insert(argument.name, argument.schema);
    }
    let mut closed = false;
    match body {
        Body::None => {}
        Body::Members {
            properties: members,
            required: required_members,
            closed: members_closed,
        } => {
            for (name, schema) in members {
                locations.insert(name.clone(), json!("body"));
                properties.insert(name, schema);
            }
            required.extend(required_members.into_iter().map(Value::String));
            closed = members_closed;
        }
        Body::Whole {
            name,
            schema,
            required: body_required,
        } => {
            if body_required {
                required.push(Value::String(name.clone()));
            }
            locations.insert(name.clone(), json!("wholeBody"));
            properties.insert(name, schema);
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    if closed {
        schema.insert("additionalProperties".into(), Value::Bool(false));
    }
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    (Value::Object(schema), locations)
}

/// The tool's fields but `name`: `title`, `description`, `inputSchema`, `outputSchema`,
/// `annotations`, `_meta`.
fn tool_fields(
    context: &Context<'_>,
    operation: &Operation<'_>,
    server: &str,
    (input_schema, output_schema): (Value, Option<Value>),
    locations: Map<String, Value>,
) -> Map<String, Value> {
    let text = |field: &str| {
        operation
            .object
            .get(field)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut tool = Map::new();
    if let Some(summary) = text("summary") {
        tool.insert("title".into(), json!(summary));
    }
    let mut description = text("description").or_else(|| text("summary")).map_or_else(
        || format!("{} {}", operation.method, operation.path),
        str::to_string,
    );
    if operation.object.get("deprecated") == Some(&Value::Bool(true)) {
        description = format!("Deprecated. {description}");
    }
    tool.insert("description".into(), json!(description));
    tool.insert("inputSchema".into(), input_schema);
    if let Some(output_schema) = output_schema {
        tool.insert("outputSchema".into(), output_schema);
    }
    if matches!(operation.method, "GET" | "HEAD") {
        tool.insert("annotations".into(), json!({"readOnlyHint": true}));
    }
    tool.insert(
        "_meta".into(),
        json!({
            "version": context.version,
            "active": true,
            "endpoint": format!("{server}{}", operation.path),
            "method": operation.method,
            "parameters": Value::Object(locations),
        }),
    );
    tool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_read_and_malformed_ones_refused() {
        assert_eq!(placeholders("/a/{x}/b/{y}.json").unwrap(), ["x", "y"]);
        assert!(placeholders("/a/{x").is_err());
        assert!(placeholders("/a/x}").is_err());
        assert!(placeholders("/a/{}").is_err());
    }
}
