//! An operation's server URL: the first of the operation's `servers`, else its path item's,
//! else the document's; server variables take their defaults; a protocol-relative URL gets
//! `https:`; a relative or missing one is resolved against `--base-url`, which it then needs.

use serde_json::{Map, Value};
use url::Url;

use super::document::redacted;

/// Why an operation has no usable server URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServerError {
    /// The URL is relative (or there is none) and no `--base-url` was given: the whole document
    /// cannot be imported (exit 1).
    NeedsBaseUrl(String),
    /// This operation's server cannot be used (skip it).
    Unusable(String),
}

/// The server URL of an operation, without a trailing `/`: `base_url` replaces an absolute
/// server URL and resolves a relative one.
///
/// # Errors
/// [`ServerError::NeedsBaseUrl`] for a relative or missing URL without `base_url`,
/// [`ServerError::Unusable`] for a URL that is no http(s) URL, carries a user name or password,
/// a query or fragment, has an unknown variable or one whose default holds `{` or `}`.
pub(crate) fn server_url(
    document: &Value,
    path_item: &Map<String, Value>,
    operation: &Map<String, Value>,
    base_url: Option<&Url>,
) -> Result<String, ServerError> {
    let first = [
        operation.get("servers"),
        path_item.get("servers"),
        document.get("servers"),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_array)
    .find(|servers| !servers.is_empty())
    .and_then(|servers| servers.first());
    let url = match first {
        Some(server) => substitute_variables(server)?,
        None => String::new(),
    };
    let url = if url.starts_with("//") {
        format!("https:{url}")
    } else {
        url
    };
    // An absolute server URL gives way to --base-url (the same API at another host: a staging
    // copy, a private deployment, a local stand-in); a relative one is resolved against it.
    if let Some(base) = base_url
        && url.contains("://")
    {
        return Ok(base.as_str().trim_end_matches('/').to_string());
    }
    absolute(&url, base_url).map(|url| url.trim_end_matches('/').to_string())
}

/// `url` when it is an absolute http(s) URL, else resolved against `base_url`.
fn absolute(url: &str, base_url: Option<&Url>) -> Result<String, ServerError> {
    match Url::parse(url) {
        Ok(parsed) => check_http(&parsed, url).map(|()| url.to_string()),
        Err(url::ParseError::RelativeUrlWithoutBase | url::ParseError::EmptyHost)
            if !url.contains("://") =>
        {
            let Some(base) = base_url else {
                return Err(ServerError::NeedsBaseUrl(if url.is_empty() {
                    "the document names no server URL: give --base-url".into()
                } else {
                    format!("the server URL '{url}' is relative: give --base-url")
                }));
            };
            if url.is_empty() || url == "/" {
                return Ok(base.as_str().to_string());
            }
            let joined = base.join(url).map_err(|e| {
                ServerError::Unusable(format!("server URL '{}': {e}", redacted(url)))
            })?;
            check_http(&joined, joined.as_str()).map(|()| joined.as_str().to_string())
        }
        Err(error) => Err(ServerError::Unusable(format!(
            "the server URL '{}' is not a URL ({error})",
            redacted(url)
        ))),
    }
}

fn check_http(url: &Url, text: &str) -> Result<(), ServerError> {
    if !url.username().is_empty() || url.password().is_some() {
        // The gateway refuses such endpoints: reqwest would send them as `Authorization: Basic`.
        return Err(ServerError::Unusable(
            "the server URL carries a user name or password".into(),
        ));
    }
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return Err(ServerError::Unusable(format!(
            "the server URL '{}' is not an http(s) URL",
            redacted(text)
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ServerError::Unusable(format!(
            "the server URL '{}' has a query or fragment",
            redacted(text)
        )));
    }
    Ok(())
}

/// A Server Object's `url` with each `{variable}` replaced by its default (or, lacking one, the
/// first of its `enum`).
fn substitute_variables(server: &Value) -> Result<String, ServerError> {
    let template = server
        .get("url")
        .and_then(Value::as_str)
        .ok_or_else(|| ServerError::Unusable("a server has no url".into()))?;
    let variables = server.get("variables").and_then(Value::as_object);
    let mut url = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        url.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            return Err(ServerError::Unusable(format!(
                "the server URL '{}' has an unclosed '{{'",
                redacted(template)
            )));
        };
        let name = &rest[open + 1..open + close];
        let variable = variables.and_then(|v| v.get(name));
        let value = variable
            .and_then(|v| v.get("default"))
            .or_else(|| {
                variable
                    .and_then(|v| v.get("enum"))
                    .and_then(Value::as_array)
                    .and_then(|values| values.first())
            })
            .and_then(|value| match value {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .ok_or_else(|| {
                ServerError::Unusable(format!(
                    "server variable '{name}' of '{}' has no default",
                    redacted(template)
                ))
            })?;
        if value.contains(['{', '}']) {
            return Err(ServerError::Unusable(format!(
                "server variable '{name}' of '{}' has a default with '{{' or '}}', which no URL holds",
                redacted(template)
            )));
        }
        url.push_str(&value);
        rest = &rest[open + close + 1..];
    }
    if rest.contains('}') {
        return Err(ServerError::Unusable(format!(
            "the server URL '{}' has an unopened '}}'",
            redacted(template)
        )));
    }
    url.push_str(rest);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn url_of(document: &Value, base: Option<&str>) -> Result<String, ServerError> {
        let base = base.map(|b| Url::parse(b).unwrap());
        server_url(document, &Map::new(), &Map::new(), base.as_ref())
    }

    #[test]
    fn server_variables_take_their_defaults() {
        let document = json!({"servers": [{
            "url": "{scheme}://{name}.example.com:{port}/{basePath}/",
            "variables": {"scheme": {"enum": ["https", "http"]}, "name": {"default": "demo"},
                          "port": {"default": "8443"}, "basePath": {"default": "v2"}}
        }]});
        assert_eq!(
            url_of(&document, None).unwrap(),
            "https://demo.example.com:8443/v2"
        );
        let missing = json!({"servers": [{"url": "https://{region}.x.test"}]});
        assert_eq!(
            url_of(&missing, None),
            Err(ServerError::Unusable(
                "server variable 'region' of 'https://{region}.x.test' has no default".into()
            ))
        );
    }

    #[test]
    fn m3_base_url_replaces_an_absolute_server_url() {
        let document = json!({"servers": [{"url": "http://petstore.swagger.io/v2"}]});
        assert_eq!(
            url_of(&document, Some("http://127.0.0.1:3001/petstore/v2")).unwrap(),
            "http://127.0.0.1:3001/petstore/v2"
        );
    }

    #[test]
    fn a_protocol_relative_url_gets_https() {
        let document = json!({"servers": [{"url": "//api.example.com/v1"}]});
        assert_eq!(
            url_of(&document, None).unwrap(),
            "https://api.example.com/v1"
        );
    }

    #[test]
    fn a_relative_or_missing_server_needs_base_url() {
        let relative = json!({"servers": [{"url": "/api/v3"}]});
        assert_eq!(
            url_of(&relative, None),
            Err(ServerError::NeedsBaseUrl(
                "the server URL '/api/v3' is relative: give --base-url".into()
            ))
        );
        assert_eq!(
            url_of(&relative, Some("https://api.example.test")).unwrap(),
            "https://api.example.test/api/v3"
        );
        assert_eq!(
            url_of(&json!({}), None),
            Err(ServerError::NeedsBaseUrl(
                "the document names no server URL: give --base-url".into()
            ))
        );
        assert_eq!(
            url_of(&json!({}), Some("https://api.example.test/v1/")).unwrap(),
            "https://api.example.test/v1"
        );
    }

    #[test]
    fn operation_servers_override_path_and_document_servers() {
        let document = json!({"servers": [{"url": "https://doc.test"}]});
        let path_item = json!({"servers": [{"url": "https://path.test"}]});
        let operation = json!({"servers": [{"url": "https://op.test"}]});
        let empty = Map::new();
        let path_item = path_item.as_object().unwrap();
        assert_eq!(
            server_url(&document, path_item, operation.as_object().unwrap(), None).unwrap(),
            "https://op.test"
        );
        assert_eq!(
            server_url(&document, path_item, &empty, None).unwrap(),
            "https://path.test"
        );
        assert_eq!(
            server_url(&document, &empty, &empty, None).unwrap(),
            "https://doc.test"
        );
        let ftp = json!({"servers": [{"url": "ftp://x.test"}]});
        assert!(matches!(url_of(&ftp, None), Err(ServerError::Unusable(_))));
    }

    #[test]
    fn a_server_url_with_user_info_is_unusable_and_not_shown() {
        for url in [
            "https://user:secret@api.example.test/v1",
            "https://user@api.example.test/v1",
            "https://{credentials}api.example.test",
        ] {
            let document = json!({"servers": [{"url": url,
                "variables": {"credentials": {"default": "user:secret@"}}}]});
            assert_eq!(
                url_of(&document, None),
                Err(ServerError::Unusable(
                    "the server URL carries a user name or password".into()
                )),
                "{url}"
            );
        }
        let relative = json!({"servers": [{"url": "//user:secret@api.example.test/v1"}]});
        assert_eq!(
            url_of(&relative, None),
            Err(ServerError::Unusable(
                "the server URL carries a user name or password".into()
            ))
        );
        let unparsable =
            json!({"servers": [{"url": "https://user:secret@api.example.test:99999/"}]});
        let Err(ServerError::Unusable(message)) = url_of(&unparsable, None) else {
            panic!("unusable expected");
        };
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn a_variable_default_with_braces_makes_the_server_unusable() {
        let document = json!({"servers": [{"url": "https://api.example.test/{base}",
            "variables": {"base": {"default": "v1/{tenant}"}}}]});
        assert_eq!(
            url_of(&document, None),
            Err(ServerError::Unusable(
                "server variable 'base' of 'https://api.example.test/{base}' has a default with '{' or '}', which no URL holds".into()
            ))
        );
        let unopened = json!({"servers": [{"url": "https://api.example.test/v1}"}]});
        assert_eq!(
            url_of(&unopened, None),
            Err(ServerError::Unusable(
                "the server URL 'https://api.example.test/v1}' has an unopened '}'".into()
            ))
        );
        let ftp = json!({"servers": [{"url": "ftp://x.test"}]});
        assert!(matches!(url_of(&ftp, None), Err(ServerError::Unusable(_))));
    }
}
