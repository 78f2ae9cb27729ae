//! A body that arrives in chunks, joined into one buffer: a manifest from S3 or a manifest
//! endpoint (CONTRACT R2, R7).
//!
//! A body that arrives as one chunk is kept as it is, with no copy. A body in several chunks is
//! copied once, into a buffer of the length its sender announced (`Content-Length`), so that no
//! part of it is moved again while the buffer grows and each page of the buffer is touched once:
//! an 11 MB manifest joined into a buffer that doubles from empty touched about twice its pages
//! and moved most of its bytes again. The chunks are dropped as they are joined, so the
//! reader's own buffers are reused.

use bytes::{Bytes, BytesMut};

/// Most bytes given to the joined buffer before the body arrives, in bytes (64 MiB): an
/// announced length is the sender's word, and a larger body still joins, the buffer growing
/// with it.
const MAX_PRESIZE_BYTES: usize = 64 << 20;

/// The chunks of one body so far.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    /// The capacity to give the joined buffer, in bytes: the announced length, at most the
    /// limit the reader gave and [`MAX_PRESIZE_BYTES`].
    presize: usize,
    /// The body while it is one chunk.
    first: Option<Bytes>,
    /// The body once a second chunk arrived.
    joined: BytesMut,
}

impl Chunks {
    /// A body of which `announced` bytes were announced; the joined buffer is given that
    /// capacity, but no more than `presize_limit` bytes (the reader's bound) nor
    /// [`MAX_PRESIZE_BYTES`] (an announced length is the sender's word, and a body may still
    /// end shorter or go on longer).
    pub(crate) fn new(announced: Option<u64>, presize_limit: usize) -> Self {
        let announced = announced.map_or(0, |len| usize::try_from(len).unwrap_or(usize::MAX));
        Self {
            presize: announced.min(presize_limit).min(MAX_PRESIZE_BYTES),
            first: None,
            joined: BytesMut::new(),
        }
    }

    /// The body's length so far, in bytes.
    pub(crate) fn len(&self) -> usize {
        self.first.as_ref().map_or(0, Bytes::len) + self.joined.len()
    }

    /// Adds the next chunk.
    pub(crate) fn push(&mut self, chunk: Bytes) {
        match self.first.take() {
            None if self.joined.is_empty() => self.first = Some(chunk),
            first => {
                if let Some(first) = first {
                    self.joined
                        .reserve(self.presize.max(first.len() + chunk.len()));
                    self.joined.extend_from_slice(&first);
                }
                self.joined.extend_from_slice(&chunk);
            }
        }
    }

    /// The whole body.
    pub(crate) fn finish(self) -> Bytes {
        self.first.unwrap_or_else(|| self.joined.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(parts: &[&'static [u8]], announced: Option<u64>, limit: usize) -> Bytes {
        let mut chunks = Chunks::new(announced, limit);
        let mut len = 0;
        for part in parts {
            chunks.push(Bytes::from_static(part));
            len += part.len();
            assert_eq!(chunks.len(), len);
        }
        chunks.finish()
    }

    #[test]
    fn r7_one_chunk_is_kept_without_a_copy() {
        let chunk = Bytes::from_static(b"{\"a\":1}");
        let mut chunks = Chunks::new(Some(7), 1 << 20);
        chunks.push(chunk.clone());
        let whole = chunks.finish();
        assert_eq!(whole, chunk);
        assert_eq!(whole.as_ptr(), chunk.as_ptr());
    }

    #[test]
    fn r7_chunks_are_joined_in_order_whatever_length_was_announced() {
        // Announced: none, exact, shorter and longer than the body; a limit under the length.
        for (announced, limit) in [(None, 64), (Some(6), 64), (Some(3), 64), (Some(60), 64)] {
            assert_eq!(
                joined(&[b"ab", b"", b"cd", b"ef"], announced, limit),
                Bytes::from_static(b"abcdef")
            );
        }
        assert_eq!(
            joined(&[b"ab", b"cd"], Some(u64::MAX), 2),
            Bytes::from_static(b"abcd")
        );
        assert_eq!(joined(&[b"", b"x"], None, 64), Bytes::from_static(b"x"));
        assert!(joined(&[], Some(5), 64).is_empty());
    }

    #[test]
    fn r7_the_buffer_is_presized_to_the_announced_length_within_the_limit() {
        let mut chunks = Chunks::new(Some(1000), 4096);
        chunks.push(Bytes::from_static(b"ab"));
        chunks.push(Bytes::from_static(b"cd"));
        assert!(chunks.joined.capacity() >= 1000);
        let mut chunks = Chunks::new(Some(u64::MAX), 4096);
        chunks.push(Bytes::from_static(b"ab"));
        chunks.push(Bytes::from_static(b"cd"));
        assert!((4096..1 << 20).contains(&chunks.joined.capacity()));
        // A reader whose own bound is no bound: an announced length of 2^64-1 bytes reserves
        // 64 MiB (address space; untouched pages cost nothing), not an allocation that fails.
        let mut chunks = Chunks::new(Some(u64::MAX), usize::MAX);
        chunks.push(Bytes::from_static(b"ab"));
        chunks.push(Bytes::from_static(b"cd"));
        assert!((MAX_PRESIZE_BYTES..MAX_PRESIZE_BYTES * 2).contains(&chunks.joined.capacity()));
        assert_eq!(chunks.finish(), Bytes::from_static(b"abcd"));
    }
}
