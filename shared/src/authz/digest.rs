//! The validation digest (CONTRACT Z11): what `mcp-manifest policy embed` writes into a route's
//! `authorization.validated` once Cedar's strict validation has passed, and what a load compares
//! to skip that validation.

use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// The Cedar release whose strict validation a `validated` digest vouches for (CONTRACT Z11):
/// the version `Cargo.lock` pins (a test holds the two together).
pub const CEDAR_VERSION: &str = "4.14.1";

/// The digest a route's `authorization.validated` carries once `mcp-manifest policy embed`
/// has validated its policies (CONTRACT Z11): `sha256:` and 64 lowercase hex digits, over the
/// Cedar release, each tool's name and `inputSchema` text in manifest order, and the policy
/// text. `tools` gives each tool's name and the JSON text of its `inputSchema`, as the
/// manifest holds it; JSON whitespace outside strings is left out, so a manifest written
/// compact or indented digests alike. Everything strict validation reads is in it (the Cedar
/// types of Z2 are read from the schemas), so a digest that matches stands for a validation
/// that passed; any change (a policy, a tool, anything in an `inputSchema`, a new Cedar) makes
/// it stale and the load validates again. A load computes it without parsing a schema: about
/// a hash of the schemas' bytes.
#[must_use]
pub fn validation_digest<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    policies: &str,
) -> String {
    digest_of(tools, policies, None)
}

/// [`validation_digest`] of a route whose `authorization` also carries `policiesJson`
/// (CONTRACT Z12), Cedar's JSON form of the same policies: the digest covers that text as well
/// (its length, then its bytes as the string holds them), so a load that finds it matching
/// may parse the JSON form in place of the text.
#[must_use]
pub fn validation_digest_with_json<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    policies: &str,
    json_form: &str,
) -> String {
    digest_of(tools, policies, Some(json_form))
}

fn digest_of<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    policies: &str,
    json_form: Option<&str>,
) -> String {
    let mut hasher = Sha256::new();
    // A digest with a JSON form has its own first line: neither can pass for the other.
    let version = if json_form.is_some() { "v3" } else { "v2" };
    hasher
        .update(format!("mcp-gateway authorization {version}\ncedar {CEDAR_VERSION}\n").as_bytes());
    let mut count = 0_usize;
    for (name, schema) in tools {
        // A name as a JSON string and a schema without whitespace outside its strings hold no
        // raw line break: each tool is one line.
        hasher.update(Value::from(name).to_string().as_bytes());
        hasher.update(b": ");
        hash_compact(&mut hasher, schema);
        hasher.update(b"\n");
        count += 1;
    }
    // The count ends the tools' part: no policy text can pass for a tool.
    hasher.update(format!("tools {count}\n").as_bytes());
    if let Some(json) = json_form {
        // Its length first: no policy text can pass for the end of a JSON form.
        hasher.update(format!("json {}\n", json.len()).as_bytes());
        hasher.update(json.as_bytes());
    }
    hasher.update(policies.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// Feeds `text`, JSON, to `hasher` without the whitespace (space, tab, line feed, carriage
/// return) outside its strings, in runs between the whitespace.
fn hash_compact(hasher: &mut Sha256, text: &[u8]) {
    let end = text.len();
    let (mut run, mut i) = (0, 0);
    while i < end {
        match text[i] {
            b'"' => {
                // To the closing quote: the next quote not taken by a backslash.
                i += 1;
                while let Some(k) = memchr::memchr2(b'"', b'\\', &text[i.min(end)..]) {
                    i += k;
                    if text[i] == b'"' {
                        break;
                    }
                    i += 2;
                }
                i = (i + 1).min(end);
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                hasher.update(&text[run..i]);
                while i < end && matches!(text[i], b' ' | b'\t' | b'\n' | b'\r') {
                    i += 1;
                }
                run = i;
            }
            _ => i += 1,
        }
    }
    hasher.update(&text[run..end]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z11_the_digest_names_the_cedar_release_the_lock_file_pins() {
        let lock = include_str!("../../../Cargo.lock");
        for package in ["cedar-policy", "cedar-policy-core"] {
            let entry = format!("name = \"{package}\"\nversion = \"{CEDAR_VERSION}\"\n");
            assert!(lock.contains(&entry), "{package} is not {CEDAR_VERSION}");
        }
    }

    const SCHEMA: &str = r#"{"type":"object","properties":{"amount":{"type":"number","description":"in EUR, \"gross\" "}},"required":["amount"]}"#;

    #[test]
    fn z11_the_digest_changes_with_each_thing_validation_reads() {
        let digest = |tools: &[(&str, &str)], policies: &str| {
            validation_digest(tools.iter().map(|(n, s)| (*n, s.as_bytes())), policies)
        };
        let base = digest(&[("refund", SCHEMA)], "p");
        assert_eq!(base, digest(&[("refund", SCHEMA)], "p"));
        for other in [
            digest(&[("refund", &SCHEMA.replace("number", "integer"))], "p"),
            digest(&[("refund", &SCHEMA.replace(r#""amount"]"#, "]"))], "p"),
            digest(&[("refund", &SCHEMA.replace("EUR", "KRW"))], "p"),
            digest(&[("refund", &SCHEMA.replace("in EUR", "in  EUR"))], "p"),
            digest(&[("refunds", SCHEMA)], "p"),
            digest(&[("refund", SCHEMA)], "p "),
            digest(&[("refund", SCHEMA), ("x", "{}")], "p"),
            digest(&[("refund", "{}"), ("x", SCHEMA)], "p"),
        ] {
            assert_ne!(base, other);
        }
        assert!(base.starts_with("sha256:") && base.len() == 71);
    }

    #[test]
    fn z11_whitespace_outside_strings_does_not_change_the_digest() {
        let value: Value = serde_json::from_str(SCHEMA).unwrap();
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let spaced = "\r\n { \"type\" :\t\"object\" , \"properties\" : { \"amount\" : { \"type\" : \"number\" , \"description\" : \"in EUR, \\\"gross\\\" \" } } , \"required\" : [ \"amount\" ] } \n";
        let base = validation_digest([("refund", SCHEMA.as_bytes())], "p");
        assert_eq!(
            base,
            validation_digest([("refund", pretty.as_bytes())], "p")
        );
        assert_eq!(
            base,
            validation_digest([("refund", spaced.as_bytes())], "p")
        );
        // A string that ends in an escaped backslash closes at the quote after it.
        assert_eq!(
            validation_digest([("t", br#"{"d":"a\\", "e":1}"#.as_slice())], "p"),
            validation_digest([("t", br#"{"d":"a\\","e":1}"#.as_slice())], "p")
        );
        // Text cut inside a string or an escape ends the scan.
        let _ = validation_digest([("t", br#"{"d":"a\"#.as_slice())], "p");
    }
}
