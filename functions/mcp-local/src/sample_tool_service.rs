//! The sample Tool Service behind the baked sample manifest (`manifests/sample.json`): three
//! tools over small in-memory data, with Korean and English text, answering plain JSON.
//!
//! - `POST /tools/search_documents` `{query, limit?, filters?}` → `200` array of documents.
//! - `POST /tools/lookup_glossary` `{term, language?}` → `200` definition, `404` unknown term.
//! - `POST /tools/create_ticket` `{title, priority, details?}` → `201` ticket.
//!
//! `POST /jobs/export_report` and `/jobs/status/<id>` are an asynchronous Tool Service
//! ([`crate::async_jobs`]) for the sample's task tool (CONTRACT K).
//!
//! It also implements a few operations of the Swagger Petstore REST API under `/petstore/v2`
//! (the document is `infra/openapi/petstore.json`), so that a manifest imported from that
//! document (`mcp-manifest import openapi`, CONTRACT M3) has a service to call (X9):
//!
//! - `GET /petstore/v2/pet/{petId}` → `200` pet, `404` unknown or not an integer.
//! - `GET /petstore/v2/pet/findByStatus?status=…` (repeated) → `200` array of pets.
//! - `POST /petstore/v2/pet` (a Pet) → `200` the pet with its new `id`.
//! - `DELETE /petstore/v2/pet/{petId}` (`api_key` header required) → `200`, `404`, or `401`
//!   without the header.
//! - `GET /petstore/v2/store/inventory` (the `api_key` security scheme: header `api_key` with
//!   the Petstore's demo key [`PETSTORE_API_KEY`]) → `200` pets per status, `401` without the
//!   key or with another one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::{Json, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
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

/// The key the Petstore's `GET /store/inventory` accepts: the demo key of the published
/// Petstore document.
pub const PETSTORE_API_KEY: &str = "special-key";

/// The Petstore's pets by id, seeded with three.
type Pets = Arc<Mutex<BTreeMap<i64, Value>>>;

fn seeded_pets() -> Pets {
    let pets = [
        json!({"id": 1, "name": "doggie", "category": {"id": 1, "name": "Dogs"},
               "photoUrls": [], "tags": [{"id": 1, "name": "friendly"}], "status": "available"}),
        json!({"id": 2, "name": "바둑이", "category": {"id": 1, "name": "Dogs"},
               "photoUrls": [], "tags": [], "status": "sold"}),
        json!({"id": 3, "name": "Nabi", "category": {"id": 2, "name": "Cats"},
               "photoUrls": [], "tags": [], "status": "available"}),
    ];
    Arc::new(Mutex::new(
        pets.into_iter()
            .map(|pet| (pet["id"].as_i64().unwrap_or_default(), pet))
            .collect(),
    ))
}

fn pet_not_found() -> (StatusCode, Json<Value>) {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"code": 1, "type": "error", "message": "Pet not found"})),
    )
}

async fn get_pet(State(pets): State<Pets>, Path(id): Path<String>) -> (StatusCode, Json<Value>) {
    let pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    match id.parse::<i64>().ok().and_then(|id| pets.get(&id)) {
        Some(pet) => (StatusCode::OK, Json(pet.clone())),
        None => pet_not_found(),
    }
}

async fn find_pets_by_status(State(pets): State<Pets>, RawQuery(query): RawQuery) -> Json<Value> {
    let wanted: Vec<String> = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .filter(|(name, _)| name == "status")
        .map(|(_, value)| value.into_owned())
        .collect();
    let pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    Json(Value::Array(
        pets.values()
            .filter(|pet| wanted.iter().any(|status| pet["status"] == status.as_str()))
            .cloned()
            .collect(),
    ))
}

async fn add_pet(State(pets): State<Pets>, Json(mut pet): Json<Value>) -> Json<Value> {
    let mut pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    let id = pets.keys().next_back().copied().unwrap_or_default() + 1;
    pet["id"] = json!(id);
    pets.insert(id, pet.clone());
    Json(pet)
}

async fn delete_pet(
    State(pets): State<Pets>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    if !headers.contains_key("api_key") {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"code": 401, "type": "error", "message": "api_key header required"})),
        );
    }
    let mut pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    match id.parse::<i64>().ok().and_then(|id| pets.remove(&id)) {
        Some(_) => (
            StatusCode::OK,
            Json(json!({"code": 200, "type": "unknown", "message": id})),
        ),
        None => pet_not_found(),
    }
}

async fn get_inventory(State(pets): State<Pets>, headers: HeaderMap) -> (StatusCode, Json<Value>) {
    if headers
        .get("api_key")
        .map(axum::http::HeaderValue::as_bytes)
        != Some(PETSTORE_API_KEY.as_bytes())
    {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"code": 401, "type": "error", "message": "a valid api_key is required"})),
        );
    }
    let pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for pet in pets.values() {
        if let Some(status) = pet["status"].as_str() {
            *counts.entry(status.to_string()).or_default() += 1;
        }
    }
    (StatusCode::OK, Json(json!(counts)))
}

/// The Petstore operations under `/petstore/v2`, over fresh in-memory pets.
fn petstore() -> Router {
    Router::new()
        .route("/pet", post(add_pet))
        .route("/pet/findByStatus", get(find_pets_by_status))
        .route("/pet/{petId}", get(get_pet).delete(delete_pet))
        .route("/store/inventory", get(get_inventory))
        .with_state(seeded_pets())
}

/// The sample Tool Service's routes.
pub fn router() -> Router {
    Router::new()
        .route("/tools/search_documents", post(search_documents))
        .route("/tools/lookup_glossary", post(lookup_glossary))
        .route("/tools/create_ticket", post(create_ticket))
        .nest("/petstore/v2", petstore())
        .merge(crate::async_jobs::router())
}
