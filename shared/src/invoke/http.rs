//! The reqwest Tool Service invoker: one client per instance with connection reuse, no redirects,
//! a hard byte cap on bodies and one timeout over the whole exchange (CONTRACT X4, X6, X7); a
//! Lambda function tool's Invoke API call goes over the same client (X10).
//!
//! - Redirects are never followed: a 3xx is an `isError` result, so caller headers never travel
//!   to another host.
//! - The body is read chunk by chunk and reading stops at `max_response_bytes`; an announced
//!   `Content-Length` over the cap is refused before reading. The whole exchange, body
//!   included, runs under the tool's effective timeout, so an endless or trickling body cannot
//!   hold the function past it.
//! - A 2xx answer must be JSON or plain text: an HTML page (a proxy's login or error page
//!   served with 200) is an `isError` result, not a tool's answer.
//! - No proxy from the environment (`HTTP_PROXY` …) unless `MCP_TOOL_PROXY` names one; no
//!   response decompression (no compression bombs); TCP keep-alive and an idle pool under the
//!   usual 60 s load-balancer idle timeout.

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;

use super::aws_sign::AwsSigner;
use super::lambda::LambdaClient;
use super::secret_store::{Fetched, SecretCache, SecretError};
use super::secrets::{EnvLookup, SecretReader};
use super::token::{TokenError, TokenKey, TokenRequest};
use super::{InvokeError, ToolInvoker, ToolRequest, ToolResponse, ToolTarget};
use crate::config::Config;
use crate::registry::SecretSource;

/// How long an idle pooled connection is kept, below the 60 s idle timeout of common load
/// balancers so that a reused connection is rarely one the far side already closed.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(50);
/// TCP keep-alive probe interval of Tool Service connections.
const TCP_KEEPALIVE: Duration = Duration::from_secs(30);
/// The `Accept` of every Tool Service call.
const ACCEPT: &str = "application/json, text/plain;q=0.9, */*;q=0.1";
/// Longest `Content-Type` quoted in an `isError` text, in bytes.
const MAX_QUOTED_CONTENT_TYPE_BYTES: usize = 64;

/// Calls Tool Services over HTTP(S), and Lambda functions through the Invoke API (CONTRACT
/// X10), with one shared `reqwest::Client`.
#[derive(Debug, Clone)]
pub struct HttpInvoker {
    client: reqwest::Client,
    lambda: Arc<LambdaClient>,
    /// Where the secrets of outbound credentials are read (CONTRACT X12).
    secrets: Arc<SecretReader>,
    /// The instance's kept secrets (`MCP_SECRET_TTL_S`).
    cache: Arc<SecretCache>,
    /// The instance's access tokens, each kept for its lifetime (CONTRACT X12).
    tokens: Arc<SecretCache<TokenKey>>,
}

impl HttpInvoker {
    /// The client of [`Config::fixed_defaults`]: 3 s connect timeout, no proxy.
    ///
    /// # Errors
    /// The reqwest builder's error when TLS cannot be set up.
    pub fn new() -> Result<Self, reqwest::Error> {
        Self::from_config(&Config::fixed_defaults())
    }

    /// Builds the client: keep-alive pool, no redirects (a 3xx is a tool error), the
    /// `MCP_TOOL_PROXY` proxy or none (never one from the environment) and connect timeout
    /// `MCP_TOOL_CONNECT_TIMEOUT_MS`. Each call's own timeout (CONTRACT X7) is one timer over
    /// the whole exchange, set in [`ToolInvoker::invoke`].
    ///
    /// # Errors
    /// The reqwest builder's error when TLS cannot be set up or the proxy URL is unusable.
    pub fn from_config(config: &Config) -> Result<Self, reqwest::Error> {
        crate::tls::install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .no_proxy()
            .connect_timeout(Duration::from_millis(config.tool_connect_timeout_ms))
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .tcp_keepalive(TCP_KEEPALIVE)
            .tcp_nodelay(true)
            .user_agent(concat!("mcp-gateway/", env!("CARGO_PKG_VERSION")));
        if let Some(proxy) = &config.tool_proxy {
            builder = builder.proxy(reqwest::Proxy::all(proxy)?);
        }
        let signer = Arc::new(AwsSigner::default());
        Ok(Self {
            client: builder.build()?,
            lambda: Arc::new(LambdaClient::new(
                config.lambda_endpoint.clone(),
                signer.clone(),
            )),
            secrets: Arc::new(SecretReader {
                secrets_manager_endpoint: config.secrets_manager_endpoint.clone(),
                ssm_endpoint: config.ssm_endpoint.clone(),
                signer,
                env: None,
            }),
            cache: Arc::new(SecretCache::new(Duration::from_secs(config.secret_ttl_s))),
            tokens: Arc::new(SecretCache::new(Duration::from_secs(config.secret_ttl_s))),
        })
    }
}

impl HttpInvoker {
    /// The same invoker signing its AWS calls (Lambda invocations, CONTRACT X10; secret
    /// reads, X12) with these fixed credentials instead of the standard AWS chain's: for local
    /// emulators and tests.
    #[must_use]
    pub fn with_aws_credentials(self, access_key_id: &str, secret_access_key: &str) -> Self {
        let credentials = aws_credential_types::Credentials::new(
            access_key_id,
            secret_access_key,
            None,
            None,
            "mcp-gateway-static",
        );
        let signer = Arc::new(AwsSigner::with_static_credentials(credentials));
        let lambda = LambdaClient::new(
            self.lambda.endpoint_override().map(str::to_string),
            signer.clone(),
        );
        let secrets = SecretReader {
            secrets_manager_endpoint: self.secrets.secrets_manager_endpoint.clone(),
            ssm_endpoint: self.secrets.ssm_endpoint.clone(),
            signer,
            env: self.secrets.env.clone(),
        };
        Self {
            lambda: Arc::new(lambda),
            secrets: Arc::new(secrets),
            ..self
        }
    }

    /// The same invoker reading `env:` secret references (CONTRACT M5, X12) through `lookup`:
    /// the process environment, as the composition root reads it.
    #[must_use]
    pub fn with_env_lookup(self, lookup: EnvLookup) -> Self {
        let secrets = SecretReader {
            secrets_manager_endpoint: self.secrets.secrets_manager_endpoint.clone(),
            ssm_endpoint: self.secrets.ssm_endpoint.clone(),
            signer: self.secrets.signer.clone(),
            env: Some(lookup),
        };
        Self {
            secrets: Arc::new(secrets),
            ..self
        }
    }
}

fn classify(error: &reqwest::Error, timeout_ms: u64) -> InvokeError {
    if error.is_timeout() {
        InvokeError::Timeout { timeout_ms }
    } else if error.is_connect() {
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

/// Whether a 2xx answer's `Content-Type` is one the gateway turns into a result: none, JSON
/// (`application/json`, `application/*+json`) or plain text (`text/plain`, `text/markdown`).
fn is_result_media_type(content_type: Option<&http::HeaderValue>) -> bool {
    let Some(value) = content_type else {
        return true;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    matches!(
        essence.as_str(),
        "application/json" | "text/plain" | "text/markdown"
    ) || essence
        .strip_prefix("application/")
        .is_some_and(|subtype| subtype.ends_with("+json"))
}

/// The `Content-Type` as quoted in an `isError` text: its media type only (no parameters, which
/// could carry anything, a credential the call sent included: CONTRACT X12), printable ASCII,
/// cut short.
fn quoted_content_type(content_type: Option<&http::HeaderValue>) -> String {
    let text: String = content_type
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .chars()
        .filter(char::is_ascii_graphic)
        .take(MAX_QUOTED_CONTENT_TYPE_BYTES)
        .collect();
    text
}

impl ToolInvoker for HttpInvoker {
    async fn invoke(&self, request: ToolRequest) -> Result<ToolResponse, InvokeError> {
        // CONTRACT X7: one timeout over everything the call waits for (a `sigv4` tool's
        // credentials included), counted from here.
        let started = tokio::time::Instant::now();
        let timeout = request.timeout;
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let limit = request.max_response_bytes;
        let (method, mut url) = match request.target {
            ToolTarget::Http { method, url } => (method, url),
            ToolTarget::Lambda {
                function,
                client_context,
            } => {
                // The Lambda client splits the timeout between credentials and the invocation.
                return self
                    .lambda
                    .invoke(
                        &self.client,
                        &function,
                        &client_context,
                        request.body,
                        limit,
                        timeout,
                    )
                    .await;
            }
        };
        if request.sigv4.is_some() {
            // CONTRACT X12: the query sent in the encoding it is signed in.
            super::aws_sign::sigv4_query(&mut url);
        }
        let is_head = method == http::Method::HEAD;
        // CONTRACT K2: a call that asked for an asynchronous answer takes a `202` by its
        // status and `Location` alone; the body of the acceptance is not read.
        let async_preferred = request.headers.iter().any(|(name, value)| {
            name == "prefer"
                && value
                    .to_str()
                    .is_ok_and(|v| v.to_ascii_lowercase().contains("respond-async"))
        });
        let method_name = method.to_string();
        let url_text = url.to_string();
        let mut builder = self
            .client
            .request(method, url)
            .header(http::header::ACCEPT, ACCEPT);
        if !request.body.is_empty() {
            builder = builder
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(request.body.clone());
        }
        if let Some(signing) = &request.sigv4 {
            // CONTRACT X12: signed as sent, with the gateway's own AWS credentials.
            let mut signed: Vec<(&str, &str)> = Vec::with_capacity(request.headers.len() + 2);
            signed.push(("accept", ACCEPT));
            if !request.body.is_empty() {
                signed.push(("content-type", "application/json"));
            }
            for (name, value) in &request.headers {
                signed.push((name.as_str(), value.to_str().unwrap_or_default()));
            }
            // The credentials within the call's time, at most 5 s, as for Lambda tools (X10);
            // the request then has what is left.
            self.lambda
                .signer()
                .load_within(timeout.min(Duration::from_secs(5)))
                .await
                .map_err(|_| InvokeError::NoSigningCredentials)?;
            let signature = self
                .lambda
                .signer()
                .sign(
                    method_name.as_str(),
                    url_text.as_str(),
                    &signed,
                    &request.body,
                    &signing.region,
                    &signing.service,
                )
                .await
                .map_err(|_| InvokeError::NoSigningCredentials)?;
            for (name, value) in signature {
                builder = builder.header(name, value);
            }
        }
        for (name, value) in request.headers {
            builder = builder.header(name, value);
        }
        let exchange = async move {
            let mut response = builder.send().await.map_err(|e| classify(&e, timeout_ms))?;
            let status = response.status();
            // CONTRACT K2: a 202's status location, kept only when it is one plain value.
            let location = (status == http::StatusCode::ACCEPTED)
                .then(|| {
                    let mut values = response.headers().get_all(http::header::LOCATION).iter();
                    match (values.next(), values.next()) {
                        (Some(value), None) if value.len() <= super::MAX_LOCATION_BYTES => {
                            value.to_str().ok().map(str::to_string)
                        }
                        _ => None,
                    }
                })
                .flatten();
            if async_preferred && status == http::StatusCode::ACCEPTED {
                return Ok(ToolResponse {
                    status,
                    body: bytes::Bytes::new(),
                    location,
                });
            }
            if response
                .content_length()
                .is_some_and(|len| len > limit as u64)
            {
                return Err(InvokeError::ResponseTooLarge { limit_bytes: limit });
            }
            let content_type = response.headers().get(http::header::CONTENT_TYPE);
            // A HEAD answer has no body: its media type is the resource's, not a result's.
            if status.is_success() && !is_head && !is_result_media_type(content_type) {
                return Err(InvokeError::UnexpectedContentType {
                    content_type: quoted_content_type(content_type),
                });
            }
            let mut body = BytesMut::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| classify(&e, timeout_ms))?
            {
                if body.len() + chunk.len() > limit {
                    return Err(InvokeError::ResponseTooLarge { limit_bytes: limit });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(ToolResponse {
                status,
                body: body.freeze(),
                location,
            })
        };
        tokio::time::timeout(timeout.saturating_sub(started.elapsed()), exchange)
            .await
            .unwrap_or(Err(InvokeError::Timeout { timeout_ms }))
    }

    async fn secret(
        &self,
        source: &SecretSource,
        stale: Option<u64>,
    ) -> Result<Fetched, SecretError> {
        self.cache
            .get(source, stale, || self.secrets.read(&self.client, source))
            .await
    }

    async fn token(
        &self,
        request: &TokenRequest,
        stale: Option<u64>,
    ) -> Result<Fetched, TokenError> {
        let default_ttl = self.tokens.ttl();
        self.tokens
            .get_for(&request.key, stale, || {
                super::token_endpoint::obtain(&self.client, request, default_ttl)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn x6_only_json_and_plain_text_are_results() {
        let ok = |v: &str| is_result_media_type(Some(&HeaderValue::from_str(v).unwrap()));
        assert!(is_result_media_type(None));
        assert!(ok("application/json"));
        assert!(ok("Application/JSON; charset=utf-8"));
        assert!(ok("application/problem+json"));
        assert!(ok("text/plain;charset=UTF-8"));
        assert!(ok("text/markdown"));
        assert!(!ok("text/html; charset=utf-8"));
        assert!(!ok("application/xml"));
        assert!(!ok("application/octet-stream"));
        assert!(!ok("text/json+html"));
        assert!(!ok(""));
    }

    #[test]
    fn x6_quoted_content_type_is_printable_and_short() {
        let long = HeaderValue::from_str(&format!("text/{}", "x".repeat(200))).unwrap();
        assert_eq!(
            quoted_content_type(Some(&long)).len(),
            MAX_QUOTED_CONTENT_TYPE_BYTES
        );
        let odd = HeaderValue::from_bytes(b"text/html\xff\xfe").unwrap();
        assert_eq!(quoted_content_type(Some(&odd)), "text/html");
        // Parameters are never quoted: they may hold anything the service chose to put there.
        let echoing = HeaderValue::from_static("text/html; k=sk-Secret_123");
        assert_eq!(quoted_content_type(Some(&echoing)), "text/html");
    }
}
