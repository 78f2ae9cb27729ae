//! `oauth2ClientCredentials` tools (CONTRACT M5, X12) against a real OAuth 2.0 authorization
//! server: oidc-provider (`tests/oauth/server.mjs`, installed by `tests/run.sh`) on loopback,
//! one per test, whose log counts the token requests it answered and whose introspection
//! endpoint says what each token the Tool Service received is. The clients' JSON secrets are
//! `env:` references read through the harness's environment lookup. `audience` is left out:
//! oidc-provider takes RFC 8707's `resource` for that and ignores an `audience` parameter.
//! What a real server cannot be made to do (hang, answer without a token) is in
//! `outbound_oauth2`.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use mcp_gateway::Config;
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, Request, ResponseTemplate};

use super::outbound_credentials::{harness, received, result_of, tool_with};

/// The clients of `tests/oauth/server.mjs` as `env:` secrets.
const CLIENTS: [(&str, &str); 5] = [
    (
        "OAUTH_BASIC",
        r#"{"client_id": "basic client", "client_secret": "s3:cr&t+/="}"#,
    ),
    (
        "OAUTH_POST",
        r#"{"client_id": "post-client", "client_secret": "post-secret"}"#,
    ),
    (
        "OAUTH_SHORT",
        r#"{"client_id": "short-lived", "client_secret": "short-secret"}"#,
    ),
    (
        "OAUTH_BRIEF",
        r#"{"client_id": "brief-lived", "client_secret": "brief-secret"}"#,
    ),
    (
        "OAUTH_WRONG",
        r#"{"client_id": "post-client", "client_secret": "not-the-secret"}"#,
    ),
];

/// oidc-provider on an ephemeral loopback port, killed on drop.
struct AuthServer {
    issuer: String,
    log: Arc<Mutex<Vec<Value>>>,
    child: Child,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AuthServer {
    fn start() -> Self {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("oauth");
        assert!(
            dir.join("node_modules/oidc-provider").is_dir(),
            "{} has no node_modules/oidc-provider: run tests/run.sh (it installs tests/oauth with npm ci)",
            dir.display()
        );
        let mut child = Command::new("node")
            .arg("server.mjs")
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs tests/oauth/server.mjs");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (first, issuer) = mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = reader.next() {
                let _ = first.send(line);
            }
            for line in reader.map_while(Result::ok) {
                let entry = serde_json::from_str(&line).expect("a JSON log line");
                lines.lock().unwrap().push(entry);
            }
        });
        let (errors_to, errors) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = errors_to.send(text);
        });
        let Ok(issuer) = issuer.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            let text = errors
                .recv_timeout(Duration::from_secs(5))
                .unwrap_or_default();
            panic!("tests/oauth/server.mjs printed no issuer: {text}");
        };
        assert!(issuer.starts_with("http://127.0.0.1:"), "issuer {issuer}");
        Self { issuer, log, child }
    }

    fn token_url(&self) -> String {
        format!("{}/token", self.issuer)
    }

    /// The token requests the server answered, once it has logged `expected` of them (or 5 s
    /// passed) and a moment more for any further one.
    async fn token_requests(&self, expected: usize) -> Vec<Value> {
        let started = Instant::now();
        while self.log.lock().unwrap().len() < expected && started.elapsed().as_secs() < 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
        self.log.lock().unwrap().clone()
    }

    /// RFC 7662 introspection of `token`, the caller authenticated as `post-client`.
    async fn introspect(&self, token: &str) -> Value {
        mcp_gateway::tls::install_crypto_provider();
        let answer = reqwest::Client::new()
            .post(format!("{}/token/introspection", self.issuer))
            .form(&[
                ("token", token),
                ("client_id", "post-client"),
                ("client_secret", "post-secret"),
            ])
            .send()
            .await
            .expect("the introspection endpoint answers");
        assert_eq!(answer.status(), 200);
        serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap()
    }
}

/// A log entry of a token request the server answered.
fn logged(client: Option<&str>, auth: &str, status: u16) -> Value {
    json!({"event": "token", "grant": "client_credentials", "client": client, "auth": auth,
        "status": status})
}

fn oauth_tool(name: &str, server: &AuthServer, secret: &str, extra: &Value) -> Value {
    let mut auth = json!({"type": "oauth2ClientCredentials", "tokenUrl": server.token_url(),
        "secret": format!("env:{secret}")});
    for (k, v) in extra.as_object().unwrap() {
        auth[k] = v.clone();
    }
    tool_with(name, &format!("/{name}"), auth, &json!({}))
}

/// The gateway's configuration: its secrets are [`CLIENTS`], no AWS secret store is asked.
fn config() -> Config {
    let mut config = Config::fixed_defaults();
    config.secrets_manager_endpoint = Some("http://127.0.0.1:9".into());
    config.ssm_endpoint = Some("http://127.0.0.1:9".into());
    config
}

/// A gateway with `tools` whose Tool Service answers `ok`.
async fn gateway(tools: Vec<Value>) -> gateway_tests::Harness {
    let h = harness(config(), tools, &CLIENTS).await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&h.tool_service)
        .await;
    h
}

/// The bearer token a Tool Service request carried.
fn bearer_of(request: &Request) -> String {
    let value = request.headers["authorization"].to_str().unwrap();
    value
        .strip_prefix("Bearer ")
        .unwrap_or_else(|| panic!("a bearer token: {value}"))
        .to_string()
}

#[tokio::test]
async fn x12_real_server_one_token_per_client_auth_for_concurrent_first_calls() {
    let server = AuthServer::start();
    let tools = vec![
        oauth_tool(
            "in_basic",
            &server,
            "OAUTH_BASIC",
            &json!({"scopes": ["read", "write:all"]}),
        ),
        oauth_tool(
            "in_body",
            &server,
            "OAUTH_POST",
            &json!({"scopes": ["read"], "clientAuth": "body"}),
        ),
    ];
    let h = Arc::new(gateway(tools).await);
    let calls: Vec<_> = (0..12)
        .map(|i| {
            let h = h.clone();
            let name = if i % 2 == 0 { "in_basic" } else { "in_body" };
            tokio::spawn(async move { h.call_tool(name, json!({})).await })
        })
        .collect();
    for call in calls {
        assert_eq!(result_of(&call.await.unwrap()), (false, "ok".into()));
    }
    let mut asked = server.token_requests(2).await;
    asked.sort_by_key(|e| e["client"].to_string());
    assert_eq!(
        asked,
        [
            logged(Some("basic client"), "basic", 200),
            logged(Some("post-client"), "body", 200)
        ],
        "one token request per client, in its client authentication"
    );
    let seen = received(&h).await;
    assert_eq!(seen.len(), 12);
    let mut kept = Vec::new();
    for (path, client, scope) in [
        ("/in_basic", "basic client", "read write:all"),
        ("/in_body", "post-client", "read"),
    ] {
        let tokens: Vec<String> = seen
            .iter()
            .filter(|r| r.url.path() == path)
            .map(bearer_of)
            .collect();
        assert_eq!(tokens.len(), 6);
        assert!(tokens.iter().all(|t| *t == tokens[0]), "{path}: one token");
        assert!(!kept.contains(&tokens[0]), "{path}: its own token");
        kept.push(tokens[0].clone());
        let about = server.introspect(&tokens[0]).await;
        assert_eq!(about["active"], true, "{path}: {about}");
        assert_eq!(about["client_id"], client, "{path}: {about}");
        assert_eq!(about["scope"], scope, "{path}: {about}");
        assert_eq!(about["token_type"], "Bearer", "{path}: {about}");
    }
}

#[tokio::test]
async fn x12_real_server_a_token_is_replaced_a_minute_before_it_expires() {
    let server = AuthServer::start();
    let tools = vec![oauth_tool("short", &server, "OAUTH_SHORT", &json!({}))];
    let h = gateway(tools).await;
    // The server's tokens for `short-lived` live 62 s: the gateway keeps each for 2 s.
    let started = Instant::now();
    for _ in 0..3 {
        assert_eq!(
            result_of(&h.call_tool("short", json!({})).await),
            (false, "ok".into())
        );
    }
    assert!(started.elapsed() < Duration::from_millis(1500), "too slow");
    assert_eq!(server.token_requests(1).await.len(), 1);
    let first = bearer_of(&received(&h).await[0]);
    let about = server.introspect(&first).await;
    assert_eq!(about["active"], true, "{about}");
    assert_eq!(about["client_id"], "short-lived", "{about}");
    assert_eq!(
        about["exp"].as_u64().unwrap() - about["iat"].as_u64().unwrap(),
        62
    );
    tokio::time::sleep(Duration::from_millis(2300).saturating_sub(started.elapsed())).await;
    for _ in 0..2 {
        h.call_tool("short", json!({})).await;
    }
    assert_eq!(
        server.token_requests(2).await,
        [
            logged(Some("short-lived"), "basic", 200),
            logged(Some("short-lived"), "basic", 200)
        ]
    );
    let tokens: Vec<String> = received(&h).await.iter().map(bearer_of).collect();
    assert_eq!(tokens.len(), 5);
    assert!(tokens[..3].iter().all(|t| *t == first));
    assert_ne!(tokens[3], first, "a new token after 2 s");
    assert_eq!(tokens[4], tokens[3], "the new token is kept");
    // The first token was replaced before it expired: the server still takes it.
    assert_eq!(server.introspect(&first).await["active"], true);
    assert_eq!(server.introspect(&tokens[3]).await["active"], true);
}

#[tokio::test]
async fn x12_real_server_a_token_shorter_lived_than_the_margin_is_shared_by_concurrent_calls() {
    let server = AuthServer::start();
    let tools = vec![oauth_tool("brief", &server, "OAUTH_BRIEF", &json!({}))];
    let h = Arc::new(gateway(tools).await);
    // Its tokens live 30 s, less than the minute's margin: not kept for later calls, but
    // requested once for the calls that wait for it together.
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let h = h.clone();
            tokio::spawn(async move { h.call_tool("brief", json!({})).await })
        })
        .collect();
    for call in calls {
        assert_eq!(result_of(&call.await.unwrap()), (false, "ok".into()));
    }
    assert_eq!(server.token_requests(1).await.len(), 1);
    h.call_tool("brief", json!({})).await;
    assert_eq!(server.token_requests(2).await.len(), 2);
    let tokens: Vec<String> = received(&h).await.iter().map(bearer_of).collect();
    assert!(tokens[..6].iter().all(|t| *t == tokens[0]) && tokens[6] != tokens[0]);
}

#[tokio::test]
async fn x12_real_server_a_refused_token_is_replaced_once() {
    let server = AuthServer::start();
    let tools = vec![
        oauth_tool("api", &server, "OAUTH_POST", &json!({"clientAuth": "body"})),
        oauth_tool("locked", &server, "OAUTH_BASIC", &json!({})),
    ];
    let h = harness_with_refusals(tools).await;
    assert_eq!(
        result_of(&h.call_tool("api", json!({})).await),
        (false, "ok".into())
    );
    let tokens: Vec<String> = received(&h).await.iter().map(bearer_of).collect();
    assert_eq!(tokens.len(), 2, "sent once more after the 401");
    assert_ne!(tokens[0], tokens[1], "with a new token");
    assert_eq!(server.token_requests(2).await.len(), 2);
    for token in &tokens {
        let about = server.introspect(token).await;
        assert_eq!(
            (&about["active"], &about["client_id"]),
            (&json!(true), &json!("post-client"))
        );
    }
    h.call_tool("api", json!({})).await;
    let last = received(&h).await;
    assert_eq!(bearer_of(&last[2]), tokens[1], "the new token is kept");
    assert_eq!(server.token_requests(2).await.len(), 2);
    // A Tool Service that refuses every token: one new token, one more try, its 401 the result.
    let answer = h.call_tool("locked", json!({})).await;
    assert!(result_of(&answer).0, "{}", answer.json());
    let locked: Vec<String> = received(&h).await[3..].iter().map(bearer_of).collect();
    assert_eq!(locked.len(), 2, "never a third try");
    assert_ne!(locked[0], locked[1]);
    assert_eq!(
        server.token_requests(4).await[2..],
        [
            logged(Some("basic client"), "basic", 200),
            logged(Some("basic client"), "basic", 200)
        ]
    );
}

/// A gateway whose Tool Service refuses `/api`'s first request and every `/locked` request with
/// `401`, and answers `ok` otherwise.
async fn harness_with_refusals(tools: Vec<Value>) -> gateway_tests::Harness {
    let h = harness(config(), tools, &CLIENTS).await;
    Mock::given(wiremock::matchers::path("/api"))
        .respond_with(ResponseTemplate::new(401))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&h.tool_service)
        .await;
    Mock::given(wiremock::matchers::path("/locked"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(1)
        .mount(&h.tool_service)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&h.tool_service)
        .await;
    h
}

#[tokio::test]
async fn x12_real_server_refusals_are_results_and_not_kept() {
    let server = AuthServer::start();
    let tools = vec![
        oauth_tool(
            "wrong_body",
            &server,
            "OAUTH_WRONG",
            &json!({"clientAuth": "body"}),
        ),
        oauth_tool("wrong_basic", &server, "OAUTH_WRONG", &json!({})),
        oauth_tool(
            "admin",
            &server,
            "OAUTH_BASIC",
            &json!({"scopes": ["read", "admin"]}),
        ),
        oauth_tool(
            "unknown",
            &server,
            "OAUTH_BASIC",
            &json!({"scopes": ["read", "bogus"]}),
        ),
    ];
    let h = gateway(tools).await;
    let refused = |name: &str, what: &str| {
        (
            true,
            format!(
                "Tool '{name}': the access token could not be obtained (the token endpoint answered {what})"
            ),
        )
    };
    for (name, what) in [
        ("wrong_body", "HTTP 401, invalid_client"),
        ("wrong_basic", "HTTP 401, invalid_client"),
        ("admin", "HTTP 400, invalid_scope"),
        ("wrong_basic", "HTTP 401, invalid_client"),
    ] {
        assert_eq!(
            result_of(&h.call_tool(name, json!({})).await),
            refused(name, what)
        );
    }
    assert!(
        received(&h).await.is_empty(),
        "nothing sent to the Tool Service"
    );
    assert_eq!(
        server.token_requests(4).await,
        [
            logged(Some("post-client"), "body", 401),
            logged(Some("post-client"), "basic", 401),
            logged(Some("basic client"), "basic", 400),
            logged(Some("post-client"), "basic", 401),
        ],
        "a refusal is not kept"
    );
    // A scope the server does not know is dropped from the token it grants (RFC 6749 §3.3).
    assert_eq!(
        result_of(&h.call_tool("unknown", json!({})).await),
        (false, "ok".into())
    );
    let about = server.introspect(&bearer_of(&received(&h).await[0])).await;
    assert_eq!(
        (&about["active"], &about["scope"]),
        (&json!(true), &json!("read"))
    );
}
