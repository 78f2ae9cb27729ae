//! Loading the OpenAPI document: reading SPEC (a file or an `https://` URL), parsing it as JSON
//! or YAML into a `serde_json::Value`, and telling its OpenAPI version (Swagger 2.0 refused).

use std::time::Duration;

use serde_json::{Map, Number, Value};

/// How long fetching an `https://` SPEC may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest document read, file or URL.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// The schema dialect of the document's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAPI 3.0: its own JSON Schema dialect (`nullable`, boolean `exclusiveMinimum`, a
    /// `$ref`'s siblings ignored).
    V3_0,
    /// OpenAPI 3.1: JSON Schema 2020-12.
    V3_1,
}

/// Reads SPEC's bytes: an `https://` (or `http://`) URL is fetched, anything else is a file.
///
/// # Errors
/// Why SPEC cannot be read (exit 2).
pub(crate) async fn read(spec: &str) -> Result<Vec<u8>, String> {
    if spec.starts_with("https://") || spec.starts_with("http://") {
        return fetch(spec).await;
    }
    let bytes = std::fs::read(spec).map_err(|e| format!("cannot read {spec}: {e}"))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "cannot read {spec}: over {MAX_DOCUMENT_BYTES} bytes"
        ));
    }
    Ok(bytes)
}

/// `GET`s an OpenAPI document, bounded in time and size.
async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    mcp_gateway::tls::install_crypto_provider();
    let fail = |reason: String| format!("cannot fetch {url}: {reason}");
    let client = reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let mut response = client
        .get(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, application/yaml;q=0.9, */*;q=0.8",
        )
        .send()
        .await
        .map_err(|e| {
            fail(if e.is_timeout() {
                format!("no answer within {} s", FETCH_TIMEOUT.as_secs())
            } else {
                e.to_string()
            })
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(fail(format!("HTTP {}", status.as_u16())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(fail(format!("over {MAX_DOCUMENT_BYTES} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Parses a document as JSON, else as YAML (merge keys applied, scalar mapping keys such as
/// `200:` turned into their text).
///
/// # Errors
/// Why it is neither (exit 1).
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let json_error = match serde_json::from_slice::<Value>(bytes) {
        Ok(document) => return Ok(document),
        Err(error) => error,
    };
    let looks_like_json = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    let yaml = serde_norway::from_slice::<serde_norway::Value>(bytes).and_then(|mut value| {
        value.apply_merge()?;
        Ok(value)
    });
    match yaml {
        Ok(value) => yaml_to_json(value),
        Err(_) if looks_like_json => Err(format!("not JSON: {json_error}")),
        Err(error) => Err(format!("neither JSON nor YAML: {error}")),
    }
}

/// A YAML value as JSON: tags dropped, scalar keys as their text.
fn yaml_to_json(value: serde_norway::Value) -> Result<Value, String> {
    use serde_norway::Value as Yaml;
    Ok(match value {
        Yaml::Null => Value::Null,
        Yaml::Bool(b) => Value::Bool(b),
        Yaml::Number(n) => Value::Number(yaml_number(&n)?),
        Yaml::String(s) => Value::String(s),
        Yaml::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Mapping(mapping) => {
            let mut object = Map::new();
            for (key, value) in mapping {
                object.insert(yaml_key(key)?, yaml_to_json(value)?);
            }
            Value::Object(object)
        }
        Yaml::Tagged(tagged) => yaml_to_json(tagged.value)?,
    })
}

fn yaml_number(n: &serde_norway::Number) -> Result<Number, String> {
    if let Some(i) = n.as_i64() {
        Ok(i.into())
    } else if let Some(u) = n.as_u64() {
        Ok(u.into())
    } else {
        n.as_f64()
            .and_then(Number::from_f64)
            .ok_or_else(|| format!("the YAML number {n} has no JSON form"))
    }
}

fn yaml_key(key: serde_norway::Value) -> Result<String, String> {
    use serde_norway::Value as Yaml;
    match key {
        Yaml::String(s) => Ok(s),
        Yaml::Number(n) => Ok(n.to_string()),
        Yaml::Bool(b) => Ok(b.to_string()),
        Yaml::Null => Ok("null".into()),
        Yaml::Tagged(tagged) => yaml_key(tagged.value),
        Yaml::Sequence(_) | Yaml::Mapping(_) => {
            Err("a YAML mapping key is a sequence or a mapping, which JSON cannot hold".into())
        }
    }
}

/// The document's dialect from its `openapi` field.
///
/// # Errors
/// Why the document is not OpenAPI 3.0 or 3.1 (exit 1); a Swagger 2.0 document says so.
pub(crate) fn dialect(document: &Value) -> Result<Dialect, String> {
    let Some(object) = document.as_object() else {
        return Err("the document is not a JSON or YAML object".into());
    };
    if object.contains_key("swagger") {
        let version = version_text(object.get("swagger"));
        return Err(format!(
            "the document is Swagger {version}: only OpenAPI 3.0 and 3.1 documents can be imported (convert it to OpenAPI 3 first, e.g. with swagger2openapi)"
        ));
    }
    let version = version_text(object.get("openapi"));
    if version.starts_with("3.0") {
        Ok(Dialect::V3_0)
    } else if version.starts_with("3.1") {
        Ok(Dialect::V3_1)
    } else if version.is_empty() {
        Err(
            "the document has no 'openapi' version: it is not an OpenAPI 3.0 or 3.1 document"
                .into(),
        )
    } else {
        Err(format!(
            "the document is OpenAPI {version}: only OpenAPI 3.0 and 3.1 documents can be imported"
        ))
    }
}

/// A version field's text: a string, or a YAML number such as `2.0`.
fn version_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn yaml_keys_become_text_and_merge_keys_apply() {
        let yaml = b"openapi: 3.0.3\nbase: &base\n  a: 1\nderived:\n  <<: *base\n  b: 2\nresponses:\n  200:\n    description: ok\n  true: x\n";
        let document = parse(yaml).unwrap();
        assert_eq!(document["derived"], json!({"a": 1, "b": 2}));
        assert_eq!(document["responses"]["200"]["description"], "ok");
        assert_eq!(document["responses"]["true"], "x");
        assert_eq!(dialect(&document), Ok(Dialect::V3_0));
    }

    #[test]
    fn json_is_parsed_as_json_and_garbage_is_refused() {
        assert_eq!(
            parse(b"{\"openapi\": \"3.1.0\"}").unwrap()["openapi"],
            "3.1.0"
        );
        assert!(
            parse(b"{\"openapi\": ")
                .unwrap_err()
                .starts_with("not JSON: ")
        );
        assert!(
            parse(b"a: [b\n")
                .unwrap_err()
                .starts_with("neither JSON nor YAML: ")
        );
    }

    #[test]
    fn swagger_2_is_refused_with_a_clear_message() {
        let error = dialect(&json!({"swagger": "2.0", "info": {}})).unwrap_err();
        assert_eq!(
            error,
            "the document is Swagger 2.0: only OpenAPI 3.0 and 3.1 documents can be imported (convert it to OpenAPI 3 first, e.g. with swagger2openapi)"
        );
        assert!(dialect(&json!({"openapi": "4.0.0"})).is_err());
        assert!(dialect(&json!({"info": {}})).is_err());
        assert_eq!(dialect(&json!({"openapi": "3.1.1"})), Ok(Dialect::V3_1));
    }
}
