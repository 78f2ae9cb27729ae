//! Outbound credentials at call time (CONTRACT X12), sans I/O: the secret asked of the invoker
//! within its own time limit, the credential made of it (`apiKey` in a header or the query,
//! `basic`, an `oauth2ClientCredentials` access token, [`super::oauth2`]), and the request that
//! carries it. What fails becomes the words of an `isError`
//! result that names the tool and what failed, never the secret, its ARN, the account or the
//! region. A `sigv4` tool's request is signed by the invoker as it is sent.

use std::time::{Duration, Instant};

use base64::Engine as _;
use http::HeaderValue;
use percent_encoding::utf8_percent_encode;
use serde_json::Value;

use super::oauth2::{Grant, token_request};
use super::rest_request::COMPONENT;
use crate::invoke::{
    InvokeError, SecretError, SecretText, SigV4Signing, TokenError, ToolInvoker, ToolRequest,
    ToolResponse, ToolTarget,
};
use crate::registry::{KeyPlacement, OutboundAuth};

/// Longest a secret read (and an access token request after it) may take, within the tool's
/// own time limit (CONTRACT X7, X12).
pub(super) const MAX_SECRET_READ: Duration = Duration::from_secs(5);

/// The reads a credential came from: the `stale` ones to ask past after a 401.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Reads {
    secret: Option<u64>,
    token: Option<u64>,
}

/// A credential made for one call, the reads it came from and the secret values it presents
/// (CONTRACT X12: each is redacted from the call's answer).
pub(super) struct Credential {
    placement: Placement,
    reads: Reads,
    presented: Vec<SecretText>,
}

/// A call sent with an outbound credential: its answer, and every secret value the gateway
/// sent on it (CONTRACT X12), for the answer's redaction ([`crate::tool_result::redact`]).
pub(super) struct Presented {
    pub answer: Result<ToolResponse, InvokeError>,
    pub secrets: Vec<SecretText>,
}

/// Why no credential was made.
pub(super) enum CredentialError {
    /// The secret could not be read or used.
    Secret(SecretError),
    /// No access token was obtained.
    Token(TokenError),
}

impl From<SecretError> for CredentialError {
    fn from(error: SecretError) -> Self {
        Self::Secret(error)
    }
}

impl From<TokenError> for CredentialError {
    fn from(error: TokenError) -> Self {
        Self::Token(error)
    }
}

impl CredentialError {
    /// Whether the read or the token request ran out of time.
    fn is_timeout(&self) -> bool {
        matches!(
            self,
            Self::Secret(SecretError::Timeout { .. }) | Self::Token(TokenError::Timeout { .. })
        )
    }
}

enum Placement {
    Header(http::HeaderName, HeaderValue),
    /// A query name and value, both already percent-encoded.
    Query(String, String),
}

/// The `isError` text of a credential that could not be made (CONTRACT X12).
pub(super) fn failure_text(tool: &str, error: &CredentialError) -> String {
    match error {
        CredentialError::Secret(error) => {
            format!("Tool '{tool}': the credential could not be read ({error})")
        }
        CredentialError::Token(error) => {
            format!("Tool '{tool}': the access token could not be obtained ({error})")
        }
    }
}

/// The value of `raw` a reference names: the whole text, or the `json_key` string field of a
/// JSON object.
fn select(raw: &SecretText, json_key: Option<&str>) -> Result<SecretText, SecretError> {
    let Some(key) = json_key else {
        return Ok(raw.clone());
    };
    let object = json_object(raw)?;
    match object.get(key) {
        Some(Value::String(value)) => Ok(SecretText::new(value.as_str())),
        _ => Err(SecretError::KeyMissing(key.to_owned())),
    }
}

fn json_object(raw: &SecretText) -> Result<serde_json::Map<String, Value>, SecretError> {
    match serde_json::from_str(raw.expose()) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(SecretError::NotJson),
    }
}

/// A header value that is never shown (HTTP/2 never indexes it; `Debug` hides it).
pub(super) fn sensitive(text: &str) -> Result<HeaderValue, SecretError> {
    let printable = text
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic());
    let mut value = HeaderValue::from_str(text)
        .ok()
        .filter(|_| printable)
        .ok_or(SecretError::NotHeaderValue)?;
    value.set_sensitive(true);
    Ok(value)
}

/// The string fields `first` and `second` of a JSON secret.
fn two_fields(
    raw: &SecretText,
    first: &'static str,
    second: &'static str,
) -> Result<(String, String), SecretError> {
    let object = json_object(raw)?;
    match (object.get(first), object.get(second)) {
        (Some(Value::String(a)), Some(Value::String(b))) => Ok((a.clone(), b.clone())),
        _ => Err(SecretError::MissingFields(first, second)),
    }
}

fn millis(limit: Duration) -> u64 {
    u64::try_from(limit.as_millis()).unwrap_or(u64::MAX)
}

/// Makes the credential `auth` asks for from the secret (and, for `oauth2ClientCredentials`,
/// the access token) the invoker gives (CONTRACT X12): the kept reads, or new ones past the
/// `stale` ones. Both are bounded by `limit` together.
pub(super) async fn credential<I: ToolInvoker>(
    invoker: &I,
    auth: &OutboundAuth,
    stale: Reads,
    limit: Duration,
) -> Result<Credential, CredentialError> {
    let Some(secret) = auth.secret() else {
        return Err(SecretError::Unsupported.into());
    };
    let started = Instant::now();
    let fetched = tokio::time::timeout(limit, invoker.secret(&secret.source, stale.secret))
        .await
        .unwrap_or(Err(SecretError::Timeout {
            timeout_ms: millis(limit),
        }))?;
    let mut reads = Reads {
        secret: Some(fetched.generation),
        token: None,
    };
    let mut presented = Vec::with_capacity(2);
    let placement = match auth {
        OutboundAuth::ApiKey {
            placement, prefix, ..
        } => {
            let key = select(&fetched.value, secret.json_key.as_deref())?;
            let text = format!("{prefix}{}", key.expose());
            let placement = match placement {
                KeyPlacement::Header(name) => Placement::Header(name.clone(), sensitive(&text)?),
                KeyPlacement::Query(name) => {
                    let encoded = utf8_percent_encode(key.expose(), COMPONENT).to_string();
                    if encoded != key.expose() {
                        // A service that quotes its URL quotes the key as it was sent.
                        presented.push(SecretText::new(encoded));
                    }
                    Placement::Query(
                        utf8_percent_encode(name, COMPONENT).to_string(),
                        utf8_percent_encode(&text, COMPONENT).to_string(),
                    )
                }
            };
            presented.push(key);
            placement
        }
        OutboundAuth::SigV4 { .. } => return Err(SecretError::Unsupported.into()),
        OutboundAuth::OAuth2 {
            token_url,
            scopes,
            audience,
            client_auth,
            ..
        } => {
            let (id, client_secret) = two_fields(&fetched.value, "client_id", "client_secret")?;
            let grant = Grant {
                token_url,
                scopes,
                audience: audience.as_deref(),
                client_auth: *client_auth,
            };
            let request = token_request(&grant, &id, &client_secret)?;
            let left = limit.saturating_sub(started.elapsed());
            let token = tokio::time::timeout(left, invoker.token(&request, stale.token))
                .await
                .unwrap_or(Err(TokenError::Timeout {
                    timeout_ms: millis(limit),
                }))
                .map_err(CredentialError::Token)?;
            reads.token = Some(token.generation);
            let bearer = format!("Bearer {}", token.value.expose());
            // The token endpoint's answer was checked to be header-safe (CONTRACT X12).
            let value = sensitive(&bearer).map_err(|_| TokenError::TokenNotHeaderValue)?;
            presented.push(token.value);
            Placement::Header(http::header::AUTHORIZATION, value)
        }
        OutboundAuth::Basic { .. } => {
            let (user, password) = two_fields(&fetched.value, "username", "password")?;
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            let value = sensitive(&format!("Basic {token}"))?;
            presented.push(SecretText::new(token));
            presented.push(SecretText::new(password));
            Placement::Header(http::header::AUTHORIZATION, value)
        }
    };
    Ok(Credential {
        placement,
        reads,
        presented,
    })
}

/// Sends `request` with the credential of `auth` (CONTRACT X12): the secret read within its
/// own limit inside the call's one timeout (X7), and after a 401 read anew past the refused
/// read and sent once more with what is left of that timeout; a second 401 is the answer. A
/// retry that cannot start in time (no time left, or the new read runs out of it) answers the
/// first 401.
///
/// # Errors
/// In [`Presented::answer`]: the invoker's error, or [`InvokeError::Credential`] when no
/// credential could be made (nothing was sent).
pub(super) async fn invoke_with<I: ToolInvoker>(
    invoker: &I,
    tool: &str,
    auth: &OutboundAuth,
    mut request: ToolRequest,
) -> Presented {
    // `sigv4`: the invoker signs the request as sent, with the gateway's own credentials.
    if let OutboundAuth::SigV4 { service, region } = auth {
        request.sigv4 = Some(SigV4Signing {
            service: service.clone(),
            region: region.clone(),
        });
        return Presented {
            answer: invoker.invoke(request).await,
            secrets: Vec::new(),
        };
    }
    let started = Instant::now();
    let budget = request.timeout;
    let left = || budget.saturating_sub(started.elapsed());
    let mut stale = Reads::default();
    let mut secrets = Vec::new();
    let mut refused: Option<ToolResponse> = None;
    loop {
        if refused.is_some() && left().is_zero() {
            break;
        }
        // The first read starts with the call and may take its whole timeout (up to its own
        // limit); a retry's read what is left.
        let limit = if refused.is_none() { budget } else { left() };
        let made = credential(invoker, auth, stale, limit.min(MAX_SECRET_READ)).await;
        let credential = match made {
            Ok(credential) => credential,
            // CONTRACT X12: the retry that ran out of time reports the 401 it follows.
            Err(error) if refused.is_some() && error.is_timeout() => break,
            Err(error) => {
                return Presented {
                    answer: Err(InvokeError::Credential {
                        text: failure_text(tool, &error),
                    }),
                    secrets,
                };
            }
        };
        secrets.extend(credential.presented.iter().cloned());
        let mut sent = present(request.clone(), &credential);
        sent.timeout = left();
        if refused.is_some() && sent.timeout.is_zero() {
            break;
        }
        let answer = invoker.invoke(sent).await;
        match answer {
            Ok(response)
                if response.status == http::StatusCode::UNAUTHORIZED && refused.is_none() =>
            {
                // CONTRACT X12: the refused credential's secret and token are both read anew.
                stale = credential.reads;
                refused = Some(response);
            }
            answer => return Presented { answer, secrets },
        }
    }
    Presented {
        answer: refused.ok_or(InvokeError::Timeout {
            timeout_ms: millis(budget),
        }),
        secrets,
    }
}

/// `request` carrying `credential`: its header after the others, or its query pair after the
/// endpoint's own query and the arguments' (CONTRACT X9, X12).
pub(super) fn present(mut request: ToolRequest, credential: &Credential) -> ToolRequest {
    match (&credential.placement, &mut request.target) {
        (Placement::Header(name, value), _) => {
            request.headers.push((name.clone(), value.clone()));
        }
        (Placement::Query(name, value), ToolTarget::Http { url, .. }) => {
            let pair = format!("{name}={value}");
            let combined = match url.query() {
                Some(own) if !own.is_empty() => format!("{own}&{pair}"),
                _ => pair,
            };
            url.set_query(Some(&combined));
        }
        // M5: a Lambda function tool has no `_meta.auth`.
        (Placement::Query(..), ToolTarget::Lambda { .. }) => {}
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x12_json_keys_and_what_is_missing() {
        let raw = SecretText::new(r#"{"api_key": "k1", "n": 5}"#);
        assert_eq!(select(&raw, Some("api_key")).unwrap().expose(), "k1");
        assert_eq!(select(&raw, None).unwrap().expose(), raw.expose());
        assert_eq!(
            select(&raw, Some("n")).unwrap_err(),
            SecretError::KeyMissing("n".into())
        );
        assert_eq!(
            select(&SecretText::new("plain"), Some("k")).unwrap_err(),
            SecretError::NotJson
        );
        assert_eq!(
            select(&SecretText::new("[1]"), Some("k")).unwrap_err(),
            SecretError::NotJson
        );
        assert!(sensitive("a\nb").is_err());
        assert!(sensitive("ключ").is_err());
        let value = sensitive("Bearer x").unwrap();
        assert!(value.is_sensitive());
        assert_eq!(format!("{value:?}"), "Sensitive");
    }

    #[test]
    fn x12_failure_texts_name_the_tool_and_what_failed() {
        assert_eq!(
            failure_text("search", &SecretError::AccessDenied.into()),
            "Tool 'search': the credential could not be read (access denied)"
        );
        assert_eq!(
            failure_text("s", &SecretError::Timeout { timeout_ms: 300 }.into()),
            "Tool 's': the credential could not be read (no answer within 300 ms)"
        );
        assert_eq!(
            failure_text("s", &CredentialError::Token(TokenError::Unreachable)),
            "Tool 's': the access token could not be obtained (the token endpoint is unreachable)"
        );
    }
}
