//! `mcp-admin`: issues and revokes delegations in the DynamoDB delegation table
//! (`MCP_AUTH_TABLE`), the store of the gateway's inbound authentication.
//!
//! - `mcp-admin table create`: makes the table (string partition key `pk`, TTL on `ttl`).
//! - `mcp-admin token create --route core [--route hr] [--idle-ttl 30d] [--expires 90d]`:
//!   writes a delegation and prints its personal access token once; only the token's SHA-256
//!   is stored.
//! - `mcp-admin token revoke <delegation-id>`: the next request with that token gets 401.
//! - `mcp-admin oauth grant --issuer … --subject … [--client-id …] --route core`: lets an OAuth
//!   subject (a verified JWT's `iss`, `sub`, `client_id`) call the routes.
//!
//! The standard AWS environment chooses the account and region; `AWS_ENDPOINT_URL_DYNAMODB`
//! points it at another DynamoDB-protocol server. Exit codes: `0` done, `1` refused (unknown
//! delegation id, bad argument), `2` the table is unreachable.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand};
use mcp_gateway::auth::AdminError;
use mcp_gateway::auth::{DynamoStore, NewDelegation, PersonalToken, oauth_key};
use serde_json::json;

/// Manages MCP gateway delegations.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// The DynamoDB delegation table.
    #[arg(long, env = "MCP_AUTH_TABLE", global = true, default_value = "")]
    table: String,
    /// Time limit of each DynamoDB call in ms.
    #[arg(long, default_value_t = 10_000, global = true)]
    timeout_ms: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The delegation table.
    #[command(subcommand)]
    Table(TableCommand),
    /// Personal access tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// OAuth subjects.
    #[command(subcommand)]
    Oauth(OAuthCommand),
}

#[derive(Debug, Subcommand)]
enum TableCommand {
    /// Creates the table (on-demand, key `pk`, TTL on `ttl`); an existing table is kept.
    Create,
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Issues a token: prints it once, stores only its hash.
    Create {
        #[command(flatten)]
        grant: Grant,
    },
    /// Revokes the delegation with this id.
    Revoke {
        /// The delegation id printed at creation.
        delegation_id: String,
    },
}

#[derive(Debug, Subcommand)]
enum OAuthCommand {
    /// Lets an OAuth subject call routes.
    Grant {
        /// The token issuer (`iss`), exactly as in the tokens.
        #[arg(long)]
        issuer: String,
        /// The subject (`sub`).
        #[arg(long)]
        subject: String,
        /// The OAuth client (`client_id` or `azp`); empty when the tokens carry none.
        #[arg(long, default_value = "")]
        client_id: String,
        #[command(flatten)]
        grant: Grant,
    },
    /// Revokes the delegation with this id.
    Revoke {
        /// The delegation id printed at creation.
        delegation_id: String,
    },
}

#[derive(Debug, Args)]
#[group(id = "grant_options")]
struct Grant {
    /// A route key the delegation may call (repeat for several).
    #[arg(long = "route", required = true)]
    routes: Vec<String>,
    /// The delegation dies when unused this long (e.g. 30d, 12h).
    #[arg(long, default_value = "30d", value_parser = humantime::parse_duration)]
    idle_ttl: Duration,
    /// The delegation dies this long after creation, used or not (e.g. 90d).
    #[arg(long, default_value = "90d", value_parser = humantime::parse_duration)]
    expires: Duration,
    /// A label for the delegation (who, what for); never a secret.
    #[arg(long)]
    description: Option<String>,
    /// A group the caller is in, for the routes' authorization policies (`principal.groups`;
    /// repeat for several).
    #[arg(long = "group")]
    groups: Vec<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Longest idle TTL and lifetime of a delegation: ten years, in seconds.
const MAX_LIFETIME_S: u64 = 10 * 365 * 24 * 3_600;

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A failure and its exit code.
struct Failure {
    code: u8,
    message: String,
}

fn refused(message: impl Into<String>) -> Failure {
    Failure {
        code: 1,
        message: message.into(),
    }
}

fn unreachable(error: impl std::fmt::Display) -> Failure {
    Failure {
        code: 2,
        message: format!("the delegation table is unreachable: {error}"),
    }
}

fn admin_failure(error: AdminError) -> Failure {
    match error {
        AdminError::NotFound(_) => refused(error.to_string()),
        AdminError::Store(store) => unreachable(store),
    }
}

/// Writes the delegation `grant` describes under `key` and prints it (with `token`, once).
async fn create(
    store: &DynamoStore,
    key: String,
    grant: &Grant,
    token: Option<&PersonalToken>,
) -> Result<(), Failure> {
    if let Some(bad) = grant
        .routes
        .iter()
        .find(|r| !mcp_gateway::routing::is_route_key(r))
    {
        return Err(refused(format!("'{bad}' is not a route key")));
    }
    let longest = Duration::from_secs(MAX_LIFETIME_S);
    for (flag, value) in [("--idle-ttl", grant.idle_ttl), ("--expires", grant.expires)] {
        if value.as_secs() == 0 || value > longest {
            return Err(refused(format!(
                "{flag} must be between 1s and {}",
                humantime::format_duration(longest)
            )));
        }
    }
    // A string set holds each route once.
    let mut routes = grant.routes.clone();
    routes.sort();
    routes.dedup();
    let mut groups = grant.groups.clone();
    groups.sort();
    groups.dedup();
    if groups.iter().any(String::is_empty) {
        return Err(refused("--group must not be empty"));
    }
    let created_at = now_s();
    let delegation = NewDelegation {
        key,
        delegation_id: uuid::Uuid::new_v4().to_string(),
        routes,
        idle_ttl_s: grant.idle_ttl.as_secs(),
        expires_at: created_at + grant.expires.as_secs(),
        created_at,
        description: grant.description.clone(),
        groups,
    };
    store
        .put_delegation(&delegation)
        .await
        .map_err(unreachable)?;
    if grant.json {
        let mut out = json!({
            "delegationId": delegation.delegation_id,
            "routes": delegation.routes,
            "idleTtlSeconds": delegation.idle_ttl_s,
            "expiresAt": delegation.expires_at,
            "groups": delegation.groups,
        });
        if let Some(token) = token {
            out["token"] = json!(token.expose());
        }
        println!("{out}");
    } else {
        if let Some(token) = token {
            println!("{}", token.expose());
            eprintln!("mcp-admin: the token above is shown once; only its hash is stored");
        }
        eprintln!(
            "mcp-admin: delegation {} for routes {}; dies after {} unused, at the latest at epoch {}",
            delegation.delegation_id,
            delegation.routes.join(", "),
            humantime::format_duration(grant.idle_ttl),
            delegation.expires_at,
        );
    }
    Ok(())
}

async fn run(cli: Cli) -> Result<(), Failure> {
    if cli.table.trim().is_empty() {
        return Err(refused("--table or MCP_AUTH_TABLE must name the table"));
    }
    let store = DynamoStore::from_env(cli.table.clone(), cli.timeout_ms).await;
    match cli.command {
        Command::Table(TableCommand::Create) => {
            let created = store.create_table().await.map_err(unreachable)?;
            eprintln!(
                "mcp-admin: table {} {}",
                store.table(),
                if created { "created" } else { "already exists" }
            );
            Ok(())
        }
        Command::Token(TokenCommand::Create { grant }) => {
            let token = PersonalToken::generate().map_err(|e| refused(e.to_string()))?;
            create(&store, token.store_key(), &grant, Some(&token)).await
        }
        Command::Oauth(OAuthCommand::Grant {
            issuer,
            subject,
            client_id,
            grant,
        }) => {
            create(
                &store,
                oauth_key(&issuer, &subject, &client_id),
                &grant,
                None,
            )
            .await
        }
        Command::Token(TokenCommand::Revoke { delegation_id })
        | Command::Oauth(OAuthCommand::Revoke { delegation_id }) => {
            store.revoke(&delegation_id).await.map_err(admin_failure)?;
            eprintln!("mcp-admin: delegation {delegation_id} revoked");
            Ok(())
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("mcp-admin: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
