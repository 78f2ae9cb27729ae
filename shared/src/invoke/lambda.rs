//! Lambda function tools' Invoke API call (CONTRACT X10) over the gateway's one reqwest client,
//! signed by the gateway's [`AwsSigner`] (SigV4, credentials from the standard AWS chain, loaded
//! at the first call). `Config::lambda_endpoint` (`AWS_ENDPOINT_URL_LAMBDA`,
//! else `AWS_ENDPOINT_URL`) replaces the regional endpoint, as it does for the AWS SDKs.

use std::sync::Arc;

use bytes::Bytes;

use super::aws_sign::{AwsSigner, SignError};
use super::lambda_invocation::{classify, invoke_url};
use super::{InvokeError, ToolResponse};
use crate::registry::FunctionArn;

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
        let url = invoke_url(self.endpoint_override.as_deref(), function);
        let headers = [
            ("content-type", "application/json"),
            ("x-amz-invocation-type", "RequestResponse"),
            ("x-amz-client-context", client_context),
        ];
        let signature = self
            .signer
            .sign_post(&url, &headers, &payload, &function.region, "lambda")
            .await
            .map_err(|e| match e {
                SignError::NoCredentials => InvokeError::NoCredentials,
                SignError::Unsignable => InvokeError::Transport {
                    kind: "the Invoke API request could not be signed",
                },
            })?;
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
