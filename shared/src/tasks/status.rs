//! The Tool Service's status document (CONTRACT K2): what `GET <Location>` answers while a task
//! runs and after it ended.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::text::ellipsized;

/// The longest status message passed on as `statusMessage`, in bytes (CONTRACT K6); a longer
/// one is cut at a character boundary and ends with `…`.
pub const MAX_STATUS_MESSAGE_BYTES: usize = 1024;

/// A task's state as its Tool Service reports it (CONTRACT K2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceStatus {
    /// `{"status": "running", "message"?}`.
    Running {
        /// The service's message, cut to [`MAX_STATUS_MESSAGE_BYTES`].
        message: Option<String>,
    },
    /// `{"status": "succeeded", "result": <value>}`: the value's JSON text as sent, what a
    /// synchronous 2xx body would have been.
    Succeeded {
        /// The result's JSON text.
        result: String,
    },
    /// `{"status": "failed", "error": {"message", "code"?}}`.
    Failed {
        /// The error's message, cut to [`MAX_STATUS_MESSAGE_BYTES`]; a fixed text when absent.
        message: String,
        /// `error.code`, a JSON-RPC error code (a whole number from -2^31 to 2^31 - 1): the work
        /// ended with a protocol error, and the task is `failed` (CONTRACT K6); `None` for
        /// work that failed as a tool fails (a `completed` task with an `isError` result).
        code: Option<i32>,
    },
    /// `{"status": "canceled"}` (also spelled `cancelled`).
    Canceled,
}

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(borrow)]
    status: &'a RawValue,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// `text` when it fits [`MAX_STATUS_MESSAGE_BYTES`], else cut so that it and the `…` it ends
/// with fit (CONTRACT K6).
fn within_limit(text: String) -> String {
    if text.len() <= MAX_STATUS_MESSAGE_BYTES {
        text
    } else {
        ellipsized(&text, MAX_STATUS_MESSAGE_BYTES - '…'.len_utf8())
    }
}

fn text_of(raw: Option<&RawValue>) -> Option<String> {
    let text: String = serde_json::from_str(raw?.get()).ok()?;
    Some(within_limit(text))
}

/// Reads a status document (CONTRACT K2).
///
/// # Errors
/// The problem, as the text of an `isError` result: `the Tool Service's status answer is not
/// a status document (<why>)`; never quotes the body.
pub fn parse_status(body: &[u8]) -> Result<ServiceStatus, String> {
    let problem =
        |why: &str| format!("the Tool Service's status answer is not a status document ({why})");
    let document: Document<'_> = serde_json::from_slice(body)
        .map_err(|_| problem("a JSON object with a \"status\" string is expected"))?;
    let status: String = serde_json::from_str(document.status.get())
        .map_err(|_| problem("\"status\" is not a string"))?;
    match status.as_str() {
        "running" => Ok(ServiceStatus::Running {
            message: text_of(document.message),
        }),
        "succeeded" => match document.result {
            Some(result) => Ok(ServiceStatus::Succeeded {
                result: result.get().to_string(),
            }),
            None => Err(problem("\"succeeded\" without \"result\"")),
        },
        "failed" => {
            let malformed = || problem("\"error\" must be an object with a \"message\" string");
            let Some(error) = document.error else {
                return Ok(ServiceStatus::Failed {
                    message: "the Tool Service reported the work as failed".into(),
                    code: None,
                });
            };
            let error: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(error.get()).map_err(|_| malformed())?;
            let code = match error.get("code") {
                None => None,
                Some(code) => Some(
                    code.as_i64()
                        .and_then(|c| i32::try_from(c).ok())
                        .ok_or_else(|| problem("\"error.code\" must be a JSON-RPC error code"))?,
                ),
            };
            let message = match error.get("message") {
                None => "the Tool Service reported the work as failed".into(),
                Some(serde_json::Value::String(message)) => within_limit(message.clone()),
                Some(_) => return Err(malformed()),
            };
            Ok(ServiceStatus::Failed { message, code })
        }
        "canceled" | "cancelled" => Ok(ServiceStatus::Canceled),
        _ => Err(problem(
            "\"status\" must be \"running\", \"succeeded\", \"failed\" or \"canceled\"",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k2_the_four_states() {
        assert_eq!(
            parse_status(br#"{"status":"running","message":"3 of 10"}"#),
            Ok(ServiceStatus::Running {
                message: Some("3 of 10".into())
            })
        );
        assert_eq!(
            parse_status(br#"{"status":"running"}"#),
            Ok(ServiceStatus::Running { message: None })
        );
        assert_eq!(
            parse_status(br#"{"status":"succeeded","result":{"rows": 12345678901234567890}}"#),
            Ok(ServiceStatus::Succeeded {
                result: r#"{"rows": 12345678901234567890}"#.into()
            })
        );
        assert_eq!(
            parse_status(br#"{"status":"failed","error":{"message":"disk full"}}"#),
            Ok(ServiceStatus::Failed {
                message: "disk full".into(),
                code: None
            })
        );
        assert_eq!(
            parse_status(br#"{"status":"failed","error":{"code":-32603,"message":"lost"}}"#),
            Ok(ServiceStatus::Failed {
                message: "lost".into(),
                code: Some(-32603)
            })
        );
        assert!(parse_status(br#"{"status":"failed","error":{"code":1.5}}"#).is_err());
        assert!(parse_status(br#"{"status":"failed","error":{"code":4294967296}}"#).is_err());
        assert_eq!(
            parse_status(br#"{"status":"failed"}"#),
            Ok(ServiceStatus::Failed {
                message: "the Tool Service reported the work as failed".into(),
                code: None
            })
        );
        assert_eq!(
            parse_status(br#"{"status":"canceled"}"#),
            Ok(ServiceStatus::Canceled)
        );
    }

    #[test]
    fn k2_anything_else_is_a_problem_that_quotes_nothing() {
        for body in [
            &b"<html>secret</html>"[..],
            br#"{"status":"done"}"#,
            br#"{"status":7}"#,
            br#"{"status":"succeeded"}"#,
            br#"["status"]"#,
            br#"{"status":"failed","error":"disk full"}"#,
            br#"{"status":"failed","error":{"message":7}}"#,
            br#"{"status":"failed","error":{"message":"x","code":null}}"#,
            br#"{"status":"failed","error":{"message":"x","code":"-32603"}}"#,
        ] {
            let problem = parse_status(body).unwrap_err();
            assert!(
                problem.starts_with("the Tool Service's status answer is not a status document")
            );
            assert!(!problem.contains("secret") && !problem.contains("done"));
        }
    }

    #[test]
    fn k6_long_messages_are_cut() {
        let long = format!(r#"{{"status":"running","message":"{}"}}"#, "é".repeat(2000));
        let Ok(ServiceStatus::Running { message: Some(m) }) = parse_status(long.as_bytes()) else {
            panic!("running expected");
        };
        assert!(
            m.len() <= MAX_STATUS_MESSAGE_BYTES && m.ends_with('…'),
            "{}",
            m.len()
        );
        let exact = format!(r#"{{"status":"running","message":"{}"}}"#, "a".repeat(1024));
        let Ok(ServiceStatus::Running { message: Some(m) }) = parse_status(exact.as_bytes()) else {
            panic!("running expected");
        };
        assert_eq!(m.len(), 1024, "a message at the limit is kept whole");
    }
}
