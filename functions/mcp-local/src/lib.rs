//! The local development server: the gateway service over HTTP on loopback, and an in-process
//! sample Tool Service for the baked sample manifest so that `tools/call` works at once.
//!
//! - [`args`]: the command line; [`start`]: the start-up; [`server`]: the serving threads;
//! - [`sample_tool_service`]: the sample Tool Service.

pub mod args;
pub mod async_jobs;
pub mod sample_tool_service;
pub mod server;
pub mod start;
