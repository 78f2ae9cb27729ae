//! The [`Gateway`]: configuration, the registry state of a warm instance, a tool invoker and
//! the optional authenticator, and [`Gateway::handle`], which runs the pipeline once per request
//! and writes its one usage event (CONTRACT U1).

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use http::{Request, Response};

use crate::auth::Authenticator;
use crate::config::Config;
use crate::invoke::ToolInvoker;
use crate::policy;
use crate::registry::{Registry, RegistryError, Snapshot};
use crate::trace::{RequestTrace, Tracing};
use crate::usage::UsageEvent;

/// A request body as an adapter hands it over.
#[derive(Debug, Clone)]
pub enum RequestBody {
    /// The whole body.
    Full(Bytes),
    /// The adapter stopped reading at `MCP_MAX_REQUEST_BYTES` (CONTRACT H7).
    TooLarge,
}

/// Per-invocation facts from the platform.
#[derive(Debug, Clone, Default)]
pub struct InvocationContext {
    /// When the platform cuts the invocation off (Lambda deadline), if it does (CONTRACT X7).
    pub deadline: Option<Instant>,
    /// The invocation's X-Ray trace header (`_X_AMZN_TRACE_ID`), when Lambda gave one: a link of
    /// the server span and passed on to Tool Services (CONTRACT O1, O2).
    pub xray_trace_id: Option<String>,
}

/// The gateway: configuration, the registry snapshot of this warm instance, a tool invoker and,
/// when `MCP_AUTH` asks for it, the inbound authenticator.
///
/// The registry and the authenticator are shared with every [`Gateway::sibling`]; the invoker
/// is each gateway's own.
pub struct Gateway<I> {
    pub(super) config: Config,
    pub(super) registry: Arc<Registry>,
    pub(super) invoker: I,
    pub(super) auth: Option<Arc<Authenticator>>,
    pub(super) tracing: Tracing,
    /// The keys that seal and open task ids (CONTRACT K3).
    pub(super) tasks: Arc<crate::tasks::Keyring>,
}

impl<I> std::fmt::Debug for Gateway<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("config", &self.config)
            .field("registry", &self.registry)
            .field("auth", &self.auth)
            .field("tracing", &self.tracing)
            .finish_non_exhaustive()
    }
}

/// The `-32603` detail when no snapshot is loaded (CONTRACT X8).
pub const NOT_LOADED: &str = "the tool registry is not loaded";

impl<I: ToolInvoker> Gateway<I> {
    /// A gateway over an already loaded (or failed) snapshot and any invoker.
    #[must_use]
    pub fn new(config: Config, snapshot: Result<Snapshot, RegistryError>, invoker: I) -> Self {
        let registry = match snapshot {
            Ok(snapshot) => Registry::loaded(snapshot),
            Err(_) => Registry::unavailable(NOT_LOADED),
        };
        Self::with_registry(config, registry, invoker)
    }

    /// A gateway over any registry state (for example one that retries, CONTRACT R4).
    #[must_use]
    pub fn with_registry(config: Config, registry: Registry, invoker: I) -> Self {
        let tasks = config.task_key.clone().map_or(
            crate::tasks::Keyring::None,
            crate::tasks::Keyring::from_secret,
        );
        Self {
            config,
            registry: Arc::new(registry),
            invoker,
            auth: None,
            tracing: Tracing::default(),
            tasks: Arc::new(tasks),
        }
    }

    /// This gateway with `tracing`'s sampler and span export (CONTRACT O5).
    #[must_use]
    pub fn with_tracing(mut self, tracing: Tracing) -> Self {
        self.tracing = tracing;
        self
    }

    /// This gateway sealing task ids with `keys` instead of `MCP_TASK_KEY`'s (CONTRACT K3):
    /// `mcp-local`'s key of the process when none is configured, and tests.
    #[must_use]
    pub fn with_task_keys(mut self, keys: crate::tasks::TaskKeys) -> Self {
        self.tasks = Arc::new(crate::tasks::Keyring::Fixed(Arc::new(keys)));
        self
    }

    /// Whether task ids can be sealed: `MCP_TASK_KEY` or keys given (CONTRACT K3).
    #[must_use]
    pub fn has_task_keys(&self) -> bool {
        self.tasks.is_configured()
    }

    /// The tracing in force (CONTRACT O5).
    #[must_use]
    pub fn tracing(&self) -> &Tracing {
        &self.tracing
    }

    /// Sends the spans of the requests served so far and waits for them, within the
    /// exporter's time limit; at once when nothing is exported (CONTRACT O5).
    pub async fn flush_traces(&self) {
        self.tracing.flush().await;
    }

    /// [`Gateway::flush_traces`], given up at `deadline` less `MCP_DEADLINE_MARGIN_MS` when
    /// there is one (the Lambda invocation's, CONTRACT O5, X7): the answer never waits past it
    /// for spans. The Lambda adapter calls it before each invocation answers.
    pub async fn flush_traces_before(&self, deadline: Option<Instant>) {
        let Some(deadline) = deadline else {
            return self.flush_traces().await;
        };
        let margin = std::time::Duration::from_millis(self.config.deadline_margin_ms);
        let left = deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(margin);
        // Spans not sent by then are dropped with the flush.
        let _ = tokio::time::timeout(left, self.flush_traces()).await;
    }

    /// This gateway with inbound authentication.
    #[must_use]
    pub fn with_auth(mut self, auth: Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// A gateway with the same configuration, registry (snapshot and R4 retry state) and
    /// authenticator (rate limits, caches) that calls Tool Services through `invoker`.
    ///
    /// A server with one async runtime per thread gives each thread a sibling with its own
    /// connection pool, so a call never waits on a connection task of another thread.
    #[must_use]
    pub fn sibling<J: ToolInvoker>(&self, invoker: J) -> Gateway<J> {
        Gateway {
            config: self.config.clone(),
            registry: Arc::clone(&self.registry),
            invoker,
            auth: self.auth.clone(),
            tracing: self.tracing.clone(),
            tasks: Arc::clone(&self.tasks),
        }
    }

    /// The configuration in force.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The inbound authenticator, `None` for `MCP_AUTH=none` (CONTRACT A1).
    #[must_use]
    pub fn authenticator(&self) -> Option<&Authenticator> {
        self.auth.as_deref()
    }

    /// The loaded snapshot, `None` when the load failed.
    #[must_use]
    pub fn snapshot(&self) -> Option<&Arc<Snapshot>> {
        self.registry.current()
    }

    /// Serves one request. Never fails: every rejection is a response. Writes exactly one usage
    /// event (CONTRACT U1) and sets `guid` and `x-request-id` on every response (CONTRACT H8).
    /// Its spans go to the span sink, if any, as it answers (CONTRACT O4).
    pub async fn handle(
        &self,
        request: Request<RequestBody>,
        context: InvocationContext,
    ) -> Response<Bytes> {
        let started = Instant::now();
        let (parts, body) = request.into_parts();
        let correlation = policy::correlation(&parts.headers);
        let origin = policy::allowed_origin(&parts.headers);
        let mut usage = UsageEvent::new(correlation.guid.clone(), correlation.request_id.clone());
        let mut trace = RequestTrace::from_headers(
            &parts.headers,
            &parts.method,
            context.xray_trace_id.as_deref(),
            SystemTime::now(),
        );
        let reply = self
            .process(&parts, body, &context, &correlation, &mut usage, &mut trace)
            .await;
        let response = self.respond(reply, &correlation, origin, &mut usage);
        usage.trace_id = self.tracing.finish(&mut trace, &usage);
        usage.emit(started.elapsed());
        response
    }
}
