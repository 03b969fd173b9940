//! What a newcomer reads first stays short (issue 37): README.md at most 200 lines,
//! ARCHITECTURE.md at most 15 KB; and no source file of the crates below over 1,000 lines,
//! except those still listed in `TOO_LONG`, nor any file of the crates' test folders (tests go
//! by topic), except those in `TOO_LONG_TESTS` (each test fails when a listed file is short
//! enough, so the lists only shrink). The headers' limit is `tilelang-codegen/tests/headers.rs`.

use std::path::{Path, PathBuf};

const TOO_LONG: &[&str] = &[];
const TOO_LONG_TESTS: &[&str] = &[];

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

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The Rust files under `dirs` over 1,000 lines that `listed` (the list called `name`) does
/// not name, and those it names that are not over any more.
fn over_1000_lines(dirs: &[&str], listed: &[&str], name: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for dir in dirs {
        let mut all = Vec::new();
        files(&root().join(dir), &mut all);
        for f in all {
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            let lines = std::fs::read_to_string(&f).unwrap().lines().count();
            let is_listed = listed.contains(&rel.as_str());
            if lines > 1000 && !is_listed {
                failures.push(format!("{rel}: {lines} lines"));
            } else if lines <= 1000 && is_listed {
                failures.push(format!("{rel} is {lines} lines now: take it off {name}"));
            }
        }
    }
    failures
}

#[test]
fn no_source_file_over_1000_lines() {
    let dirs = [
        "tilelang-codegen/src",
        "tilelang-rt/src",
        "benches/src",
        "xtask/src",
    ];
    let failures = over_1000_lines(&dirs, TOO_LONG, "TOO_LONG");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn no_test_file_over_1000_lines() {
    let dirs = [
        "tilelang-codegen/tests",
        "tilelang-rt/tests",
        "tilelang-build/tests",
        "kernels/tests",
        "examples/tests",
        // The `tests` crate, all of it: the launch tests and the trybuild fixtures.
        "tests",
        "benches/record/tests",
        "xtask/tests",
    ];
    let failures = over_1000_lines(&dirs, TOO_LONG_TESTS, "TOO_LONG_TESTS");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
