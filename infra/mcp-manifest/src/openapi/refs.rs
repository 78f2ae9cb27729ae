//! `$ref` resolution inside the document: local references (`#/components/...`) as JSON
//! pointers (percent-decoded, then `~1` and `~0` unescaped). A reference to another file or URL
//! is not followed: the operation that needs it is skipped. A reference must point where its
//! kind of object lives ([`Kind`]): a schema `$ref` to `#/servers/0` or `#` would otherwise copy
//! parts of the document (internal server URLs, security schemes) into a public `inputSchema`.

use serde_json::Value;

/// The most `$ref` hops followed for one parameter, request body or path item.
const MAX_HOPS: usize = 32;

/// What a `$ref` stands for, and so where in the document it may point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A Schema Object: under `#/components/schemas/`, or the `schema` of a parameter, media
    /// type or header elsewhere in `#/components/` or `#/paths/`.
    Schema,
    /// A Parameter Object: under `#/components/parameters/`.
    Parameter,
    /// A Request Body Object: under `#/components/requestBodies/`.
    RequestBody,
    /// A Path Item Object: under `#/components/pathItems/` (3.1) or another path's.
    PathItem,
    /// A Response Object: under `#/components/responses/`.
    Response,
    /// A Security Scheme Object: under `#/components/securitySchemes/`.
    SecurityScheme,
}

/// The `#/components/` sections that hold objects with a `schema` (or are schemas).
const SCHEMA_HOLDERS: [&str; 6] = [
    "parameters",
    "requestBodies",
    "responses",
    "headers",
    "pathItems",
    "callbacks",
];

impl Kind {
    /// Whether a reference of this kind may point at `segments` (the unescaped segments of
    /// its JSON pointer).
    fn admits(self, segments: &[String]) -> bool {
        let is = |i: usize, name: &str| segments.get(i).is_some_and(|s| s == name);
        let named = |section: &str| is(0, "components") && is(1, section) && segments.len() >= 3;
        match self {
            Self::Schema => {
                let holder = (is(0, "paths") && segments.len() >= 2)
                    || SCHEMA_HOLDERS.iter().any(|section| named(section));
                named("schemas") || (holder && segments.iter().skip(3).any(|s| s == "schema"))
            }
            Self::Parameter => named("parameters"),
            Self::RequestBody => named("requestBodies"),
            Self::PathItem => named("pathItems") || (is(0, "paths") && segments.len() == 2),
            Self::Response => named("responses"),
            Self::SecurityScheme => named("securitySchemes"),
        }
    }

    /// Where references of this kind may point, for messages.
    fn places(self) -> &'static str {
        match self {
            Self::Schema => "schemas",
            Self::Parameter => "parameters (#/components/parameters/)",
            Self::RequestBody => "request bodies (#/components/requestBodies/)",
            Self::PathItem => "path items (#/components/pathItems/, #/paths/)",
            Self::Response => "responses (#/components/responses/)",
            Self::SecurityScheme => "security schemes (#/components/securitySchemes/)",
        }
    }
}

/// Why a `$ref` gives no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefError {
    /// A reference to another document.
    External(String),
    /// A local reference that names nothing.
    Unresolved(String),
    /// A local reference outside the part of the document its kind of object lives in.
    OutOfScope(String, Kind),
    /// A chain of references that comes back to one of its references.
    Cycle(String),
    /// A chain of more than [`MAX_HOPS`] references.
    TooLong(String),
    /// A `$ref` whose value is not a string (shown as JSON, shortened).
    NotString(String),
}

impl std::fmt::Display for RefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::External(reference) => write!(
                f,
                "'{reference}' is an external reference (another file or URL), which is not followed"
            ),
            Self::Unresolved(reference) => {
                write!(f, "'{reference}' names nothing in the document")
            }
            Self::OutOfScope(reference, Kind::Schema) => write!(
                f,
                "schema reference '{reference}' points outside the document's schemas"
            ),
            Self::OutOfScope(reference, kind) => write!(
                f,
                "'{reference}' points outside the document's {}",
                kind.places()
            ),
            Self::Cycle(reference) => write!(f, "'{reference}' is a $ref cycle"),
            Self::TooLong(reference) => {
                write!(f, "'{reference}' is a chain of more than {MAX_HOPS} $refs")
            }
            Self::NotString(value) => write!(f, "$ref {value} is not a string"),
        }
    }
}

/// A `$ref` value that is not a string, as JSON for a message (at most 60 characters).
pub(crate) fn not_string(value: &Value) -> RefError {
    let text = value.to_string();
    RefError::NotString(if text.chars().count() > 60 {
        format!("{}...", text.chars().take(57).collect::<String>())
    } else {
        text
    })
}

/// The value a local `$ref` of `kind` names in `document`.
///
/// # Errors
/// [`RefError::External`] for a reference outside the document, [`RefError::OutOfScope`] for
/// one outside the part of the document where `kind` lives, [`RefError::Unresolved`] for a
/// pointer to nothing.
pub(crate) fn resolve<'a>(
    document: &'a Value,
    reference: &str,
    kind: Kind,
) -> Result<&'a Value, RefError> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err(RefError::External(reference.to_string()));
    };
    let pointer = percent_decode(fragment);
    let segments: Vec<String> = pointer
        .strip_prefix('/')
        .map(|p| {
            p.split('/')
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect()
        })
        .unwrap_or_default();
    if !pointer.starts_with('/') && !pointer.is_empty() {
        return Err(RefError::Unresolved(reference.to_string()));
    }
    if !kind.admits(&segments) {
        return Err(RefError::OutOfScope(reference.to_string(), kind));
    }
    document
        .pointer(&pointer)
        .ok_or_else(|| RefError::Unresolved(reference.to_string()))
}

/// `value` itself, or what its `$ref` chain ends at (a parameter, request body, path item,
/// response or security scheme given as a reference).
///
/// # Errors
/// As [`resolve`]; [`RefError::Cycle`] for a chain that loops, [`RefError::TooLong`] for a
/// longer one than [`MAX_HOPS`], [`RefError::NotString`] for a `$ref` that is no string.
pub(crate) fn follow<'a>(
    document: &'a Value,
    value: &'a Value,
    kind: Kind,
) -> Result<&'a Value, RefError> {
    let mut current = value;
    let mut seen: Vec<&str> = Vec::new();
    loop {
        match current.get("$ref") {
            None => return Ok(current),
            Some(Value::String(reference)) => {
                if seen.contains(&reference.as_str()) {
                    return Err(RefError::Cycle(reference.clone()));
                }
                if seen.len() == MAX_HOPS {
                    return Err(RefError::TooLong(seen[0].to_string()));
                }
                seen.push(reference);
                current = resolve(document, reference, kind)?;
            }
            Some(other) => return Err(not_string(other)),
        }
    }
}

/// A URI fragment's percent-escapes decoded (`%7B` → `{`); invalid escapes are kept as they
/// are.
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(byte) = escaped {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn local_refs_unescape_json_pointer_and_percent_escapes() {
        let document = json!({"paths": {"/pets/{id}": {"get": {"parameters": [{"schema": 1}]}}},
                              "components": {"schemas": {"a~b": 2}}});
        assert_eq!(
            resolve(
                &document,
                "#/paths/~1pets~1%7Bid%7D/get/parameters/0/schema",
                Kind::Schema
            ),
            Ok(&json!(1))
        );
        assert_eq!(
            resolve(&document, "#/components/schemas/a~0b", Kind::Schema),
            Ok(&json!(2))
        );
        assert_eq!(
            resolve(&document, "#/components/schemas/nope", Kind::Schema),
            Err(RefError::Unresolved("#/components/schemas/nope".into()))
        );
        assert_eq!(
            resolve(&document, "other.yaml#/x", Kind::Schema),
            Err(RefError::External("other.yaml#/x".into()))
        );
    }

    #[test]
    fn a_ref_must_point_where_its_kind_of_object_lives() {
        let document = json!({
            "servers": [{"url": "https://internal.example.test"}],
            "info": {"title": "t"},
            "paths": {"/a": {"get": {}}},
            "components": {
                "schemas": {"S": {}},
                "parameters": {"P": {"name": "p", "in": "query", "schema": {}}},
                "requestBodies": {"B": {}},
                "securitySchemes": {"key": {"type": "apiKey"}},
                "pathItems": {"I": {}}
            }
        });
        for reference in [
            "#",
            "#/",
            "#/servers/0",
            "#/servers",
            "#/info",
            "#/security",
            "#/components/securitySchemes/key",
            "#/components/schemas",
            "#/components/parameters/P",
            "#/paths/~1a",
            "#/%73ervers/0",
        ] {
            assert_eq!(
                resolve(&document, reference, Kind::Schema),
                Err(RefError::OutOfScope(reference.into(), Kind::Schema)),
                "{reference}"
            );
        }
        assert_eq!(
            resolve(&document, "#/servers/0", Kind::Schema)
                .unwrap_err()
                .to_string(),
            "schema reference '#/servers/0' points outside the document's schemas"
        );
        assert!(resolve(&document, "#/components/parameters/P/schema", Kind::Schema).is_ok());
        assert!(resolve(&document, "#/components/parameters/P", Kind::Parameter).is_ok());
        assert!(resolve(&document, "#/components/requestBodies/B", Kind::RequestBody).is_ok());
        assert!(resolve(&document, "#/components/pathItems/I", Kind::PathItem).is_ok());
        assert!(resolve(&document, "#/paths/~1a", Kind::PathItem).is_ok());
        let scheme = "#/components/securitySchemes/key";
        assert!(resolve(&document, scheme, Kind::SecurityScheme).is_ok());
        assert_eq!(
            resolve(&document, "#/components/schemas/S", Kind::Response)
                .unwrap_err()
                .to_string(),
            "'#/components/schemas/S' points outside the document's responses (#/components/responses/)"
        );
        assert_eq!(
            resolve(&document, "#/components/schemas/S", Kind::Parameter)
                .unwrap_err()
                .to_string(),
            "'#/components/schemas/S' points outside the document's parameters (#/components/parameters/)"
        );
        assert_eq!(
            resolve(&document, "#/servers/0", Kind::RequestBody)
                .unwrap_err()
                .to_string(),
            "'#/servers/0' points outside the document's request bodies (#/components/requestBodies/)"
        );
        assert_eq!(
            resolve(&document, "#/paths/~1a/get", Kind::PathItem)
                .unwrap_err()
                .to_string(),
            "'#/paths/~1a/get' points outside the document's path items (#/components/pathItems/, #/paths/)"
        );
    }

    #[test]
    fn follow_ends_at_the_target_and_names_cycles_and_bad_refs() {
        let document = json!({"components": {"parameters": {
            "a": {"$ref": "#/components/parameters/b"},
            "b": {"name": "x"},
            "c": {"$ref": "#/components/parameters/d"},
            "d": {"$ref": "#/components/parameters/c"},
            "n": {"$ref": 5}
        }}});
        let reference = |r: &str| json!({"$ref": r});
        let a = reference("#/components/parameters/a");
        assert_eq!(
            follow(&document, &a, Kind::Parameter),
            Ok(&json!({"name": "x"}))
        );
        let c = reference("#/components/parameters/c");
        assert_eq!(
            follow(&document, &c, Kind::Parameter)
                .unwrap_err()
                .to_string(),
            "'#/components/parameters/c' is a $ref cycle"
        );
        let n = reference("#/components/parameters/n");
        assert_eq!(
            follow(&document, &n, Kind::Parameter)
                .unwrap_err()
                .to_string(),
            "$ref 5 is not a string"
        );
        let object = json!({"$ref": {"a": "b"}});
        assert_eq!(
            follow(&document, &object, Kind::Parameter),
            Err(RefError::NotString("{\"a\":\"b\"}".into()))
        );
    }
}
