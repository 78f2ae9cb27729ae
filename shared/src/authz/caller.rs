//! Who is calling, as the policies see it: `Gateway::Caller` (CONTRACT Z3).

use std::collections::BTreeMap;

/// The facts the gateway knows about an admitted caller (CONTRACT Z3). The entity is
/// `Gateway::Caller::"<subject>"`; with `MCP_AUTH=none` it is `"anonymous"` with empty sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallerFacts {
    /// `auth`: `"none"`, `"token"` or `"oauth"`.
    pub auth: &'static str,
    /// `subject`: the JWT's `sub` (OAuth), the delegation id (token), `anonymous` (none).
    pub subject: String,
    /// `groups`: the delegation's groups (token) or the groups claim (OAuth).
    pub groups: Vec<String>,
    /// `scopes`: the JWT's scopes (OAuth), else empty.
    pub scopes: Vec<String>,
    /// `clientId`: the JWT's `client_id` or `azp` (OAuth), else empty.
    pub client_id: String,
    /// The token's other string claims, as the entity's tags (OAuth), else empty.
    pub tags: BTreeMap<String, String>,
}

impl CallerFacts {
    /// The caller of a deployment without inbound authentication (`MCP_AUTH=none`; CONTRACT
    /// Z3): `Gateway::Caller::"anonymous"`, `auth` `"none"`, empty sets and tags.
    #[must_use]
    pub fn anonymous() -> Self {
        Self {
            auth: "none",
            subject: "anonymous".into(),
            ..Self::default()
        }
    }
}

/// The request facts of `context.request` (CONTRACT Z2): the employee headers as sent (C4:
/// opaque, never decoded) and the protocol version the request speaks.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestFacts<'a> {
    /// `employee-no`, when sent.
    pub employee_no: Option<&'a str>,
    /// `virtual-employee-no`, when sent.
    pub virtual_employee_no: Option<&'a str>,
    /// The protocol version of the request (`2025-11-25`, `2026-07-28` …).
    pub protocol_version: &'a str,
}
