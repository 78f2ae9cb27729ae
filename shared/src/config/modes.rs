//! The configuration's enumerations: routing mode (CONTRACT P1), profile (R3) and registry
//! source (R2).

use std::fmt;

/// How the route is taken from the URL (CONTRACT P1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutingMode {
    /// The endpoint path already names the route, e.g. `/mcp/core` (CONTRACT P4).
    Fixed,
    /// The endpoint path is a base and the next segment is the route key (CONTRACT P3).
    Dynamic,
}

/// Which registry sources a deployment may use (CONTRACT R3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Try the configured source, fall back to the baked sample manifest on its failure.
    Local,
    /// The configured source only.
    Prod,
}

/// Where the registry snapshot comes from (CONTRACT R2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrySource {
    /// `baked:NAME`: a manifest from `manifests/` compiled into the binary.
    Baked(String),
    /// `file:PATH`: a manifest file on the function's file system.
    File(String),
    /// `s3://bucket/key`.
    S3 {
        /// The bucket name.
        bucket: String,
        /// The object key.
        key: String,
    },
    /// `http://…` or `https://…`: a Tool Service manifest endpoint.
    Http(String),
}

impl RegistrySource {
    /// Parses a `MCP_REGISTRY_SOURCE` value.
    ///
    /// # Errors
    /// A message naming the accepted forms when the value has none of them.
    pub fn parse(value: &str) -> Result<Self, String> {
        if let Some(name) = value.strip_prefix("baked:") {
            if name.is_empty() {
                return Err("baked: needs a manifest name, e.g. baked:sample".into());
            }
            return Ok(Self::Baked(name.into()));
        }
        if let Some(path) = value.strip_prefix("file:") {
            if path.is_empty() {
                return Err("file: needs a path".into());
            }
            return Ok(Self::File(path.into()));
        }
        if let Some(rest) = value.strip_prefix("s3://") {
            return match rest.split_once('/') {
                Some((bucket, key)) if !bucket.is_empty() && !key.is_empty() => Ok(Self::S3 {
                    bucket: bucket.into(),
                    key: key.into(),
                }),
                _ => Err("s3:// needs a bucket and a key, e.g. s3://bucket/manifest.json".into()),
            };
        }
        if value.starts_with("https://") || value.starts_with("http://") {
            return Ok(Self::Http(value.into()));
        }
        Err("expected s3://bucket/key, https://…, http://…, file:PATH or baked:NAME".into())
    }
}

impl fmt::Display for RegistrySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Baked(name) => write!(f, "baked:{name}"),
            Self::File(path) => write!(f, "file:{path}"),
            Self::S3 { bucket, key } => write!(f, "s3://{bucket}/{key}"),
            Self::Http(url) => f.write_str(url),
        }
    }
}
