//! The AWS SDK clients' HTTP client: the same reqwest stack (HTTP/1.1, rustls over the one
//! crypto provider of [`crate::tls`]) that calls Tool Services, instead of the SDK's own hyper
//! client with a second TLS set-up and the system certificate store read at every cold start.
//!
//! The SDK hands over a request whose body is in memory (S3 `GetObject`, DynamoDB
//! `UpdateItem`/`PutItem`/`CreateTable`, STS calls of the credential chain). A streaming request
//! body is refused with a connector error rather than buffered. The answer's body is handed
//! over as it arrives, as the SDK's own client does: the SDK reads the body of an ordinary
//! operation whole, and a streaming one's caller reads it chunk by chunk, so that the registry's
//! S3 source holds an object to its size limit as it arrives (CONTRACT R7) rather than after
//! the whole object was read into memory.
//!
//! Timeouts: the SDK's connect timeout becomes the client's; its read timeout bounds each
//! exchange, the body's arrival included. Either breach is reported as a timeout, so the SDK's
//! retry policy (and the callers' 503 and R4 retry paths) see the same error kinds as with the
//! SDK's own client.

use std::sync::Mutex;
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;

/// Connect timeout when the SDK sets none, in ms.
const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 3_100;

/// The SDK HTTP client over reqwest: one reqwest client per connect timeout asked for (an SDK
/// client asks once), each with its own keep-alive pool.
#[derive(Debug, Default)]
struct ReqwestHttpClient {
    connectors: Mutex<Vec<(Timeouts, SharedHttpConnector)>>,
}

/// The SDK's connect and read timeouts a connector was built for.
type Timeouts = (Option<Duration>, Option<Duration>);

/// The instance's one SDK HTTP client, for `aws_config::ConfigLoader::http_client`: every SDK
/// client of the instance (S3 at cold start, DynamoDB per request) shares its pools.
#[must_use]
pub fn sdk_http_client() -> SharedHttpClient {
    static SHARED: std::sync::OnceLock<SharedHttpClient> = std::sync::OnceLock::new();
    SHARED
        .get_or_init(|| SharedHttpClient::new(ReqwestHttpClient::default()))
        .clone()
}

/// The configuration loader of every AWS SDK client of the instance (S3 at cold start, DynamoDB
/// in the token modes, the Lambda tools' signing credentials): the SDK's defaults with the
/// instance's one HTTP client ([`sdk_http_client`]), and, when the environment holds an access
/// key and its secret, those credentials taken directly.
///
/// A Lambda function's environment always holds them (its role's session). The SDK's default
/// chain answers with them first too, but builds its other providers before it asks (among them
/// an STS client for web identity tokens, with the SDK's partition table parsed from JSON): 6-8 %
/// of the CPU of a one-tool start from S3. Without the keys (a developer's profile, a container
/// role, an instance role), the default chain is used unchanged.
#[must_use]
pub fn sdk_config_loader() -> aws_config::ConfigLoader {
    let loader =
        aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(sdk_http_client());
    if environment_keys(|name| std::env::var_os(name)) {
        loader.credentials_provider(
            aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
        )
    } else {
        loader
    }
}

/// Whether `var` holds the access key and secret the SDK's environment provider reads, neither
/// blank (a blank one makes that provider pass to the next of the default chain).
fn environment_keys(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let set =
        |name: &str| var(name).is_some_and(|value| !value.to_string_lossy().trim().is_empty());
    set("AWS_ACCESS_KEY_ID") && (set("AWS_SECRET_ACCESS_KEY") || set("SECRET_ACCESS_KEY"))
}

impl HttpClient for ReqwestHttpClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        let key = (settings.connect_timeout(), settings.read_timeout());
        let mut connectors = self
            .connectors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, connector)) = connectors.iter().find(|(timeouts, _)| *timeouts == key) {
            return connector.clone();
        }
        let connector = SharedHttpConnector::new(ReqwestConnector::new(key.0, key.1));
        connectors.push((key, connector.clone()));
        connector
    }
}

#[derive(Debug, Clone)]
struct ReqwestConnector {
    client: Option<reqwest::Client>,
    read_timeout: Option<Duration>,
}

impl ReqwestConnector {
    fn new(connect_timeout: Option<Duration>, read_timeout: Option<Duration>) -> Self {
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .no_proxy()
            .connect_timeout(
                connect_timeout.unwrap_or(Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS)),
            )
            .tcp_nodelay(true)
            .build()
            .map_err(|error| tracing::error!(%error, "AWS SDK HTTP client not built"))
            .ok();
        Self {
            client,
            read_timeout,
        }
    }
}

fn connector_error(error: &reqwest::Error) -> ConnectorError {
    let source: aws_smithy_runtime_api::box_error::BoxError = error.to_string().into();
    if error.is_timeout() {
        ConnectorError::timeout(source)
    } else if error.is_connect() {
        ConnectorError::io(source)
    } else {
        ConnectorError::other(source, None)
    }
}

async fn exchange(
    client: reqwest::Client,
    read_timeout: Option<Duration>,
    request: HttpRequest,
) -> Result<HttpResponse, ConnectorError> {
    let request = request
        .try_into_http1x()
        .map_err(|e| ConnectorError::user(e.into()))?;
    let (parts, body) = request.into_parts();
    let Some(bytes) = body.bytes().map(bytes::Bytes::copy_from_slice) else {
        return Err(ConnectorError::user(
            "a streaming request body is not supported".into(),
        ));
    };
    let url = parts.uri.to_string();
    let mut builder = client
        .request(parts.method, url)
        .headers(parts.headers)
        .body(bytes);
    if let Some(timeout) = read_timeout {
        builder = builder.timeout(timeout);
    }
    let response = builder.send().await.map_err(|e| connector_error(&e))?;
    let status = response.status();
    let headers = response.headers().clone();
    let mut answer = http::Response::new(SdkBody::from_body_1_x(reqwest::Body::from(response)));
    *answer.status_mut() = status;
    *answer.headers_mut() = headers;
    HttpResponse::try_from(answer).map_err(|e| ConnectorError::other(e.into(), None))
}

impl HttpConnector for ReqwestConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let Some(client) = self.client.clone() else {
            return HttpConnectorFuture::ready(Err(ConnectorError::other(
                "the AWS SDK HTTP client could not be built".into(),
                None,
            )));
        };
        HttpConnectorFuture::new(exchange(client, self.read_timeout, request))
    }
}

#[cfg(test)]
mod tests {
    use super::environment_keys;

    fn environment(vars: &[(&str, &str)]) -> bool {
        environment_keys(|name| {
            vars.iter()
                .find(|(var, _)| *var == name)
                .map(|(_, value)| (*value).into())
        })
    }

    #[test]
    fn environment_keys_need_an_access_key_and_a_secret_neither_blank() {
        assert!(environment(&[
            ("AWS_ACCESS_KEY_ID", "AKIA1"),
            ("AWS_SECRET_ACCESS_KEY", "s")
        ]));
        assert!(environment(&[
            ("AWS_ACCESS_KEY_ID", "AKIA1"),
            ("SECRET_ACCESS_KEY", "s")
        ]));
        assert!(environment(&[
            ("AWS_ACCESS_KEY_ID", "AKIA1"),
            ("AWS_SECRET_ACCESS_KEY", " "),
            ("SECRET_ACCESS_KEY", "s"),
        ]));
        assert!(!environment(&[]));
        assert!(!environment(&[("AWS_ACCESS_KEY_ID", "AKIA1")]));
        assert!(!environment(&[("AWS_SECRET_ACCESS_KEY", "s")]));
        assert!(!environment(&[
            ("AWS_ACCESS_KEY_ID", " "),
            ("AWS_SECRET_ACCESS_KEY", "s")
        ]));
        assert!(!environment(&[
            ("AWS_ACCESS_KEY_ID", "AKIA1"),
            ("AWS_SECRET_ACCESS_KEY", "")
        ]));
    }
}
