//! Test support for inbound authentication: a real DynamoDB-protocol server (moto's server from
//! PyPI) on loopback, a gateway with the real DynamoDB store, and an OAuth issuer whose RSA and
//! EC keys are generated here and whose key set is served on loopback.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_gateway::auth::{
    AuthMode, Authenticator, DynamoStore, EpochClock, HttpKeySet, NewDelegation, OAuthConfig,
    OAuthVerifier, PersonalToken, ProtectedResource, RateLimit,
};
use mcp_gateway::invoke::HttpInvoker;
use mcp_gateway::registry::compile_manifest;
use mcp_gateway::{Config, Gateway};
use serde_json::{Value, json};
use wiremock::MockServer;

use crate::{Harness, manifest};

/// A moto server for the whole test binary (`support/moto_serial.py`: one request at a time,
/// as DynamoDB serializes writes to one item): started on first use, stopped when the test
/// process exits (its shell wrapper waits on our stdin and kills the server at EOF).
struct Moto {
    url: String,
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

/// The Python that has moto (and with it botocore) installed: `$MOTO_PYTHON`, else the
/// repository's `.venv` (panics naming `tests/run.sh` when there is none).
#[must_use]
pub fn moto_python() -> PathBuf {
    if let Some(path) = std::env::var_os("MOTO_PYTHON") {
        return PathBuf::from(path);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    assert!(
        venv.exists(),
        "{} not found: run tests/run.sh (it installs moto[server] into .venv) or set MOTO_PYTHON",
        venv.display()
    );
    venv
}

/// A free loopback port (another process may take it before it is used).
#[must_use]
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn moto() -> &'static Moto {
    static MOTO: OnceLock<Moto> = OnceLock::new();
    MOTO.get_or_init(|| {
        let port = free_port();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#""$0" "$1" 127.0.0.1 "$2" >/dev/null 2>&1 & pid=$!; read _; kill $pid"#)
            .arg(moto_python())
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("support/moto_serial.py"))
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let started = Instant::now();
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(
                started.elapsed() < Duration::from_mins(1),
                "moto_server did not listen on {addr} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Moto {
            url: format!("http://{addr}"),
            _stdin: Mutex::new(stdin),
            _child: Mutex::new(child),
        }
    })
}

/// The shared moto server's URL, for every AWS service it speaks (Secrets Manager and SSM as
/// well as DynamoDB).
#[must_use]
pub fn moto_url() -> String {
    moto().url.clone()
}

/// The DynamoDB endpoint of the shared moto server.
#[must_use]
pub fn dynamodb_url() -> String {
    moto().url.clone()
}

/// A DynamoDB client for `endpoint` with static test credentials.
#[must_use]
pub fn dynamodb_client(endpoint: &str, timeout: Duration) -> aws_sdk_dynamodb::Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "tests"))
        .timeout_config(
            aws_sdk_dynamodb::config::timeout::TimeoutConfig::builder()
                .operation_timeout(timeout)
                .build(),
        )
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::standard().with_max_attempts(1))
        .http_client(mcp_gateway::aws_http::sdk_http_client())
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// A fresh table on the shared moto server.
pub async fn fresh_store() -> DynamoStore {
    let table = format!("delegations-{}", uuid::Uuid::new_v4().simple());
    let store = DynamoStore::new(
        dynamodb_client(&dynamodb_url(), Duration::from_secs(10)),
        table,
    );
    assert!(store.create_table().await.expect("table created"));
    store
}

/// A clock the test moves by hand (epoch seconds).
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// Starts at `now_s`.
    #[must_use]
    pub fn at(now_s: u64) -> Self {
        Self(Arc::new(AtomicU64::new(now_s)))
    }

    /// Now.
    #[must_use]
    pub fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    /// Moves the clock to `now_s`.
    pub fn set(&self, now_s: u64) {
        self.0.store(now_s, Ordering::SeqCst);
    }

    /// The clock for the authenticator.
    #[must_use]
    pub fn epoch_clock(&self) -> EpochClock {
        let inner = self.0.clone();
        Arc::new(move || inner.load(Ordering::SeqCst))
    }
}

/// The time the auth tests start at: the start of a 60 s window, so that windows are easy to
/// reason about.
pub const T0: u64 = 1_800_000_000;

/// A gateway with inbound authentication over the real store, and its parts.
#[derive(Debug)]
pub struct AuthHarness {
    /// The gateway and its Tool Service.
    pub harness: Harness,
    /// The store the gateway uses (the same table).
    pub store: DynamoStore,
    /// The gateway's clock.
    pub clock: ManualClock,
}

/// Builds a [`Harness`] whose gateway has `auth`.
pub async fn harness_with_auth(config: Config, auth: Authenticator) -> Harness {
    harness_with_auth_over(config, auth, |_| {}).await
}

/// [`harness_with_auth`] over [`manifest`] as `edit` changes it.
pub async fn harness_with_auth_over(
    config: Config,
    auth: Authenticator,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Harness {
    let tool_service = MockServer::start().await;
    let mut document = manifest(&tool_service.uri());
    edit(&mut document);
    let snapshot = compile_manifest(&document).expect("test manifest compiles");
    let gateway =
        Gateway::new(config, Ok(snapshot), HttpInvoker::new().expect("client")).with_auth(auth);
    Harness {
        gateway: Arc::new(gateway),
        tool_service,
    }
}

impl AuthHarness {
    /// A token-mode deployment (`config` gives routing) with `limit`, on a fresh table.
    pub async fn token(config: Config, limit: Option<RateLimit>) -> Self {
        let store = fresh_store().await;
        Self::token_over(config, limit, store.clone(), store).await
    }

    /// A token-mode deployment whose gateway uses `gateway_store` (e.g. one that is down),
    /// while the test writes through `store`.
    pub async fn token_over(
        config: Config,
        limit: Option<RateLimit>,
        store: DynamoStore,
        gateway_store: DynamoStore,
    ) -> Self {
        let clock = ManualClock::at(T0);
        let auth = Authenticator::new(
            AuthMode::Token,
            limit,
            Some(Box::new(gateway_store)),
            None,
            None,
            clock.epoch_clock(),
        );
        Self {
            harness: harness_with_auth(config, auth).await,
            store,
            clock,
        }
    }

    /// Issues a token for `routes` with `idle_ttl_s` and `lifetime_s` from now.
    pub async fn issue(
        &self,
        routes: &[&str],
        idle_ttl_s: u64,
        lifetime_s: u64,
    ) -> (PersonalToken, String) {
        let token = PersonalToken::generate().expect("random");
        let id = self
            .grant(token.store_key(), routes, idle_ttl_s, lifetime_s)
            .await;
        (token, id)
    }

    /// Writes a delegation under `key`; returns its id.
    pub async fn grant(
        &self,
        key: String,
        routes: &[&str],
        idle_ttl_s: u64,
        lifetime_s: u64,
    ) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        self.store
            .put_delegation(&NewDelegation {
                key,
                delegation_id: id.clone(),
                routes: routes.iter().map(|r| (*r).to_string()).collect(),
                idle_ttl_s,
                expires_at: self.clock.now() + lifetime_s,
                created_at: self.clock.now(),
                description: None,
                groups: Vec::new(),
            })
            .await
            .expect("delegation written");
        id
    }

    /// A number attribute of the item under `key`.
    pub async fn number(&self, key: &str, attribute: &str) -> Option<u64> {
        self.store
            .item(key)
            .await
            .expect("item read")
            .and_then(|item| item.get(attribute).cloned())
            .and_then(|v| v.as_n().ok().and_then(|n| n.parse().ok()))
    }
}

/// A signing key of the test issuer.
#[derive(Debug)]
pub enum SigningKey {
    /// RSA 2048, RS256.
    Rsa(RsaKeyPair),
    /// P-256, ES256.
    Ec(EcdsaKeyPair),
}

/// A key with its `kid`.
#[derive(Debug)]
pub struct IssuerKey {
    /// The key id.
    pub kid: String,
    /// The private key.
    pub key: SigningKey,
}

impl IssuerKey {
    /// A new RSA 2048 key.
    #[must_use]
    pub fn rsa(kid: &str) -> Self {
        Self {
            kid: kid.into(),
            key: SigningKey::Rsa(
                RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("RSA key"),
            ),
        }
    }

    /// A new P-256 key.
    #[must_use]
    pub fn ec(kid: &str) -> Self {
        Self {
            kid: kid.into(),
            key: SigningKey::Ec(
                EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_FIXED_SIGNING)
                    .expect("EC key"),
            ),
        }
    }

    /// The public JWK.
    #[must_use]
    pub fn jwk(&self) -> Value {
        match &self.key {
            SigningKey::Rsa(pair) => {
                let public = pair.public_key();
                json!({
                    "kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
                    "n": URL_SAFE_NO_PAD.encode(public.modulus().big_endian_without_leading_zero()),
                    "e": URL_SAFE_NO_PAD.encode(public.exponent().big_endian_without_leading_zero()),
                })
            }
            SigningKey::Ec(pair) => {
                let point = pair.public_key().as_ref();
                json!({
                    "kty": "EC", "kid": self.kid, "use": "sig", "alg": "ES256", "crv": "P-256",
                    "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                    "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
                })
            }
        }
    }

    /// A compact JWS of `claims` signed with this key, `kid` in the header.
    #[must_use]
    pub fn sign(&self, claims: &Value) -> String {
        let alg = match self.key {
            SigningKey::Rsa(_) => "RS256",
            SigningKey::Ec(_) => "ES256",
        };
        let header = json!({"alg": alg, "typ": "at+jwt", "kid": self.kid});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let signature = match &self.key {
            SigningKey::Rsa(pair) => {
                let mut out = vec![0; pair.public_modulus_len()];
                pair.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .expect("RSA signature");
                out
            }
            SigningKey::Ec(pair) => pair
                .sign(&rng, input.as_bytes())
                .expect("EC signature")
                .as_ref()
                .to_vec(),
        };
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

/// Epoch seconds by the system clock (JWT `exp`/`nbf` are checked against it).
#[must_use]
pub fn system_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// The test issuer: its URL, its key-set server and the OAuth settings that trust it.
#[derive(Debug)]
pub struct Issuer {
    /// The key-set server on loopback.
    pub jwks: MockServer,
    /// `iss` of its tokens.
    pub issuer: String,
}

impl Issuer {
    /// Starts the key-set server serving `keys`.
    pub async fn start(keys: &[&IssuerKey]) -> Self {
        let jwks = MockServer::start().await;
        let issuer = Self {
            issuer: "https://issuer.test/realms/agents".into(),
            jwks,
        };
        issuer.serve(keys).await;
        issuer
    }

    /// Serves `keys` from now on (key rotation).
    pub async fn serve(&self, keys: &[&IssuerKey]) {
        self.jwks.reset().await;
        let set = json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()});
        wiremock::Mock::given(wiremock::matchers::path("/jwks"))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(set))
            .mount(&self.jwks)
            .await;
    }

    /// Makes the key-set server answer 503 (an outage).
    pub async fn go_down(&self) {
        self.jwks.reset().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(503))
            .mount(&self.jwks)
            .await;
    }

    /// OAuth settings trusting this issuer with `required_scopes`.
    #[must_use]
    pub fn config(&self, required_scopes: &[&str]) -> OAuthConfig {
        OAuthConfig {
            groups_claim: "groups".into(),
            issuer: self.issuer.clone(),
            jwks_url: format!("{}/jwks", self.jwks.uri()),
            algorithms: vec!["RS256".into(), "ES256".into()],
            required_scopes: required_scopes.iter().map(|s| (*s).to_string()).collect(),
            leeway_s: 30,
        }
    }

    /// Claims of a valid token for `audience`, subject `sub`, client `agent-cli`.
    #[must_use]
    pub fn claims(&self, audience: &str, sub: &str) -> Value {
        let now = system_now();
        json!({
            "iss": self.issuer, "sub": sub, "aud": audience, "client_id": "agent-cli",
            "iat": now, "nbf": now - 5, "exp": now + 300, "scope": "mcp:tools openid",
        })
    }
}

/// The public URL of the fixed test deployment.
pub const RESOURCE_URL: &str = "https://mcp.example.test/mcp/core";

/// An OAuth (or token+oauth) fixed deployment at `/mcp/core` trusting `issuer`.
pub async fn oauth_harness(
    mode: AuthMode,
    issuer: &Issuer,
    required_scopes: &[&str],
) -> AuthHarness {
    oauth_harness_with(Config::fixed_defaults(), mode, issuer, required_scopes).await
}

/// [`oauth_harness`] over `config` (a fixed deployment at `/mcp/core`, e.g. with allowed
/// origins).
pub async fn oauth_harness_with(
    config: Config,
    mode: AuthMode,
    issuer: &Issuer,
    required_scopes: &[&str],
) -> AuthHarness {
    oauth_harness_over(config, mode, issuer, required_scopes, |_| {}).await
}

/// [`oauth_harness_with`] over [`manifest`] as `edit` changes it.
pub async fn oauth_harness_over(
    config: Config,
    mode: AuthMode,
    issuer: &Issuer,
    required_scopes: &[&str],
    edit: impl FnOnce(&mut Value),
) -> AuthHarness {
    let store = fresh_store().await;
    let clock = ManualClock::at(system_now());
    let oauth = issuer.config(required_scopes);
    let resource = ProtectedResource {
        base_url: RESOURCE_URL.into(),
        endpoint_path: "/mcp/core".into(),
        routing: mcp_gateway::RoutingMode::Fixed,
        issuer: oauth.issuer.clone(),
        scopes: oauth.required_scopes.clone(),
    };
    let keys = HttpKeySet::new(oauth.jwks_url.clone(), 2_000).expect("client");
    let auth = Authenticator::new(
        mode,
        Some(RateLimit {
            requests: 100,
            window_s: 60,
        }),
        Some(Box::new(store.clone())),
        Some(OAuthVerifier::new(oauth, Box::new(keys))),
        Some(resource),
        clock.epoch_clock(),
    );
    AuthHarness {
        harness: harness_with_auth_over(config, auth, edit).await,
        store,
        clock,
    }
}
