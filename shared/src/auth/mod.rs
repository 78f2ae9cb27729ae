//! Inbound authentication (seed ADR 004): personal access tokens per delegation, OAuth 2.1 JWT
//! access tokens, a distributed fixed-window request limit and the usage record, all decided by
//! one conditional write to the delegation store.
//!
//! The chain runs right after Origin (H5) and Host (H6), before the method check, so an
//! unauthenticated `GET` gets the 401 challenge. `MCP_AUTH=none` (the default) skips it.
//!
//! - [`token`]: the `mcpat_` token format and its store key.
//! - [`store`]: the [`DelegationStore`] I/O trait and the pure reading of refusals;
//!   [`dynamo`]: the DynamoDB store.
//! - [`oauth`]: JWT verification against a cached key set ([`KeySetSource`] I/O trait).
//! - [`resource`]: the protected-resource metadata (RFC 9728).
//! - [`chain`]: the [`Authenticator`]; [`rejection`]: 401, 403, 429, 503 answers.

pub mod chain;
pub mod dynamo;
pub mod jwt_crypto;
pub mod oauth;
pub mod rejection;
pub mod resource;
pub mod settings;
mod setup;
pub mod store;
pub mod token;

pub use chain::{AuthRecord, Authenticator, EpochClock, system_clock};
pub use dynamo::{DynamoStore, NewDelegation};
pub use oauth::{HttpKeySet, KeySetSource, OAuthVerifier, oauth_key};
pub use rejection::AuthRejection;
pub use resource::{ProtectedResource, WELL_KNOWN_PREFIX};
pub use settings::{AuthConfig, AuthMode, OAuthConfig, RateLimit};
pub use store::{Admission, AdmitRequest, DelegationStore, Denial, StoreError};
pub use token::{PersonalToken, token_key};
