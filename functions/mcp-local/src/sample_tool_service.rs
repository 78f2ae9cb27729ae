//! The sample Tool Service behind the baked sample manifest (`manifests/sample.json`): three
//! tools over small in-memory data, with Korean and English text, answering plain JSON.
//!
//! - `POST /tools/search_documents` `{query, limit?, filters?}` → `200` array of documents.
//! - `POST /tools/lookup_glossary` `{term, language?}` → `200` definition, `404` unknown term.
//! - `POST /tools/create_ticket` `{title, priority, details?}` → `201` ticket.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::Json;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};

/// The origin the baked sample manifest names for its Tool Service.
pub const SAMPLE_ORIGIN: &str = "http://127.0.0.1:3001";

const DOCUMENTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "DOC-1001",
        "연차 휴가 규정",
        "HR",
        "2026-03-02",
        "연차 휴가는 입사일 기준으로 매년 15일이 부여되며, 미사용 휴가는 다음 해 3월까지 이월할 수 있습니다.",
    ),
    (
        "DOC-1002",
        "Remote work policy",
        "HR",
        "2026-05-20",
        "Employees may work remotely up to three days a week with their manager's approval.",
    ),
    (
        "DOC-2001",
        "VPN 접속 안내",
        "IT",
        "2026-01-15",
        "사외에서 사내망에 접속하려면 VPN 클라이언트를 설치하고 OTP로 인증합니다.",
    ),
    (
        "DOC-2002",
        "Password rotation",
        "IT",
        "2025-11-30",
        "Passwords expire every 90 days; the last five passwords cannot be reused.",
    ),
    (
        "DOC-3001",
        "출장비 정산 절차",
        "Finance",
        "2026-07-01",
        "출장 종료 후 14일 이내에 영수증을 첨부하여 출장비 정산을 신청합니다.",
    ),
];

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

static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

async fn search_documents(Json(args): Json<Value>) -> Json<Value> {
    let query = args["query"].as_str().unwrap_or_default().to_lowercase();
    let limit = args["limit"]
        .as_u64()
        .map_or(5, |n| usize::try_from(n).unwrap_or(5));
    let department = args["filters"]["department"].as_str();
    let updated_after = args["filters"]["updatedAfter"].as_str();
    let words: Vec<&str> = query.split_whitespace().collect();
    let hits: Vec<Value> = DOCUMENTS
        .iter()
        .filter(|(_, title, dept, updated, body)| {
            let text = format!("{title} {body}").to_lowercase();
            words.iter().any(|w| text.contains(w))
                && department.is_none_or(|d| d.eq_ignore_ascii_case(dept))
                && updated_after.is_none_or(|after| *updated >= after)
        })
        .take(limit)
        .map(|(id, title, dept, updated, body)| {
            json!({"id": id, "title": title, "department": dept, "updatedAt": updated, "snippet": body})
        })
        .collect();
    Json(Value::Array(hits))
}

async fn lookup_glossary(Json(args): Json<Value>) -> (StatusCode, Json<Value>) {
    let term = args["term"].as_str().unwrap_or_default();
    let english = args["language"].as_str() == Some("en");
    match GLOSSARY
        .iter()
        .find(|(t, _, _)| t.eq_ignore_ascii_case(term))
    {
        Some((t, ko, en)) => (
            StatusCode::OK,
            Json(json!({"term": t, "definition": if english { en } else { ko }})),
        ),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"message": format!("term '{term}' is not in the glossary")})),
        ),
    }
}

async fn create_ticket(Json(args): Json<Value>) -> (StatusCode, Json<Value>) {
    let n = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
    (
        StatusCode::CREATED,
        Json(json!({
            "ticketId": format!("IT-{:05}", 1000 + n),
            "status": "open",
            "title": args["title"],
            "priority": args["priority"],
        })),
    )
}

/// The sample Tool Service's routes.
pub fn router() -> Router {
    Router::new()
        .route("/tools/search_documents", post(search_documents))
        .route("/tools/lookup_glossary", post(lookup_glossary))
        .route("/tools/create_ticket", post(create_ticket))
}
