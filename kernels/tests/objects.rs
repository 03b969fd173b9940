//! The device objects the build script compiled are embedded in every kernel: one per
//! (target, config), each an ELF image that defines the kernel's entry symbol. With no device
//! compiler (or `TILELANG_TARGETS=none`) there are none, and GPU launches say so.

use kernels::{KERNELS, MAPPING_KERNELS, MATH_KERNELS};

/// The archs the build script reported compiling (`TILELANG_BUILT=kernels;sm_90,...`, read
/// as the macro reads it: `tilelang_codegen::names`).
fn built() -> Vec<&'static str> {
    option_env!("TILELANG_BUILT")
        .and_then(|b| tilelang_codegen::names::built_archs(b, "kernels"))
        .unwrap_or_default()
}

#[test]
fn every_kernel_config_and_target_has_an_object_with_its_symbol() {
    let archs = built();
    println!("archs compiled by the build script: {archs:?}");
    let mut count = 0;
    for k in KERNELS.iter().chain(MATH_KERNELS).chain(MAPPING_KERNELS) {
        let (name, configs, objects) = (k.name, k.config_names, k.objects);
        assert_eq!(
            objects.len(),
            configs.len() * archs.len(),
            "{name}: one object per config and target"
        );
        for arch in &archs {
            for config in configs {
                let o = objects
                    .iter()
                    .find(|o| o.arch == *arch && o.config == *config)
                    .unwrap_or_else(|| panic!("{name}: no object for {config} on {arch}"));
                assert_eq!(o.entry, format!("tl_{name}__{config}"));
                assert!(
                    o.threads >= 1 && o.threads <= 1024,
                    "{name}/{config}: threads {}",
                    o.threads
                );
                assert_eq!(
                    &o.image[..4],
                    b"\x7fELF",
                    "{name}/{config}/{arch}: not an ELF image"
                );
                let sym = o.entry.as_bytes();
                assert!(
                    o.image.windows(sym.len()).any(|w| w == sym),
                    "{name}/{config}/{arch}: the image does not define `{}`",
                    o.entry
                );
                count += 1;
            }
        }
    }
    println!("{count} objects checked");
}

#[test]
fn a_device_without_objects_for_its_arch_is_refused() {
    // The CPU backend needs no objects; a GPU launch with none for the device's arch fails with
    // an error naming both (checked here through the pure selection function).
    let err = tilelang::__private::gpu::select_object("k", &[], "sm_90", "default").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("sm_90"), "{msg}");
}
