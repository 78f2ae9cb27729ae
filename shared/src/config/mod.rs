//! Typed gateway configuration from `MCP_*` environment variables (STYLE 8).
//!
//! Built by [`Config::from_env_with`] so tests never touch the process environment. A bad value
//! is a [`ConfigError`] naming the variable, never a panic at cold start.
//!
//! - [`gateway`]: [`Config`], its defaults and its reading;
//! - [`modes`]: routing mode, profile and registry source;
//! - [`auth`]: the inbound authentication settings (CONTRACT A1, A5, A8);
//! - [`secret_ref`]: the `REF` forms secrets are read from (CONTRACT M5).

pub mod auth;
pub mod gateway;
pub mod modes;
pub mod secret_ref;
#[cfg(test)]
mod tests;

pub use auth::{AuthConfig, AuthMode, OAuthConfig, RateLimit};
pub use gateway::{Config, ConfigError};
pub use modes::{Profile, RegistrySource, RoutingMode};
pub use secret_ref::{AwsArn, SecretRef, SecretSource};
