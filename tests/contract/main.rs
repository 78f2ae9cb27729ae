//! Contract tests of the gateway service through its real `http::Request` → `http::Response`
//! pipeline, with a real Tool Service on loopback (CONTRACT P, H, C, L, T, X, E).

mod golden;
mod lambda_deadline;
mod lambda_events;
mod registry;
mod rejections;
mod tool_service;
