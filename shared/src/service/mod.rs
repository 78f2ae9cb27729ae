//! The sans-IO gateway service: one `http::Request` in, one `http::Response` out, every check in
//! the order CONTRACT "Order of checks" gives (STYLE 2). Every failure becomes a response
//! (STYLE 3). The service sees the I/O only through traits: [`crate::invoke::ToolInvoker`],
//! the registry's [`crate::registry::SnapshotSource`] and the authenticator's store and key set;
//! [`crate::build`] names the concrete clients.
//!
//! - `gateway`: the [`Gateway`] and [`Gateway::handle`];
//! - `pipeline`: the order of checks, up to the method's dispatch;
//! - `modern`: the checks of a modern (2026-07-28 era) request (CONTRACT N2, N5);
//! - `respond`: the one mapping of an outcome to a response.

mod gateway;
mod modern;
mod pipeline;
mod respond;

pub use gateway::{Gateway, InvocationContext, NOT_LOADED, RequestBody};
