//! GEMMs and pipelines in the generated HIP C++: the matrix unit of each target (`mma.sync`,
//! WMMA, MFMA, FMA where no instruction fits; wgmma on sm_90a), `pipelined` loops (`cp.async`
//! stages issued ahead), and sm_90a's TMA entry: warp specialisation, TMA loads and TMA stores.
//! (tl.h's layouts and wgmma descriptors run on the host, and the AMD GEMMs compiled with clang,
//! are in `hip.rs`.)

mod common;

use common::{gemm_variant, hip, kernel, GEMM};
use tilelang_codegen::lower::{emit, launch, TmaMap};
use tilelang_codegen::target::Target;

#[test]
fn gemm_uses_the_matrix_unit_of_each_target() {
    let nv = hip(GEMM, 0, "sm_90");
    // Both operand tiles are only written by copies from global memory and read by the mma
    // gemm: stored swizzled (for conflict-free ldmatrix), and the copies know it.
    assert!(
        nv.source
            .contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, true, true>"),
        "{}",
        nv.source
    );
    // Each copy appears twice (the pipeline's prologue and steady state), swizzled, async and
    // from read-only tensors.
    assert_eq!(nv.source.matches("tl::copy_g2s<").count(), 4);
    assert_eq!(
        nv.source.matches(", 128, true, true, true>(t_").count(),
        4,
        "{}",
        nv.source
    );
    // The ReLU epilogue iterates in the accumulator's mma layout, owner-only: no shared memory
    // beyond the two operand tiles.
    assert!(nv.source.contains("tl::mma_coord<64, 64, 2, 2>"));
    assert_eq!(nv.shared_bytes, 2 * (64 * 32 * 2 + 32 * 64 * 2)); // two pipeline stages
                                                                  // 128 threads: four waves of 32 in a 2×2 grid on RDNA, each wave a 32×32 sub-tile of 2×2
                                                                  // WMMA tiles; two waves of 64 side by side on CDNA, each a 64×32 sub-tile of two 32×32 MFMA
                                                                  // tiles. The epilogue and the store run in the same layout (32 registers a thread
                                                                  // everywhere: 64·64 / 128).
    for (arch, gemm, coord) in [
        (
            "gfx1100",
            "tl::gemm_wmma<tl::half, 64, 64, 32, 2, 2>",
            "tl::wmma_coord<64, 64, 2, 2>",
        ),
        (
            "gfx1151",
            "tl::gemm_wmma<tl::half, 64, 64, 32, 2, 2>",
            "tl::wmma_coord<64, 64, 2, 2>",
        ),
        (
            "gfx1201",
            "tl::gemm_wmma12<tl::half, 64, 64, 32, 2, 2>",
            "tl::wmma12_coord<64, 64, 2, 2>",
        ),
        (
            "gfx90a",
            "tl::gemm_mfma<tl::half, 64, 64, 32, 1, 2, 32>",
            "tl::mfma_coord<64, 64, 1, 2, 32>",
        ),
        (
            "gfx942",
            "tl::gemm_mfma<tl::half, 64, 64, 32, 1, 2, 32>",
            "tl::mfma_coord<64, 64, 1, 2, 32>",
        ),
    ] {
        let k = hip(GEMM, 0, arch);
        assert!(k.source.contains(gemm), "{arch}: {}", k.source);
        // The accumulator's mapping: its loop, and the store of the tile (wholly inside the
        // tensor with no test per element, across its edge with one).
        assert_eq!(k.source.matches(coord).count(), 3, "{arch}: {}", k.source);
        assert_eq!(
            k.source
                .matches("if (tl::tile_inside<1, 1, 64, 64>(__g)) {")
                .count(),
            1,
            "{arch}: {}",
            k.source
        );
        assert!(
            k.source.contains("float b2_acc[32];"),
            "{arch}: {}",
            k.source
        );
        assert!(!k.source.contains("gemm_fma"), "{arch}: {}", k.source);
        assert_eq!(k.shared_bytes, 64 * 32 * 2 + 32 * 64 * 2, "{arch}");
    }
    let amd = hip(GEMM, 0, "gfx1030");
    assert!(amd.source.contains("tl::gemm_fma<"), "{}", amd.source);
}

#[test]
fn gemm_falls_back_to_fma_where_no_instruction_fits() {
    let emit = |dtype: &str, threads: u32, bm: u32, bn: u32, bk: u32, arch: &str| {
        hip(&gemm_variant(dtype, threads, bm, bn, bk), 0, arch).source
    };
    let fma = "tl::gemm_fma<";
    // bf16 has WMMA and MFMA forms too.
    assert!(emit("bf16", 128, 64, 64, 32, "gfx1100")
        .contains("tl::gemm_wmma<tl::bfloat, 64, 64, 32, 2, 2>"));
    assert!(emit("bf16", 128, 64, 64, 32, "gfx1201")
        .contains("tl::gemm_wmma12<tl::bfloat, 64, 64, 32, 2, 2>"));
    assert!(emit("bf16", 128, 64, 64, 32, "gfx90a")
        .contains("tl::gemm_mfma<tl::bfloat, 64, 64, 32, 1, 2, 32>"));
    // f32 operands: no instruction.
    for arch in ["sm_90", "gfx1100", "gfx1201", "gfx942"] {
        assert!(emit("f32", 128, 64, 64, 32, arch).contains(fma), "{arch}");
    }
    // K = 8: too shallow for WMMA's (and mma.sync's) 16, enough for MFMA 32×32×8.
    assert!(emit("f16", 128, 64, 64, 8, "gfx1100").contains(fma));
    assert!(emit("f16", 128, 64, 64, 8, "gfx1201").contains(fma));
    assert!(emit("f16", 128, 64, 64, 8, "sm_90").contains(fma));
    assert!(emit("f16", 128, 64, 64, 8, "gfx942")
        .contains("tl::gemm_mfma<tl::half, 64, 64, 8, 1, 2, 32>"));
    // 96 threads: not whole waves of 64 on CDNA; on RDNA three waves cannot split 64×64 into
    // 16×16 tiles.
    assert!(emit("f16", 96, 64, 64, 32, "gfx942").contains(fma));
    assert!(emit("f16", 96, 64, 64, 32, "gfx1100").contains(fma));
    // A 32×32 tile over two waves of 64: no room for 32×32 MFMA tiles, 16×16×16 ones fit.
    let small = emit("f16", 128, 32, 32, 32, "gfx942");
    assert!(
        small.contains("tl::gemm_mfma<tl::half, 32, 32, 32, 1, 2, 16>"),
        "{small}"
    );
    assert!(
        small.contains("tl::mfma_coord<32, 32, 1, 2, 16>"),
        "{small}"
    );
    assert!(small.contains("float b2_acc[8];"), "{small}");
    // 16×16 over two waves of 64: nothing fits.
    assert!(emit("f16", 128, 16, 16, 16, "gfx942").contains(fma));
    // 16×16 over one wave: one instruction tile on each AMD unit.
    assert!(emit("f16", 64, 16, 16, 16, "gfx90a")
        .contains("tl::gemm_mfma<tl::half, 16, 16, 16, 1, 1, 16>"));
    assert!(emit("f16", 32, 16, 16, 16, "gfx1100")
        .contains("tl::gemm_wmma<tl::half, 16, 16, 16, 1, 1>"));
    assert!(emit("f16", 32, 16, 16, 16, "gfx1201")
        .contains("tl::gemm_wmma12<tl::half, 16, 16, 16, 1, 1>"));
}

#[test]
fn gemms_whose_tiles_fit_run_on_wgmma_on_sm_90a_and_on_mma_sync_otherwise() {
    // 128 threads = one warpgroup over the 64 rows: wgmma, both operands in the atom layout,
    // 1024-byte aligned shared memory, barriers that fence for the async proxy; the fused
    // ReLU reads the accumulator in mma.sync's layout with one warp per 16 rows.
    let k = hip(GEMM, 0, "sm_90a");
    let src = &k.source;
    for want in [
        "tl::gemm_wgmma<tl::half, 64, 64, 32, 1>(",
        "64, 32, 128, tl::ATOMS, true, true>(t_a",
        "32, 64, 128, tl::ATOMS, true, true>(t_b",
        "aligned(1024)",
        "tl::sync_async_proxy();",
        "tl::mma_coord<64, 64, 4, 1>",
    ] {
        assert!(src.contains(want), "{want}: {src}");
    }
    assert!(!src.contains("tl::sync();"), "{src}");
    // The same kernel on plain sm_90 is unchanged: mma.sync, ldmatrix's swizzle.
    let plain = hip(GEMM, 0, "sm_90").source;
    assert!(
        plain.contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, true, true>"),
        "{plain}"
    );
    assert!(
        !plain.contains("wgmma") && !plain.contains("ATOMS"),
        "{plain}"
    );
    // Tiles wgmma does not take fall back to mma.sync on sm_90a: 64 threads (no warpgroup),
    // 48 columns, and an operand filled as a whole (its layout could not be the atoms').
    let cases = [
        GEMM.replace("threads = 128", "threads = 64"),
        GEMM.replace("BN = 64", "BN = 48"),
        GEMM.replace(
            "        gemm(&a_s, &b_s, &mut acc);",
            "        gemm(&a_s, &b_s, &mut acc);\n        fill(&mut b_s, 0.0);",
        ),
    ];
    for case in cases {
        assert_ne!(case, GEMM);
        let src = hip(&case, 0, "sm_90a").source;
        assert!(src.contains("tl::gemm_mma<"), "{src}");
        assert!(!src.contains("wgmma") && !src.contains("ATOMS"), "{src}");
    }
}

/// A `pipelined` loop on NVIDIA: its loads become `cp.async` copies into `stages` copies of the
/// tiles, issued `stages - 1` iterations ahead; each iteration waits for its own copies, then
/// one barrier. On AMD (no asynchronous copies here) the loop stays a plain loop.
#[test]
fn pipelined_loops_issue_their_loads_ahead_on_nvidia() {
    let nv = hip(GEMM, 0, "sm_90");
    let body: Vec<&str> = nv
        .source
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    let seq: Vec<&str> = body
        .iter()
        .filter_map(|l| {
            Some(if l.starts_with("tl::cp_async_wait<0>") {
                "wait0"
            } else if l.starts_with("tl::cp_async_commit") {
                "commit"
            } else if l.starts_with("tl::sync") {
                "sync"
            } else if l.contains("copy_g2s") {
                "copy"
            } else if l.contains("gemm_mma") {
                "gemm"
            } else if l.starts_with("for (tl::index") {
                "for"
            } else {
                return None;
            })
        })
        .collect();
    assert_eq!(
        seq,
        [
            "for", "copy", "copy", "commit", // prologue: stage 0
            "for", "wait0", "sync", "copy", "copy", "commit", "gemm",  // steady state
            "wait0", // drain
        ],
        "{}",
        nv.source
    );
    // Two stages of each 64×32 / 32×64 f16 tile.
    assert_eq!(nv.shared_bytes, 2 * (64 * 32 * 2 + 32 * 64 * 2));
    assert!(nv.source.contains("(__i1 % 2) * 4096"), "{}", nv.source);
    // Three stages: waits leave one group in flight.
    let three = hip(
        &GEMM.replace("K.div_ceil(BK), 2)", "K.div_ceil(BK), 3)"),
        0,
        "sm_90",
    );
    assert!(
        three.source.contains("tl::cp_async_wait<1>();"),
        "{}",
        three.source
    );
    assert_eq!(three.shared_bytes, 3 * (64 * 32 * 2 + 32 * 64 * 2));
    // A tile also used after the loop cannot be staged: the loop stays plain.
    let used_after = GEMM.replace(
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));\n    copy(&a_s, c.at_mut((0, 0)));",
    );
    assert_ne!(used_after, GEMM);
    let plain = hip(&used_after, 0, "sm_90");
    assert!(!plain.source.contains("cp_async"), "{}", plain.source);
    for arch in ["gfx1100", "gfx942", "gfx1030"] {
        let k = hip(GEMM, 0, arch);
        assert!(!k.source.contains("cp_async"), "{arch}: {}", k.source);
        assert_eq!(k.shared_bytes, 64 * 32 * 2 + 32 * 64 * 2, "{arch}");
    }
}

/// A `pipelined` loop stages all its loads or none: a tile that registers could serve (the
/// packed `B` that only its owner unpacks) keeps its shared stages beside a `gemm` operand,
/// so every load of the loop still runs ahead; alone in a loop, the same tile is promoted.
#[test]
fn pipelined_loops_stage_all_their_loads_or_none() {
    const W4: &str = r#"
#[tile_kernel(grid = [N.div_ceil(64), M.div_ceil(64)], threads = 128)]
pub fn w4(a: &Tensor<f16, (M, K)>, bp: &Tensor<u8, (K, NP)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16>((64, 32));
    let mut bp_s = alloc_shared::<u8>((32, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    let mut acc = alloc_fragment::<f32>((64, 64));
    clear(&mut acc);
    for k in pipelined(K.div_ceil(32), 2) {
        copy(a.at((by * 64, k * 32)), &mut a_s);
        copy(bp.at((k * 32, bx * 32)), &mut bp_s);
        for (kk, j) in parallel(32, 32) {
            let p = bp_s[(kk, j)];
            b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
            b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
        }
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((by * 64, bx * 64)));
}
"#;
    let k = hip(W4, 0, "sm_90");
    assert!(
        k.source
            .contains("unsigned char* b1_bp_s = (unsigned char*)(tl_smem"),
        "{}",
        k.source
    );
    assert!(k.source.contains("cp_async"), "{}", k.source);
    let alone = W4
        .replace("        copy(a.at((by * 64, k * 32)), &mut a_s);\n", "")
        .replace("        gemm(&a_s, &b_s, &mut acc);\n", "");
    let k = hip(&alone, 0, "sm_90");
    assert!(k.source.contains("unsigned char b1_bp_s["), "{}", k.source);
    assert!(!k.source.contains("cp_async"), "{}", k.source);
}

/// A plain (unswizzled) tile of whole 16-byte rows loads through TMA too, one box per tile:
/// the packed weights of a W4A16 loop, beside its atom-layout A tile.
#[test]
fn plain_tiles_of_a_wgmma_pipeline_load_through_one_tma_box() {
    let w4 = r#"
#[tile_kernel(grid = [N.div_ceil(64), M.div_ceil(64)], threads = 128)]
pub fn w4(a: &Tensor<f16, (M, K)>, bp: &Tensor<u8, (K, NP)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16>((64, 32));
    let mut bp_s = alloc_shared::<u8>((32, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    let mut acc = alloc_fragment::<f32>((64, 64));
    clear(&mut acc);
    for k in pipelined(K.div_ceil(32), 2) {
        copy(a.at((by * 64, k * 32)), &mut a_s);
        copy(bp.at((k * 32, bx * (64 / 2))), &mut bp_s);
        for (kk, j) in parallel(32, 32) {
            let p = bp_s[(kk, j)];
            b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
            b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
        }
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((by * 64, bx * 64)));
}
"#;
    let sm90a = Target::by_arch("sm_90a").unwrap();
    let tma = launch(&kernel(w4), 0, &sm90a)
        .unwrap()
        .tma
        .expect("a TMA entry");
    assert_eq!(
        tma.maps,
        [
            TmaMap {
                param: 0,
                boxes: vec![32, 64],
                swizzle: 64
            },
            TmaMap {
                param: 1,
                boxes: vec![32, 32],
                swizzle: 0
            },
            // The epilogue's TMA stores (`wgmma_accumulators_leave_through_tma_stores`).
            TmaMap {
                param: 2,
                boxes: vec![64, 64],
                swizzle: 128
            },
        ]
    );
    let src = hip(w4, 0, "sm_90a").source;
    assert!(src.contains("tl::tma_box<2>(b1_bp_s, &__tm1, "), "{src}");
    // Warp-specialised: the consumers unpack each stage into `b_s` between two barriers of
    // their own, the first because an earlier iteration's gemm read `b_s` (the back edge).
    // `b_s` is written whole every iteration, so it rotates between two copies (the second
    // after the mbarriers) and the gemm stays in flight while the next stage is unpacked.
    assert_eq!(tma.threads, 256);
    let entry = &src[src.find("__tma(").unwrap()..];
    assert!(
        entry.contains("tl::mbar_wait(&__full[__st], (int)((__it / 2) & 1));\n        tl::half* b0_a_s = (tl::half*)(tl_smem + 0 + (__st) * 4096);\n        unsigned char* b1_bp_s = (unsigned char*)(tl_smem + 8192 + (__st) * 1024);\n        tl::half* b2_b_s = (tl::half*)(tl_smem + ((__it & 1) ? 15360 : 10240));\n        tl::consumer_sync_async_proxy<128>();"),
        "{entry}"
    );
    assert!(
        entry.contains("tl::gemm_wgmma_async<tl::half, 64, 64, 32, 1>(b0_a_s, b2_b_s, b3_acc);\n        tl::wgmma_wait<1>();"),
        "{entry}"
    );
    // The unpacking moves 4 bytes in and 8 halves out per chunk: one vector each, the halves
    // into one 16-byte chunk of the swizzled tile.
    for want in [
        "tl::vload<true, 4, false>(&b1_bp_s[",
        "tl::vstore<false, true, 8>(&b2_b_s[tl::sidx<tl::ATOMS, 64, 32>(",
    ] {
        assert!(entry.contains(want), "{want}: {entry}");
    }
    // The rotated copy of `b_s`, then the TMA store's two 8 KiB buffers.
    assert_eq!(tma.shared_bytes, 15360 + 4096 + 16384);
    // Half of `b_s` written per iteration: the other half must keep the last iteration's
    // values, so no second copy, and the gemm completes in its iteration.
    let half = w4.replace("parallel(32, 32)", "parallel(16, 32)");
    assert_ne!(half, w4);
    let src = hip(&half, 0, "sm_90a").source;
    let entry = &src[src.find("__tma(").unwrap()..];
    assert!(
        entry.contains("tl::gemm_wgmma<tl::half, 64, 64, 32, 1>(b0_a_s, b2_b_s, b3_acc);"),
        "{entry}"
    );
    assert!(!entry.contains("(__it & 1)"), "{entry}");
    assert_eq!(
        entry
            .matches("tl::consumer_sync_async_proxy<128>();")
            .count(),
        2,
        "{entry}"
    );
    // Rows of 24 bytes are not whole 16-byte vectors: the loop stays on cp.async (the gemm
    // still runs on wgmma).
    let odd = w4.replace("(32, 32)", "(32, 24)");
    assert_ne!(odd, w4);
    assert!(launch(&kernel(&odd), 0, &sm90a).unwrap().tma.is_none());
    let src = hip(&odd, 0, "sm_90a").source;
    assert!(
        src.contains("tl::gemm_wgmma<") && src.contains("cp_async"),
        "{src}"
    );
}

/// A wgmma gemm's pipelined loads also get a TMA entry on sm_90a: one map per (tensor, box),
/// the box one 64-column (or narrower) atom of the tile with the swizzle of its width; the
/// plain entry stays in the same source for tensors TMA cannot take. The GEMM is
/// warp-specialised there: a producer warpgroup after the user's 128 threads fills the stages
/// behind full/empty mbarriers. A copy whose innermost offset is not provably a multiple of 16
/// bytes keeps the loop on cp.async (TMA faults there), and so do other targets.
#[test]
fn wgmma_pipelines_load_through_tma_in_a_second_entry() {
    let gemm = kernel(GEMM);
    let sm90a = Target::by_arch("sm_90a").unwrap();
    let l = launch(&gemm, 0, &sm90a).unwrap();
    let tma = l.tma.expect("a TMA entry");
    assert_eq!(
        (tma.entry.as_str(), tma.threads, tma.persistent),
        ("tl_gemm__t64__tma", 256, true)
    );
    // Two stages of A (64 × 32) and B (32 × 64), then two full and two empty mbarriers, then
    // (at the next 1024 bytes) the TMA store's two 8 KiB buffers for the one warpgroup.
    assert_eq!((l.shared_bytes, tma.shared_bytes), (16384, 17408 + 16384));
    assert_eq!(
        tma.maps,
        [
            TmaMap {
                param: 0,
                boxes: vec![32, 64],
                swizzle: 64
            },
            TmaMap {
                param: 1,
                boxes: vec![64, 32],
                swizzle: 128
            },
            TmaMap {
                param: 2,
                boxes: vec![64, 64],
                swizzle: 128
            },
        ]
    );
    let src = hip(GEMM, 0, "sm_90a").source;
    for want in [
        "tl_gemm__t64(const tl::half* __restrict__ t_a",
        "__launch_bounds__(256) tl_gemm__t64__tma(const tl::half* __restrict__ t_a, const tl::half* __restrict__ t_b, tl::half* __restrict__ t_c, tl::index n_M, tl::index n_K, tl::index n_N, const __grid_constant__ tl::TensorMap __tm0, const __grid_constant__ tl::TensorMap __tm1, const __grid_constant__ tl::TensorMap __tm2)",
        "tl::mbar_init(&__empty[__b], 128);",
        "if (TL_TID >= 128) {",
        // Persistent: both roles walk the grid's tiles, counting iterations across them.
        "const tl::index __gx = tl::div_ceil<tl::index>(n_N, k_BN), __gy = tl::div_ceil<tl::index>(n_M, k_BM), __gz = 1;",
        "for (tl::index __t = TL_BLOCK_LINEAR; __t < __gx * __gy * __gz; __t += TL_BLOCKS) {",
        "tl::raster<8>(__t, __gx, __gy, __bx, __by, __bz);\n        tl::index v0_bx = __bx;",
        "for (tl::index v2_k = 0; v2_k < __n; ++v2_k, ++__it) {",
        "if (__it >= 2) tl::mbar_wait(&__empty[__st], (int)((__it / 2 - 1) & 1));",
        "tl::mbar_expect_tx(&__full[__st], 8192);",
        "tl::tma_tile<2, 64, 32>(b0_a_s, &__tm0, &__full[__st], __o);",
        "tl::tma_tile<2, 32, 64>(b1_b_s, &__tm1, &__full[__st], __o);",
        "tl::mbar_wait(&__full[__st], (int)((__it / 2) & 1));",
        // One wgmma group in flight: a stage is released once the next one's group is issued,
        // the tile's last once its group is done.
        "tl::gemm_wgmma_async<tl::half, 64, 64, 32, 1>(b0_a_s, b1_b_s, b2_acc);\n        tl::wgmma_wait<1>();\n        if (v2_k > 0) tl::mbar_arrive(&__empty[(int)((__it - 1) % 2)]);\n      }\n      tl::wgmma_wait<0>();\n      if (__n > 0) tl::mbar_arrive(&__empty[(int)((__it - 1) % 2)]);",
        "tl::cp_async_commit();",
    ] {
        assert!(src.contains(want), "{want}: {src}");
    }
    // The consumers compute on registers only: no barrier of theirs in the loop.
    assert!(!src.contains("consumer_sync"), "{src}");
    // One consumer warpgroup: no register rebalancing. Two, each with a 64 × 256
    // accumulator (128 registers a thread): the producer gives its registers to them.
    assert!(!src.contains("setmaxnreg"), "{src}");
    let big = GEMM.replace("threads = 128", "threads = 256").replace(
        "t64(BM = 64, BN = 64, BK = 32)",
        "t64(BM = 128, BN = 256, BK = 64)",
    );
    assert_ne!(big, GEMM);
    let src = hip(&big, 0, "sm_90a").source;
    for want in [
        "__launch_bounds__(384, 1) tl_gemm__t64__tma(",
        "tl::setmaxnreg_dec<40>();",
        "tl::setmaxnreg_inc<232>();",
        "tl::gemm_wgmma<tl::half, 128, 256, 64, 2>(",
    ] {
        assert!(src.contains(want), "{want}: {src}");
    }
    // A tile of more than 256 rows (wgmma on 5 warpgroups) is more than one TMA box can
    // hold: no TMA entry.
    let tall = GEMM.replace("threads = 128", "threads = 640").replace(
        "t64(BM = 64, BN = 64, BK = 32)",
        "t64(BM = 320, BN = 64, BK = 32)",
    );
    let src = hip(&tall, 0, "sm_90a").source;
    assert!(
        src.contains("tl::gemm_wgmma<tl::half, 320, 64, 32, 5>"),
        "{src}"
    );
    assert!(launch(&kernel(&tall), 0, &sm90a).unwrap().tma.is_none());
    // An epilogue through shared memory needs barriers after the loop, where the producer has
    // left: they are the consumers' own (a named barrier of the user's 128 threads).
    let staged = GEMM.replace(
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "    let mut c_s = alloc_shared::<f32, (BM, BN)>();\n    copy(&acc, &mut c_s);\n    copy(&c_s, c.at_mut((by * BM, bx * BN)));",
    );
    assert_ne!(staged, GEMM);
    let l = launch(&kernel(&staged), 0, &sm90a).unwrap();
    assert_eq!(l.tma.as_ref().map(|t| t.threads), Some(256));
    let src = hip(&staged, 0, "sm_90a").source;
    let entry = &src[src.find("__tma(").unwrap()..];
    assert!(
        entry.contains("tl::consumer_sync_async_proxy<128>();"),
        "{entry}"
    );
    assert!(!entry.contains("tl::sync"), "{entry}");
    // A prelude that writes shared memory needs a barrier both roles would have to meet: the
    // TMA entry is not specialised, its loop waits on full mbarriers behind block barriers.
    let prelude = staged.replace(
        "    clear(&mut acc);",
        "    clear(&mut acc);\n    let mut z = alloc_shared::<f32, (BM, BN)>();\n    fill(&mut z, 1.0);\n    copy(&z, &mut c_s);",
    ).replace("    let mut c_s = alloc_shared::<f32, (BM, BN)>();\n    copy(&acc, &mut c_s);", "    copy(&acc, &mut c_s);").replace("    let mut acc", "    let mut c_s = alloc_shared::<f32, (BM, BN)>();\n    let mut acc");
    assert_ne!(prelude, staged);
    let l = launch(&kernel(&prelude), 0, &sm90a).unwrap();
    assert_eq!(l.tma.as_ref().map(|t| t.threads), Some(128));
    let src = hip(&prelude, 0, "sm_90a").source;
    assert!(
        src.contains("tl::mbar_wait(&__full1[v2_k % 2], (int)((v2_k / 2) & 1));"),
        "{src}"
    );
    assert!(!src.contains("__empty"), "{src}");
    // An offset three elements off a 16-byte boundary; a rank-3 tensor copied rank-dropping.
    let odd = GEMM.replace(
        "copy(a.at((by * BM, k * BK)), &mut a_s);",
        "copy(a.at((by * BM, k * BK + 3)), &mut a_s);",
    );
    assert_ne!(odd, GEMM);
    assert!(launch(&kernel(&odd), 0, &sm90a).unwrap().tma.is_none());
    // The same for the loop's second load: the first one's map does not stay behind (an
    // entry with a map and no TMA loop).
    let odd_b = GEMM.replace(
        "copy(b.at((k * BK, bx * BN)), &mut b_s);",
        "copy(b.at((k * BK, bx * BN + 3)), &mut b_s);",
    );
    assert_ne!(odd_b, GEMM);
    assert!(launch(&kernel(&odd_b), 0, &sm90a).unwrap().tma.is_none());
    assert!(!hip(&odd_b, 0, "sm_90a").source.contains("__tma"));
    let batched = GEMM
        .replace(
            "grid = [N.div_ceil(BN), M.div_ceil(BM)]",
            "grid = [N.div_ceil(BN), M.div_ceil(BM), B]",
        )
        .replace("a: &Tensor<f16, (M, K)>", "a: &Tensor<f16, (B, M, K)>")
        .replace(
            "copy(a.at((by * BM, k * BK)), &mut a_s);",
            "copy(a.at((block_idx(2), by * BM, k * BK)), &mut a_s);",
        );
    let l = launch(&kernel(&batched), 0, &sm90a).unwrap();
    assert_eq!(l.tma.unwrap().maps[0].boxes, [32, 64, 1]);
    for arch in ["sm_90", "gfx942"] {
        let t = Target::by_arch(arch).unwrap();
        assert!(launch(&gemm, 0, &t).unwrap().tma.is_none(), "{arch}");
    }
}

/// The warp-specialised entry's epilogue: a wgmma accumulator copied to a 16-bit tensor as the
/// kernel's last statement leaves through shared memory (stmatrix) and TMA stores of 64 × 64
/// boxes (`tl::store_acc_tma`), the consumers waiting for their last stores before the block
/// ends; the plain entry keeps its register stores. The same copy to an f32 tensor, at an
/// offset not provably on 16 bytes, or followed by another statement keeps the register
/// stores, and a rank-dropping copy takes a box of extent 1 in the dropped dimension.
#[test]
fn wgmma_accumulators_leave_through_tma_stores() {
    let sm90a = Target::by_arch("sm_90a").unwrap();
    let src = hip(GEMM, 0, "sm_90a").source;
    let (plain, entry) = src.split_at(src.find("__tma(").unwrap());
    for want in [
        "{ const tl::index __o[2] = {tl::mul<tl::index>(v1_by, k_BM), tl::mul<tl::index>(v0_bx, k_BN)}; tl::store_acc_tma<tl::half, 64, 2>(b2_acc, tl_smem + 17408, &__tm2, __o); }",
        "    }\n    if (TL_TID % 128 == 0) tl::bulk_wait<0>();\n  }\n}",
    ] {
        assert!(entry.contains(want), "{want}: {entry}");
    }
    assert!(!entry.contains("store_chunk"), "{entry}");
    assert!(!plain.contains("store_acc_tma"), "{plain}");
    assert!(
        plain.contains("tl::store_chunk<2, float, tl::half"),
        "{plain}"
    );
    let stores = |text: &str| {
        let l = launch(&kernel(text), 0, &sm90a).unwrap();
        let src = hip(text, 0, "sm_90a").source;
        let t = l.tma.expect("a TMA entry");
        (t.maps.len(), src.contains("store_acc_tma"))
    };
    assert_eq!(stores(GEMM), (3, true));
    let f32_out = GEMM.replace("c: &mut Tensor<f16, (M, N)>", "c: &mut Tensor<f32, (M, N)>");
    assert_ne!(f32_out, GEMM);
    assert_eq!(stores(&f32_out), (2, false));
    let odd = GEMM.replace(
        "copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "copy(&acc, c.at_mut((by * BM, bx * BN + 3)));",
    );
    assert_ne!(odd, GEMM);
    assert_eq!(stores(&odd), (2, false));
    let then = GEMM.replace(
        "copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "copy(&acc, c.at_mut((by * BM, bx * BN)));\n    clear(&mut acc);",
    );
    assert_ne!(then, GEMM);
    assert_eq!(stores(&then), (2, false));
    let batched = GEMM
        .replace(
            "grid = [N.div_ceil(BN), M.div_ceil(BM)]",
            "grid = [N.div_ceil(BN), M.div_ceil(BM), B]",
        )
        .replace(
            "c: &mut Tensor<f16, (M, N)>",
            "c: &mut Tensor<f16, (B, M, N)>",
        )
        .replace(
            "copy(&acc, c.at_mut((by * BM, bx * BN)));",
            "copy(&acc, c.at_mut((block_idx(2), by * BM, bx * BN)));",
        );
    assert_ne!(batched, GEMM);
    let l = launch(&kernel(&batched), 0, &sm90a).unwrap();
    assert_eq!(
        l.tma.unwrap().maps[2],
        TmaMap {
            param: 2,
            boxes: vec![64, 64, 1],
            swizzle: 128
        }
    );
    assert!(hip(&batched, 0, "sm_90a")
        .source
        .contains("tl::store_acc_tma<tl::half, 64, 3>(b2_acc"));
}

#[test]
fn gemms_off_the_fastest_path_say_why() {
    // On the fast path: no note, wgmma on sm_90a, mma.sync on sm_90.
    for arch in ["sm_90a", "sm_90", "gfx942", "gfx1100"] {
        assert!(hip(GEMM, 0, arch).notes.is_empty(), "{arch}");
    }
    // N = 96: wgmma takes 64, 128 or 256; mma.sync is sm_90's fastest and fits.
    let n96 = gemm_variant("f16", 128, 64, 96, 32);
    let notes = hip(&n96, 0, "sm_90a").notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("line ")
            && notes[0].ends_with(
                "`gemm(&a_s, &b_s, &mut acc)` runs on mma.sync, not wgmma: N is 96; wgmma takes 64, 128 or 256"
            ),
        "{notes:?}"
    );
    assert!(hip(&n96, 0, "sm_90").notes.is_empty());
    // f32 operands: FMA loops everywhere there is a matrix unit.
    let f32_gemm = gemm_variant("f32", 128, 64, 64, 32);
    for (arch, fastest) in [
        ("sm_90", "mma.sync"),
        ("gfx942", "MFMA"),
        ("gfx1100", "WMMA"),
    ] {
        let notes = hip(&f32_gemm, 0, arch).notes;
        assert!(
            notes.len() == 1
                && notes[0].contains(&format!("runs on FMA loops, not {fastest}: the matrix units take f16 or bf16 operands and an f32 accumulator, these are f32 and f32")),
            "{arch}: {notes:?}"
        );
    }
    // An f16 accumulator: the operands fit, the accumulator does not.
    let f16_acc = GEMM.replace(
        "alloc_fragment::<f32, (BM, BN)>",
        "alloc_fragment::<f16, (BM, BN)>",
    );
    let notes = hip(&f16_acc, 0, "sm_90").notes;
    assert!(
        notes.len() == 1
            && notes[0].ends_with("runs on FMA loops, not mma.sync: the accumulator is f16; the matrix units accumulate in f32"),
        "{notes:?}"
    );
    // An accumulator reduced along its rows stays in registers on every matrix unit, and so
    // does the result, in the accumulator's rows; the waves then own whole rows (one wave
    // column: no exchange between waves).
    let reduced = GEMM.replace(
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "    let mut mx = alloc_fragment::<f32, (BM,)>();\n    reduce_max(&acc, &mut mx, 1);\n    copy(&acc, c.at_mut((by * BM, bx * BN)));",
    );
    for arch in ["sm_80", "sm_90", "sm_90a", "gfx942", "gfx1100", "gfx1201"] {
        let h = hip(&reduced, 0, arch);
        assert!(
            h.demoted.is_empty() && h.notes.is_empty(),
            "{arch}: {:?}",
            h.notes
        );
        assert!(
            h.source
                .contains("tl::reduce_acc_rows<tl::Max, float, tl::mx::rows<"),
            "{arch}: {}",
            h.source
        );
    }
    assert!(hip(&reduced, 0, "sm_90")
        .source
        .contains("tl::gemm_mma<tl::half, 64, 64, 32, 4, 1, true, true>"));
    // Rows read both from the accumulator and over a plain fragment have no one layout: the
    // row fragment is kept in shared memory, and so is the accumulator it reduces. Each says
    // why, on the line that caused it (the reduction, counted from 1 in the source string),
    // and the gemm says what that costs.
    let both = GEMM.replace(
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "    let mut mx = alloc_fragment::<f32, (BM,)>();\n    let mut x = alloc_fragment::<f32, (BM, BN)>();\n    reduce_max(&acc, &mut mx, 1);\n    for (i, j) in parallel(BM, BN) {\n        x[(i, j)] = mx[i];\n    }\n    copy(&x, c.at_mut((by * BM, bx * BN)));",
    );
    let h = hip(&both, 0, "sm_90");
    let line = both[..both.find("reduce_max").unwrap()].lines().count();
    let want = [
        format!("line {line}: fragment `acc` is kept in shared memory: the source of a reduction whose result is kept in shared memory"),
        format!("line {line}: fragment `mx` is kept in shared memory: no row layout serves its rows (they are read from fragments in different layouts)"),
    ];
    for w in &want {
        assert!(h.notes.contains(w), "{w}\nnot in {:#?}", h.notes);
    }
    assert!(
        h.notes.len() == 3
            && h.notes[2].contains("runs on FMA loops over shared memory, not mma.sync: its accumulator `acc` is kept in shared memory"),
        "{:#?}",
        h.notes
    );
}

/// `GEMM` with B stored (N, K) and read by `&b_s.t()` (and A stored (K, M), `&a_s.t()`, when
/// `both`).
fn gemm_transposed(both: bool) -> String {
    let s = GEMM
        .replace("b: &Tensor<f16, (K, N)>", "b: &Tensor<f16, (N, K)>")
        .replace(
            "alloc_shared::<f16, (BK, BN)>",
            "alloc_shared::<f16, (BN, BK)>",
        )
        .replace("b.at((k * BK, bx * BN))", "b.at((bx * BN, k * BK))")
        .replace("gemm(&a_s, &b_s, ", "gemm(&a_s, &b_s.t(), ");
    if !both {
        return s;
    }
    s.replace("a: &Tensor<f16, (M, K)>", "a: &Tensor<f16, (K, M)>")
        .replace(
            "alloc_shared::<f16, (BM, BK)>",
            "alloc_shared::<f16, (BK, BM)>",
        )
        .replace("a.at((by * BM, k * BK))", "a.at((k * BK, by * BM))")
        .replace("gemm(&a_s, ", "gemm(&a_s.t(), ")
}

#[test]
fn transposed_operands_are_read_where_they_are_stored() {
    // B marked `.t()`: every target keeps its matrix unit, with the marks as the last template
    // arguments; wgmma reads B K-major (no note).
    let bt = gemm_transposed(false);
    let want = [
        (
            "sm_90a",
            "tl::gemm_wgmma<tl::half, 64, 64, 32, 1, true>(",
            true,
        ),
        (
            "sm_90a",
            "tl::gemm_wgmma_async<tl::half, 64, 64, 32, 1, true>(",
            false,
        ),
        (
            "sm_90",
            "tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, true, true, false, true>(",
            true,
        ),
        ("gfx942", ", false, true>(", true),
        (
            "gfx1100",
            "tl::gemm_wmma<tl::half, 64, 64, 32, 2, 2, false, true>(",
            true,
        ),
    ];
    for (arch, call, _) in want.iter().filter(|w| w.2) {
        let h = hip(&bt, 0, arch);
        assert!(
            h.source.contains(call),
            "{arch}: no {call} in\n{}",
            h.source
        );
        assert!(h.notes.is_empty(), "{arch}: {:?}", h.notes);
    }
    // Both marked: wgmma does not read an MN-major A yet, so sm_90a says so and takes mma.sync.
    let both = gemm_transposed(true);
    let h = hip(&both, 0, "sm_90a");
    assert!(
        h.source
            .contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, true, true, true, true>("),
        "{}",
        h.source
    );
    assert!(
        h.notes.len() == 1
            && h.notes[0].ends_with("`gemm(&a_s.t(), &b_s.t(), &mut acc)` runs on mma.sync, not wgmma: A `a_s` is read transposed (`.t()`), which the wgmma lowering does not take yet"),
        "{:?}",
        h.notes
    );
    assert_eq!(hip(&bt, 0, "sm_90a").gemms, ["wgmma.tB"]);
    assert_eq!(h.gemms, ["mma.sync.tA.tB"]);
    // FMA loops (f32 operands) read through the marks too.
    let f32_bt = bt.replace("f16", "f32");
    let h = hip(&f32_bt, 0, "sm_90");
    assert!(h.source.contains(", false, true>(b0_a_s"), "{}", h.source);
    // Unmarked kernels print no marks: their sources are those of before `.t()`.
    assert!(!hip(GEMM, 0, "sm_90").source.contains(", false, false>("));
}

/// The natural attention kernel (`common::ATTENTION`) lowers for every target, `S = Q·Kᵀ` read
/// through `.t()`; its notes are issue 39's checklist: each later stage removes the ones it
/// fixes, and this test says which remain (today: P·V off wgmma on sm_90a; P through LDS on
/// AMD, whose accumulator layout is not its A operand's).
#[test]
fn natural_attention_lowers_everywhere_and_its_notes_are_the_checklist() {
    // D 128 on AMD: with P in shared memory the block needs 81,920 bytes, more than the 64 KiB
    // an AMD block may have (an error of that config on those targets).
    let k = kernel(common::ATTENTION);
    for arch in ["gfx90a", "gfx942", "gfx1100", "gfx1201"] {
        let e = emit(&k, 0, &Target::by_arch(arch).unwrap(), None).unwrap_err();
        assert!(
            e.message
                .contains("it needs 81920 bytes of shared memory per block"),
            "{}",
            e.message
        );
    }
    let runs = ["sm_80", "sm_90", "sm_90a"]
        .iter()
        .flat_map(|a| [(*a, 0), (*a, 1)])
        .chain(["gfx90a", "gfx942", "gfx1100", "gfx1201"].map(|a| (a, 1)));
    for (arch, config) in runs {
        let h = hip(common::ATTENTION, config, arch);
        // The scores, their row statistics, P and the output stay in registers on NVIDIA (P as
        // the A operand of P·V, stage 5); on AMD P goes through shared memory.
        let want: &[&str] = if arch.starts_with("gfx") { &["p"] } else { &[] };
        assert_eq!(h.demoted, want, "{arch} {config}");
        assert!(
            h.source.contains("tl::reduce_acc_rows<tl::Max")
                && h.source.contains("tl::reduce_acc_rows<tl::Sum")
                && !h.source.contains("gemm_fma"),
            "{arch} {config}"
        );
        // P·V from registers: wgmma's RS form on sm_90a (stage 6), mma.sync's elsewhere.
        let rs = match arch {
            "sm_90a" => "tl::gemm_wgmma_rs<",
            _ => "tl::gemm_mma_rs<",
        };
        assert_eq!(
            h.source.contains(rs),
            !arch.starts_with("gfx"),
            "{arch} {config}"
        );
    }
    // The checklist, on sm_90a at D 128: empty.
    let h = hip(common::ATTENTION, 0, "sm_90a");
    assert!(h.notes.is_empty(), "{:?}", h.notes);
    // And the gemms' paths, as `manifest.tsv`'s `gemms` column has them.
    assert_eq!(h.gemms, ["wgmma.tB", "wgmma.rA"]);
    assert_eq!(
        hip(common::ATTENTION, 0, "sm_90").gemms,
        ["mma.sync.tB", "mma.sync.rA"]
    );
    let amd = hip(common::ATTENTION, 1, "gfx942");
    assert_eq!(amd.gemms, ["MFMA.tB", "MFMA"]);
    assert!(
        amd.notes[0].starts_with("line 42: fragment `p` is kept in shared memory: the A operand of a `gemm` that its registers cannot feed"),
        "{:?}",
        amd.notes
    );
}
