//! `mcp-local`: the gateway on loopback with the same `MCP_*` variables as the Lambda functions
//! (the start-up is [`mcp_local::start::run`]). A start-up failure is one line on stderr.

use clap::Parser;

/// mimalloc: cold-start manifest compilation and each request's JSON trees are many small
/// allocations, which glibc's allocator serves markedly slower.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let Err(error) = mcp_local::start::run(mcp_local::args::Args::parse()).await else {
        return std::process::ExitCode::SUCCESS;
    };
    eprintln!("mcp-local: {error}");
    std::process::ExitCode::FAILURE
}
