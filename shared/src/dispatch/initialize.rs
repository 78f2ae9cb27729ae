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

#[derive(Serialize)]
struct Capabilities {
    tools: ToolsCapability,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolsCapability {
    list_changed: bool,
}

/// `serverInfo` when no route is loaded: the gateway itself.
fn gateway_server_info() -> ServerInfo {
    ServerInfo {
        name: "mcp-gateway".into(),
        title: "MCP gateway".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

pub(super) fn handle(call: &Call<'_>, id: &RequestId) -> MethodOutcome {
    let fallback;
    let server_info = if let Some(route) = call.route {
        &route.server
    } else {
        fallback = gateway_server_info();
        &fallback
    };
    let instructions = call
        .route
        .and_then(|r| r.instructions.as_deref())
        .or(call.config.instructions.as_deref());
    let result = InitializeResult {
        protocol_version: LATEST_PROTOCOL_VERSION,
        capabilities: Capabilities {
            tools: ToolsCapability {
                list_changed: false,
            },
        },
        server_info,
        instructions,
    };
    MethodOutcome::Result {
        body: encode_response(id, &result),
        session_id: Some(uuid::Uuid::new_v4().to_string()),
        tool_error: false,
    }
}
