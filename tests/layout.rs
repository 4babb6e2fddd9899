//! The house rules for src/, read from the source: every file under 400 lines, imports that run
//! one way (no circle, and no layer reaching up to a later one), and family files that never
//! reach back to the registry, `hf` or `models/mod.rs` — only `hf` asks the registry, and the
//! registry is the one list of families. See /STYLE.md's "one-way flow".
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 400;

/// A module's path, `["run", "record"]`.
type Module = Vec<String>;
/// Module → the modules it imports from.
type Graph = BTreeMap<Module, BTreeSet<Module>>;

/// The top-level modules in the order data flows through them (lib.rs's map): each imports only
/// from modules before it.
const LAYERS: [&str; 24] = [
    "math",
    "memory",
    "rng",
    "cost",
    "stats",
    "examples",
    "svg",
    "gemm",
    "error",
    "par",
    "nn",
    "tokenize",
    "attention",
    "run",
    "models",
    "export",
    "import",
    "heads",
    "rollout",
    "qk",
    "train",
    "bench",
    "wasm",
    "python",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every .rs file under `dir`, with its module path (`run::record`).
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

/// Module → the modules its code imports from, for every module of the library (src/ but the
/// command line in src/bin). The crate root, lib.rs, is the map: it names every module and
/// holds no code, so it is left out, and a path through its re-exports counts as none.
fn imports() -> (Graph, Vec<(Module, PathBuf)>) {
    let mut files = Vec::new();
    modules(&src(), &[], &mut files);
    files.retain(|(m, _)| m[0] != "bin" && m[0] != "lib");
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
        for path in paths_after(&code, "crate::") {
            targets.insert(resolve(&known, &[], &path));
        }
        if is_dir_module {
            // a folder's mod.rs names its children directly: `use network::…`, `toy::ToyConfig`
            for child in known.iter().filter(|k| k.len() == module.len() + 1 && k.starts_with(module)) {
                let name = child.last().unwrap();
                if !paths_after(&code, &format!("{name}::")).is_empty() {
                    targets.insert(child.clone());
                }
            }
        }
        targets.remove(module);
        targets.remove(&Vec::new());
        graph.insert(module.clone(), targets);
    }
    (graph, files)
}

#[test]
fn every_file_in_src_is_under_400_lines() {
    let mut files = Vec::new();
    modules(&src(), &[], &mut files);
    assert!(files.len() > 60, "src was not read");
    for (_, file) in files {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        assert!(lines <= MAX_LINES, "{}: {lines} lines", file.display());
    }
}

#[test]
fn imports_in_src_run_one_way() {
    let (graph, _) = imports();
    // a folder and its own files are one concept: a mod.rs names its children, and they use its
    // types (`super::MultiHeadAttention`); a circle between any other two modules is an error
    let related = |a: &Module, b: &Module| a.starts_with(b) || b.starts_with(a);
    // depth-first search for a circle, naming it
    fn visit(
        m: &Module,
        graph: &Graph,
        stack: &mut Vec<Module>,
        done: &mut BTreeSet<Module>,
        related: &dyn Fn(&Module, &Module) -> bool,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = stack.iter().position(|s| s == m) {
            let circle: Vec<String> = stack[at..].iter().chain([m]).map(|s| s.join("::")).collect();
            panic!("import circle: {}", circle.join(" → "));
        }
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten().filter(|next| !related(m, next)) {
            visit(next, graph, stack, done, related);
        }
        stack.pop();
        done.insert(m.clone());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done, &related);
    }
}

#[test]
fn every_module_imports_only_from_earlier_layers() {
    let (graph, _) = imports();
    let layer = |m: &Module| LAYERS.iter().position(|l| *l == m[0]);
    for (module, targets) in &graph {
        let Some(own) = layer(module) else { panic!("src/{} is in no layer: add it to LAYERS", module[0]) };
        for target in targets {
            let theirs = layer(target).unwrap_or_else(|| panic!("src/{} is in no layer", target[0]));
            assert!(
                theirs <= own,
                "{} imports {}, a later layer ({} after {})",
                module.join("::"),
                target.join("::"),
                LAYERS[theirs],
                LAYERS[own]
            );
        }
    }
}

/// The families the registry lists: the modules it imports from `families::{…}`, the one list.
fn registered_families() -> Vec<String> {
    let registry = code(&std::fs::read_to_string(src().join("models/registry.rs")).unwrap());
    paths_after(&registry, "super::families::").into_iter().map(|p| p.join("::")).collect()
}

#[test]
fn the_registry_lists_every_family_file_once() {
    let listed = registered_families();
    assert!(listed.len() >= 10, "the registry's families were not read: {listed:?}");
    let mut files = Vec::new();
    modules(&src().join("models/families"), &[], &mut files);
    let mut on_disk: Vec<String> = files.into_iter().map(|(m, _)| m.join("::")).filter(|m| !m.is_empty()).collect();
    on_disk.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), listed.len(), "a family listed twice: {listed:?}");
    assert_eq!(sorted, on_disk, "the registry against src/models/families/");
}

#[test]
fn families_never_reach_the_registry_hf_or_the_model() {
    let (graph, _) = imports();
    let m = |path: &[&str]| path.iter().map(|s| s.to_string()).collect::<Module>();
    let forbidden = [m(&["models", "registry"]), m(&["models", "hf"]), m(&["models"])];
    let families = registered_families();
    for family in &families {
        let module = m(&["models", "families", family]);
        let imports = graph.get(&module).unwrap_or_else(|| panic!("no src/models/families/{family}.rs"));
        for f in &forbidden {
            assert!(!imports.contains(f), "{family} imports {}", f.join("::"));
        }
    }
    let registry = m(&["models", "registry"]);
    let asking: Vec<String> = graph.iter().filter(|(_, t)| t.contains(&registry)).map(|(k, _)| k.join("::")).collect();
    assert_eq!(asking, ["models::hf"], "only hf asks the registry");
    // the parser sees what it should: the registry imports every family
    assert!(
        families.iter().all(|f| graph[&registry].contains(&m(&["models", "families", f]))),
        "{:?}",
        graph[&registry]
    );
}
