//! `mcp-manifest import openapi` (CONTRACT M2, M3) on the documents of `@readme/oas-examples`
//! (installed under tests/openapi by tests/run.sh): every document imports into a manifest that
//! `mcp-manifest validate` accepts or is refused with exit 1 and a clear message, never a panic;
//! the Petstore tools field by field; exit codes, `--output` and `--merge` end to end.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/openapi/node_modules/@readme/oas-examples"
);

/// The documents the import refuses (exit 1, nothing written), with what their message says.
/// The three without an absolute server URL import once given --base-url.
const REFUSED: [(&str, &str); 31] = [
    ("2.0/json/api-with-examples.json", "is Swagger 2.0"),
    ("2.0/json/petstore-expanded.json", "is Swagger 2.0"),
    ("2.0/json/petstore-minimal.json", "is Swagger 2.0"),
    ("2.0/json/petstore-simple.json", "is Swagger 2.0"),
    (
        "2.0/json/petstore-with-external-docs.json",
        "is Swagger 2.0",
    ),
    ("2.0/json/petstore.json", "is Swagger 2.0"),
    ("2.0/json/schema-circular.json", "is Swagger 2.0"),
    ("2.0/yaml/api-with-examples.yaml", "is Swagger 2.0"),
    ("2.0/yaml/petstore-expanded.yaml", "is Swagger 2.0"),
    ("2.0/yaml/petstore-minimal.yaml", "is Swagger 2.0"),
    ("2.0/yaml/petstore-simple.yaml", "is Swagger 2.0"),
    (
        "2.0/yaml/petstore-with-external-docs.yaml",
        "is Swagger 2.0",
    ),
    ("2.0/yaml/petstore.yaml", "is Swagger 2.0"),
    ("2.0/yaml/schema-circular.yaml", "is Swagger 2.0"),
    (
        "3.0/json/file-uploads.json",
        "no operation could be imported",
    ),
    ("3.0/json/form-data.json", "no operation could be imported"),
    (
        "3.0/json/openapi-workshop/title.json",
        "the document has no operation",
    ),
    (
        "3.0/json/parameters-cookies.json",
        "no operation could be imported",
    ),
    (
        "3.0/json/parameters-extreme.json",
        "no operation could be imported",
    ),
    (
        "3.0/json/parameters-style.json",
        "no operation could be imported",
    ),
    (
        "3.0/json/schema-encoding-style.json",
        "no operation could be imported",
    ),
    (
        "3.1/json/schema-encoding-style.json",
        "no operation could be imported",
    ),
    ("3.1/json/webhooks.json", "the document has no operation"),
    (
        "3.0/yaml/file-uploads.yaml",
        "no operation could be imported",
    ),
    ("3.0/yaml/form-data.yaml", "no operation could be imported"),
    (
        "3.0/yaml/parameters-cookies.yaml",
        "no operation could be imported",
    ),
    (
        "3.0/yaml/parameters-extreme.yaml",
        "no operation could be imported",
    ),
    (
        "3.0/yaml/parameters-style.yaml",
        "no operation could be imported",
    ),
    (
        "3.0/yaml/schema-encoding-style.yaml",
        "no operation could be imported",
    ),
    (
        "3.1/yaml/schema-encoding-style.yaml",
        "no operation could be imported",
    ),
    ("3.1/yaml/webhooks.yaml", "the document has no operation"),
];

/// The documents with a relative or missing server URL: refused without --base-url.
const NEED_BASE_URL: [&str; 6] = [
    "3.0/json/callbacks.json",
    "3.0/json/link-example.json",
    "3.0/json/server-path-level.json",
    "3.0/yaml/callbacks.yaml",
    "3.0/yaml/link-example.yaml",
    "3.0/yaml/server-path-level.yaml",
];

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-manifest"))
        .args(args)
        .output()
        .expect("mcp-manifest runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

fn corpus() -> PathBuf {
    let corpus = PathBuf::from(CORPUS);
    assert!(
        corpus.join("3.0/json/petstore.json").is_file(),
        "the OpenAPI corpus is missing at {}: run tests/run.sh (it installs tests/openapi's npm packages), or `npm ci` in tests/openapi",
        corpus.display()
    );
    corpus
}

fn doc(relative: &str) -> String {
    corpus().join(relative).to_string_lossy().into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-manifest-openapi-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn documents(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            documents(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
        {
            out.push(path);
        }
    }
}

/// Imports `spec` to a file and checks that `validate` accepts it; the exit code and stderr.
fn import_and_validate(spec: &str, extra: &[&str], out: &Path) -> (Option<i32>, String) {
    let _ = std::fs::remove_file(out);
    let output = out.to_string_lossy();
    let mut args = vec![
        "import", "openapi", spec, "--route", "corpus", "--output", &output,
    ];
    args.extend_from_slice(extra);
    let import = run(&args);
    match import.code {
        Some(0) => {
            let validate = run(&["validate", "--route", "corpus", &output]);
            assert_eq!(
                validate.code,
                Some(0),
                "{spec}: validate refused the imported manifest:\n{}",
                validate.stdout
            );
        }
        Some(1) => assert!(!out.exists(), "{spec}: exit 1 but a manifest was written"),
        other => panic!(
            "{spec}: exit {other:?} (a panic or a signal?)\n{}",
            import.stderr
        ),
    }
    (import.code, import.stderr)
}

#[test]
fn m3_every_corpus_document_imports_or_is_refused_with_a_clear_message() {
    let corpus = corpus();
    let mut paths = Vec::new();
    for version in ["2.0", "3.0", "3.1"] {
        documents(&corpus.join(version), &mut paths);
    }
    paths.sort();
    assert!(paths.len() > 100, "only {} documents found", paths.len());
    let out = temp_dir("corpus").join("manifest.json");
    let mut refused: Vec<(String, String)> = Vec::new();
    let mut needed_base_url: Vec<String> = Vec::new();
    for path in &paths {
        let relative = path
            .strip_prefix(&corpus)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let spec = path.to_string_lossy();
        let (code, stderr) = import_and_validate(&spec, &[], &out);
        if code == Some(0) {
            assert!(
                stderr.contains(" for route 'corpus' (skipped "),
                "{relative}: {stderr}"
            );
            continue;
        }
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert!(
            !errors.is_empty(),
            "{relative}: exit 1 without an error line:\n{stderr}"
        );
        if errors.iter().all(|e| e.ends_with(": give --base-url")) {
            needed_base_url.push(relative.clone());
            let (code, stderr) =
                import_and_validate(&spec, &["--base-url", "https://api.example.test"], &out);
            assert_eq!(code, Some(0), "{relative} with --base-url:\n{stderr}");
            continue;
        }
        refused.push((relative, errors.join("\n")));
    }
    let expected: Vec<(&str, &str)> = REFUSED.to_vec();
    let mut expected_names: Vec<&str> = expected.iter().map(|(name, _)| *name).collect();
    expected_names.sort_unstable();
    let refused_names: Vec<&str> = refused.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        refused_names, expected_names,
        "the refused documents changed"
    );
    for (name, errors) in &refused {
        let (_, says) = expected.iter().find(|(n, _)| n == name).unwrap();
        assert!(
            errors.contains(says),
            "{name}: expected {says:?} in {errors}"
        );
    }
    assert_eq!(
        needed_base_url, NEED_BASE_URL,
        "the documents that need --base-url changed"
    );
}

fn tools_of(manifest: &str) -> Vec<Value> {
    let manifest: Value = serde_json::from_str(manifest).expect("the manifest is JSON");
    assert_eq!(manifest["manifestVersion"], 1);
    assert_eq!(manifest["routes"][0]["routeKey"], "petstore");
    manifest["routes"][0]["tools"].as_array().unwrap().clone()
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

const PETSTORE_LINES: [&str; 10] = [
    "warning: POST /pet (addPet): secured by 'petstore_auth': no --credential binds it, so the gateway sends it no credentials",
    "warning: PUT /pet (updatePet): secured by 'petstore_auth': no --credential binds it, so the gateway sends it no credentials",
    "warning: GET /pet/findByStatus (findPetsByStatus): secured by 'petstore_auth': no --credential binds it, so the gateway sends it no credentials",
    "warning: GET /pet/findByTags (findPetsByTags): secured by 'petstore_auth': no --credential binds it, so the gateway sends it no credentials",
    "warning: GET /pet/{petId} (getPetById): secured by 'api_key': no --credential binds it, so the gateway sends it no credentials",
    "skipped POST /pet/{petId} (updatePetWithForm): request body is application/x-www-form-urlencoded, not JSON",
    "warning: DELETE /pet/{petId} (deletePet): secured by 'petstore_auth': no --credential binds it, so the gateway sends it no credentials",
    "", // uploadFile: its media type differs between 3.0 and 3.1
    "warning: GET /store/inventory (getInventory): secured by 'api_key': no --credential binds it, so the gateway sends it no credentials",
    "wrote 18 tools for route 'petstore' (skipped 2)",
];

#[test]
fn m3_petstore_tools_field_by_field_and_the_yaml_twin_gives_the_same_manifest() {
    for (version, upload_type) in [
        ("3.0", "multipart/form-data"),
        ("3.1", "application/octet-stream"),
    ] {
        let json_doc = doc(&format!("{version}/json/petstore.json"));
        let yaml_doc = doc(&format!("{version}/yaml/petstore.yaml"));
        let from_json = run(&["import", "openapi", &json_doc, "--route", "petstore"]);
        assert_eq!(from_json.code, Some(0), "{}", from_json.stderr);
        let from_yaml = run(&["import", "openapi", &yaml_doc, "--route", "petstore"]);
        assert_eq!(from_yaml.code, Some(0), "{}", from_yaml.stderr);
        assert_eq!(
            from_json.stdout, from_yaml.stdout,
            "{version}: JSON and YAML differ"
        );
        assert_eq!(from_json.stderr, from_yaml.stderr);

        let mut lines = PETSTORE_LINES.map(str::to_string);
        lines[7] = format!(
            "skipped POST /pet/{{petId}}/uploadImage (uploadFile): request body is {upload_type}, not JSON"
        );
        assert_eq!(
            from_json.stderr.lines().collect::<Vec<_>>(),
            lines,
            "{version}"
        );

        let manifest: Value = serde_json::from_str(&from_json.stdout).unwrap();
        assert_eq!(
            manifest["routes"][0]["server"],
            json!({"name": "swagger-petstore", "title": "Swagger Petstore", "version": "1.0.0"})
        );
        let tools = tools_of(&from_json.stdout);
        assert_eq!(tools.len(), 18);
        assert!(
            tools
                .iter()
                .all(|t| t["name"] != "uploadFile" && t["name"] != "updatePetWithForm")
        );

        let get = tool(&tools, "getPetById");
        assert_eq!(get["title"], "Find pet by ID");
        assert_eq!(get["description"], "Returns a single pet");
        assert_eq!(get["annotations"], json!({"readOnlyHint": true}));
        assert_eq!(
            get["inputSchema"],
            json!({"type": "object", "properties": {"petId": {"type": "integer", "format": "int64",
                   "description": "ID of pet to return"}}, "required": ["petId"]})
        );
        assert_eq!(
            get["_meta"],
            json!({"version": "1.0.0", "active": true,
                   "endpoint": "http://petstore.swagger.io/v2/pet/{petId}", "method": "GET",
                   "parameters": {"petId": "path"}})
        );

        // The 200 response's Pet as the outputSchema, readOnly `id` kept (a response has it).
        let output = &get["outputSchema"];
        assert_eq!(output["type"], "object");
        assert_eq!(output["required"], json!(["name", "photoUrls"]));
        assert_eq!(output["properties"]["id"]["readOnly"], true);
        assert_eq!(
            output["properties"]["tags"]["items"]["properties"]["name"]["type"],
            "string"
        );
        // An array response (findPetsByStatus) gives none.
        assert!(
            tool(&tools, "findPetsByStatus")
                .get("outputSchema")
                .is_none()
        );

        let add = tool(&tools, "addPet");
        assert_eq!(add["_meta"]["method"], "POST");
        assert_eq!(
            add["_meta"]["endpoint"],
            "http://petstore.swagger.io/v2/pet"
        );
        assert!(add.get("annotations").is_none());
        let properties = add["inputSchema"]["properties"].as_object().unwrap();
        // Pet's `id` is readOnly: the server assigns it, a request does not send it.
        assert_eq!(
            properties.keys().collect::<Vec<_>>(),
            ["category", "name", "photoUrls", "tags", "status"]
        );
        // addPet answers 405 only: no success response, no outputSchema.
        assert!(add.get("outputSchema").is_none());
        assert_eq!(add["inputSchema"]["required"], json!(["name", "photoUrls"]));
        // $refs resolved: Category and Tag inlined.
        assert_eq!(
            properties["category"]["properties"]["name"]["type"],
            "string"
        );
        assert_eq!(
            properties["tags"]["items"]["properties"]["name"]["type"],
            "string"
        );
        assert_eq!(
            properties["status"]["enum"],
            json!(["available", "pending", "sold"])
        );
        assert!(!add.to_string().contains("$ref") && !add.to_string().contains("\"xml\""));

        let find = tool(&tools, "findPetsByStatus");
        assert_eq!(find["_meta"]["parameters"], json!({"status": "query"}));
        assert_eq!(find["inputSchema"]["properties"]["status"]["type"], "array");
        assert_eq!(find["inputSchema"]["required"], json!(["status"]));
        assert_eq!(find["annotations"], json!({"readOnlyHint": true}));

        let delete = tool(&tools, "deletePet");
        assert_eq!(delete["_meta"]["method"], "DELETE");
        assert_eq!(
            delete["_meta"]["parameters"],
            json!({"api_key": "header", "petId": "path"})
        );
        assert_eq!(delete["inputSchema"]["required"], json!(["petId"]));
        assert_eq!(
            delete["inputSchema"]["properties"]["api_key"]["type"],
            "string"
        );

        let array_body = tool(&tools, "createUsersWithArrayInput");
        assert_eq!(
            array_body["_meta"]["parameters"],
            json!({"body": "wholeBody"})
        );
        assert_eq!(
            array_body["inputSchema"]["properties"]["body"]["type"],
            "array"
        );
        assert_eq!(array_body["inputSchema"]["required"], json!(["body"]));
    }
}

#[test]
fn m3_skip_secured_and_filters_on_the_petstore() {
    let petstore = doc("3.0/json/petstore.json");
    let secured = run(&[
        "import",
        "openapi",
        &petstore,
        "--route",
        "petstore",
        "--skip-secured",
    ]);
    assert_eq!(secured.code, Some(0), "{}", secured.stderr);
    assert!(secured.stderr.lines().any(
        |l| l == "skipped GET /pet/{petId} (getPetById): secured by 'api_key' (--skip-secured)"
    ));
    assert!(!secured.stderr.contains("warning: "), "{}", secured.stderr);
    assert!(
        secured
            .stderr
            .ends_with("wrote 11 tools for route 'petstore' (skipped 9)\n"),
        "{}",
        secured.stderr
    );

    let filtered = run(&[
        "import", "openapi", &petstore, "--route", "petstore", "--tag", "store", "--method", "get",
    ]);
    assert_eq!(filtered.code, Some(0), "{}", filtered.stderr);
    let names: Vec<Value> = tools_of(&filtered.stdout)
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("getInventory"), json!("getOrderById")]);

    let none = run(&[
        "import",
        "openapi",
        &petstore,
        "--route",
        "petstore",
        "--operation",
        "nope",
    ]);
    assert_eq!(none.code, Some(1));
    assert!(none.stdout.is_empty());
    assert!(
        none.stderr.contains(
            "error: no operation matches --tag, --operation and --method: nothing written"
        ),
        "{}",
        none.stderr
    );
}

#[test]
fn m3_exit_codes_for_unreadable_unimportable_and_bad_arguments() {
    let missing = run(&[
        "import",
        "openapi",
        "/nonexistent/openapi.yaml",
        "--route",
        "r",
    ]);
    assert_eq!(missing.code, Some(2));
    assert!(
        missing
            .stderr
            .starts_with("error: cannot read /nonexistent/openapi.yaml: "),
        "{}",
        missing.stderr
    );

    let dir = temp_dir("exits");
    let garbage = dir.join("garbage.yaml");
    std::fs::write(&garbage, "a: [b\n").unwrap();
    let garbage = run(&[
        "import",
        "openapi",
        &garbage.to_string_lossy(),
        "--route",
        "r",
    ]);
    assert_eq!(garbage.code, Some(1));
    assert!(
        garbage.stderr.contains(": neither JSON nor YAML: "),
        "{}",
        garbage.stderr
    );

    let swagger = run(&[
        "import",
        "openapi",
        &doc("2.0/json/petstore.json"),
        "--route",
        "r",
    ]);
    assert_eq!(swagger.code, Some(1));
    assert!(swagger.stderr.ends_with(": the document is Swagger 2.0: only OpenAPI 3.0 and 3.1 documents can be imported (convert it to OpenAPI 3 first, e.g. with swagger2openapi)\n"), "{}", swagger.stderr);

    let no_server = run(&[
        "import",
        "openapi",
        &doc("3.0/json/callbacks.json"),
        "--route",
        "r",
    ]);
    assert_eq!(no_server.code, Some(1));
    assert_eq!(
        no_server.stderr,
        "error: the document names no server URL: give --base-url\n"
    );
    assert!(no_server.stdout.is_empty());

    let bad_route = run(&[
        "import",
        "openapi",
        &doc("3.0/json/petstore.json"),
        "--route",
        "a/b",
    ]);
    assert_eq!(bad_route.code, Some(1));
    assert!(
        bad_route
            .stderr
            .contains("--route 'a/b' is not a route key")
    );

    let too_big = run(&[
        "import",
        "openapi",
        &doc("3.0/json/petstore.json"),
        "--route",
        "r",
        "--max-bytes",
        "1000",
    ]);
    assert_eq!(too_big.code, Some(1));
    assert!(too_big.stdout.is_empty());
    assert!(
        too_big
            .stderr
            .contains("over the limit of 1000 bytes (--max-bytes)"),
        "{}",
        too_big.stderr
    );
}

#[test]
fn m3_merge_in_place_replaces_this_routes_imported_tools_and_keeps_the_rest() {
    let dir = temp_dir("merge");
    let manifest = dir.join("manifest.json");
    std::fs::write(
        &manifest,
        json!({"manifestVersion": 1, "routes": [
            {"routeKey": "core", "tools": [{"name": "search", "inputSchema": {"type": "object"},
                                            "_meta": {"endpoint": "https://core.test/search"}}]},
            {"routeKey": "petstore", "tools": [
                {"name": "getPetById", "description": "old", "inputSchema": {"type": "object"},
                 "_meta": {"endpoint": "https://old.test/pet"}},
                {"name": "handWritten", "inputSchema": {"type": "object"},
                 "_meta": {"endpoint": "https://old.test/hand"}}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let path = manifest.to_string_lossy();
    let merged = run(&[
        "import",
        "openapi",
        &doc("3.0/json/petstore.json"),
        "--route",
        "petstore",
        "--merge",
        &path,
        "--output",
        &path,
    ]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    assert!(merged.stdout.is_empty());
    assert!(merged.stderr.ends_with(&format!(
        "wrote 18 tools for route 'petstore' (skipped 2)\nmerged into {path}: 1 replaced, 17 added\n"
    )), "{}", merged.stderr);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(written["routes"][0]["tools"][0]["name"], "search");
    let pets = written["routes"][1]["tools"].as_array().unwrap();
    assert_eq!(pets.len(), 19);
    assert_eq!(pets[0]["name"], "getPetById");
    assert_eq!(pets[0]["description"], "Returns a single pet");
    assert_eq!(pets[1]["name"], "handWritten");
    assert_eq!(
        run(&["validate", "--route", "petstore", &path]).code,
        Some(0)
    );

    let unreadable = run(&[
        "import",
        "openapi",
        &doc("3.0/json/petstore.json"),
        "--route",
        "petstore",
        "--merge",
        "/nonexistent/manifest.json",
    ]);
    assert_eq!(unreadable.code, Some(2));
    assert!(unreadable.stdout.is_empty());
}

/// A small OpenAPI document written to `dir/name`: `GET /pets` (listPets) and whatever `paths`
/// and `schemas` add.
fn write_doc(dir: &Path, name: &str, paths: &Value, schemas: &Value) -> String {
    let mut all_paths = json!({"/pets": {"get": {"operationId": "listPets"}}});
    for (path, item) in paths.as_object().unwrap() {
        all_paths[path] = item.clone();
    }
    let document = json!({
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "3.0.0"},
        "servers": [{"url": "https://pets.example.test/v1"}],
        "paths": all_paths,
        "components": {"schemas": schemas}
    });
    let path = dir.join(name);
    std::fs::write(&path, document.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

fn import_args<'a>(spec: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["import", "openapi", spec, "--route", "petstore"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn m3_a_ref_expansion_bomb_skips_its_operation_in_bounded_time() {
    let dir = temp_dir("bomb");
    let mut schemas = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/components/schemas/S{}", i + 1)});
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    schemas.insert("S40".into(), json!({"type": "string"}));
    let spec = write_doc(
        &dir,
        "bomb.json",
        &json!({"/x": {"post": {"operationId": "op", "requestBody": {"content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}}),
        &Value::Object(schemas),
    );
    let started = std::time::Instant::now();
    let bomb = run(&import_args(&spec, &[]));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(bomb.code, Some(0), "{}", bomb.stderr);
    assert_eq!(
        bomb.stderr,
        "skipped POST /x (op): its schemas expand to more than 200000 nodes (repeated $refs)\nwrote 1 tool for route 'petstore' (skipped 1)\n"
    );
    assert_eq!(tools_of(&bomb.stdout).len(), 1);
}

#[test]
fn m3_deep_nesting_is_refused_fast_json_without_a_yaml_retry() {
    let dir = temp_dir("deep");
    let yaml = dir.join("deep.yaml");
    std::fs::write(
        &yaml,
        format!(
            "openapi: 3.0.3\nx: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    )
    .unwrap();
    let json = dir.join("deep.json");
    std::fs::write(
        &json,
        format!(
            "{{\"openapi\": \"3.0.3\", \"x\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let yaml = run(&import_args(&yaml.to_string_lossy(), &[]));
    let json = run(&import_args(&json.to_string_lossy(), &[]));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(yaml.code, Some(1));
    assert!(
        yaml.stderr.ends_with(": the YAML nests '[' and '{' more than 256 levels deep (line 2, column 260): it is refused unparsed\n"),
        "{}",
        yaml.stderr
    );
    assert_eq!(json.code, Some(1));
    assert!(
        json.stderr
            .contains(": not JSON: recursion limit exceeded at line 1 column"),
        "{}",
        json.stderr
    );
}

#[test]
fn m3_base_url_with_a_query_fragment_or_user_info_is_refused_up_front() {
    let dir = temp_dir("base-url");
    let spec = write_doc(&dir, "pets.json", &json!({}), &json!({}));
    for (base, message) in [
        (
            "https://api.example.test/v1?tenant=a",
            "error: --base-url 'https://api.example.test/v1?tenant=a' must not carry a query or fragment\n",
        ),
        (
            "https://api.example.test/v1#top",
            "error: --base-url 'https://api.example.test/v1#top' must not carry a query or fragment\n",
        ),
        (
            "https://svc:hunter2@api.example.test/v1",
            "error: --base-url must not carry a user name or password\n",
        ),
        (
            "https://svc@api.example.test/v1",
            "error: --base-url must not carry a user name or password\n",
        ),
    ] {
        let refused = run(&import_args(&spec, &["--base-url", base]));
        assert_eq!(refused.code, Some(1), "{base}: {}", refused.stderr);
        assert_eq!(refused.stderr, message, "{base}");
        assert!(refused.stdout.is_empty());
    }
}

#[test]
fn m3_spec_urls_are_https_or_loopback_http_and_their_passwords_never_shown() {
    let plain = run(&import_args("http://api.example.test/openapi.json", &[]));
    assert_eq!(plain.code, Some(2));
    assert_eq!(
        plain.stderr,
        "error: cannot fetch http://api.example.test/openapi.json: only https:// URLs are fetched (and http:// on loopback); download the document and give the file\n"
    );
    let secret = run(&import_args(
        "http://user:hunter2@api.example.test/openapi.json",
        &[],
    ));
    assert_eq!(secret.code, Some(2));
    assert!(
        secret.stderr.starts_with(
            "error: cannot fetch http://***@api.example.test/openapi.json: only https://"
        ),
        "{}",
        secret.stderr
    );
    let refused = run(&import_args(
        "https://user:hunter2@127.0.0.1:1/openapi.json",
        &[],
    ));
    assert_eq!(refused.code, Some(2));
    assert!(
        refused
            .stderr
            .starts_with("error: cannot fetch https://***@127.0.0.1:1/openapi.json: "),
        "{}",
        refused.stderr
    );
    for run in [&plain, &secret, &refused] {
        assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    }

    // A development server on loopback is fetched over http.
    let dir = temp_dir("loopback");
    let body = std::fs::read(write_doc(&dir, "pets.json", &json!({}), &json!({}))).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request).unwrap();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&body).unwrap();
    });
    let url = format!("http://127.0.0.1:{port}/openapi.json");
    let local = run(&import_args(&url, &[]));
    server.join().unwrap();
    assert_eq!(local.code, Some(0), "{}", local.stderr);
    assert_eq!(tools_of(&local.stdout).len(), 1);
}

#[test]
fn m3_an_endless_spec_file_is_refused_at_the_size_limit() {
    let endless = run(&import_args("/dev/zero", &[]));
    assert_eq!(endless.code, Some(2));
    assert_eq!(
        endless.stderr,
        "error: cannot read /dev/zero: over 67108864 bytes\n"
    );
}

#[test]
fn m3_merge_keeps_inactive_versions_for_rollback() {
    let dir = temp_dir("merge-inactive");
    let spec = write_doc(&dir, "pets.json", &json!({}), &json!({}));
    let manifest = dir.join("manifest.json");
    let version = |version: &str, active: bool, description: &str| {
        json!({"name": "listPets", "description": description, "inputSchema": {"type": "object"},
               "_meta": {"version": version, "active": active,
                         "endpoint": "https://old.test/pets", "method": "GET"}})
    };
    std::fs::write(
        &manifest,
        json!({"manifestVersion": 1, "routes": [{"routeKey": "petstore", "tools": [
            version("1.0.0", false, "rollback"),
            version("2.0.0", true, "current")
        ]}]})
        .to_string(),
    )
    .unwrap();
    let path = manifest.to_string_lossy();
    let merged = run(&import_args(&spec, &["--merge", &path, "--output", &path]));
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    assert!(
        merged.stderr.ends_with(&format!(
            "merged into {path}: 1 replaced, 0 added, 1 inactive version kept\n"
        )),
        "{}",
        merged.stderr
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let tools = written["routes"][0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["description"], "rollback");
    assert_eq!(tools[0]["_meta"]["active"], false);
    assert_eq!(tools[1]["_meta"]["version"], "3.0.0");
    assert_eq!(tools[1]["_meta"]["active"], true);
    assert_eq!(
        run(&["validate", "--route", "petstore", &path]).code,
        Some(0)
    );
}

#[test]
fn m3_output_writes_through_a_symlink_and_never_over_a_non_regular_file() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = temp_dir("output");
    let spec = write_doc(&dir, "pets.json", &json!({}), &json!({}));
    let real = dir.join("real").join("manifest.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "old").unwrap();
    let link = dir.join("link.json");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("real/manifest.json", &link).unwrap();
    let through = run(&import_args(&spec, &["--output", &link.to_string_lossy()]));
    assert_eq!(through.code, Some(0), "{}", through.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(tools_of(&std::fs::read_to_string(&real).unwrap()).len(), 1);

    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fifo_text = fifo.to_string_lossy();
    let refused = run(&import_args(&spec, &["--output", &fifo_text]));
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    assert_eq!(
        refused.stderr,
        format!("error: --output '{fifo_text}' is not a regular file\n")
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    let to_fifo = dir.join("to-fifo");
    let _ = std::fs::remove_file(&to_fifo);
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    let refused = run(&import_args(
        &spec,
        &["--output", &to_fifo.to_string_lossy()],
    ));
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    let directory = run(&import_args(&spec, &["--output", &dir.to_string_lossy()]));
    assert_eq!(directory.code, Some(1), "{}", directory.stderr);
    assert!(directory.stderr.ends_with("is not a regular file\n"));
}

#[test]
fn m3_m5_credential_binds_a_scheme_and_a_bad_one_exits_2() {
    let petstore = doc("3.0/json/petstore.json");
    let key = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:petstore-key-AbCdEf";
    let bound = run(&import_args(
        &petstore,
        &["--credential", &format!("api_key={key}")],
    ));
    assert_eq!(bound.code, Some(0), "{}", bound.stderr);
    let tools = tools_of(&bound.stdout);
    assert_eq!(
        tool(&tools, "getPetById")["_meta"]["auth"],
        json!({"type": "apiKey", "in": "header", "name": "api_key", "secret": key})
    );
    assert!(tool(&tools, "addPet")["_meta"].get("auth").is_none());
    assert!(
        !bound.stderr.contains("(getPetById): secured by"),
        "{}",
        bound.stderr
    );
    assert!(
        bound
            .stderr
            .contains("(addPet): secured by 'petstore_auth'")
    );

    for (credential, message) in [
        (
            "api_key=hunter2",
            "error: --credential api_key: REF must be arn:<partition>:secretsmanager:<region>:<account>:secret:<name>[#<jsonKey>], arn:<partition>:ssm:<region>:<account>:parameter/<name> or env:<NAME> (the REF given is not shown: it may be a secret itself)\n",
        ),
        (
            "nope=env:KEY",
            "error: --credential nope: the document has no security scheme 'nope' (components.securitySchemes: petstore_auth, api_key)\n",
        ),
        (
            "petstore_auth=env:KEY",
            "error: --credential petstore_auth: security scheme 'petstore_auth' is oauth2 without a clientCredentials flow (implicit): the gateway gets tokens with client credentials only\n",
        ),
    ] {
        let refused = run(&import_args(&petstore, &["--credential", credential]));
        assert_eq!(refused.code, Some(2), "{credential}: {}", refused.stderr);
        assert_eq!(refused.stderr, message, "{credential}");
        assert!(refused.stdout.is_empty());
    }
}
