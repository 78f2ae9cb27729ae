//! The benchmark's Tool Service: answers every HTTP/1.1 request, whatever its path and method,
//! with `200` and the same small JSON document, after reading the request body. Keep-alive, no
//! logging: as fast as a Tool Service can be, so that it is the limit the contenders are compared
//! to.
//!
//! Usage: `tool-service ADDR` (e.g. `127.0.0.1:3001`).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// The fixed answer: one search hit, 104 bytes.
const ANSWER: &[u8] = br#"[{"id":"DOC-1002","title":"Remote work policy","department":"HR","updatedAt":"2026-05-20","score":0.92}]"#;

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    // Read the whole body as a real service would before answering.
    let _ = request.into_body().collect().await;
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(ANSWER)))
        .unwrap_or_default())
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3001".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("tool-service on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(answer))
                .await;
        });
    }
}
