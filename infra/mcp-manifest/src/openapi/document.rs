//! Loading the OpenAPI document: reading SPEC (a file, an `https://` URL, or an `http://` one on
//! loopback), parsing it as JSON or YAML into a `serde_json::Value`, and telling its OpenAPI
//! version (Swagger 2.0 refused).

use std::io::Read as _;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Number, Value};
use url::{Host, Url};

/// How long fetching an `https://` SPEC may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest document read, file or URL.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// The deepest YAML flow nesting (`[` and `{`) parsed: the YAML parser takes time quadratic in
/// it before its own recursion limit (128 levels) refuses the document anyway.
const MAX_FLOW_DEPTH: usize = 256;

/// The schema dialect of the document's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAPI 3.0: its own JSON Schema dialect (`nullable`, boolean `exclusiveMinimum`, a
    /// `$ref`'s siblings ignored).
    V3_0,
    /// OpenAPI 3.1: JSON Schema 2020-12.
    V3_1,
}

/// Reads SPEC's bytes: an `https://` URL (or an `http://` one on loopback) is fetched, anything
/// else is a file.
///
/// # Errors
/// Why SPEC cannot be read (exit 2); a URL's user name and password are never shown.
pub(crate) async fn read(spec: &str) -> Result<Vec<u8>, String> {
    let lower = spec.get(..8).unwrap_or(spec).to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        return fetch(spec).await;
    }
    read_file(Path::new(spec), MAX_DOCUMENT_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", redacted(spec)))
}

/// A file's bytes, refused over `limit` bytes without reading more than `limit + 1` (SPEC could
/// be `/dev/zero`).
///
/// # Errors
/// The I/O error, or that the file is over `limit` bytes.
pub(crate) fn read_file(path: &Path, limit: usize) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > limit {
        return Err(format!("over {limit} bytes"));
    }
    Ok(bytes)
}

/// SPEC as messages show it: a URL's user name and password replaced by `***`.
pub(crate) fn redacted(spec: &str) -> String {
    let Some(scheme_end) = spec.find("://") else {
        return spec.to_string();
    };
    let authority_start = scheme_end + 3;
    let authority_end = spec[authority_start..]
        .find(['/', '?', '#'])
        .map_or(spec.len(), |i| i + authority_start);
    match spec[authority_start..authority_end].rfind('@') {
        Some(at) => format!(
            "{}***{}",
            &spec[..authority_start],
            &spec[authority_start + at..]
        ),
        None => spec.to_string(),
    }
}

/// Whether an `http://` URL may be fetched: its host is loopback (`localhost`, `127.0.0.0/8`,
/// `[::1]`), where local development servers serve their documents.
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(domain)) => {
            let domain = domain.trim_end_matches('.').to_ascii_lowercase();
            domain == "localhost" || domain.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Whether a URL (SPEC or a redirect) may be fetched: `https`, or `http` on loopback.
fn fetchable(url: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && is_loopback(url))
}

/// `GET`s an OpenAPI document, bounded in time and size; only `https://` (and `http://` on
/// loopback), redirects included.
async fn fetch(spec: &str) -> Result<Vec<u8>, String> {
    let shown = redacted(spec);
    let fail = |reason: String| format!("cannot fetch {shown}: {reason}");
    let url = Url::parse(spec).map_err(|e| fail(format!("not a URL ({e})")))?;
    if !fetchable(&url) {
        return Err(fail(
            "only https:// URLs are fetched (and http:// on loopback); download the document and give the file"
                .into(),
        ));
    }
    mcp_gateway::tls::install_crypto_provider();
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= 10 {
            attempt.error("more than 10 redirects")
        } else if fetchable(attempt.url()) {
            attempt.follow()
        } else {
            attempt.error("a redirect to a URL that is neither https:// nor http:// on loopback")
        }
    });
    let client = reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .redirect(redirects)
        .build()
        .map_err(|e| fail(error_text(e)))?;
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
                error_text(e)
            })
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(fail(format!("HTTP {}", status.as_u16())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(error_text(e)))? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(fail(format!("over {MAX_DOCUMENT_BYTES} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A reqwest error without its URL (which may carry a user name and password), with its
/// causes.
fn error_text(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Parses a document as JSON, else as YAML (merge keys applied, scalar mapping keys such as
/// `200:` turned into their text). A document that starts with `{` or `[` is JSON only.
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
        .is_some_and(|b| matches!(b, b'{' | b'['));
    if looks_like_json {
        return Err(format!("not JSON: {json_error}"));
    }
    check_flow_depth(bytes, MAX_FLOW_DEPTH)?;
    let yaml = serde_norway::from_slice::<serde_norway::Value>(bytes).and_then(|mut value| {
        value.apply_merge()?;
        Ok(value)
    });
    match yaml {
        Ok(value) => yaml_to_json(value),
        Err(error) => Err(format!("neither JSON nor YAML: {error}")),
    }
}

/// Refuses YAML whose flow collections (`[`, `{`) nest deeper than `limit`, in one pass: the
/// YAML parser would take time quadratic in the depth to refuse it. Quoted scalars, comments
/// and block scalars (`|`, `>`) are skipped; outside flow collections, a bracket counts only
/// where a node starts.
fn check_flow_depth(bytes: &[u8], limit: usize) -> Result<(), String> {
    let n = bytes.len();
    let mut depth = 0usize;
    let mut i = 0;
    let mut line = 1usize;
    let mut line_begin = 0;
    let mut at_line_start = true;
    // Where a node may start (after indentation, `- `, `? `, `: `, `[`, `{`, `,`).
    let mut node_start = true;
    // The column of the node a block scalar would belong to, outside flow collections.
    let mut node_column = 0;
    // Inside a block scalar: the column its lines are indented beyond.
    let mut block_scalar: Option<usize> = None;
    let ends_token = |j: usize| j >= n || matches!(bytes[j], b' ' | b'\t' | b'\r' | b'\n');
    while i < n {
        if at_line_start {
            line_begin = i;
            let mut j = i;
            while j < n && bytes[j] == b' ' {
                j += 1;
            }
            if let Some(column) = block_scalar {
                let blank = j >= n || matches!(bytes[j], b'\r' | b'\n' | b'\t');
                if blank || j - i > column {
                    i = bytes[j..]
                        .iter()
                        .position(|b| *b == b'\n')
                        .map_or(n, |k| j + k + 1);
                    line += 1;
                    continue;
                }
                block_scalar = None;
            }
            if depth == 0 {
                node_column = j - i;
            }
            node_start = true;
            at_line_start = false;
            i = j;
            continue;
        }
        let c = bytes[i];
        match c {
            b'\n' => {
                at_line_start = true;
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'#' if i == line_begin || matches!(bytes[i - 1], b' ' | b'\t') => {
                i = bytes[i..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(n, |k| i + k);
            }
            b'"' | b'\'' if node_start => {
                if depth == 0 {
                    node_column = i - line_begin;
                }
                i += 1;
                while i < n {
                    match bytes[i] {
                        b'\\' if c == b'"' => i += 2,
                        b'\'' if c == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
                        quote if quote == c => {
                            i += 1;
                            break;
                        }
                        b'\n' => {
                            line += 1;
                            line_begin = i + 1;
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
                node_start = false;
            }
            b'[' | b'{' if depth > 0 || node_start => {
                depth += 1;
                if depth > limit {
                    return Err(format!(
                        "the YAML nests '[' and '{{' more than {limit} levels deep (line {line}, column {}): it is refused unparsed",
                        i - line_begin + 1
                    ));
                }
                node_start = true;
                i += 1;
            }
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                node_start = false;
                i += 1;
            }
            b',' if depth > 0 => {
                node_start = true;
                i += 1;
            }
            b':' if ends_token(i + 1) || depth > 0 => {
                node_start = true;
                i += 1;
            }
            b'-' | b'?' if node_start && depth == 0 && ends_token(i + 1) => {
                node_column = i - line_begin;
                i += 1;
            }
            b'|' | b'>' if node_start && depth == 0 => {
                block_scalar = Some(node_column);
                i = bytes[i..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(n, |k| i + k);
            }
            b'!' | b'&' if node_start => {
                while i < n && !ends_token(i) && !(depth > 0 && b",[]{}".contains(&bytes[i])) {
                    i += 1;
                }
            }
            _ => {
                if node_start && depth == 0 {
                    node_column = i - line_begin;
                }
                node_start = false;
                i += 1;
            }
        }
    }
    Ok(())
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
    fn json_shaped_text_is_not_retried_as_yaml() {
        let deep = format!("{{\"x\": {}{}}}", "[".repeat(200_000), "]".repeat(200_000));
        let started = std::time::Instant::now();
        let error = parse(deep.as_bytes()).unwrap_err();
        assert!(
            error.starts_with("not JSON: recursion limit exceeded"),
            "{error}"
        );
        assert!(parse(b"[1, 2,]").unwrap_err().starts_with("not JSON: "));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn deep_yaml_flow_nesting_is_refused_before_the_parser() {
        let deep = format!(
            "openapi: 3.0.3\nx: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let started = std::time::Instant::now();
        assert_eq!(
            parse(deep.as_bytes()).unwrap_err(),
            "the YAML nests '[' and '{' more than 256 levels deep (line 2, column 260): it is refused unparsed"
        );
        let braces = format!("x:\n  - {}\n", "{a: ".repeat(100_000));
        assert!(
            parse(braces.as_bytes())
                .unwrap_err()
                .contains("more than 256 levels deep (line 2,")
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn the_flow_depth_scan_skips_quotes_comments_and_block_scalars() {
        let brackets = "[".repeat(300);
        for text in [
            format!("a: '{brackets}'\nb: \"{brackets}\\\"\"\n"),
            format!("a: x # {brackets}\n"),
            format!("a: see {brackets}\n"),
            format!("a: |\n  {brackets}\n   {brackets}\n\n  x\nb: 1\n"),
            format!("- k: >-\n    {brackets}\n  j: 1\n"),
            format!("a: [b, 'c{brackets}', d]\n"),
            format!("a: don't {brackets}\n"),
        ] {
            assert_eq!(check_flow_depth(text.as_bytes(), 256), Ok(()), "{text}");
        }
        let hidden = format!("a: |\n  x\nb: {brackets}\n");
        assert!(check_flow_depth(hidden.as_bytes(), 256).is_err());
        let after_apostrophe = format!("a: don't\nb: {brackets}\n");
        assert!(check_flow_depth(after_apostrophe.as_bytes(), 256).is_err());
        let in_sequence = format!("- a: |\n   x\n  b: {brackets}\n");
        assert!(check_flow_depth(in_sequence.as_bytes(), 256).is_err());
    }

    #[test]
    fn a_spec_urls_user_name_and_password_are_redacted() {
        assert_eq!(
            redacted("https://user:secret@api.example.test/openapi.yaml?x=a@b"),
            "https://***@api.example.test/openapi.yaml?x=a@b"
        );
        assert_eq!(
            redacted("https://api.example.test/a@b"),
            "https://api.example.test/a@b"
        );
        assert_eq!(redacted("specs/openapi.yaml"), "specs/openapi.yaml");
    }

    #[test]
    fn http_is_fetched_on_loopback_only() {
        for url in [
            "https://api.example.test/o.yaml",
            "http://localhost:8080/o.yaml",
            "http://LOCALHOST./o.yaml",
            "http://127.0.0.1/o.yaml",
            "http://127.1.2.3:9/o.yaml",
            "http://[::1]:8080/o.yaml",
        ] {
            assert!(fetchable(&Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "http://api.example.test/o.yaml",
            "http://10.0.0.1/o.yaml",
            "http://[::2]/o.yaml",
            "http://localhost.example.test/o.yaml",
            "ftp://localhost/o.yaml",
        ] {
            assert!(!fetchable(&Url::parse(url).unwrap()), "{url}");
        }
    }

    #[test]
    fn an_endless_file_is_refused_after_the_limit() {
        assert_eq!(
            read_file(Path::new("/dev/zero"), 1024).unwrap_err(),
            "over 1024 bytes"
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
