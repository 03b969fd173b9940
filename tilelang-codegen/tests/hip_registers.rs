//! Registers in the generated HIP C++ (`docs/design/registers.md`): row fragments and
//! reductions in registers with whole waves, exchanges between waves through shared memory,
//! reductions carried across their loop, chunked fragments, shared tiles held in registers,
//! column fragments, and the occupancy requests and controls that bound the registers.

mod common;

use common::{hip, kernel, BIAS, GEMM, ROWMAX, STAGED_ROWS, TRANSPOSE};
use tilelang_codegen::lower::emit;
use tilelang_codegen::target::Target;

/// [`ROWMAX`] with a combine the reduction cannot be deferred into (a sum of per-tile
/// maxima): the reduction runs in every iteration.
fn per_tile() -> String {
    let s = ROWMAX.replace("best[i] = max(best[i], m[i]);", "best[i] += m[i];");
    assert_ne!(s, ROWMAX);
    s
}

#[test]
fn reductions_run_in_registers_with_whole_waves() {
    // 4 rows of 128 over 128 threads, in chunks of 4 floats (16 bytes): 32 consecutive
    // threads share a row, 4 source registers per row register, each thread holding one row
    // of `m` and `best` (a row layout), on wave 32 and wave 64 alike; no shared memory, and
    // the final copy is made by one thread per group.
    let rows = per_tile().replace("BN = 256", "BN = 128");
    for (arch, wave) in [("sm_90", 32), ("gfx1100", 32), ("gfx942", 64)] {
        let k = hip(&rows, 0, arch);
        let src = &k.source;
        assert!(
            src.contains(&format!(
                "tl::reduce_rows<tl::Max, float, 1, 4, 32, {wave}, 128>(b0_t, b1_m, nullptr);"
            )),
            "{arch}: {src}"
        );
        assert_eq!(k.shared_bytes, 0, "{arch}: {src}");
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);
        assert!(
            src.contains("float b1_m[1];") && src.contains("float b2_best[1];"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("const unsigned __L = __r * 4 + TL_TID / 32;"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("if (TL_TID % 32 == 0) { if (("),
            "{arch}: {src}"
        );
        assert!(!src.contains("tl::sync"), "{arch}: {src}");
    }
}

#[test]
fn rows_across_waves_exchange_through_shared_memory_once() {
    // One row of 1024 over 128 threads: every thread meets the row, the four waves' partials
    // meet in 16 bytes of shared memory. In the loop, the exchange area the previous
    // iteration read is written again: one barrier before the reduction, none elsewhere.
    let one_row = per_tile().replace("r4(BM = 4, BN = 256)", "r1(BM = 1, BN = 1024)");
    let k = hip(&one_row, 0, "sm_90");
    let src = &k.source;
    assert!(
        src.contains("tl::reduce_rows<tl::Max, float, 1, 8, 128, 32, 128>(b0_t, b1_m, (float*)(tl_smem + 0));"),
        "{src}"
    );
    assert_eq!(k.shared_bytes, 16, "{src}");
    let body: Vec<&str> = src
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    // The loop is printed twice, for its interior iterations and the rest (lower/interior.rs):
    // each copy of the reduction has its barrier, and there is no other.
    let at: Vec<usize> = (0..body.len())
        .filter(|&i| body[i].starts_with("tl::reduce_rows"))
        .collect();
    assert_eq!(at.len(), 2, "{src}");
    assert!(at.iter().all(|&i| body[i - 1] == "tl::sync();"), "{src}");
    assert_eq!(
        body.iter().filter(|l| l.starts_with("tl::sync")).count(),
        2,
        "{src}"
    );
    // The broadcast form: a row read inside a loop over the tile is register `__r / 8` of
    // the row fragment (8 registers per chunk, one chunk of the row per thread).
    let bcast = one_row.replace(
        "        reduce_max(&t, &mut m, 1);",
        "        reduce_max(&t, &mut m, 1);\n        for (i, j) in parallel(BM, BN) {\n            t[(i, j)] = t[(i, j)] - m[i];\n        }",
    );
    assert_ne!(bcast, one_row);
    let src = hip(&bcast, 0, "sm_90").source;
    assert!(src.contains("b1_m[__r / 8]"), "{src}");
}

#[test]
fn row_fragments_without_a_register_parent_fall_back_to_shared_memory() {
    // `m` is read in a loop over global tensors only: no register tile decides where its rows
    // are, so it (and the tile it reduces) are demoted, and the reduction reads shared memory.
    let free = ROWMAX.replace(
        "        for i in parallel(BM) {\n            best[i] = max(best[i], m[i]);\n        }",
        "        for (i, j) in parallel(BM, BN) {\n            out[row0 + i] = m[i] + a[(row0 + i, c * BN + j)];\n        }",
    );
    assert_ne!(free, ROWMAX);
    let k = hip(&free, 0, "sm_90");
    // The build reports the demotion (a warning and the manifest), naming the fragments.
    assert_eq!(k.demoted, ["t", "m"], "{}", k.source);
    let src = k.source;
    assert!(
        src.contains("tl::reduce<tl::Max, float, 4, 256, 1, 128, 32>"),
        "{src}"
    );
    assert!(!src.contains("reduce_rows"), "{src}");
}

/// A reduction whose result only feeds `acc[i] op= part[i]` in a loop is carried across the
/// loop: each iteration folds the thread's registers into a running value, one exchange
/// finishes the rows after the loop (no barrier in the loop), and the combine runs once.
/// Where anything else could see `part`, or the loop touches `acc` elsewhere, or the combine
/// is another operation, the reduction runs in every iteration as before.
#[test]
fn reductions_feeding_an_accumulator_are_carried_across_the_loop() {
    let one_row = ROWMAX.replace("r4(BM = 4, BN = 256)", "r1(BM = 1, BN = 1024)");
    let src = hip(&one_row, 0, "sm_90").source;
    let lines: Vec<&str> = src
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    let at = |p: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no `{p}` in {src}"))
    };
    let (open, fold, finish, combine) = (
        at("for (int __r = 0; __r < 1; ++__r) b1_m_carry[__r] = tl::Max::unit<float>();"),
        at("tl::fold_rows<tl::Max, float, 1, 8>(b0_t, b1_m_carry);"),
        at("tl::reduce_rows<tl::Max, float, 1, 1, 128, 32, 128>(b1_m_carry, b1_m, (float*)(tl_smem + 0));"),
        at("b2_best[__r] = tl::max<float>(b2_best[__r], b1_m[__r]);"),
    );
    assert!(open < fold && fold < finish && finish < combine, "{src}");
    assert_eq!(
        lines[finish - 1],
        "if (((tl::index)0) < tl::div_ceil<tl::index>(n_N, k_BN)) {",
        "{src}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("b2_best[__r] = tl::max"))
            .count(),
        1,
        "{src}"
    );
    assert!(!src.contains("tl::sync"), "{src}");
    // A sum, on a wave of 64, and over a pipelined loop through shared memory.
    let sum = one_row
        .replace("reduce_max", "reduce_sum")
        .replace("best[i] = max(best[i], m[i]);", "best[i] += m[i];");
    let src = hip(&sum, 0, "gfx942").source;
    assert!(
        src.contains("tl::fold_rows<tl::Sum, float, 1, 8>(b0_t, b1_m_carry);"),
        "{src}"
    );
    assert!(
        src.contains("b1_m_carry[__r] = tl::Sum::unit<float>();"),
        "{src}"
    );
    assert!(
        src.contains("tl::reduce_rows<tl::Sum, float, 1, 1, 128, 64, 128>(b1_m_carry"),
        "{src}"
    );
    // Not carried: the partial is read after the loop, the loop reads the accumulator, the
    // combine is not the reduction's operation.
    let kept = [
        one_row.replace(
            "    copy(&best, out.at_mut((row0,)));",
            "    copy(&m, out.at_mut((row0,)));",
        ),
        one_row.replace(
            "        reduce_max(&t, &mut m, 1);",
            "        for (i, j) in parallel(BM, BN) {\n            t[(i, j)] = t[(i, j)] - best[i];\n        }\n        reduce_max(&t, &mut m, 1);",
        ),
        one_row.replace("best[i] = max(best[i], m[i]);", "best[i] += m[i];"),
    ];
    for k in &kept {
        assert_ne!(k, &one_row);
        let src = hip(k, 0, "sm_90").source;
        assert!(
            !src.contains("fold_rows") && !src.contains("_carry"),
            "{src}"
        );
        assert!(
            src.contains("tl::reduce_rows<tl::Max, float, 1, 8, 128, 32, 128>(b0_t, b1_m"),
            "{src}"
        );
    }
}

const SCALE: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [t(BM = 4, BN = 256)])]
pub fn scale<const BM: usize, const BN: usize>(a: &Tensor<f16, (M, N)>, b: &mut Tensor<f32, (M, N)>) {
    let row0 = block_idx(0) * BM;
    let mut t = alloc_fragment::<f16, (BM, BN)>();
    let mut u = alloc_fragment::<f32, (BM, BN)>();
    copy(a.at((row0, 0)), &mut t);
    for (i, j) in parallel(BM, BN) {
        u[(i, j)] = (t[(i, j)] as f32) * 2.0;
    }
    copy(&u, b.at_mut((row0, 0)));
}
"#;

/// Register fragments whose rows are whole 8-element chunks are chunked: a thread owns 8
/// consecutive elements, copies to and from global memory move them as vectors when the region
/// allows (else element by element), and loops over the fragment iterate in the same order.
#[test]
fn fragments_of_whole_chunks_move_as_vectors() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let k = hip(SCALE, 0, arch);
        let src = &k.source;
        // Both fragments (f16 and f32, same shape) are chunked: 4·256 / 128 = 8 registers, in
        // chunks of 4 (16 bytes of the widest copied element, f32), so the f32 stores are one
        // 16-byte vector a lane and the f16 loads 8 bytes.
        assert!(
            src.contains("tl::half b0_t[8];") && src.contains("float b1_u[8];"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::load_chunk<4, tl::half, tl::half, true>(t_a + "),
            "{arch}: {src}"
        );
        assert!(
            // `b` is only written: its stores stream (evict-first).
            src.contains("tl::store_chunk<4, float, float, true>(b1_u + __k * 4, t_b + "),
            "{arch}: {src}"
        );
        // Where the tile lies inside, a thread's two chunks are 2 rows apart (2 · 128 threads
        // · 4 elements a step, rows of 256): a store computes chunk 0's address once and the
        // other as an offset; loads keep an address each.
        assert_eq!(
            src.matches("const tl::index __dp = (tl::index)2 * __g.dims[3];")
                .count(),
            1,
            "{arch}: {src}"
        );
        assert!(
            src.contains("float* const __p = t_b + (")
                && src.contains(
                    "tl::store_chunk<4, float, float, true>(b1_u + __k * 4, __p + __k * __dp);"
                ),
            "{arch}: {src}"
        );
        // Per copy, one block-uniform choice of three paths: a tile wholly inside the tensor
        // moves its chunks with no test each, one across the edge tests each chunk, and a
        // misaligned tensor goes element-wise.
        let starting = |head: &str| {
            src.lines()
                .filter(|l| l.trim_start().starts_with(head))
                .count()
        };
        assert_eq!(starting("if (tl::chunk_aligned<4>("), 2, "{arch}: {src}");
        assert_eq!(
            src.matches("&& tl::tile_inside<1, 1, 4, 256>(__g)) {")
                .count(),
            2,
            "{arch}: {src}"
        );
        assert_eq!(
            starting("} else if (tl::chunk_aligned<4>("),
            2,
            "{arch}: {src}"
        );
        assert!(
            starting("tl::load_chunk<4, tl::half, tl::half, true>(t_a + ") == 1
                && starting("tl::store_chunk<4, float, float, true>(b1_u + __k * 4, __p + ") == 1
                && starting("if (") > 0,
            "{arch}: {src}"
        );
        // The loop uses the chunked order; the fallbacks for regions `chunk_aligned` refuses
        // go chunk by chunk too, element-wise within two small bounds per chunk. A chunk lies
        // in one row, so the column is the chunk's first plus a per-register constant (the
        // compiler folds it into the accesses, where `__L % 256` per register would not be).
        assert_eq!(
            src.matches(
                "const unsigned __L0 = ((__r / 4) * 128 + TL_TID) * 4, __L = __L0 + __r % 4;"
            )
            .count(),
            1,
            "{arch}: {src}"
        );
        assert!(
            src.contains("(tl::index)((__L0 / 256) % 4);")
                && src.contains("(tl::index)((__L0 % 256) + __r % 4);"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::load_chunk_tail<4, tl::half, tl::half>(t_a + (")
                && src.contains("tl::store_chunk_tail<4, float, float>(b1_u + __k * 4, t_b + ("),
            "{arch}: {src}"
        );
        assert_eq!(k.shared_bytes, 0, "{arch}");
    }
    // Rows that are not whole chunks keep the strided layout and the element copies.
    let odd = hip(&SCALE.replace("BN = 256", "BN = 100"), 0, "sm_90");
    assert!(!odd.source.contains("chunk"), "{}", odd.source);
    assert!(
        odd.source
            .contains("const unsigned __L = __r * 128 + TL_TID;"),
        "{}",
        odd.source
    );
    // A gemm accumulator on FMA loops keeps the layout tl::gemm_fma computes in.
    let fma = hip(GEMM, 0, "gfx1030");
    assert!(fma.source.contains("tl::gemm_fma<"), "{}", fma.source);
    assert!(!fma.source.contains("chunk"), "{}", fma.source);
}

/// A shared tile that only a copy from global memory writes and that is read only the way a
/// register fragment could be (a reduction along its rows) is held in registers like one, with
/// no barrier or shared bytes for it; so is the only load of a pipelined loop (which then has
/// no stages to keep: it runs as a sequential loop over register tiles). The
/// rows read by every row (`w_s[j]`, `b_s[j]`) become column fragments: each thread loads the
/// 4 columns its chunks of the tile cover (chunks of 4 floats, BN = 256 over 128 threads: 64
/// threads a row, so two groups of 64 hold a copy each) and reads register `__r % 4`.
#[test]
fn shared_tiles_that_registers_serve_are_held_in_registers() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let k = hip(STAGED_ROWS, 0, arch);
        let src = &k.source;
        assert!(src.contains("float b0_x_s[4];"), "{arch}: {src}");
        assert!(
            src.contains("tl::load_chunk<4, tl::half, float, true")
                && src.contains("b0_x_s + __k * 4);"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::fold_rows<tl::Sum, float, 1, 4>(b0_x_s, "),
            "{arch}: {src}"
        );
        // The pipelined loop's only load is owner-only too: registers, no stages.
        assert!(src.contains("tl::half b1_p_s[4];"), "{arch}: {src}");
        assert!(!src.contains("cp_async"), "{arch}: {src}");
        // The broadcast rows: registers, loaded per group of 64 threads as vectors.
        assert!(
            src.contains("float b2_w_s[4];") && src.contains("float b3_b_s[4];"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("const int __L = (__k * 64 + (TL_TID % 64)) * 4;")
                && src.contains("b2_w_s + __k * 4);")
                && src.contains("b3_b_s + __k * 4);"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("b2_w_s[__r % 4]") && src.contains("b3_b_s[__r % 4]"),
            "{arch}: {src}"
        );
        // No tile takes shared memory: the reductions' few exchange bytes do.
        assert!(k.shared_bytes < 128, "{arch}: {} bytes", k.shared_bytes);
        assert!(
            src.contains("tl::load_chunk<4, tl::half, float, true")
                && src.contains("b4_tile + __k * 4);"),
            "{arch}: {src}"
        );
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);
    }
    // Read across rows (a transpose), the tile stays shared.
    let across = STAGED_ROWS.replace(
        "reduce_sum(&x_s, &mut part, 1);",
        "for (i, j) in parallel(BM, BN) { tile[(i, j)] = x_s[(BM - 1 - i, j)]; }\n        reduce_sum(&tile, &mut part, 1);",
    );
    let k = hip(&across, 0, "sm_90");
    assert!(
        k.source.contains("float* b0_x_s = (float*)(tl_smem"),
        "{}",
        k.source
    );
}

/// A row read by every row of a tile (`b_f[j]`) is a column fragment in the tile's order:
/// chunked (BN = 256 in chunks of 4 floats: 64 threads a row, vectors, `TL_TID % 64`), strided (BN = 64 over 128
/// threads: one register, `TL_TID % 64`), and where the row falls on no whole thread groups
/// (24 columns over 32 threads) it stays in shared memory and the build says so. Touched any
/// other way (a loop over its own shape), it is not one either.
#[test]
fn rows_read_by_every_row_are_column_fragments() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let k = hip(BIAS, 0, arch);
        let src = &k.source;
        assert!(src.contains("float b1_b_f[4];"), "{arch}: {src}");
        assert!(
            src.contains("const int __L = (__k * 64 + (TL_TID % 64)) * 4;")
                && src.contains("tl::load_chunk<4, float, float, true>(t_b + "),
            "{arch}: {src}"
        );
        assert!(src.contains("b1_b_f[__r % 4]"), "{arch}: {src}");
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);
        assert!(!src.contains("tl::sync()"), "{arch}: {src}");

        let k = hip(BIAS, 1, arch);
        let src = &k.source;
        assert!(src.contains("float b1_b_f[1];"), "{arch}: {src}");
        assert!(
            src.contains("const unsigned __L = __r * 64 + (TL_TID % 64);"),
            "{arch}: {src}"
        );
        assert!(src.contains("b1_b_f[__r % 1]"), "{arch}: {src}");
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);

        let k = hip(BIAS, 2, arch);
        assert_eq!(k.demoted, ["b_f"], "{arch}: {}", k.source);
    }
    let own = BIAS.replace(
        "        for (i, j) in parallel(BM, BN) {",
        "        for j in parallel(BN) { b_f[j] = b_f[j] * 2.0; }\n        for (i, j) in parallel(BM, BN) {",
    );
    let k = hip(&own, 0, "sm_90");
    assert_eq!(k.demoted, ["b_f"], "{}", k.source);
}

/// Occupancy requests (`lower/occupancy.rs`): a single-pass kernel on NVIDIA gets the ladder
/// of register caps (three quarters of an sm_90's threads first, the 8-register allocation
/// unit, sm_86's smaller thread count), and the source the build compiles first asks for
/// none. No ladder on AMD, for a `gemm`, for a sequential loop over global memory (a row
/// reduction), or where shared memory already bounds the resident blocks.
/// The attribute's `min_blocks` and `max_registers`: printed per vendor in place of any
/// request (the user decided), per config; refused, on the config, where the target cannot
/// hold them.
#[test]
fn occupancy_controls_of_the_attribute_are_printed_per_vendor_or_refused() {
    let with = |key: &str| {
        TRANSPOSE.replace(
            "e(BM = 24, BN = 40, T = 64)])]",
            &format!("e(BM = 24, BN = 40, T = 64)], {key})]"),
        )
    };
    let blocks = with("min_blocks = 2048 / T / 2");
    // a: 256 threads, 4 blocks; e: 64 threads, 16 blocks.
    let k = hip(&blocks, 0, "sm_90");
    assert!(k.requests.is_empty() && k.min_blocks == 4, "{}", k.source);
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256, 4) tl_transpose__a("));
    let k = hip(&blocks, 4, "sm_90");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(64, 16) tl_transpose__e("));
    // AMD: waves per SIMD, four SIMDs a CU or WGP: 4 blocks of 8 waves (wave 32) are 8; of 4
    // waves (wave 64) 4.
    let k = hip(&blocks, 0, "gfx1100");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256) TL_WAVES_PER_EU(8) tl_transpose__a("));
    let k = hip(&blocks, 0, "gfx942");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256) TL_WAVES_PER_EU(4) tl_transpose__a("));
    let capped = with("max_registers = 48");
    let k = hip(&capped, 0, "sm_90");
    // nvcc takes `__maxnreg__` only without `__launch_bounds__`.
    assert!(k.requests.is_empty() && k.min_blocks == 1);
    assert!(k
        .source
        .contains("TL_GLOBAL void TL_MAX_REGISTERS(48) tl_transpose__a("));
    let k = hip(&capped, 0, "gfx1201");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256) TL_MAX_REGISTERS(48) tl_transpose__a("));
    // What the target cannot hold is an error on the config.
    let refused = |src: &str, config: usize, arch: &str| {
        emit(&kernel(src), config, &Target::by_arch(arch).unwrap(), None)
            .unwrap_err()
            .message
    };
    let m = refused(&with("min_blocks = 12"), 0, "sm_90");
    assert!(m.contains("12 blocks of 256 threads cannot reside on one sm_90 multiprocessor (2048 threads, 32 blocks)"), "{m}");
    // sm_86 holds 1536 threads: 8 blocks of 256 do not fit there, and do on sm_90.
    let eight = with("min_blocks = 8");
    let m = refused(&eight, 0, "sm_86");
    assert!(
        m.contains("config `a`") && m.contains("(1536 threads, 16 blocks)"),
        "{m}"
    );
    assert_eq!(hip(&eight, 0, "sm_90").min_blocks, 8);
    let wide = with("max_registers = 200").replace("threads = T", "threads = 512");
    let m = refused(&wide, 0, "sm_90");
    assert!(m.contains("a block of 512 threads would need 102400 registers, and a sm_90 multiprocessor has 65536"), "{m}");
    // Config d's fragment `t` (128 × 64 f16) over 32 threads takes 128 registers a thread: a
    // cap below that is refused.
    let big = TRANSPOSE.replace("threads = T", "threads = 32").replace(
        "e(BM = 24, BN = 40, T = 64)])]",
        "e(BM = 24, BN = 40, T = 64)], max_registers = 16)]",
    );
    let m = refused(&big, 3, "sm_90");
    assert!(m.contains("`max_registers = 16` is below the"), "{m}");
}

#[test]
fn occupancy_requests_only_for_single_pass_kernels_on_nvidia() {
    let ladder = |src: &str, config: usize, arch: &str| -> Vec<(usize, usize)> {
        hip(src, config, arch)
            .requests
            .iter()
            .map(|r| (r.min_blocks, r.registers))
            .collect()
    };
    // TRANSPOSE `a`: 256 threads, 8 KB of shared memory.
    assert_eq!(
        ladder(TRANSPOSE, 0, "sm_90"),
        [(6, 40), (5, 48), (4, 64), (3, 80), (2, 128)]
    );
    assert_eq!(ladder(TRANSPOSE, 0, "sm_86"), [(4, 64), (3, 80), (2, 128)]);
    let k = hip(TRANSPOSE, 0, "sm_90");
    assert!(k.source.contains("__launch_bounds__(256) tl_transpose__a("));
    for r in &k.requests {
        let bounds = format!("__launch_bounds__(256, {}) tl_transpose__a(", r.min_blocks);
        assert!(r.source.contains(&bounds), "{bounds}");
        assert_eq!(
            r.source
                .replace(&bounds, "__launch_bounds__(256) tl_transpose__a("),
            k.source
        );
    }
    assert!(ladder(TRANSPOSE, 0, "gfx942").is_empty());
    assert!(ladder(GEMM, 0, "sm_90").is_empty());
    assert!(ladder(ROWMAX, 0, "sm_90").is_empty());
    // 96 KB of shared memory a block: two fit in an sm_90's 228 KB, so the ladder is one rung.
    const BIG_SHARED: &str = r#"
#[tile_kernel(grid = [N.div_ceil(1024)], threads = 256)]
pub fn stage(x: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (N,)>) {
    let mut s = alloc_shared::<f32>((24576,));
    copy(x.at((block_idx(0) * 1024,)), &mut s);
    for i in parallel(1024) {
        let g = block_idx(0) * 1024 + i;
        if g < N {
            y[g] = s[i * 24];
        }
    }
}
"#;
    assert_eq!(ladder(BIG_SHARED, 0, "sm_90"), [(2, 128)]);
}
