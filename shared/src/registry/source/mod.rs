//! Snapshot sources and the cold-start load (CONTRACT R1, R2, R3).
//!
//! - [`load`]: the [`SnapshotSource`] trait, the baked manifests and the bounded load (sans-IO
//!   but for the timer);
//! - [`mod@file`], [`mod@http`], [`mod@s3`]: the I/O implementations, named by [`crate::build`] only.

pub mod file;
pub mod http;
pub mod load;
pub mod s3;

pub use file::FileSource;
pub use http::HttpSource;
pub use load::{
    BakedSource, LoadLimits, RegistryError, SnapshotSource, SourceChain, baked_manifest,
    compile_bytes, load_from,
};
pub use s3::S3Source;
