//! The validation digest (CONTRACT Z11): what `mcp-manifest policy embed` writes into a route's
//! `authorization.validated` once Cedar's strict validation has passed, and what a load compares
//! to skip that validation.

use sha2::Sha256;
use xxhash_rust::xxh3::Xxh3;

use crate::hashing::{Feed, StreamHash};

/// The Cedar release whose strict validation a `validated` digest vouches for (CONTRACT Z11):
/// the version `Cargo.lock` pins (a test holds the two together).
pub const CEDAR_VERSION: &str = "4.14.1";

/// The digest a route's `authorization.validated` carries once `mcp-manifest policy embed`
/// has validated its policies (CONTRACT Z11): `xxh3:` and 32 lowercase hex digits (XXH3-128,
/// its canonical big-endian form) over the Cedar release, each tool's name and `inputSchema`
/// text in manifest order, and the policy text. `tools` gives each tool's name and the JSON
/// text of its `inputSchema`, as the manifest holds it; JSON whitespace outside strings is left out, so a manifest written
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
    digest_of::<Xxh3>(XXH3_PREFIX, tools, policies, None, Schemas::Compact)
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
    digest_of::<Xxh3>(
        XXH3_PREFIX,
        tools,
        policies,
        Some(json_form),
        Schemas::Compact,
    )
}

/// The digest a load compares with a route's `validated` (CONTRACT Z11, Z12): that of
/// [`validation_digest`] (with `json_form`, that of [`validation_digest_with_json`]).
///
/// When the route carries a digest, the schemas are first hashed as the manifest holds them,
/// without looking for whitespace: for a manifest written compact (as `mcp-manifest policy
/// embed --compact` writes it) the text as held is the text without whitespace, so that hash
/// is the digest, and the scan, which costs more than the hash itself, is left out. When it
/// does not match `validated`, the digest is computed as Z11 defines it. A `validated` that
/// starts `sha256:` (what releases before XXH3-128 wrote) is computed and compared with
/// SHA-256 over the same lines; every other one with XXH3-128. A `validated` equal to
/// the hash of schemas that do hold whitespace (only a digest written by hand can be) also
/// stands: the text as held determines the text without whitespace, so it names the same
/// schemas.
pub(crate) fn route_digest<'a, I>(
    validated: Option<&str>,
    tools: I,
    policies: &str,
    json_form: Option<&str>,
) -> String
where
    I: IntoIterator<Item = (&'a str, &'a [u8])> + Clone,
{
    // A digest written by an earlier release is SHA-256's, and is checked with it.
    match validated {
        Some(digest) if digest.starts_with(SHA256_PREFIX) => {
            digest_at_load::<Sha256, I>(SHA256_PREFIX, validated, tools, policies, json_form)
        }
        _ => digest_at_load::<Xxh3, I>(XXH3_PREFIX, validated, tools, policies, json_form),
    }
}

/// [`route_digest`] with the hash `H`, whose digests start with `prefix`.
fn digest_at_load<'a, H: StreamHash, I>(
    prefix: &str,
    validated: Option<&str>,
    tools: I,
    policies: &str,
    json_form: Option<&str>,
) -> String
where
    I: IntoIterator<Item = (&'a str, &'a [u8])> + Clone,
{
    if let Some(validated) = validated {
        let as_held = digest_of::<H>(prefix, tools.clone(), policies, json_form, Schemas::AsHeld);
        if as_held == validated {
            return as_held;
        }
    }
    digest_of::<H>(prefix, tools, policies, json_form, Schemas::Compact)
}

/// The prefix of a digest computed with XXH3-128, what `mcp-manifest policy embed` writes.
const XXH3_PREFIX: &str = "xxh3:";
/// The prefix of a digest computed with SHA-256, as releases before XXH3-128 wrote them.
const SHA256_PREFIX: &str = "sha256:";

/// How a schema's text is fed to the hash.
#[derive(Clone, Copy)]
enum Schemas {
    /// Without the whitespace outside its strings: the digest of CONTRACT Z11.
    Compact,
    /// As the manifest holds it (the same, for a compact schema).
    AsHeld,
}

/// The digest with the hash `H`: `prefix` and the lowercase hex of its output.
fn digest_of<'a, H: StreamHash>(
    prefix: &str,
    tools: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    policies: &str,
    json_form: Option<&str>,
    schemas: Schemas,
) -> String {
    let mut hasher = H::start();
    // A digest with a JSON form has its own first line: neither can pass for the other.
    let version = if json_form.is_some() { "v3" } else { "v2" };
    hasher.feed(format!("mcp-gateway authorization {version}\ncedar {CEDAR_VERSION}\n").as_bytes());
    let mut count = 0_usize;
    for (name, schema) in tools {
        // A name as a JSON string and a schema without whitespace outside its strings hold no
        // raw line break: each tool is one line.
        // Straight into the hash (no string made per tool); writing to it cannot fail.
        let _ = serde_json::to_writer(Feed(&mut hasher), name);
        hasher.feed(b": ");
        match schemas {
            Schemas::Compact => hash_compact(&mut hasher, schema),
            Schemas::AsHeld => hasher.feed(schema),
        }
        hasher.feed(b"\n");
        count += 1;
    }
    // The count ends the tools' part: no policy text can pass for a tool.
    hasher.feed(format!("tools {count}\n").as_bytes());
    if let Some(json) = json_form {
        // Its length first: no policy text can pass for the end of a JSON form.
        hasher.feed(format!("json {}\n", json.len()).as_bytes());
        hasher.feed(json.as_bytes());
    }
    hasher.feed(policies.as_bytes());
    format!("{prefix}{}", hex::encode(hasher.finish()))
}

/// Feeds `text`, JSON, to `hasher` without the whitespace (space, tab, line feed, carriage
/// return) outside its strings, in runs between the whitespace.
fn hash_compact(hasher: &mut impl StreamHash, text: &[u8]) {
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
                hasher.feed(&text[run..i]);
                while i < end && matches!(text[i], b' ' | b'\t' | b'\n' | b'\r') {
                    i += 1;
                }
                run = i;
            }
            _ => i += 1,
        }
    }
    hasher.feed(&text[run..end]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn z11_the_digest_names_the_cedar_release_the_lock_file_pins() {
        let lock = include_str!("../../../Cargo.lock");
        for package in ["cedar-policy", "cedar-policy-core"] {
            let entry = format!("name = \"{package}\"\nversion = \"{CEDAR_VERSION}\"\n");
            assert!(lock.contains(&entry), "{package} is not {CEDAR_VERSION}");
        }
    }

    const SCHEMA: &str = r#"{"type":"object","properties":{"amount":{"type":"number","description":"in EUR, \"gross\" "}},"required":["amount"]}"#;

    /// [`SCHEMA`] written out with line breaks and indentation, the same JSON.
    fn pretty_schema() -> String {
        let value: Value = serde_json::from_str(SCHEMA).unwrap();
        serde_json::to_string_pretty(&value).unwrap()
    }

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
        assert!(base.starts_with("xxh3:") && base.len() == 37, "{base}");
    }

    #[test]
    fn z11_the_digest_is_the_xxh3_128_of_the_lines_the_contract_names() {
        // Computed apart from this code (Python's xxhash package, `xxh3_128_hexdigest`, over
        // the lines written out).
        let pretty = pretty_schema();
        for schema in [SCHEMA, pretty.as_str()] {
            assert_eq!(
                validation_digest(
                    [("refund", schema.as_bytes()), ("x", b"{}".as_slice())],
                    "permit(principal, action, resource);"
                ),
                "xxh3:340d1e449d7f421a5d56ce726cf4592e"
            );
            assert_eq!(
                validation_digest_with_json([("refund", schema.as_bytes())], "p", "{}"),
                "xxh3:dabd48d2e1d1893291982d138c938449"
            );
        }
    }

    #[test]
    fn z11_a_sha256_digest_of_an_earlier_release_is_checked_with_sha256() {
        // Computed apart from this code (Python's hashlib over the same lines): what
        // `mcp-manifest policy embed` wrote before XXH3-128.
        let pretty = pretty_schema();
        let earlier = "sha256:b21c539284c230b9d909fd30c8914150dd95b5cdc5e539ebebeb82cfef307a54";
        let with_json = "sha256:c85ce5110ac2f01995259333e3ed2e70b2010e385f28ff54fc03a5fcee19471c";
        for schema in [SCHEMA, pretty.as_str()] {
            let tools = [("refund", schema.as_bytes()), ("x", b"{}".as_slice())];
            let policies = "permit(principal, action, resource);";
            assert_eq!(route_digest(Some(earlier), tools, policies, None), earlier);
            let refund = [("refund", schema.as_bytes())];
            assert_eq!(
                route_digest(Some(with_json), refund, "p", Some("{}")),
                with_json
            );
            // Stale (other policies): the SHA-256 digest of what the route holds, not equal.
            let stale = route_digest(Some(earlier), tools, "p", None);
            assert!(stale.starts_with("sha256:") && stale.len() == 71, "{stale}");
            assert_ne!(stale, earlier);
        }
        // Any other prefix, or none, is computed with XXH3-128.
        let tools = [("refund", SCHEMA.as_bytes()), ("x", b"{}".as_slice())];
        let policies = "permit(principal, action, resource);";
        for validated in [
            None,
            Some("sha512:00"),
            Some("b21c5392"),
            Some("SHA256:b21c"),
        ] {
            assert_eq!(
                route_digest(validated, tools, policies, None),
                "xxh3:340d1e449d7f421a5d56ce726cf4592e"
            );
        }
    }

    #[test]
    fn z11_whitespace_outside_strings_does_not_change_the_digest() {
        let pretty = pretty_schema();
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

    #[test]
    fn z11_a_load_finds_the_digest_of_a_compact_manifest_without_the_scan() {
        let pretty = pretty_schema();
        let as_held = |schema: &str, json: Option<&str>| {
            digest_of::<Xxh3>(
                XXH3_PREFIX,
                [("refund", schema.as_bytes())],
                "p",
                json,
                Schemas::AsHeld,
            )
        };
        let at_load = |validated: Option<&str>, schema: &str, json: Option<&str>| {
            route_digest(validated, [("refund", schema.as_bytes())], "p", json)
        };
        for json in [None, Some(r#"{"staticPolicies":{}}"#)] {
            let defined = match json {
                None => validation_digest([("refund", SCHEMA.as_bytes())], "p"),
                Some(json) => {
                    validation_digest_with_json([("refund", SCHEMA.as_bytes())], "p", json)
                }
            };
            // Compact: the schema as held is the schema without whitespace.
            assert_eq!(as_held(SCHEMA, json), defined);
            assert_eq!(at_load(Some(&defined), SCHEMA, json), defined);
            // Indented: the hash as held differs, and the digest is computed as defined.
            assert_ne!(as_held(&pretty, json), defined);
            assert_eq!(at_load(Some(&defined), &pretty, json), defined);
            // A stale or absent digest: the digest as defined, whatever the layout.
            let stale = format!("xxh3:{}", "0".repeat(32));
            for schema in [SCHEMA, pretty.as_str()] {
                assert_eq!(at_load(Some(&stale), schema, json), defined);
                assert_eq!(at_load(None, schema, json), defined);
            }
            // A digest written by hand over the indented text as held names the same schemas.
            let by_hand = as_held(&pretty, json);
            assert_eq!(at_load(Some(&by_hand), &pretty, json), by_hand);
            assert_eq!(at_load(Some(&by_hand), SCHEMA, json), defined);
        }
    }
}
