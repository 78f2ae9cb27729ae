//! HTTP policy and caller headers as pure predicates over request parts (CONTRACT H, C, N2; STYLE 5).
//!
//! Each check returns `Result<_, Rejection>`; the rejection declares its HTTP status and body next
//! to its definition in `rejection`.

mod auth_rejection;
mod caller;
mod cors;
mod http_checks;
mod mirrored;
mod rejection;

pub use caller::{
    CallerHeaders, Correlation, check_caller_headers, correlation, is_forwardable_header_value,
};
pub use cors::{
    EXPOSED_HEADERS, MAX_REQUESTED_HEADER_BYTES, MCP_PARAM_PREFIX, PREFLIGHT_MAX_AGE_S, Preflight,
    READ_HEADERS, allowed_origin, check_preflight, is_preflight,
};
pub use http_checks::{
    check_accept, check_body_size, check_content_type, check_host, check_method, check_origin,
    check_protocol_version, header_era, header_version,
};
pub use mirrored::{HeaderParam, MirroredFields, check_mirrored_headers, check_task_name};
pub use rejection::{AuthRejection, HttpRejection, Rejection};
