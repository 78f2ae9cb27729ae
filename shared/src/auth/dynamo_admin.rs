//! The administrative side of the DynamoDB delegation store (CONTRACT A4), used by `mcp-admin`
//! and the tests: writing a delegation and its `del#` pointer, revoking it, creating the table
//! with its TTL attribute, and reading an item.

use std::collections::HashMap;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType, TimeToLiveSpecification,
};

use super::dynamo::{DynamoStore, built, unavailable};
use super::store::StoreError;

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
    /// Groups for authorization policies (`--group`, repeatable; CONTRACT Z3), stored as the
    /// string set `groups` (left out when empty).
    pub groups: Vec<String>,
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
        if !delegation.groups.is_empty() {
            item.insert(
                "groups".into(),
                AttributeValue::Ss(delegation.groups.clone()),
            );
        }
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
                    .map_err(|e| built(&e))?,
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name("pk")
                    .key_type(KeyType::Hash)
                    .build()
                    .map_err(|e| built(&e))?,
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
                    .map_err(|e| built(&e))?,
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
