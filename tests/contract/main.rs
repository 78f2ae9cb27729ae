//! Contract tests of the gateway service (CONTRACT P, H, C, L, T, X, E).
fn main() {}
