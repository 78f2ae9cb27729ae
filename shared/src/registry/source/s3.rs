//! `s3://bucket/key`: S3 `GetObject` (CONTRACT R2), bounded in size as it streams (R7).

use bytes::Bytes;

use super::load::{RegistryError, SnapshotSource, announced_within, check_size, unreadable};
use crate::future::BoxFuture;

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
        let shared = crate::aws_http::sdk_config_loader().load().await;
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
            let name = self.name();
            let announced = output
                .content_length()
                .and_then(|len| u64::try_from(len).ok());
            let mut whole = announced_within(&name, announced, max_bytes)?;
            let mut body = output.body;
            while let Some(chunk) = body
                .try_next()
                .await
                .map_err(|_| unreadable(self.name(), "the object body broke off"))?
            {
                check_size(&name, whole.len() + chunk.len(), max_bytes)?;
                whole.push(chunk);
            }
            Ok(whole.finish())
        })
    }
}
