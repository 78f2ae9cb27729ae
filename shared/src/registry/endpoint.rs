//! Where a tool's calls go (CONTRACT X4, M4): an HTTP Tool Service URL or a Lambda function ARN,
//! parsed once at load.

use std::fmt;

/// A tool's Tool Service: `_meta.endpoint` parsed at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An absolute http(s) URL (CONTRACT X4; a REST-shaped tool's template, M2).
    Http(url::Url),
    /// A Lambda function, invoked with the Invoke API (CONTRACT M4, X10). Boxed: a route keeps
    /// one endpoint per tool for its life, and most are URLs (88 bytes against 120).
    Lambda(Box<FunctionArn>),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(url) => url.fmt(f),
            Self::Lambda(function) => function.fmt(f),
        }
    }
}

/// A Lambda function ARN, `arn:<partition>:lambda:<region>:<account>:function:<name>[:<qualifier>]`
/// (CONTRACT M4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionArn {
    /// `aws`, `aws-cn` or `aws-us-gov`.
    pub partition: String,
    /// The function's region, e.g. `eu-west-1`: the Invoke API's endpoint and signing region.
    pub region: String,
    /// The 12-digit account id.
    pub account: String,
    /// The function name.
    pub name: String,
    /// `$LATEST`, a version number or an alias, when the ARN names one.
    pub qualifier: Option<String>,
}

impl FunctionArn {
    /// Parses a function ARN.
    ///
    /// # Errors
    /// `()` when `arn` is not a well-formed function ARN of a known partition.
    #[expect(
        clippy::result_unit_err,
        reason = "the caller words the one problem itself"
    )]
    pub fn parse(arn: &str) -> Result<Self, ()> {
        let parts: Vec<&str> = arn.split(':').collect();
        let (partition, region, account, name, qualifier) = match parts[..] {
            [
                "arn",
                partition,
                "lambda",
                region,
                account,
                "function",
                name,
            ] => (partition, region, account, name, None),
            [
                "arn",
                partition,
                "lambda",
                region,
                account,
                "function",
                name,
                qualifier,
            ] => (partition, region, account, name, Some(qualifier)),
            _ => return Err(()),
        };
        let word = |s: &str, max: usize| {
            (1..=max).contains(&s.len())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        };
        // A version is a number from 1 without leading zeros; an alias starts with a letter,
        // `-` or `_`.
        let qualifier_ok = qualifier.is_none_or(|q| {
            q == "$LATEST"
                || (q.bytes().all(|b| b.is_ascii_digit())
                    && (1..=10).contains(&q.len())
                    && !q.starts_with('0'))
                || (word(q, 128) && !q.as_bytes()[0].is_ascii_digit())
        });
        // Each partition's regions: `cn-…` in aws-cn, `us-gov-…` in aws-us-gov, neither in aws.
        if !super::outbound_auth::is_partition_region_account(partition, region, account)
            || !word(name, 64)
            || !qualifier_ok
        {
            return Err(());
        }
        Ok(Self {
            partition: partition.into(),
            region: region.into(),
            account: account.into(),
            name: name.into(),
            qualifier: qualifier.map(Into::into),
        })
    }

    /// The ARN without its qualifier: the Invoke API's `FunctionName`.
    #[must_use]
    pub fn unqualified(&self) -> String {
        format!(
            "arn:{}:lambda:{}:{}:function:{}",
            self.partition, self.region, self.account, self.name
        )
    }

    /// The Invoke API's regional endpoint, `https://lambda.<region>.amazonaws.com` (`.com.cn` in
    /// China).
    #[must_use]
    pub fn regional_endpoint(&self) -> String {
        let suffix = if self.partition == "aws-cn" {
            "amazonaws.com.cn"
        } else {
            "amazonaws.com"
        };
        format!("https://lambda.{}.{suffix}", self.region)
    }
}

impl fmt::Display for FunctionArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.unqualified())?;
        if let Some(qualifier) = &self.qualifier {
            write!(f, ":{qualifier}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m4_well_formed_function_arns_parse() {
        let arn =
            FunctionArn::parse("arn:aws:lambda:eu-west-1:123456789012:function:hr-tools").unwrap();
        assert_eq!(
            (arn.region.as_str(), arn.account.as_str(), arn.name.as_str()),
            ("eu-west-1", "123456789012", "hr-tools")
        );
        assert_eq!(arn.qualifier, None);
        assert_eq!(
            arn.regional_endpoint(),
            "https://lambda.eu-west-1.amazonaws.com"
        );
        for ok in [
            "arn:aws:lambda:us-east-1:123456789012:function:f:$LATEST",
            "arn:aws:lambda:us-east-1:123456789012:function:f:42",
            "arn:aws:lambda:us-east-1:123456789012:function:f:live_v2-blue",
            "arn:aws-cn:lambda:cn-north-1:123456789012:function:f",
            "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:f",
        ] {
            let arn = FunctionArn::parse(ok).unwrap();
            assert_eq!(arn.to_string(), ok);
        }
        assert_eq!(
            FunctionArn::parse("arn:aws-cn:lambda:cn-north-1:123456789012:function:f")
                .unwrap()
                .regional_endpoint(),
            "https://lambda.cn-north-1.amazonaws.com.cn"
        );
    }

    #[test]
    fn m4_malformed_arns_are_refused() {
        for bad in [
            "arn:aws:lambda:us-east-1:123456789012:function",
            "arn:aws:lambda:us-east-1:123456789012:function:",
            "arn:aws:lambda:us-east-1:12345678901:function:f",
            "arn:aws:lambda:us-east-1:1234567890123:function:f",
            "arn:aws:lambda:us-east-1:12345678901x:function:f",
            "arn:aws:s3:us-east-1:123456789012:function:f",
            "arn:aws:lambda:us-east-1:123456789012:layer:f",
            "arn:aws:lambda:US-EAST-1:123456789012:function:f",
            "arn:aws:lambda:useast1:123456789012:function:f",
            "arn:evil:lambda:us-east-1:123456789012:function:f",
            "arn:aws:lambda:us-east-1:123456789012:function:f/g",
            "arn:aws:lambda:us-east-1:123456789012:function:f:1live",
            "arn:aws:lambda:us-east-1:123456789012:function:f:a:b",
            "arn:aws:lambda:us-east-1:123456789012:function:f:",
            "arn:aws:lambda:us-east-1:123456789012:function:f.g",
            "arn:aws:lambda:us-east-1:123456789012:function:f:0",
            "arn:aws:lambda:us-east-1:123456789012:function:f:01",
            "arn:aws-cn:lambda:us-east-1:123456789012:function:f",
            "arn:aws:lambda:us-gov-west-1:123456789012:function:f",
            "arn:aws:lambda:cn-north-1:123456789012:function:f",
            &format!(
                "arn:aws:lambda:us-east-1:123456789012:function:{}",
                "f".repeat(65)
            ),
        ] {
            assert!(FunctionArn::parse(bad).is_err(), "{bad}");
        }
    }
}
