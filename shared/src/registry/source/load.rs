//! The snapshot source trait, the baked manifests and the load (CONTRACT R1, R2, R3): a source
//! only fetches bytes; [`load_from`] bounds the fetch in time (`MCP_REGISTRY_TIMEOUT_MS`), then
//! parses, validates (R5) and compiles, and [`SourceChain`] falls back to the baked sample on
//! the `local` profile.

use std::time::Duration;

use bytes::Bytes;

use crate::future::BoxFuture;
use crate::registry::{ManifestProblem, Snapshot, compile_manifest};

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
    /// A `routes` manifest without the route a fixed deployment serves (CONTRACT M1): never
    /// another route under this path.
    #[error("manifest from {source_name} has no route '{route_key}' (routes: {})", if routes.is_empty() { "none".to_string() } else { routes.join(", ") })]
    RouteMissing {
        /// The source, as configured.
        source_name: String,
        /// The route the deployment serves: the last segment of its endpoint path.
        route_key: String,
        /// The manifest's route keys, sorted.
        routes: Vec<String>,
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
const BAKED: &[(&str, &str)] = &[("sample", include_str!("../../../../manifests/sample.json"))];

/// The text of a baked manifest, `None` for an unknown name.
#[must_use]
pub fn baked_manifest(name: &str) -> Option<&'static str> {
    BAKED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

pub(super) fn unreadable(source_name: String, reason: impl Into<String>) -> RegistryError {
    RegistryError::Unreadable {
        source_name,
        reason: reason.into(),
    }
}

pub(super) fn check_size(name: &str, len: usize, max_bytes: usize) -> Result<(), RegistryError> {
    if len > max_bytes {
        return Err(RegistryError::TooLarge {
            source_name: name.into(),
            limit_bytes: max_bytes,
        });
    }
    Ok(())
}

/// The buffer for a manifest body whose sender announced `announced` bytes: `TooLarge` when that
/// is over `max_bytes` (CONTRACT R7, refused before the body is read); else a buffer presized
/// to it.
pub(super) fn announced_within(
    name: &str,
    announced: Option<u64>,
    max_bytes: usize,
) -> Result<crate::chunks::Chunks, RegistryError> {
    if let Some(len) = announced {
        check_size(name, usize::try_from(len).unwrap_or(usize::MAX), max_bytes)?;
    }
    Ok(crate::chunks::Chunks::new(announced, max_bytes))
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

/// Parses and compiles manifest bytes from `source_name`. The snapshot keeps `bytes` (a
/// reference, not a copy) while it lives: its tools' schemas are slices of it.
///
/// # Errors
/// [`RegistryError::NotJson`] or [`RegistryError::Invalid`].
pub fn compile_bytes(source_name: &str, bytes: &Bytes) -> Result<Snapshot, RegistryError> {
    let invalid = |problems| RegistryError::Invalid {
        source_name: source_name.into(),
        problems,
    };
    if let Some(compiled) = crate::registry::compile::compile_manifest_text(bytes) {
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
    /// The gateway's response limit in bytes (`MCP_MAX_RESPONSE_BYTES`): every listed tool's
    /// `tools/list` entry must fit on a page of it (CONTRACT T2).
    pub max_response_bytes: usize,
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
    let snapshot = compile_bytes(&source.name(), &bytes)?;
    // CONTRACT T2: a tool whose entry fits on no page would never be listed.
    let problems = crate::registry::oversized_list_entries(&snapshot, limits.max_response_bytes);
    valid_unless(source, snapshot, problems)
}

/// `snapshot` when a check after the compile found no `problems`, else the load's failure
/// naming them (CONTRACT R5).
fn valid_unless(
    source: &dyn SnapshotSource,
    snapshot: Snapshot,
    problems: Vec<crate::registry::ManifestProblem>,
) -> Result<Snapshot, RegistryError> {
    if problems.is_empty() {
        Ok(snapshot)
    } else {
        Err(RegistryError::Invalid {
            source_name: source.name(),
            problems,
        })
    }
}

/// The configured source, and for the `local` profile the baked sample as fallback (CONTRACT
/// R2, R3).
pub struct SourceChain {
    primary: Box<dyn SnapshotSource>,
    fallback: Option<Box<dyn SnapshotSource>>,
    limits: LoadLimits,
    fixed_route: Option<String>,
    /// Whether an `env:` secret reference fails the load (on Lambda, CONTRACT M5).
    refuse_env_secrets: bool,
    /// Whether a task tool fails the load (on Lambda without `MCP_TASK_KEY`, CONTRACT K3).
    refuse_keyless_tasks: bool,
}

impl std::fmt::Debug for SourceChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceChain")
            .field("primary", &self.primary.name())
            .field(
                "fallback",
                &self.fallback.as_ref().map(|source| source.name()),
            )
            .field("limits", &self.limits)
            .field("fixed_route", &self.fixed_route)
            .field("refuse_env_secrets", &self.refuse_env_secrets)
            .field("refuse_keyless_tasks", &self.refuse_keyless_tasks)
            .finish()
    }
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
            fixed_route: None,
            refuse_env_secrets: false,
            refuse_keyless_tasks: false,
        }
    }

    /// This chain for a process under the Lambda runtime: a snapshot with an `env:` secret
    /// reference is a failed load (CONTRACT M5, R5), each reference a problem.
    #[must_use]
    pub fn refusing_env_secrets(mut self) -> Self {
        self.refuse_env_secrets = true;
        self
    }

    /// This chain for a process under the Lambda runtime without `MCP_TASK_KEY`: a snapshot
    /// with a task tool is a failed load (CONTRACT K3, R5), each such tool a problem.
    #[must_use]
    pub fn refusing_keyless_tasks(mut self) -> Self {
        self.refuse_keyless_tasks = true;
        self
    }

    /// This chain for a fixed deployment serving `route_key`: a loaded `routes` manifest
    /// without that route is a failed load (CONTRACT M1, R4).
    #[must_use]
    pub fn serving(mut self, route_key: impl Into<String>) -> Self {
        self.fixed_route = Some(route_key.into());
        self
    }

    /// CONTRACT M1: the snapshot serves the fixed route, when the chain has one.
    fn checked(
        &self,
        source: &dyn SnapshotSource,
        snapshot: Snapshot,
    ) -> Result<Snapshot, RegistryError> {
        match &self.fixed_route {
            Some(key) if snapshot.fixed_route(key).is_none() => Err(RegistryError::RouteMissing {
                source_name: source.name(),
                route_key: key.clone(),
                routes: snapshot
                    .sorted_route_keys()
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            }),
            _ => {
                let mut problems = if self.refuse_env_secrets {
                    crate::registry::env_secret_problems(&snapshot)
                } else {
                    Vec::new()
                };
                if self.refuse_keyless_tasks {
                    problems.extend(crate::tasks::keyless_task_problems(&snapshot));
                }
                valid_unless(source, snapshot, problems)
            }
        }
    }

    /// The configured source's name.
    #[must_use]
    pub fn name(&self) -> String {
        self.primary.name()
    }

    /// One load attempt: the configured source, then the fallback if there is one.
    ///
    /// # Errors
    /// The configured source's error when there is no fallback, or the fallback's error;
    /// [`RegistryError::RouteMissing`] for a snapshot without the fixed route (CONTRACT M1).
    pub async fn load(&self) -> Result<Snapshot, RegistryError> {
        let primary = load_from(self.primary.as_ref(), self.limits)
            .await
            .and_then(|snapshot| self.checked(self.primary.as_ref(), snapshot));
        match primary {
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
                    load_from(fallback.as_ref(), self.limits)
                        .await
                        .and_then(|snapshot| self.checked(fallback.as_ref(), snapshot))
                }
                None => Err(error),
            },
        }
    }
}
