//! The issuer's key set over HTTP (CONTRACT A5): [`HttpKeySet`] fetches `MCP_OAUTH_JWKS_URL`
//! with reqwest, without redirects, bounded in time (a failure is a 503, A9) and in size
//! ([`MAX_JWKS_BYTES`]). The I/O implementation of [`KeySetSource`], named by
//! [`crate::build`] only.

use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;

use super::oauth::{KeySetError, KeySetSource, MAX_JWKS_BYTES};
use crate::future::BoxFuture;

/// The key set at `MCP_OAUTH_JWKS_URL` (CONTRACT A5), fetched with reqwest (no redirects,
/// bounded in time, CONTRACT A9, and size).
#[derive(Debug, Clone)]
pub struct HttpKeySet {
    client: reqwest::Client,
    url: String,
}

impl HttpKeySet {
    /// A source for `url`, each fetch bounded by `timeout_ms`.
    ///
    /// # Errors
    /// The reqwest builder's error when TLS cannot be set up.
    pub fn new(url: impl Into<String>, timeout_ms: u64) -> Result<Self, reqwest::Error> {
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(Duration::from_millis(timeout_ms))
            .build()?;
        Ok(Self {
            client,
            url: url.into(),
        })
    }
}

impl KeySetSource for HttpKeySet {
    fn fetch(&self) -> BoxFuture<'_, Result<JwkSet, KeySetError>> {
        Box::pin(async move {
            let fail = |detail: String| KeySetError { detail };
            let mut response = self
                .client
                .get(&self.url)
                .header("accept", "application/json")
                .send()
                .await
                .map_err(|e| {
                    fail(
                        if e.is_timeout() {
                            "timed out"
                        } else {
                            "unreachable"
                        }
                        .into(),
                    )
                })?;
            if !response.status().is_success() {
                return Err(fail(format!("status {}", response.status().as_u16())));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|_| fail("the body broke off".into()))?
            {
                if body.len() + chunk.len() > MAX_JWKS_BYTES {
                    return Err(fail(format!("larger than {MAX_JWKS_BYTES} bytes")));
                }
                body.extend_from_slice(&chunk);
            }
            serde_json::from_slice(&body).map_err(|e| fail(format!("not a JWK set: {e}")))
        })
    }
}
