//! The tile library's headers (`include/`): every header a generated source can reach is one
//! the build writes beside it (`lower::HEADERS`), and none is over 800 lines.

use std::collections::BTreeSet;
use std::path::Path;
use tilelang_codegen::lower::HEADERS;

/// The headers the host emulation adds (`TL_HOST_EMULATION`): `tl_host.h` and the parts it
/// includes, never part of a device build.
const HOST_ONLY: &[&str] = &[
    "tl_host.h",
    "tl_host_device.h",
    "tl_host_block.h",
    "tl_host_types.h",
    "tl_host_hopper.h",
];

fn included(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#include \""))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_build_writes_every_header_a_source_can_include() {
    let listed: BTreeSet<&str> = HEADERS.iter().map(|(name, _)| *name).collect();
    assert!(
        listed.contains("tl.h"),
        "the generated sources include tl.h"
    );
    for (name, text) in HEADERS {
        for inc in included(text) {
            assert!(
                inc == "tl_host.h" || listed.contains(inc.as_str()),
                "{name} includes {inc}, which lower::HEADERS does not list"
            );
        }
    }
    // And every header of the folder is listed (or one of the host's own), as included.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".h") && !HOST_ONLY.contains(&name.as_str()) {
            assert!(
                listed.contains(name.as_str()),
                "{name} is not in lower::HEADERS"
            );
            let on_disk = std::fs::read_to_string(dir.join(&name)).unwrap();
            let text = HEADERS.iter().find(|(n, _)| *n == name).unwrap().1;
            assert_eq!(on_disk, text, "{name}: HEADERS holds another text");
        }
    }
}

/// `tl_host.h` includes every part `HOST_ONLY` names (so each exists), and the parts include
/// only one another.
#[test]
fn tl_host_includes_its_parts_and_only_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let text = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let parts = included(&text("tl_host.h"));
    for name in &HOST_ONLY[1..] {
        assert!(
            parts.iter().any(|p| p == name),
            "tl_host.h does not include {name}"
        );
    }
    for name in HOST_ONLY {
        for inc in included(&text(name)) {
            assert!(
                HOST_ONLY.contains(&inc.as_str()),
                "{name} includes {inc}, which HOST_ONLY does not list"
            );
        }
    }
}

#[test]
fn no_header_is_over_800_lines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "h") {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            assert!(lines <= 800, "{}: {lines} lines", path.display());
        }
    }
}
