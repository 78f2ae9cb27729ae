//! Secret references (CONTRACT M5 `REF`): a Secrets Manager secret, an SSM parameter or an
//! environment variable, parsed and shown without their ARN (CONTRACT X12). Below the
//! registry, so the gateway's configuration (`MCP_TASK_KEY`) and the manifest's outbound
//! credentials parse the same forms.

use std::fmt;

/// A secret reference (CONTRACT M5 `REF`): where the secret is read, and the top-level string
/// field of a JSON secret to take (`#jsonKey`), when one is named.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SecretRef {
    /// Where the secret is read.
    pub source: SecretSource,
    /// `#<jsonKey>` of a Secrets Manager reference.
    pub json_key: Option<String>,
}

/// Where a secret is read (CONTRACT M5).
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum SecretSource {
    /// A Secrets Manager secret, read with `GetSecretValue`.
    SecretsManager(AwsArn),
    /// An SSM parameter, read with `GetParameter` and decryption.
    Parameter(AwsArn),
    /// A process environment variable, for local runs.
    Env(String),
}

/// A Secrets Manager secret or SSM parameter ARN with its parts.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct AwsArn {
    /// The whole ARN (without any `#jsonKey`): the `SecretId` or `Name` of the read.
    pub arn: String,
    /// `aws`, `aws-cn` or `aws-us-gov`.
    pub partition: String,
    /// The signing region and the regional endpoint's.
    pub region: String,
}

/// Never the ARN, account or region: a reference is shown as its kind only (CONTRACT X12).
impl fmt::Debug for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.source.fmt(f)?;
        if self.json_key.is_some() {
            f.write_str("#<key>")?;
        }
        Ok(())
    }
}

impl fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SecretsManager(_) => "<secretsmanager secret>",
            Self::Parameter(_) => "<ssm parameter>",
            Self::Env(_) => "<env variable>",
        })
    }
}

impl fmt::Debug for AwsArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<arn>")
    }
}

/// Whether `region` is an AWS region name such as `eu-west-1`.
pub(crate) fn is_region(region: &str) -> bool {
    let pieces: Vec<&str> = region.split('-').collect();
    pieces.len() >= 3
        && pieces.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        && pieces
            .last()
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `partition`, `region` and `account` make a well-formed ARN's middle: a known
/// partition with one of its regions, and a 12-digit account (CONTRACT M4, M5).
#[must_use]
pub(crate) fn is_partition_region_account(partition: &str, region: &str, account: &str) -> bool {
    let partition_ok = match partition {
        "aws" => !region.starts_with("cn-") && !region.starts_with("us-gov-"),
        "aws-cn" => region.starts_with("cn-"),
        "aws-us-gov" => region.starts_with("us-gov-"),
        _ => false,
    };
    partition_ok
        && is_region(region)
        && account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
}

/// The AWS region an endpoint's host names (`<api>.execute-api.<region>.amazonaws.com`), when
/// it names one.
#[must_use]
pub(crate) fn region_of_host(host: &str) -> Option<&str> {
    let labels: Vec<&str> = host.split('.').collect();
    let aws = host.ends_with(".amazonaws.com") || host.ends_with(".amazonaws.com.cn");
    aws.then(|| labels.iter().rev().copied().find(|label| is_region(label)))
        .flatten()
}

/// Whether `name` is a portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_env_name(name: &str) -> bool {
    name.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl SecretRef {
    /// Parses a `REF` (CONTRACT M5): `arn:<partition>:secretsmanager:<region>:<account>:secret:<name>[#<jsonKey>]`,
    /// `arn:<partition>:ssm:<region>:<account>:parameter/<name>` or `env:<NAME>`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(name) = text.strip_prefix("env:") {
            return is_env_name(name).then(|| Self {
                source: SecretSource::Env(name.to_owned()),
                json_key: None,
            });
        }
        let (arn, json_key) = match text.split_once('#') {
            Some((arn, key)) if !key.is_empty() => (arn, Some(key.to_owned())),
            Some(_) => return None,
            None => (text, None),
        };
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        let ["arn", partition, service, region, account, resource] = parts[..] else {
            return None;
        };
        if !is_partition_region_account(partition, region, account) {
            return None;
        }
        let named = |name: &str| {
            !name.is_empty()
                && name.len() <= 2048
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_+=.@-".contains(&b))
        };
        let parsed = AwsArn {
            arn: arn.to_owned(),
            partition: partition.to_owned(),
            region: region.to_owned(),
        };
        let source = match (service, json_key.is_some()) {
            ("secretsmanager", _) if resource.strip_prefix("secret:").is_some_and(named) => {
                SecretSource::SecretsManager(parsed)
            }
            ("ssm", false) if resource.strip_prefix("parameter/").is_some_and(named) => {
                SecretSource::Parameter(parsed)
            }
            _ => return None,
        };
        Some(Self { source, json_key })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CONTRACT M5: the three REF forms, and what none of them is.
    #[test]
    fn m5_secret_refs_of_the_three_forms() {
        let sm = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tools/api-AbCdEf";
        let parsed = SecretRef::parse(sm).unwrap();
        assert!(
            matches!(&parsed.source, SecretSource::SecretsManager(a) if a.arn == sm && a.region == "eu-west-1")
        );
        assert_eq!(parsed.json_key, None);
        let keyed = SecretRef::parse(&format!("{sm}#api_key")).unwrap();
        assert_eq!(keyed.json_key.as_deref(), Some("api_key"));
        let ssm = "arn:aws-cn:ssm:cn-north-1:123456789012:parameter/tools/key";
        assert!(matches!(
            SecretRef::parse(ssm).unwrap().source,
            SecretSource::Parameter(_)
        ));
        assert_eq!(
            SecretRef::parse("env:TOOL_KEY").unwrap().source,
            SecretSource::Env("TOOL_KEY".into())
        );
        for bad in [
            "",
            "env:",
            "env:1X",
            "env:A-B",
            "TOOL_KEY",
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:",
            "arn:aws:secretsmanager:eu-west-1:12345678901:secret:x",
            "arn:aws:secretsmanager:cn-north-1:123456789012:secret:x",
            "arn:aws:secretsmanager:eu-west-1:123456789012:parameter/x",
            "arn:aws:ssm:eu-west-1:123456789012:parameter/x#k",
            "arn:aws:ssm:eu-west-1:123456789012:secret:x",
            "arn:aws:s3:::bucket",
            &format!("{sm}#"),
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:a b",
        ] {
            assert_eq!(SecretRef::parse(bad), None, "{bad}");
        }
    }

    /// CONTRACT X12: a reference never shows its ARN, account or region.
    #[test]
    fn x12_a_reference_is_shown_as_its_kind_only() {
        let r =
            SecretRef::parse("arn:aws:secretsmanager:eu-west-1:123456789012:secret:x#k").unwrap();
        let shown = format!("{r:?}");
        assert_eq!(shown, "<secretsmanager secret>#<key>");
    }
}
