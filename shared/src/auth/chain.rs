//! The authentication chain of one request, after Origin (H5) and Host (H6) (CONTRACT A2):
//! credential (`Authorization: Bearer` only, A3) → stateless token checks (personal-token
//! checksum, A3, or JWT verification, A5, and its scopes, A7) → the store's atomic decision
//! (A4), limit (A8) and usage record (A4, A12). Refusals are answered as A6–A9 say.
//!
//! A request whose path names no well-formed route (outside the endpoint, missing or invalid
//! route key) still needs a well-formed credential but makes no store call: the checks after
//! this one reject it before any method runs, and nothing is counted (CONTRACT A2).

use std::fmt::Write as _;
use std::sync::Arc;

use http::{HeaderMap, header};

use super::oauth::{OAuthError, OAuthVerifier};
use super::resource::ProtectedResource;
use super::store::{Admission, AdmitRequest, DelegationStore, NegativeCache};
use super::token::PersonalToken;
use crate::authz::CallerFacts;
use crate::config::{AuthMode, RateLimit};
use crate::policy::AuthRejection;

/// Epoch seconds now (a test moves it by hand).
pub type EpochClock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The system clock in epoch seconds.
#[must_use]
pub fn system_clock() -> EpochClock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    })
}

/// `Retry-After` of a 503, in seconds (CONTRACT A9).
pub const UNAVAILABLE_RETRY_AFTER_S: u64 = 5;
/// Longest `Authorization` value read, in bytes (a JWT with many claims fits easily; CONTRACT
/// A3).
pub const MAX_AUTHORIZATION_BYTES: usize = 8 * 1024;

/// What the chain decided, for the usage event (CONTRACT U1, A12): never a token, hash or claim
/// (CONTRACT A11).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthRecord {
    /// `auth_outcome` (CONTRACT A12): `ok`, `missing`, `malformed`, `bad_checksum`,
    /// `invalid_jwt`, `unknown`, `revoked`, `expired`, `idle_expired`, `wrong_route`,
    /// `insufficient_scope`, `rate_limited`, `unavailable`, `no_route`, `misconfigured`,
    /// `discovery` (a `/.well-known/` path, answered without a credential).
    pub outcome: &'static str,
    /// The delegation id, once known.
    pub delegation_id: Option<String>,
    /// `Retry-After` sent, in seconds.
    pub retry_after_s: Option<u64>,
}

/// The inbound authenticator of a deployment: the chain of CONTRACT A2–A9, recording the fields
/// of A12.
pub struct Authenticator {
    mode: AuthMode,
    rate_limit: Option<RateLimit>,
    store: Option<Box<dyn DelegationStore>>,
    oauth: Option<OAuthVerifier>,
    resource: Option<ProtectedResource>,
    negative: NegativeCache,
    clock: EpochClock,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("mode", &self.mode)
            .field("rate_limit", &self.rate_limit)
            .finish_non_exhaustive()
    }
}

enum Credential<'a> {
    Token(PersonalToken),
    Jwt(&'a str),
}

impl Authenticator {
    /// An authenticator for `mode` (not [`AuthMode::None`], CONTRACT A1) over a store, an
    /// optional OAuth verifier and the route's protected-resource facts; `rate_limit` is the
    /// request limit of each delegation (CONTRACT A8).
    #[must_use]
    pub fn new(
        mode: AuthMode,
        rate_limit: Option<RateLimit>,
        store: Option<Box<dyn DelegationStore>>,
        oauth: Option<OAuthVerifier>,
        resource: Option<ProtectedResource>,
        clock: EpochClock,
    ) -> Self {
        Self {
            mode,
            rate_limit,
            store,
            oauth,
            resource,
            negative: NegativeCache::default(),
            clock,
        }
    }

    /// One that answers every request 503: `MCP_AUTH` asks for authentication but its
    /// settings are broken, so nothing is served unauthenticated (CONTRACT A1, A9).
    #[must_use]
    pub fn misconfigured() -> Self {
        Self::new(
            AuthMode::Misconfigured,
            None,
            None,
            None,
            None,
            system_clock(),
        )
    }

    /// The mode.
    #[must_use]
    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    /// The protected-resource facts (OAuth modes; CONTRACT A10).
    #[must_use]
    pub fn resource(&self) -> Option<&ProtectedResource> {
        self.resource.as_ref()
    }

    /// Authenticates a request for `route` (`None` when its path names no well-formed route,
    /// CONTRACT A2): the admitted caller's facts for authorization policies (CONTRACT Z3).
    ///
    /// # Errors
    /// An [`AuthRejection`]: 401 (A6), 403 (scope, A7), 429 (A8) or 503 (A9).
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        route: Option<&str>,
        record: &mut AuthRecord,
    ) -> Result<CallerFacts, AuthRejection> {
        if self.mode == AuthMode::Misconfigured {
            return Err(Self::unavailable(record, "misconfigured"));
        }
        let presented = headers.contains_key(header::AUTHORIZATION);
        let credential = match self.credential(headers) {
            Ok(credential) => credential,
            Err(outcome) => return Err(self.unauthorized(record, outcome, presented, route)),
        };
        let mut facts = CallerFacts::default();
        let key = match credential {
            Credential::Token(token) => {
                facts.auth = "token";
                token.store_key()
            }
            Credential::Jwt(jwt) => {
                let Some(verifier) = &self.oauth else {
                    return Err(self.unauthorized(record, "malformed", true, route));
                };
                let Some(audience) = self.resource.as_ref().map(|r| r.resource_url(route)) else {
                    return Err(Self::unavailable(record, "misconfigured"));
                };
                match verifier.verify(jwt, &audience, (self.clock)()).await {
                    Ok(token) => {
                        let required = &verifier.config().required_scopes;
                        if !required.iter().all(|s| token.scopes.contains(s)) {
                            record.outcome = "insufficient_scope";
                            return Err(AuthRejection::InsufficientScope {
                                challenge: self.challenge(route, Some("insufficient_scope")),
                            });
                        }
                        facts = CallerFacts {
                            auth: "oauth",
                            subject: token.subject,
                            groups: token.groups,
                            scopes: token.scopes,
                            client_id: token.client_id,
                            tags: token.tags,
                        };
                        token.delegation_key
                    }
                    Err(OAuthError::Invalid { .. }) => {
                        return Err(self.unauthorized(record, "invalid_jwt", true, route));
                    }
                    Err(OAuthError::KeysUnavailable(_)) => {
                        return Err(Self::unavailable(record, "unavailable"));
                    }
                }
            }
        };
        let Some(route) = route else {
            record.outcome = "no_route";
            return Ok(facts);
        };
        if let Some(denial) = self.negative.get(&key) {
            return Err(self.unauthorized(record, denial.label(), true, Some(route)));
        }
        let Some(store) = &self.store else {
            return Err(Self::unavailable(record, "misconfigured"));
        };
        let request = AdmitRequest {
            key: &key,
            route,
            now_s: (self.clock)(),
            limit: self.rate_limit,
        };
        match store.admit(request).await {
            Ok(Admission::Admitted {
                delegation_id,
                groups,
            }) => {
                record.outcome = "ok";
                // CONTRACT Z3: a token's caller is its delegation; an OAuth caller adds its
                // grant's groups to the claim's.
                if facts.auth == "token" {
                    facts.subject.clone_from(&delegation_id);
                }
                for group in groups {
                    if !facts.groups.contains(&group) {
                        facts.groups.push(group);
                    }
                }
                record.delegation_id = Some(delegation_id);
                Ok(facts)
            }
            Ok(Admission::Denied(denial)) => {
                // Only a token can never come back: an OAuth subject may be granted later (A4).
                if denial.is_final() && key.starts_with("tok#") {
                    self.negative.insert(&key, denial);
                }
                Err(self.unauthorized(record, denial.label(), true, Some(route)))
            }
            Ok(Admission::Limited {
                delegation_id,
                retry_after_s,
            }) => {
                record.outcome = "rate_limited";
                record.delegation_id = Some(delegation_id);
                record.retry_after_s = Some(retry_after_s);
                Err(AuthRejection::RateLimited { retry_after_s })
            }
            Err(error) => {
                tracing::warn!(%error, "delegation store unavailable; answering 503");
                Err(Self::unavailable(record, "unavailable"))
            }
        }
    }

    /// The bearer credential: exactly one `Authorization` header, scheme `Bearer`
    /// (case-insensitive), a token68 value of at most [`MAX_AUTHORIZATION_BYTES`] (CONTRACT A3).
    fn credential<'h>(&self, headers: &'h HeaderMap) -> Result<Credential<'h>, &'static str> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let value = values.next().ok_or("missing")?;
        if values.next().is_some() || value.len() > MAX_AUTHORIZATION_BYTES {
            return Err("malformed");
        }
        let value = value.to_str().map_err(|_| "malformed")?;
        let (scheme, token) = value.split_once(' ').ok_or("malformed")?;
        let token = token.trim_start_matches(' ');
        let token68 = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || !token.bytes().all(token68)
        {
            return Err("malformed");
        }
        if token.starts_with(super::token::TOKEN_PREFIX) && self.mode.accepts_tokens() {
            return PersonalToken::parse(token)
                .map(Credential::Token)
                .map_err(|e| match e {
                    super::token::TokenFormatError::Malformed => "malformed",
                    super::token::TokenFormatError::BadChecksum => "bad_checksum",
                });
        }
        if self.mode.accepts_oauth() && token.bytes().filter(|b| *b == b'.').count() == 2 {
            return Ok(Credential::Jwt(token));
        }
        Err("malformed")
    }

    /// The `WWW-Authenticate` value: `Bearer realm="mcp"`, with `resource_metadata` and
    /// `scope` in the OAuth modes and `error` when one is given (CONTRACT A6, A7).
    fn challenge(&self, route: Option<&str>, error: Option<&str>) -> String {
        let mut challenge = String::from("Bearer realm=\"mcp\"");
        if let Some(resource) = self.resource.as_ref().filter(|_| self.mode.accepts_oauth()) {
            let _ = write!(
                challenge,
                ", resource_metadata=\"{}\"",
                resource.metadata_url(route)
            );
            let scopes = self
                .oauth
                .as_ref()
                .map(|o| o.config().required_scopes.join(" "))
                .unwrap_or_default();
            if !scopes.is_empty() {
                let _ = write!(challenge, ", scope=\"{scopes}\"");
            }
        }
        if let Some(error) = error {
            let _ = write!(challenge, ", error=\"{error}\"");
        }
        challenge
    }

    fn unauthorized(
        &self,
        record: &mut AuthRecord,
        outcome: &'static str,
        presented: bool,
        route: Option<&str>,
    ) -> AuthRejection {
        record.outcome = outcome;
        AuthRejection::Unauthorized {
            challenge: self.challenge(route, presented.then_some("invalid_token")),
        }
    }

    fn unavailable(record: &mut AuthRecord, outcome: &'static str) -> AuthRejection {
        record.outcome = outcome;
        record.retry_after_s = Some(UNAVAILABLE_RETRY_AFTER_S);
        AuthRejection::Unavailable {
            retry_after_s: UNAVAILABLE_RETRY_AFTER_S,
        }
    }
}
