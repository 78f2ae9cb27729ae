//! The two hashes the gateway's checks are computed with, behind one streaming interface:
//! XXH3-128 for what this build writes, SHA-256 for what earlier builds wrote and are still
//! accepted (a `tools/list` cursor's check, CONTRACT T2; a route's validation digest, Z11).
//! Neither check keeps a secret: whoever holds the input can compute either.

use sha2::{Digest as _, Sha256};
use xxhash_rust::xxh3::Xxh3;

/// A hash fed in pieces: SHA-256 or XXH3-128.
pub(crate) trait StreamHash {
    /// The hash's output (XXH3-128 in its canonical big-endian form).
    type Digest: AsRef<[u8]>;
    fn start() -> Self;
    fn feed(&mut self, bytes: &[u8]);
    fn finish(self) -> Self::Digest;
}

impl StreamHash for Sha256 {
    type Digest = [u8; 32];
    fn start() -> Self {
        <Self as sha2::Digest>::new()
    }
    fn feed(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
    fn finish(self) -> [u8; 32] {
        self.finalize().into()
    }
}

impl StreamHash for Xxh3 {
    type Digest = [u8; 16];
    fn start() -> Self {
        Self::new()
    }
    fn feed(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
    fn finish(self) -> [u8; 16] {
        self.digest128().to_be_bytes()
    }
}

/// `hash` as an [`std::io::Write`], for writers such as `serde_json::to_writer`; writing
/// cannot fail.
pub(crate) struct Feed<'a, H>(pub(crate) &'a mut H);

impl<H: StreamHash> std::io::Write for Feed<'_, H> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.feed(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
