//! REST-shaped tools (CONTRACT M2, X9): where each argument of a call goes (path, query, header or
//! body) and the endpoint's URL template, parsed once at load. The request itself is built per
//! call by the dispatch (`tools/call`).

use http::HeaderName;

/// Where one argument of a REST-shaped call goes (CONTRACT M2: `_meta.parameters` values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentLocation {
    /// `"path"`: one percent-encoded segment standing for the endpoint's `{name}` placeholder.
    Path,
    /// `"query"`: `name=value` pairs, OpenAPI's `form` style with `explode: true`.
    Query,
    /// `"header"`: a request header of this name (lower case), OpenAPI's `simple` style.
    Header(HeaderName),
    /// `"body"`: a member of the JSON body object (also every argument `parameters` omits).
    Body,
    /// `"wholeBody"`: the argument's value is the whole JSON body.
    WholeBody,
}

impl ArgumentLocation {
    /// The manifest spellings, in the order messages list them.
    pub const NAMES: [&'static str; 5] = ["path", "query", "header", "body", "wholeBody"];
}

/// One piece of an endpoint's path template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePiece {
    /// Text kept as the manifest wrote it.
    Literal(String),
    /// A `{name}` placeholder: the path argument `name`.
    Placeholder(String),
}

/// An endpoint URL template (CONTRACT M2): the scheme and authority, the path split into segments
/// of literal text and placeholders, and the rest (a fixed query), all from the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointTemplate {
    /// `scheme://authority`, never from an argument (CONTRACT X4).
    pub origin: String,
    /// The path's segments after the leading `/`, each a list of pieces.
    pub segments: Vec<Vec<TemplatePiece>>,
    /// The endpoint's own query and fragment, with their `?` / `#`, or empty.
    pub suffix: String,
}

/// How a REST-shaped tool is called (CONTRACT M2, X9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestCall {
    /// The endpoint as a template.
    pub template: EndpointTemplate,
    /// `_meta.parameters`: argument name and location, in manifest order.
    pub arguments: Vec<(String, ArgumentLocation)>,
    /// Whether the `inputSchema` declares body members (properties listed as `"body"` or not
    /// listed): such a tool always sends a body, `{}` at least (CONTRACT X9).
    pub declares_members: bool,
}

impl RestCall {
    /// The location of argument `name`: the listed one, else [`ArgumentLocation::Body`].
    #[must_use]
    pub fn location_of(&self, name: &str) -> &ArgumentLocation {
        self.arguments
            .iter()
            .find(|(argument, _)| argument == name)
            .map_or(&ArgumentLocation::Body, |(_, location)| location)
    }
}
