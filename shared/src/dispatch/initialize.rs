//! `initialize`: server identity and capabilities, a fresh `Mcp-Session-Id`, nothing kept
//! (CONTRACT L1, L2).
//!
//! Maximally tolerant: `params` are not inspected, an unknown `protocolVersion` gets ours.

use serde::Serialize;

use super::{Call, MethodOutcome};
use crate::protocol::{LATEST_PROTOCOL_VERSION, RequestId, encode_response};
use crate::registry::ServerInfo;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult<'a> {
    protocol_version: &'static str,
    capabilities: Capabilities,
    server_info: &'a ServerInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

/// `capabilities` of `initialize` and `server/discover`: tools, whose list never changes
/// while an instance is warm (CONTRACT L1, N3).
#[derive(Serialize)]
pub(super) struct Capabilities {
    pub(super) tools: ToolsCapability,
    /// `extensions` of `server/discover`: the tasks extension on a route with a task tool
    /// (CONTRACT K5); never in `initialize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) extensions: Option<serde_json::Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolsCapability {
    pub(super) list_changed: bool,
}

pub(super) fn handle(call: &Call<'_>, id: &RequestId) -> MethodOutcome {
    let server_info = call.server_info();
    let instructions = call.instructions();
    let result = InitializeResult {
        protocol_version: LATEST_PROTOCOL_VERSION,
        capabilities: Capabilities {
            tools: ToolsCapability {
                list_changed: false,
            },
            extensions: None,
        },
        server_info: &server_info,
        instructions,
    };
    MethodOutcome::Result {
        body: encode_response(id, &result),
        session_id: Some(uuid::Uuid::new_v4().to_string()),
        tool_error: false,
    }
}
