//! Reading the library's source in the structure tests (`layering.rs`, `compile_imports.rs`,
//! `file_size.rs`): its files, its code without comments, and the modules its paths name.
#![allow(dead_code, reason = "each test file uses its part of these helpers")]

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, at any depth.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `.rs` file under `src` with its path relative to `src` (`/`-separated) and its text.
pub(crate) fn sources(src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .iter()
        .map(|file| {
            let relative = file
                .strip_prefix(src)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(file).expect("a source file is readable");
            (relative, text)
        })
        .collect()
}

/// `source` without `//` comments (doc comments included), line by line.
pub(crate) fn code_lines(source: &str) -> impl Iterator<Item = (usize, &str)> {
    source.lines().enumerate().map(|(i, line)| {
        let code = line.find("//").map_or(line, |at| &line[..at]);
        (i + 1, code)
    })
}

/// `source` without comments, as one text (lines kept, so that offsets give line numbers).
pub(crate) fn code_text(source: &str) -> String {
    code_lines(source)
        .map(|(_, code)| code)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The line of byte `at` of `text`, counted from 1.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The first segments of the paths that `rest` starts: `NAME` of `NAME::…` or `NAME;`, or each
/// `NAME` of a group `{NAME::…, NAME, …}` (across lines, nested groups skipped over). `self` and
/// `*` are no names.
pub(crate) fn first_segments(rest: &str) -> Vec<&str> {
    let rest = rest.trim_start();
    let ident = |text: &str| -> Option<usize> {
        let end = text
            .bytes()
            .position(|b| !is_ident_byte(b))
            .unwrap_or(text.len());
        (end > 0).then_some(end)
    };
    let Some(group) = rest.strip_prefix('{') else {
        return ident(rest)
            .map(|end| vec![&rest[..end]])
            .unwrap_or_default();
    };
    let mut names = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, byte) in group.bytes().enumerate() {
        let element_ends = match byte {
            b'{' => {
                depth += 1;
                false
            }
            b'}' if depth == 0 => true,
            b'}' => {
                depth -= 1;
                false
            }
            b',' => depth == 0,
            _ => false,
        };
        if element_ends {
            let element = group[start..i].trim_start();
            if let Some(end) = ident(element) {
                names.push(&element[..end]);
            }
            start = i + 1;
            if byte == b'}' {
                break;
            }
        }
    }
    names.retain(|name| *name != "self");
    names
}

/// Every path of `code` that starts with `prefix` at a word boundary, as the byte offset just
/// past the prefix and how many times it repeats there (`super::super::` is `super::` twice).
pub(crate) fn paths_after<'c>(code: &'c str, prefix: &str) -> Vec<(usize, usize, &'c str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix).map(|at| at + from) {
        let boundary = at == 0 || !is_ident_byte(code.as_bytes()[at - 1]);
        let after_repeat = code[..at].ends_with(prefix);
        let mut end = at + prefix.len();
        let mut repeats = 1;
        while code[end..].starts_with(prefix) {
            end += prefix.len();
            repeats += 1;
        }
        if boundary && !after_repeat {
            found.push((end, repeats, &code[end..]));
        }
        from = end;
    }
    found
}
