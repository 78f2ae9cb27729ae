//! An operation's security requirement (its own `security`, else the document's) against the
//! schemes bound with `--credential` (CONTRACT M3, M5): met by one bound scheme, the tool gets
//! that scheme's `_meta.auth`, added by [`attach`] once the tool is made; otherwise the
//! operation is imported with a warning, or skipped with `--skip-secured`.

use serde_json::{Map, Value};

use super::credentials::Bindings;

/// What an operation's security requirement asks of its tool.
#[derive(Debug, PartialEq)]
pub(crate) enum Security {
    /// Nothing: no requirement, or an empty alternative among its alternatives and none that
    /// a bound scheme meets.
    Open,
    /// An alternative of one bound scheme: its name and the tool's `_meta.auth`.
    Bound {
        /// The scheme's name.
        scheme: String,
        /// The `_meta.auth`.
        auth: Value,
    },
    /// No alternative the bound schemes meet.
    Unbound {
        /// The schemes it names, quoted, for the `secured by` line.
        schemes: String,
        /// Whether one of them is bound (it is then needed with another scheme at once).
        partly_bound: bool,
    },
}

/// What the security requirement of `operation` asks, the schemes of `bindings` bound. The
/// first alternative that is exactly one bound scheme is taken (one `_meta.auth` sends one
/// credential: an alternative of two schemes at once cannot be met).
pub(crate) fn requirement(
    document: &Value,
    bindings: &Bindings,
    operation: &Map<String, Value>,
) -> Security {
    let Some(requirements) = operation
        .get("security")
        .or_else(|| document.get("security"))
        .and_then(Value::as_array)
    else {
        return Security::Open;
    };
    let alternatives: Vec<&Map<String, Value>> =
        requirements.iter().filter_map(Value::as_object).collect();
    for alternative in &alternatives {
        let mut schemes = alternative.iter();
        if let (Some((scheme, scopes)), None) = (schemes.next(), schemes.next())
            && let Some(auth) = bindings.auth(scheme, scopes)
        {
            return Security::Bound {
                scheme: scheme.clone(),
                auth,
            };
        }
    }
    if alternatives.is_empty() || alternatives.iter().any(|r| r.is_empty()) {
        return Security::Open;
    }
    let mut names: Vec<&str> = Vec::new();
    for name in alternatives.iter().flat_map(|r| r.keys()) {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    Security::Unbound {
        schemes: names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(", "),
        partly_bound: names.iter().any(|n| bindings.binds(n)),
    }
}

/// CONTRACT M5: the tool's `_meta.auth` added (the last step of making a tool). An argument the
/// credential sets itself (a header or query parameter of an apiKey's name) is left out of the
/// tool, with a warning: the gateway would refuse the tool with both.
pub(crate) fn attach(
    tool: &mut Map<String, Value>,
    scheme: &str,
    auth: Value,
    warnings: &mut Vec<String>,
) {
    if auth["type"] == "apiKey"
        && let (Some(place), Some(key)) = (auth["in"].as_str(), auth["name"].as_str())
    {
        let same = |argument: &str| match place {
            "header" => argument.eq_ignore_ascii_case(key),
            _ => argument == key,
        };
        let arguments: Vec<String> = tool
            .get("_meta")
            .and_then(|meta| meta.get("parameters"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(name, location)| *location == place && same(name))
            .map(|(name, _)| name.clone())
            .collect();
        for argument in arguments {
            leave_out(tool, &argument);
            warnings.push(format!(
                "{place} parameter '{argument}' left out: the credential of security scheme '{scheme}' sets it"
            ));
        }
    }
    if let Some(Value::Object(meta)) = tool.get_mut("_meta") {
        meta.insert("auth".into(), auth);
    }
}

/// `argument` taken out of the tool's `inputSchema` (`properties`, `required`) and
/// `_meta.parameters`.
fn leave_out(tool: &mut Map<String, Value>, argument: &str) {
    if let Some(Value::Object(schema)) = tool.get_mut("inputSchema") {
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.shift_remove(argument);
        }
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|name| name.as_str() != Some(argument));
            if required.is_empty() {
                schema.shift_remove("required");
            }
        }
    }
    if let Some(Value::Object(parameters)) = tool
        .get_mut("_meta")
        .and_then(|meta| meta.get_mut("parameters"))
    {
        parameters.shift_remove(argument);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn security_is_the_operations_else_the_documents_and_an_empty_list_is_none() {
        let document = json!({"security": [{"api_key": []}]});
        let own = json!({"security": [{"oauth": ["read"]}, {"api_key": []}]});
        let none = json!({"security": []});
        let optional = json!({"security": [{}, {"api_key": []}]});
        let bindings = Bindings::default();
        let schemes =
            |operation: &Value| requirement(&document, &bindings, operation.as_object().unwrap());
        let unbound = |schemes: &str| Security::Unbound {
            schemes: schemes.into(),
            partly_bound: false,
        };
        assert_eq!(schemes(&own), unbound("'oauth', 'api_key'"));
        assert_eq!(schemes(&json!({})), unbound("'api_key'"));
        assert_eq!(schemes(&none), Security::Open);
        assert_eq!(schemes(&optional), Security::Open);
    }
}
