//! The composition root (STYLE 2): the one module that names the concrete clients (the reqwest
//! Tool Service invoker, the S3/HTTP/file/baked source chain, the DynamoDB delegation store and
//! the JWKS key set) and reads the process environment, through [`Config::from_env`].
//!
//! Everything below it (the service, policy, dispatch, registry, tool results) sees traits only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::auth::{
    AuthMode, Authenticator, DynamoStore, HttpKeySet, OAuthVerifier, ProtectedResource,
    system_clock,
};
use crate::config::{Config, ConfigError, Profile, RegistrySource, RoutingMode};
use crate::invoke::HttpInvoker;
use crate::registry::{
    BakedSource, FileSource, HttpSource, LoadLimits, Registry, RegistryError, S3Source, Snapshot,
    SnapshotSource, SourceChain,
};
use crate::routing::fixed_route_key;
use crate::service::{Gateway, NOT_LOADED};

/// Why the gateway could not be built at cold start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The HTTP client could not be built.
    #[error("tool invoker: {0}")]
    Invoker(#[from] reqwest::Error),
}

/// The registry of a cold start: the snapshot from the configured source (CONTRACT R1–R3), or,
/// when the source is unusable, a registry that answers `-32603` (X8), or, when the load
/// failed, one that retries at most once per `MCP_REGISTRY_RETRY_SECONDS` (R4). Failures are
/// logged.
pub async fn load_registry(config: &Config) -> Registry {
    match SourceChain::from_config(config).await {
        Err(error) => {
            tracing::error!(%error, "registry source unusable; tool methods answer -32603");
            Registry::unavailable(NOT_LOADED)
        }
        Ok(chain) => match chain.load().await {
            Ok(snapshot) => Registry::loaded(snapshot),
            Err(error) => {
                tracing::error!(%error, "registry snapshot not loaded; tool methods answer -32603 until a retry succeeds");
                Registry::retrying(
                    NOT_LOADED,
                    chain,
                    Duration::from_secs(config.registry_retry_seconds),
                    Arc::new(Instant::now),
                )
            }
        },
    }
}

impl Config {
    /// [`Config::from_env_with`] over the process environment.
    ///
    /// # Errors
    /// As [`Config::from_env_with`].
    pub fn from_env(defaults: Self) -> Result<Self, ConfigError> {
        Self::from_env_with(defaults, |name| std::env::var(name).ok())
    }

    /// Whether the process environment's `MCP_AUTH` asks for authentication (any value but
    /// empty and `none`), read even when the rest of the configuration is broken, so that such
    /// a deployment is never served unauthenticated (CONTRACT A1).
    #[must_use]
    pub fn asks_for_auth() -> bool {
        std::env::var("MCP_AUTH").is_ok_and(|mode| !matches!(mode.trim(), "" | "none"))
    }
}

impl HttpInvoker {
    /// The invoker of this process: [`HttpInvoker::from_config`], reading `env:` secret
    /// references (CONTRACT M5, X12) from the process environment.
    ///
    /// # Errors
    /// As [`HttpInvoker::from_config`].
    pub fn for_process(config: &Config) -> Result<Self, reqwest::Error> {
        let invoker = Self::from_config(config)?;
        // CONTRACT M5: under the Lambda runtime no secret is read from the environment, even
        // should a snapshot with an `env:` reference ever be served.
        if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
            return Ok(invoker);
        }
        Ok(invoker.with_env_lookup(Arc::new(|name: &str| std::env::var(name).ok())))
    }
}

impl Gateway<HttpInvoker> {
    /// Cold start: loads the registry ([`load_registry`]) and builds the one HTTP client of
    /// this instance and, when `MCP_AUTH` asks for it, the authenticator (CONTRACT A1).
    ///
    /// # Errors
    /// [`GatewayError::Invoker`] when the HTTP client cannot be built.
    pub async fn from_config(config: Config) -> Result<Self, GatewayError> {
        let registry = load_registry(&config).await;
        Self::from_registry(config, registry).await
    }

    /// A gateway over `registry` with the one HTTP client of this instance and, when
    /// `MCP_AUTH` asks for it, the authenticator (CONTRACT A1).
    ///
    /// # Errors
    /// [`GatewayError::Invoker`] when the HTTP client cannot be built.
    pub async fn from_registry(config: Config, registry: Registry) -> Result<Self, GatewayError> {
        let invoker = HttpInvoker::for_process(&config)?;
        let auth = Authenticator::from_config(&config).await;
        let gateway = Self::with_registry(config, registry, invoker)
            .with_tracing(crate::trace::export::for_process());
        Ok(match auth {
            Some(auth) => gateway.with_auth(auth),
            None => gateway,
        })
    }

    /// [`Gateway::from_config`] over `MCP_*` variables applied to `defaults`. A broken
    /// configuration does not stop the function: it is logged, the defaults serve `initialize`,
    /// and tool methods answer `-32603` saying the configuration is broken (CONTRACT X8).
    ///
    /// # Errors
    /// [`GatewayError::Invoker`] when the HTTP client cannot be built.
    pub async fn from_env_or_broken(defaults: Config) -> Result<Self, GatewayError> {
        match Config::from_env(defaults.clone()) {
            Ok(config) => Self::from_config(config).await,
            Err(error) => {
                tracing::error!(%error, "gateway configuration is broken; tool methods answer -32603");
                let invoker = HttpInvoker::for_process(&defaults)?;
                let gateway = Self::with_registry(
                    defaults,
                    Registry::unavailable("the gateway configuration is broken"),
                    invoker,
                )
                .with_tracing(crate::trace::export::for_process());
                // A deployment that asks for authentication is never served without it (A1).
                Ok(if Config::asks_for_auth() {
                    gateway.with_auth(Authenticator::misconfigured())
                } else {
                    gateway
                })
            }
        }
    }
}

impl Authenticator {
    /// The authenticator `config.auth` asks for (CONTRACT A1): `None` for `MCP_AUTH=none`;
    /// otherwise the DynamoDB store from the standard AWS environment (client built once per
    /// instance, A4) and, in the OAuth modes, the key set at `MCP_OAUTH_JWKS_URL` (A5).
    /// Settings that cannot be used give [`Authenticator::misconfigured`], which answers 503
    /// (never serves unauthenticated, A9).
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

impl SourceChain {
    /// The chain a configuration asks for. S3 clients come from the standard AWS environment.
    ///
    /// # Errors
    /// [`RegistryError::Unreadable`] when an HTTP client cannot be built.
    pub async fn from_config(config: &Config) -> Result<Self, RegistryError> {
        let primary = source_for(&config.registry_source).await?;
        let sample = RegistrySource::Baked("sample".into());
        let fallback: Option<Box<dyn SnapshotSource>> = (config.profile == Profile::Local
            && config.registry_source != sample)
            .then(|| Box::new(BakedSource("sample".into())) as Box<dyn SnapshotSource>);
        let chain = Self::new(
            primary,
            fallback,
            LoadLimits {
                timeout: Duration::from_millis(config.registry_timeout_ms),
                max_bytes: config.max_manifest_bytes,
                max_response_bytes: config.max_response_bytes,
            },
        );
        // CONTRACT M5: under the Lambda runtime no secret comes from the environment.
        let chain = if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
            // CONTRACT K3: nor a task tool without the key every instance shares.
            let chain = chain.refusing_env_secrets();
            if config.task_key.is_none() {
                chain.refusing_keyless_tasks()
            } else {
                chain
            }
        } else {
            chain
        };
        // CONTRACT M1: a fixed deployment serves the route its path names, or none.
        Ok(match config.routing {
            RoutingMode::Fixed => chain.serving(fixed_route_key(&config.endpoint_path)),
            RoutingMode::Dynamic => chain,
        })
    }
}

/// The source object for a configured [`RegistrySource`].
///
/// # Errors
/// [`RegistryError::Unreadable`] when an HTTP client cannot be built.
pub async fn source_for(source: &RegistrySource) -> Result<Box<dyn SnapshotSource>, RegistryError> {
    Ok(match source {
        RegistrySource::Baked(name) => Box::new(BakedSource(name.clone())),
        RegistrySource::File(path) => Box::new(FileSource(path.clone())),
        RegistrySource::Http(url) => {
            Box::new(
                HttpSource::new(url.clone()).map_err(|e| RegistryError::Unreadable {
                    source_name: url.clone(),
                    reason: e.to_string(),
                })?,
            )
        }
        RegistrySource::S3 { bucket, key } => Box::new(S3Source::from_env(bucket, key).await),
    })
}

/// Loads a snapshot for a source and profile with default limits (5 s, 16 MiB).
///
/// # Errors
/// As [`SourceChain::load`].
pub async fn load_snapshot(
    source: &RegistrySource,
    profile: Profile,
) -> Result<Snapshot, RegistryError> {
    let config = Config {
        registry_source: source.clone(),
        profile,
        ..Config::fixed_defaults()
    };
    SourceChain::from_config(&config).await?.load().await
}
