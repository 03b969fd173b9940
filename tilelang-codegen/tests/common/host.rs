//! The host side of the tests that run tl.h's pure sections: a scratch folder, a host C++
//! compiler, a header section's text, and a program compiled and run.

use std::path::PathBuf;
use std::process::Command;

pub fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tl-hip-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A host C++ compiler: $CXX, else c++, g++ or clang++ on PATH.
pub fn host_cxx() -> Option<String> {
    let mut names: Vec<String> = std::env::var("CXX").into_iter().collect();
    names.extend(["c++", "g++", "clang++"].map(String::from));
    names.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The text between `// BEGIN <name>` and `// END <name>` in whichever of tl.h's headers marks
/// it: the sections written to compile on the host too, which these tests run there.
pub fn tl_section(name: &str) -> &'static str {
    let begin = format!("// BEGIN {name}\n");
    let (_, header) = tilelang_codegen::lower::HEADERS
        .iter()
        .find(|(_, text)| text.contains(&begin))
        .unwrap_or_else(|| panic!("no header of tl.h marks a section `{name}`"));
    section_of(header, name)
}

/// The same for the host emulation's platform layer: `tl_host.h` and the parts it includes.
pub fn tl_host_section(name: &str) -> &'static str {
    const HOST_HEADERS: &[&str] = &[
        include_str!("../../include/tl_host.h"),
        include_str!("../../include/tl_host_device.h"),
        include_str!("../../include/tl_host_block.h"),
        include_str!("../../include/tl_host_types.h"),
        include_str!("../../include/tl_host_hopper.h"),
    ];
    let begin = format!("// BEGIN {name}\n");
    let header = HOST_HEADERS
        .iter()
        .find(|text| text.contains(&begin))
        .unwrap_or_else(|| panic!("no header of tl_host.h marks a section `{name}`"));
    section_of(header, name)
}

pub fn section_of(header: &'static str, name: &str) -> &'static str {
    let (begin, end) = (format!("// BEGIN {name}\n"), format!("// END {name}\n"));
    let start = header
        .find(&begin)
        .unwrap_or_else(|| panic!("tl.h marks no section `{name}`"))
        + begin.len();
    &header[start..header.find(&end).expect("the section ends")]
}

/// Compiles a C++17 program with the host compiler, runs it, asserts that it exits with 0 and
/// returns what it printed.
pub fn run_host_program(name: &str, text: &str) -> String {
    let cxx = host_cxx().expect("this test needs a host C++ compiler ($CXX, c++, g++ or clang++)");
    let dir = scratch_dir(name);
    let (src, exe) = (dir.join(format!("{name}.cpp")), dir.join(name));
    std::fs::write(&src, text).unwrap();
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    let report = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
    report
}
