//! The registry state of one warm instance: the snapshot, loaded once and kept (CONTRACT R1),
//! or, after a failed load, a bounded retry (CONTRACT R4).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::{Snapshot, SourceChain};

/// A clock for retry intervals; tests drive it by hand.
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

struct Retry {
    chain: SourceChain,
    interval: Duration,
    clock: Clock,
    last_attempt: Mutex<Instant>,
    loading: tokio::sync::Mutex<()>,
}

/// The snapshot of this instance, or why there is none.
pub struct Registry {
    snapshot: OnceLock<Arc<Snapshot>>,
    unavailable: String,
    retry: Option<Retry>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("loaded", &self.snapshot.get().is_some())
            .field("unavailable", &self.unavailable)
            .field("retries", &self.retry.is_some())
            .finish()
    }
}

impl Registry {
    /// A registry over a loaded snapshot; it never loads again (CONTRACT R1).
    #[must_use]
    pub fn loaded(snapshot: Snapshot) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(Arc::new(snapshot));
        Self {
            snapshot: cell,
            unavailable: String::new(),
            retry: None,
        }
    }

    /// A registry without a snapshot that never retries; `unavailable` is the `-32603` detail
    /// (CONTRACT X8).
    #[must_use]
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self {
            snapshot: OnceLock::new(),
            unavailable: reason.into(),
            retry: None,
        }
    }

    /// A registry whose first load failed at `failed_at`: it retries `chain` at most once per
    /// `interval`, and keeps the first success (CONTRACT R4).
    #[must_use]
    pub fn retrying(
        reason: impl Into<String>,
        chain: SourceChain,
        interval: Duration,
        clock: Clock,
    ) -> Self {
        let failed_at = clock();
        Self {
            snapshot: OnceLock::new(),
            unavailable: reason.into(),
            retry: Some(Retry {
                chain,
                interval,
                clock,
                last_attempt: Mutex::new(failed_at),
                loading: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The snapshot, if one is loaded. Never does I/O.
    #[must_use]
    pub fn current(&self) -> Option<&Arc<Snapshot>> {
        self.snapshot.get()
    }

    /// The `-32603` detail while no snapshot is loaded.
    #[must_use]
    pub fn unavailable_reason(&self) -> &str {
        &self.unavailable
    }

    /// The snapshot; when none is loaded and a retry is due, this request makes one load
    /// attempt. A request never waits on more than one attempt: while another request is
    /// loading, it answers at once without a snapshot.
    pub async fn current_or_retry(&self) -> Option<&Arc<Snapshot>> {
        if let Some(snapshot) = self.snapshot.get() {
            return Some(snapshot);
        }
        let retry = self.retry.as_ref()?;
        let guard = retry.loading.try_lock().ok()?;
        {
            let mut last = retry.last_attempt.lock().ok()?;
            let now = (retry.clock)();
            if now.saturating_duration_since(*last) < retry.interval {
                return None;
            }
            *last = now;
        }
        match retry.chain.load().await {
            Ok(snapshot) => {
                let _ = self.snapshot.set(Arc::new(snapshot));
                tracing::info!(source = %retry.chain.name(), "registry snapshot loaded on retry");
            }
            Err(error) => {
                tracing::error!(%error, "registry retry failed; tool methods keep answering -32603");
            }
        }
        drop(guard);
        self.snapshot.get()
    }
}
