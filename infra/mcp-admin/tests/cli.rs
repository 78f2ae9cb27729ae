//! `mcp-admin` against a real DynamoDB-protocol server (moto) on loopback: table creation,
//! token issue (printed once, only the hash stored, with its groups: CONTRACT Z3), revocation,
//! and the exit codes.

use std::process::{Command, Output};

use gateway_tests::auth::dynamodb_url;
use mcp_gateway::auth::{DynamoStore, PersonalToken};
use serde_json::Value;

fn admin(endpoint: &str, table: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-admin"))
        .args(["--table", table, "--timeout-ms", "3000"])
        .args(args)
        .env("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env_remove("MCP_AUTH_TABLE")
        .output()
        .expect("mcp-admin runs")
}

fn store(table: &str) -> DynamoStore {
    DynamoStore::new(
        gateway_tests::auth::dynamodb_client(&dynamodb_url(), std::time::Duration::from_secs(5)),
        table,
    )
}

#[tokio::test]
async fn a4_table_create_token_create_and_revoke_round_trip() {
    let endpoint = dynamodb_url();
    let table = format!("admin-{}", uuid_like());
    let created = admin(&endpoint, &table, &["table", "create"]);
    assert_eq!(created.status.code(), Some(0), "{created:?}");
    assert!(String::from_utf8_lossy(&created.stderr).contains("created"));
    let again = admin(&endpoint, &table, &["table", "create"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    let issued = admin(
        &endpoint,
        &table,
        &[
            "token",
            "create",
            "--route",
            "core",
            "--route",
            "hr",
            "--group",
            "payroll",
            "--group",
            "hr",
            "--idle-ttl",
            "12h",
            "--expires",
            "30d",
            "--json",
        ],
    );
    assert_eq!(issued.status.code(), Some(0), "{issued:?}");
    let out: Value = serde_json::from_slice(&issued.stdout).unwrap();
    let token = PersonalToken::parse(out["token"].as_str().unwrap()).expect("a well-formed token");
    assert_eq!(out["idleTtlSeconds"], 43_200);
    let item = store(&table)
        .item(&token.store_key())
        .await
        .unwrap()
        .expect("item under the token's hash");
    let mut routes = item["routes"].as_ss().unwrap().clone();
    routes.sort();
    assert_eq!(routes, ["core", "hr"]);
    // CONTRACT Z3: the delegation's groups, which the admitting write returns.
    let mut groups = item["groups"].as_ss().unwrap().clone();
    groups.sort();
    assert_eq!(groups, ["hr", "payroll"]);
    assert_eq!(out["groups"], serde_json::json!(["hr", "payroll"]));
    assert_eq!(item["status"].as_s().unwrap(), "active");
    let stored = format!("{item:?}");
    assert!(!stored.contains(token.expose()), "only the hash is stored");

    let id = out["delegationId"].as_str().unwrap();
    let revoked = admin(&endpoint, &table, &["token", "revoke", id]);
    assert_eq!(revoked.status.code(), Some(0), "{revoked:?}");
    let item = store(&table)
        .item(&token.store_key())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(item["status"].as_s().unwrap(), "revoked");

    let unknown = admin(&endpoint, &table, &["token", "revoke", "no-such-id"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no delegation with id 'no-such-id'")
    );
    let bad_route = admin(&endpoint, &table, &["token", "create", "--route", "a/b"]);
    assert_eq!(bad_route.status.code(), Some(1));
    for (flag, value) in [
        ("--expires", "18446744073709551615s"),
        ("--idle-ttl", "11years"),
        ("--idle-ttl", "0s"),
    ] {
        let refused = admin(
            &endpoint,
            &table,
            &["token", "create", "--route", "core", flag, value],
        );
        assert_eq!(
            refused.status.code(),
            Some(1),
            "{flag} {value}: {refused:?}"
        );
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("must be between 1s and"),
            "{refused:?}"
        );
    }
    let twice = admin(
        &endpoint,
        &table,
        &[
            "token", "create", "--route", "core", "--route", "core", "--json",
        ],
    );
    let out: Value = serde_json::from_slice(&twice.stdout).unwrap();
    assert_eq!(out["routes"], serde_json::json!(["core"]));
}

#[tokio::test]
async fn a4_oauth_grant_writes_the_subject_delegation() {
    let endpoint = dynamodb_url();
    let table = format!("admin-{}", uuid_like());
    assert_eq!(
        admin(&endpoint, &table, &["table", "create"]).status.code(),
        Some(0)
    );
    let granted = admin(
        &endpoint,
        &table,
        &[
            "oauth",
            "grant",
            "--issuer",
            "https://issuer.test",
            "--subject",
            "alice",
            "--client-id",
            "agent-cli",
            "--route",
            "core",
            "--json",
        ],
    );
    assert_eq!(granted.status.code(), Some(0), "{granted:?}");
    let out: Value = serde_json::from_slice(&granted.stdout).unwrap();
    assert!(out.get("token").is_none());
    let key = mcp_gateway::auth::oauth_key("https://issuer.test", "alice", "agent-cli");
    let item = store(&table)
        .item(&key)
        .await
        .unwrap()
        .expect("subject item");
    assert_eq!(
        item["delegation_id"].as_s().unwrap(),
        out["delegationId"].as_str().unwrap()
    );
}

#[test]
fn the_text_form_prints_the_token_alone_on_stdout() {
    let endpoint = dynamodb_url();
    let table = format!("admin-{}", uuid_like());
    assert_eq!(
        admin(&endpoint, &table, &["table", "create"]).status.code(),
        Some(0)
    );
    let issued = admin(&endpoint, &table, &["token", "create", "--route", "core"]);
    assert_eq!(issued.status.code(), Some(0));
    let stdout = String::from_utf8(issued.stdout).unwrap();
    assert!(PersonalToken::parse(stdout.trim_end()).is_ok(), "{stdout}");
    assert!(String::from_utf8_lossy(&issued.stderr).contains("shown once"));
}

#[test]
fn an_unreachable_table_exits_2_and_a_missing_table_name_exits_1() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = admin(
        &format!("http://127.0.0.1:{port}"),
        "t",
        &["table", "create"],
    );
    assert_eq!(down.status.code(), Some(2), "{down:?}");
    let unnamed = admin(&dynamodb_url(), "", &["table", "create"]);
    assert_eq!(unnamed.status.code(), Some(1));
}

fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}
