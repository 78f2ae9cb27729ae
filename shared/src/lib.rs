//! Stateless MCP gateway core.
//!
//! An agent platform speaks MCP 2025-11-25 over plain JSON POSTs; the gateway answers
//! `initialize`, `ping`, `tools/list` and `tools/call`, validates each call against the tool's
//! JSON Schema and forwards it to the tool's HTTP backend (a Tool Service). The rules it follows
//! are CONTRACT.md's, cited by id (`H4`, `X5` …) throughout.
//!
//! - [`service::Gateway`]: the sans-IO service, `http::Request` in, `http::Response` out.
//! - [`policy`]: HTTP policy and caller headers (CONTRACT H, C).
//! - [`protocol`]: JSON-RPC envelope and error objects (CONTRACT E).
//! - [`registry`]: the snapshot, its sources and manifest validation (CONTRACT R, M).
//! - [`invoke`]: Tool Service calls and result mapping (CONTRACT X).
//! - [`auth`]: inbound authentication, request limit and usage record (seed ADR 004).
//! - [`lambda`]: the AWS Lambda adapter; [`usage`]: the per-request log event (CONTRACT U).

pub mod auth;
pub mod authz;
pub mod aws_http;
pub mod build;
mod chunks;
pub mod config;
mod dispatch;
pub mod future;
mod hashing;
pub mod invoke;
pub mod lambda;
pub mod policy;
pub mod protocol;
pub mod registry;
pub mod routing;
pub mod service;
pub mod tasks;
pub mod telemetry;
pub mod text;
pub mod tls;
pub mod tool_result;
pub mod trace;
pub mod usage;

pub use build::GatewayError;
pub use config::{Config, ConfigError, Profile, RegistrySource, RoutingMode};
pub use service::{Gateway, InvocationContext, RequestBody};
