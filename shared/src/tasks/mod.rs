//! The MCP tasks extension over asynchronous Tool Services, with no task table (CONTRACT K;
//! `io.modelcontextprotocol/tasks`, SEP-2663, `modelcontextprotocol/ext-tasks`
//! specification/draft/tasks.md).
//!
//! A tool marked `_meta.task` may answer a call `202 Accepted` with a status `Location`; the
//! gateway seals what it needs to continue the task into the task id ([`seal`]), so any
//! instance holding the key answers `tasks/get` and `tasks/cancel` by asking the Tool Service
//! ([`status`]).

pub mod keyring;
pub mod seal;
pub mod status;

use serde_json::{Map, Value};

pub use keyring::Keyring;
pub use seal::{TaskClaims, TaskKeyError, TaskKeys};
pub use status::{ServiceStatus, parse_status};

/// The extension's identifier, in `capabilities.extensions` and in a request's client
/// capabilities (CONTRACT K5).
pub const EXTENSION: &str = crate::protocol::TASKS_EXTENSION;

/// `ttlMs` when `_meta.task` gives none: one hour, in ms (CONTRACT K1).
pub const DEFAULT_TTL_MS: u64 = 3_600_000;
/// `pollIntervalMs` when `_meta.task` gives none, in ms (CONTRACT K1).
pub const DEFAULT_POLL_INTERVAL_MS: u64 = 2_000;
/// The longest `ttlMs` a manifest may set: 30 days, in ms (CONTRACT K1).
pub const MAX_TTL_MS: u64 = 30 * 24 * 3_600_000;
/// The longest `pollIntervalMs` a manifest may set: one hour, in ms (CONTRACT K1).
pub const MAX_POLL_INTERVAL_MS: u64 = 3_600_000;

/// A tool's `_meta.task` (CONTRACT K1): whether a call may or must become a task, how long a
/// task stays readable and the polling hint given to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSupport {
    /// `"required"`: the tool answers only asynchronously; `"optional"`: either way.
    pub required: bool,
    /// `ttlMs`: how long after its creation a task can be read, in ms.
    pub ttl_ms: u64,
    /// `pollIntervalMs`: the hint given to clients, in ms.
    pub poll_interval_ms: u64,
}

/// Whether a request's per-request client capabilities declare the extension (CONTRACT K5):
/// `params._meta["io.modelcontextprotocol/clientCapabilities"].extensions` holds
/// `"io.modelcontextprotocol/tasks"` with an object value. A legacy request never does.
#[must_use]
pub fn declared(params: Option<&Map<String, Value>>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(crate::protocol::META_CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// `data` of a `-32021` for want of the extension (CONTRACT K5; ext-tasks "Capability
/// Negotiation"): `{"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}`.
#[must_use]
pub fn required_capabilities() -> Value {
    serde_json::json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}})
}

/// `ms` since the Unix epoch as ISO 8601 UTC text with milliseconds,
/// `2026-12-05T10:30:00.123Z` (`createdAt`, `lastUpdatedAt`).
#[must_use]
pub fn iso_time(ms: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(at).to_string()
}

/// Now, in ms since the Unix epoch.
#[must_use]
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Whether an active tool of `route` carries `_meta.task`, so that `server/discover` offers
/// the extension (CONTRACT K1, K5).
#[must_use]
pub fn offered(route: &crate::registry::Route) -> bool {
    route.tools.values().any(
        |lookup| matches!(lookup, crate::registry::ToolLookup::Active(tool) if tool.task.is_some()),
    )
}

/// CONTRACT K3: every task tool of the snapshot, as load problems naming the route and tool,
/// for a process under the Lambda runtime without `MCP_TASK_KEY` (its instances could not
/// continue each other's tasks).
#[must_use]
pub fn keyless_task_problems(
    snapshot: &crate::registry::Snapshot,
) -> Vec<crate::registry::ManifestProblem> {
    let mut problems: Vec<crate::registry::ManifestProblem> = Vec::new();
    for route in snapshot.routes() {
        let route_name = route
            .key
            .as_deref()
            .map_or_else(String::new, |key| format!("route '{key}': "));
        for lookup in route.tools.values() {
            if let crate::registry::ToolLookup::Active(tool) = lookup
                && tool.task.is_some()
            {
                problems.push(crate::registry::ManifestProblem {
                    path: String::new(),
                    message: format!(
                        "{route_name}tool '{}': _meta.task: a task tool needs MCP_TASK_KEY on \
                         Lambda (a Secrets Manager or SSM ARN holding at least 32 random bytes \
                         in base64), so that every instance can continue every task",
                        tool.name
                    ),
                });
            }
        }
    }
    problems.sort_by(|a, b| a.message.cmp(&b.message));
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k5_declared_needs_the_extension_as_an_object() {
        let params = |v: Value| v.as_object().cloned();
        let yes = params(serde_json::json!({"_meta": {
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}}}}));
        assert!(declared(yes.as_ref()));
        let no = params(serde_json::json!({"_meta": {
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: true}}}}));
        assert!(!declared(no.as_ref()));
        let other = params(serde_json::json!({"_meta": {
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"x/y": {}}}}}));
        assert!(!declared(other.as_ref()));
        assert!(!declared(None));
    }

    #[test]
    fn k3_on_lambda_each_task_tool_without_a_key_is_a_load_problem() {
        let tool = |name: &str, task: Option<Value>| {
            let mut meta =
                serde_json::json!({"version": "1", "endpoint": "https://jobs.example/run"});
            if let Some(task) = task {
                meta["task"] = task;
            }
            serde_json::json!({"name": name, "inputSchema": {"type": "object"}, "_meta": meta})
        };
        let manifest = serde_json::json!({"manifestVersion": 1, "routes": [{"routeKey": "hr",
            "tools": [tool("plain", None), tool("export", Some(serde_json::json!({"support": "optional"})))]}]});
        let snapshot = crate::registry::compile_manifest(&manifest).unwrap();
        let problems: Vec<String> = keyless_task_problems(&snapshot)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            problems,
            [
                "route 'hr': tool 'export': _meta.task: a task tool needs MCP_TASK_KEY on Lambda (a \
              Secrets Manager or SSM ARN holding at least 32 random bytes in base64), so that \
              every instance can continue every task"
            ]
        );
        let route = snapshot.route("hr").unwrap();
        assert!(offered(route));
    }

    #[test]
    fn iso_time_is_utc_with_milliseconds() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_764_930_600_123), "2025-12-05T10:30:00.123Z");
    }
}
