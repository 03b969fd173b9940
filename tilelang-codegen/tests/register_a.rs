//! A `gemm`'s A operand from registers (issue 39, stages 5 and 6): a fragment written from
//! another product's accumulator feeds mma.sync (`gemm_mma_rs`) and, on sm_90a, wgmma's
//! register form (`gemm_wgmma_rs`), however the fragment is spelled; a fragment A that no
//! accumulator writes, or whose registers cannot feed the product, is read from shared memory.

mod common;

use common::hip;

/// A product's result feeding the next `gemm` as A, spelled as a user would: through a loop
/// that reads the row maximum (`a_s[(i, j)] = (pa[(i, j)] - pm[i]) as f16`) or a `copy`, with
/// the second product's accumulator used for nothing else. Everything stays in registers on
/// NVIDIA: the fragment takes `pa`'s layout before the rows are laid out (else `pm`, read in
/// a loop over two layouts, went to shared memory and took `pa` and the first product off the
/// matrix unit with it), and both accumulators give each warp whole rows (else `acc`, with no
/// row use, took two warp columns and A could not come from registers).
#[test]
fn a_chained_product_keeps_its_a_operand_in_registers() {
    let src = |fill: &str| {
        format!(
            r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = THREADS,
    configs = [wide(BM = 128, BN = 64, BK = 64, THREADS = 256), narrow(BM = 64, BN = 128, BK = 32, THREADS = 128)])]
pub fn k<const BM: usize, const BN: usize, const BK: usize, const THREADS: usize>(a: &Tensor<f16, (M, K)>, w: &Tensor<f16, (K, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f32, (M, N)>) {{
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut x_s = alloc_shared::<f16, (BM, BK)>();
    let mut w_s = alloc_shared::<f16, (BK, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut pa = alloc_fragment::<f32, (BM, BK)>();
    let mut pm = alloc_fragment::<f32, (BM,)>();
    let mut a_s = alloc_fragment::<f16, (BM, BK)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for kk in serial(0, K.div_ceil(BK)) {{
        copy(a.at((r0, kk * BK)), &mut x_s);
        copy(w.at((kk * BK, kk * BK)), &mut w_s);
        copy(b.at((kk * BK, c0)), &mut b_s);
        clear(&mut pa);
        gemm(&x_s, &w_s, &mut pa);
        reduce_max(&pa, &mut pm, 1);
        {fill}
        gemm(&a_s, &b_s, &mut acc);
    }}
    copy(&acc, c.at_mut((r0, c0)));
}}
"#
        )
    };
    let fills = [
        "for (i, j) in parallel(BM, BK) { a_s[(i, j)] = (pa[(i, j)] - pm[i]) as f16; }",
        "for (i, j) in parallel(BM, BK) { pa[(i, j)] = pa[(i, j)] - pm[i]; } copy(&pa, &mut a_s);",
    ];
    for fill in fills {
        let src = src(fill);
        for (arch, config) in ["sm_80", "sm_90", "sm_90a"]
            .iter()
            .flat_map(|a| [(*a, 0), (*a, 1)])
        {
            let h = hip(&src, config, arch);
            assert!(
                h.demoted.is_empty(),
                "{arch} {config} {fill}: {:?}",
                h.notes
            );
            // On sm_90a the second product takes wgmma's RS form (M 64 a warpgroup, N 64 or
            // 128), whether the first runs on wgmma (`wide`) or mma.sync (`narrow`, N 32).
            let rs = match arch {
                "sm_90a" => "tl::gemm_wgmma_rs<",
                _ => "tl::gemm_mma_rs<",
            };
            assert!(
                h.source.contains(rs) && !h.source.contains("gemm_fma"),
                "{arch} {config} {fill}"
            );
        }
    }
}

/// A fragment A that no accumulator writes (copied from memory) is read from shared memory as
/// before register operands existed: wgmma's shared form on sm_90a. And one written from an
/// accumulator whose registers then cannot feed wgmma (a loop over it in another order
/// demotes it) is planned again: the product leaves wgmma's register form for a path that
/// reads it from shared memory, and the build says why.
#[test]
fn a_fragment_a_takes_registers_only_where_they_feed_the_product() {
    let from_memory = "
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = 128, configs = [t(BM = 64, BN = 64, BK = 64)])]
pub fn k<const BM: usize, const BN: usize, const BK: usize>(a: &Tensor<f16, (M, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f32, (M, N)>) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_f = alloc_fragment::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for kk in serial(0, K.div_ceil(BK)) {
        copy(a.at((r0, kk * BK)), &mut a_f);
        copy(b.at((kk * BK, c0)), &mut b_s);
        gemm(&a_f, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((r0, c0)));
}
";
    let h = hip(from_memory, 0, "sm_90a");
    assert_eq!(h.gemms, ["wgmma"], "{:?}", h.notes);
    assert!(h.source.contains("tl::gemm_wgmma<"));
    let unfed = "
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = 128, configs = [t(BM = 64, BN = 64, BK = 64)])]
pub fn k<const BM: usize, const BN: usize, const BK: usize>(a: &Tensor<f16, (M, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f32, (M, N)>) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut x_s = alloc_shared::<f16, (BM, BK)>();
    let mut w_s = alloc_shared::<f16, (BK, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut pa = alloc_fragment::<f32, (BM, BK)>();
    let mut p = alloc_fragment::<f16, (BM, BK)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for kk in serial(0, K.div_ceil(BK)) {
        copy(a.at((r0, kk * BK)), &mut x_s);
        copy(a.at((r0, kk * BK)), &mut w_s);
        copy(b.at((kk * BK, c0)), &mut b_s);
        clear(&mut pa);
        gemm(&x_s, &w_s, &mut pa);
        copy(&pa, &mut p);
        for (j, i) in parallel(BK, BM) { p[(i, j)] = p[(i, j)] * 2.0; }
        gemm(&p, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((r0, c0)));
}
";
    for arch in ["sm_90", "sm_90a"] {
        let h = hip(unfed, 0, arch);
        assert!(
            h.demoted.contains(&"p".to_string()),
            "{arch}: {:?}",
            h.notes
        );
        assert!(
            !h.source.contains("gemm_wgmma_rs") && !h.source.contains("gemm_mma_rs"),
            "{arch}"
        );
        assert_eq!(h.gemms.len(), 2, "{arch}");
        assert!(h.gemms[1].starts_with("mma.sync"), "{arch}: {:?}", h.gemms);
    }
    let h = hip(unfed, 0, "sm_90a");
    assert!(
        h.notes
            .iter()
            .any(|n| n.contains("not held in registers in a layout wgmma reads")),
        "{:?}",
        h.notes
    );
}
