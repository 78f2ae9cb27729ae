//! Browser clients (CONTRACT H9, H10): the CORS preflight of an allowed origin and the headers
//! every answer to an allowed origin carries, as pure predicates over request headers.
//!
//! The origin itself is checked by H5 ([`super::check_origin`]) first: a refused origin gets
//! the H5 `403` and no CORS header at all, and a request without `Origin` (every agent) sees no
//! change.

use http::{HeaderMap, HeaderValue, Method, header};

use super::HttpRejection;

/// The request headers the gateway reads, lower case (CONTRACT H9); any `mcp-param-*` is read
/// too ([`MCP_PARAM_PREFIX`]).
pub const READ_HEADERS: [&str; 12] = [
    "content-type",
    "accept",
    "authorization",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-method",
    "mcp-name",
    "guid",
    "x-request-id",
    "employee-no",
    "virtual-employee-no",
    "last-event-id",
];

/// The prefix of the per-parameter headers of the 2026-07-28 era (`Mcp-Param-<name>`).
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";

/// `Access-Control-Expose-Headers` of every answer to an allowed origin (CONTRACT H10): the
/// response headers a client reads.
pub const EXPOSED_HEADERS: &str =
    "mcp-session-id, guid, x-request-id, www-authenticate, retry-after";

/// `Access-Control-Max-Age` of a preflight answer, in seconds (CONTRACT H9): browsers cap it
/// lower (Chromium at 7,200 s).
pub const PREFLIGHT_MAX_AGE_S: u32 = 7_200;

/// Longest requested header name a preflight admits, in bytes (CONTRACT H9).
pub const MAX_REQUESTED_HEADER_BYTES: usize = 128;

/// Longest method or header name quoted in a refusal, in characters (CONTRACT H9).
const MAX_QUOTED_NAME_CHARS: usize = 64;

/// What an admitted preflight answers with (CONTRACT H9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preflight {
    /// `Access-Control-Allow-Methods`: the one method the path answers.
    pub allow_method: &'static str,
    /// `Access-Control-Allow-Headers`: the requested names in the order sent, joined by `, `;
    /// `None` when none were requested.
    pub allow_headers: Option<HeaderValue>,
}

/// CONTRACT H9: whether a request is a CORS preflight (`OPTIONS` with `Origin` and
/// `Access-Control-Request-Method`). An `OPTIONS` without them is no preflight and stays a
/// `405` (H1).
#[must_use]
pub fn is_preflight(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::OPTIONS
        && headers.contains_key(header::ORIGIN)
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// CONTRACT H9: a preflight from an allowed origin is admitted when it asks for `method` (the
/// one method its path answers: `POST` on the endpoint, `GET` on a metadata path) and for
/// headers the gateway reads only (names compared case-insensitively; each a valid header name
/// of at most [`MAX_REQUESTED_HEADER_BYTES`]).
///
/// # Errors
/// [`HttpRejection::PreflightRefused`] naming the method or the first header refused.
pub fn check_preflight(
    headers: &HeaderMap,
    method: &'static str,
) -> Result<Preflight, HttpRejection> {
    for requested in headers.get_all(header::ACCESS_CONTROL_REQUEST_METHOD) {
        if requested.as_bytes() != method.as_bytes() {
            return Err(HttpRejection::PreflightRefused {
                refused: format!("method {}", quoted(requested.as_bytes())),
            });
        }
    }
    let mut requested = Vec::new();
    for value in headers.get_all(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        let names = value
            .as_bytes()
            .split(|&b| b == b',')
            .map(<[u8]>::trim_ascii)
            .filter(|name| !name.is_empty());
        for name in names {
            match std::str::from_utf8(name) {
                Ok(name) if is_read_header(name) => requested.push(name),
                _ => {
                    return Err(HttpRejection::PreflightRefused {
                        refused: format!("header {}", quoted(name)),
                    });
                }
            }
        }
    }
    let allow_headers = if requested.is_empty() {
        None
    } else {
        HeaderValue::from_str(&requested.join(", ")).ok()
    };
    Ok(Preflight {
        allow_method: method,
        allow_headers,
    })
}

/// CONTRACT H10: the `Origin` to echo in `Access-Control-Allow-Origin`, exactly as sent, when the
/// request has one (H5 has admitted it by then); `None` for a request without `Origin`.
#[must_use]
pub fn allowed_origin(headers: &HeaderMap) -> Option<HeaderValue> {
    headers.get(header::ORIGIN).cloned()
}

/// Whether `name` is a header the gateway reads (CONTRACT H9), case-insensitively: one of
/// [`READ_HEADERS`], or `mcp-param-` followed by a valid header name, at most
/// [`MAX_REQUESTED_HEADER_BYTES`] in all.
fn is_read_header(name: &str) -> bool {
    if name.len() > MAX_REQUESTED_HEADER_BYTES
        || http::HeaderName::from_bytes(name.as_bytes()).is_err()
    {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    READ_HEADERS.contains(&lower.as_str())
        || lower
            .strip_prefix(MCP_PARAM_PREFIX)
            .is_some_and(|rest| !rest.is_empty())
}

/// A client-chosen name for a refusal: as sent, but for characters outside printable ASCII
/// (left out) and cut at [`MAX_QUOTED_NAME_CHARS`].
fn quoted(name: &[u8]) -> String {
    String::from_utf8_lossy(name)
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(MAX_QUOTED_NAME_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_preflight_post(headers: &HeaderMap) -> Result<Preflight, HttpRejection> {
        check_preflight(headers, "POST")
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn h9_a_preflight_is_options_with_origin_and_a_requested_method() {
        let full = headers(&[
            ("origin", "http://app.example"),
            ("access-control-request-method", "POST"),
        ]);
        assert!(is_preflight(&Method::OPTIONS, &full));
        assert!(!is_preflight(&Method::POST, &full));
        assert!(!is_preflight(
            &Method::OPTIONS,
            &headers(&[("origin", "http://app.example")])
        ));
    }

    #[test]
    fn h9_requested_headers_are_echoed_when_the_gateway_reads_each() {
        let admitted = check_preflight_post(&headers(&[
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "Content-Type, MCP-Protocol-Version,mcp-param-region",
            ),
        ]))
        .unwrap();
        assert_eq!(
            admitted.allow_headers.unwrap(),
            "Content-Type, MCP-Protocol-Version, mcp-param-region"
        );
        let refused = check_preflight_post(&headers(&[
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "content-type, x-api-key"),
        ]));
        assert_eq!(
            refused,
            Err(HttpRejection::PreflightRefused {
                refused: "header x-api-key".into()
            })
        );
        assert_eq!(
            check_preflight_post(&headers(&[("access-control-request-method", "PUT")])),
            Err(HttpRejection::PreflightRefused {
                refused: "method PUT".into()
            })
        );
        assert!(!is_read_header("mcp-param-"));
        assert!(!is_read_header("mcp-param-a b"));
        assert!(!is_read_header(&format!("mcp-param-{}", "p".repeat(128))));
        let first_refused = check_preflight_post(&headers(&[
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "x-api-key, guid, x-other"),
        ]));
        assert_eq!(
            first_refused,
            Err(HttpRejection::PreflightRefused {
                refused: "header x-api-key".into()
            })
        );
    }
}
