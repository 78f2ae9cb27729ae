//! An asynchronous Tool Service (CONTRACT K2, docs/tasks.md): long work that a call starts and
//! a status location reports, for the sample manifest's task tool and the tests.
//!
//! - `POST /jobs/export_report` `{"rows": <n>, "seconds"?: <s>, "outcome"?: "succeed"|"fail"}`:
//!   with `Prefer: respond-async`, `202 Accepted`, `Location: /jobs/status/<id>`,
//!   `Retry-After: 1` and `{"status": "running"}`; without it, the work is done before the
//!   answer (`200` with the report) when it takes at most 5 s, else `202` as well.
//! - `GET /jobs/status/<id>`: `200` `{"status": "running", "message": "<p>% done"}`, then
//!   `{"status": "succeeded", "result": {"report", "rows"}}` or `{"status": "failed", "error":
//!   {"message"}}`; `{"status": "canceled"}` after a cancel; `404` for an unknown id.
//! - `DELETE /jobs/status/<id>`: `202` when the work was running (it is canceled), `200` when
//!   it had ended, `404` for an unknown id.
//!
//! Jobs live in memory: the store is the service's, the gateway keeps nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Json, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The longest work done before answering when no asynchronous answer was asked for.
const MAX_SYNC_WORK: Duration = Duration::from_secs(5);
/// Most jobs kept; the oldest is dropped beyond it.
const MAX_JOBS: usize = 10_000;

#[derive(Debug, Clone)]
struct Job {
    started: Instant,
    work: Duration,
    rows: u64,
    fails: bool,
    canceled: bool,
}

impl Job {
    fn status(&self) -> Value {
        if self.canceled {
            return json!({"status": "canceled"});
        }
        let elapsed = self.started.elapsed();
        if elapsed < self.work {
            let done = (elapsed.as_secs_f64() / self.work.as_secs_f64() * 100.0).floor();
            return json!({"status": "running", "message": format!("{done}% done")});
        }
        if self.fails {
            return json!({"status": "failed", "error": {"message": "the report source is unavailable"}});
        }
        json!({"status": "succeeded", "result": self.result()})
    }

    fn result(&self) -> Value {
        json!({"report": format!("report-{}-rows", self.rows), "rows": self.rows})
    }
}

type Jobs = Arc<Mutex<HashMap<String, Job>>>;

fn bad(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"message": message}))).into_response()
}

async fn export_report(
    State(jobs): State<Jobs>,
    headers: HeaderMap,
    Json(arguments): Json<Value>,
) -> Response {
    let Some(rows) = arguments.get("rows").and_then(Value::as_u64) else {
        return bad("rows must be a whole number");
    };
    let seconds = arguments
        .get("seconds")
        .and_then(Value::as_f64)
        .unwrap_or(3.0);
    if !(0.0..=86_400.0).contains(&seconds) {
        return bad("seconds must be from 0 to 86400");
    }
    let job = Job {
        started: Instant::now(),
        work: Duration::from_secs_f64(seconds),
        rows,
        fails: arguments.get("outcome").and_then(Value::as_str) == Some("fail"),
        canceled: false,
    };
    let asks_async = headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim().eq_ignore_ascii_case("respond-async"));
    if !asks_async && job.work <= MAX_SYNC_WORK {
        tokio::time::sleep(job.work).await;
        if job.fails {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"message": "the report source is unavailable"})),
            )
                .into_response();
        }
        return (StatusCode::OK, Json(job.result())).into_response();
    }
    let id = uuid::Uuid::new_v4().to_string();
    {
        let mut jobs = jobs.lock().unwrap_or_else(PoisonError::into_inner);
        if jobs.len() >= MAX_JOBS
            && let Some(oldest) = jobs
                .iter()
                .min_by_key(|(_, job)| job.started)
                .map(|(id, _)| id.clone())
        {
            jobs.remove(&oldest);
        }
        jobs.insert(id.clone(), job);
    }
    (
        StatusCode::ACCEPTED,
        [
            (header::LOCATION, format!("/jobs/status/{id}")),
            (header::RETRY_AFTER, "1".to_string()),
        ],
        Json(json!({"status": "running"})),
    )
        .into_response()
}

async fn job_status(State(jobs): State<Jobs>, Path(id): Path<String>) -> Response {
    let jobs = jobs.lock().unwrap_or_else(PoisonError::into_inner);
    match jobs.get(&id) {
        Some(job) => (StatusCode::OK, Json(job.status())).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"message": "no such job"})),
        )
            .into_response(),
    }
}

async fn cancel_job(State(jobs): State<Jobs>, Path(id): Path<String>) -> Response {
    let mut jobs = jobs.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(job) = jobs.get_mut(&id) else {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"message": "no such job"})),
        )
            .into_response();
    };
    let running = !job.canceled && job.started.elapsed() < job.work;
    if running {
        job.canceled = true;
        return (StatusCode::ACCEPTED, Json(json!({"status": "canceled"}))).into_response();
    }
    (StatusCode::OK, Json(job.status())).into_response()
}

/// The asynchronous Tool Service's routes, over a fresh job store.
pub fn router() -> Router {
    Router::new()
        .route("/jobs/export_report", post(export_report))
        .route("/jobs/status/{id}", get(job_status).delete(cancel_job))
        .with_state(Jobs::default())
}
