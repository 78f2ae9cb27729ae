//! Reading the secrets of outbound credentials (CONTRACT X12): Secrets Manager `GetSecretValue`
//! and SSM `GetParameter` (with decryption), AWS JSON 1.1 calls over the gateway's one reqwest
//! client signed by its [`AwsSigner`], and `env:` variables from the lookup the composition
//! root hands over. No error names the secret, its ARN, the account or the region.

use std::sync::Arc;

use serde_json::{Value, json};

use super::aws_sign::{AwsSigner, SignError};
use super::secret_store::{SecretError, SecretText};
use crate::registry::{AwsArn, SecretSource};

/// Most bytes of a secret store's answer read (a secret is at most 64 KiB).
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The process environment as the composition root reads it.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where secrets are read, and how the reads are signed.
pub(super) struct SecretReader {
    /// `AWS_ENDPOINT_URL_SECRETS_MANAGER` or `AWS_ENDPOINT_URL`.
    pub(super) secrets_manager_endpoint: Option<String>,
    /// `AWS_ENDPOINT_URL_SSM` or `AWS_ENDPOINT_URL`.
    pub(super) ssm_endpoint: Option<String>,
    pub(super) signer: Arc<AwsSigner>,
    /// `env:` references; `None` reads no variable.
    pub(super) env: Option<EnvLookup>,
}

impl std::fmt::Debug for SecretReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretReader").finish_non_exhaustive()
    }
}

/// A service's regional endpoint, or the override.
fn endpoint(service: &str, arn: &AwsArn, endpoint_override: Option<&str>) -> String {
    if let Some(url) = endpoint_override {
        return format!("{url}/");
    }
    let suffix = if arn.partition == "aws-cn" {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    };
    format!("https://{service}.{}.{suffix}/", arn.region)
}

/// The error type an AWS JSON answer names: `x-amzn-ErrorType` before any `:`, else the body's
/// `__type` after any `#`.
fn error_type(header: Option<&str>, body: &[u8]) -> String {
    if let Some(kind) = header {
        return kind.split(':').next().unwrap_or_default().to_owned();
    }
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("__type").and_then(Value::as_str).map(str::to_owned))
        .map(|t| t.rsplit('#').next().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// What a failed read's answer means.
fn failure(status: u16, kind: &str) -> SecretError {
    match kind {
        "ResourceNotFoundException" | "ParameterNotFound" | "ParameterVersionNotFound" => {
            SecretError::NotFound
        }
        "AccessDeniedException"
        | "AccessDenied"
        | "UnrecognizedClientException"
        | "InvalidSignatureException"
        | "ExpiredTokenException"
        | "DecryptionFailure"
        | "InvalidKeyId"
        | "KMSAccessDeniedException" => SecretError::AccessDenied,
        _ if status == 403 => SecretError::AccessDenied,
        _ => SecretError::Failed { status },
    }
}

impl SecretReader {
    /// Reads `source` once (CONTRACT X12); the caller bounds it with its time limit.
    pub(super) async fn read(
        &self,
        client: &reqwest::Client,
        source: &SecretSource,
    ) -> Result<SecretText, SecretError> {
        let (arn, url, target, body) = match source {
            SecretSource::Env(name) => {
                let lookup = self.env.as_ref().ok_or(SecretError::EnvUnset)?;
                return lookup(name)
                    .filter(|v| !v.is_empty())
                    .map(SecretText::new)
                    .ok_or(SecretError::EnvUnset);
            }
            SecretSource::SecretsManager(arn) => (
                arn,
                endpoint(
                    "secretsmanager",
                    arn,
                    self.secrets_manager_endpoint.as_deref(),
                ),
                "secretsmanager.GetSecretValue",
                json!({"SecretId": arn.arn}),
            ),
            SecretSource::Parameter(arn) => (
                arn,
                endpoint("ssm", arn, self.ssm_endpoint.as_deref()),
                "AmazonSSM.GetParameter",
                json!({"Name": arn.arn, "WithDecryption": true}),
            ),
        };
        let service = if target.starts_with("secretsmanager") {
            "secretsmanager"
        } else {
            "ssm"
        };
        let body = body.to_string().into_bytes();
        let headers = [
            ("content-type", "application/x-amz-json-1.1"),
            ("x-amz-target", target),
        ];
        let signature = self
            .signer
            .sign("POST", &url, &headers, &body, &arn.region, service)
            .await
            .map_err(|e| match e {
                SignError::NoCredentials => SecretError::NoCredentials,
                SignError::CredentialsTimeout { timeout_ms } => SecretError::Timeout { timeout_ms },
                SignError::CredentialsFailed { .. } => SecretError::CredentialsFailed,
                SignError::Unsignable => SecretError::Failed { status: 0 },
            })?;
        let mut request = client.post(&url).body(body);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        for (name, value) in &signature {
            request = request.header(name, value);
        }
        let mut response = request.send().await.map_err(|_| SecretError::Unreachable)?;
        let status = response.status().as_u16();
        let header_type = response
            .headers()
            .get("x-amzn-errortype")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let mut answer = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| SecretError::Unreachable)?
        {
            if answer.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(SecretError::Failed { status });
            }
            answer.extend_from_slice(&chunk);
        }
        if status != 200 {
            return Err(failure(
                status,
                &error_type(header_type.as_deref(), &answer),
            ));
        }
        let parsed: Value =
            serde_json::from_slice(&answer).map_err(|_| SecretError::Failed { status })?;
        let text = match source {
            SecretSource::Parameter(_) => parsed.pointer("/Parameter/Value"),
            _ => parsed.get("SecretString"),
        };
        text.and_then(Value::as_str)
            .map(SecretText::new)
            .ok_or(SecretError::NoString)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x12_aws_error_types_map_to_what_failed() {
        assert_eq!(
            failure(
                400,
                &error_type(None, br#"{"__type":"ResourceNotFoundException"}"#)
            ),
            SecretError::NotFound
        );
        assert_eq!(
            failure(
                400,
                &error_type(None, br#"{"__type":"com.amazonaws#AccessDeniedException"}"#)
            ),
            SecretError::AccessDenied
        );
        assert_eq!(
            failure(400, &error_type(Some("ParameterNotFound:http://x"), b"")),
            SecretError::NotFound
        );
        assert_eq!(failure(403, ""), SecretError::AccessDenied);
        assert_eq!(
            failure(500, "InternalServiceError"),
            SecretError::Failed { status: 500 }
        );
    }

    #[test]
    fn x12_regional_endpoints_and_overrides() {
        let arn = |p: &str, r: &str| AwsArn {
            arn: String::new(),
            partition: p.into(),
            region: r.into(),
        };
        assert_eq!(
            endpoint("ssm", &arn("aws", "eu-west-1"), None),
            "https://ssm.eu-west-1.amazonaws.com/"
        );
        assert_eq!(
            endpoint("secretsmanager", &arn("aws-cn", "cn-north-1"), None),
            "https://secretsmanager.cn-north-1.amazonaws.com.cn/"
        );
        assert_eq!(
            endpoint(
                "ssm",
                &arn("aws", "eu-west-1"),
                Some("http://127.0.0.1:5000")
            ),
            "http://127.0.0.1:5000/"
        );
    }
}
