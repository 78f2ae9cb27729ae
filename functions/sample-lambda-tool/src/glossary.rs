//! The sample's glossary and the tools that answer from it alone (`lookup_glossary`,
//! `list_glossary_terms`, `define_term`): pure functions of the tool name and its arguments.

use serde_json::{Value, json};

use crate::tool_error::ToolError;

/// The glossary: term, Korean definition, English definition (the entries of the sample HTTP
/// Tool Service in `functions/mcp-local`).
const GLOSSARY: &[(&str, &str, &str)] = &[
    (
        "휴가",
        "근로자가 근로 의무를 면제받고 쉬는 기간.",
        "A period in which an employee is excused from work.",
    ),
    (
        "SLA",
        "서비스 수준 협약: 서비스 제공자가 보장하는 가용성과 응답 시간.",
        "Service level agreement: the availability and response times a provider guarantees.",
    ),
    ("OTP", "일회용 비밀번호.", "One-time password."),
];

/// The string argument `name`, or an error saying it is missing.
fn string_argument<'a>(arguments: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    arguments[name].as_str().ok_or_else(|| {
        ToolError::new(
            "InvalidArguments",
            format!("'{name}' is required and must be a string"),
        )
    })
}

/// The glossary entry for `term` (case-insensitively for Latin letters).
fn entry(term: &str) -> Result<&'static (&'static str, &'static str, &'static str), ToolError> {
    GLOSSARY
        .iter()
        .find(|(known, _, _)| known.eq_ignore_ascii_case(term))
        .ok_or_else(|| {
            ToolError::new(
                "TermNotFound",
                format!("term '{term}' is not in the glossary"),
            )
        })
}

/// `lookup_glossary`: `{"term", "definition"}`, in English when `language` is `en`.
pub(crate) fn lookup(arguments: &Value) -> Result<Value, ToolError> {
    let (term, korean, english) = entry(string_argument(arguments, "term")?)?;
    let definition = if arguments["language"].as_str() == Some("en") {
        english
    } else {
        korean
    };
    Ok(json!({"term": term, "definition": definition}))
}

/// The answer of every tool that needs neither the client context nor time: a pure function of
/// the tool name and its arguments.
pub(crate) fn answer(tool: &str, arguments: &Value) -> Result<Value, ToolError> {
    match tool {
        "lookup_glossary" => lookup(arguments),
        "list_glossary_terms" => Ok(GLOSSARY.iter().map(|(term, _, _)| json!(term)).collect()),
        "define_term" => {
            let (_, korean, _) = entry(string_argument(arguments, "term")?)?;
            Ok(Value::String((*korean).to_string()))
        }
        other => Err(ToolError::new(
            "UnknownTool",
            format!("unknown tool '{other}'"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_is_pure_for_the_context_free_tools() {
        assert_eq!(
            answer(
                "lookup_glossary",
                &json!({"term": "휴가", "language": "en"})
            ),
            Ok(json!({"term": "휴가",
                "definition": "A period in which an employee is excused from work."}))
        );
        assert_eq!(
            answer("echo_client_context", &json!({})).unwrap_err().kind,
            "UnknownTool"
        );
    }
}
