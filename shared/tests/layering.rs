//! STYLE 2: the sans-IO core stands below its I/O. No module of the core names an I/O
//! implementation (the reqwest invoker, the S3/HTTP/file sources, the DynamoDB store, the JWKS
//! key set), an I/O crate (reqwest, the AWS SDK, `lambda_http`, hyper) or the process
//! environment; only the composition root (`build.rs`) and the adapters do.

use std::path::{Path, PathBuf};

/// The I/O implementations and adapters, relative to `shared/src`: the only files that may
/// name what [`FORBIDDEN_IN_CORE`] lists.
const IO_FILES: &[&str] = &[
    "build.rs",
    "lambda.rs",
    "aws_http.rs",
    "tls.rs",
    "telemetry.rs",
    "invoke/http.rs",
    "invoke/lambda.rs",
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

/// `source` without `//` comments (doc comments included), line by line.
fn code_lines(source: &str) -> impl Iterator<Item = (usize, &str)> {
    source.lines().enumerate().map(|(i, line)| {
        let code = line.find("//").map_or(line, |at| &line[..at]);
        (i + 1, code)
    })
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

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("shared/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
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
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut core = 0;
    let mut found = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if IO_FILES.contains(&relative.as_str()) {
            continue;
        }
        core += 1;
        let source = std::fs::read_to_string(file).expect("a source file is readable");
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
