//! The reqwest Tool Service invoker: one client per instance with connection reuse, no redirects,
//! a hard byte cap on bodies and one timeout over the whole exchange (CONTRACT X4, X6, X7).

use std::time::Duration;

use bytes::BytesMut;

use super::{InvokeError, ToolInvoker, ToolRequest, ToolResponse};

/// Calls Tool Services over HTTP(S) with one shared `reqwest::Client`.
#[derive(Debug, Clone)]
pub struct HttpInvoker {
    client: reqwest::Client,
}

impl HttpInvoker {
    /// Builds the client: keep-alive pool, no redirects (a 3xx is a tool error), no proxy from
    /// the environment, 5 s connect timeout.
    ///
    /// # Errors
    /// The reqwest builder's error when TLS cannot be set up.
    pub fn new() -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .pool_idle_timeout(Duration::from_secs(60))
            .tcp_nodelay(true)
            .user_agent(concat!("mcp-gateway/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client })
    }
}

fn classify(error: &reqwest::Error) -> InvokeError {
    if error.is_connect() {
        InvokeError::Connect
    } else if error.is_body() || error.is_decode() {
        InvokeError::Transport {
            kind: "the response body broke off",
        }
    } else {
        InvokeError::Transport {
            kind: "the HTTP exchange failed",
        }
    }
}

impl ToolInvoker for HttpInvoker {
    async fn invoke(&self, request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        let timeout = request.timeout;
        let limit = request.max_response_bytes;
        let mut builder = self
            .client
            .request(request.method, &request.endpoint)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(
                http::header::ACCEPT,
                "application/json, text/plain;q=0.9, */*;q=0.1",
            )
            .body(request.body);
        for (name, value) in request.headers {
            builder = builder.header(name, value);
        }
        let exchange = async move {
            let mut response = builder.send().await.map_err(|e| classify(&e))?;
            let status = response.status();
            if response
                .content_length()
                .is_some_and(|len| len > limit as u64)
            {
                return Err(InvokeError::ResponseTooLarge { limit_bytes: limit });
            }
            let mut body = BytesMut::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| classify(&e))? {
                if body.len() + chunk.len() > limit {
                    return Err(InvokeError::ResponseTooLarge { limit_bytes: limit });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(ToolResponse {
                status,
                body: body.freeze(),
            })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or(Err(InvokeError::Timeout {
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }))
    }
}
