//! The modules of the manifest compiler (`registry/compile/`) import one another one way: their
//! imports form a DAG, so that each module can be read with only the ones below it in mind.

mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use source::{code_text, first_segments, paths_after};

/// The directory of the manifest compiler, relative to `shared/src`.
const COMPILE_DIR: &str = "registry/compile";

/// The sibling modules of `registry/compile/` that a file of it imports: `super::NAME` (one
/// `super`) and `crate::registry::compile::NAME`, alone or in a group.
fn compile_imports(source: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let code = code_text(source);
    let from_super = paths_after(&code, "super::")
        .into_iter()
        .filter(|&(_, supers, _)| supers == 1);
    let from_crate = paths_after(&code, "crate::registry::compile::").into_iter();
    from_super
        .chain(from_crate)
        .flat_map(|(_, _, rest)| first_segments(rest))
        .filter(|name| siblings.contains(*name))
        .map(str::to_owned)
        .collect()
}

/// A cycle of `imports` (module to the modules it imports), as the modules along it with the
/// first one again at the end; `None` when the modules form a DAG.
fn import_cycle(imports: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        imports: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == module) {
            let mut cycle = path[start..].to_vec();
            cycle.push(module.to_owned());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in imports.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, imports, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    imports
        .keys()
        .find_map(|module| visit(module, imports, &mut done, &mut Vec::new()))
}

#[test]
fn the_manifest_compilers_modules_import_one_another_without_a_cycle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(COMPILE_DIR);
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("registry/compile is readable") {
        let path = entry.expect("a directory entry").path();
        let Some(name) = path.file_stem().and_then(|stem| stem.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            let source = std::fs::read_to_string(&path).expect("a source file is readable");
            sources.insert(name.to_owned(), source);
        }
    }
    assert!(
        sources.len() > 10,
        "only {} compile modules were read",
        sources.len()
    );
    let siblings: BTreeSet<String> = sources.keys().cloned().collect();
    let imports: BTreeMap<String, BTreeSet<String>> = sources
        .iter()
        .map(|(module, source)| {
            let mut imported = compile_imports(source, &siblings);
            imported.remove(module);
            (module.clone(), imported)
        })
        .collect();
    assert!(
        imports["first_pass"].contains("manifest"),
        "the import parse finds first_pass's import of manifest"
    );
    if let Some(cycle) = import_cycle(&imports) {
        panic!(
            "the modules of {COMPILE_DIR}/ import one another in a cycle (move what both use \
             to the module that owns it, or to a module below both): {}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_cycle_check_reads_every_import_form_and_finds_a_loop() {
    let siblings: BTreeSet<String> = ["manifest", "problems", "rest", "threads", "tool"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    let source = "//! See [`super::tool`].\nuse super::manifest::{A, b};\nuse super::{\n    problems::P,\n    threads::{T, U},\n};\nfn f() { crate::registry::compile::rest::g(); }\nmod tests {\n    use super::*;\n    use super::super::tool::X;\n}\n";
    assert_eq!(
        compile_imports(source, &siblings),
        ["manifest", "problems", "rest", "threads"]
            .into_iter()
            .map(str::to_owned)
            .collect()
    );
    let graph = |edges: &[(&str, &str)]| {
        let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            imports
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
            imports.entry((*to).to_owned()).or_default();
        }
        imports
    };
    let dag = graph(&[
        ("first_pass", "manifest"),
        ("manifest", "threads"),
        ("first_pass", "threads"),
    ]);
    assert_eq!(import_cycle(&dag), None);
    let looped = graph(&[("a", "b"), ("rest", "tool"), ("tool", "rest")]);
    assert_eq!(
        import_cycle(&looped),
        Some(vec![
            "rest".to_owned(),
            "tool".to_owned(),
            "rest".to_owned()
        ])
    );
}
