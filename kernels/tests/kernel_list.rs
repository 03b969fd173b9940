//! `kernels::KERNELS` is the one list of the chapters' kernels, `kernels::MATH_KERNELS` of the
//! math library's checks and `kernels::MAPPING_KERNELS` of the two-mapping checks: together they must hold every kernel the sources define (found the way
//! the build script finds them), and each entry's metadata must be what the kernel's attribute
//! says.

use kernels::{KERNELS, MAPPING_KERNELS, MATH_KERNELS};
use std::path::Path;
use tilelang_build::find::{self, Found};

fn found() -> Vec<Found> {
    find::kernels(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).expect("scan kernels/src")
}

#[test]
fn the_list_holds_every_kernel_of_the_chapters_in_source_order() {
    let in_sources: Vec<String> = found()
        .iter()
        .map(|f| f.ir.name.to_string())
        .filter(|n| {
            MATH_KERNELS
                .iter()
                .chain(MAPPING_KERNELS)
                .all(|k| k.name != n)
        })
        .collect();
    let listed: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
    let missing: Vec<&String> = in_sources
        .iter()
        .filter(|n| !listed.contains(&n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "kernels defined in kernels/src but missing from kernels::KERNELS (kernels/src/lib.rs): \
         {missing:?}"
    );
    assert_eq!(
        listed, in_sources,
        "kernels::KERNELS must list the chapters' kernels once each, in chapter and source order"
    );
    assert_eq!(listed.len(), 22, "the ten chapters define 22 kernels");
}

#[test]
fn each_entry_is_what_its_attribute_says() {
    for f in found() {
        let k = &f.ir;
        let name = k.name.to_string();
        let info = kernels::kernel(&name).unwrap_or_else(|| panic!("{name} is not listed"));
        let configs: Vec<(String, Vec<(String, usize)>)> = k
            .configs
            .iter()
            .map(|c| {
                let values = k.consts.iter().zip(&c.values);
                let values = values.map(|(q, v)| (q.to_string(), *v as usize)).collect();
                (c.name.to_string(), values)
            })
            .collect();
        let listed: Vec<(String, Vec<(String, usize)>)> = info
            .configs
            .iter()
            .map(|c| {
                let values = c.values.iter().map(|(q, v)| (q.to_string(), *v)).collect();
                (c.name.to_string(), values)
            })
            .collect();
        assert_eq!(listed, configs, "{name}: configs and their values");
        let names: Vec<&str> = info.configs.iter().map(|c| c.name).collect();
        assert_eq!(info.config_names, names, "{name}: config_names");
        let defaults: Vec<(String, String)> = k
            .defaults
            .iter()
            .map(|(arch, c)| (arch.clone(), k.configs[*c].name.to_string()))
            .collect();
        let listed: Vec<(String, String)> = info
            .defaults
            .iter()
            .map(|(a, c)| (a.to_string(), c.to_string()))
            .collect();
        assert_eq!(listed, defaults, "{name}: defaults");
        let symbols: Vec<String> = k.symbols.iter().map(|s| s.to_string()).collect();
        assert_eq!(info.symbols, symbols, "{name}: symbols");
    }
}

#[test]
fn every_default_names_a_config_and_config_names_are_unique() {
    for k in KERNELS.iter().chain(MATH_KERNELS).chain(MAPPING_KERNELS) {
        assert!(!k.configs.is_empty(), "{}: no configs", k.name);
        for (arch, config) in k.defaults {
            assert!(
                k.config(config).is_some(),
                "{}: the default for {arch}, `{config}`, is not a config",
                k.name
            );
            assert_eq!(k.default_config(arch), *config, "{}: {arch}", k.name);
        }
        for (i, c) in k.configs.iter().enumerate() {
            assert!(
                k.configs[..i].iter().all(|d| d.name != c.name),
                "{}: config `{}` twice",
                k.name,
                c.name
            );
        }
    }
}

/// One kernel checked by hand against its attribute in `ch08_gemm.rs`.
#[test]
fn gemm_tiled_has_the_configs_of_its_attribute() {
    let k = &kernels::ch08_gemm::gemm_tiled::KERNEL;
    assert_eq!(k.name, "gemm_tiled");
    assert_eq!(
        k.config_names,
        &[
            "t128x128x32s3",
            "t128x128x32s1",
            "t64x64x32s2",
            "t128x256x32s2",
            "t128x256x64s3",
            "t128x256x64s4",
            "t16x32x16s2"
        ]
    );
    let c = k.config("t128x256x32s2").expect("t128x256x32s2");
    assert_eq!(
        c.values,
        &[
            ("BM", 128),
            ("BN", 256),
            ("BK", 32),
            ("STAGES", 2),
            ("THREADS", 256)
        ]
    );
    let stages: Vec<usize> = k
        .configs
        .iter()
        .map(|c| c.value("STAGES").unwrap())
        .collect();
    assert_eq!(stages, [3, 1, 2, 2, 3, 4, 2]);
    assert_eq!(k.default_config("cpu"), "t128x256x32s2");
    assert_eq!(k.default_config("gfx1151"), "t64x64x32s2");
    assert_eq!(k.symbols, &["M", "K", "N"]);
}
