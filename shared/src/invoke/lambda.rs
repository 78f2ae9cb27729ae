//! Lambda function tools' Invoke API call (CONTRACT X10) over the gateway's one reqwest client,
//! signed with SigV4 (`aws-sigv4`, the signer the AWS SDK clients use) with credentials from the
//! standard AWS chain.
//!
//! Credentials are loaded the first time a Lambda tool is called, never at cold start, and kept
//! until five minutes before they expire. `Config::lambda_endpoint` (`AWS_ENDPOINT_URL_LAMBDA`,
//! else `AWS_ENDPOINT_URL`) replaces the regional endpoint, as it does for the AWS SDKs.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use bytes::Bytes;

use super::lambda_invocation::{classify, invoke_url};
use super::{InvokeError, ToolResponse};
use crate::registry::FunctionArn;

/// Credentials this close to their expiry are fetched anew.
const CREDENTIALS_MARGIN: Duration = Duration::from_mins(5);

/// The Invoke API's client side: where to send, and the credentials to sign with.
#[derive(Debug, Default)]
pub(super) struct LambdaClient {
    /// `AWS_ENDPOINT_URL_LAMBDA` or `AWS_ENDPOINT_URL` (`Config::lambda_endpoint`).
    endpoint_override: Option<String>,
    provider: tokio::sync::OnceCell<Option<SharedCredentialsProvider>>,
    cached: Mutex<Option<Credentials>>,
}

impl LambdaClient {
    /// A client sending to `endpoint_override` (`Config::lambda_endpoint`) or, when `None`,
    /// to each function's regional endpoint, with credentials from the standard AWS chain.
    pub(super) fn new(endpoint_override: Option<String>) -> Self {
        Self {
            endpoint_override,
            ..Self::default()
        }
    }

    /// The same client signing with fixed credentials instead of the chain's.
    pub(super) fn with_static_credentials(mut self, credentials: Credentials) -> Self {
        self.provider = tokio::sync::OnceCell::new_with(Some(Some(
            SharedCredentialsProvider::new(credentials),
        )));
        self
    }

    /// The endpoint that replaces the regional ones, when one does.
    pub(super) fn endpoint_override(&self) -> Option<&str> {
        self.endpoint_override.as_deref()
    }

    async fn credentials(&self) -> Result<Credentials, InvokeError> {
        let fresh = |c: &Credentials| {
            c.expiry()
                .is_none_or(|expiry| expiry > SystemTime::now() + CREDENTIALS_MARGIN)
        };
        if let Some(credentials) = self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .filter(|c| fresh(c))
        {
            return Ok(credentials.clone());
        }
        let provider = self
            .provider
            .get_or_init(|| async {
                aws_config::defaults(aws_config::BehaviorVersion::latest())
                    .http_client(crate::aws_http::sdk_http_client())
                    .load()
                    .await
                    .credentials_provider()
            })
            .await
            .as_ref()
            .ok_or(InvokeError::NoCredentials)?;
        let credentials = provider
            .provide_credentials()
            .await
            .map_err(|_| InvokeError::NoCredentials)?;
        *self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(credentials.clone());
        Ok(credentials)
    }

    /// Invokes `function` synchronously with `payload` and reads the answer (CONTRACT X10). The
    /// caller bounds the whole call with the tool's timeout.
    pub(super) async fn invoke(
        &self,
        client: &reqwest::Client,
        function: &FunctionArn,
        client_context: &str,
        payload: Bytes,
        limit: usize,
    ) -> Result<ToolResponse, InvokeError> {
        let credentials = self.credentials().await?;
        let url = invoke_url(self.endpoint_override.as_deref(), function);
        let headers = [
            ("content-type", "application/json"),
            ("x-amz-invocation-type", "RequestResponse"),
            ("x-amz-client-context", client_context),
        ];
        let identity = credentials.into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&function.region)
            .name("lambda")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|_| InvokeError::NoCredentials)?
            .into();
        let signable = SignableRequest::new(
            "POST",
            url.as_str(),
            headers.iter().copied(),
            SignableBody::Bytes(&payload),
        )
        .map_err(|_| InvokeError::Transport {
            kind: "the Invoke API request could not be signed",
        })?;
        let (instructions, _signature) = sign(signable, &params)
            .map_err(|_| InvokeError::Transport {
                kind: "the Invoke API request could not be signed",
            })?
            .into_parts();
        let mut builder = client.post(&url).body(payload);
        for (name, value) in headers.iter().copied().chain(instructions.headers()) {
            builder = builder.header(name, value);
        }
        let mut response = builder.send().await.map_err(|e| {
            if e.is_connect() {
                InvokeError::Connect
            } else {
                InvokeError::Transport {
                    kind: "the Invoke API exchange failed",
                }
            }
        })?;
        let status = response.status();
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(InvokeError::ResponseTooLarge { limit_bytes: limit });
        }
        let function_error = response.headers().contains_key("x-amz-function-error");
        let header_type = response
            .headers()
            .get("x-amzn-errortype")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|_| InvokeError::Transport {
            kind: "the response body broke off",
        })? {
            if body.len() + chunk.len() > limit {
                return Err(InvokeError::ResponseTooLarge { limit_bytes: limit });
            }
            body.extend_from_slice(&chunk);
        }
        classify(
            status,
            function_error,
            header_type.as_deref(),
            body,
            function,
        )
    }
}
