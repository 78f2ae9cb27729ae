//! Whole-manifest validation and compilation (CONTRACT R5, M, T1, T3).
//!
//! Every problem is collected with its JSON path (`routes[0].tools[3].inputSchema`); a manifest
//! with any problem is not served.
//!
//! - `manifest`: the document, its routes and each route's `tools/list` and lookup;
//! - `tool`: one tool, its schemas and public `tools/list` fields;
//! - `meta`: a tool's `_meta` (endpoint, method, timeout, result format, version, active);
//!   its http(s) endpoint parsed through the load's `origins`;
//! - `auth`: a tool's `_meta.auth`, its outbound credential (CONTRACT M5);
//! - `authorization`: a route's Cedar policies (CONTRACT Z1, Z8);
//! - `header_params`: a tool's `x-mcp-header` annotations (CONTRACT N6);
//! - `rest`: a REST-shaped tool's `_meta.parameters` and endpoint template (CONTRACT M2);
//! - `token`: HTTP header names (RFC 9110 `token`);
//! - `first_pass`: the one pass over a manifest's text;
//! - `tool_stream`, `schema_check`: a tool read in the one pass, its schemas checked by reading
//!   their texts (the keywords it knows in `schema_keywords`), its `tools/list` entry written
//!   from its fields' texts (`list_entry`);
//! - `strict`: values the one pass reads as strictly as a `serde_json::Value` parse;
//! - `threads`: compiling a route's tools on scoped threads;
//! - `problems`: [`ManifestProblem`] with its JSON path.

/// The scalar `visit_*` methods of a visitor that answers `$none` for every scalar.
macro_rules! scalars_are {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

mod auth;
mod authorization;
mod first_pass;
mod header_params;
mod list_entry;
mod manifest;
mod meta;
mod origins;
mod problems;
mod rest;
mod schema_check;
mod schema_keywords;
mod strict;
mod task_meta;
mod threads;
mod token;
mod tool;
mod tool_search;
mod tool_stream;

#[cfg(test)]
mod auth_tests;
#[cfg(test)]
mod not_json_tests;
#[cfg(test)]
mod pattern_check_tests;
#[cfg(test)]
mod schema_text_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;

pub(crate) use first_pass::compile_manifest_text;
pub use manifest::compile_manifest;
pub use meta::MAX_TOOL_TIMEOUT_MS;
pub use problems::ManifestProblem;
pub use rest::RESERVED_HEADERS;
