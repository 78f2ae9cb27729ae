//! Contract tests of the gateway service through its real `http::Request` → `http::Response`
//! pipeline, with a real Tool Service on loopback (CONTRACT P, H, C, L, T, X, E), and the tool
//! result formats (`structuredContent`, MCP-native results).

mod answer_redaction;
mod arguments_as_sent;
mod auth_hostile;
mod auth_oauth;
mod auth_tokens;
mod authorization;
mod authorization_callers;
mod authorization_json;
mod cors;
mod golden;
mod hostile_input;
mod lambda_deadline;
mod lambda_events;
mod lambda_tools;
mod manifests;
mod modern;
mod outbound_credential_failures;
mod outbound_credentials;
mod outbound_oauth2;
mod outbound_oauth2_server;
mod outbound_sigv4;
mod registry;
mod rejections;
mod rest_calls;
mod search_quality;
mod sources;
mod tasks;
mod tasks_acceptance;
mod tool_faults;
mod tool_results;
mod tool_search;
mod tool_service;
mod tools_list_pages;
mod trace_context;
mod trace_export;
