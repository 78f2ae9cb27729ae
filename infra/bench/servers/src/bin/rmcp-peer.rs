//! Bench peer: a stateless MCP server on rmcp, the official Rust SDK (Streamable HTTP service
//! without sessions, JSON responses), served by axum. Its one tool POSTs the arguments to the
//! bench Tool Service and returns the answer as text.
//!
//! Usage: `rmcp-peer ADDR TOOL_SERVICE_URL`.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Search filters.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Filters {
    /// Owning department.
    #[serde(skip_serializing_if = "Option::is_none")]
    department: Option<Department>,
    /// Only documents updated on or after this date (YYYY-MM-DD).
    #[serde(rename = "updatedAfter", skip_serializing_if = "Option::is_none")]
    updated_after: Option<String>,
    /// Tags, at most 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 10))]
    tags: Option<Vec<String>>,
}

/// A department.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
enum Department {
    HR,
    IT,
    Finance,
    Legal,
}

/// `search_documents` arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words to search for.
    #[schemars(length(min = 1, max = 500))]
    query: String,
    /// Most documents to return.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u32>,
    /// Filters.
    #[serde(skip_serializing_if = "Option::is_none")]
    filters: Option<Filters>,
}

#[derive(Clone)]
struct Peer {
    client: reqwest::Client,
    tool_service: Arc<str>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Peer {
    #[tool(description = "Full-text search over the document store.")]
    async fn search_documents(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        if args.query.is_empty() || args.query.chars().count() > 500 {
            return Err(ErrorData::invalid_params(
                "query must have 1 to 500 characters",
                None,
            ));
        }
        let answer = self
            .client
            .post(&*self.tool_service)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&args).unwrap_or_default())
            .send()
            .await;
        Ok(match answer {
            Ok(answer) => {
                let ok = answer.status().is_success();
                let text = answer.text().await.unwrap_or_default();
                if ok {
                    CallToolResult::success(vec![ContentBlock::text(text)])
                } else {
                    CallToolResult::error(vec![ContentBlock::text(text)])
                }
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:3300".into());
    let tool_service: Arc<str> = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:3001/tools/search_documents".into())
        .into();
    let client = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .build()
        .map_err(std::io::Error::other)?;
    let service = StreamableHttpService::new(
        move || {
            Ok(Peer {
                client: client.clone(),
                tool_service: tool_service.clone(),
                tool_router: Peer::tool_router(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("rmcp peer on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, router).await
}
