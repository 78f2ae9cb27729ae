//! The DynamoDB delegation store (table `MCP_AUTH_TABLE`, string partition key `pk`; CONTRACT
//! A4).
//!
//! A delegation item (`pk = tok#<hex sha256(token)>` or `oauth#<hex sha256(iss, sub,
//! client_id)>`) holds `delegation_id`, `status`, `routes` (string set), `idle_ttl_s`,
//! `idle_expires_at`, `expires_at`, `ttl` (the table's TTL attribute), and the request counter
//! `rl_window` / `rl_count` plus `use_count` / `last_used_at`. A pointer item
//! `pk = del#<delegation_id>` names the delegation item for revocation.
//!
//! [`DynamoStore::admit`] is one conditional `UpdateItem` in the common case (CONTRACT A4): the
//! condition checks the delegation is active, unexpired, allowed on the route and under the limit
//! in the current window (CONTRACT A8); only then are `idle_expires_at` extended and the request
//! counted. A refused write returns the old item (`ReturnValuesOnConditionCheckFailure=ALL_OLD`),
//! which tells 401 from 429 without another read ([`judge`]). The first request of a new window
//! makes a second conditional write that starts the window; concurrent instances that race on it
//! re-check, so a window never admits more than the limit (A8). Nothing is written for a 401 or
//! a 429.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, ReturnValue,
    ReturnValuesOnConditionCheckFailure, ScalarAttributeType, TimeToLiveSpecification,
};

use super::store::{
    Admission, AdmitRequest, DelegationStore, StoreError, StoredDelegation, Verdict, judge,
};
use crate::registry::BoxFuture;

/// Most conditional writes one admission makes (increment, start the window, increment again
/// after losing a race on the window start).
const MAX_WRITES: usize = 3;

/// The validity part of every admission condition.
const VALID: &str = "attribute_exists(pk) AND #status = :active AND expires_at > :now \
                     AND idle_expires_at > :now AND contains(routes, :route)";

/// A DynamoDB delegation store over one table (CONTRACT A4, A8).
#[derive(Debug, Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

/// A delegation to write (by `mcp-admin`; the item of CONTRACT A4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelegation {
    /// The item key (`tok#…` or `oauth#…`).
    pub key: String,
    /// The delegation id (a UUID).
    pub delegation_id: String,
    /// Route keys the delegation may call.
    pub routes: Vec<String>,
    /// Idle TTL in seconds: the delegation dies when unused this long.
    pub idle_ttl_s: u64,
    /// Absolute expiry, epoch seconds.
    pub expires_at: u64,
    /// Creation time, epoch seconds.
    pub created_at: u64,
    /// A free-text label (`--description`), never the token.
    pub description: Option<String>,
}

/// Why an administrative store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// No delegation with this id.
    #[error("no delegation with id '{0}'")]
    NotFound(String),
    /// DynamoDB refused or could not be reached.
    #[error("{0}")]
    Store(#[from] StoreError),
}

impl DynamoStore {
    /// A store over an already configured client.
    #[must_use]
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    /// A store with a client from the standard AWS environment (`AWS_ENDPOINT_URL_DYNAMODB`
    /// points it at another DynamoDB-protocol server), every call bounded by `timeout_ms` and
    /// at most two attempts (`MCP_AUTH_TIMEOUT_MS`, CONTRACT A9).
    pub async fn from_env(table: impl Into<String>, timeout_ms: u64) -> Self {
        let timeout = Duration::from_millis(timeout_ms);
        let shared = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .http_client(crate::aws_http::sdk_http_client())
            .timeout_config(
                aws_config::timeout::TimeoutConfig::builder()
                    .operation_timeout(timeout)
                    .connect_timeout(timeout)
                    .build(),
            )
            .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(2))
            .load()
            .await;
        Self::new(Client::new(&shared), table)
    }

    /// The table name.
    #[must_use]
    pub fn table(&self) -> &str {
        &self.table
    }

    async fn conditional_update(
        &self,
        request: &AdmitRequest<'_>,
        start_window: bool,
    ) -> Result<Result<String, Option<StoredDelegation>>, StoreError> {
        let now = request.now_s.to_string();
        let mut update = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("pk", AttributeValue::S(request.key.to_string()))
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":active", AttributeValue::S("active".into()))
            .expression_attribute_values(":now", AttributeValue::N(now))
            .expression_attribute_values(":route", AttributeValue::S(request.route.to_string()))
            .expression_attribute_values(":one", AttributeValue::N("1".into()))
            .expression_attribute_values(":zero", AttributeValue::N("0".into()))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let record = "idle_expires_at = idle_ttl_s + :now, last_used_at = :now, \
                      use_count = if_not_exists(use_count, :zero) + :one";
        match request.limit {
            None => {
                update = update
                    .update_expression(format!("SET {record}"))
                    .condition_expression(VALID);
            }
            Some(limit) => {
                let window = limit.window_start(request.now_s).to_string();
                // DynamoDB refuses values that the expressions do not use.
                update = update.expression_attribute_values(":window", AttributeValue::N(window));
                update = if start_window {
                    update
                        .update_expression(format!(
                            "SET {record}, rl_window = :window, rl_count = :one"
                        ))
                        .condition_expression(format!(
                            "{VALID} AND (attribute_not_exists(rl_window) OR rl_window < :window)"
                        ))
                } else {
                    update
                        .expression_attribute_values(
                            ":limit",
                            AttributeValue::N(limit.requests.to_string()),
                        )
                        .update_expression(format!("SET {record}, rl_count = rl_count + :one"))
                        .condition_expression(format!(
                            "{VALID} AND rl_window = :window AND rl_count < :limit"
                        ))
                };
            }
        }
        match update.send().await {
            Ok(output) => Ok(Ok(output
                .attributes()
                .map(read_item)
                .unwrap_or_default()
                .delegation_id)),
            Err(SdkError::ServiceError(service)) => match service.into_err() {
                UpdateItemError::ConditionalCheckFailedException(refused) => {
                    Ok(Err(refused.item().map(read_item)))
                }
                other => Err(unavailable(&other)),
            },
            Err(other) => Err(unavailable(&other)),
        }
    }

    /// Writes a delegation item and its `del#` pointer. The delegation starts active with its
    /// idle expiry `idle_ttl_s` after creation.
    ///
    /// # Errors
    /// [`StoreError`] when DynamoDB refuses or cannot be reached.
    pub async fn put_delegation(&self, delegation: &NewDelegation) -> Result<(), StoreError> {
        let n = |v: u64| AttributeValue::N(v.to_string());
        let mut item = HashMap::from([
            ("pk".to_string(), AttributeValue::S(delegation.key.clone())),
            (
                "delegation_id".into(),
                AttributeValue::S(delegation.delegation_id.clone()),
            ),
            ("status".into(), AttributeValue::S("active".into())),
            (
                "routes".into(),
                AttributeValue::Ss(delegation.routes.clone()),
            ),
            ("idle_ttl_s".into(), n(delegation.idle_ttl_s)),
            (
                "idle_expires_at".into(),
                n(delegation.created_at.saturating_add(delegation.idle_ttl_s)),
            ),
            ("expires_at".into(), n(delegation.expires_at)),
            ("ttl".into(), n(delegation.expires_at)),
            ("created_at".into(), n(delegation.created_at)),
        ]);
        if let Some(description) = &delegation.description {
            item.insert("description".into(), AttributeValue::S(description.clone()));
        }
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        self.client
            .put_item()
            .table_name(&self.table)
            .item(
                "pk",
                AttributeValue::S(format!("del#{}", delegation.delegation_id)),
            )
            .item("target", AttributeValue::S(delegation.key.clone()))
            .item("ttl", n(delegation.expires_at))
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(())
    }

    /// Revokes the delegation `delegation_id`: its item's `status` becomes `revoked`, so the
    /// next request with it is answered 401 (CONTRACT A4).
    ///
    /// # Errors
    /// [`AdminError::NotFound`] for an unknown id, [`AdminError::Store`] when DynamoDB fails.
    pub async fn revoke(&self, delegation_id: &str) -> Result<(), AdminError> {
        let pointer = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("pk", AttributeValue::S(format!("del#{delegation_id}")))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        let target = pointer
            .item()
            .and_then(|item| item.get("target"))
            .and_then(|v| v.as_s().ok())
            .ok_or_else(|| AdminError::NotFound(delegation_id.to_string()))?;
        self.client
            .update_item()
            .table_name(&self.table)
            .key("pk", AttributeValue::S(target.clone()))
            .update_expression("SET #status = :revoked")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":revoked", AttributeValue::S("revoked".into()))
            .send()
            .await
            .map_err(|e| match e.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(_)) => {
                    AdminError::NotFound(delegation_id.to_string())
                }
                _ => AdminError::Store(unavailable(&e)),
            })?;
        Ok(())
    }

    /// Creates the table (on-demand billing, string partition key `pk`) and turns on TTL over
    /// the `ttl` attribute (CONTRACT A4). An existing table is left as it is.
    ///
    /// # Errors
    /// [`StoreError`] when DynamoDB refuses or cannot be reached.
    pub async fn create_table(&self) -> Result<bool, StoreError> {
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("pk")
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .map_err(built)?,
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name("pk")
                    .key_type(KeyType::Hash)
                    .build()
                    .map_err(built)?,
            )
            .send()
            .await;
        match created {
            Ok(_) => {}
            Err(e) if e.code() == Some("ResourceInUseException") => return Ok(false),
            Err(e) => return Err(unavailable(&e)),
        }
        self.client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .enabled(true)
                    .attribute_name("ttl")
                    .build()
                    .map_err(built)?,
            )
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(true)
    }

    /// The raw item under `key` (for tests and `mcp-admin`), read consistently.
    ///
    /// # Errors
    /// [`StoreError`] when DynamoDB refuses or cannot be reached.
    pub async fn item(
        &self,
        key: &str,
    ) -> Result<Option<HashMap<String, AttributeValue>>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("pk", AttributeValue::S(key.to_string()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(output.item)
    }
}

impl DelegationStore for DynamoStore {
    fn admit<'a>(
        &'a self,
        request: AdmitRequest<'a>,
    ) -> BoxFuture<'a, Result<Admission, StoreError>> {
        Box::pin(async move {
            let mut start_window = false;
            for _ in 0..MAX_WRITES {
                let old = match self.conditional_update(&request, start_window).await? {
                    Ok(delegation_id) => return Ok(Admission::Admitted { delegation_id }),
                    Err(old) => old,
                };
                let id = old
                    .as_ref()
                    .map(|o| o.delegation_id.clone())
                    .unwrap_or_default();
                match judge(old.as_ref(), &request) {
                    Verdict::Deny(denial) => return Ok(Admission::Denied(denial)),
                    Verdict::Limited { retry_after_s } => {
                        return Ok(Admission::Limited {
                            delegation_id: id,
                            retry_after_s,
                        });
                    }
                    Verdict::StartWindow => start_window = true,
                    Verdict::Increment => start_window = false,
                }
            }
            Err(StoreError {
                detail: "the request counter kept changing under concurrent writes".into(),
            })
        })
    }
}

/// The fields [`judge`] reads, from a DynamoDB item.
fn read_item(item: &HashMap<String, AttributeValue>) -> StoredDelegation {
    let s = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_s().ok())
            .cloned()
            .unwrap_or_default()
    };
    let n = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse::<u64>().ok())
    };
    StoredDelegation {
        delegation_id: s("delegation_id"),
        status: s("status"),
        routes: item
            .get("routes")
            .and_then(|v| v.as_ss().ok())
            .cloned()
            .unwrap_or_default(),
        expires_at: n("expires_at").unwrap_or(0),
        idle_expires_at: n("idle_expires_at").unwrap_or(0),
        window_start: n("rl_window"),
        window_count: n("rl_count").unwrap_or(0),
    }
}

/// A [`StoreError`] from a request that could not be built.
fn built(error: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError {
        detail: error.to_string(),
    }
}

/// A [`StoreError`] from any SDK failure: its error code, never the request.
fn unavailable(error: &(impl ProvideErrorMetadata + std::fmt::Display)) -> StoreError {
    StoreError {
        detail: error
            .code()
            .map_or_else(|| error.to_string(), ToString::to_string),
    }
}
