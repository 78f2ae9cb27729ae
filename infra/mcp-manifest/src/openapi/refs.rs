//! `$ref` resolution inside the document: local references (`#/components/...`) as JSON
//! pointers (percent-decoded, then `~1` and `~0` unescaped). A reference to another file or URL
//! is not followed: the operation that needs it is skipped.

use serde_json::Value;

/// The most `$ref` hops followed for one parameter, request body or path item.
const MAX_HOPS: usize = 32;

/// Why a `$ref` gives no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefError {
    /// A reference to another document.
    External(String),
    /// A local reference that names nothing, or a chain of references that loops.
    Unresolved(String),
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
        }
    }
}

/// The value a local `$ref` names in `document`.
///
/// # Errors
/// [`RefError::External`] for a reference outside the document, [`RefError::Unresolved`] for a
/// pointer to nothing.
pub(crate) fn resolve<'a>(document: &'a Value, reference: &str) -> Result<&'a Value, RefError> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err(RefError::External(reference.to_string()));
    };
    let pointer = percent_decode(fragment);
    if pointer.is_empty() {
        return Ok(document);
    }
    if !pointer.starts_with('/') {
        return Err(RefError::Unresolved(reference.to_string()));
    }
    document
        .pointer(&pointer)
        .ok_or_else(|| RefError::Unresolved(reference.to_string()))
}

/// `value` itself, or what its `$ref` chain ends at (a parameter, request body or path item
/// given as a reference).
///
/// # Errors
/// As [`resolve`]; a chain that loops is [`RefError::Unresolved`].
pub(crate) fn follow<'a>(document: &'a Value, value: &'a Value) -> Result<&'a Value, RefError> {
    let mut current = value;
    for _ in 0..MAX_HOPS {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => current = resolve(document, reference)?,
            None => return Ok(current),
        }
    }
    Err(RefError::Unresolved(
        value
            .get("$ref")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    ))
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
        let document =
            json!({"paths": {"/pets/{id}": {"get": 1}}, "components": {"schemas": {"a~b": 2}}});
        assert_eq!(
            resolve(&document, "#/paths/~1pets~1%7Bid%7D/get"),
            Ok(&json!(1))
        );
        assert_eq!(
            resolve(&document, "#/components/schemas/a~0b"),
            Ok(&json!(2))
        );
        assert_eq!(
            resolve(&document, "#/components/schemas/nope"),
            Err(RefError::Unresolved("#/components/schemas/nope".into()))
        );
        assert_eq!(
            resolve(&document, "other.yaml#/x"),
            Err(RefError::External("other.yaml#/x".into()))
        );
    }

    #[test]
    fn follow_ends_at_the_target_and_refuses_loops() {
        let document = json!({"a": {"$ref": "#/b"}, "b": {"name": "x"}, "c": {"$ref": "#/c"}});
        assert_eq!(
            follow(&document, &json!({"$ref": "#/a"})),
            Ok(&json!({"name": "x"}))
        );
        assert!(follow(&document, &json!({"$ref": "#/c"})).is_err());
    }
}
