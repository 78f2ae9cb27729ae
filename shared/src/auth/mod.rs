//! Inbound authentication (seed ADR 004; CONTRACT A1–A12): personal access tokens per
//! delegation (A3, A4), OAuth 2.1 JWT access tokens (A5, A7), a distributed fixed-window request
//! limit (A8) and the usage record (A4, A12), all decided by one conditional write to the
//! delegation store (A4).
//!
//! The chain runs right after Origin (H5) and Host (H6), before the method check, so an
//! unauthenticated `GET` gets the 401 challenge (CONTRACT A2). `MCP_AUTH=none` (the default)
//! skips it (CONTRACT A1).
//!
//! - [`token`]: the `mcpat_` token format and its store key (A3, A4).
//! - [`store`]: the [`DelegationStore`] I/O trait and the pure reading of refusals (A4, A8);
//!   [`dynamo`]: the DynamoDB store (A4, A8).
//! - [`oauth`]: JWT verification against a cached key set ([`KeySetSource`] I/O trait; A5);
//!   [`jwt_crypto`]: its signature checks (A5); [`key_set`]: the key set over HTTP (A5, A9).
//! - [`resource`]: the protected-resource metadata (RFC 9728; A10).
//! - [`chain`]: the [`Authenticator`] (A2–A9, A12). Its 401, 403, 429 and 503 answers
//!   ([`AuthRejection`], A6–A9) stand in the one rejection table, [`crate::policy::Rejection`].
//!
//! [`crate::build`] builds the authenticator with the concrete store and key set.

pub mod chain;
pub mod dynamo;
pub mod dynamo_admin;
pub mod jwt_crypto;
pub mod key_set;
pub mod oauth;
pub mod resource;
pub mod store;
pub mod token;

pub use crate::config::{AuthConfig, AuthMode, OAuthConfig, RateLimit};
pub use crate::policy::AuthRejection;
pub use chain::{AuthRecord, Authenticator, EpochClock, system_clock};
pub use dynamo::DynamoStore;
pub use dynamo_admin::{AdminError, NewDelegation};
pub use key_set::HttpKeySet;
pub use oauth::{KeySetSource, OAuthVerifier, oauth_key};
pub use resource::{ProtectedResource, WELL_KNOWN_PREFIX};
pub use store::{Admission, AdmitRequest, DelegationStore, Denial, StoreError};
pub use token::{PersonalToken, token_key};
