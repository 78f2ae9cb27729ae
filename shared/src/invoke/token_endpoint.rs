//! Obtaining an `oauth2ClientCredentials` tool's access token (CONTRACT X12): the token request
//! the dispatch built, sent over the gateway's one reqwest client, and its answer read (RFC 6749
//! §5.1, §5.2). The token's lifetime is `expires_in` less a minute.

use std::time::Duration;

use serde_json::Value;

use super::secret_store::SecretText;
use super::token::{TokenError, TokenRequest};

/// Most bytes of a token endpoint's answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// A token this close to its expiry is not used.
const EXPIRY_MARGIN_S: u64 = 60;

/// The RFC 6749 `error` code of a refusal, when it is one (letters and `_`).
fn error_code(body: &[u8]) -> Option<String> {
    let parsed: Value = serde_json::from_slice(body).ok()?;
    let code = parsed.get("error")?.as_str()?;
    (!code.is_empty()
        && code.len() <= 64
        && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
    .then(|| code.to_owned())
}

/// The token of a 200 answer and how long it may be used (`default_ttl` without `expires_in`).
fn token_of(body: &[u8], default_ttl: Duration) -> Result<(SecretText, Duration), TokenError> {
    let parsed: Value = serde_json::from_slice(body).map_err(|_| TokenError::NoToken)?;
    let bearer = parsed
        .get("token_type")
        .and_then(Value::as_str)
        .is_none_or(|t| t.eq_ignore_ascii_case("bearer"));
    let token = parsed
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| bearer && !t.is_empty())
        .ok_or(TokenError::NoToken)?;
    // CONTRACT X12: a token that cannot be the `Authorization` value is never kept.
    if !token.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
        return Err(TokenError::TokenNotHeaderValue);
    }
    let ttl = parsed
        .get("expires_in")
        .and_then(expires_in_seconds)
        .map_or(default_ttl, |s| {
            Duration::from_secs(s.saturating_sub(EXPIRY_MARGIN_S))
        });
    Ok((SecretText::new(token), ttl))
}

/// RFC 6749's `expires_in` in seconds: a whole number written `3600`, `3600.0` or as the string
/// `"3600"` (some servers quote it); anything else is no lifetime (CONTRACT X12).
fn expires_in_seconds(value: &Value) -> Option<u64> {
    match value {
        Value::String(text) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            text.parse().ok()
        }
        other => crate::text::whole_number(other, 0, u64::MAX),
    }
}

/// Sends `request` and reads the token; the caller bounds it with its time limit.
pub(super) async fn obtain(
    client: &reqwest::Client,
    request: &TokenRequest,
    default_ttl: Duration,
) -> Result<(SecretText, Duration), TokenError> {
    let mut builder = client
        .post(request.url.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(request.form.expose().to_owned());
    if let Some(authorization) = &request.authorization {
        builder = builder.header("authorization", authorization.clone());
    }
    let mut response = builder.send().await.map_err(|_| TokenError::Unreachable)?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| TokenError::Unreachable)?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            // A refusal stays a refusal; a 200 this long is no answer the gateway reads.
            return Err(if status == 200 {
                TokenError::AnswerTooLarge {
                    limit_bytes: MAX_ANSWER_BYTES,
                }
            } else {
                TokenError::Refused { status, code: None }
            });
        }
        body.extend_from_slice(&chunk);
    }
    if status != 200 {
        return Err(TokenError::Refused {
            status,
            code: error_code(&body),
        });
    }
    token_of(&body, default_ttl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x12_token_answers_and_refusals() {
        let five = Duration::from_mins(5);
        let (token, ttl) = token_of(
            br#"{"access_token":"t","token_type":"Bearer","expires_in":3600}"#,
            five,
        )
        .unwrap();
        assert_eq!((token.expose(), ttl), ("t", Duration::from_mins(59)));
        assert_eq!(token_of(br#"{"access_token":"t"}"#, five).unwrap().1, five);
        assert_eq!(
            token_of(br#"{"access_token":"t","token_type":"mac"}"#, five).unwrap_err(),
            TokenError::NoToken
        );
        assert_eq!(token_of(b"<html>", five).unwrap_err(), TokenError::NoToken);
        // CONTRACT X12: expires_in as a whole float or a string of digits.
        for written in ["3600", "3600.0", "\"3600\"", "3.6e3"] {
            let body = format!(r#"{{"access_token":"t","expires_in":{written}}}"#);
            assert_eq!(
                token_of(body.as_bytes(), five).unwrap().1,
                Duration::from_mins(59),
                "{written}"
            );
        }
        for odd in ["3600.5", "\"1h\"", "-5", "null", "\"\""] {
            let body = format!(r#"{{"access_token":"t","expires_in":{odd}}}"#);
            assert_eq!(token_of(body.as_bytes(), five).unwrap().1, five, "{odd}");
        }
        // A token that cannot be a header value is the token endpoint's fault.
        assert_eq!(
            token_of(br#"{"access_token":"t\r\nX-Evil: 1"}"#, five).unwrap_err(),
            TokenError::TokenNotHeaderValue
        );
        assert_eq!(
            token_of(r#"{"access_token":"tök"}"#.as_bytes(), five).unwrap_err(),
            TokenError::TokenNotHeaderValue
        );
        assert_eq!(
            TokenError::AnswerTooLarge { limit_bytes: 65536 }.to_string(),
            "the token endpoint's answer exceeds 65536 bytes"
        );
        assert_eq!(
            error_code(br#"{"error":"invalid_client"}"#).as_deref(),
            Some("invalid_client")
        );
        assert_eq!(error_code(br#"{"error":"see https://x"}"#), None);
        assert_eq!(
            TokenError::Refused {
                status: 401,
                code: Some("invalid_client".into())
            }
            .to_string(),
            "the token endpoint answered HTTP 401, invalid_client"
        );
    }
}
