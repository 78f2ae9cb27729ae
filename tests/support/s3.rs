//! A real S3-protocol server (s3s-fs, in process) on loopback, for the registry's S3 source
//! (CONTRACT R2): it checks every request's SigV4 signature against one key pair.

/// The access key the server accepts.
pub const ACCESS_KEY: &str = "AKIAGATEWAYTEST";
/// The secret of [`ACCESS_KEY`].
pub const SECRET_KEY: &str = "gateway-test-secret";

/// A real S3-protocol server (s3s-fs) on a free loopback port over a temporary folder.
#[derive(Debug)]
pub struct S3Server {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    root: std::path::PathBuf,
}

impl S3Server {
    /// Starts the server on the current tokio runtime; it serves until the runtime ends.
    pub async fn start() -> Self {
        let root = std::env::temp_dir().join(format!(
            "gateway-s3-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::create_dir_all(&root).unwrap();
        let fs = s3s_fs::FileSystem::new(&root).unwrap();
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = builder.build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                    .await;
                });
            }
        });
        Self { endpoint, root }
    }

    /// Stores `body` as the object `key` of `bucket` (the bucket is made when missing).
    pub fn put(&self, bucket: &str, key: &str, body: &str) {
        let path = self.root.join(bucket).join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
}
