//! Building the [`Authenticator`] of a deployment at cold start from its [`Config`].

use super::chain::{Authenticator, system_clock};
use super::dynamo::DynamoStore;
use super::oauth::{HttpKeySet, OAuthVerifier};
use super::resource::ProtectedResource;
use super::settings::AuthMode;
use crate::config::Config;

impl Authenticator {
    /// The authenticator `config.auth` asks for: `None` for `MCP_AUTH=none`; otherwise the
    /// DynamoDB store from the standard AWS environment (client built once per instance) and, in
    /// the OAuth modes, the key set at `MCP_OAUTH_JWKS_URL`. Settings that cannot be used give
    /// [`Authenticator::misconfigured`], which answers 503 (never serves unauthenticated).
    pub async fn from_config(config: &Config) -> Option<Self> {
        let auth = &config.auth;
        if auth.mode == AuthMode::None {
            return None;
        }
        let Some(table) = auth.table.clone() else {
            return Some(Self::misconfigured());
        };
        let store = DynamoStore::from_env(table, auth.timeout_ms).await;
        let mut verifier = None;
        let mut resource = None;
        if auth.mode.accepts_oauth() {
            let (Some(oauth), Some(base_url)) = (auth.oauth.clone(), auth.resource_url.clone())
            else {
                return Some(Self::misconfigured());
            };
            let Ok(keys) = HttpKeySet::new(oauth.jwks_url.clone(), auth.timeout_ms) else {
                return Some(Self::misconfigured());
            };
            resource = Some(ProtectedResource {
                base_url,
                endpoint_path: config.endpoint_path.clone(),
                routing: config.routing,
                issuer: oauth.issuer.clone(),
                scopes: oauth.required_scopes.clone(),
            });
            verifier = Some(OAuthVerifier::new(oauth, Box::new(keys)));
        }
        Some(Self::new(
            auth.mode,
            auth.rate_limit,
            Some(Box::new(store)),
            verifier,
            resource,
            system_clock(),
        ))
    }
}
