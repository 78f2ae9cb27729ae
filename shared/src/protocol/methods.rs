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
