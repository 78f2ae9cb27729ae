//! Lambda function of the fixed deployment `/mcp/core` (CONTRACT P1, P4): configuration from
//! `MCP_*` variables over the fixed defaults, the gateway built once per cold start, every event
//! served by the shared service.

use std::sync::Arc;

use mcp_gateway::telemetry::{LogFormat, init};
use mcp_gateway::{Config, Gateway};

/// mimalloc: cold-start manifest compilation and each request's JSON trees are many small
/// allocations, which glibc's allocator serves markedly slower.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    init(LogFormat::Json);
    let gateway = Arc::new(Gateway::from_env_or_broken(Config::fixed_defaults()).await?);
    mcp_gateway::lambda::run(gateway).await
}
