//! `tools/list` pages (CONTRACT T2): the cursors a route issues, and the load check that every
//! listed tool fits on a page of its own.
//!
//! A cursor is stateless: 22 characters of unpadded base64url over 16 bytes, a format byte
//! (`1`), the index of the page's first tool (`u32`, big-endian) and the first 11 bytes of a
//! SHA-256 over that index and the route's list (its key and every entry's text, in order). Any
//! instance that lists the same tools continues the list from it, with nothing stored; a cursor
//! of another list, edited or made up fails its check.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::ManifestProblem;
use super::snapshot::{Route, Snapshot};

/// The length of every cursor, in characters (unpadded base64url of 16 bytes).
pub(crate) const CURSOR_LEN: usize = 22;
/// A cursor's first byte: the format of the bytes that follow.
const CURSOR_FORMAT: u8 = 1;
/// How many bytes of the check a cursor carries.
const CHECK_LEN: usize = 11;

/// The bytes a `tools/list` response holds besides its tools' entries when a load checks that
/// each entry fits on a page: the JSON-RPC envelope with an `id`, the era's result fields
/// (CONTRACT N4: `resultType`, the route's `serverInfo`, `ttlMs`, `cacheScope`) and
/// `nextCursor`. A route whose `serverInfo` is longer is checked with its length on top.
pub const LIST_ENVELOPE_BYTES: usize = 1024;

/// The route's list digest: SHA-256 over its key and each entry's length and text, in order;
/// computed the first time a cursor is issued or checked, then kept (`OnceLock`).
#[derive(Debug, Default)]
pub(crate) struct ListDigest(OnceLock<[u8; 32]>);

impl Route {
    fn list_digest(&self) -> &[u8; 32] {
        self.list_digest.0.get_or_init(|| {
            let mut hash = Sha256::new();
            let key = self.key.as_deref().unwrap_or("");
            hash.update((key.len() as u64).to_be_bytes());
            hash.update(key.as_bytes());
            for entry in &self.tools_list {
                hash.update((entry.len() as u64).to_be_bytes());
                for piece in entry.pieces() {
                    hash.update(piece);
                }
            }
            hash.finalize().into()
        })
    }

    fn cursor_check(&self, start: u32) -> [u8; CHECK_LEN] {
        let mut hash = Sha256::new();
        hash.update(b"mcp-gateway tools/list cursor\n");
        hash.update(self.list_digest());
        hash.update(start.to_be_bytes());
        let digest = hash.finalize();
        let mut check = [0; CHECK_LEN];
        check.copy_from_slice(&digest[..CHECK_LEN]);
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
        bytes[5..].copy_from_slice(&self.cursor_check(start));
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
        if bytes[0] != CURSOR_FORMAT {
            return None;
        }
        let start = u32::from_be_bytes(bytes[1..5].try_into().ok()?);
        let index = usize::try_from(start).ok()?;
        // Only a page that has tools is ever led to; the check is compared as a whole.
        (index > 0 && index < self.tools_list.len() && bytes[5..] == self.cursor_check(start))
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
