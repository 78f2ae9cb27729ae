//! Lambda function tools' Invoke API call (CONTRACT X10) over the gateway's one reqwest client,
//! signed by the gateway's [`AwsSigner`] (SigV4, credentials from the standard AWS chain, loaded
//! at the first call). Loading them has a bound of its own inside the tool's timeout
//! ([`CREDENTIALS_TIMEOUT`]), so a credentials endpoint that never answers is reported as such,
//! not as a Tool Service that did not answer (CONTRACT X10). `Config::lambda_endpoint` (`AWS_ENDPOINT_URL_LAMBDA`,
//! else `AWS_ENDPOINT_URL`) replaces the regional endpoint, as it does for the AWS SDKs.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::aws_sign::{AwsSigner, SignError};
use super::lambda_invocation::{classify, invoke_url};
use super::{InvokeError, ToolResponse};
use crate::registry::FunctionArn;

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

/// The [`InvokeError`] of a [`SignError`] (CONTRACT X10): the texts name no endpoint, account
/// or secret.
fn sign_error(error: SignError) -> InvokeError {
    match error {
        SignError::NoCredentials => InvokeError::NoCredentials,
        SignError::CredentialsTimeout { timeout_ms } => {
            InvokeError::CredentialsTimeout { timeout_ms }
        }
        SignError::CredentialsFailed { kind } => InvokeError::CredentialsFailed { kind },
        SignError::Unsignable => InvokeError::Transport {
            kind: "the Invoke API request could not be signed",
        },
    }
}

/// The Invoke API's client side: where to send, and the signer of the gateway's AWS calls.
#[derive(Debug)]
pub(super) struct LambdaClient {
    /// `AWS_ENDPOINT_URL_LAMBDA` or `AWS_ENDPOINT_URL` (`Config::lambda_endpoint`).
    endpoint_override: Option<String>,
    signer: Arc<AwsSigner>,
}

impl LambdaClient {
    /// A client sending to `endpoint_override` (`Config::lambda_endpoint`) or, when `None`,
    /// to each function's regional endpoint, signing with `signer`.
    pub(super) fn new(endpoint_override: Option<String>, signer: Arc<AwsSigner>) -> Self {
        Self {
            endpoint_override,
            signer,
        }
    }

    /// The signer of the gateway's AWS calls.
    pub(super) fn signer(&self) -> &AwsSigner {
        &self.signer
    }

    /// The endpoint that replaces the regional ones, when one does.
    pub(super) fn endpoint_override(&self) -> Option<&str> {
        self.endpoint_override.as_deref()
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
        self.signer
            .load_within(timeout.min(CREDENTIALS_TIMEOUT))
            .await
            .map_err(sign_error)?;
        let remaining = timeout.saturating_sub(started.elapsed());
        let call = self.signed_call(client, function, client_context, payload, limit);
        tokio::time::timeout(remaining, call)
            .await
            .unwrap_or(Err(InvokeError::Timeout {
                timeout_ms: millis(timeout),
            }))
    }

    /// Signs the Invoke API request, sends it and reads the answer (CONTRACT X10); the caller
    /// bounds it in time.
    async fn signed_call(
        &self,
        client: &reqwest::Client,
        function: &FunctionArn,
        client_context: &str,
        payload: Bytes,
        limit: usize,
    ) -> Result<ToolResponse, InvokeError> {
        let url = invoke_url(self.endpoint_override.as_deref(), function);
        let headers = [
            ("content-type", "application/json"),
            ("x-amz-invocation-type", "RequestResponse"),
            ("x-amz-client-context", client_context),
        ];
        let signature = self
            .signer
            .sign("POST", &url, &headers, &payload, &function.region, "lambda")
            .await
            .map_err(sign_error)?;
        let mut builder = client.post(&url).body(payload);
        for (name, value) in headers.iter().copied() {
            builder = builder.header(name, value);
        }
        for (name, value) in &signature {
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
    use aws_credential_types::provider::error::CredentialsError;

    use super::*;
    use crate::invoke::aws_sign::credentials_error;

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
            let invoke_error = sign_error(credentials_error(&error));
            assert_eq!(invoke_error.to_string(), text, "{error:?}");
        }
    }
}
