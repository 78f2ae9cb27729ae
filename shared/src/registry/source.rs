//! Snapshot sources and the cold-start load (CONTRACT R1, R2, R3).

use std::future::Future;

use bytes::Bytes;

use super::{ManifestProblem, Snapshot, compile_manifest};
use crate::config::{Profile, RegistrySource};

/// Why a snapshot could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The source could not be read (missing file, unknown baked name, unreachable).
    #[error("registry source {source_name} is unreadable: {reason}")]
    Unreadable {
        /// The source, as configured (`file:/x.json`).
        source_name: String,
        /// What failed.
        reason: String,
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
    /// This build cannot read the configured kind of source.
    #[error("registry source {source_name} is not supported by this build")]
    Unsupported {
        /// The source, as configured.
        source_name: String,
    },
}

/// Where manifest bytes come from (CONTRACT R2). Implementations do I/O; compilation is shared.
pub trait SnapshotSource: Send + Sync {
    /// The source as configured, for messages (`baked:sample`).
    fn name(&self) -> String;

    /// Reads the whole manifest document.
    ///
    /// # Errors
    /// [`RegistryError::Unreadable`] when the bytes cannot be had.
    fn fetch(&self) -> impl Future<Output = Result<Bytes, RegistryError>> + Send;
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

/// `baked:NAME`: a manifest from `manifests/` compiled into the binary.
#[derive(Debug, Clone)]
pub struct BakedSource(pub String);

impl SnapshotSource for BakedSource {
    fn name(&self) -> String {
        format!("baked:{}", self.0)
    }

    async fn fetch(&self) -> Result<Bytes, RegistryError> {
        baked_manifest(&self.0)
            .map(|text| Bytes::from_static(text.as_bytes()))
            .ok_or_else(|| RegistryError::Unreadable {
                source_name: self.name(),
                reason: format!(
                    "no baked manifest named '{}' (baked: {})",
                    self.0,
                    BAKED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ),
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

    async fn fetch(&self) -> Result<Bytes, RegistryError> {
        tokio::fs::read(&self.0)
            .await
            .map(Bytes::from)
            .map_err(|e| RegistryError::Unreadable {
                source_name: self.name(),
                reason: e.to_string(),
            })
    }
}

/// Fetches, parses and compiles one source.
///
/// # Errors
/// Any [`RegistryError`] of the fetch, the JSON parse or the R5 validation.
pub async fn load_from(source: &impl SnapshotSource) -> Result<Snapshot, RegistryError> {
    let bytes = source.fetch().await?;
    let document: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| RegistryError::NotJson {
            source_name: source.name(),
            reason: e.to_string(),
        })?;
    compile_manifest(&document).map_err(|problems| RegistryError::Invalid {
        source_name: source.name(),
        problems,
    })
}

/// Loads the snapshot for a configured source at cold start (CONTRACT R1, R2), with the
/// `local` profile's fallback to the baked sample manifest on failure (CONTRACT R3).
///
/// # Errors
/// The configured source's [`RegistryError`] on the `prod` profile, or when the fallback fails
/// too.
pub async fn load_snapshot(
    source: &RegistrySource,
    profile: Profile,
) -> Result<Snapshot, RegistryError> {
    let result = match source {
        RegistrySource::Baked(name) => load_from(&BakedSource(name.clone())).await,
        RegistrySource::File(path) => load_from(&FileSource(path.clone())).await,
        RegistrySource::S3 { .. } | RegistrySource::Http(_) => Err(RegistryError::Unsupported {
            source_name: source.to_string(),
        }),
    };
    match (result, profile) {
        (Ok(snapshot), _) => {
            tracing::info!(source = %source, routes = snapshot.route_keys().count(), "registry snapshot loaded");
            Ok(snapshot)
        }
        (Err(error), Profile::Local) if *source != RegistrySource::Baked("sample".into()) => {
            tracing::warn!(%error, "registry source failed; the local profile falls back to baked:sample");
            load_from(&BakedSource("sample".into())).await
        }
        (Err(error), _) => Err(error),
    }
}
