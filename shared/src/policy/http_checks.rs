//! Pure HTTP checks, in the order CONTRACT "Order of checks" runs them (H5, H6, H1, H7, H3, H2, H4).

use http::{HeaderMap, Method, header};

use super::HttpRejection;
use crate::protocol::{Era, ProtocolVersion};

/// CONTRACT H5: a present `Origin` must be one of `allowed` (exact match); none passes. When
/// several `Origin` headers arrive, every one must be allowed.
///
/// # Errors
/// [`HttpRejection::OriginNotAllowed`].
pub fn check_origin(headers: &HeaderMap, allowed: &[String]) -> Result<(), HttpRejection> {
    for origin in headers.get_all(header::ORIGIN) {
        let origin = origin
            .to_str()
            .map_err(|_| HttpRejection::OriginNotAllowed)?;
        let origin = origin.trim().trim_end_matches('/');
        if !allowed
            .iter()
            .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
        {
            return Err(HttpRejection::OriginNotAllowed);
        }
    }
    Ok(())
}

/// CONTRACT H6: when `allowed` is set, the `Host` (or the URI authority) must match an entry:
/// `name` matches that host on any port, `name:port` matches exactly.
///
/// # Errors
/// [`HttpRejection::HostNotAllowed`], also when no host is given at all or more than one `Host`
/// header is.
pub fn check_host(
    headers: &HeaderMap,
    uri: &http::Uri,
    allowed: Option<&[String]>,
) -> Result<(), HttpRejection> {
    let Some(allowed) = allowed else {
        return Ok(());
    };
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        return Err(HttpRejection::HostNotAllowed);
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| uri.authority().map(http::uri::Authority::as_str))
        .ok_or(HttpRejection::HostNotAllowed)?
        .trim()
        .to_ascii_lowercase();
    let name = match host.rsplit_once(':') {
        Some((name, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && !name.ends_with(':') =>
        {
            name
        }
        _ => host.as_str(),
    };
    if allowed
        .iter()
        .any(|a| a.eq_ignore_ascii_case(&host) || a.eq_ignore_ascii_case(name))
    {
        Ok(())
    } else {
        Err(HttpRejection::HostNotAllowed)
    }
}

/// CONTRACT H1: `POST` only.
///
/// # Errors
/// [`HttpRejection::MethodNotAllowed`] for every other method.
pub fn check_method(method: &Method) -> Result<(), HttpRejection> {
    if method == Method::POST {
        Ok(())
    } else {
        Err(HttpRejection::MethodNotAllowed)
    }
}

/// CONTRACT H7: the body length against `MCP_MAX_REQUEST_BYTES`.
///
/// # Errors
/// [`HttpRejection::PayloadTooLarge`].
pub fn check_body_size(body_len: Option<usize>, limit_bytes: usize) -> Result<(), HttpRejection> {
    match body_len {
        Some(len) if len <= limit_bytes => Ok(()),
        _ => Err(HttpRejection::PayloadTooLarge { limit_bytes }),
    }
}

fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// CONTRACT H3: `application/json` or `application/json-rpc`, parameters allowed; a missing or
/// empty `Content-Type` is read as JSON. When several `Content-Type` headers arrive, every one
/// must say JSON.
///
/// # Errors
/// [`HttpRejection::UnsupportedMediaType`].
pub fn check_content_type(headers: &HeaderMap) -> Result<(), HttpRejection> {
    for value in headers.get_all(header::CONTENT_TYPE) {
        let value = value
            .to_str()
            .map_err(|_| HttpRejection::UnsupportedMediaType)?;
        if !matches!(
            media_type(value).as_str(),
            "" | "application/json" | "application/json-rpc"
        ) {
            return Err(HttpRejection::UnsupportedMediaType);
        }
    }
    Ok(())
}

/// CONTRACT H2: an `Accept` must admit `application/json`, `application/*` or `*/*`; a missing
/// or empty one passes. Responses are JSON whatever it says.
///
/// # Errors
/// [`HttpRejection::NotAcceptable`].
pub fn check_accept(headers: &HeaderMap) -> Result<(), HttpRejection> {
    let mut ranges = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(media_type)
        .filter(|r| !r.is_empty())
        .peekable();
    if ranges.peek().is_none() {
        return Ok(());
    }
    if ranges.any(|r| matches!(r.as_str(), "application/json" | "application/*" | "*/*")) {
        Ok(())
    } else {
        Err(HttpRejection::NotAcceptable)
    }
}

/// The `MCP-Protocol-Version` header name (matched case-insensitively).
pub(crate) const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// CONTRACT N1: the era the `MCP-Protocol-Version` header names: modern when any of its values
/// names a modern version (a request that claims the modern era anywhere gets its JSON-RPC
/// answers); legacy without one. A body whose `params._meta` names a version is modern
/// whatever this says.
#[must_use]
pub fn header_era(headers: &HeaderMap) -> Era {
    let modern = headers
        .get_all(PROTOCOL_VERSION_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| Era::of_header_value(v) == Era::Modern);
    if modern { Era::Modern } else { Era::Legacy }
}

/// The first `MCP-Protocol-Version` value as text, trimmed, for the usage event (CONTRACT N7);
/// `None` when absent or not visible ASCII.
#[must_use]
pub fn header_version(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(PROTOCOL_VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches([' ', '\t']))
}

/// CONTRACT H4: every non-initialize legacy message carries exactly one supported version of
/// the legacy era (a modern version makes the request modern, N1).
///
/// # Errors
/// [`HttpRejection::MissingProtocolVersion`] or [`HttpRejection::UnsupportedProtocolVersion`].
pub fn check_protocol_version(
    headers: &HeaderMap,
    supported: &[ProtocolVersion],
) -> Result<ProtocolVersion, HttpRejection> {
    let mut values = headers.get_all(PROTOCOL_VERSION_HEADER).iter();
    let value = values.next().ok_or(HttpRejection::MissingProtocolVersion)?;
    if values.next().is_some() {
        return Err(HttpRejection::UnsupportedProtocolVersion);
    }
    let value = value
        .to_str()
        .map_err(|_| HttpRejection::UnsupportedProtocolVersion)?;
    if value.is_empty() {
        return Err(HttpRejection::MissingProtocolVersion);
    }
    supported
        .iter()
        .copied()
        .find(|v| v.era() == Era::Legacy && v.as_str() == value)
        .ok_or(HttpRejection::UnsupportedProtocolVersion)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn h2_accept_variants() {
        for ok in [
            "application/json, text/event-stream",
            "application/json",
            "*/*",
            "application/*;q=0.5",
            "",
        ] {
            assert_eq!(check_accept(&headers(&[("accept", ok)])), Ok(()), "{ok}");
        }
        assert_eq!(check_accept(&HeaderMap::new()), Ok(()));
        for bad in ["text/event-stream", "text/html", "application/xml"] {
            assert_eq!(
                check_accept(&headers(&[("accept", bad)])),
                Err(HttpRejection::NotAcceptable),
                "{bad}"
            );
        }
    }

    #[test]
    fn h3_content_type_variants() {
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/json-rpc",
        ] {
            assert_eq!(
                check_content_type(&headers(&[("content-type", ok)])),
                Ok(())
            );
        }
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            assert_eq!(
                check_content_type(&headers(&[("content-type", bad)])),
                Err(HttpRejection::UnsupportedMediaType)
            );
        }
    }

    #[test]
    fn h3_h5_h6_a_second_header_cannot_smuggle_a_value_past_the_first() {
        let uri: http::Uri = "/mcp".parse().unwrap();
        let json_then_text = headers(&[
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
        ]);
        assert_eq!(
            check_content_type(&json_then_text),
            Err(HttpRejection::UnsupportedMediaType)
        );
        let allowed = vec!["https://agent.example".to_string()];
        let two_origins = headers(&[
            ("origin", "https://agent.example"),
            ("origin", "https://evil.example"),
        ]);
        assert_eq!(
            check_origin(&two_origins, &allowed),
            Err(HttpRejection::OriginNotAllowed)
        );
        let same_twice = headers(&[
            ("origin", "https://agent.example"),
            ("origin", "https://agent.example"),
        ]);
        assert_eq!(check_origin(&same_twice, &allowed), Ok(()));
        let two_hosts = headers(&[("host", "localhost"), ("host", "evil.example")]);
        let hosts = vec!["localhost".to_string()];
        assert_eq!(
            check_host(&two_hosts, &uri, Some(&hosts)),
            Err(HttpRejection::HostNotAllowed)
        );
    }

    #[test]
    fn h6_host_names_match_any_port_and_host_port_matches_exactly() {
        let uri: http::Uri = "/mcp".parse().unwrap();
        let allowed = vec![
            "localhost".to_string(),
            "127.0.0.1:3000".to_string(),
            "[::1]".to_string(),
        ];
        for ok in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "127.0.0.1:3000",
            "[::1]:3000",
        ] {
            assert_eq!(
                check_host(&headers(&[("host", ok)]), &uri, Some(&allowed)),
                Ok(()),
                "{ok}"
            );
        }
        for bad in ["127.0.0.1:3001", "evil.example", "localhost.evil.example"] {
            assert_eq!(
                check_host(&headers(&[("host", bad)]), &uri, Some(&allowed)),
                Err(HttpRejection::HostNotAllowed),
                "{bad}"
            );
        }
        assert_eq!(
            check_host(&headers(&[("host", "evil")]), &uri, None),
            Ok(())
        );
    }

    #[test]
    fn h4_protocol_version_is_compared_exactly() {
        let supported = ProtocolVersion::ALL;
        assert_eq!(
            check_protocol_version(
                &headers(&[("MCP-Protocol-Version", "2025-11-25")]),
                &supported
            ),
            Ok(ProtocolVersion::V2025_11_25)
        );
        // A modern version never passes H4: such a request takes the modern path (N1).
        assert_eq!(
            check_protocol_version(
                &headers(&[("MCP-Protocol-Version", "2026-07-28")]),
                &supported
            ),
            Err(HttpRejection::UnsupportedProtocolVersion)
        );
        assert_eq!(
            check_protocol_version(&HeaderMap::new(), &supported),
            Err(HttpRejection::MissingProtocolVersion)
        );
        for bad in ["2025-06-18", " 2025-11-25", "2025-11-25 "] {
            let map = headers(&[("mcp-protocol-version", bad)]);
            assert_eq!(
                check_protocol_version(&map, &supported),
                Err(HttpRejection::UnsupportedProtocolVersion),
                "{bad:?}"
            );
        }
        assert_eq!(
            check_protocol_version(&headers(&[("version", "2025-11-25")]), &supported),
            Err(HttpRejection::MissingProtocolVersion)
        );
    }
}
