//! The gateway's own AWS request signing, shared by every AWS API it calls over its one reqwest
//! client (the Lambda Invoke API, CONTRACT X10; Secrets Manager and SSM reads, X12): SigV4
//! (`aws-sigv4`, the signer the AWS SDK clients use) with credentials from the standard AWS
//! chain.
//!
//! Credentials are loaded the first time a call needs them, never at cold start, and kept until
//! five minutes before they expire.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};

/// The W3C trace headers a signature leaves out (CONTRACT O2), beside the SDK's own exclusions
/// (`x-amzn-trace-id` among them).
const UNSIGNED_TRACE_HEADERS: [&str; 3] = ["traceparent", "tracestate", "baggage"];
use aws_sigv4::sign::v4;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// SigV4's URI encoding: every byte but `A-Za-z0-9-._~`.
const SIGV4_ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Rewrites `url`'s query in SigV4's own encoding, so that the query sent is the one signed
/// (CONTRACT X12): each `name=value` pair in its order, decoded as `aws-sigv4` decodes it
/// (`application/x-www-form-urlencoded`: `+` is a space) and percent-encoded but for
/// `A-Za-z0-9-._~`; a name without `=` stays so, empty pairs are dropped.
///
/// `aws-sigv4` signs that encoding of the pairs whatever the URL spells, while a Tool Service
/// checks the signature over the query it receives: a manifest endpoint's `?a=b+c`, `x=%7e` or
/// `p=a:b` sent as written carries a signature that does not hold for it.
pub(super) fn sigv4_query(url: &mut url::Url) {
    let Some(query) = url.query() else {
        return;
    };
    let encode = |text: &str| utf8_percent_encode(text, SIGV4_ENCODED).to_string();
    let pairs: Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            let (name, value) = url::form_urlencoded::parse(pair.as_bytes()).next()?;
            Some(if pair.contains('=') {
                format!("{}={}", encode(&name), encode(&value))
            } else {
                encode(&name)
            })
        })
        .collect();
    if pairs.is_empty() {
        url.set_query(None);
    } else {
        url.set_query(Some(&pairs.join("&")));
    }
}

/// Credentials this close to their expiry are fetched anew.
const CREDENTIALS_MARGIN: Duration = Duration::from_mins(5);

/// Why a request could not be signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SignError {
    /// The standard AWS chain gave no credentials (no provider of it has any).
    NoCredentials,
    /// A provider of the chain did not answer within `timeout_ms` (its own bound, or the
    /// caller's of [`AwsSigner::load_within`]).
    CredentialsTimeout {
        /// The bound that ran out, in ms.
        timeout_ms: u64,
    },
    /// A provider of the chain failed (a refused connection, an error answer, an invalid
    /// configuration): `kind` names what, never the endpoint, a token or a key.
    CredentialsFailed {
        /// A short description.
        kind: &'static str,
    },
    /// The request itself could not be signed (never seen with the gateway's own requests).
    Unsignable,
}

/// Milliseconds of `duration`, saturating.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The [`SignError`] of a credential chain's failure (CONTRACT X10): none found, a provider that
/// timed out by its own bound, an invalid configuration, or a provider that failed. The
/// provider's own message is never kept (it may name the endpoint, a token or a key).
pub(super) fn credentials_error(error: &CredentialsError) -> SignError {
    match error {
        CredentialsError::CredentialsNotLoaded(_) => SignError::NoCredentials,
        CredentialsError::ProviderTimedOut(timed_out) => SignError::CredentialsTimeout {
            timeout_ms: millis(timed_out.timeout_duration()),
        },
        CredentialsError::InvalidConfiguration(_) => SignError::CredentialsFailed {
            kind: "the credential configuration is invalid",
        },
        _ => SignError::CredentialsFailed {
            kind: "the credential provider failed",
        },
    }
}

/// Credentials from the standard AWS chain (or fixed ones), and the SigV4 signature of a
/// request made with them.
#[derive(Debug, Default)]
pub(super) struct AwsSigner {
    provider: tokio::sync::OnceCell<Option<SharedCredentialsProvider>>,
    cached: Mutex<Option<Credentials>>,
}

impl AwsSigner {
    /// A signer with fixed credentials instead of the chain's.
    pub(super) fn with_static_credentials(credentials: Credentials) -> Self {
        Self {
            provider: tokio::sync::OnceCell::new_with(Some(Some(SharedCredentialsProvider::new(
                credentials,
            )))),
            cached: Mutex::default(),
        }
    }

    async fn credentials(&self) -> Result<Credentials, SignError> {
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
                crate::aws_http::sdk_config_loader()
                    .load()
                    .await
                    .credentials_provider()
            })
            .await
            .as_ref()
            .ok_or(SignError::NoCredentials)?;
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

    /// Loads the credentials (or finds them kept) within `bound`, so that a signature made
    /// right after needs no wait (CONTRACT X10: a credentials endpoint that never answers is
    /// reported as such).
    ///
    /// # Errors
    /// [`SignError::CredentialsTimeout`] naming `bound` when they are not there by then, else
    /// the chain's own failure.
    pub(super) async fn load_within(&self, bound: Duration) -> Result<(), SignError> {
        tokio::time::timeout(bound, self.credentials())
            .await
            .map_err(|_| SignError::CredentialsTimeout {
                timeout_ms: millis(bound),
            })?
            .map(|_| ())
    }

    /// The headers that sign a `method` request of `body` to `url` with `headers` for
    /// `service` in `region` (SigV4).
    pub(super) async fn sign(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
        region: &str,
        service: &str,
    ) -> Result<Vec<(String, String)>, SignError> {
        let identity = self.credentials().await?.into();
        // CONTRACT O2: trace context is never signed. Tracing layers between the gateway and
        // the service may rewrite it (API Gateway appends to X-Amzn-Trace-Id), and botocore,
        // like the SDK's defaults for X-Amzn-Trace-Id, leaves it out of the signature.
        let mut settings = SigningSettings::default();
        settings
            .excluded_headers
            .get_or_insert_with(Vec::new)
            .extend(UNSIGNED_TRACE_HEADERS.map(std::borrow::Cow::Borrowed));
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(region)
            .name(service)
            .time(SystemTime::now())
            .settings(settings)
            .build()
            .map_err(|_| SignError::NoCredentials)?
            .into();
        let signable = SignableRequest::new(
            method,
            url,
            headers.iter().copied(),
            SignableBody::Bytes(body),
        )
        .map_err(|_| SignError::Unsignable)?;
        let (instructions, _signature) = sign(signable, &params)
            .map_err(|_| SignError::Unsignable)?
            .into_parts();
        Ok(instructions
            .headers()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect())
    }
}
