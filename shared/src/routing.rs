//! Which route a request path names (CONTRACT P1, P3, P4, P6): the one routing rule, used by the
//! service, by authentication (A2) and by the OAuth metadata endpoint (A10).
//!
//! Pure functions over the endpoint path, the routing mode and the request path; whether a
//! dynamic route key is registered is the snapshot's to say ([`RouteKeyError::NotRegistered`]).

use crate::config::RoutingMode;
use crate::protocol::ErrorObject;

/// What a request path names, once it is known to lie inside the endpoint path (CONTRACT P6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteTarget<'p> {
    /// Fixed routing and the path is the endpoint path: the deployment's one route, whose key
    /// is the endpoint path's last segment ([`fixed_route_key`], CONTRACT P4).
    Fixed,
    /// Dynamic routing and a well-formed route key, the segment after the endpoint path
    /// (CONTRACT P3).
    Dynamic(&'p str),
    /// The path is inside the endpoint but its route key is wrong.
    BadKey(RouteKeyError),
}

impl<'p> RouteTarget<'p> {
    /// The route key this target names, `None` for a [`RouteTarget::BadKey`].
    #[must_use]
    pub fn key<'a>(self, endpoint: &'a str) -> Option<&'a str>
    where
        'p: 'a,
    {
        match self {
            Self::Fixed => Some(fixed_route_key(endpoint)),
            Self::Dynamic(key) => Some(key),
            Self::BadKey(_) => None,
        }
    }
}

/// A route key the gateway refuses with `-32600` (CONTRACT P3, P4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKeyError {
    /// Fixed routing and the path goes on after the endpoint path (CONTRACT P4).
    NotAllowed,
    /// Dynamic routing and no route key follows the endpoint path (CONTRACT P3).
    Required,
    /// Dynamic routing and the key is not `[A-Za-z0-9._-]{1,64}` (CONTRACT P3).
    Invalid,
    /// Dynamic routing and the loaded snapshot has no such route (CONTRACT P3).
    NotRegistered,
}

impl RouteKeyError {
    /// The exact `error.message` of CONTRACT P3 and P4.
    #[must_use]
    pub fn message(self) -> &'static str {
        match self {
            Self::NotAllowed => "route key is not allowed for fixed endpoint path",
            Self::Required => "route key is required",
            Self::Invalid => "route key is invalid",
            Self::NotRegistered => "route key is not registered",
        }
    }

    /// The `-32600` error object with [`RouteKeyError::message`] as its exact message.
    #[must_use]
    pub fn error_object(self) -> ErrorObject {
        ErrorObject::invalid_request_exact(self.message())
    }
}

/// The route target of `path` under `endpoint` (CONTRACT P3, P4, P6); `None` when the path is
/// outside the endpoint altogether (answered 404 by H3).
#[must_use]
pub fn route_target<'p>(
    endpoint: &str,
    routing: RoutingMode,
    path: &'p str,
) -> Option<RouteTarget<'p>> {
    let rest = endpoint_rest(endpoint, path)?;
    Some(match routing {
        RoutingMode::Fixed if rest.is_empty() => RouteTarget::Fixed,
        RoutingMode::Fixed => RouteTarget::BadKey(RouteKeyError::NotAllowed),
        RoutingMode::Dynamic => {
            let key = rest.strip_prefix('/').unwrap_or(rest);
            if key.is_empty() {
                RouteTarget::BadKey(RouteKeyError::Required)
            } else if is_route_key(key) {
                RouteTarget::Dynamic(key)
            } else {
                RouteTarget::BadKey(RouteKeyError::Invalid)
            }
        }
    })
}

/// The route key of a fixed deployment: the last segment of its endpoint path (CONTRACT M).
#[must_use]
pub fn fixed_route_key(endpoint: &str) -> &str {
    endpoint.rsplit('/').next().unwrap_or_default()
}

/// `[A-Za-z0-9._-]{1,64}` (CONTRACT P3).
#[must_use]
pub fn is_route_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// CONTRACT P6: the part of `path` after `endpoint`, with one trailing slash ignored; `None`
/// when the path is outside the endpoint altogether.
fn endpoint_rest<'a>(endpoint: &str, path: &'a str) -> Option<&'a str> {
    let path = if path.len() > 1 {
        path.strip_suffix('/').unwrap_or(path)
    } else {
        path
    };
    let path = if path == "/" { "" } else { path };
    let rest = path.strip_prefix(endpoint)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p6_one_trailing_slash_is_ignored_and_segments_match_whole() {
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/core"), Some(""));
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/core/"), Some(""));
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/core//"), Some("/"));
        assert_eq!(endpoint_rest("/mcp/core", "/mcp/corex"), None);
        assert_eq!(endpoint_rest("/mcp/core", "/mcp"), None);
        assert_eq!(endpoint_rest("/mcp", "/mcp/hr/"), Some("/hr"));
        assert_eq!(endpoint_rest("", "/"), Some(""));
        assert_eq!(endpoint_rest("", "/x"), Some("/x"));
    }

    #[test]
    fn p3_p4_route_targets_name_the_route_or_the_exact_refusal() {
        use RouteTarget::{BadKey, Dynamic, Fixed};
        let fixed = |path| route_target("/mcp/core", RoutingMode::Fixed, path);
        let dynamic = |path| route_target("/mcp", RoutingMode::Dynamic, path);
        assert_eq!(fixed("/mcp/core/"), Some(Fixed));
        assert_eq!(Fixed.key("/mcp/core"), Some("core"));
        assert_eq!(
            fixed("/mcp/core/hr"),
            Some(BadKey(RouteKeyError::NotAllowed))
        );
        assert_eq!(fixed("/other"), None);
        assert_eq!(dynamic("/mcp/hr"), Some(Dynamic("hr")));
        assert_eq!(dynamic("/mcp"), Some(BadKey(RouteKeyError::Required)));
        assert_eq!(dynamic("/mcp/a b"), Some(BadKey(RouteKeyError::Invalid)));
        assert_eq!(dynamic("/mcp/hr/x"), Some(BadKey(RouteKeyError::Invalid)));
    }
}
