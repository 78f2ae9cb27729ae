//! Whole-document imports (CONTRACT M2, M3) on small documents made for each rule.

use serde_json::{Value, json};

use super::*;

pub(super) fn document(paths: &Value) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "2.1.0"},
        "servers": [{"url": "https://pets.example.test/v1"}],
        "paths": paths,
        "components": {"schemas": {
            "Pet": {"type": "object", "required": ["name"], "properties": {
                "id": {"type": "integer"}, "name": {"type": "string"}}}
        }}
    })
}

pub(super) fn import(document: &Value, options: &Options) -> Outcome {
    import_document(document, Dialect::V3_0, options)
}

pub(super) fn tool<'a>(outcome: &'a Outcome, name: &str) -> &'a Value {
    outcome
        .tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", outcome.lines))
}

pub(super) fn names(outcome: &Outcome) -> Vec<&str> {
    outcome
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

#[test]
fn m2_a_body_member_that_collides_with_a_parameter_makes_the_body_whole() {
    let outcome = import(
        &document(&json!({"/pets/{id}": {"put": {
            "operationId": "updatePet",
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}}}}
        }}})),
        &Options::default(),
    );
    let tool = tool(&outcome, "updatePet");
    assert_eq!(
        tool["_meta"]["parameters"],
        json!({"id": "path", "body": "wholeBody"})
    );
    assert_eq!(tool["inputSchema"]["required"], json!(["id", "body"]));
    assert_eq!(
        tool["inputSchema"]["properties"]["body"]["properties"]["id"]["type"],
        "string"
    );
    assert_eq!(
        tool["_meta"]["endpoint"],
        "https://pets.example.test/v1/pets/{id}"
    );
    assert_eq!(tool["_meta"]["method"], "PUT");
    assert_eq!(tool["_meta"]["version"], "2.1.0");
    assert!(tool.get("annotations").is_none());
}

#[test]
fn m2_an_optional_request_body_makes_no_member_required() {
    let outcome = import(
        &document(&json!({"/pets": {"post": {"operationId": "addPet",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}}})),
        &Options::default(),
    );
    let tool = tool(&outcome, "addPet");
    assert!(tool["inputSchema"].get("required").is_none(), "{tool}");
    assert_eq!(
        tool["_meta"]["parameters"],
        json!({"id": "body", "name": "body"})
    );
}

#[test]
fn m3_names_are_made_to_fit_and_unique() {
    let get = |id: &str| json!({"get": {"operationId": id}});
    let outcome = import(
        &document(&json!({
            "/a": get("list"),
            "/b": get("list"),
            "/c": get("pets.list v2"),
            "/d/{x}": {"get": {"parameters": [{"name": "x", "in": "path", "required": true}]}}
        })),
        &Options::default(),
    );
    assert_eq!(
        names(&outcome),
        ["list", "list_2", "pets_list_v2", "get_d_x"]
    );
    assert!(outcome.lines.contains(
        &"warning: GET /b (list): tool name 'list' is taken: named 'list_2'".to_string()
    ));
    assert!(outcome.lines.contains(&"warning: GET /c (pets.list v2): operationId 'pets.list v2' is no tool name (1-64 characters of [A-Za-z0-9_-]): named 'pets_list_v2'".to_string()));
}

#[test]
fn m3_secured_operations_warn_or_are_skipped_with_skip_secured() {
    let mut paths = document(&json!({
        "/open": {"get": {"operationId": "open", "security": []}},
        "/closed": {"get": {"operationId": "closed"}}
    }));
    paths["security"] = json!([{"api_key": []}]);
    let outcome = import(&paths, &Options::default());
    assert_eq!(names(&outcome), ["open", "closed"]);
    assert_eq!(
        outcome.lines,
        [
            "warning: GET /closed (closed): secured by 'api_key': no --credential binds it, so the gateway sends it no credentials"
        ]
    );
    let outcome = import(
        &paths,
        &Options {
            skip_secured: true,
            ..Options::default()
        },
    );
    assert_eq!(names(&outcome), ["open"]);
    assert_eq!(outcome.skipped, 1);
    assert_eq!(
        outcome.lines,
        ["skipped GET /closed (closed): secured by 'api_key' (--skip-secured)"]
    );
}

#[test]
fn m3_filters_select_by_tag_operation_and_method() {
    let paths = document(&json!({
        "/pets": {
            "get": {"operationId": "listPets", "tags": ["pets"]},
            "post": {"operationId": "addPet", "tags": ["pets"]}
        },
        "/users": {"get": {"operationId": "listUsers", "tags": ["users"]}}
    }));
    let filtered = |filters: Filters| {
        let outcome = import(
            &paths,
            &Options {
                filters,
                ..Options::default()
            },
        );
        names(&outcome)
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let strings = |list: &[&str]| list.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    assert_eq!(
        filtered(Filters {
            tags: strings(&["pets"]),
            ..Filters::default()
        }),
        ["listPets", "addPet"]
    );
    assert_eq!(
        filtered(Filters {
            methods: strings(&["get"]),
            ..Filters::default()
        }),
        ["listPets", "listUsers"]
    );
    assert_eq!(
        filtered(Filters {
            operations: strings(&["addPet", "listUsers"]),
            ..Filters::default()
        }),
        ["addPet", "listUsers"]
    );
    assert_eq!(
        filtered(Filters {
            tags: strings(&["pets"]),
            methods: strings(&["GET"]),
            ..Filters::default()
        }),
        ["listPets"]
    );
    let none = Filters {
        tags: strings(&["nope"]),
        ..Filters::default()
    };
    let outcome = import(
        &paths,
        &Options {
            filters: none,
            ..Options::default()
        },
    );
    assert_eq!(
        outcome.refusal(&Filters {
            tags: strings(&["nope"]),
            ..Filters::default()
        }),
        Some(vec![
            "no operation matches --tag, --operation and --method: nothing written".to_string()
        ])
    );
}

#[test]
fn m3_a_missing_server_needs_base_url_and_a_protocol_relative_one_gets_https() {
    let mut paths = document(&json!({"/pets": {"get": {"operationId": "listPets"}}}));
    paths.as_object_mut().unwrap().remove("servers");
    let outcome = import(&paths, &Options::default());
    assert!(outcome.tools.is_empty());
    assert_eq!(
        outcome.refusal(&Filters::default()),
        Some(vec![
            "the document names no server URL: give --base-url".to_string()
        ])
    );
    let outcome = import(
        &paths,
        &Options {
            base_url: Some(Url::parse("https://api.example.test/base").unwrap()),
            ..Options::default()
        },
    );
    assert_eq!(
        tool(&outcome, "listPets")["_meta"]["endpoint"],
        "https://api.example.test/base/pets"
    );

    paths["servers"] = json!([{"url": "//cdn.example.test/api/"}]);
    let outcome = import(&paths, &Options::default());
    assert_eq!(
        tool(&outcome, "listPets")["_meta"]["endpoint"],
        "https://cdn.example.test/api/pets"
    );
}

#[test]
fn m3_what_the_gateway_cannot_send_is_skipped_with_a_reason() {
    let outcome = import(
        &document(&json!({
            "/trace": {"trace": {"operationId": "tracing"}},
            "/upload": {"post": {"operationId": "upload", "requestBody": {"content": {
                "multipart/form-data": {"schema": {"type": "object"}}}}}},
            "/session": {"get": {"operationId": "session", "parameters": [
                {"name": "Mcp-Session-Id", "in": "header", "schema": {"type": "string"}}]}},
            "/cookie": {"get": {"operationId": "cookie", "parameters": [
                {"name": "sid", "in": "cookie", "required": true, "schema": {"type": "string"}}]}},
            "/external": {"get": {"operationId": "external", "parameters": [
                {"$ref": "common.yaml#/components/parameters/Limit"}]}},
            "/filter": {"get": {"operationId": "filter", "parameters": [
                {"name": "filter", "in": "query", "style": "deepObject",
                 "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}]}},
            "/accept": {"get": {"operationId": "accept", "parameters": [
                {"name": "Accept", "in": "header", "schema": {"type": "string"}},
                {"name": "X-Tenant", "in": "header", "schema": {"type": "string"}}]}}
        })),
        &Options::default(),
    );
    assert_eq!(names(&outcome), ["accept"]);
    assert_eq!(outcome.skipped, 6);
    assert_eq!(
        outcome.lines,
        [
            "skipped TRACE /trace (tracing): method TRACE is not one the gateway calls (GET, HEAD, POST, PUT, PATCH, DELETE)",
            "skipped POST /upload (upload): request body is multipart/form-data, not JSON",
            "skipped GET /session (session): header parameter 'Mcp-Session-Id' is a header the gateway reserves",
            "skipped GET /cookie (cookie): cookie parameter 'sid' (required) cannot be sent: the gateway sends no cookies",
            "skipped GET /external (external): parameter 'common.yaml#/components/parameters/Limit' is an external reference (another file or URL), which is not followed",
            "skipped GET /filter (filter): query parameter 'filter' is an object, which the gateway cannot send in the query",
            "warning: GET /accept (accept): header parameter 'Accept' ignored: OpenAPI ignores Accept, Content-Type and Authorization header parameters",
        ]
    );
    assert_eq!(
        tool(&outcome, "accept")["_meta"]["parameters"],
        json!({"X-Tenant": "header"})
    );
}

#[test]
fn m3_path_parameters_merge_with_operation_parameters_and_recursive_bodies_get_defs() {
    let mut paths = document(&json!({"/nodes/{id}": {
        "parameters": [
            {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "depth", "in": "query", "schema": {"type": "integer"}}
        ],
        "post": {
            "operationId": "addNode",
            "parameters": [{"name": "depth", "in": "query", "description": "how deep",
                            "schema": {"type": "integer", "nullable": true}}],
            "requestBody": {"$ref": "#/components/requestBodies/Node"}
        }
    }}));
    paths["components"]["requestBodies"] = json!({"Node": {"required": true, "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}});
    paths["components"]["schemas"]["Node"] = json!({"type": "object", "required": ["label"], "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}});
    let outcome = import(&paths, &Options::default());
    let tool = tool(&outcome, "addNode");
    let schema = &tool["inputSchema"];
    assert_eq!(
        schema["properties"]["depth"],
        json!({"type": ["integer", "null"], "description": "how deep"})
    );
    assert_eq!(schema["required"], json!(["id", "label"]));
    assert_eq!(
        schema["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert_eq!(
        schema["$defs"]["Node"]["properties"]["label"]["type"],
        "string"
    );
    assert_eq!(
        tool["_meta"]["parameters"],
        json!({"id": "path", "depth": "query", "label": "body", "children": "body"})
    );
    let manifest = manifest::single_route("nodes", &paths["info"], outcome.tools.clone());
    assert!(manifest::checked_text(&manifest, "nodes", 1 << 20).is_ok());
}

#[test]
fn m3_no_operation_is_a_refusal() {
    let outcome = import(
        &document(&json!({"/upload": {"post": {"requestBody": {"content": {
            "application/x-www-form-urlencoded": {}}}}}})),
        &Options::default(),
    );
    assert_eq!(
        outcome.refusal(&Filters::default()),
        Some(vec![
            "no operation could be imported (skipped 1): nothing written".to_string()
        ])
    );
    let outcome = import(&document(&json!({})), &Options::default());
    assert_eq!(
        outcome.refusal(&Filters::default()),
        Some(vec![
            "the document has no operation to import: nothing written".to_string()
        ])
    );
}

/// A document whose `S0` (a POST body) uses `S1` twice, `S1` uses `S2` twice... `S39`:
/// inlined at every use, it would expand to 2^40 schemas.
fn ref_bomb() -> Value {
    let mut schemas = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/components/schemas/S{}", i + 1)});
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    schemas.insert("S40".into(), json!({"type": "string"}));
    let mut document = document(&json!({
        "/x": {"post": {"operationId": "op", "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/S0"}}}}}},
        "/pets": {"get": {"operationId": "listPets"}}
    }));
    document["components"]["schemas"] = Value::Object(schemas);
    document
}

#[test]
fn m3_repeated_refs_that_expand_past_the_budget_skip_the_operation() {
    let started = std::time::Instant::now();
    let outcome = import(&ref_bomb(), &Options::default());
    assert_eq!(names(&outcome), ["listPets"]);
    assert_eq!(
        outcome.lines,
        ["skipped POST /x (op): its schemas expand to more than 200000 nodes (repeated $refs)"]
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn m3_the_tools_schemas_over_max_bytes_stop_the_import() {
    let mut document = ref_bomb();
    let mut paths = serde_json::Map::new();
    for i in 0..50 {
        // S30 expands to 2^10 schemas: each operation fits, all of them do not.
        paths.insert(
            format!("/p{i}"),
            json!({"post": {"operationId": format!("p{i}"), "requestBody": {"content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/S30"}}}}}}),
        );
    }
    document["paths"] = Value::Object(paths);
    let options = Options {
        max_bytes: Some(200_000),
        ..Options::default()
    };
    let outcome = import(&document, &options);
    assert!(outcome.tools.len() < 50);
    assert_eq!(
        outcome.refusal(&Filters::default()),
        Some(vec![
            "the manifest would be over the limit of 200000 bytes (--max-bytes): the tools' input schemas alone take more; nothing written".to_string()
        ])
    );
}

#[test]
fn m3_a_schema_ref_cycle_that_never_descends_is_skipped_and_a_recursive_one_is_not() {
    let mut doc = document(&json!({
        "/loop": {"post": {"operationId": "loop", "requestBody": {"content": {"application/json": {
            "schema": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}}}}}},
        "/any": {"post": {"operationId": "any", "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/C"}}}}}},
        "/tree": {"post": {"operationId": "tree", "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/T"}}}}}}
    }));
    doc["components"]["schemas"] = json!({
        "A": {"$ref": "#/components/schemas/B"},
        "B": {"$ref": "#/components/schemas/A"},
        "C": {"anyOf": [{"$ref": "#/components/schemas/C"}, {"type": "string"}]},
        "T": {"type": "object", "properties": {"kids": {"type": "array", "items": {
            "allOf": [{"$ref": "#/components/schemas/T"}]}}}}
    });
    let outcome = import(&doc, &Options::default());
    assert_eq!(names(&outcome), ["tree"]);
    assert_eq!(
        outcome.lines,
        [
            "skipped POST /loop (loop): request body: '#/components/schemas/A' is a $ref cycle",
            "skipped POST /any (any): request body: '#/components/schemas/C' is a $ref cycle",
        ]
    );
}

#[test]
fn m3_refs_must_point_where_their_kind_of_object_lives() {
    let mut doc = document(&json!({
        "/server": {"post": {"operationId": "server", "requestBody": {"content": {"application/json": {
            "schema": {"type": "object", "properties": {"u": {"$ref": "#/servers/0"}}}}}}}},
        "/root": {"get": {"operationId": "root", "parameters": [
            {"name": "q", "in": "query", "schema": {"$ref": "#"}}]}},
        "/schemes": {"get": {"operationId": "schemes", "parameters": [
            {"name": "q", "in": "query", "schema": {"$ref": "#/components/securitySchemes/key"}}]}},
        "/param": {"get": {"operationId": "param", "parameters": [{"$ref": "#/components/schemas/Pet"}]}},
        "/body": {"post": {"operationId": "body", "requestBody": {"$ref": "#/info"}}},
        "/item": {"$ref": "#/servers/0"},
        "/fine": {"get": {"operationId": "fine", "parameters": [
            {"name": "limit", "in": "query", "schema": {"$ref": "#/components/parameters/Limit/schema"}}]}}
    }));
    doc["components"]["securitySchemes"] =
        json!({"key": {"type": "apiKey", "in": "header", "name": "X-Key"}});
    doc["components"]["parameters"] =
        json!({"Limit": {"name": "limit", "in": "query", "schema": {"type": "integer"}}});
    let outcome = import(&doc, &Options::default());
    assert_eq!(names(&outcome), ["fine"]);
    assert_eq!(
        outcome.lines,
        [
            "skipped POST /server (server): request body: schema reference '#/servers/0' points outside the document's schemas",
            "skipped GET /root (root): parameter 'q': schema reference '#' points outside the document's schemas",
            "skipped GET /schemes (schemes): parameter 'q': schema reference '#/components/securitySchemes/key' points outside the document's schemas",
            "skipped GET /param (param): parameter '#/components/schemas/Pet' points outside the document's parameters (#/components/parameters/)",
            "skipped POST /body (body): request body '#/info' points outside the document's request bodies (#/components/requestBodies/)",
            "skipped /item: its path item '#/servers/0' points outside the document's path items (#/components/pathItems/, #/paths/)",
        ]
    );
    let schema = serde_json::to_string(&tool(&outcome, "fine")["inputSchema"]).unwrap();
    assert!(!schema.contains("example.test"), "{schema}");
}

#[test]
fn m3_ref_cycles_of_parameters_request_bodies_and_path_items_are_named_cycles() {
    let mut doc = document(&json!({
        "/p": {"get": {"operationId": "p", "parameters": [{"$ref": "#/components/parameters/A"}]}},
        "/b": {"post": {"operationId": "b", "requestBody": {"$ref": "#/components/requestBodies/A"}}},
        "/i": {"$ref": "#/components/pathItems/A"}
    }));
    doc["components"]["parameters"] = json!({
        "A": {"$ref": "#/components/parameters/B"}, "B": {"$ref": "#/components/parameters/A"}});
    doc["components"]["requestBodies"] = json!({"A": {"$ref": "#/components/requestBodies/A"}});
    doc["components"]["pathItems"] = json!({"A": {"$ref": "#/components/pathItems/A"}});
    let outcome = import(&doc, &Options::default());
    assert_eq!(
        outcome.lines,
        [
            "skipped GET /p (p): parameter '#/components/parameters/A' is a $ref cycle",
            "skipped POST /b (b): request body '#/components/requestBodies/A' is a $ref cycle",
            "skipped /i: its path item '#/components/pathItems/A' is a $ref cycle",
        ]
    );
}

#[test]
fn m3_server_urls_with_user_info_or_braces_in_a_default_skip_only_their_operation() {
    let outcome = import(
        &document(&json!({
            "/secret": {"get": {"operationId": "secret",
                "servers": [{"url": "https://svc:hunter2@internal.example.test"}]}},
            "/braces": {"get": {"operationId": "braces", "servers": [{
                "url": "https://api.example.test/{base}",
                "variables": {"base": {"default": "v1/{tenant}"}}}]}},
            "/pets": {"get": {"operationId": "listPets"}}
        })),
        &Options::default(),
    );
    assert_eq!(names(&outcome), ["listPets"]);
    assert_eq!(
        outcome.lines,
        [
            "skipped GET /secret (secret): the server URL carries a user name or password",
            "skipped GET /braces (braces): server variable 'base' of 'https://api.example.test/{base}' has a default with '{' or '}', which no URL holds",
        ]
    );
    let manifest = manifest::single_route("pets", &json!({}), outcome.tools);
    assert!(manifest::checked_text(&manifest, "pets", 1 << 20).is_ok());
}

#[test]
fn m3_what_was_silently_dropped_is_now_said() {
    let outcome = import(
        &document(&json!({
            "/twice": {"get": {"operationId": "twice", "parameters": [
                {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                {"name": "limit", "in": "query", "schema": {"type": "string"}}]}},
            "/ref": {"post": {"operationId": "badRef", "requestBody": {"content": {"application/json": {
                "schema": {"type": "object", "properties": {"a": {"$ref": 7}}}}}}}},
            "/param-ref": {"get": {"operationId": "badParamRef", "parameters": [{"$ref": ["x"]}]}},
            "/pets": {"post": {"operationId": "addPet", "requestBody": {"content": {"application/json": {
                "schema": {"type": "object", "required": ["name", 1, true], "properties": {
                    "name": {"type": "string"},
                    "tag": {"type": []},
                    "file": {"type": ["string", "file"]},
                    "age": {"type": "integer", "required": true}}}}}}}}
        })),
        &Options::default(),
    );
    assert_eq!(names(&outcome), ["addPet"]);
    assert_eq!(
        outcome.lines,
        [
            "skipped GET /twice (twice): query parameter 'limit' is listed twice",
            "skipped POST /ref (badRef): request body: $ref 7 is not a string",
            "skipped GET /param-ref (badParamRef): parameter $ref [\"x\"] is not a string",
            "warning: POST /pets (addPet): dropped required entries 1, true of the request body: not property names",
            "warning: POST /pets (addPet): dropped type [] of 'tag': it names no type",
            "warning: POST /pets (addPet): dropped type \"file\" of 'file': not a JSON Schema type",
            "warning: POST /pets (addPet): dropped required true of 'age': not a list of property names (a property is required by its object's 'required' list)",
        ]
    );
    let schema = &tool(&outcome, "addPet")["inputSchema"];
    assert_eq!(schema["properties"]["file"]["type"], json!(["string"]));
    assert_eq!(schema["properties"]["tag"], json!({}));
}

#[test]
fn m3_a_path_level_parameter_is_still_replaced_by_the_operations() {
    let outcome = import(
        &document(&json!({"/pets": {
            "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
            "get": {"operationId": "listPets", "parameters": [
                {"name": "limit", "in": "query", "schema": {"type": "string"}}]}
        }})),
        &Options::default(),
    );
    assert!(outcome.lines.is_empty(), "{:?}", outcome.lines);
    assert_eq!(
        tool(&outcome, "listPets")["inputSchema"]["properties"]["limit"]["type"],
        "string"
    );
}
