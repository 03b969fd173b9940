//! What a newcomer reads first stays short (issue 37): README.md at most 200 lines,
//! ARCHITECTURE.md at most 15 KB; and no source file of the crates below over 1,000 lines,
//! except those still listed in `TOO_LONG` (the test fails when one of them is short enough,
//! so the list only shrinks).

use std::path::Path;

const TOO_LONG: &[&str] = &[];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
fn readme_and_architecture_stay_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 200,
        "README.md: {} lines",
        readme.lines().count()
    );
    let arch = std::fs::read(root().join("ARCHITECTURE.md")).unwrap();
    assert!(
        arch.len() <= 15 * 1024,
        "ARCHITECTURE.md: {} bytes",
        arch.len()
    );
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_over_1000_lines() {
    let mut failures = Vec::new();
    for dir in [
        "tilelang-codegen/src",
        "tilelang-rt/src",
        "benches/src",
        "xtask/src",
    ] {
        let mut all = Vec::new();
        files(&root().join(dir), &mut all);
        for f in all {
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            let lines = std::fs::read_to_string(&f).unwrap().lines().count();
            let listed = TOO_LONG.contains(&rel.as_str());
            if lines > 1000 && !listed {
                failures.push(format!("{rel}: {lines} lines"));
            } else if lines <= 1000 && listed {
                failures.push(format!("{rel} is {lines} lines now: take it off TOO_LONG"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
