//! Snapshot sources and the cold-start load (CONTRACT R1, R2, R3).
//!
//! A source only fetches bytes; parsing, validation (R5) and compilation are shared. Every fetch
//! is bounded in time (`MCP_REGISTRY_TIMEOUT_MS`) and size (`MCP_MAX_MANIFEST_BYTES`).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use super::{ManifestProblem, Snapshot, compile_manifest};
use crate::config::{Config, Profile, RegistrySource};

/// A boxed, sendable future (sources are used at load time only, so boxing costs nothing that
/// matters).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a snapshot could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The source could not be read (missing file or object, unknown baked name, unreachable,
    /// access denied, non-2xx answer).
    #[error("registry source {source_name} is unreadable: {reason}")]
    Unreadable {
        /// The source, as configured (`file:/x.json`).
        source_name: String,
        /// What failed.
        reason: String,
    },
    /// The source did not deliver within `MCP_REGISTRY_TIMEOUT_MS`.
    #[error("registry source {source_name} did not answer within {timeout_ms} ms")]
    Timeout {
        /// The source, as configured.
        source_name: String,
        /// The load timeout in ms.
        timeout_ms: u64,
    },
    /// The manifest is larger than `MCP_MAX_MANIFEST_BYTES`.
    #[error("manifest from {source_name} exceeds {limit_bytes} bytes")]
    TooLarge {
        /// The source, as configured.
        source_name: String,
        /// The limit in bytes.
        limit_bytes: usize,
    },
    /// The manifest is not JSON.
    #[error("manifest from {source_name} is not JSON: {reason}")]
    NotJson {
        /// The source, as configured.
        source_name: String,
        /// The parser's message.
        reason: String,
    },
    /// The manifest breaks CONTRACT R5; every problem is listed.
    #[error("manifest from {source_name} is invalid: {}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// The source, as configured.
        source_name: String,
        /// Every problem, with its JSON path.
        problems: Vec<ManifestProblem>,
    },
}

impl RegistryError {
    /// Whether the source could not be reached at all (as opposed to delivering a bad manifest).
    #[must_use]
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            Self::Unreadable { .. } | Self::Timeout { .. } | Self::TooLarge { .. }
        )
    }
}

/// Where manifest bytes come from (CONTRACT R2). Implementations do I/O only.
pub trait SnapshotSource: Send + Sync {
    /// The source as configured, for messages (`baked:sample`, `s3://bucket/key`).
    fn name(&self) -> String;

    /// Reads the whole manifest document, at most `max_bytes` long.
    ///
    /// # Errors
    /// [`RegistryError::Unreadable`] or [`RegistryError::TooLarge`].
    fn fetch(&self, max_bytes: usize) -> BoxFuture<'_, Result<Bytes, RegistryError>>;
}

/// Manifests compiled into the binary, by name (`baked:NAME`).
const BAKED: &[(&str, &str)] = &[("sample", include_str!("../../../manifests/sample.json"))];

/// The text of a baked manifest, `None` for an unknown name.
#[must_use]
pub fn baked_manifest(name: &str) -> Option<&'static str> {
    BAKED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

fn unreadable(source_name: String, reason: impl Into<String>) -> RegistryError {
    RegistryError::Unreadable {
        source_name,
        reason: reason.into(),
    }
}

fn check_size(name: &str, len: usize, max_bytes: usize) -> Result<(), RegistryError> {
    if len > max_bytes {
        return Err(RegistryError::TooLarge {
            source_name: name.into(),
            limit_bytes: max_bytes,
        });
    }
    Ok(())
}

/// `baked:NAME`: a manifest from `manifests/` compiled into the binary.
#[derive(Debug, Clone)]
pub struct BakedSource(pub String);

impl SnapshotSource for BakedSource {
    fn name(&self) -> String {
        format!("baked:{}", self.0)
    }

    fn fetch(&self, _max_bytes: usize) -> BoxFuture<'_, Result<Bytes, RegistryError>> {
        Box::pin(async move {
            baked_manifest(&self.0)
                .map(|text| Bytes::from_static(text.as_bytes()))
                .ok_or_else(|| {
                    let known: Vec<&str> = BAKED.iter().map(|(n, _)| *n).collect();
                    unreadable(
                        self.name(),
                        format!(
                            "no baked manifest named '{}' (baked: {})",
                            self.0,
                            known.join(", ")
                        ),
                    )
                })
        })
    }
}

/// `file:PATH`: a manifest on the local file system.
#[derive(Debug, Clone)]
pub struct FileSource(pub String);

impl SnapshotSource for FileSource {
    fn name(&self) -> String {
        format!("file:{}", self.0)
    }

    fn fetch(&self, max_bytes: usize) -> BoxFuture<'_, Result<Bytes, RegistryError>> {
        let (name, path) = (self.name(), self.0.clone());
        Box::pin(async move {
            // One trip to the blocking pool for the size check and the read.
            tokio::task::spawn_blocking(move || read_file(&name, &path, max_bytes))
                .await
                .map_err(|e| unreadable(self.name(), e.to_string()))?
        })
    }
}

/// Reads the file at `path`, refusing one over `max_bytes` before reading it, and reading at
/// most one byte more should it grow meanwhile.
fn read_file(name: &str, path: &str, max_bytes: usize) -> Result<Bytes, RegistryError> {
    use std::io::Read;
    let io_error = |e: std::io::Error| unreadable(name.into(), e.to_string());
    let file = std::fs::File::open(path).map_err(io_error)?;
    let len = usize::try_from(file.metadata().map_err(io_error)?.len()).unwrap_or(usize::MAX);
    check_size(name, len, max_bytes)?;
    let mut bytes = Vec::with_capacity(len);
    file.take(
        u64::try_from(max_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1),
    )
    .read_to_end(&mut bytes)
    .map_err(io_error)?;
    check_size(name, bytes.len(), max_bytes)?;
    Ok(Bytes::from(bytes))
}

/// `https://…` / `http://…`: a Tool Service manifest endpoint, fetched with `GET`.
#[derive(Debug, Clone)]
pub struct HttpSource {
    url: String,
    client: reqwest::Client,
}

impl HttpSource {
    /// A source for `url` with its own client (no redirects, no proxy from the environment).
    ///
    /// # Errors
    /// The reqwest builder's error when TLS cannot be set up.
    pub fn new(url: impl Into<String>) -> Result<Self, reqwest::Error> {
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()?;
        Ok(Self {
            url: url.into(),
            client,
        })
    }
}

impl SnapshotSource for HttpSource {
    fn name(&self) -> String {
        self.url.clone()
    }

    fn fetch(&self, max_bytes: usize) -> BoxFuture<'_, Result<Bytes, RegistryError>> {
        Box::pin(async move {
            let fail = |reason: String| unreadable(self.name(), reason);
            let mut response = self
                .client
                .get(&self.url)
                .header(http::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| {
                    fail(if e.is_connect() {
                        "connection failed".into()
                    } else {
                        "the HTTP exchange failed".into()
                    })
                })?;
            let status = response.status();
            if !status.is_success() {
                return Err(fail(format!("HTTP {}", status.as_u16())));
            }
            if let Some(len) = response.content_length() {
                check_size(
                    &self.name(),
                    usize::try_from(len).unwrap_or(usize::MAX),
                    max_bytes,
                )?;
            }
            let mut body = BytesMut::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|_| fail("the response body broke off".into()))?
            {
                check_size(&self.name(), body.len() + chunk.len(), max_bytes)?;
                body.extend_from_slice(&chunk);
            }
            Ok(body.freeze())
        })
    }
}

/// `s3://bucket/key`: S3 `GetObject` with the function's role (the standard AWS environment
/// and credential chain; `AWS_ENDPOINT_URL_S3` points it at another S3-protocol server).
#[derive(Debug, Clone)]
pub struct S3Source {
    client: aws_sdk_s3::Client,
    bucket: String,
    key: String,
}

impl S3Source {
    /// A source over an already configured client.
    #[must_use]
    pub fn new(
        client: aws_sdk_s3::Client,
        bucket: impl Into<String>,
        key: impl Into<String>,
    ) -> Self {
        Self {
            client,
            bucket: bucket.into(),
            key: key.into(),
        }
    }

    /// A source with a client from the standard AWS environment. Path-style addressing is used
    /// when a custom endpoint (`AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`) is set.
    pub async fn from_env(bucket: impl Into<String>, key: impl Into<String>) -> Self {
        let shared = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .http_client(crate::aws_http::sdk_http_client())
            .load()
            .await;
        let custom_endpoint = std::env::var_os("AWS_ENDPOINT_URL_S3").is_some()
            || std::env::var_os("AWS_ENDPOINT_URL").is_some();
        let config = aws_sdk_s3::config::Builder::from(&shared)
            .force_path_style(custom_endpoint)
            .build();
        Self::new(aws_sdk_s3::Client::from_conf(config), bucket, key)
    }
}

impl SnapshotSource for S3Source {
    fn name(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    fn fetch(&self, max_bytes: usize) -> BoxFuture<'_, Result<Bytes, RegistryError>> {
        Box::pin(async move {
            let output = self
                .client
                .get_object()
                .bucket(&self.bucket)
                .key(&self.key)
                .send()
                .await
                .map_err(|e| {
                    use aws_sdk_s3::error::ProvideErrorMetadata;
                    let reason = match e.as_service_error() {
                        Some(service) => format!(
                            "{}{}",
                            service.code().unwrap_or("S3 error"),
                            service
                                .message()
                                .map(|m| format!(": {m}"))
                                .unwrap_or_default()
                        ),
                        None => match e.raw_response() {
                            Some(raw) => format!("HTTP {}", raw.status().as_u16()),
                            None => "S3 could not be reached".into(),
                        },
                    };
                    unreadable(self.name(), reason)
                })?;
            if let Some(len) = output.content_length() {
                check_size(
                    &self.name(),
                    usize::try_from(len).unwrap_or(usize::MAX),
                    max_bytes,
                )?;
            }
            let mut body = output.body;
            let mut bytes = BytesMut::new();
            while let Some(chunk) = body
                .try_next()
                .await
                .map_err(|_| unreadable(self.name(), "the object body broke off"))?
            {
                check_size(&self.name(), bytes.len() + chunk.len(), max_bytes)?;
                bytes.extend_from_slice(&chunk);
            }
            Ok(bytes.freeze())
        })
    }
}

/// Parses and compiles manifest bytes from `source_name`.
///
/// # Errors
/// [`RegistryError::NotJson`] or [`RegistryError::Invalid`].
pub fn compile_bytes(source_name: &str, bytes: &[u8]) -> Result<Snapshot, RegistryError> {
    let invalid = |problems| RegistryError::Invalid {
        source_name: source_name.into(),
        problems,
    };
    if let Some(compiled) = super::compile::compile_manifest_text(bytes) {
        return compiled.map_err(invalid);
    }
    let document: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| RegistryError::NotJson {
            source_name: source_name.into(),
            reason: e.to_string(),
        })?;
    compile_manifest(&document).map_err(invalid)
}

/// Limits of one load attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadLimits {
    /// Whole-fetch timeout (`MCP_REGISTRY_TIMEOUT_MS`).
    pub timeout: Duration,
    /// Manifest size limit in bytes (`MCP_MAX_MANIFEST_BYTES`).
    pub max_bytes: usize,
}

/// Fetches with the limits, then parses and compiles.
///
/// # Errors
/// Any [`RegistryError`].
pub async fn load_from(
    source: &dyn SnapshotSource,
    limits: LoadLimits,
) -> Result<Snapshot, RegistryError> {
    let bytes = tokio::time::timeout(limits.timeout, source.fetch(limits.max_bytes))
        .await
        .map_err(|_| RegistryError::Timeout {
            source_name: source.name(),
            timeout_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
        })??;
    compile_bytes(&source.name(), &bytes)
}

/// The configured source, and for the `local` profile the baked sample as fallback (CONTRACT
/// R2, R3).
pub struct SourceChain {
    primary: Box<dyn SnapshotSource>,
    fallback: Option<Box<dyn SnapshotSource>>,
    limits: LoadLimits,
}

impl SourceChain {
    /// A chain over explicit sources.
    #[must_use]
    pub fn new(
        primary: Box<dyn SnapshotSource>,
        fallback: Option<Box<dyn SnapshotSource>>,
        limits: LoadLimits,
    ) -> Self {
        Self {
            primary,
            fallback,
            limits,
        }
    }

    /// The chain a configuration asks for. S3 clients come from the standard AWS environment.
    ///
    /// # Errors
    /// [`RegistryError::Unreadable`] when an HTTP client cannot be built.
    pub async fn from_config(config: &Config) -> Result<Self, RegistryError> {
        // Overlaps the source's set-up (an S3 client, say) and fetch.
        super::prepare_schema_checks();
        let primary = source_for(&config.registry_source).await?;
        let sample = RegistrySource::Baked("sample".into());
        let fallback: Option<Box<dyn SnapshotSource>> = (config.profile == Profile::Local
            && config.registry_source != sample)
            .then(|| Box::new(BakedSource("sample".into())) as Box<dyn SnapshotSource>);
        Ok(Self::new(
            primary,
            fallback,
            LoadLimits {
                timeout: Duration::from_millis(config.registry_timeout_ms),
                max_bytes: config.max_manifest_bytes,
            },
        ))
    }

    /// The configured source's name.
    #[must_use]
    pub fn name(&self) -> String {
        self.primary.name()
    }

    /// One load attempt: the configured source, then the fallback if there is one.
    ///
    /// # Errors
    /// The configured source's error when there is no fallback, or the fallback's error.
    pub async fn load(&self) -> Result<Snapshot, RegistryError> {
        match load_from(self.primary.as_ref(), self.limits).await {
            Ok(snapshot) => {
                tracing::info!(
                    source = %self.primary.name(),
                    routes = snapshot.route_keys().count(),
                    "registry snapshot loaded"
                );
                Ok(snapshot)
            }
            Err(error) => match &self.fallback {
                Some(fallback) => {
                    tracing::warn!(
                        %error,
                        fallback = %fallback.name(),
                        "registry source failed; the local profile falls back to the baked sample manifest"
                    );
                    load_from(fallback.as_ref(), self.limits).await
                }
                None => Err(error),
            },
        }
    }
}

/// The source object for a configured [`RegistrySource`].
///
/// # Errors
/// [`RegistryError::Unreadable`] when an HTTP client cannot be built.
pub async fn source_for(source: &RegistrySource) -> Result<Box<dyn SnapshotSource>, RegistryError> {
    Ok(match source {
        RegistrySource::Baked(name) => Box::new(BakedSource(name.clone())),
        RegistrySource::File(path) => Box::new(FileSource(path.clone())),
        RegistrySource::Http(url) => Box::new(
            HttpSource::new(url.clone()).map_err(|e| unreadable(url.clone(), e.to_string()))?,
        ),
        RegistrySource::S3 { bucket, key } => Box::new(S3Source::from_env(bucket, key).await),
    })
}

/// Loads a snapshot for a source and profile with default limits (5 s, 16 MiB).
///
/// # Errors
/// As [`SourceChain::load`].
pub async fn load_snapshot(
    source: &RegistrySource,
    profile: Profile,
) -> Result<Snapshot, RegistryError> {
    let config = Config {
        registry_source: source.clone(),
        profile,
        ..Config::fixed_defaults()
    };
    SourceChain::from_config(&config).await?.load().await
}
