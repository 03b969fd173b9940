//! `examples::KERNELS` must hold every kernel of `examples/src` (found the way the build script
//! finds them), each once, with the configs its attribute gives.

use examples::KERNELS;
use std::path::Path;
use tilelang_build::find;

#[test]
fn the_list_holds_every_kernel_of_the_sources() {
    let found = find::kernels(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("scan examples/src");
    let mut in_sources: Vec<String> = found.iter().map(|f| f.ir.name.to_string()).collect();
    let mut listed: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
    in_sources.sort();
    listed.sort();
    assert_eq!(
        listed, in_sources,
        "examples::KERNELS (examples/src/lib.rs) vs the sources"
    );
    for f in &found {
        let info = examples::kernel(&f.ir.name.to_string()).unwrap();
        let names: Vec<String> = f.ir.configs.iter().map(|c| c.name.to_string()).collect();
        assert_eq!(info.config_names, names, "{}", info.name);
        for (arch, c) in info.defaults {
            assert!(
                info.config(c).is_some(),
                "{}: default for {arch}",
                info.name
            );
        }
    }
}
