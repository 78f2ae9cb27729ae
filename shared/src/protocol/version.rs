//! MCP protocol versions and eras as data (STYLE 9; CONTRACT H4, L1, N1, N4, N5).
//!
//! The one place that knows which versions exist, which era each belongs to and which result
//! fields an era adds. Dispatch reads [`Era::result_fields`]; nothing else compares versions.

use super::methods;

/// The newest version of the legacy era; `initialize` always answers with it (CONTRACT L1, N1).
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// The newest legacy version as a `YYYY-MM-DD` date: a later date names a modern version
/// (CONTRACT N1).
const LAST_LEGACY_DATE: &str = LATEST_PROTOCOL_VERSION;

/// `_meta` key of the protocol version a modern request speaks (MCP 2026-07-28 basic).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a modern request's client capabilities (MCP 2026-07-28 basic).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The tasks extension's identifier (ext-tasks, SEP-2663), in `capabilities.extensions` and in
/// a request's client capabilities (CONTRACT K5).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `_meta` key of the server's identity on every modern result (CONTRACT N4).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The two eras of MCP served on one URL (CONTRACT N1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 and earlier: `initialize`, then requests with an `MCP-Protocol-Version`
    /// header (CONTRACT L, H4).
    Legacy,
    /// 2026-07-28 and later: stateless, the version and client capabilities in every
    /// request's `params._meta` (CONTRACT N).
    Modern,
}

/// The fields an era adds to every result of a method it serves (CONTRACT N4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one flag per result field of CONTRACT N4"
)]
pub struct ResultFields {
    /// `"resultType": "complete"`.
    pub result_type: bool,
    /// `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub server_info: bool,
    /// `ttlMs` and `cacheScope` on cacheable results (`tools/list`, `server/discover`).
    pub cache: bool,
    /// `Mcp-Session-Id` is a caller header: checked (C3) and forwarded (X4). The modern era
    /// ignores a sent one (CONTRACT N2).
    pub session_header: bool,
}

impl Era {
    /// The usage-log label: `legacy` or `modern` (CONTRACT N7).
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Legacy => "legacy",
            Self::Modern => "modern",
        }
    }

    /// What this era adds to results and how it treats `Mcp-Session-Id` (CONTRACT N2, N4).
    #[must_use]
    pub const fn result_fields(self) -> ResultFields {
        match self {
            Self::Legacy => ResultFields {
                result_type: false,
                server_info: false,
                cache: false,
                session_header: true,
            },
            Self::Modern => ResultFields {
                result_type: true,
                server_info: true,
                cache: true,
                session_header: false,
            },
        }
    }

    /// Whether this era serves `method`; any other method is `-32601` (CONTRACT E4, N1, N2).
    #[must_use]
    pub fn serves(self, method: &str) -> bool {
        let served: &[&str] = match self {
            Self::Legacy => &[
                methods::INITIALIZE,
                methods::PING,
                methods::TOOLS_LIST,
                methods::TOOLS_CALL,
            ],
            Self::Modern => &[
                methods::SERVER_DISCOVER,
                methods::TOOLS_LIST,
                methods::TOOLS_CALL,
                methods::TASKS_GET,
                methods::TASKS_UPDATE,
                methods::TASKS_CANCEL,
            ],
        };
        served.contains(&method)
    }

    /// The era an `MCP-Protocol-Version` header value names: modern for a `YYYY-MM-DD` date
    /// later than 2025-11-25, served or not; legacy for any other value (CONTRACT N1).
    #[must_use]
    pub fn of_header_value(value: &str) -> Self {
        let value = value.trim_matches([' ', '\t']);
        if is_date(value) && value > LAST_LEGACY_DATE {
            Self::Modern
        } else {
            Self::Legacy
        }
    }
}

/// Whether `value` is a calendar date `YYYY-MM-DD` (CONTRACT N1): `2026-02-30` and
/// `2026-13-01` are not.
fn is_date(value: &str) -> bool {
    let bytes = value.as_bytes();
    let shaped = bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        });
    if !shaped {
        return false;
    }
    let number = |range: std::ops::Range<usize>| value[range].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// A protocol version this build serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolVersion {
    /// MCP 2025-11-25: stateful lifecycle over stateless JSON POSTs (legacy era).
    V2025_11_25,
    /// MCP 2026-07-28: stateless, `server/discover`, the envelope in `params._meta` (modern era).
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version this build serves, oldest first.
    pub const ALL: [Self; 2] = [Self::V2025_11_25, Self::V2026_07_28];

    /// The wire string of this version.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2025_11_25 => LATEST_PROTOCOL_VERSION,
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era this version belongs to (CONTRACT N1).
    #[must_use]
    pub const fn era(self) -> Era {
        match self {
            Self::V2025_11_25 => Era::Legacy,
            Self::V2026_07_28 => Era::Modern,
        }
    }

    /// Parses an exact wire string; `None` for any version this build cannot serve.
    #[must_use]
    pub fn from_wire(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n1_later_dates_are_modern_whether_served_or_not() {
        for value in [
            "2026-07-28",
            "2025-11-26",
            "2099-01-01",
            " 2026-07-28\t",
            "2028-02-29",
        ] {
            assert_eq!(Era::of_header_value(value), Era::Modern, "{value}");
        }
        for value in [
            "2025-11-25",
            "2025-06-18",
            "2024-11-05",
            "2026-07-28 beta",
            "2026-7-28",
            "20260728",
            "",
            "draft",
            "2026-13-01",
            "2026-02-30",
            "2027-02-29",
            "9999-99-99",
        ] {
            assert_eq!(Era::of_header_value(value), Era::Legacy, "{value}");
        }
    }

    #[test]
    fn n1_every_served_version_has_its_era_and_round_trips() {
        for version in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::from_wire(version.as_str()), Some(version));
            assert_eq!(Era::of_header_value(version.as_str()), version.era());
        }
        assert_eq!(ProtocolVersion::from_wire("2025-06-18"), None);
    }

    #[test]
    fn n1_n2_each_era_serves_its_own_methods() {
        assert!(Era::Legacy.serves("initialize") && Era::Legacy.serves("ping"));
        assert!(!Era::Legacy.serves("server/discover"));
        assert!(Era::Modern.serves("server/discover") && Era::Modern.serves("tools/call"));
        for method in [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/list",
            "x",
        ] {
            assert!(!Era::Modern.serves(method), "{method}");
        }
    }

    #[test]
    fn n4_only_the_modern_era_adds_result_fields() {
        let legacy = Era::Legacy.result_fields();
        assert!(!legacy.result_type && !legacy.server_info && !legacy.cache);
        assert!(legacy.session_header);
        let modern = Era::Modern.result_fields();
        assert!(modern.result_type && modern.server_info && modern.cache);
        assert!(!modern.session_header);
    }
}
