//! MCP protocol versions as data (STYLE 9, CONTRACT H4, L1).

/// The newest MCP protocol version this gateway speaks; `initialize` always answers with it.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// A protocol version a request speaks, as it travels through dispatch.
///
/// `initialize` requests carry none in the header (CONTRACT H4); every other message carries one
/// of the configured supported versions, compared exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolVersion {
    /// MCP 2025-11-25: stateful lifecycle over stateless JSON POSTs.
    V2025_11_25,
}

impl ProtocolVersion {
    /// The wire string of this version.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2025_11_25 => LATEST_PROTOCOL_VERSION,
        }
    }

    /// Parses an exact wire string; `None` for any version this build cannot serve.
    #[must_use]
    pub fn from_wire(value: &str) -> Option<Self> {
        match value {
            LATEST_PROTOCOL_VERSION => Some(Self::V2025_11_25),
            _ => None,
        }
    }
}
