//! The token request of an `oauth2ClientCredentials` tool (CONTRACT X12), sans I/O: RFC 6749
//! §4.4.2's form (`grant_type=client_credentials`, `scope`, `audience`), the client
//! authenticated with HTTP Basic (`client_secret_basic`, §2.3.1: each part form-encoded first)
//! or in the body (`client_secret_post`).

use base64::Engine as _;
use url::form_urlencoded;

use crate::invoke::{SecretError, SecretText, TokenKey, TokenRequest};
use crate::registry::ClientAuth;

/// What an `oauth2ClientCredentials` tool asks of its token endpoint.
pub(super) struct Grant<'a> {
    pub token_url: &'a url::Url,
    pub scopes: &'a [String],
    pub audience: Option<&'a str>,
    pub client_auth: ClientAuth,
}

fn form_encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The token request of `grant` for the client `client_id` / `client_secret`.
///
/// # Errors
/// [`SecretError::NotHeaderValue`] when the client's `Authorization` cannot be a header.
pub(super) fn token_request(
    grant: &Grant<'_>,
    client_id: &str,
    client_secret: &str,
) -> Result<TokenRequest, SecretError> {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "client_credentials");
    let scope = grant.scopes.join(" ");
    if !scope.is_empty() {
        form.append_pair("scope", &scope);
    }
    if let Some(audience) = grant.audience {
        form.append_pair("audience", audience);
    }
    let authorization = match grant.client_auth {
        ClientAuth::Body => {
            form.append_pair("client_id", client_id);
            form.append_pair("client_secret", client_secret);
            None
        }
        ClientAuth::Basic => {
            let pair = format!(
                "{}:{}",
                form_encoded(client_id),
                form_encoded(client_secret)
            );
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            Some(super::credentials::sensitive(&format!("Basic {encoded}"))?)
        }
    };
    // The token is kept per endpoint, client and request; the client secret is not part of
    // the key, so a rotated secret keeps the token until it expires or is refused.
    let key = TokenKey(format!(
        "{}\n{client_id}\n{scope}\n{}\n{:?}",
        grant.token_url,
        grant.audience.unwrap_or_default(),
        grant.client_auth
    ));
    Ok(TokenRequest {
        key,
        url: grant.token_url.clone(),
        authorization,
        form: SecretText::new(form.finish()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x12_client_credentials_requests_in_both_client_auths() {
        let url = url::Url::parse("https://idp.example/oauth2/token").unwrap();
        let scopes = ["read".to_string(), "write:all".to_string()];
        let grant = |client_auth| Grant {
            token_url: &url,
            scopes: &scopes,
            audience: Some("https://api.example"),
            client_auth,
        };
        let basic = token_request(&grant(ClientAuth::Basic), "app 1", "s:e&c").unwrap();
        assert_eq!(
            basic.form.expose(),
            "grant_type=client_credentials&scope=read+write%3Aall&audience=https%3A%2F%2Fapi.example"
        );
        let expected = base64::engine::general_purpose::STANDARD.encode("app+1:s%3Ae%26c");
        let authorization = basic.authorization.unwrap();
        assert!(authorization.is_sensitive());
        assert_eq!(authorization.to_str().unwrap(), format!("Basic {expected}"));
        let body = token_request(&grant(ClientAuth::Body), "app", "sec").unwrap();
        assert!(body.authorization.is_none());
        assert!(
            body.form
                .expose()
                .ends_with("&client_id=app&client_secret=sec")
        );
        assert_ne!(basic.key, body.key);
    }
}
