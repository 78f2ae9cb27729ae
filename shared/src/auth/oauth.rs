//! OAuth 2.1 resource server (CONTRACT A5): JWT access tokens verified in the function
//! (jsonwebtoken over ring, [`super::jwt_crypto`]) against the issuer's JSON Web Key Set
//! (RFC 7517), cached per warm instance and fetched again when a token names an unknown `kid`
//! (key rotation).
//!
//! Checks: the header's `alg` is one of `MCP_OAUTH_ALGORITHMS` (never `none` or HMAC) and
//! matches the key's own `alg` when it has one; signature; `iss` equal to `MCP_OAUTH_ISSUER`;
//! `aud` equal to the route's canonical URL (from `MCP_RESOURCE_URL`, never from `Host`);
//! `exp` and `nbf` with `MCP_OAUTH_LEEWAY_SECONDS`; `sub` present (CONTRACT A5). A verified
//! token maps to the delegation item `oauth#<hex sha256(iss \n sub \n client_id)>` (CONTRACT
//! A4); its scopes are checked by the chain (A7). A key set that cannot be fetched is a 503
//! (A9).

use std::sync::RwLock;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::config::OAuthConfig;
use crate::future::BoxFuture;

/// Largest key set read, in bytes.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
/// A cached key set older than this is fetched again on the next token (seconds; CONTRACT A5).
pub const JWKS_MAX_AGE_S: u64 = 3_600;
/// Least seconds between two fetches caused by unknown `kid`s, so that forged `kid`s cannot
/// turn every request into a key-set fetch (CONTRACT A5).
pub const JWKS_MIN_REFETCH_S: u64 = 30;

/// The key set could not be fetched (503, CONTRACT A9).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key set unavailable: {detail}")]
pub struct KeySetError {
    /// What failed (no URL).
    pub detail: String,
}

/// Where the issuer's key set comes from.
pub trait KeySetSource: Send + Sync {
    /// Fetches the whole key set.
    ///
    /// # Errors
    /// [`KeySetError`] when it cannot be fetched or parsed.
    fn fetch(&self) -> BoxFuture<'_, Result<JwkSet, KeySetError>>;
}

/// Why a bearer JWT was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// Not a valid token for this resource (401, CONTRACT A6): malformed, bad signature, wrong
    /// issuer or audience, expired, not yet valid, unknown key (A5).
    #[error("invalid access token: {reason}")]
    Invalid {
        /// A short reason for tests; never sent to the client.
        reason: String,
    },
    /// The key set is unreachable and no cached key fits (503, CONTRACT A9).
    #[error(transparent)]
    KeysUnavailable(#[from] KeySetError),
}

/// A verified access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// The delegation item key: `oauth#` + hex SHA-256 of `iss \n sub \n client_id` (CONTRACT
    /// A4).
    pub delegation_key: String,
    /// The token's scopes (`scope`, space separated, or `scp`; CONTRACT A7).
    pub scopes: Vec<String>,
    /// `sub`.
    pub subject: String,
    /// `client_id`, else `azp`, else empty.
    pub client_id: String,
    /// The groups claim (`MCP_OAUTH_GROUPS_CLAIM`) when it is an array of strings, else empty
    /// (CONTRACT Z3).
    pub groups: Vec<String>,
    /// The other claims whose values are strings, for the policies' entity tags (CONTRACT
    /// Z3); never logged.
    pub tags: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Vec<String>>,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// Registered claims and the ones read above: never entity tags (CONTRACT Z3).
const NOT_TAGS: &[&str] = &[
    "iss",
    "sub",
    "aud",
    "exp",
    "nbf",
    "iat",
    "jti",
    "client_id",
    "azp",
    "scope",
    "scp",
];

struct CachedKeys {
    set: JwkSet,
    fetched_at_s: u64,
}

/// Verifies JWT access tokens against a cached key set (CONTRACT A5).
pub struct OAuthVerifier {
    config: OAuthConfig,
    algorithms: Vec<Algorithm>,
    source: Box<dyn KeySetSource>,
    cache: RwLock<Option<CachedKeys>>,
    /// Held while the key set is fetched; holds the last fetch's failure, if it failed.
    fetching: tokio::sync::Mutex<Option<KeySetError>>,
    /// How many fetches have ended: a request that waited for another's fetch takes its
    /// outcome instead of fetching again (CONTRACT A5, A9).
    fetches: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthVerifier")
            .field("issuer", &self.config.issuer)
            .finish_non_exhaustive()
    }
}

impl OAuthVerifier {
    /// A verifier for `config` over `source`. The key set is fetched on first use.
    #[must_use]
    pub fn new(config: OAuthConfig, source: Box<dyn KeySetSource>) -> Self {
        super::jwt_crypto::install();
        let algorithms = config
            .algorithms
            .iter()
            .filter_map(|a| a.parse().ok())
            .collect();
        Self {
            config,
            algorithms,
            source,
            cache: RwLock::new(None),
            fetching: tokio::sync::Mutex::new(None),
            fetches: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The OAuth settings.
    #[must_use]
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Verifies `token` for the resource `audience` at `now_s` (epoch seconds, for the key-set
    /// cache; `exp`/`nbf` use the system clock), as CONTRACT A5 says.
    ///
    /// # Errors
    /// [`OAuthError::Invalid`] (401, A6) or [`OAuthError::KeysUnavailable`] (503, A9).
    pub async fn verify(
        &self,
        token: &str,
        audience: &str,
        now_s: u64,
    ) -> Result<VerifiedToken, OAuthError> {
        let invalid = |reason: &str| OAuthError::Invalid {
            reason: reason.into(),
        };
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid("algorithm not accepted"));
        }
        let key = self
            .key_for(header.kid.as_deref(), header.alg, now_s)
            .await?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway_s;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "expired",
                ErrorKind::ImmatureSignature => "not yet valid",
                ErrorKind::InvalidAudience => "wrong audience",
                ErrorKind::InvalidIssuer => "wrong issuer",
                ErrorKind::InvalidSignature => "bad signature",
                _ => "invalid",
            })
        })?;
        let claims = data.claims;
        let client_id = claims.client_id.or(claims.azp).unwrap_or_default();
        let scopes = match (claims.scope, claims.scp) {
            (Some(scope), _) => scope.split_whitespace().map(String::from).collect(),
            (None, Some(scp)) => scp,
            (None, None) => Vec::new(),
        };
        let groups_claim = self.config.groups_claim.as_str();
        // CONTRACT Z3: only an array of strings is groups; any other shape is none.
        let groups = match claims.other.get(groups_claim) {
            Some(serde_json::Value::Array(items))
                if items.iter().all(serde_json::Value::is_string) =>
            {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            }
            _ => Vec::new(),
        };
        let tags = claims
            .other
            .iter()
            .filter(|(name, _)| !NOT_TAGS.contains(&name.as_str()) && name.as_str() != groups_claim)
            .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_string())))
            .collect();
        Ok(VerifiedToken {
            delegation_key: oauth_key(&claims.iss, &claims.sub, &client_id),
            scopes,
            subject: claims.sub,
            client_id,
            groups,
            tags,
        })
    }

    /// The decoding key for `kid`, fetching the key set when it is missing, stale, or lacks
    /// the `kid` (at most once per [`JWKS_MIN_REFETCH_S`] for unknown ids; CONTRACT A5).
    async fn key_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
        now_s: u64,
    ) -> Result<DecodingKey, OAuthError> {
        let (found, fetched_at) = self.lookup(kid, alg);
        let stale = fetched_at.is_none_or(|at| now_s.saturating_sub(at) >= JWKS_MAX_AGE_S);
        let may_refetch =
            fetched_at.is_none_or(|at| now_s.saturating_sub(at) >= JWKS_MIN_REFETCH_S);
        if let Some(key) = found.as_ref().filter(|_| !stale) {
            return key.clone();
        }
        if found.is_none() && !stale && !may_refetch {
            return Err(OAuthError::Invalid {
                reason: "unknown key".into(),
            });
        }
        let ended = self.fetches.load(std::sync::atomic::Ordering::Acquire);
        let mut last_failure = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let (again, fetched_again) = self.lookup(kid, alg);
        if fetched_again != fetched_at {
            return again.unwrap_or_else(|| {
                Err(OAuthError::Invalid {
                    reason: "unknown key".into(),
                })
            });
        }
        // A fetch that failed while this one waited is its answer too: requests that arrive
        // together cause one fetch, never one each in a queue.
        if self.fetches.load(std::sync::atomic::Ordering::Acquire) != ended
            && let Some(error) = last_failure.as_ref()
        {
            return found.unwrap_or_else(|| Err(OAuthError::KeysUnavailable(error.clone())));
        }
        let fetched = self.source.fetch().await;
        self.fetches
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        *last_failure = fetched.as_ref().err().cloned();
        match fetched {
            Ok(set) => {
                if let Ok(mut cache) = self.cache.write() {
                    *cache = Some(CachedKeys {
                        set,
                        fetched_at_s: now_s,
                    });
                }
                self.lookup(kid, alg).0.unwrap_or_else(|| {
                    Err(OAuthError::Invalid {
                        reason: "unknown key".into(),
                    })
                })
            }
            // A stale set still serves the keys it has.
            Err(error) => found.unwrap_or(Err(OAuthError::KeysUnavailable(error))),
        }
    }

    /// The key for `kid` in the cached set (`None` when absent) and when the set was fetched.
    fn lookup(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> (Option<Result<DecodingKey, OAuthError>>, Option<u64>) {
        let Ok(cache) = self.cache.read() else {
            return (None, None);
        };
        let Some(cached) = cache.as_ref() else {
            return (None, None);
        };
        let jwk = match kid {
            Some(kid) => cached.set.find(kid),
            // Without a kid, only a set of exactly one key is unambiguous.
            None if cached.set.keys.len() == 1 => cached.set.keys.first(),
            None => None,
        };
        let key = jwk.map(|jwk| {
            let alg_matches = jwk
                .common
                .key_algorithm
                .is_none_or(|key_alg| key_alg.to_string().parse::<Algorithm>() == Ok(alg));
            if !alg_matches {
                return Err(OAuthError::Invalid {
                    reason: "algorithm does not match the key".into(),
                });
            }
            DecodingKey::from_jwk(jwk).map_err(|_| OAuthError::Invalid {
                reason: "unusable key".into(),
            })
        });
        (key, Some(cached.fetched_at_s))
    }
}

/// `oauth#` + hex SHA-256 of `iss \n sub \n client_id`: the delegation item of an OAuth subject
/// (CONTRACT A4).
#[must_use]
pub fn oauth_key(issuer: &str, subject: &str, client_id: &str) -> String {
    let mut hasher = Sha256::new();
    for (i, part) in [issuer, subject, client_id].iter().enumerate() {
        if i > 0 {
            hasher.update(b"\n");
        }
        hasher.update(part.as_bytes());
    }
    format!("oauth#{}", hex::encode(hasher.finalize()))
}
