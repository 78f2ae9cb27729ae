//! Secrets of outbound credentials (CONTRACT X12), sans I/O: the value that never shows itself,
//! why a read failed, and the per-instance cache that reads each secret once per TTL however
//! many first calls arrive together, and again at once after the Tool Service refused it.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::registry::SecretSource;

/// A secret's text. Its `Debug` never shows it, so no log of a value that holds one can.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(Arc<str>);

impl SecretText {
    /// Wraps a secret's text.
    #[must_use]
    pub fn new(text: impl Into<Arc<str>>) -> Self {
        Self(text.into())
    }

    /// The text, for presenting it to the Tool Service only.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<secret>")
    }
}

/// Why a credential could not be made (CONTRACT X12): the words after
/// `Tool '<name>': the credential could not be read (`. None names a secret, ARN, account or
/// region.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// No such secret or parameter.
    #[error("not found")]
    NotFound,
    /// The gateway's role may not read (or decrypt) it.
    #[error("access denied")]
    AccessDenied,
    /// The standard AWS chain gave no credentials to sign the read with.
    #[error("the gateway has no AWS credentials")]
    NoCredentials,
    /// A provider of the standard AWS chain failed (a credentials endpoint that refused the
    /// connection or answered an error, an invalid configuration).
    #[error("the gateway could not obtain AWS credentials")]
    CredentialsFailed,
    /// The secret store could not be reached.
    #[error("the secret store is unreachable")]
    Unreachable,
    /// No answer within the read's time limit.
    #[error("no answer within {timeout_ms} ms")]
    Timeout {
        /// The time limit in ms.
        timeout_ms: u64,
    },
    /// Any other answer of the secret store.
    #[error("the secret store answered HTTP {status}")]
    Failed {
        /// The HTTP status.
        status: u16,
    },
    /// The `env:` variable is not set (or empty).
    #[error("the environment variable is not set")]
    EnvUnset,
    /// A secret without a string value (a binary secret).
    #[error("the secret has no string value")]
    NoString,
    /// A `#jsonKey`, `basic` or `oauth2ClientCredentials` secret that is not a JSON object.
    #[error("the secret is not a JSON object")]
    NotJson,
    /// A JSON secret without the `#jsonKey` string field.
    #[error("the secret has no string field '{0}'")]
    KeyMissing(String),
    /// A `basic` or `oauth2ClientCredentials` secret without its two string fields
    /// (`username` and `password`, `client_id` and `client_secret`).
    #[error("the secret has no string fields '{0}' and '{1}'")]
    MissingFields(&'static str, &'static str),
    /// A value that cannot travel in a header (control characters, non-ASCII).
    #[error("the secret is not a valid header value")]
    NotHeaderValue,
    /// An invoker that reads no secrets.
    #[error("this gateway reads no secrets")]
    Unsupported,
}

/// A secret as read, with the number of the read it came from (for [`SecretCache::get`]'s
/// `stale`).
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The secret's text.
    pub value: SecretText,
    /// Which read of the instance gave it.
    pub generation: u64,
}

/// One secret's cached read.
struct Entry {
    fetched: Fetched,
    at: Instant,
    ttl: Duration,
}

type Slot = Arc<tokio::sync::Mutex<Option<Entry>>>;

/// Each secret (or access token, keyed by its request) read once per TTL per instance
/// (CONTRACT X12): concurrent first calls wait for the one read; a failed read is not kept.
pub struct SecretCache<K = SecretSource> {
    ttl: Duration,
    slots: Mutex<HashMap<K, Slot>>,
    reads: AtomicU64,
}

impl<K> fmt::Debug for SecretCache<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretCache")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl<K: std::hash::Hash + Eq + Clone> SecretCache<K> {
    /// A cache keeping each read for at most `ttl` (`MCP_SECRET_TTL_S`; zero keeps none).
    #[must_use]
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            slots: Mutex::default(),
            reads: AtomicU64::new(1),
        }
    }

    /// How long a read is kept when it does not say.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The secret of `key`: the kept read when it is younger than the TTL and is not the
    /// `stale` one (the read the Tool Service refused), else `read()`'s, kept. One read at a
    /// time per key: the others wait for it and take it.
    ///
    /// # Errors
    /// `read()`'s error, which is not kept.
    pub async fn get<F, Fut, E>(&self, key: &K, stale: Option<u64>, read: F) -> Result<Fetched, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<SecretText, E>>,
    {
        let ttl = self.ttl;
        self.get_for(key, stale, || async move { read().await.map(|v| (v, ttl)) })
            .await
    }

    /// As [`SecretCache::get`], for reads that say how long they may be kept (an access
    /// token's lifetime).
    ///
    /// # Errors
    /// `read()`'s error, which is not kept.
    pub async fn get_for<F, Fut, E>(
        &self,
        key: &K,
        stale: Option<u64>,
        read: F,
    ) -> Result<Fetched, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(SecretText, Duration), E>>,
    {
        // Reads numbered from here on end while this call waits: it takes them whatever their
        // lifetime (one shorter than the expiry margin, a zero TTL), as it takes a kept one.
        let waiting_since = self.reads.load(Ordering::Relaxed);
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(key.clone())
            .or_default()
            .clone();
        let mut entry = slot.lock().await;
        if let Some(kept) = entry.as_ref()
            && (kept.at.elapsed() < kept.ttl || kept.fetched.generation >= waiting_since)
            && stale != Some(kept.fetched.generation)
        {
            return Ok(kept.fetched.clone());
        }
        *entry = None;
        let (value, ttl) = read().await?;
        let fetched = Fetched {
            value,
            generation: self.reads.fetch_add(1, Ordering::Relaxed),
        };
        *entry = Some(Entry {
            fetched: fetched.clone(),
            at: Instant::now(),
            ttl,
        });
        Ok(fetched)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    fn counted(
        reads: &AtomicUsize,
        text: &'static str,
    ) -> impl Future<Output = Result<SecretText, SecretError>> {
        reads.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(SecretText::new(text))
        }
    }

    /// CONTRACT X12: one read per TTL for any number of concurrent first calls; a refused
    /// read is read again once, whoever reports it; past the TTL it is read again.
    #[tokio::test(start_paused = true)]
    async fn x12_one_read_per_ttl_and_one_more_after_a_refusal() {
        let cache = SecretCache::new(Duration::from_mins(5));
        let source = SecretSource::Env("K".into());
        let reads = AtomicUsize::new(0);
        let calls = (0..8).map(|_| cache.get(&source, None, || counted(&reads, "v1")));
        let got: Vec<Fetched> = futures_join(calls)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        let generation = got[0].generation;
        assert!(
            got.iter()
                .all(|f| f.generation == generation && f.value.expose() == "v1")
        );
        let again = (0..4).map(|_| cache.get(&source, Some(generation), || counted(&reads, "v2")));
        let got: Vec<Fetched> = futures_join(again)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        assert!(got.iter().all(|f| f.value.expose() == "v2"));
        tokio::time::advance(Duration::from_secs(301)).await;
        let late = cache
            .get(&source, None, || counted(&reads, "v3"))
            .await
            .unwrap();
        assert_eq!(
            (reads.load(Ordering::SeqCst), late.value.expose()),
            (3, "v3")
        );
        assert_eq!(format!("{:?}", late.value), "<secret>");
    }

    /// A failed read is not kept; a zero TTL keeps nothing for later calls, but the calls
    /// that waited for a read take it.
    #[tokio::test(start_paused = true)]
    async fn x12_failures_and_a_zero_ttl_keep_nothing() {
        let cache = SecretCache::new(Duration::ZERO);
        let source = SecretSource::Env("K".into());
        let failed = cache
            .get(&source, None, || async {
                Err::<SecretText, _>(SecretError::AccessDenied)
            })
            .await;
        assert_eq!(failed.unwrap_err(), SecretError::AccessDenied);
        let reads = AtomicUsize::new(0);
        for _ in 0..3 {
            cache
                .get(&source, None, || counted(&reads, "v"))
                .await
                .unwrap();
        }
        assert_eq!(reads.load(Ordering::SeqCst), 3);
        // Calls that wait together for a read that is kept for no time share it.
        let calls = (0..8).map(|_| cache.get(&source, None, || counted(&reads, "w")));
        let got: Vec<u64> = futures_join(calls)
            .await
            .into_iter()
            .map(|f| f.unwrap().generation)
            .collect();
        assert_eq!(reads.load(Ordering::SeqCst), 4);
        assert!(got.iter().all(|g| *g == got[0]));
        // A read the Tool Service refused is not taken by the calls that waited for it.
        let again = (0..3).map(|_| cache.get(&source, Some(got[0]), || counted(&reads, "x")));
        for fetched in futures_join(again).await {
            assert_ne!(fetched.unwrap().generation, got[0]);
        }
        assert_eq!(reads.load(Ordering::SeqCst), 5);
    }

    async fn futures_join<F: Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
        let handles: Vec<_> = futures.map(Box::pin).collect();
        let mut out = Vec::new();
        let mut pending: Vec<_> = handles.into_iter().map(Some).collect();
        let mut results: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
        std::future::poll_fn(|cx| {
            let mut all = true;
            for (i, slot) in pending.iter_mut().enumerate() {
                if let Some(f) = slot {
                    match f.as_mut().poll(cx) {
                        std::task::Poll::Ready(v) => {
                            results[i] = Some(v);
                            *slot = None;
                        }
                        std::task::Poll::Pending => all = false,
                    }
                }
            }
            if all {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        })
        .await;
        for r in results {
            out.push(r.unwrap());
        }
        out
    }
}
