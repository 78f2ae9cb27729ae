//! The route as an OAuth protected resource (RFC 9728; CONTRACT A10): its canonical URL (the
//! `aud` its tokens carry, CONTRACT A5), the metadata document served at
//! `/.well-known/oauth-protected-resource` + the route path (A10), and that document's URL for
//! `WWW-Authenticate: Bearer resource_metadata="…"` (A6).
//!
//! Every URL comes from `MCP_RESOURCE_URL`, never from `Host` (CONTRACT A5).

use bytes::Bytes;
use serde_json::json;

use crate::config::RoutingMode;
use crate::routing::{RouteTarget, route_target};

/// The well-known path prefix of protected-resource metadata (RFC 9728 §3; CONTRACT A10).
pub const WELL_KNOWN_PREFIX: &str = "/.well-known/oauth-protected-resource";

/// A deployment's protected-resource facts (CONTRACT A5, A10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    /// `MCP_RESOURCE_URL` without a trailing slash: the public URL of the endpoint path.
    pub base_url: String,
    /// `MCP_ENDPOINT_PATH`.
    pub endpoint_path: String,
    /// `MCP_ROUTING`.
    pub routing: RoutingMode,
    /// `MCP_OAUTH_ISSUER`: the one authorization server.
    pub issuer: String,
    /// `MCP_OAUTH_REQUIRED_SCOPES`.
    pub scopes: Vec<String>,
}

impl ProtectedResource {
    /// The canonical URL of `route`: the base URL in fixed routing, base + `/{routeKey}` in
    /// dynamic routing (the base alone when no route is known; CONTRACT A5).
    #[must_use]
    pub fn resource_url(&self, route: Option<&str>) -> String {
        match (self.routing, route) {
            (RoutingMode::Dynamic, Some(route)) => format!("{}/{route}", self.base_url),
            _ => self.base_url.clone(),
        }
    }

    /// The metadata document URL of `route`: the well-known prefix inserted between the
    /// resource URL's origin and path (RFC 9728 §3.1; CONTRACT A10, named in A6's challenge).
    #[must_use]
    pub fn metadata_url(&self, route: Option<&str>) -> String {
        let resource = self.resource_url(route);
        let Some(scheme_end) = resource.find("://") else {
            return resource;
        };
        let path_start = resource[scheme_end + 3..]
            .find('/')
            .map_or(resource.len(), |i| scheme_end + 3 + i);
        let (origin, path) = resource.split_at(path_start);
        format!("{origin}{WELL_KNOWN_PREFIX}{path}")
    }

    /// The route whose metadata `path` asks for: `Some(None)` for the fixed route, `Some(Some
    /// (key))` for a dynamic route, `None` when `path` is no metadata path of this deployment
    /// (CONTRACT A10).
    #[must_use]
    pub fn metadata_route<'p>(&self, path: &'p str) -> Option<Option<&'p str>> {
        let route_path = path.strip_prefix(WELL_KNOWN_PREFIX)?;
        match route_target(&self.endpoint_path, self.routing, route_path)? {
            RouteTarget::Fixed => Some(None),
            RouteTarget::Dynamic(key) => Some(Some(key)),
            RouteTarget::BadKey(_) => None,
        }
    }

    /// The metadata document of `route`: `resource`, `authorization_servers`,
    /// `bearer_methods_supported` and, when scopes are required, `scopes_supported` (CONTRACT
    /// A10).
    #[must_use]
    pub fn document(&self, route: Option<&str>) -> Bytes {
        let mut document = json!({
            "resource": self.resource_url(route),
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes.is_empty() {
            document["scopes_supported"] = json!(self.scopes);
        }
        Bytes::from(document.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(routing: RoutingMode, endpoint: &str, base: &str) -> ProtectedResource {
        ProtectedResource {
            base_url: base.into(),
            endpoint_path: endpoint.into(),
            routing,
            issuer: "https://issuer.test".into(),
            scopes: vec![],
        }
    }

    #[test]
    fn a10_fixed_routes_use_the_base_url_and_insert_the_well_known_prefix() {
        let r = resource(RoutingMode::Fixed, "/mcp/core", "https://api.test/mcp/core");
        assert_eq!(r.resource_url(None), "https://api.test/mcp/core");
        assert_eq!(
            r.metadata_url(None),
            "https://api.test/.well-known/oauth-protected-resource/mcp/core"
        );
        assert_eq!(
            r.metadata_route("/.well-known/oauth-protected-resource/mcp/core"),
            Some(None)
        );
        assert_eq!(
            r.metadata_route("/.well-known/oauth-protected-resource/mcp/core/x"),
            None
        );
        assert_eq!(
            r.metadata_route("/.well-known/oauth-protected-resource"),
            None
        );
    }

    #[test]
    fn a10_the_root_form_names_no_route_in_either_routing() {
        for r in [
            resource(RoutingMode::Fixed, "/mcp/core", "https://api.test/mcp/core"),
            resource(RoutingMode::Dynamic, "/mcp", "https://api.test/mcp"),
        ] {
            for root in [
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/",
            ] {
                assert_eq!(r.metadata_route(root), None, "{root}");
            }
        }
    }

    #[test]
    fn a5_dynamic_routes_append_the_route_key() {
        let r = resource(RoutingMode::Dynamic, "/mcp", "https://api.test:8443/mcp");
        assert_eq!(r.resource_url(Some("hr")), "https://api.test:8443/mcp/hr");
        assert_eq!(
            r.metadata_url(Some("hr")),
            "https://api.test:8443/.well-known/oauth-protected-resource/mcp/hr"
        );
        assert_eq!(
            r.metadata_route("/.well-known/oauth-protected-resource/mcp/hr"),
            Some(Some("hr"))
        );
        assert_eq!(
            r.metadata_route("/.well-known/oauth-protected-resource/mcp"),
            None
        );
        let doc: serde_json::Value = serde_json::from_slice(&r.document(Some("hr"))).unwrap();
        assert_eq!(doc["resource"], "https://api.test:8443/mcp/hr");
        assert_eq!(doc["authorization_servers"][0], "https://issuer.test");
    }
}
