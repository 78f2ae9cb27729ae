//! `tools/list` pages (CONTRACT T2): the cursors a route issues, and the load check that every
//! listed tool fits on a page of its own.
//!
//! A cursor is stateless: 22 characters of unpadded base64url over 16 bytes, a format byte
//! (`2`), the index of the page's first tool (`u32`, big-endian) and the first 11 bytes of an
//! XXH3-128 over that index and the route's list (its key and every entry's text, in order).
//! Any instance that lists the same tools continues the list from it, with nothing stored; a
//! cursor of another list, edited or made up fails its check. The check names a list; it keeps
//! no secret (anyone holding the list can compute it), so a fast non-cryptographic hash serves
//! as well as a cryptographic one and costs a cold instance's first paged list about a
//! twentieth of SHA-256's time. Cursors of format `1` (the same fields with SHA-256, which
//! earlier builds issued) are still accepted, so that a client paging across a deployment of
//! the same tools goes on.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::Sha256;
use xxhash_rust::xxh3::Xxh3;

use super::ManifestProblem;
use super::snapshot::{Route, Snapshot};
use crate::hashing::StreamHash;

/// The length of every cursor, in characters (unpadded base64url of 16 bytes).
pub(crate) const CURSOR_LEN: usize = 22;
/// A cursor's first byte: the format of the bytes that follow. This build issues format `2`
/// (XXH3-128).
const CURSOR_FORMAT: u8 = 2;
/// The format of the cursors earlier builds issued (SHA-256), still accepted.
const SHA256_CURSOR_FORMAT: u8 = 1;
/// How many bytes of the check a cursor carries.
const CHECK_LEN: usize = 11;
/// What every cursor check hashes first.
const CURSOR_DOMAIN: &[u8] = b"mcp-gateway tools/list cursor\n";

/// The bytes a `tools/list` response holds besides its tools' entries and its route's
/// `serverInfo` texts when a load checks that each entry fits on a page: the JSON-RPC envelope
/// with the longest `id` E2 lets through (1,024 bytes as written, 1,026 with its quotes), the
/// era's other result fields (CONTRACT N4: `resultType`, `ttlMs`, `cacheScope`) and
/// `nextCursor`, about 1,300 bytes at most; the route's `serverInfo` texts are counted on top.
pub const LIST_ENVELOPE_BYTES: usize = 2048;

/// The route's list digests: over its key and each entry's length and text, in order, XXH3-128
/// for the cursors this build issues and SHA-256 for format-1 cursors; each computed the first
/// time a cursor of its format is issued or checked, then kept (`OnceLock`).
#[derive(Debug, Default)]
pub(crate) struct ListDigest {
    xxh3: OnceLock<[u8; 16]>,
    sha256: OnceLock<[u8; 32]>,
}

impl Route {
    /// Feeds the route's key and each entry's length and text, in order, to `hash`.
    fn hash_list(&self, hash: &mut impl StreamHash) {
        let key = self.key.as_deref().unwrap_or("");
        hash.feed(&(key.len() as u64).to_be_bytes());
        hash.feed(key.as_bytes());
        for entry in &self.tools_list {
            hash.feed(&(entry.len() as u64).to_be_bytes());
            for piece in entry.pieces() {
                hash.feed(piece);
            }
        }
    }

    /// The check a cursor of `format` carries for the page at `start`; `None` for a format no
    /// build issued.
    fn cursor_check(&self, format: u8, start: u32) -> Option<[u8; CHECK_LEN]> {
        match format {
            CURSOR_FORMAT => Some(self.check_with::<Xxh3>(&self.list_digest.xxh3, start)),
            SHA256_CURSOR_FORMAT => {
                Some(self.check_with::<Sha256>(&self.list_digest.sha256, start))
            }
            _ => None,
        }
    }

    /// The first [`CHECK_LEN`] bytes of `H` over the domain, the list's digest (computed into
    /// `digest` the first time) and `start`.
    fn check_with<H: StreamHash>(
        &self,
        digest: &OnceLock<H::Digest>,
        start: u32,
    ) -> [u8; CHECK_LEN] {
        let digest = digest.get_or_init(|| {
            let mut hash = H::start();
            self.hash_list(&mut hash);
            hash.finish()
        });
        let mut hash = H::start();
        hash.feed(CURSOR_DOMAIN);
        hash.feed(digest.as_ref());
        hash.feed(&start.to_be_bytes());
        let mut check = [0; CHECK_LEN];
        check.copy_from_slice(&hash.finish().as_ref()[..CHECK_LEN]);
        check
    }

    /// The cursor of the page that starts at the list's `start`th tool ([`CURSOR_LEN`]
    /// characters of base64url; CONTRACT T2). `None` past `u32::MAX` tools.
    #[must_use]
    pub(crate) fn list_cursor(&self, start: usize) -> Option<String> {
        let start = u32::try_from(start).ok()?;
        let mut bytes = [0; 16];
        bytes[0] = CURSOR_FORMAT;
        bytes[1..5].copy_from_slice(&start.to_be_bytes());
        bytes[5..].copy_from_slice(&self.cursor_check(CURSOR_FORMAT, start)?);
        Some(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The index of the first tool of the page `cursor` leads to, when this route's list issued
    /// it: `None` for anything else (another list, edited, not base64url, another length, an
    /// index at or past the end; CONTRACT T2).
    #[must_use]
    pub(crate) fn list_cursor_start(&self, cursor: &str) -> Option<usize> {
        if cursor.len() != CURSOR_LEN {
            return None;
        }
        let bytes: [u8; 16] = URL_SAFE_NO_PAD.decode(cursor).ok()?.try_into().ok()?;
        let start = u32::from_be_bytes(bytes[1..5].try_into().ok()?);
        let index = usize::try_from(start).ok()?;
        // Only a page that has tools is ever led to; the check is compared as a whole.
        (index > 0
            && index < self.tools_list.len()
            && bytes[5..] == self.cursor_check(bytes[0], start)?)
        .then_some(index)
    }
}

/// CONTRACT T2: every listed tool whose entry does not fit on a `tools/list` page of
/// `max_response_bytes` (less [`LIST_ENVELOPE_BYTES`] and the route's `serverInfo` texts as
/// JSON strings, quotes and escapes counted) is a
/// load problem, the route and tool named: a list that could never be paged past it would
/// otherwise leave the tool out.
#[must_use]
pub fn oversized_list_entries(
    snapshot: &Snapshot,
    max_response_bytes: usize,
) -> Vec<ManifestProblem> {
    let mut problems = Vec::new();
    let mut routes: Vec<&Route> = snapshot.routes().collect();
    routes.sort_by(|a, b| a.key.cmp(&b.key));
    for route in routes {
        // The serverInfo texts as a modern page writes them: JSON strings, escapes included.
        let server = &route.server;
        let escaped = |text: &str| serde_json::to_string(text).map_or(text.len(), |s| s.len());
        let envelope = LIST_ENVELOPE_BYTES
            + escaped(&server.name)
            + escaped(&server.title)
            + escaped(&server.version);
        let room = max_response_bytes.saturating_sub(envelope);
        for entry in route.tools_list.iter().filter(|entry| entry.len() > room) {
            let route_name = route
                .key
                .as_deref()
                .map_or_else(String::new, |key| format!("route '{key}': "));
            problems.push(ManifestProblem {
                path: String::new(),
                message: format!(
                    "{route_name}tool '{}': its tools/list entry is {} bytes, more than a page \
                     holds ({room} bytes: MCP_MAX_RESPONSE_BYTES {max_response_bytes} less \
                     {envelope} for the response around it)",
                    entry.name().unwrap_or_default(),
                    entry.len()
                ),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde_json::json;
    use sha2::{Digest, Sha256};

    use crate::registry::compile_manifest;

    /// A format-1 cursor as earlier builds wrote it: SHA-256 over the route's key and each
    /// entry's length and text, then over the domain, that digest and the page's start.
    fn sha256_cursor(key: &str, entries: &[Vec<u8>], start: u32) -> String {
        let mut list = Sha256::new();
        list.update((key.len() as u64).to_be_bytes());
        list.update(key.as_bytes());
        for entry in entries {
            list.update((entry.len() as u64).to_be_bytes());
            list.update(entry);
        }
        let mut check = Sha256::new();
        check.update(b"mcp-gateway tools/list cursor\n");
        check.update(list.finalize());
        check.update(start.to_be_bytes());
        let mut bytes = vec![1];
        bytes.extend(start.to_be_bytes());
        bytes.extend(&check.finalize()[..11]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// CONTRACT T2: cursors this build issues are format 2 and lead back to their page; the
    /// format-1 (SHA-256) cursors earlier builds issued for the same list still do; a cursor of
    /// an unknown format, or one whose check does not match, leads nowhere.
    #[test]
    fn t2_cursors_of_both_formats_lead_to_their_page_and_others_nowhere() {
        let tools: Vec<_> = (0..5)
            .map(|i| {
                json!({
                    "name": format!("tool_{i}"),
                    "description": format!("Tool number {i}"),
                    "inputSchema": {"type": "object"},
                    "_meta": {"endpoint": format!("https://tools.example/{i}")}
                })
            })
            .collect();
        let manifest =
            json!({"manifestVersion": 1, "routes": [{"routeKey": "paged", "tools": tools}]});
        let snapshot = compile_manifest(&manifest).expect("the manifest compiles");
        let route = snapshot.route("paged").expect("the route is there");
        let entries: Vec<Vec<u8>> = route
            .tools_list
            .iter()
            .map(|entry| entry.pieces().concat())
            .collect();
        for start in 1..5 {
            let issued = route.list_cursor(start).expect("a cursor");
            assert_eq!(issued.len(), super::CURSOR_LEN);
            let bytes = URL_SAFE_NO_PAD.decode(&issued).unwrap();
            assert_eq!(bytes[0], 2, "{issued}");
            assert_eq!(route.list_cursor_start(&issued), Some(start));
            let earlier = sha256_cursor("paged", &entries, u32::try_from(start).unwrap());
            assert_eq!(route.list_cursor_start(&earlier), Some(start), "{earlier}");
            // The same index and check under another format byte, and a check one bit off.
            for format in [0, 1, 3, 255] {
                let mut other = bytes.clone();
                other[0] = format;
                assert_eq!(
                    route.list_cursor_start(&URL_SAFE_NO_PAD.encode(other)),
                    None
                );
            }
            let mut flipped = URL_SAFE_NO_PAD.decode(&earlier).unwrap();
            flipped[15] ^= 1;
            assert_eq!(
                route.list_cursor_start(&URL_SAFE_NO_PAD.encode(flipped)),
                None
            );
        }
        // Another route key over the same entries is another list.
        let foreign = sha256_cursor("other", &entries, 2);
        assert_eq!(route.list_cursor_start(&foreign), None);
    }
}
