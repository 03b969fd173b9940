//! A buffer read under two thread mappings (issue 36): the layout passes keep it in registers
//! only when every access is served by its layout (`lower/served.rs`); otherwise it stays in
//! shared memory. Checked on the generated source of every target. (Whether the code computes
//! the right values is `kernels/tests/emulation.rs`'s two-mapping test and the GPU suite's.)

mod common;

use common::kernel;
use tilelang_codegen::lower::{emit, HipKernel};
use tilelang_codegen::target::TARGETS;

/// Every config on every target.
fn every(src: &str) -> Vec<(String, HipKernel)> {
    let k = kernel(src);
    let mut out = Vec::new();
    for t in TARGETS {
        for c in 0..k.configs.len() {
            let h = emit(&k, c, t, None)
                .unwrap_or_else(|d| panic!("{} config {c}: {}", t.arch, d.text()));
            out.push((format!("{} config {c}", t.arch), h));
        }
    }
    out
}

/// `cv_t` (a column tile) read by `(i, j)` loops as `cv_t[j]` and, in `SECOND`, by a
/// `(j, i)` loop as `cv_t[j]` too: a column broadcast and a row broadcast.
fn bias(alloc: &str, second: bool) -> String {
    let second = if second {
        "for (j, i) in parallel(BN, BM) { o_f[(j, i)] = cv_t[j] as f32; }"
    } else {
        "for (j, i) in parallel(BN, BM) { o_f[(j, i)] = a_t[(i, j)] as f32; }"
    };
    format!(
        r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = THREADS,
    configs = [c0(BM = 4, BN = 64, THREADS = 256), c1(BM = 4, BN = 40, THREADS = 32), c2(BM = 4, BN = 16, THREADS = 64)])]
pub fn k<const BM: usize, const BN: usize, const THREADS: usize>(
    a: &Tensor<f16, (M, N)>, cv: &Tensor<f16, (N,)>, t: &mut Tensor<f16, (M, N)>, o: &mut Tensor<f16, (N, M)>,
) {{
    let (row0, col0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a_t = alloc_shared::<f16, (BM, BN)>();
    let mut cv_t = {alloc}::<f16, (BN,)>();
    let mut t_f = alloc_fragment::<f32, (BM, BN)>();
    let mut o_f = alloc_fragment::<f32, (BN, BM)>();
    copy(a.at((row0, col0)), &mut a_t);
    copy(cv.at((col0,)), &mut cv_t);
    for (i, j) in parallel(BM, BN) {{ t_f[(i, j)] = (a_t[(i, j)] as f32) + (cv_t[j] as f32); }}
    {second}
    copy(&t_f, t.at_mut((row0, col0)));
    copy(&o_f, o.at_mut((col0, row0)));
}}
"#
    )
}

/// Whether the source declares `cv_t` in shared memory (`tl::half* b1_cv_t = ..`) rather than as
/// a register array (`tl::half b1_cv_t[n];`).
fn cv_t_shared(h: &HipKernel) -> bool {
    let decl = h
        .source
        .lines()
        .find(|l| l.contains("b1_cv_t") && (l.contains("tl::half*") || l.contains("b1_cv_t[")))
        .unwrap_or_else(|| panic!("no declaration of cv_t in\n{}", h.source));
    decl.contains("tl::half* b1_cv_t")
}

#[test]
fn a_shared_column_tile_read_as_a_row_too_stays_shared_on_every_target() {
    for (what, h) in every(&bias("alloc_shared", true)) {
        assert!(cv_t_shared(&h), "{what}: cv_t held in registers");
    }
}

#[test]
fn a_column_fragment_read_as_a_row_too_is_demoted_on_every_target() {
    for (what, h) in every(&bias("alloc_fragment", true)) {
        assert!(cv_t_shared(&h), "{what}: cv_t held in registers");
        assert_eq!(h.demoted, ["cv_t"], "{what}: the build names the demotion");
    }
}

/// The rule costs nothing where one mapping serves: read as a column broadcast only, the tile
/// is held in registers wherever its rows fall on whole thread groups (configs 0 and 2, on
/// every target), as before; config 1's rows of 40 on 32 threads fall on none, so it stays
/// shared there (a fragment is demoted, and the build says so).
#[test]
fn a_column_tile_read_only_as_columns_stays_in_registers() {
    for alloc in ["alloc_shared", "alloc_fragment"] {
        for (what, h) in every(&bias(alloc, false)) {
            let whole_groups = !what.ends_with("config 1");
            assert_eq!(
                !cv_t_shared(&h),
                whole_groups,
                "{alloc}, {what}: cv_t in registers"
            );
            let demoted = alloc == "alloc_fragment" && !whole_groups;
            assert_eq!(
                h.demoted.contains(&"cv_t".to_string()),
                demoted,
                "{alloc}, {what}"
            );
        }
    }
}
