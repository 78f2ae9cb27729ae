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
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};

use super::store::{
    Admission, AdmitRequest, DelegationStore, StoreError, StoredDelegation, Verdict, judge,
};
use crate::future::BoxFuture;

/// Most conditional writes one admission makes (increment, start the window, increment again
/// after losing a race on the window start).
const MAX_WRITES: usize = 3;

/// The validity part of every admission condition.
const VALID: &str = "attribute_exists(pk) AND #status = :active AND expires_at > :now \
                     AND idle_expires_at > :now AND contains(routes, :route)";

/// A DynamoDB delegation store over one table (CONTRACT A4, A8).
#[derive(Debug, Clone)]
pub struct DynamoStore {
    pub(super) client: Client,
    pub(super) table: String,
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
        let shared = crate::aws_http::sdk_config_loader()
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
    ) -> Result<Result<StoredDelegation, Option<StoredDelegation>>, StoreError> {
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
            Ok(output) => Ok(Ok(output.attributes().map(read_item).unwrap_or_default())),
            Err(SdkError::ServiceError(service)) => match service.into_err() {
                UpdateItemError::ConditionalCheckFailedException(refused) => {
                    Ok(Err(refused.item().map(read_item)))
                }
                other => Err(unavailable(&other)),
            },
            Err(other) => Err(unavailable(&other)),
        }
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
                    Ok(item) => {
                        return Ok(Admission::Admitted {
                            delegation_id: item.delegation_id,
                            groups: item.groups,
                        });
                    }
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
        groups: item
            .get("groups")
            .and_then(|v| v.as_ss().ok())
            .cloned()
            .unwrap_or_default(),
    }
}

/// A [`StoreError`] from a request that could not be built.
pub(super) fn built(error: &aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError {
        detail: error.to_string(),
    }
}

/// A [`StoreError`] from any SDK failure: its error code, never the request.
pub(super) fn unavailable(error: &(impl ProvideErrorMetadata + std::fmt::Display)) -> StoreError {
    StoreError {
        detail: error
            .code()
            .map_or_else(|| error.to_string(), ToString::to_string),
    }
}
