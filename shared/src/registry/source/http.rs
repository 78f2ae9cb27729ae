//! `https://…` / `http://…`: a Tool Service manifest endpoint fetched with `GET` (CONTRACT R2),
//! bounded in size as it streams (R7).

use bytes::Bytes;

use super::load::{RegistryError, SnapshotSource, announced_within, check_size, unreadable};
use crate::future::BoxFuture;

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
            let name = self.name();
            let mut body = announced_within(&name, response.content_length(), max_bytes)?;
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|_| fail("the response body broke off".into()))?
            {
                check_size(&name, body.len() + chunk.len(), max_bytes)?;
                body.push(chunk);
            }
            Ok(body.finish())
        })
    }
}
