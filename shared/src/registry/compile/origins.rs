//! The http(s) endpoints of one load parsed with each origin read once (CONTRACT R5, M2): a
//! route's tools mostly share a handful of `scheme://host:port` prefixes, and reading the
//! scheme and host (the IPv4 number or the domain's IDNA processing) is most of what
//! `url::Url::parse` costs, about 1.3 µs an endpoint.

use std::collections::HashMap;

/// The origins seen by one load, each parsed once (`None`: it does not parse).
#[derive(Debug, Default)]
pub(crate) struct Origins(HashMap<String, Option<url::Url>, foldhash::fast::RandomState>);

impl Origins {
    /// `text` as `url::Url::parse` parses it, or `None` when that fails.
    ///
    /// An endpoint whose path holds only letters, digits, `-`, `.`, `_`, `~` and `/`, with no
    /// query or fragment, is made from its origin's parse with the path set, and kept only
    /// when its serialization is `text` byte for byte: a URL is its serialization, and parsing
    /// a URL's serialization gives that URL, so the two are the same. Any other endpoint, and
    /// one whose serialization differs (a `..` segment resolved, a host written otherwise), is
    /// parsed whole.
    pub(crate) fn parse(&mut self, text: &str) -> Option<url::Url> {
        self.through_origin(text)
            .or_else(|| url::Url::parse(text).ok())
    }

    fn through_origin(&mut self, text: &str) -> Option<url::Url> {
        let (scheme, rest) = text.split_once("://")?;
        let path_start = scheme.len() + 3 + rest.find('/')?;
        let (origin, path) = text.split_at(path_start);
        let plain =
            |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/');
        if !path.bytes().all(plain) {
            return None;
        }
        let base = if let Some(base) = self.0.get(origin) {
            base.clone()?
        } else {
            let base = url::Url::parse(origin).ok();
            self.0.insert(origin.to_owned(), base.clone());
            base?
        };
        let mut url = base;
        url.set_path(path);
        (url.as_str() == text).then_some(url)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Origins;

    /// CONTRACT R5: an endpoint read through its origin is the URL a whole parse gives, or the
    /// same failure, whatever was read before it.
    #[test]
    fn r5_endpoints_parse_as_a_whole_parse_does() {
        let mut origins = Origins::default();
        for text in [
            "http://127.0.0.1:9/tools/a",
            "http://127.0.0.1:9/tools/b",
            "http://127.0.0.1:9/",
            "http://127.0.0.1:9",
            "HTTP://127.0.0.1:9/tools/a",
            "http://127.0.0.1:09/x",
            "http://0x7f.1/x",
            "http://EXAMPLE.com/x",
            "http://example.com:80/x",
            "https://example.com:443/x",
            "https://bücher.example/x",
            "https://xn--bcher-kva.example/x",
            "http://example.com/a/../b",
            "http://example.com/a/./b",
            "http://example.com//b",
            "http://example.com/a%20b",
            "http://example.com/a b",
            "http://example.com/a?q=1",
            "http://example.com/a#f",
            "http://user:pw@example.com/a",
            "http://[::1]:8080/a",
            "http://[::1]:8080/b",
            "http://exa mple.com/a",
            "http://:80/a",
            "http:///a",
            "mailto://x/a",
            "file:///etc/passwd",
            "not a url",
            "http://example.com\t/a",
            "http://example.com/\na",
        ] {
            let whole = url::Url::parse(text).ok();
            assert_eq!(origins.parse(text), whole, "{text:?}");
            // Read again, now with its origin known.
            assert_eq!(origins.parse(text), whole, "{text:?}, again");
        }
    }

    proptest! {
        /// CONTRACT R5: over endpoints made of pieces that parsing treats specially (case,
        /// dot segments, escapes, ports, IPv4 forms, white space), in any order.
        #[test]
        fn r5_any_endpoint_parses_as_a_whole_parse_does(
            texts in proptest::collection::vec(
                (
                    prop::sample::select(vec!["http", "https", "HTTP", "ftp", "ws"]),
                    prop::sample::select(vec![
                        "127.0.0.1", "127.1", "0x7f.0.0.1", "Example.COM", "example.com",
                        "bücher.example", "[::1]", "a..b", "", "user@host", "h:8080", "h:80",
                        "h:443", "h:0", "h:65536", "h:",
                    ]),
                    prop::collection::vec(
                        prop::sample::select(vec![
                            "a", "A", ".", "..", "%2e", "%2E", "", "~x", "-_", "b c", "é", "%41",
                            "?q", "#f", "\\", "\t", "x.y",
                        ]),
                        0..5,
                    ),
                ),
                1..12,
            )
        ) {
            let mut origins = Origins::default();
            for (scheme, host, segments) in texts {
                let text = format!("{scheme}://{host}/{}", segments.join("/"));
                prop_assert_eq!(origins.parse(&text), url::Url::parse(&text).ok(), "{:?}", text);
            }
        }

        /// CONTRACT R5: over any text of URL characters after a scheme, two endpoints under one
        /// origin.
        #[test]
        fn r5_any_url_text_parses_as_a_whole_parse_does(
            scheme in "[a-zA-Z][a-zA-Z+.-]{0,5}",
            authority in "[a-zA-Z0-9.:@%\\[\\]_~-]{0,20}",
            paths in proptest::collection::vec("[a-zA-Z0-9./%?#@:;=&+!$'()*,_~ \t\\\\\\-]{0,20}", 1..4),
        ) {
            let mut origins = Origins::default();
            for path in paths {
                let text = format!("{scheme}://{authority}/{path}");
                prop_assert_eq!(origins.parse(&text), url::Url::parse(&text).ok(), "{:?}", text);
            }
        }
    }
}
