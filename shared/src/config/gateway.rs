//! The gateway's [`Config`]: one field per `MCP_*` variable, the defaults of a fixed and of a
//! dynamic deployment, and [`Config::from_env_with`] over a lookup (STYLE 8).

use super::{AuthConfig, AuthMode, Profile, RegistrySource, RoutingMode};
use crate::protocol::{Era, ProtocolVersion};

/// A missing or malformed configuration variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {reason}")]
pub struct ConfigError {
    /// The environment variable, e.g. `MCP_ROUTING`.
    pub variable: &'static str,
    /// What is wrong with its value.
    pub reason: String,
}

/// The gateway configuration. Every field maps to one `MCP_*` variable (see the table in docs/configuration.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `MCP_ENDPOINT_PATH`: the public path, without a trailing slash (CONTRACT P1).
    pub endpoint_path: String,
    /// `MCP_ROUTING`: `fixed` or `dynamic` (CONTRACT P1).
    pub routing: RoutingMode,
    /// `MCP_SUPPORTED_PROTOCOL_VERSIONS`: comma-separated versions of both eras, default
    /// `2025-11-25,2026-07-28`; at least one legacy version (CONTRACT H4, N5).
    pub supported_protocol_versions: Vec<ProtocolVersion>,
    /// `MCP_LIST_TTL_MS`: `ttlMs` of modern `tools/list` and `server/discover` results, in ms,
    /// default 300,000; `0` allowed (CONTRACT N3, N4).
    pub list_ttl_ms: u64,
    /// `MCP_ALLOWED_ORIGINS`: comma-separated exact origins, default empty (CONTRACT H5).
    pub allowed_origins: Vec<String>,
    /// `MCP_ALLOWED_HOSTS`: comma-separated host names (any port) or `host:port`; unset means
    /// every host (CONTRACT H6).
    pub allowed_hosts: Option<Vec<String>>,
    /// `MCP_MAX_REQUEST_BYTES`: request body limit in bytes, default 1 MiB (CONTRACT H7).
    pub max_request_bytes: usize,
    /// `MCP_MAX_TOOL_RESPONSE_BYTES`: Tool Service body limit in bytes, default 4 MiB (CONTRACT X6).
    pub max_tool_response_bytes: usize,
    /// `MCP_MAX_RESPONSE_BYTES`: the gateway's own response limit in bytes, default 5 MiB
    /// (CONTRACT X6).
    pub max_response_bytes: usize,
    /// `MCP_LIST_PAGE_SIZE`: the most tools one `tools/list` page holds, a positive whole
    /// number; unset (the default) caps a page by `max_response_bytes` alone (CONTRACT T2).
    pub list_page_size: Option<usize>,
    /// `MCP_DEFAULT_TOOL_TIMEOUT_MS`: tool timeout when the manifest gives none, default 10,000 ms
    /// (CONTRACT X7).
    pub default_tool_timeout_ms: u64,
    /// `MCP_DEADLINE_MARGIN_MS`: how long before the invocation deadline a tool call is cut off,
    /// default 500 ms (CONTRACT X7).
    pub deadline_margin_ms: u64,
    /// `MCP_REGISTRY_SOURCE`: default `baked:sample` (CONTRACT R2).
    pub registry_source: RegistrySource,
    /// `MCP_PROFILE`: `local` or `prod` (CONTRACT R3).
    pub profile: Profile,
    /// `MCP_REGISTRY_RETRY_SECONDS`: least seconds between two load attempts, default 30 (CONTRACT R4).
    pub registry_retry_seconds: u64,
    /// `MCP_REGISTRY_TIMEOUT_MS`: time limit of one manifest fetch, default 5,000 ms (CONTRACT R1).
    pub registry_timeout_ms: u64,
    /// `MCP_MAX_MANIFEST_BYTES`: manifest size limit in bytes, default 16 MiB (CONTRACT R5).
    pub max_manifest_bytes: usize,
    /// `MCP_INSTRUCTIONS`: `instructions` for `initialize` results, unset by default (CONTRACT L1).
    pub instructions: Option<String>,
    /// `MCP_TOOL_CONNECT_TIMEOUT_MS`: time limit of one Tool Service connection, default
    /// 3,000 ms (within the tool's own timeout, CONTRACT X7).
    pub tool_connect_timeout_ms: u64,
    /// `MCP_TOOL_PROXY`: an `http://` or `https://` proxy for Tool Service calls. Unset by
    /// default, and then no proxy is used, whatever `HTTP_PROXY`/`HTTPS_PROXY` say.
    pub tool_proxy: Option<String>,
    /// `AWS_ENDPOINT_URL_LAMBDA` (else `AWS_ENDPOINT_URL`): the Invoke API endpoint of Lambda
    /// function tools, in place of the function's regional one (CONTRACT X10), e.g. a local
    /// Lambda emulator. Unset by default.
    pub lambda_endpoint: Option<String>,
    /// `AWS_ENDPOINT_URL_SECRETS_MANAGER` (else `AWS_ENDPOINT_URL`): the Secrets Manager
    /// endpoint outbound credentials are read from (CONTRACT X12), in place of the secret's
    /// regional one. Unset by default.
    pub secrets_manager_endpoint: Option<String>,
    /// `AWS_ENDPOINT_URL_SSM` (else `AWS_ENDPOINT_URL`): the SSM endpoint of parameter
    /// secrets (CONTRACT X12). Unset by default.
    pub ssm_endpoint: Option<String>,
    /// `MCP_SECRET_TTL_S`: how long a secret read for outbound credentials is kept, in
    /// seconds, default 300; `0` reads it for every call (CONTRACT X12).
    pub secret_ttl_s: u64,
    /// `MCP_TASK_KEY`: a REF (M5's forms) whose value is the base64 key set that seals task
    /// ids (CONTRACT K3). Unset by default.
    pub task_key: Option<super::SecretRef>,
    /// Inbound authentication: `MCP_AUTH`, `MCP_AUTH_TABLE`, `MCP_RATE_LIMIT`,
    /// `MCP_AUTH_TIMEOUT_MS`, `MCP_RESOURCE_URL` and `MCP_OAUTH_*` (default: none).
    pub auth: AuthConfig,
}

const MIB: usize = 1024 * 1024;

impl Config {
    /// Defaults of a fixed deployment at `/mcp/core` on the `prod` profile.
    #[must_use]
    pub fn fixed_defaults() -> Self {
        Self {
            endpoint_path: "/mcp/core".into(),
            routing: RoutingMode::Fixed,
            supported_protocol_versions: ProtocolVersion::ALL.to_vec(),
            list_ttl_ms: 300_000,
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            max_request_bytes: MIB,
            max_tool_response_bytes: 4 * MIB,
            max_response_bytes: 5 * MIB,
            list_page_size: None,
            default_tool_timeout_ms: 10_000,
            deadline_margin_ms: 500,
            registry_source: RegistrySource::Baked("sample".into()),
            profile: Profile::Prod,
            registry_retry_seconds: 30,
            registry_timeout_ms: 5_000,
            max_manifest_bytes: 16 * MIB,
            instructions: None,
            tool_connect_timeout_ms: 3_000,
            tool_proxy: None,
            lambda_endpoint: None,
            secrets_manager_endpoint: None,
            ssm_endpoint: None,
            secret_ttl_s: 300,
            task_key: None,
            auth: AuthConfig::default(),
        }
    }

    /// The served versions of `era`, in configuration order: the `supportedVersions` of H4's
    /// body (legacy) and of `server/discover` and `-32022` (modern) (CONTRACT H4, N3, N5).
    #[must_use]
    pub fn versions_of(&self, era: Era) -> Vec<&'static str> {
        self.supported_protocol_versions
            .iter()
            .filter(|v| v.era() == era)
            .map(|v| v.as_str())
            .collect()
    }

    /// Whether any served version belongs to `era` (CONTRACT N5).
    #[must_use]
    pub fn serves(&self, era: Era) -> bool {
        self.supported_protocol_versions
            .iter()
            .any(|v| v.era() == era)
    }

    /// `cacheScope` of modern cacheable results: `public` when `MCP_AUTH=none`, `private`
    /// otherwise (CONTRACT N4).
    #[must_use]
    pub fn cache_scope(&self) -> &'static str {
        if self.auth.mode == AuthMode::None {
            "public"
        } else {
            "private"
        }
    }

    /// Defaults of a dynamic deployment at `/mcp` + `{routeKey}` on the `prod` profile.
    #[must_use]
    pub fn dynamic_defaults() -> Self {
        Self {
            endpoint_path: "/mcp".into(),
            routing: RoutingMode::Dynamic,
            ..Self::fixed_defaults()
        }
    }

    /// Applies the `MCP_*` variables that `lookup` returns over `defaults`.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first variable whose value is malformed.
    pub fn from_env_with(
        defaults: Self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut config = defaults;
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());

        if let Some(path) = get("MCP_ENDPOINT_PATH") {
            config.endpoint_path = path;
        }
        config.endpoint_path =
            normalize_endpoint(&config.endpoint_path).map_err(|reason| ConfigError {
                variable: "MCP_ENDPOINT_PATH",
                reason,
            })?;
        if let Some(mode) = get("MCP_ROUTING") {
            config.routing = match mode.trim() {
                "fixed" => RoutingMode::Fixed,
                "dynamic" => RoutingMode::Dynamic,
                other => {
                    return Err(bad(
                        "MCP_ROUTING",
                        format!("'{other}' is not fixed or dynamic"),
                    ));
                }
            };
        }
        if let Some(list) = get("MCP_SUPPORTED_PROTOCOL_VERSIONS") {
            config.supported_protocol_versions = supported_versions(&list)
                .map_err(|reason| bad("MCP_SUPPORTED_PROTOCOL_VERSIONS", reason))?;
        }
        if let Some(raw) = get("MCP_LIST_TTL_MS") {
            config.list_ttl_ms =
                whole_in(&raw, 0, "of ms").map_err(|reason| bad("MCP_LIST_TTL_MS", reason))?;
        }
        if let Some(list) = lookup("MCP_ALLOWED_ORIGINS") {
            config.allowed_origins = split_list(&list);
        }
        if let Some(list) = lookup("MCP_ALLOWED_HOSTS") {
            let hosts = split_list(&list);
            config.allowed_hosts = (!hosts.is_empty()).then_some(hosts);
        }
        read_number(&get, "MCP_MAX_REQUEST_BYTES", &mut config.max_request_bytes)?;
        read_number(
            &get,
            "MCP_MAX_TOOL_RESPONSE_BYTES",
            &mut config.max_tool_response_bytes,
        )?;
        read_number(
            &get,
            "MCP_MAX_RESPONSE_BYTES",
            &mut config.max_response_bytes,
        )?;
        if get("MCP_LIST_PAGE_SIZE").is_some() {
            let mut size = 0;
            read_number(&get, "MCP_LIST_PAGE_SIZE", &mut size)?;
            config.list_page_size = Some(size);
        }
        read_number(
            &get,
            "MCP_DEFAULT_TOOL_TIMEOUT_MS",
            &mut config.default_tool_timeout_ms,
        )?;
        read_number(
            &get,
            "MCP_DEADLINE_MARGIN_MS",
            &mut config.deadline_margin_ms,
        )?;
        read_number(
            &get,
            "MCP_REGISTRY_RETRY_SECONDS",
            &mut config.registry_retry_seconds,
        )?;
        read_number(
            &get,
            "MCP_REGISTRY_TIMEOUT_MS",
            &mut config.registry_timeout_ms,
        )?;
        read_number(
            &get,
            "MCP_MAX_MANIFEST_BYTES",
            &mut config.max_manifest_bytes,
        )?;
        if let Some(source) = get("MCP_REGISTRY_SOURCE") {
            config.registry_source =
                RegistrySource::parse(source.trim()).map_err(|r| bad("MCP_REGISTRY_SOURCE", r))?;
        }
        if let Some(profile) = get("MCP_PROFILE") {
            config.profile = match profile.trim() {
                "local" => Profile::Local,
                "prod" => Profile::Prod,
                other => {
                    return Err(bad(
                        "MCP_PROFILE",
                        format!("'{other}' is not local or prod"),
                    ));
                }
            };
        }
        read_number(
            &get,
            "MCP_TOOL_CONNECT_TIMEOUT_MS",
            &mut config.tool_connect_timeout_ms,
        )?;
        if let Some(proxy) = get("MCP_TOOL_PROXY") {
            let proxy = proxy.trim();
            let parsed = url::Url::parse(proxy)
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some());
            if parsed.is_none() {
                return Err(bad(
                    "MCP_TOOL_PROXY",
                    "expected an http:// or https:// proxy URL".into(),
                ));
            }
            config.tool_proxy = Some(proxy.to_string());
        }
        config.lambda_endpoint = aws_endpoint(&get, "AWS_ENDPOINT_URL_LAMBDA")?;
        config.secrets_manager_endpoint = aws_endpoint(&get, "AWS_ENDPOINT_URL_SECRETS_MANAGER")?;
        config.ssm_endpoint = aws_endpoint(&get, "AWS_ENDPOINT_URL_SSM")?;
        if let Some(raw) = get("MCP_SECRET_TTL_S") {
            config.secret_ttl_s = whole_in(&raw, 0, "of seconds")
                .map_err(|reason| bad("MCP_SECRET_TTL_S", reason))?;
        }
        if let Some(raw) = get("MCP_TASK_KEY").filter(|raw| !raw.trim().is_empty()) {
            let reason = "expected a Secrets Manager or SSM ARN or env:<NAME> (CONTRACT M5)";
            let parsed = super::SecretRef::parse(raw.trim());
            config.task_key = Some(parsed.ok_or_else(|| bad("MCP_TASK_KEY", reason.into()))?);
        }
        if let Some(text) = get("MCP_INSTRUCTIONS") {
            config.instructions = Some(text);
        }
        config.auth = config.auth.from_env_with(&get)?;
        Ok(config)
    }
}

/// An AWS service endpoint override: the service's own variable, else `AWS_ENDPOINT_URL`, as
/// the AWS SDKs read them (CONTRACT X10, X12).
fn aws_endpoint(
    get: &impl Fn(&str) -> Option<String>,
    specific: &'static str,
) -> Result<Option<String>, ConfigError> {
    for variable in [specific, "AWS_ENDPOINT_URL"] {
        let Some(endpoint) = get(variable) else {
            continue;
        };
        let endpoint = endpoint.trim().trim_end_matches('/');
        let parsed = url::Url::parse(endpoint).ok().filter(|url| {
            matches!(url.scheme(), "http" | "https")
                && url.host_str().is_some()
                && url.query().is_none()
                && url.fragment().is_none()
                && url.username().is_empty()
                && url.password().is_none()
        });
        if parsed.is_none() {
            return Err(bad(
                variable,
                "expected an http:// or https:// URL without user info, query or fragment".into(),
            ));
        }
        return Ok(Some(endpoint.to_string()));
    }
    Ok(None)
}

fn bad(variable: &'static str, reason: String) -> ConfigError {
    ConfigError { variable, reason }
}

fn split_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// CONTRACT H4, N5: a list of versions this build serves, at least one of the legacy era
/// (`initialize` answers 2025-11-25, so a deployment without one could not serve it).
fn supported_versions(list: &str) -> Result<Vec<ProtocolVersion>, String> {
    let mut versions = Vec::new();
    for wire in split_list(list) {
        let version = ProtocolVersion::from_wire(&wire)
            .ok_or_else(|| format!("'{wire}' is not a version this build serves"))?;
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    if !versions.iter().any(|v| v.era() == Era::Legacy) {
        return Err(format!(
            "must name a version of the legacy era ({})",
            ProtocolVersion::ALL
                .iter()
                .filter(|v| v.era() == Era::Legacy)
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(versions)
}

/// An unsigned whole-number type a variable is read into, with its largest value.
pub(super) trait Whole: Copy + TryFrom<u128> + std::fmt::Display {
    /// The largest value the variable can hold.
    const MAX: Self;
}

impl Whole for u64 {
    const MAX: Self = u64::MAX;
}

impl Whole for usize {
    const MAX: Self = usize::MAX;
}

impl Whole for u32 {
    const MAX: Self = u32::MAX;
}

/// `raw` as a whole number of `T` from `min`, or the sentence that says why not (the
/// configuration error form): `'abc' is not a whole number from 1 to 18446744073709551615`,
/// `'99999999999999999999999' is too large: at most 18446744073709551615`.
pub(super) fn whole_in<T: Whole>(raw: &str, min: u64, unit: &str) -> Result<T, String> {
    let text = raw.trim();
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let range = format!("a whole number{unit} from {min} to {}", T::MAX);
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{raw}' is not {range}"));
    }
    // Digits only: a value past u128 is too large as surely as one past T.
    let Some(value) = text.parse::<u128>().ok() else {
        return Err(format!("'{raw}' is too large: at most {}", T::MAX));
    };
    if value < u128::from(min) {
        return Err(format!("'{raw}' is not {range}"));
    }
    T::try_from(value).map_err(|_| format!("'{raw}' is too large: at most {}", T::MAX))
}

/// Reads a positive whole number from `variable` into `target` when it is set.
///
/// # Errors
/// A [`ConfigError`] naming `variable` when its value is not a whole number from 1 to the
/// type's largest value, or is larger than that.
pub(super) fn read_number<T: Whole>(
    get: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    target: &mut T,
) -> Result<(), ConfigError> {
    if let Some(raw) = get(variable) {
        *target = whole_in(&raw, 1, "").map_err(|reason| bad(variable, reason))?;
    }
    Ok(())
}

fn normalize_endpoint(path: &str) -> Result<String, String> {
    let path = path.trim();
    if !path.starts_with('/') {
        return Err(format!("'{path}' must start with '/'"));
    }
    if path.contains(['?', '#', ' ']) || path.contains("//") {
        return Err(format!("'{path}' is not a plain path"));
    }
    Ok(path.trim_end_matches('/').to_string())
}
