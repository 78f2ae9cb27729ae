//! STYLE 2: the sans-IO core stands below its I/O. No module of the core names an I/O
//! implementation (the reqwest invoker, the S3/HTTP/file sources, the DynamoDB store, the JWKS
//! key set), an I/O crate (reqwest, the AWS SDK, `lambda_http`, hyper) or the process
//! environment; only the composition root (`build.rs`) and the adapters do.
//!
//! The policy and routing of the service layer and the protocol and configuration below it
//! (`policy/`, `routing.rs`, `protocol/`, `config/`) reach neither the registry nor any module
//! above it: what they share with the registry lives in them, and the registry imports it.

mod source;

use std::path::Path;

use source::{code_lines, code_text, first_segments, line_of, paths_after, sources};

/// The I/O implementations and adapters, relative to `shared/src`: the only files that may
/// name what [`FORBIDDEN_IN_CORE`] lists.
const IO_FILES: &[&str] = &[
    "build.rs",
    "lambda.rs",
    "aws_http.rs",
    "tls.rs",
    "telemetry.rs",
    "trace/export.rs",
    "invoke/http.rs",
    "invoke/lambda.rs",
    "invoke/aws_sign.rs",
    "invoke/secrets.rs",
    "invoke/token_endpoint.rs",
    "registry/source/file.rs",
    "registry/source/http.rs",
    "registry/source/s3.rs",
    "auth/dynamo.rs",
    "auth/dynamo_admin.rs",
    "auth/key_set.rs",
];

/// What a core module never names (outside comments): I/O crates and modules, the concrete
/// clients, the process environment, and the layers above the core.
const FORBIDDEN_IN_CORE: &[&str] = &[
    "reqwest",
    "aws_sdk_",
    "aws_config",
    "aws_smithy",
    "lambda_http",
    "lambda_runtime",
    "hyper",
    "std::env",
    "std::fs",
    "std::net",
    "tokio::net",
    "tokio::fs",
    "crate::build",
    "crate::lambda",
    "crate::aws_http",
    "crate::tls",
    "crate::telemetry",
    "invoke::http",
    "invoke::lambda::",
    "invoke::aws_sign",
    "trace::export",
    "invoke::secrets::",
    "token_endpoint",
    "AwsSigner",
    "SecretReader",
    "LambdaClient",
    "source::file",
    "source::http",
    "source::s3",
    "auth::dynamo",
    "auth::key_set",
    "HttpInvoker",
    "DynamoStore",
    "HttpKeySet",
    "S3Source",
    "HttpSource",
    "FileSource",
];

/// `mod.rs` files may re-export their own children, I/O ones included (STYLE 7).
fn is_reexport(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("pub use ")
        || line.starts_with("pub(crate) use ")
        || line.starts_with("mod ")
        || line.starts_with("pub mod ")
}

/// Every forbidden name in a core file, as `path:line: name`.
fn violations(path: &str, source: &str) -> Vec<String> {
    let is_mod_rs = path.ends_with("mod.rs");
    let mut found = Vec::new();
    let mut in_reexport = false;
    for (number, code) in code_lines(source) {
        if is_mod_rs && (in_reexport || is_reexport(code)) {
            in_reexport = !code.contains(';');
            continue;
        }
        for name in FORBIDDEN_IN_CORE {
            if code.contains(name) {
                found.push(format!("{path}:{number}: {name}"));
            }
        }
    }
    found
}

#[test]
fn style2_no_core_module_names_an_io_implementation_or_the_environment() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for io in IO_FILES {
        assert!(
            src.join(io).is_file(),
            "listed I/O file {io} no longer exists"
        );
    }
    let mut core = 0;
    let mut found = Vec::new();
    for (relative, source) in sources(&src) {
        if IO_FILES.contains(&relative.as_str()) {
            continue;
        }
        core += 1;
        found.extend(violations(&relative, &source));
    }
    assert!(core > 40, "only {core} core files were read");
    assert!(
        found.is_empty(),
        "the sans-IO core names I/O (move it to build.rs or an I/O file):\n{}",
        found.join("\n")
    );
}

#[test]
fn style2_the_check_catches_an_io_import_and_ignores_comments() {
    let source = "//! Names HttpInvoker in docs only.\nuse crate::invoke::HttpInvoker;\n";
    assert_eq!(
        violations("service/pipeline.rs", source),
        ["service/pipeline.rs:2: HttpInvoker"]
    );
    let env = "fn f() { let _ = std::env::var(\"X\"); } // std::env";
    assert_eq!(
        violations("config/gateway.rs", env),
        ["config/gateway.rs:1: std::env"]
    );
    assert!(violations("invoke/mod.rs", "pub use http::HttpInvoker;\n").is_empty());
    let block = "pub use source::{\n    S3Source,\n};\nfn f(_: S3Source) {}\n";
    assert_eq!(
        violations("registry/mod.rs", block),
        ["registry/mod.rs:4: S3Source"]
    );
}

/// The places that reach neither the registry nor a layer above it, relative to `shared/src`:
/// directories end with `/`.
const REGISTRY_FREE: &[&str] = &["policy/", "protocol/", "config/", "routing.rs"];

/// The top-level modules those places may reach: themselves and the helpers below them. Any
/// other module of `lib.rs` (the registry, the invokers, the service and everything above) is
/// out of their reach, a module added later included.
const REACHABLE_FROM_REGISTRY_FREE: &[&str] =
    &["policy", "protocol", "config", "routing", "future", "text"];

/// The top-level modules `lib.rs` declares.
fn top_level_modules(lib: &str) -> Vec<String> {
    code_lines(lib)
        .filter_map(|(_, code)| {
            let declared = code.trim_start();
            let declared = declared
                .strip_prefix("pub mod ")
                .or_else(|| declared.strip_prefix("pub(crate) mod "))
                .or_else(|| declared.strip_prefix("mod "))?;
            Some(declared.trim_end().strip_suffix(';')?.trim().to_owned())
        })
        .collect()
}

/// Every path of a registry-free file (`path` relative to `shared/src`) into one of the
/// `forbidden` top-level modules, as `path:line: module`: `crate::NAME`, `crate::{NAME, …}`, and
/// `super::` repeated up to the crate root (as many times as the file's module is deep; in an
/// inline module such as `mod tests` that is one level short, which errs towards a finding).
fn reaches_above(path: &str, source: &str, forbidden: &[String]) -> Vec<String> {
    let module_depth = path.trim_end_matches("/mod.rs").split('/').count();
    let code = code_text(source);
    let mut found = Vec::new();
    let from_crate = paths_after(&code, "crate::").into_iter();
    let from_super = paths_after(&code, "super::")
        .into_iter()
        .filter(|&(_, supers, _)| supers >= module_depth);
    for (at, _, rest) in from_crate.chain(from_super) {
        for name in first_segments(rest) {
            if forbidden.iter().any(|module| module == name) {
                found.push(format!("{path}:{}: {name}", line_of(&code, at)));
            }
        }
    }
    found
}

#[test]
fn policy_routing_protocol_and_config_reach_neither_the_registry_nor_a_layer_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs is readable");
    let modules = top_level_modules(&lib);
    for reachable in REACHABLE_FROM_REGISTRY_FREE {
        assert!(
            modules.iter().any(|m| m == reachable),
            "lib.rs has no module {reachable}"
        );
    }
    let forbidden: Vec<String> = modules
        .into_iter()
        .filter(|module| !REACHABLE_FROM_REGISTRY_FREE.contains(&module.as_str()))
        .collect();
    for above in [
        "registry",
        "invoke",
        "service",
        "dispatch",
        "auth",
        "tool_result",
        "usage",
        "build",
        "lambda",
    ] {
        assert!(
            forbidden.iter().any(|m| m == above),
            "{above} is not out of reach"
        );
    }
    let mut checked = 0;
    let mut found = Vec::new();
    for (relative, source) in sources(&src) {
        let registry_free = REGISTRY_FREE.iter().any(|place| {
            if place.ends_with('/') {
                relative.starts_with(place)
            } else {
                relative == *place
            }
        });
        if registry_free {
            checked += 1;
            found.extend(reaches_above(&relative, &source, &forbidden));
        }
    }
    assert!(checked > 15, "only {checked} registry-free files were read");
    assert!(
        found.is_empty(),
        "a registry-free file reaches the registry or a layer above it (move the item \
         down, and have the upper layer import it):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_layer_check_catches_every_path_into_the_registry_and_above() {
    let forbidden = [
        "registry".to_owned(),
        "service".to_owned(),
        "auth".to_owned(),
    ];
    let direct = "//! Names crate::registry in docs only.\nuse crate::registry::HeaderParam;\n";
    assert_eq!(
        reaches_above("policy/mirrored.rs", direct, &forbidden),
        ["policy/mirrored.rs:2: registry"]
    );
    let group = "use crate::{\n    protocol::ErrorObject,\n    registry::{Tool, Route},\n};\n";
    assert_eq!(
        reaches_above("config/gateway.rs", group, &forbidden),
        ["config/gateway.rs:1: registry"]
    );
    let relative = "fn f(_: super::super::service::Gateway) {}\nuse super::auth::Mode;\n";
    assert_eq!(
        reaches_above("config/gateway.rs", relative, &forbidden),
        ["config/gateway.rs:1: service"]
    );
    assert_eq!(
        reaches_above("routing.rs", "use super::registry::Snapshot;\n", &forbidden),
        ["routing.rs:1: registry"]
    );
    assert_eq!(
        reaches_above(
            "policy/mod.rs",
            "pub use super::auth::AuthMode;\n",
            &forbidden
        ),
        ["policy/mod.rs:1: auth"]
    );
    let within = "use crate::protocol::ErrorObject;\nuse super::cors::READ_HEADERS;\nfn f() { my_crate::registry(); }\n";
    assert!(reaches_above("policy/mirrored.rs", within, &forbidden).is_empty());
    assert_eq!(
        top_level_modules(
            "//! docs\npub mod auth;\nmod dispatch;\npub(crate) mod x;\npub use a::b;\n"
        ),
        ["auth", "dispatch", "x"]
    );
}
