//! Where an instance's task keys come from (CONTRACT K3): `MCP_TASK_KEY`'s REF, read through
//! the invoker's secret cache like an outbound credential (X12), or a key of the process.

use std::sync::{Arc, Mutex};

use super::TaskKeys;
use crate::invoke::ToolInvoker;
use crate::registry::SecretRef;

/// The task keys of a gateway (CONTRACT K3).
#[derive(Debug, Default)]
pub enum Keyring {
    /// No key: task tools answer as without the extension where they can (K1), and a
    /// `required` one refuses its calls.
    #[default]
    None,
    /// Keys given to the process (`mcp-local`'s own random key, tests).
    Fixed(Arc<TaskKeys>),
    /// `MCP_TASK_KEY`'s REF, with the keys of its last read and that read's generation.
    Secret {
        /// The reference.
        source: SecretRef,
        /// The keys parsed from the read of this generation.
        parsed: Mutex<Option<(u64, Arc<TaskKeys>)>>,
    },
}

impl Keyring {
    /// The keyring of `MCP_TASK_KEY`'s REF.
    #[must_use]
    pub fn from_secret(source: SecretRef) -> Self {
        Self::Secret {
            source,
            parsed: Mutex::new(None),
        }
    }

    /// Whether any key can be had.
    #[must_use]
    pub fn is_configured(&self) -> bool {
        !matches!(self, Self::None)
    }

    /// The keys now: the REF's value parsed once per read (`MCP_SECRET_TTL_S`).
    ///
    /// # Errors
    /// The `-32603` detail: `the task key could not be read (<why>)`, naming no ARN or value.
    pub async fn keys<I: ToolInvoker>(&self, invoker: &I) -> Result<Arc<TaskKeys>, String> {
        let (source, parsed) = match self {
            Self::None => return Err("no task key is configured (MCP_TASK_KEY)".into()),
            Self::Fixed(keys) => return Ok(Arc::clone(keys)),
            Self::Secret { source, parsed } => (source, parsed),
        };
        let fetched = invoker
            .secret(&source.source, None)
            .await
            .map_err(|e| format!("the task key could not be read ({e})"))?;
        if let Ok(guard) = parsed.lock()
            && let Some((generation, keys)) = guard.as_ref()
            && *generation == fetched.generation
        {
            return Ok(Arc::clone(keys));
        }
        let raw = fetched.value.expose();
        let text = match &source.json_key {
            None => raw.to_string(),
            Some(key) => serde_json::from_str::<serde_json::Value>(raw)
                .ok()
                .and_then(|v| v.get(key).and_then(|v| v.as_str()).map(str::to_string))
                .ok_or(
                    "the task key could not be read (the JSON secret has no such string field)",
                )?,
        };
        let keys = Arc::new(
            TaskKeys::parse(&text)
                .map_err(|e| format!("the task key could not be read (MCP_TASK_KEY {e})"))?,
        );
        if let Ok(mut guard) = parsed.lock() {
            *guard = Some((fetched.generation, Arc::clone(&keys)));
        }
        Ok(keys)
    }
}
