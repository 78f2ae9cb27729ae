//! `file:PATH`: a manifest on the function's file system (CONTRACT R2), read on the blocking
//! pool and bounded in size (R7).

use bytes::Bytes;

use super::load::{RegistryError, SnapshotSource, check_size, unreadable};
use crate::future::BoxFuture;

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
