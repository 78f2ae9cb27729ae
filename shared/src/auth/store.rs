//! The delegation store (CONTRACT A4): one atomic decision per request (active, not expired,
//! allowed on this route, under the request limit of CONTRACT A8) that, only when it admits,
//! extends the idle expiry and counts the request. [`DelegationStore`] is the I/O trait;
//! [`judge`] is the pure reading of a refused write.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::config::RateLimit;
use crate::future::BoxFuture;

/// One admission question: may the delegation stored under `key` make a request on `route` at
/// `now_s` (CONTRACT A4, A8)?
#[derive(Debug, Clone, Copy)]
pub struct AdmitRequest<'a> {
    /// The item key: `tok#…` for a personal token, `oauth#…` for an OAuth subject (CONTRACT
    /// A4).
    pub key: &'a str,
    /// The route key the request is for.
    pub route: &'a str,
    /// Now, in epoch seconds.
    pub now_s: u64,
    /// The request limit (`MCP_RATE_LIMIT`, CONTRACT A8), `None` when off.
    pub limit: Option<RateLimit>,
}

/// Why a delegation is refused (CONTRACT A4; all answered with the same 401, A6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// No delegation under this key.
    Unknown,
    /// The delegation was revoked.
    Revoked,
    /// Past its absolute expiry (`expires_at`).
    Expired,
    /// Unused for longer than its idle TTL (`idle_expires_at`).
    IdleExpired,
    /// The delegation does not include this route.
    WrongRoute,
}

impl Denial {
    /// The `auth_outcome` label of usage events (CONTRACT A12).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Revoked => "revoked",
            Self::Expired => "expired",
            Self::IdleExpired => "idle_expired",
            Self::WrongRoute => "wrong_route",
        }
    }

    /// Whether the key can never be admitted again (kept in the negative cache, CONTRACT A4).
    #[must_use]
    pub fn is_final(self) -> bool {
        !matches!(self, Self::WrongRoute)
    }
}

/// The store's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Admitted and counted; the idle expiry was extended (CONTRACT A4, A8).
    Admitted {
        /// The delegation's id (logged; not a secret).
        delegation_id: String,
        /// The delegation's `groups` (`mcp-admin token create --group`), read from the
        /// admitting write's returned item (CONTRACT Z3).
        groups: Vec<String>,
    },
    /// Refused: 401 (CONTRACT A6). Nothing was written.
    Denied(Denial),
    /// Over the limit in this window: 429 (CONTRACT A8). Nothing was written.
    Limited {
        /// The delegation's id.
        delegation_id: String,
        /// Seconds to the end of the window, at least 1.
        retry_after_s: u64,
    },
}

/// The store could not answer (unreachable, throttled, timed out): 503, never 401 (CONTRACT A9).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("delegation store unavailable: {detail}")]
pub struct StoreError {
    /// What failed, without keys or token material.
    pub detail: String,
}

/// Decides and records admissions atomically (CONTRACT A4), request limit included (A8).
pub trait DelegationStore: Send + Sync {
    /// Admits or refuses one request. A refusal writes nothing (CONTRACT A4, A8).
    ///
    /// # Errors
    /// [`StoreError`] when the store cannot be reached in time.
    fn admit<'a>(
        &'a self,
        request: AdmitRequest<'a>,
    ) -> BoxFuture<'a, Result<Admission, StoreError>>;
}

/// The delegation fields [`judge`] reads from the item as it was when a conditional write was
/// refused (`ReturnValuesOnConditionCheckFailure=ALL_OLD`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredDelegation {
    /// `delegation_id`.
    pub delegation_id: String,
    /// `status`: `active` or `revoked`.
    pub status: String,
    /// `routes`.
    pub routes: Vec<String>,
    /// `expires_at`, epoch seconds.
    pub expires_at: u64,
    /// `idle_expires_at`, epoch seconds.
    pub idle_expires_at: u64,
    /// `rl_window`: start of the window the counter belongs to, when one was started (CONTRACT
    /// A8).
    pub window_start: Option<u64>,
    /// `rl_count`: requests admitted in that window.
    pub window_count: u64,
    /// `groups`: the delegation's groups for authorization policies (CONTRACT Z3).
    pub groups: Vec<String>,
}

/// What a refused conditional write means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Refuse with 401.
    Deny(Denial),
    /// Over the limit: 429 with this `Retry-After` (CONTRACT A8).
    Limited {
        /// Seconds to the end of the window.
        retry_after_s: u64,
    },
    /// The counter belongs to an older window: start the current one.
    StartWindow,
    /// The counter is in the current window and under the limit (another instance moved it
    /// meanwhile): try the increment again.
    Increment,
}

/// Reads the item as it was when a write was refused. `None` = no item. Validity and route come
/// first (CONTRACT A4), the request limit last (A8).
#[must_use]
pub fn judge(item: Option<&StoredDelegation>, request: &AdmitRequest<'_>) -> Verdict {
    let Some(item) = item else {
        return Verdict::Deny(Denial::Unknown);
    };
    let now = request.now_s;
    if item.status != "active" {
        return Verdict::Deny(Denial::Revoked);
    }
    if item.expires_at <= now {
        return Verdict::Deny(Denial::Expired);
    }
    if item.idle_expires_at <= now {
        return Verdict::Deny(Denial::IdleExpired);
    }
    if !item.routes.iter().any(|r| r == request.route) {
        return Verdict::Deny(Denial::WrongRoute);
    }
    let Some(limit) = request.limit else {
        // Without a limit the only conditions are the ones above; the item changed meanwhile.
        return Verdict::Increment;
    };
    let window = limit.window_start(now);
    match item.window_start {
        Some(start) if start >= window => {
            if item.window_count >= u64::from(limit.requests) {
                Verdict::Limited {
                    retry_after_s: limit.retry_after_s(now),
                }
            } else {
                Verdict::Increment
            }
        }
        _ => Verdict::StartWindow,
    }
}

/// Largest number of keys the negative cache holds; when full it starts over.
pub const NEGATIVE_CACHE_CAPACITY: usize = 10_000;

/// Per-instance set of keys refused for good (unknown, revoked, expired, idle-expired), so that
/// a replayed dead token costs no store call (CONTRACT A4). Holds store keys (hashes) only.
#[derive(Debug, Default)]
pub struct NegativeCache {
    keys: Mutex<HashMap<String, Denial>>,
}

impl NegativeCache {
    /// Why `key` was refused for good, if it was.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Denial> {
        self.keys
            .lock()
            .ok()
            .and_then(|keys| keys.get(key).copied())
    }

    /// Remembers `key` and its denial; starts over when [`NEGATIVE_CACHE_CAPACITY`] is
    /// reached.
    pub fn insert(&self, key: &str, denial: Denial) {
        if let Ok(mut keys) = self.keys.lock() {
            if keys.len() >= NEGATIVE_CACHE_CAPACITY {
                keys.clear();
            }
            keys.insert(key.to_string(), denial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> StoredDelegation {
        StoredDelegation {
            delegation_id: "d".into(),
            status: "active".into(),
            routes: vec!["core".into()],
            expires_at: 1_000,
            idle_expires_at: 500,
            window_start: Some(120),
            window_count: 2,
            groups: Vec::new(),
        }
    }

    fn request(now_s: u64, route: &str) -> AdmitRequest<'_> {
        AdmitRequest {
            key: "tok#x",
            route,
            now_s,
            limit: Some(RateLimit {
                requests: 2,
                window_s: 60,
            }),
        }
    }

    #[test]
    fn a4_refusals_are_read_in_order_of_validity_then_route_then_limit() {
        assert_eq!(
            judge(None, &request(130, "core")),
            Verdict::Deny(Denial::Unknown)
        );
        let revoked = StoredDelegation {
            status: "revoked".into(),
            ..item()
        };
        assert_eq!(
            judge(Some(&revoked), &request(130, "core")),
            Verdict::Deny(Denial::Revoked)
        );
        assert_eq!(
            judge(Some(&item()), &request(1_000, "core")),
            Verdict::Deny(Denial::Expired)
        );
        assert_eq!(
            judge(Some(&item()), &request(500, "core")),
            Verdict::Deny(Denial::IdleExpired)
        );
        assert_eq!(
            judge(Some(&item()), &request(130, "hr")),
            Verdict::Deny(Denial::WrongRoute)
        );
        assert_eq!(
            judge(Some(&item()), &request(130, "core")),
            Verdict::Limited { retry_after_s: 50 }
        );
        assert_eq!(
            judge(Some(&item()), &request(180, "core")),
            Verdict::StartWindow
        );
        let fresh = StoredDelegation {
            window_start: None,
            ..item()
        };
        assert_eq!(
            judge(Some(&fresh), &request(130, "core")),
            Verdict::StartWindow
        );
        let under = StoredDelegation {
            window_count: 1,
            ..item()
        };
        assert_eq!(
            judge(Some(&under), &request(130, "core")),
            Verdict::Increment
        );
    }

    #[test]
    fn a4_only_final_denials_are_cached_and_the_cache_starts_over_when_full() {
        assert!(Denial::Revoked.is_final());
        assert!(!Denial::WrongRoute.is_final());
        let cache = NegativeCache::default();
        for i in 0..NEGATIVE_CACHE_CAPACITY {
            cache.insert(&format!("tok#{i}"), Denial::Revoked);
        }
        assert_eq!(cache.get("tok#1"), Some(Denial::Revoked));
        cache.insert("tok#new", Denial::Expired);
        assert_eq!(cache.get("tok#new"), Some(Denial::Expired));
        assert_eq!(cache.get("tok#1"), None);
    }
}
