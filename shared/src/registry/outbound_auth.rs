//! Outbound credentials (CONTRACT M5, X12): how a tool's calls present a credential to its Tool
//! Service (`_meta.auth`), and where the secret it is made of is read, parsed once at load.

use http::HeaderName;

/// A tool's `_meta.auth` (CONTRACT M5) as the call presents it (X12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutboundAuth {
    /// `apiKey`: `prefix` and the secret, in a header or a query parameter.
    ApiKey {
        /// Where the key goes.
        placement: KeyPlacement,
        /// Text sent before the secret (`Bearer ` for a bearer token); empty by default.
        prefix: String,
        /// The key.
        secret: SecretRef,
    },
    /// `basic`: `Authorization: Basic base64(username:password)` from a JSON secret
    /// `{"username": "...", "password": "..."}`.
    Basic {
        /// The JSON secret.
        secret: SecretRef,
    },
    /// `oauth2ClientCredentials`: `Authorization: Bearer <access token>`, the token obtained
    /// from `token_url` with the client credentials grant (RFC 6749 §4.4) and a JSON secret
    /// `{"client_id": "...", "client_secret": "..."}`.
    OAuth2 {
        /// The token endpoint.
        token_url: url::Url,
        /// The JSON secret of the client.
        secret: SecretRef,
        /// `scope`, space-separated in the token request; none when empty.
        scopes: Vec<String>,
        /// `audience` of the token request, when given.
        audience: Option<String>,
        /// How the client authenticates to the token endpoint.
        client_auth: ClientAuth,
    },
    /// `sigv4`: the request signed with the gateway's own AWS credentials (CONTRACT X12).
    SigV4 {
        /// The signing name of the service, e.g. `execute-api`.
        service: String,
        /// The signing region: the manifest's, else the one the endpoint's host names.
        region: String,
    },
}

impl OutboundAuth {
    /// The manifest's name of this type.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::ApiKey { .. } => "apiKey",
            Self::Basic { .. } => "basic",
            Self::OAuth2 { .. } => "oauth2ClientCredentials",
            Self::SigV4 { .. } => "sigv4",
        }
    }

    /// The secret the credential is made of; `None` for `sigv4`, which signs with the
    /// gateway's own AWS credentials.
    #[must_use]
    pub fn secret(&self) -> Option<&SecretRef> {
        match self {
            Self::ApiKey { secret, .. } | Self::Basic { secret } | Self::OAuth2 { secret, .. } => {
                Some(secret)
            }
            Self::SigV4 { .. } => None,
        }
    }
}

/// How an `oauth2ClientCredentials` client authenticates to the token endpoint (CONTRACT M5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `clientAuth: "basic"` (the default): HTTP Basic with the client id and secret
    /// (`client_secret_basic`).
    Basic,
    /// `clientAuth: "body"`: `client_id` and `client_secret` in the form body
    /// (`client_secret_post`).
    Body,
}

/// Where an `apiKey` goes (CONTRACT M5, X12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlacement {
    /// A request header of this name (lower case).
    Header(HeaderName),
    /// A query parameter of this name, after the endpoint's own query and the arguments' (X9).
    Query(String),
}

pub use crate::config::secret_ref::{AwsArn, SecretRef, SecretSource};
pub(crate) use crate::config::secret_ref::{
    is_partition_region_account, is_region, region_of_host,
};

/// CONTRACT M5: every `env:` secret reference of the snapshot's callable tools, as load
/// problems naming the route and tool, for a process under the Lambda runtime (where the
/// environment holds the function's own settings and credentials, never a Tool Service's).
#[must_use]
pub fn env_secret_problems(
    snapshot: &crate::registry::Snapshot,
) -> Vec<crate::registry::ManifestProblem> {
    let mut routes: Vec<&crate::registry::Route> = snapshot.routes().collect();
    routes.sort_by(|a, b| a.key.cmp(&b.key));
    let mut problems = Vec::new();
    for route in routes {
        let mut tools: Vec<&crate::registry::Tool> = route
            .tools
            .values()
            .filter_map(|lookup| match lookup {
                crate::registry::ToolLookup::Active(tool) => Some(&**tool),
                crate::registry::ToolLookup::Conflict { .. } => None,
            })
            .filter(|tool| {
                tool.auth
                    .as_deref()
                    .and_then(OutboundAuth::secret)
                    .is_some_and(|secret| matches!(secret.source, SecretSource::Env(_)))
            })
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let route_name = route
            .key
            .as_deref()
            .map_or_else(String::new, |key| format!("route '{key}': "));
        for tool in tools {
            problems.push(crate::registry::ManifestProblem {
                path: String::new(),
                message: format!(
                    "{route_name}tool '{}': _meta.auth.secret: an env: reference is read only \
                     outside Lambda (mcp-local); a Lambda function reads its secrets from a \
                     Secrets Manager or SSM ARN",
                    tool.name
                ),
            });
        }
    }
    problems
}
