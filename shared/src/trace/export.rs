//! OTLP/HTTP export of the gateway's spans (CONTRACT O5): the standard `OTEL_*` variables, the
//! `opentelemetry-otlp` protobuf exporter over the gateway's reqwest client, and the
//! [`OtlpSink`] that queues spans, sends them (on Lambda before the invocation answers, on the
//! local server in the background) and stops trying for a while after a failed export.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SpanData, SpanExporter as _};
use tokio::sync::Notify;

use super::{SpanSink, Tracing};

/// Most spans waiting to be sent; more are dropped (CONTRACT O5).
pub const MAX_QUEUED_SPANS: usize = 2048;
/// How long an instance drops spans after a failed export instead of trying again
/// (CONTRACT O5).
pub const PAUSE_AFTER_FAILURE: Duration = Duration::from_secs(30);
/// How long the local server's sender gathers spans after the first one before it sends them
/// (CONTRACT O5): 200 ms.
pub const BACKGROUND_BATCH_DELAY: Duration = Duration::from_millis(200);
/// Most bytes of a collector's answer read (CONTRACT O5); a longer one fails the export.
pub const MAX_COLLECTOR_ANSWER_BYTES: usize = 64 * 1024;
/// The longest wait for one export when `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT` is unset, in ms
/// (CONTRACT O5): the OTLP default of 10 s is too long to hold a Lambda answer for.
pub const DEFAULT_EXPORT_TIMEOUT_MS: u64 = 1000;

/// Whether the gateway's own process sends spans as a Lambda function does (each invocation's
/// before it answers) or as a server (in the background).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMode {
    /// Lambda: the adapter awaits [`Tracing::flush`] after each event; no thread of its own.
    PerInvocation,
    /// The local server: a thread of the sink's sends spans as they come.
    Background,
}

/// The variables of CONTRACT O5, read through `var`.
pub struct OtelEnv<'a> {
    /// Looks a variable up (`std::env::var` in the functions).
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

impl std::fmt::Debug for OtelEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OtelEnv")
    }
}

impl OtelEnv<'_> {
    fn get(&self, name: &str) -> Option<String> {
        (self.var)(name).filter(|v| !v.trim().is_empty())
    }

    /// Whether an OTLP endpoint is set (CONTRACT O5).
    #[must_use]
    pub fn exports(&self) -> bool {
        self.endpoint().is_some()
    }

    /// The traces URL (CONTRACT O5): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` after it.
    #[must_use]
    pub fn endpoint(&self) -> Option<String> {
        if let Some(url) = self.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            return Some(url.trim().to_string());
        }
        let base = self.get("OTEL_EXPORTER_OTLP_ENDPOINT")?;
        Some(format!("{}/v1/traces", base.trim().trim_end_matches('/')))
    }

    /// The export request's headers: `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else
    /// `OTEL_EXPORTER_OTLP_HEADERS`, as `key=value` pairs separated by commas with
    /// percent-encoded values (OpenTelemetry's exporter specification), the values still
    /// encoded (the exporter decodes them); a pair without `=` is left out.
    #[must_use]
    pub fn headers(&self) -> HashMap<String, String> {
        let text = self
            .get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or_else(|| self.get("OTEL_EXPORTER_OTLP_HEADERS"))
            .unwrap_or_default();
        text.split(',')
            .filter_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                Some((key.trim().to_string(), value.trim().to_string()))
            })
            .filter(|(key, _)| !key.is_empty())
            .collect()
    }

    /// `OTEL_TRACES_SAMPLER` with `OTEL_TRACES_SAMPLER_ARG`; `parentbased_always_on` when unset
    /// or unknown, a ratio of 1 when the argument is unreadable or outside 0–1 (CONTRACT O5).
    #[must_use]
    pub fn sampler(&self) -> Sampler {
        let ratio = || {
            self.get("OTEL_TRACES_SAMPLER_ARG")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|r| (0.0..=1.0).contains(r))
                .unwrap_or(1.0)
        };
        let parent_based = |root| Sampler::ParentBased(Box::new(root));
        match self.get("OTEL_TRACES_SAMPLER").as_deref().map(str::trim) {
            Some("always_on") => Sampler::AlwaysOn,
            Some("always_off") => Sampler::AlwaysOff,
            Some("traceidratio") => Sampler::TraceIdRatioBased(ratio()),
            Some("parentbased_always_off") => parent_based(Sampler::AlwaysOff),
            Some("parentbased_traceidratio") => parent_based(Sampler::TraceIdRatioBased(ratio())),
            Some("parentbased_always_on") | None => parent_based(Sampler::AlwaysOn),
            Some(other) => {
                tracing::warn!(
                    sampler = crate::text::prefix_within(other, 64),
                    "unknown OTEL_TRACES_SAMPLER; using parentbased_always_on"
                );
                parent_based(Sampler::AlwaysOn)
            }
        }
    }

    /// The export timeout: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` (ms), else [`DEFAULT_EXPORT_TIMEOUT_MS`].
    #[must_use]
    pub fn timeout(&self) -> Duration {
        let ms = [
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        ]
        .iter()
        .find_map(|name| self.get(name)?.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_EXPORT_TIMEOUT_MS);
        Duration::from_millis(ms)
    }

    /// The resource (CONTRACT O5): the SDK's `telemetry.sdk.*` attributes, then
    /// `OTEL_RESOURCE_ATTRIBUTES` (`key=value` pairs separated by commas, values
    /// percent-encoded), `service.name` from `OTEL_SERVICE_NAME`, else from those attributes,
    /// else `mcp-gateway`, and on Lambda `cloud.provider`, `cloud.region` and `faas.name`.
    #[must_use]
    pub fn resource(&self) -> Resource {
        let mut attributes: Vec<KeyValue> = self
            .get("OTEL_RESOURCE_ATTRIBUTES")
            .unwrap_or_default()
            .split(',')
            .filter_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                let value = percent_encoding::percent_decode_str(value.trim())
                    .decode_utf8()
                    .ok()?;
                let key = key.trim();
                (!key.is_empty()).then(|| KeyValue::new(key.to_string(), value.into_owned()))
            })
            .collect();
        let service = self.get("OTEL_SERVICE_NAME").or_else(|| {
            attributes
                .iter()
                .find(|kv| kv.key.as_str() == "service.name")
                .map(|kv| kv.value.to_string())
        });
        attributes.retain(|kv| kv.key.as_str() != "service.name");
        let mut builder = Resource::builder_empty()
            .with_detector(Box::new(
                opentelemetry_sdk::resource::TelemetryResourceDetector,
            ))
            .with_attributes(attributes)
            .with_service_name(service.unwrap_or_else(|| "mcp-gateway".into()));
        if let Some(function) = self.get("AWS_LAMBDA_FUNCTION_NAME") {
            let mut attributes = vec![
                KeyValue::new("cloud.provider", "aws"),
                KeyValue::new("faas.name", function),
            ];
            if let Some(region) = self.get("AWS_REGION") {
                attributes.push(KeyValue::new("cloud.region", region));
            }
            builder = builder.with_attributes(attributes);
        }
        builder.build()
    }
}

/// The OTLP exporter's HTTP client: the gateway's own reqwest (rustls) client.
#[derive(Debug, Clone)]
struct ReqwestClient(reqwest::Client);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for ReqwestClient {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let request = reqwest::Request::try_from(request)?;
        let mut response = self.0.execute(request).await?;
        let status = response.status();
        // A collector answers an (almost) empty ExportTraceServiceResponse; reading stops at
        // MAX_COLLECTOR_ANSWER_BYTES, so that no answer can fill the function's memory.
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_COLLECTOR_ANSWER_BYTES {
                return Err(format!(
                    "the collector's answer exceeds {MAX_COLLECTOR_ANSWER_BYTES} bytes"
                )
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(http::Response::builder()
            .status(status)
            .body(Bytes::from(body))?)
    }
}

/// Queues spans and sends them with OTLP/HTTP (CONTRACT O5).
#[derive(Debug)]
pub struct OtlpSink {
    exporter: opentelemetry_otlp::SpanExporter,
    queue: Mutex<Vec<SpanData>>,
    /// One export at a time, so that spans leave in order and a slow collector is waited on
    /// once.
    sending: tokio::sync::Mutex<()>,
    /// Until when spans are dropped after a failed export.
    paused_until: Mutex<Option<Instant>>,
    timeout: Duration,
    /// Wakes the background sender ([`FlushMode::Background`]).
    wake: Option<Arc<Notify>>,
}

impl OtlpSink {
    /// Sends the queued spans; drops them when the exporter is paused, fails or takes longer
    /// than the timeout, and then pauses it for [`PAUSE_AFTER_FAILURE`].
    async fn send(&self) {
        let _one_at_a_time = self.sending.lock().await;
        let batch = std::mem::take(&mut *lock(&self.queue));
        if batch.is_empty() {
            return;
        }
        let now = Instant::now();
        if lock(&self.paused_until).is_some_and(|until| now < until) {
            return;
        }
        let count = batch.len();
        let failure = match tokio::time::timeout(self.timeout, self.exporter.export(batch)).await {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no answer within {} ms", self.timeout.as_millis()),
        };
        *lock(&self.paused_until) = Some(Instant::now() + PAUSE_AFTER_FAILURE);
        tracing::warn!(
            spans = count,
            error = crate::text::prefix_within(&failure, 256),
            pause_s = PAUSE_AFTER_FAILURE.as_secs(),
            "span export failed; spans are dropped until the pause ends"
        );
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SpanSink for OtlpSink {
    fn submit(&self, spans: Vec<SpanData>) {
        {
            let mut queue = lock(&self.queue);
            let room = MAX_QUEUED_SPANS.saturating_sub(queue.len());
            queue.extend(spans.into_iter().take(room));
        }
        if let Some(wake) = &self.wake {
            wake.notify_one();
        }
    }

    fn flush(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(self.send())
    }
}

/// Tracing from the process's `OTEL_*` variables (CONTRACT O5): the sampler always, and an
/// [`OtlpSink`] when an OTLP endpoint is set. In [`FlushMode::Background`] the sink's sender
/// runs on a thread of its own.
///
/// # Errors
/// The exporter's or HTTP client's build error (an unreadable endpoint URL, say): the caller
/// logs it and serves without export.
pub fn from_env(env: &OtelEnv<'_>, mode: FlushMode) -> Result<Tracing, String> {
    let sampler = env.sampler();
    let Some(endpoint) = env.endpoint() else {
        return Ok(Tracing::new(sampler, None));
    };
    let timeout = env.timeout();
    // The exporter's client may be the process's first (an OTLP endpoint over https).
    crate::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(timeout)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| e.to_string())?;
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(ReqwestClient(client))
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .with_headers(env.headers())
        .with_timeout(timeout)
        .build()
        .map_err(|e| e.to_string())?;
    exporter.set_resource(&env.resource());
    let wake = (mode == FlushMode::Background).then(|| Arc::new(Notify::new()));
    let sink = Arc::new(OtlpSink {
        exporter,
        queue: Mutex::new(Vec::new()),
        sending: tokio::sync::Mutex::new(()),
        paused_until: Mutex::new(None),
        timeout,
        wake: wake.clone(),
    });
    if let Some(wake) = wake {
        let sender = Arc::clone(&sink);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        std::thread::Builder::new()
            .name("span-export".into())
            .spawn(move || {
                runtime.block_on(async move {
                    loop {
                        wake.notified().await;
                        // One export for the spans of a moment, not one per request.
                        tokio::time::sleep(BACKGROUND_BATCH_DELAY).await;
                        sender.send().await;
                    }
                });
            })
            .map_err(|e| e.to_string())?;
    }
    Ok(Tracing::new(sampler, Some(sink)))
}

/// [`from_env`] over the process environment, in the mode of the process: per invocation under
/// the Lambda runtime (`AWS_LAMBDA_RUNTIME_API` set), else in the background. A build error is
/// logged and the gateway serves without export.
#[must_use]
pub fn for_process() -> Tracing {
    let var = |name: &str| std::env::var(name).ok();
    let env = OtelEnv { var: &var };
    let mode = if env.get("AWS_LAMBDA_RUNTIME_API").is_some() {
        FlushMode::PerInvocation
    } else {
        FlushMode::Background
    };
    from_env(&env, mode).unwrap_or_else(|error| {
        tracing::error!(
            error = crate::text::prefix_within(&error, 256),
            "span export is not set up; spans are not exported"
        );
        Tracing::new(env.sampler(), None)
    })
}
