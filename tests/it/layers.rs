//! The architecture, checked: the modules of `src/` depend one way, each
//! only on modules of a lower layer (leaves, `os`, `shells`, mechanisms,
//! `api`, `tools`, `mcp`), so there is no import cycle; and the two outer
//! layers go through one door each: `tools` reaches nothing above the
//! leaves but `api`, and `mcp` nothing above the leaves but the public API
//! (the names the crate root re-exports). Read from the source itself:
//! every `crate::PATH` in every file of a module, doc comments aside. No
//! rule has an exception.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layer of each top-level module; a module may use only modules of a
/// lower layer.
const LAYERS: &[(&str, u32)] = &[
    ("caller", 0),
    ("config", 0),
    ("deadline", 0),
    ("error", 1),
    ("limits", 0),
    ("secrets", 0),
    ("status", 0),
    ("test_rng", 0),
    ("texts", 1),
    ("os", 2),
    ("shells", 3),
    ("gate", 4),
    ("output", 4),
    ("pending", 4),
    ("timer", 4),
    ("tasks", 4),
    ("monitor", 5),
    ("policy", 5),
    ("api", 6),
    ("tools", 7),
    ("mcp", 8),
];

/// The highest layer every module may use freely: the leaves.
const LEAVES: u32 = 1;

/// Modules that reach the layers above the leaves through one door only.
enum Door {
    /// Only this module.
    Module(&'static str),
    /// Only names the crate root re-exports (`crate::Name`).
    PublicApi,
}

const DOORS: &[(&str, Door)] = &[("tools", Door::Module("api")), ("mcp", Door::PublicApi)];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first path segments named after `crate::` in `text`, with the
/// members of `crate::{a, b::c}` groups.
fn crate_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

/// Names the crate root re-exports, with the module each comes from
/// (`BashTools` → `api`), read from `pub use crate::MODULE::…` in lib.rs.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let flat = lib.replace('\n', " ");
    for stmt in flat.split(';') {
        let Some(at) = stmt.find("pub use crate::") else {
            continue;
        };
        let path = &stmt[at + "pub use crate::".len()..];
        let module: String = path
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let names = match (path.find('{'), path.rfind('}')) {
            (Some(a), Some(b)) => path[a + 1..b].to_string(),
            _ => path.rsplit("::").next().unwrap_or("").to_string(),
        };
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}

#[test]
fn modules_depend_only_on_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexported = reexports(&lib);
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut edges: BTreeSet<(String, String, String)> = BTreeSet::new();
    for path in &all {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().to_string();
        if first == "lib.rs" || first == "bin" {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(path).unwrap();
        // Doc comments show the public paths a user writes; they are not
        // dependencies.
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for name in crate_paths(&code) {
            let target = reexported.get(&name).cloned().unwrap_or(name.clone());
            if target != module && layer(&target).is_some() {
                edges.insert((module.clone(), target, rel.display().to_string()));
            }
        }
    }
    let mut wrong = Vec::new();
    for (from, to, file) in &edges {
        let (Some(a), Some(b)) = (layer(from), layer(to)) else {
            continue;
        };
        if b >= a {
            wrong.push(format!("{file}: {from} (layer {a}) uses {to} (layer {b})"));
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies that do not go down a layer:\n{}",
        wrong.join("\n")
    );
    // The doors: each `crate::` path of tools and mcp, as written.
    let mut through_wall = Vec::new();
    for path in &all {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().to_string();
        let module = first.trim_end_matches(".rs");
        let Some((_, door)) = DOORS.iter().find(|(m, _)| *m == module) else {
            continue;
        };
        let text = std::fs::read_to_string(path).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for name in crate_paths(&code) {
            let target = reexported.get(&name).cloned().unwrap_or(name.clone());
            if target == module || layer(&target).map_or(true, |l| l <= LEAVES) {
                continue;
            }
            let ok = match door {
                Door::Module(m) => target == *m,
                Door::PublicApi => reexported.contains_key(&name),
            };
            if !ok {
                through_wall.push(format!("{}: {module} uses crate::{name}", rel.display()));
            }
        }
    }
    assert!(
        through_wall.is_empty(),
        "paths past a module's one door:\n{}",
        through_wall.join("\n")
    );
    // Every module of src/ has a layer, so a new one cannot slip past.
    for path in &all {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().to_string();
        if first == "lib.rs" || first == "bin" {
            continue;
        }
        let module = first.trim_end_matches(".rs");
        assert!(layer(module).is_some(), "{module} has no layer in LAYERS");
    }
    assert!(
        edges.len() > 20,
        "the scan found too few dependencies: {edges:?}"
    );
}

/// The rank of each subsystem of `src/os/`; a subsystem may use only those
/// of a lower rank (`os/mod.rs` says why this order).
const OS_RANKS: &[(&str, u32)] = &[
    ("sys", 0),
    ("sandbox", 1),
    ("launch", 2),
    ("reaper", 3),
    ("files", 3),
    ("terminals", 3),
    ("bash", 3),
    ("contain", 4),
    ("process", 5),
];

/// The subsystems named after `crate::os::` in `text` (with the members
/// of `crate::os::{a, b::c}` groups).
fn os_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::os::") {
        rest = &rest[at + "crate::os::".len()..];
        let ident = |s: &str| -> String {
            s.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            found.extend(group[..end].split(',').map(ident));
        } else {
            found.push(ident(rest));
        }
    }
    found.retain(|n| !n.is_empty());
    found
}

#[test]
fn os_subsystems_depend_only_on_lower_ranks() {
    let os = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join("os");
    let rank = |m: &str| OS_RANKS.iter().find(|(n, _)| *n == m).map(|&(_, r)| r);
    let mut all = Vec::new();
    files(&os, &mut all);
    let mut wrong = Vec::new();
    let mut edges = 0;
    for path in &all {
        let rel = path.strip_prefix(&os).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().to_string();
        if first == "mod.rs" {
            continue;
        }
        let from = first.trim_end_matches(".rs").to_string();
        let from_rank = rank(&from).unwrap_or_else(|| panic!("os/{from} has no rank in OS_RANKS"));
        let text = std::fs::read_to_string(path).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut targets = os_paths(&code);
        // A subsystem's own top file reaches its siblings by `super::`.
        if rel.components().count() == 1 || rel.ends_with("mod.rs") && rel.components().count() == 2
        {
            let mut rest = code.as_str();
            while let Some(at) = rest.find("super::") {
                rest = &rest[at + "super::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if rank(&name).is_some() {
                    targets.push(name);
                }
            }
        }
        for to in targets {
            if to == from {
                continue;
            }
            let to_rank = rank(&to).unwrap_or_else(|| panic!("os/{to} has no rank in OS_RANKS"));
            edges += 1;
            if to_rank >= from_rank {
                wrong.push(format!(
                    "os/{}: {from} (rank {from_rank}) uses {to} (rank {to_rank})",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "os subsystems that do not depend downwards:\n{}",
        wrong.join("\n")
    );
    assert!(edges > 20, "the scan found too few dependencies: {edges}");
}
