//! Caller headers: `guid`, `x-request-id`, `mcp-session-id`, `employee-no`,
//! `virtual-employee-no` (CONTRACT C1–C6).
//!
//! None of them is stored. Employee numbers are opaque: never decoded, parsed or logged, only
//! checked so that they can never splice a downstream header (C4).

use http::{HeaderMap, HeaderValue};

use crate::protocol::{Era, ErrorObject};

/// Header names, lower case.
pub(crate) mod names {
    /// `guid` (CONTRACT C1).
    pub(crate) const GUID: &str = "guid";
    /// `x-request-id` (CONTRACT C2).
    pub(crate) const REQUEST_ID: &str = "x-request-id";
    /// `mcp-session-id` (CONTRACT C3).
    pub(crate) const SESSION_ID: &str = "mcp-session-id";
    /// `employee-no` (CONTRACT C4).
    pub(crate) const EMPLOYEE_NO: &str = "employee-no";
    /// `virtual-employee-no` (CONTRACT C4).
    pub(crate) const VIRTUAL_EMPLOYEE_NO: &str = "virtual-employee-no";
}

/// The correlation values of one request: echoed when the caller sent a well-formed one,
/// generated otherwise (CONTRACT C1, C2, H8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Correlation {
    /// The `guid` (a UUID).
    pub guid: String,
    /// The `x-request-id`.
    pub request_id: String,
}

fn single<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a HeaderValue>, ()> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(());
    }
    Ok(first)
}

fn is_guid(value: &HeaderValue) -> bool {
    value
        .to_str()
        .is_ok_and(|v| uuid::Uuid::try_parse(v).is_ok())
}

/// `1–128` characters of `[A-Za-z0-9._~:/+=@-]` (CONTRACT C2, C3).
fn is_safe_token(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    (1..=128).contains(&bytes.len())
        && bytes.iter().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'_' | b'~' | b':' | b'/' | b'+' | b'=' | b'@' | b'-'
                )
        })
}

/// `1–2048` printable ASCII characters without spaces, `0x21–0x7E` (CONTRACT C4).
fn is_opaque_token(value: &HeaderValue) -> bool {
    is_forwardable_header_value(value.as_bytes())
}

/// CONTRACT C4's check of a value the gateway sends on to a Tool Service (caller headers, and
/// the `header` arguments of X9): `1–2048` bytes of `0x21–0x7E`, so that it can never splice
/// another header.
#[must_use]
pub fn is_forwardable_header_value(bytes: &[u8]) -> bool {
    (1..=2048).contains(&bytes.len()) && bytes.iter().all(|b| (0x21..=0x7E).contains(b))
}

/// Reads or generates the correlation values. A malformed caller value is never echoed: a fresh
/// one stands in, and [`check_caller_headers`] rejects the request later in the check order.
#[must_use]
pub fn correlation(headers: &HeaderMap) -> Correlation {
    let guid = match single(headers, names::GUID) {
        Ok(Some(v)) if is_guid(v) => v.to_str().unwrap_or_default().to_string(),
        _ => uuid::Uuid::new_v4().to_string(),
    };
    let request_id = match single(headers, names::REQUEST_ID) {
        Ok(Some(v)) if is_safe_token(v) => v.to_str().unwrap_or_default().to_string(),
        _ => uuid::Uuid::new_v4().to_string(),
    };
    Correlation { guid, request_id }
}

/// The caller headers forwarded unchanged to the Tool Service (CONTRACT X4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallerHeaders {
    /// `mcp-session-id`, when sent.
    pub session_id: Option<HeaderValue>,
    /// `employee-no`, when sent.
    pub employee_no: Option<HeaderValue>,
    /// `virtual-employee-no`, when sent.
    pub virtual_employee_no: Option<HeaderValue>,
}

/// CONTRACT C4, C5: every present caller header must be well formed and appear once. In the
/// modern era `mcp-session-id` is ignored: neither checked nor forwarded (CONTRACT N2).
///
/// # Errors
/// `-32600` naming the header, never its value:
/// `Invalid Request: header '<name>' must be ...`.
pub fn check_caller_headers(headers: &HeaderMap, era: Era) -> Result<CallerHeaders, ErrorObject> {
    type Check = fn(&HeaderValue) -> bool;
    let session_header = era.result_fields().session_header;
    let rules: [(&str, Check, &str); 5] = [
        (names::GUID, is_guid, "a UUID"),
        (
            names::REQUEST_ID,
            is_safe_token,
            "1-128 characters of [A-Za-z0-9._~:/+=@-]",
        ),
        (
            names::SESSION_ID,
            is_safe_token,
            "1-128 characters of [A-Za-z0-9._~:/+=@-]",
        ),
        (
            names::EMPLOYEE_NO,
            is_opaque_token,
            "1-2048 printable ASCII characters without spaces",
        ),
        (
            names::VIRTUAL_EMPLOYEE_NO,
            is_opaque_token,
            "1-2048 printable ASCII characters without spaces",
        ),
    ];
    let mut values: [Option<HeaderValue>; 5] = Default::default();
    for ((name, check, shape), slot) in rules.iter().zip(values.iter_mut()) {
        if *name == names::SESSION_ID && !session_header {
            continue;
        }
        let value = single(headers, name).map_err(|()| {
            ErrorObject::invalid_request(&format!("header '{name}' must be sent at most once"))
        })?;
        if let Some(value) = value {
            if !check(value) {
                return Err(ErrorObject::invalid_request(&format!(
                    "header '{name}' must be {shape}"
                )));
            }
            *slot = Some(value.clone());
        }
    }
    let [_, _, session_id, employee_no, virtual_employee_no] = values;
    Ok(CallerHeaders {
        session_id,
        employee_no,
        virtual_employee_no,
    })
}
