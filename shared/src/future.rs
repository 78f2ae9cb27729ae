//! [`BoxFuture`], the one boxed-future type of the I/O traits (snapshot sources, delegation
//! store, key set): a leaf every layer may name.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future. The traits that return it are called at load time or once per
/// request at most, so boxing costs nothing that matters.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
