//! Lambda function tools' Invoke API call (CONTRACT X10) over the gateway's one reqwest client,
//! signed with SigV4 (`aws-sigv4`, the signer the AWS SDK clients use) with credentials from the
//! standard AWS chain.
//!
//! Credentials are loaded the first time a Lambda tool is called, never at cold start, and kept
//! until five minutes before they expire. Loading them has a bound of its own inside the tool's
//! timeout ([`CREDENTIALS_TIMEOUT`]), so a credentials endpoint that never answers is reported
//! as such, not as a Tool Service that did not answer (CONTRACT X10).
//! `Config::lambda_endpoint` (`AWS_ENDPOINT_URL_LAMBDA`, else `AWS_ENDPOINT_URL`) replaces the
//! regional endpoint, as it does for the AWS SDKs.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use bytes::Bytes;

use super::lambda_invocation::{classify, invoke_url};
use super::{InvokeError, ToolResponse};
use crate::registry::FunctionArn;

/// Credentials this close to their expiry are fetched anew.
const CREDENTIALS_MARGIN: Duration = Duration::from_mins(5);

/// The longest the credential chain may take to give credentials, within the tool's timeout
/// (CONTRACT X7, X10): 5 s. It covers a container or instance credentials endpoint's retries
/// after a refused connection (the SDK's standard retry: three attempts, at most 3 s of
/// back-off), so those are reported as the provider's failure, while an endpoint that never
/// answers is cut off here, before the SDK's own read timeout and retries would end the wait.
const CREDENTIALS_TIMEOUT: Duration = Duration::from_secs(5);

/// Milliseconds of `duration`, saturating.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The [`InvokeError`] of a credential chain's failure (CONTRACT X10): none found, a provider
/// that timed out by its own bound, an invalid configuration, or a provider that failed (a
/// refused connection, an error answer). The texts name no endpoint, account or secret.
fn credentials_error(error: &CredentialsError) -> InvokeError {
    match error {
        CredentialsError::CredentialsNotLoaded(_) => InvokeError::NoCredentials,
        CredentialsError::ProviderTimedOut(timed_out) => InvokeError::CredentialsTimeout {
            timeout_ms: millis(timed_out.timeout_duration()),
        },
        CredentialsError::InvalidConfiguration(_) => InvokeError::CredentialsFailed {
            kind: "the credential configuration is invalid",
        },
        _ => InvokeError::CredentialsFailed {
            kind: "the credential provider failed",
        },
    }
}

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
            .map_err(|error| credentials_error(&error))?;
        *self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(credentials.clone());
        Ok(credentials)
    }

    /// Invokes `function` synchronously with `payload` and reads the answer, all within
    /// `timeout`, the tool's effective timeout (CONTRACT X7, X10). Credentials get the first
    /// part of it, at most [`CREDENTIALS_TIMEOUT`]; when they are not there by then the call
    /// ends with [`InvokeError::CredentialsTimeout`] and nothing is invoked. The invocation gets
    /// what remains, and ends with [`InvokeError::Timeout`] (naming all of `timeout`) when it
    /// is not answered within it.
    pub(super) async fn invoke(
        &self,
        client: &reqwest::Client,
        function: &FunctionArn,
        client_context: &str,
        payload: Bytes,
        limit: usize,
        timeout: Duration,
    ) -> Result<ToolResponse, InvokeError> {
        let started = tokio::time::Instant::now();
        let credentials_bound = timeout.min(CREDENTIALS_TIMEOUT);
        let credentials = tokio::time::timeout(credentials_bound, self.credentials())
            .await
            .map_err(|_| InvokeError::CredentialsTimeout {
                timeout_ms: millis(credentials_bound),
            })??;
        let remaining = timeout.saturating_sub(started.elapsed());
        let call = self.signed_call(
            client,
            function,
            client_context,
            payload,
            limit,
            credentials,
        );
        tokio::time::timeout(remaining, call)
            .await
            .unwrap_or(Err(InvokeError::Timeout {
                timeout_ms: millis(timeout),
            }))
    }

    /// Signs the Invoke API request with `credentials`, sends it and reads the answer (CONTRACT
    /// X10); the caller bounds it in time.
    async fn signed_call(
        &self,
        client: &reqwest::Client,
        function: &FunctionArn,
        client_context: &str,
        payload: Bytes,
        limit: usize,
        credentials: Credentials,
    ) -> Result<ToolResponse, InvokeError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x10_credential_chain_failures_name_what_failed_and_no_endpoint() {
        let secret_bearing = "failed to load credentials from http://127.0.0.1:9/creds [AKID]";
        for (error, text) in [
            (
                CredentialsError::not_loaded("no provider in the chain gave any"),
                "The gateway has no AWS credentials to invoke the Tool Service function",
            ),
            (
                CredentialsError::provider_timed_out(Duration::from_millis(1500)),
                "The gateway could not obtain AWS credentials within 1500 ms to invoke the Tool \
                 Service function",
            ),
            (
                CredentialsError::invalid_configuration(secret_bearing),
                "The gateway could not obtain AWS credentials to invoke the Tool Service function \
                 (the credential configuration is invalid)",
            ),
            (
                CredentialsError::provider_error(secret_bearing),
                "The gateway could not obtain AWS credentials to invoke the Tool Service function \
                 (the credential provider failed)",
            ),
            (
                CredentialsError::unhandled(secret_bearing),
                "The gateway could not obtain AWS credentials to invoke the Tool Service function \
                 (the credential provider failed)",
            ),
        ] {
            assert_eq!(credentials_error(&error).to_string(), text, "{error:?}");
        }
    }
}
