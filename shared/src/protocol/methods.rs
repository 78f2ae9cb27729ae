//! The MCP method names the gateway knows, in one place (STYLE 6).

/// `initialize` (MCP 2025-11-25 basic/lifecycle, CONTRACT L1).
pub const INITIALIZE: &str = "initialize";
/// `ping` (CONTRACT L4).
pub const PING: &str = "ping";
/// `tools/list` (CONTRACT T).
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call` (CONTRACT X).
pub const TOOLS_CALL: &str = "tools/call";
/// `notifications/initialized` (CONTRACT L3).
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// `server/discover` (MCP 2026-07-28 server/discover, CONTRACT N3); modern era only.
pub const SERVER_DISCOVER: &str = "server/discover";
/// `tasks/get` (ext-tasks, CONTRACT K6); modern era only.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update` (ext-tasks, CONTRACT K7); modern era only.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel` (ext-tasks, CONTRACT K7); modern era only.
pub const TASKS_CANCEL: &str = "tasks/cancel";

/// Whether `method` is one of the tasks extension's methods the gateway answers (CONTRACT K5).
#[must_use]
pub fn is_task_method(method: &str) -> bool {
    matches!(method, TASKS_GET | TASKS_UPDATE | TASKS_CANCEL)
}
