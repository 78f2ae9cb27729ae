//! The local development server: the gateway service over HTTP on loopback, and an in-process
//! sample Tool Service for the baked sample manifest so that `tools/call` works at once.

pub mod sample_tool_service;
pub mod server;
