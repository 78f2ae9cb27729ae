//! A tool's own failure, which the function returns as a handled error (CONTRACT X10).

use lambda_runtime::Diagnostic;

/// A tool's own failure: the function returns it as a handled error, which Lambda reports as
/// a function error (`X-Amz-Function-Error`) with this type and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolError {
    /// The error type Lambda reports (`errorType`).
    pub(crate) kind: &'static str,
    /// The message the gateway shows in the `isError` result (`errorMessage`).
    pub(crate) message: String,
}

impl ToolError {
    pub(crate) fn new(kind: &'static str, message: String) -> Self {
        Self { kind, message }
    }
}

impl From<ToolError> for Diagnostic {
    fn from(error: ToolError) -> Self {
        Diagnostic {
            error_type: error.kind.to_string(),
            error_message: error.message,
        }
    }
}
