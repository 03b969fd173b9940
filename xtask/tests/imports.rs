//! Modules import one way (issue 37): in no crate of the workspace does a module reach itself
//! through the modules it names. A module names another by a path (`use crate::ir::*`,
//! `use super::plan::Plan`, `super::rows::rows_of(..)`, a child's `layout::plan_storage(..)`,
//! a sibling's `rows::Uses` reached through `use super::*`); declaring a child (`mod x;`) is no
//! import, test modules and comments do not count. A cycle fails the test, naming its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose modules have cycles still (issue 37 is breaking them one crate at a time).
/// The test also fails when one of them has none any more, so the list only shrinks.
const NOT_YET: &[&str] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir` (not `src/bin`, whose files are crates of their own).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().unwrap() != "bin" {
                sources(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's module path under `src` (`crate`, `crate::lower`, `crate::lower::rows`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    std::iter::once("crate".to_string())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("::")
}

/// The code of a file without comments and without its `#[cfg(test)]` modules (which rustfmt
/// closes with a `}` in the first column).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines.peek().is_some_and(|l| {
                let l = l
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ");
                l.starts_with("mod ") && l.ends_with('{')
            })
        {
            for l in lines.by_ref() {
                if l == "}" {
                    break;
                }
            }
            continue;
        }
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn parent(m: &str) -> &str {
    m.rsplit_once("::").map_or(m, |(p, _)| p)
}

/// The modules a file's code names, by path.
fn imports(
    module: &str,
    code: &str,
    modules: &BTreeSet<String>,
    facade: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let glob_parent = code.contains("use super::*")
        || code.contains("use super::{") && {
            let i = code.find("use super::{").unwrap();
            code[i..].split('}').next().unwrap().contains('*')
        };
    let bytes = code.as_bytes();
    let ident = |i: usize| -> (String, usize) {
        let mut j = i;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
            j += 1;
        }
        (code[i..j].to_string(), j)
    };
    let mut i = 0;
    while i < bytes.len() {
        let starts = (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
            && !(i >= 2 && &bytes[i - 2..i] == b"::");
        if !starts {
            i += 1;
            continue;
        }
        // A path: its segments, and the items of a brace group that ends it.
        let mut segs = Vec::new();
        let mut group = Vec::new();
        let mut j = i;
        loop {
            let (seg, end) = ident(j);
            segs.push(seg);
            let after = &code[end..];
            if after.starts_with("::{") {
                let close = after.find('}').map_or(after.len(), |c| c);
                group = after[3..close]
                    .split(',')
                    .map(|item| {
                        let item = item.trim();
                        let head = item.split(" as ").next().unwrap_or("").trim();
                        head.split("::").next().unwrap_or("").to_string()
                    })
                    .filter(|h| !h.is_empty())
                    .collect();
                i = end + close;
                break;
            }
            if after.starts_with("::")
                && after[2..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '*')
            {
                if after[2..].starts_with('*') {
                    i = end + 3;
                    break;
                }
                j = end + 2;
            } else {
                i = end.max(i + 1);
                break;
            }
        }
        let qualified = segs.len() > 1 || !group.is_empty() || code[..i].ends_with("::*");
        // The module it starts from.
        let (mut at, rest): (String, &[String]) = match segs[0].as_str() {
            "crate" if qualified => ("crate".into(), &segs[1..]),
            "super" if qualified => {
                let mut m = parent(module).to_string();
                let mut k = 1;
                while segs.get(k).is_some_and(|s| s == "super") {
                    m = parent(&m).to_string();
                    k += 1;
                }
                (m, &segs[k..])
            }
            "self" if qualified => (module.to_string(), &segs[1..]),
            "crate" | "super" | "self" => continue,
            first if segs.len() > 1 || !group.is_empty() => {
                let child = format!("{module}::{first}");
                let sibling = format!("{}::{first}", parent(module));
                if modules.contains(&child) {
                    (child, &segs[1..])
                } else if glob_parent && module != "crate" && modules.contains(&sibling) {
                    (sibling, &segs[1..])
                } else {
                    continue;
                }
            }
            _ => continue,
        };
        let mut last_is_module = true;
        for s in rest {
            let next = format!("{at}::{s}");
            if modules.contains(&next) {
                at = next;
            } else {
                // An item the crate root re-exports is the defining module's.
                if at == "crate" {
                    if let Some(m) = facade.get(s) {
                        at.clone_from(m);
                    }
                }
                last_is_module = false;
                break;
            }
        }
        let mut targets = Vec::new();
        if group.is_empty() || !last_is_module {
            targets.push(at.clone());
        } else {
            for item in &group {
                let sub = format!("{at}::{item}");
                // A module of the group, an item the root re-exports, else `self`, `*` or an
                // item defined in `at` itself.
                targets.push(if modules.contains(&sub) {
                    sub
                } else if at == "crate" && facade.contains_key(item) {
                    facade[item].clone()
                } else {
                    at.clone()
                });
            }
        }
        for t in targets {
            if t != module && modules.contains(&t) {
                out.insert(t);
            }
        }
    }
    out
}

/// The cycles (strongly connected components of more than one module) of a crate's imports.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one cycle when each reaches the other.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    stack.push(n.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) || !reaches[m].contains(m) {
            continue;
        }
        let comp: Vec<String> = graph
            .keys()
            .filter(|n| *n == m || (reaches[m].contains(*n) && reaches[*n].contains(m)))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        out.push(comp);
    }
    out
}

/// The crate root's re-exports of its modules' items (`pub use error::{Error, Result};`): name →
/// defining module. A module that names `crate::Error` imports `crate::error`, not the root.
fn reexports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stmt in root.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (path, items) = match rest.split_once("::{") {
            Some((p, items)) => (
                p,
                items.trim_end_matches('}').split(',').collect::<Vec<_>>(),
            ),
            None => match rest.rsplit_once("::") {
                Some((p, item)) => (p, vec![item]),
                None => continue,
            },
        };
        let m = format!("crate::{}", path.trim().trim_start_matches("crate::"));
        if modules.contains(&m) {
            for item in items {
                let name = item.split(" as ").last().unwrap_or("").trim();
                if !name.is_empty() {
                    out.insert(name.to_string(), m.clone());
                }
            }
        }
    }
    out
}

/// The import graph of the crate at `dir`, by module path, and each module's file.
fn graph(
    dir: &Path,
) -> (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, PathBuf>,
) {
    let src = dir.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let files: BTreeMap<String, PathBuf> = files
        .into_iter()
        .map(|f| (module_of(&src, &f), f))
        .collect();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let facade = files
        .get("crate")
        .map(|root| reexports(&code(&std::fs::read_to_string(root).unwrap()), &modules))
        .unwrap_or_default();
    let graph = files
        .iter()
        .map(|(m, f)| {
            let text = std::fs::read_to_string(f).unwrap();
            (m.clone(), imports(m, &code(&text), &modules, &facade))
        })
        .collect();
    (graph, files)
}

fn members() -> Vec<String> {
    let toml = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let list = toml
        .split("members = [")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    list.split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut failures = Vec::new();
    for member in members() {
        let (graph, files) = graph(&workspace().join(&member));
        let found = cycles(&graph);
        let listed = NOT_YET.contains(&member.as_str());
        if !found.is_empty() && !listed {
            for c in found {
                let names: Vec<String> = c
                    .iter()
                    .map(|m| {
                        files[m]
                            .strip_prefix(workspace())
                            .unwrap()
                            .display()
                            .to_string()
                    })
                    .collect();
                let edges: Vec<String> = c
                    .iter()
                    .flat_map(|m| {
                        graph[m]
                            .iter()
                            .filter(|n| c.contains(n))
                            .map(move |n| format!("{m} -> {n}"))
                    })
                    .collect();
                failures.push(format!(
                    "{member}: a cycle through {}\n  edges: {}",
                    names.join(", "),
                    edges.join(", ")
                ));
            }
        } else if found.is_empty() && listed {
            failures.push(format!(
                "{member} has no cycle any more: take it off NOT_YET"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The detector on a small made-up crate: a pass importing its parent's glob, and the parent
/// calling the pass, is a cycle; a pass importing a leaf sibling is not.
#[test]
fn the_detector_sees_a_parent_and_child_cycle() {
    let modules: BTreeSet<String> = [
        "crate",
        "crate::lower",
        "crate::lower::a",
        "crate::lower::plan",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let a = imports(
        "crate::lower::a",
        "use super::*;\nfn f() { plan::x(); }",
        &modules,
        &BTreeMap::new(),
    );
    assert_eq!(
        a,
        ["crate::lower", "crate::lower::plan"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let m = imports(
        "crate::lower",
        "mod a;\nfn g() { a::run(); }",
        &modules,
        &BTreeMap::new(),
    );
    assert_eq!(
        m,
        ["crate::lower::a"].iter().map(|s| s.to_string()).collect()
    );
    let mut g = BTreeMap::new();
    g.insert("crate::lower::a".to_string(), a);
    g.insert("crate::lower".to_string(), m);
    g.insert("crate::lower::plan".to_string(), BTreeSet::new());
    assert_eq!(
        cycles(&g),
        vec![vec![
            "crate::lower".to_string(),
            "crate::lower::a".to_string()
        ]]
    );
    let leaf = imports(
        "crate::lower::a",
        &code("use super::plan::Plan;\n// use super::*;\n"),
        &modules,
        &BTreeMap::new(),
    );
    assert_eq!(
        leaf,
        ["crate::lower::plan"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}
