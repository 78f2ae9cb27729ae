//! Every Rust file of the library (`shared/src`) and of the functions (`functions/*/src`) fits in
//! [`MAX_LINES`] lines, tests in their own files included: a file that grows past it is split
//! along its concerns. A function's `main.rs` fits in [`MAX_MAIN_LINES`].

mod source;

use std::path::Path;

use source::rust_files;

/// The most lines a source file may have.
const MAX_LINES: usize = 450;

/// The most lines a function's `main.rs` may have: the binaries only start what the library
/// and their own modules hold.
const MAX_MAIN_LINES: usize = 20;

/// `path: lines` for each of `files` (path, text) longer than [`MAX_LINES`].
fn too_long<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    files
        .into_iter()
        .filter_map(|(path, text)| {
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| format!("{path}: {lines} lines"))
        })
        .collect()
}

#[test]
fn no_source_file_is_longer_than_450_lines() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = shared.parent().expect("shared/ is in the workspace");
    let mut files = Vec::new();
    rust_files(&shared.join("src"), &mut files);
    let functions = std::fs::read_dir(workspace.join("functions")).expect("functions/ is readable");
    let mut crates = 0;
    for function in functions {
        let src = function.expect("a directory entry").path().join("src");
        if src.is_dir() {
            crates += 1;
            rust_files(&src, &mut files);
        }
    }
    assert!(crates >= 4, "only {crates} function crates were read");
    assert!(
        files.len() > 100,
        "only {} source files were read",
        files.len()
    );
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|file| {
            let path = file
                .strip_prefix(workspace)
                .expect("in the workspace")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(file).expect("a source file is readable");
            (path, text)
        })
        .collect();
    let found = too_long(texts.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    assert!(
        found.is_empty(),
        "source files longer than {MAX_LINES} lines (split each along its concerns):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_functions_main_rs_fits_in_20_lines() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("shared/ is in the workspace");
    let functions = std::fs::read_dir(workspace.join("functions")).expect("functions/ is readable");
    let mut mains = 0;
    let mut found = Vec::new();
    for function in functions {
        let main = function
            .expect("a directory entry")
            .path()
            .join("src/main.rs");
        let Ok(text) = std::fs::read_to_string(&main) else {
            continue;
        };
        mains += 1;
        let lines = text.lines().count();
        if lines > MAX_MAIN_LINES {
            let path = main.strip_prefix(workspace).expect("in the workspace");
            found.push(format!("{}: {lines} lines", path.display()));
        }
    }
    assert!(mains >= 4, "only {mains} main.rs files were read");
    assert!(
        found.is_empty(),
        "main.rs longer than {MAX_MAIN_LINES} lines (move the logic to modules):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_size_check_counts_lines() {
    let fits = "fn f() {}\n".repeat(MAX_LINES);
    let over = format!("{fits}// one more\n");
    assert!(too_long([("a.rs", fits.as_str())]).is_empty());
    assert_eq!(
        too_long([("a.rs", fits.as_str()), ("b.rs", over.as_str())]),
        [format!("b.rs: {} lines", MAX_LINES + 1)]
    );
}
