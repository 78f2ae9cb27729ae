//! Inbound authentication settings from `MCP_AUTH*`, `MCP_RATE_LIMIT`, `MCP_RESOURCE_URL` and
//! `MCP_OAUTH_*` (STYLE 8). `MCP_AUTH=none` is the default: Agent Builder deployments are
//! unchanged.

use super::ConfigError;
use super::gateway::{read_number, whole_in};

/// Which credentials a deployment accepts (`MCP_AUTH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// `none`: no inbound authentication (the default).
    None,
    /// `token`: personal access tokens (`mcpat_…`) checked against the delegation table.
    Token,
    /// `oauth`: OAuth 2.1 JWT access tokens verified against the issuer's key set.
    OAuth,
    /// `token+oauth`: both; an `mcpat_` bearer is a personal token, any other a JWT.
    TokenAndOAuth,
    /// `MCP_AUTH` asks for authentication but the settings are broken: every request is
    /// answered 503, never served unauthenticated.
    Misconfigured,
}

impl AuthMode {
    /// The `auth` label of usage events: `none`, `token`, `oauth`, `token+oauth`,
    /// `misconfigured`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Token => "token",
            Self::OAuth => "oauth",
            Self::TokenAndOAuth => "token+oauth",
            Self::Misconfigured => "misconfigured",
        }
    }

    /// Whether personal access tokens are accepted.
    #[must_use]
    pub fn accepts_tokens(self) -> bool {
        matches!(self, Self::Token | Self::TokenAndOAuth)
    }

    /// Whether OAuth access tokens are accepted (and the metadata document is served).
    #[must_use]
    pub fn accepts_oauth(self) -> bool {
        matches!(self, Self::OAuth | Self::TokenAndOAuth)
    }
}

/// A fixed-window request limit (`MCP_RATE_LIMIT=requests/seconds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests admitted per window.
    pub requests: u32,
    /// Window length in seconds; windows start at multiples of it (epoch seconds).
    pub window_s: u64,
}

impl RateLimit {
    /// Parses `120/60` (120 requests per 60 s) or `off` (`None`).
    ///
    /// # Errors
    /// A message naming the accepted forms.
    pub fn parse(text: &str) -> Result<Option<Self>, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let parsed = text.split_once('/').and_then(|(requests, window)| {
            Some(Self {
                requests: requests.trim().parse().ok().filter(|n| *n > 0)?,
                window_s: window.trim().parse().ok().filter(|n| *n > 0)?,
            })
        });
        parsed
            .map(Some)
            .ok_or_else(|| format!("'{text}' is not REQUESTS/SECONDS (e.g. 120/60) or off"))
    }

    /// Start of the window that holds `now_s` (epoch seconds).
    #[must_use]
    pub fn window_start(self, now_s: u64) -> u64 {
        now_s - now_s % self.window_s
    }

    /// Whole seconds from `now_s` to the end of its window, at least 1 (`Retry-After`).
    #[must_use]
    pub fn retry_after_s(self, now_s: u64) -> u64 {
        (self.window_start(now_s) + self.window_s)
            .saturating_sub(now_s)
            .max(1)
    }
}

/// OAuth 2.1 resource-server settings (`MCP_AUTH=oauth` or `token+oauth`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// `MCP_OAUTH_ISSUER`: the exact `iss` of accepted tokens, also the authorization server
    /// named in the metadata document.
    pub issuer: String,
    /// `MCP_OAUTH_JWKS_URL`: the issuer's JSON Web Key Set.
    pub jwks_url: String,
    /// `MCP_OAUTH_ALGORITHMS`: accepted JWS algorithms, default `RS256,ES256`.
    pub algorithms: Vec<String>,
    /// `MCP_OAUTH_REQUIRED_SCOPES`: scopes every token must carry (space or comma separated);
    /// empty by default.
    pub required_scopes: Vec<String>,
    /// `MCP_OAUTH_LEEWAY_SECONDS`: clock skew allowed on `exp` and `nbf`, default 60 s.
    pub leeway_s: u64,
    /// `MCP_OAUTH_GROUPS_CLAIM`: the claim whose array of strings is the caller's `groups`
    /// for authorization policies, default `groups` (CONTRACT Z3).
    pub groups_claim: String,
}

/// Inbound authentication settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// `MCP_AUTH`: `none` (default), `token`, `oauth` or `token+oauth`.
    pub mode: AuthMode,
    /// `MCP_AUTH_TABLE`: the DynamoDB delegation table (string partition key `pk`).
    pub table: Option<String>,
    /// `MCP_RATE_LIMIT`: default `120/60`; `off` turns the limit off.
    pub rate_limit: Option<RateLimit>,
    /// `MCP_AUTH_TIMEOUT_MS`: time limit of one delegation-store or key-set call, default
    /// 2,000 ms; past it the request is answered 503.
    pub timeout_ms: u64,
    /// `MCP_RESOURCE_URL`: the canonical public URL of the endpoint path (in dynamic routing
    /// the route's URL is this + `/{routeKey}`); the `aud` every OAuth token must carry. Never
    /// derived from `Host`.
    pub resource_url: Option<String>,
    /// OAuth settings, present in the OAuth modes.
    pub oauth: Option<OAuthConfig>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            mode: AuthMode::None,
            table: None,
            rate_limit: Some(RateLimit {
                requests: 120,
                window_s: 60,
            }),
            timeout_ms: 2_000,
            resource_url: None,
            oauth: None,
        }
    }
}

fn bad(variable: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        variable,
        reason: reason.into(),
    }
}

impl AuthConfig {
    /// Reads the auth variables that `get` returns (blank values count as unset).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first variable that is malformed, or that the chosen mode
    /// needs and lacks (`MCP_AUTH_TABLE`; in the OAuth modes `MCP_RESOURCE_URL`,
    /// `MCP_OAUTH_ISSUER`, `MCP_OAUTH_JWKS_URL`).
    pub fn from_env_with(
        mut self,
        get: &impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        if let Some(mode) = get("MCP_AUTH") {
            self.mode = match mode.trim() {
                "none" => AuthMode::None,
                "token" => AuthMode::Token,
                "oauth" => AuthMode::OAuth,
                "token+oauth" | "oauth+token" => AuthMode::TokenAndOAuth,
                other => {
                    return Err(bad(
                        "MCP_AUTH",
                        format!("'{other}' is not none, token, oauth or token+oauth"),
                    ));
                }
            };
        }
        if let Some(table) = get("MCP_AUTH_TABLE") {
            self.table = Some(table.trim().to_string());
        }
        if let Some(limit) = get("MCP_RATE_LIMIT") {
            self.rate_limit = RateLimit::parse(&limit).map_err(|r| bad("MCP_RATE_LIMIT", r))?;
        }
        read_number(get, "MCP_AUTH_TIMEOUT_MS", &mut self.timeout_ms)?;
        if let Some(url) = get("MCP_RESOURCE_URL") {
            self.resource_url = Some(absolute_url("MCP_RESOURCE_URL", &url)?);
        }
        if self.mode == AuthMode::None {
            return Ok(self);
        }
        if self.table.is_none() {
            return Err(bad(
                "MCP_AUTH_TABLE",
                format!("MCP_AUTH={} needs the delegation table", self.mode.label()),
            ));
        }
        if self.mode.accepts_oauth() {
            if self.resource_url.is_none() {
                return Err(bad(
                    "MCP_RESOURCE_URL",
                    "OAuth needs the canonical public URL of the endpoint",
                ));
            }
            let required = |name: &'static str| {
                get(name)
                    .ok_or_else(|| bad(name, "required when MCP_AUTH accepts OAuth"))
                    .and_then(|v| absolute_url(name, &v))
            };
            let algorithms = get("MCP_OAUTH_ALGORITHMS").map_or_else(
                || vec!["RS256".to_string(), "ES256".to_string()],
                |list| split(&list),
            );
            if let Some(unknown) = algorithms
                .iter()
                .find(|a| a.parse::<jsonwebtoken::Algorithm>().is_err() || a.starts_with("HS"))
            {
                return Err(bad(
                    "MCP_OAUTH_ALGORITHMS",
                    format!("'{unknown}' is not an asymmetric JWS algorithm"),
                ));
            }
            let leeway_s = match get("MCP_OAUTH_LEEWAY_SECONDS") {
                None => 60,
                Some(text) => whole_in(&text, 0, "of seconds")
                    .map_err(|reason| bad("MCP_OAUTH_LEEWAY_SECONDS", reason))?,
            };
            self.oauth = Some(OAuthConfig {
                issuer: required("MCP_OAUTH_ISSUER")?,
                jwks_url: required("MCP_OAUTH_JWKS_URL")?,
                algorithms,
                required_scopes: get("MCP_OAUTH_REQUIRED_SCOPES")
                    .map(|s| split(&s))
                    .unwrap_or_default(),
                leeway_s,
                groups_claim: get("MCP_OAUTH_GROUPS_CLAIM")
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "groups".into()),
            });
        }
        Ok(self)
    }
}

fn split(list: &str) -> Vec<String> {
    list.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn absolute_url(variable: &'static str, text: &str) -> Result<String, ConfigError> {
    let text = text.trim().trim_end_matches('/');
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {
            Ok(text.to_string())
        }
        _ => Err(bad(variable, "expected an absolute http(s) URL")),
    }
}
