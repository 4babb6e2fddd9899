//! The house rules for src/models, read from the source: every file under 400 lines, imports
//! that run one way (no circle), and family files that never reach back to the registry,
//! `hf` or `models/mod.rs` — only `hf` asks the registry. See /STYLE.md's "one-way flow".
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 400;

/// A module's path, `["models", "run", "record"]`.
type Module = Vec<String>;
/// Module → the modules it imports from.
type Graph = BTreeMap<Module, BTreeSet<Module>>;
const FAMILIES: [&str; 10] =
    ["bert", "roberta", "distilbert", "electra", "gpt2", "gpt_neo", "gpt_neox", "llama", "bart", "t5"];

/// Every .rs file under `dir`, with its module path (`models::run::record`).
fn modules(dir: &Path, path: &[String], out: &mut Vec<(Vec<String>, PathBuf)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for entry in entries {
        let name = entry.file_stem().unwrap().to_string_lossy().to_string();
        if entry.is_dir() {
            modules(&entry, &[path, &[name]].concat(), out);
        } else if entry.extension().is_some_and(|e| e == "rs") {
            let module = if name == "mod" { path.to_vec() } else { [path, &[name]].concat() };
            out.push((module, entry));
        }
    }
}

/// The code of a file without its comments and without its tests (the `#[cfg(test)]` module
/// that ends every file that has one).
fn code(source: &str) -> String {
    source
        .lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file names from `prefix` on, one per item of a `{…}` group:
/// `super::{bart, bert}` gives ["bart"], ["bert"].
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // part of a longer path or name
        }
        let rest = &code[at + prefix.len()..];
        let mut segments = Vec::new();
        let mut rest = rest;
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let item: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !item.is_empty() {
                        out.push([segments.clone(), vec![item]].concat());
                    }
                }
                break;
            }
            let segment: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if segment.is_empty() {
                break;
            }
            rest = &rest[segment.len()..];
            segments.push(segment);
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        if !segments.is_empty() && !rest.starts_with('{') {
            out.push(segments);
        }
    }
    out
}

/// The deepest module of `known` that `base` followed by `path` names.
fn resolve(known: &BTreeSet<Vec<String>>, base: &[String], path: &[String]) -> Vec<String> {
    let mut module = base.to_vec();
    for segment in path {
        let deeper = [module.clone(), vec![segment.clone()]].concat();
        if !known.contains(&deeper) {
            break;
        }
        module = deeper;
    }
    module
}

/// Module → the modules its code imports from, under src/models.
fn imports() -> (Graph, Vec<(Module, PathBuf)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/models");
    let mut files = Vec::new();
    modules(&root, &["models".to_string()], &mut files);
    let known: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &files {
        let code = code(&std::fs::read_to_string(file).unwrap());
        let is_dir_module = file.file_name().is_some_and(|n| n == "mod.rs");
        // `super::` is the parent of a file's own module; a mod.rs's own module is its folder
        let parent = &module[..module.len() - 1];
        let mut targets = BTreeSet::new();
        for path in paths_after(&code, "super::") {
            targets.insert(resolve(&known, parent, &path));
        }
        for path in paths_after(&code, "crate::models::") {
            targets.insert(resolve(&known, &["models".to_string()], &path));
        }
        if is_dir_module {
            // a folder's mod.rs names its children directly: `use run::…`, `toy::ToyConfig`
            for child in known.iter().filter(|k| k.len() == module.len() + 1 && k.starts_with(module)) {
                let name = child.last().unwrap();
                if !paths_after(&code, &format!("{name}::")).is_empty() {
                    targets.insert(child.clone());
                }
            }
        }
        targets.remove(module);
        graph.insert(module.clone(), targets);
    }
    (graph, files)
}

#[test]
fn every_file_in_src_models_is_under_400_lines() {
    let (_, files) = imports();
    assert!(files.len() > 20, "src/models was not read");
    for (_, file) in files {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        assert!(lines <= MAX_LINES, "{}: {lines} lines", file.display());
    }
}

#[test]
fn imports_in_src_models_run_one_way() {
    let (graph, _) = imports();
    // depth-first search for a circle, naming it
    fn visit(m: &Module, graph: &Graph, stack: &mut Vec<Module>, done: &mut BTreeSet<Module>) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = stack.iter().position(|s| s == m) {
            let circle: Vec<String> = stack[at..].iter().chain([m]).map(|s| s.join("::")).collect();
            panic!("import circle: {}", circle.join(" → "));
        }
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten() {
            visit(next, graph, stack, done);
        }
        stack.pop();
        done.insert(m.clone());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn families_never_reach_the_registry_hf_or_the_model() {
    let (graph, _) = imports();
    let m = |name: &str| if name.is_empty() { vec!["models".to_string()] } else { vec!["models".into(), name.into()] };
    let forbidden = [m("registry"), m("hf"), m("")];
    for family in FAMILIES {
        let imports = graph.get(&m(family)).unwrap_or_else(|| panic!("no src/models/{family}.rs"));
        for f in &forbidden {
            assert!(!imports.contains(f), "{family} imports {}", f.join("::"));
        }
    }
    let asking: Vec<String> =
        graph.iter().filter(|(_, t)| t.contains(&m("registry"))).map(|(k, _)| k.join("::")).collect();
    assert_eq!(asking, ["models::hf"], "only hf asks the registry");
    // the parser sees what it should: the registry imports every family
    assert!(FAMILIES.iter().all(|f| graph[&m("registry")].contains(&m(f))), "{:?}", graph[&m("registry")]);
}
