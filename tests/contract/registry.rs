//! Loading the registry snapshot from `file:` and `baked:` sources (CONTRACT R1, R2, R3, R5, M).

use mcp_gateway::build::load_snapshot;
use mcp_gateway::registry::RegistryError;
use mcp_gateway::{Profile, RegistrySource};
use serde_json::json;

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gateway-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn r2_baked_sample_loads_with_its_core_route() {
    let snapshot = load_snapshot(&RegistrySource::Baked("sample".into()), Profile::Prod)
        .await
        .unwrap();
    let route = snapshot.route("core").expect("core route");
    assert_eq!(route.server.name, "core-tools");
    let list: serde_json::Value =
        serde_json::from_str(&route.tools_list_result().to_json()).unwrap();
    assert_eq!(
        list["tools"].as_array().unwrap().len(),
        3,
        "the inactive version is not listed"
    );
}

#[tokio::test]
async fn r2_file_source_single_route_manifest_serves_a_fixed_deployment() {
    let manifest = json!({
        "server": {"name": "search-service", "title": "Search", "version": "3.1.0"},
        "tools": [{"name": "find", "inputSchema": {"type": "object"},
                   "_meta": {"endpoint": "https://search.example.internal/find"}}]
    });
    let path = temp_file("single.json", &manifest.to_string());
    let snapshot = load_snapshot(&RegistrySource::File(path), Profile::Prod)
        .await
        .unwrap();
    let route = snapshot.fixed_route("anything").expect("single route");
    assert_eq!(route.server.version, "3.1.0");
    assert!(route.tool("find").is_some());
}

#[tokio::test]
async fn r5_invalid_manifest_is_not_served_and_every_problem_has_its_path() {
    let manifest = json!({
        "manifestVersion": 1,
        "routes": [{"routeKey": "core", "tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "_meta": {"endpoint": "not a url"}},
            {"name": "b", "inputSchema": {"$ref": "https://remote.example/schema.json"},
             "_meta": {"endpoint": "http://127.0.0.1:1/b", "method": "TRACE"}}
        ]}]
    });
    let path = temp_file("invalid.json", &manifest.to_string());
    let error = load_snapshot(&RegistrySource::File(path), Profile::Prod)
        .await
        .unwrap_err();
    let RegistryError::Invalid { problems, .. } = &error else {
        panic!("{error}")
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert!(
        paths.contains(&"routes[0].tools[0]._meta.endpoint"),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"routes[0].tools[1].inputSchema"),
        "remote $ref is not fetched: {paths:?}"
    );
    assert!(
        paths.contains(&"routes[0].tools[1]._meta.method"),
        "{paths:?}"
    );
}

#[tokio::test]
async fn r3_local_profile_falls_back_to_the_baked_sample_and_prod_does_not() {
    let missing = RegistrySource::File("/nonexistent/manifest.json".into());
    let snapshot = load_snapshot(&missing, Profile::Local).await.unwrap();
    assert!(snapshot.route("core").is_some());
    let error = load_snapshot(&missing, Profile::Prod).await.unwrap_err();
    assert!(matches!(error, RegistryError::Unreadable { .. }), "{error}");
    let not_json = temp_file("broken.json", "{\"manifestVersion\": 1,");
    let error = load_snapshot(&RegistrySource::File(not_json), Profile::Prod)
        .await
        .unwrap_err();
    assert!(matches!(error, RegistryError::NotJson { .. }), "{error}");
    let error = load_snapshot(&RegistrySource::Baked("nope".into()), Profile::Prod)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no baked manifest named 'nope'"),
        "{error}"
    );
}

#[tokio::test]
async fn r1_a_file_over_the_size_limit_is_refused_and_a_missing_one_or_a_directory_is_unreadable() {
    use mcp_gateway::registry::{FileSource, LoadLimits, load_from};

    let limits = LoadLimits {
        timeout: std::time::Duration::from_secs(5),
        max_bytes: 1024,
        max_response_bytes: 5 << 20,
    };
    let manifest = json!({"tools": [{"name": "pad", "description": "x".repeat(2048),
                                     "inputSchema": {"type": "object"},
                                     "_meta": {"endpoint": "http://127.0.0.1:9/pad"}}]});
    let big = temp_file("big.json", &manifest.to_string());
    let error = load_from(&FileSource(big.clone()), limits)
        .await
        .unwrap_err();
    super::sources::assert_too_large(&error, 1024);
    // The same file under a limit it fits is served.
    let roomy = LoadLimits {
        max_bytes: 1 << 20,
        ..limits
    };
    let snapshot = load_from(&FileSource(big), roomy).await.unwrap();
    assert!(snapshot.fixed_route("core").unwrap().tool("pad").is_some());

    let error = load_from(&FileSource("/nonexistent/manifest.json".into()), limits)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        RegistryError::Unreadable {
            source_name: "file:/nonexistent/manifest.json".into(),
            reason: "No such file or directory (os error 2)".into(),
        }
        .to_string()
    );
    let error = load_from(
        &FileSource(std::env::temp_dir().display().to_string()),
        roomy,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, RegistryError::Unreadable { reason, .. } if reason.contains("directory")),
        "{error}"
    );
}
