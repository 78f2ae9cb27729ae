//! Sealed task ids (CONTRACT K3): what the gateway needs to continue a task, encrypted and
//! authenticated with AES-256-GCM under a key of `MCP_TASK_KEY`, so that no task table is kept
//! and any instance with the key continues any task.
//!
//! An id is `t1.` followed by unpadded base64url of: the key id (4 bytes), a random nonce
//! (12 bytes), then the sealed claims (compact JSON) and the 16-byte tag. The key id and the
//! format prefix are authenticated as associated data.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};

/// The prefix of every task id of this format.
const PREFIX: &str = "t1.";
/// The least key material per key, in bytes (CONTRACT K3).
pub const MIN_KEY_BYTES: usize = 32;
/// The most keys `MCP_TASK_KEY` may hold.
const MAX_KEYS: usize = 8;
/// The longest task id opened, in bytes: anything longer was not made here (a 2,048-byte
/// location, a 128-byte tool name and a long OAuth subject seal to well under it).
pub const MAX_TASK_ID_BYTES: usize = 8192;
/// Bytes of the key id.
const KEY_ID_LEN: usize = 4;

/// What a task id carries (CONTRACT K3): never shown to anyone, never logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskClaims {
    /// The route key (`""` for a single-route deployment).
    #[serde(rename = "r")]
    pub route: String,
    /// The tool's name.
    #[serde(rename = "t")]
    pub tool: String,
    /// The status location: an absolute URL on the tool endpoint's origin.
    #[serde(rename = "l")]
    pub location: String,
    /// Who created the task: `<auth>:<subject>` (a delegation id, an OAuth subject), `""` with
    /// `MCP_AUTH=none`.
    #[serde(rename = "c")]
    pub caller: String,
    /// When the task was created, in ms since the Unix epoch.
    #[serde(rename = "at")]
    pub created_ms: u64,
    /// How long the task can be read after `created_ms`, in ms.
    #[serde(rename = "ttl")]
    pub ttl_ms: u64,
}

impl TaskClaims {
    /// Whether the task can no longer be read at `now_ms` (ms since the Unix epoch).
    #[must_use]
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.created_ms.saturating_add(self.ttl_ms)
    }
}

/// Why `MCP_TASK_KEY`'s value is not a key set (CONTRACT K3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskKeyError {
    /// No key in the value.
    #[error("holds no key: give at least {MIN_KEY_BYTES} random bytes in base64")]
    Empty,
    /// A key that is not base64 or is too short; names its place only, never its text.
    #[error("key {place} is not at least {MIN_KEY_BYTES} random bytes in base64")]
    Weak {
        /// Its place in the list, from 1.
        place: usize,
    },
    /// More keys than one rotation needs.
    #[error("holds more than {MAX_KEYS} keys")]
    TooMany,
}

/// One key: its id and the AEAD key derived from its bytes.
struct Key {
    id: [u8; KEY_ID_LEN],
    aead: LessSafeKey,
}

/// The keys of `MCP_TASK_KEY` (CONTRACT K3): the first seals new task ids, every one opens the
/// ids sealed under it, so that a key can be rotated without breaking running tasks.
pub struct TaskKeys {
    keys: Vec<Key>,
    random: SystemRandom,
}

impl std::fmt::Debug for TaskKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaskKeys({} keys)", self.keys.len())
    }
}

/// `len` bytes of HKDF-SHA256 output for `info`.
struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

fn derive(material: &[u8]) -> Key {
    let salt = hkdf::Salt::new(hkdf::HKDF_SHA256, b"mcp-gateway task id");
    let prk = salt.extract(material);
    let mut aead = [0u8; 32];
    let mut id = [0u8; KEY_ID_LEN];
    // Both lengths are far below HKDF-SHA256's limit of 8,160 bytes: no error is possible.
    if let Ok(okm) = prk.expand(&[b"aes-256-gcm"], Len(32)) {
        let _ = okm.fill(&mut aead);
    }
    if let Ok(okm) = prk.expand(&[b"key id"], Len(KEY_ID_LEN)) {
        let _ = okm.fill(&mut id);
    }
    #[expect(clippy::expect_used, reason = "a 32-byte key is AES-256's length")]
    let unbound = UnboundKey::new(&AES_256_GCM, &aead).expect("32-byte AES-256 key");
    Key {
        id,
        aead: LessSafeKey::new(unbound),
    }
}

fn decode_key(text: &str) -> Option<Vec<u8>> {
    [&STANDARD, &URL_SAFE]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .or_else(|| {
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(text)
                .ok()
        })
        .or_else(|| URL_SAFE_NO_PAD.decode(text).ok())
}

impl TaskKeys {
    /// The keys of `text`: base64 keys (standard or URL-safe alphabet, padded or not), each of
    /// at least [`MIN_KEY_BYTES`] bytes, separated by commas or white space; the first seals.
    ///
    /// # Errors
    /// [`TaskKeyError`] for no key, a short or malformed one, or more than eight.
    pub fn parse(text: &str) -> Result<Self, TaskKeyError> {
        let parts: Vec<&str> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return Err(TaskKeyError::Empty);
        }
        if parts.len() > MAX_KEYS {
            return Err(TaskKeyError::TooMany);
        }
        let mut keys = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            match decode_key(part) {
                Some(bytes) if bytes.len() >= MIN_KEY_BYTES => keys.push(derive(&bytes)),
                _ => return Err(TaskKeyError::Weak { place: i + 1 }),
            }
        }
        Ok(Self {
            keys,
            random: SystemRandom::new(),
        })
    }

    /// One new random key, for a process that was given none (`mcp-local`, CONTRACT K3): its
    /// task ids open in this process only.
    ///
    /// # Panics
    /// When the system's random source fails.
    #[must_use]
    pub fn random() -> Self {
        let random = SystemRandom::new();
        let mut bytes = [0u8; MIN_KEY_BYTES];
        #[expect(clippy::expect_used, reason = "no key can be made without randomness")]
        random.fill(&mut bytes).expect("system random source");
        Self {
            keys: vec![derive(&bytes)],
            random,
        }
    }

    /// The task id of `claims`, sealed under the first key.
    ///
    /// # Errors
    /// A text naming what failed when no nonce could be drawn.
    pub fn seal(&self, claims: &TaskClaims) -> Result<String, &'static str> {
        let key = self.keys.first().ok_or("no task key")?;
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| "the system random source failed")?;
        let mut sealed = serde_json::to_vec(claims).map_err(|_| "claims not serializable")?;
        key.aead
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(associated(key.id)),
                &mut sealed,
            )
            .map_err(|_| "sealing failed")?;
        let mut raw = Vec::with_capacity(KEY_ID_LEN + NONCE_LEN + sealed.len());
        raw.extend_from_slice(&key.id);
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(raw)))
    }

    /// The claims of a task id sealed under one of the keys; `None` for anything else (made
    /// up, changed in any bit, sealed under an unknown key, too long). Expiry and the caller
    /// are the reader's to check ([`TaskClaims::expired`]).
    #[must_use]
    pub fn open(&self, task_id: &str) -> Option<TaskClaims> {
        if task_id.len() > MAX_TASK_ID_BYTES {
            return None;
        }
        let raw = URL_SAFE_NO_PAD.decode(task_id.strip_prefix(PREFIX)?).ok()?;
        if raw.len() < KEY_ID_LEN + NONCE_LEN + AES_256_GCM.tag_len() {
            return None;
        }
        let (id, rest) = raw.split_at(KEY_ID_LEN);
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let key = self.keys.iter().find(|k| k.id == id)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let plain = key
            .aead
            .open_in_place(nonce, Aad::from(associated(key.id)), &mut sealed)
            .ok()?;
        serde_json::from_slice(plain).ok()
    }
}

/// The associated data of a key's ids: the format and the key id.
fn associated(id: [u8; KEY_ID_LEN]) -> [u8; 3 + KEY_ID_LEN] {
    let mut aad = [0u8; 3 + KEY_ID_LEN];
    aad[..3].copy_from_slice(PREFIX.as_bytes());
    aad[3..].copy_from_slice(&id);
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> TaskClaims {
        TaskClaims {
            route: "hr".into(),
            tool: "export_report".into(),
            location: "http://127.0.0.1:9/jobs/1".into(),
            caller: "token:d-1".into(),
            created_ms: 1_000,
            ttl_ms: 60_000,
        }
    }

    fn key(byte: u8) -> String {
        STANDARD.encode([byte; 32])
    }

    #[test]
    fn k3_sealed_ids_open_under_their_key_only() {
        let keys = TaskKeys::parse(&key(1)).unwrap();
        let id = keys.seal(&claims()).unwrap();
        assert!(id.starts_with("t1."));
        assert!(!id.contains("export_report") && !id.contains("127.0.0.1"));
        assert_eq!(keys.open(&id), Some(claims()));
        // Two seals of the same claims differ (a fresh nonce each).
        assert_ne!(keys.seal(&claims()).unwrap(), id);
        let other = TaskKeys::parse(&key(2)).unwrap();
        assert_eq!(other.open(&id), None);
    }

    #[test]
    fn k3_every_changed_character_is_refused() {
        let keys = TaskKeys::parse(&key(1)).unwrap();
        let id = keys.seal(&claims()).unwrap();
        for i in 3..id.len() {
            let mut bytes = id.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            if changed != id {
                assert_eq!(keys.open(&changed), None, "changed at {i}");
            }
        }
        assert_eq!(keys.open(&id[..id.len() - 1]), None);
        assert_eq!(keys.open("t1."), None);
        assert_eq!(keys.open("made-up"), None);
        assert_eq!(keys.open(&format!("t1.{}", "A".repeat(9000))), None);
    }

    #[test]
    fn k3_rotation_opens_old_ids_and_seals_with_the_first_key() {
        let old = TaskKeys::parse(&key(1)).unwrap();
        let old_id = old.seal(&claims()).unwrap();
        let rotated = TaskKeys::parse(&format!("{}, {}", key(2), key(1))).unwrap();
        assert_eq!(rotated.open(&old_id), Some(claims()));
        let new_id = rotated.seal(&claims()).unwrap();
        assert_eq!(old.open(&new_id), None);
        assert!(TaskKeys::parse(&key(2)).unwrap().open(&new_id).is_some());
    }

    #[test]
    fn k3_keys_must_be_long_base64() {
        assert_eq!(TaskKeys::parse("").unwrap_err(), TaskKeyError::Empty);
        assert_eq!(
            TaskKeys::parse(&STANDARD.encode([1u8; 31])).unwrap_err(),
            TaskKeyError::Weak { place: 1 }
        );
        assert_eq!(
            TaskKeys::parse(&format!("{} not-base64!", key(1))).unwrap_err(),
            TaskKeyError::Weak { place: 2 }
        );
        assert!(TaskKeys::parse(&URL_SAFE_NO_PAD.encode([7u8; 48])).is_ok());
        let many = vec![key(1); 9].join(",");
        assert_eq!(TaskKeys::parse(&many).unwrap_err(), TaskKeyError::TooMany);
        assert!(!format!("{:?}", TaskKeys::random()).contains('='));
    }

    #[test]
    fn k3_expiry_is_created_plus_ttl() {
        let c = claims();
        assert!(!c.expired(60_999));
        assert!(c.expired(61_000));
    }
}
