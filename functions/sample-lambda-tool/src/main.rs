//! A sample *Lambda Tool Service* (CONTRACT M4, X10): one Lambda function serving several MCP
//! tools, which the gateway invokes directly through the Lambda Invoke API. What the function
//! receives and returns, and its tools, are described in `handler.rs`.

mod glossary;
mod handler;
mod tool_error;

use lambda_runtime::service_fn;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    lambda_runtime::run(service_fn(handler::handle)).await
}
