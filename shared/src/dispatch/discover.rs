//! `server/discover`: the modern versions served, capabilities and instructions, cacheable
//! (CONTRACT N3; MCP 2026-07-28 server/discover). Like `initialize` (R4), it answers while no
//! snapshot is loaded, with the gateway's own `serverInfo`.

use serde::Serialize;

use super::initialize::{Capabilities, ToolsCapability};
use super::{Call, MethodOutcome, result};
use crate::protocol::{Era, RequestId};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiscoverResult<'a> {
    supported_versions: Vec<&'static str>,
    capabilities: Capabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

pub(super) fn handle(call: &Call<'_>, id: &RequestId) -> MethodOutcome {
    let discovered = DiscoverResult {
        // The same list as `data.supported` of -32022 (CONTRACT N3).
        supported_versions: call.config.versions_of(Era::Modern),
        capabilities: Capabilities {
            tools: ToolsCapability {
                list_changed: false,
            },
            // CONTRACT K5: offered where a tool can become a task.
            extensions: call
                .route
                .is_some_and(|route| crate::tasks::offered(route))
                .then(|| serde_json::json!({crate::tasks::EXTENSION: {}})),
        },
        instructions: call.instructions(),
    };
    result(call.encode(id, &discovered, true))
}
