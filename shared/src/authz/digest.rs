//! The validation digest (CONTRACT Z11): what `mcp-manifest policy embed` writes into a route's
//! `authorization.validated` once Cedar's strict validation has passed, and what a load compares
//! to skip that validation.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::schema::CedarType;

/// The Cedar release whose strict validation a `validated` digest vouches for (CONTRACT Z11):
/// the version `Cargo.lock` pins (a test holds the two together).
pub const CEDAR_VERSION: &str = "4.14.1";

/// The digest a route's `authorization.validated` carries once `mcp-manifest policy embed`
/// has validated its policies (CONTRACT Z11): `sha256:` and 64 lowercase hex digits, over the
/// Cedar release, each tool's name and Cedar input type in manifest order, and the policy
/// text. Everything strict validation reads is in it, so a digest that matches stands for a
/// validation that passed; any change (a policy, a tool, a property's type, a new Cedar)
/// makes it stale and the load validates again.
#[must_use]
pub fn validation_digest<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a CedarType)>,
    policies: &str,
) -> String {
    let mut lines = String::new();
    let mut count = 0_usize;
    for (name, ty) in tools {
        let _ = writeln!(lines, "{}: {}", Value::from(name), ty.digest_text());
        count += 1;
    }
    // The count ends the tools' part: no policy text can pass for a tool.
    let text =
        format!("mcp-gateway authorization v1\ncedar {CEDAR_VERSION}\ntools {count}\n{lines}");
    let mut hasher = Sha256::new();
    hasher.update(text.as_bytes());
    hasher.update(b"\n");
    hasher.update(policies.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
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

    #[test]
    fn z11_the_digest_changes_with_each_thing_validation_reads() {
        let record = |ty: CedarType, required: bool| {
            CedarType::Record(vec![super::super::schema::Attribute {
                name: "amount".into(),
                ty,
                required,
            }])
        };
        let base = validation_digest([("refund", &record(CedarType::Decimal, true))], "p");
        assert_eq!(
            base,
            validation_digest([("refund", &record(CedarType::Decimal, true))], "p")
        );
        for other in [
            validation_digest([("refund", &record(CedarType::Long, true))], "p"),
            validation_digest([("refund", &record(CedarType::Decimal, false))], "p"),
            validation_digest([("refunds", &record(CedarType::Decimal, true))], "p"),
            validation_digest([("refund", &record(CedarType::Decimal, true))], "p "),
            validation_digest(
                [
                    ("refund", &record(CedarType::Decimal, true)),
                    ("x", &CedarType::Record(Vec::new())),
                ],
                "p",
            ),
        ] {
            assert_ne!(base, other);
        }
        assert!(base.starts_with("sha256:") && base.len() == 71);
    }
}
