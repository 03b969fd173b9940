//! Memory in the generated HIP C++ (`docs/design/memory.md` and `loops.md`): block barriers,
//! which shared tiles are swizzled and which padding is trimmed, L2 hints, the interior
//! iterations of copies, and chunk-wise `parallel` loops: vectors, tail guards, coordinates
//! shared by a thread's chunks, stores gathered into vectors. (The swizzle's layouts checked on
//! the host are in `hip.rs`.)

mod common;

use common::{hip, kernel, BIAS, GEMM, ROWMAX, STAGED_ROWS, TRANSPOSE};
use tilelang_codegen::lower::launch;
use tilelang_codegen::target::Target;

#[test]
fn barriers_separate_writers_from_readers_and_nothing_else() {
    // A plain (serial) K loop; the pipelined one has its own test below.
    let serial = GEMM.replace("pipelined(K.div_ceil(BK), 2)", "serial(K.div_ceil(BK))");
    assert_ne!(serial, GEMM);
    let src = hip(&serial, 0, "sm_90").source;
    let body: Vec<&str> = src
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    // In the K loop: a barrier before the copies (the previous iteration's gemm read the tiles)
    // and one between the copies and the gemm; none between the two copies.
    let loop_start = body
        .iter()
        .position(|l| l.starts_with("for (tl::index"))
        .unwrap();
    let seq: Vec<&str> = body[loop_start + 1..loop_start + 6]
        .iter()
        .map(|l| {
            if l.starts_with("tl::sync") {
                "sync"
            } else if l.contains("copy_g2s") {
                "copy"
            } else if l.contains("gemm_mma") {
                "gemm"
            } else {
                "?"
            }
        })
        .collect();
    assert_eq!(seq, ["sync", "copy", "copy", "sync", "gemm"], "{src}");
    // The epilogue and the store touch only registers: no barrier after the loop.
    let after: Vec<&&str> = body[loop_start + 6..]
        .iter()
        .filter(|l| l.starts_with("tl::sync"))
        .collect();
    assert!(after.is_empty(), "{src}");
}

/// An output written by one copy whose region moves a whole tile with each iteration needs no
/// barrier across the loop's back edge (no two iterations write one element); one written at
/// the same place every iteration does (the last write must win), and so does one the kernel
/// also reads.
#[test]
fn output_copies_that_move_apart_need_no_barrier() {
    let k = hip(BIAS, 0, "sm_90");
    assert!(!k.source.contains("tl::sync()"), "{}", k.source);
    let same = BIAS.replace("y.at_mut((row0, t * BN))", "y.at_mut((row0, 0))");
    let k = hip(&same, 0, "sm_90");
    assert!(k.source.contains("tl::sync()"), "{}", k.source);
    // A step smaller than the tile overlaps the previous iteration's region.
    let overlap = BIAS.replace("y.at_mut((row0, t * BN))", "y.at_mut((row0, t * 8))");
    let k = hip(&overlap, 0, "sm_90");
    assert!(k.source.contains("tl::sync()"), "{}", k.source);
    let read = BIAS.replace(
        "copy(x.at((row0, t * BN)), &mut tile);",
        "copy(x.at((row0, t * BN)), &mut tile);\n        copy(y.at((row0, t * BN)), &mut tile);",
    );
    let k = hip(&read, 0, "sm_90");
    assert!(k.source.contains("tl::sync()"), "{}", k.source);
}

#[test]
fn only_tiles_that_copies_write_and_mma_reads_are_swizzled() {
    // A loop reads `a_s` directly: it keeps the plain layout, `b_s` is still swizzled.
    let touched = GEMM.replace(
        "        gemm(&a_s, &b_s, &mut acc);",
        "        gemm(&a_s, &b_s, &mut acc);\n        for (i, j) in parallel(BM, BK) {\n            a_s[(i, j)] = a_s[(i, j)] * 2.0;\n        }",
    );
    assert_ne!(touched, GEMM);
    let nv = hip(&touched, 0, "sm_90");
    assert!(
        nv.source
            .contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, false, true>"),
        "{}",
        nv.source
    );
    assert!(
        nv.source.contains("64, 32, 128, false, true, true>(t_a"),
        "{}",
        nv.source
    );
    assert!(
        nv.source.contains("32, 64, 128, true, true, true>(t_b"),
        "{}",
        nv.source
    );
    // AMD matrix units read operands element-wise: nothing is swizzled there.
    for arch in ["gfx1100", "gfx942", "gfx1030"] {
        let k = hip(GEMM, 0, arch);
        // (The flag after the thread count is the swizzle; the last one, read-only, is set.)
        assert!(!k.source.contains(", 128, true"), "{arch}: {}", k.source);
    }
}

/// A shared tile padded past the columns its loads reach (`BN + 2`, the CUDA habit against
/// bank conflicts) is narrowed to those columns (lower/trim.rs): its copy moves `BN` columns
/// as whole vectors, and the swizzle pass lays it out as it does the unpadded tile, so both
/// print the same code. Reads past `BN`, a tile that is also stored to or copied out, and a
/// read the intervals cannot bound keep the declared width.
#[test]
fn unread_padding_of_shared_tiles_is_trimmed() {
    let padded = TRANSPOSE.replace(
        "alloc_shared::<f16, (BM, BN)>()",
        "alloc_shared::<f16>((BM, BN + 2))",
    );
    assert_ne!(padded, TRANSPOSE);
    for config in 0..5 {
        let (plain, pad) = (
            hip(TRANSPOSE, config, "sm_90"),
            hip(&padded, config, "sm_90"),
        );
        assert_eq!(plain.source, pad.source, "config {config}");
        assert_eq!(plain.shared_bytes, pad.shared_bytes, "config {config}");
    }
    let sm90 = Target::by_arch("sm_90").unwrap();
    let shared = |text: &str| launch(&kernel(text), 0, &sm90).unwrap().shared_bytes;
    assert_eq!(shared(&padded), 64 * 64 * 2);
    let kept = [
        // A read of the padding (column BN + 1 for j = BN - 1).
        padded.replace("t[(j, i)] = s[(i, j)];", "t[(j, i)] = s[(i, j + 2)];"),
        // A store into the tile, a copy out of it.
        padded.replace(
            "t[(j, i)] = s[(i, j)];",
            "t[(j, i)] = s[(i, j)];\n        s[(i, j)] = 0.0;",
        ),
        padded
            .replace(
                "copy(&t, y.at_mut((c0, r0)));",
                "copy(&t, y.at_mut((c0, r0)));\n    copy(&s, x.at_mut((r0, c0)));",
            )
            .replace("x: &Tensor<f16, (M, N)>", "x: &mut Tensor<f16, (M, N)>"),
        // An index through a `let`: no interval.
        padded.replace(
            "t[(j, i)] = s[(i, j)];",
            "let jj = j;\n        t[(j, i)] = s[(i, jj)];",
        ),
    ];
    for case in kept {
        assert_ne!(case, padded);
        assert_eq!(shared(&case), 64 * 66 * 2, "{case}");
    }
    // Reads that reach one column short of the padding: 65 columns are kept.
    let one = padded.replace("t[(j, i)] = s[(i, j)];", "t[(j, i)] = s[(i, j + 1)];");
    assert_eq!(shared(&one), 64 * 65 * 2);
}

/// A tensor the block reads in several copies into registers is read evict-last by all but the
/// last copy, which reads evict-first (NVIDIA only); tensors read once carry no hint.
#[test]
fn rows_read_again_are_kept_in_l2() {
    let src = hip(STAGED_ROWS, 0, "sm_90").source;
    let hinted = |pol: u8| {
        src.matches(&format!(
            "tl::load_chunk<4, tl::half, float, true, {pol}>(t_x + "
        ))
        .count()
    };
    // Each copy has three vector paths: the interior iterations of its loop
    // (lower/interior.rs), and the tile inside the tensor or across its edge in the rest.
    assert_eq!((hinted(1), hinted(2)), (3, 3), "{src}");
    let keep = src.find("true, 1>(t_x + ").unwrap();
    let last = src.find("true, 2>(t_x + ").unwrap();
    assert!(keep < last, "{src}");
    assert!(
        !src.contains("true, 1>(t_w") && !src.contains("true, 2>(t_w"),
        "{src}"
    );
    for arch in ["gfx1100", "gfx942"] {
        let src = hip(STAGED_ROWS, 0, arch).source;
        assert!(
            src.contains("tl::load_chunk<4, tl::half, float"),
            "{arch}: {src}"
        );
        assert!(
            !src.contains("true, 1>") && !src.contains("true, 2>"),
            "{arch}: {src}"
        );
    }
}

/// A sequential loop whose copies move by a constant step runs its interior iterations with
/// the copies' unconditional vector path and the rest with the tested paths; the bound comes
/// from the copies' regions at the first iteration (lower/interior.rs). A loop whose copy's
/// offset is computed in the loop, or that holds another sequential loop, is not split.
#[test]
fn sequential_loops_run_their_interior_iterations_untested() {
    const SRC: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r2(BM = 2, BN = 1024)])]
pub fn walk<const BM: usize, const BN: usize>(x: &Tensor<f16, (M, N)>, y: &mut Tensor<f16, (M, N)>, z: &mut Tensor<f16, (M, N)>) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(&tile, y.at_mut((row0, t * BN + 0)));
    }
    for t in serial(N.div_ceil(BN)) {
        let c = t * BN;
        copy(x.at((row0, c)), &mut tile);
        copy(&tile, z.at_mut((row0, c)));
    }
    for u in serial(2) {
        for t in serial(N.div_ceil(BN)) {
            copy(x.at((row0 + u, t * BN)), &mut tile);
            copy(&tile, z.at_mut((row0, t * BN)));
        }
    }
}
"#;
    for arch in ["sm_90", "gfx942"] {
        let src = hip(SRC, 0, arch).source;
        // The first loop and the innermost of the nest; the second is not split.
        assert_eq!(src.matches("tl::index __mid").count(), 2, "{arch}: {src}");
        assert_eq!(
            src.matches("__n = tl::chunk_aligned<8>(t_x, __g) ? tl::iterations_inside<1, 1, 2, 1024, 0, 0, 0, 1024>(__g, __n) : 0;").count(),
            2,
            "{arch}: {src}"
        );
        assert!(
            src.contains("__n = tl::chunk_aligned<8>(t_y, __g) ? tl::iterations_inside<1, 1, 2, 1024, 0, 0, 0, 1024>(__g, __n) : 0;"),
            "{arch}: {src}"
        );
        // The interior loop of the first: two copies, no test of either.
        let at = src.find("< __mid").unwrap();
        let interior = &src[at..src[at..].find("\n  }\n").unwrap() + at];
        assert!(
            !interior.contains("chunk_aligned") && !interior.contains("tile_inside"),
            "{arch}: {interior}"
        );
        assert_eq!(
            interior
                .matches("tl::load_chunk<8, tl::half, float")
                .count(),
            1,
            "{arch}: {interior}"
        );
        assert_eq!(
            interior
                .matches("tl::store_chunk<8, float, tl::half")
                .count(),
            1,
            "{arch}: {interior}"
        );
    }
}

const ELEMENTWISE: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [b(BLOCK = 1024)])]
pub fn axpy<const BLOCK: usize>(x: &Tensor<f16, (N,)>, y: &Tensor<f16, (N,)>, t: &Tensor<f16, (N, N)>, m: &Tensor<f16, (N,)>, out: &mut Tensor<f16, (N,)>, acc: &mut Tensor<f32, (N,)>) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let strided = t[(g, 0)];
            let picked = if_then_else(g > 4, m[g], 0.0);
            out[g] = x[g] + y[g] + strided + picked;
            acc[g] = acc[g] + 1.0;
        }
    }
}
"#;

/// A `parallel` loop over global tensors runs chunk-wise: unit-stride accesses move as one
/// vector per chunk (tested for alignment at run time, else lane by lane), strided ones and
/// those only some lanes perform (a select's arms) stay per lane, the tail guard is checked for
/// uniformity per chunk (at the chunk's two ends when it is monotone over the lanes) with a
/// lane-by-lane fallback, and a write-once output streams.
#[test]
fn parallel_loops_over_global_tensors_move_vectors() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let src = hip(ELEMENTWISE, 0, arch).source;
        // Chunks of 4 lanes (16 bytes of the widest vector, `acc`'s f32): 1024 / 4 chunks over
        // 128 threads, two each.
        assert!(
            src.contains("for (int __k = 0; __k < 2; ++__k) {")
                && src.contains("const unsigned __L = (__k * 128 + TL_TID) * 4;"),
            "{arch}: {src}"
        );
        // Read-only inputs take the non-coherent path; `acc`, which the kernel writes, not.
        for grouped in ["true>(&t_x[", "true>(&t_y[", "false>(&t_acc["] {
            assert!(
                src.contains(&format!("tl::vload<false, 4, {grouped}")),
                "{arch}: {grouped}: {src}"
            );
        }
        for per_lane in ["t_t[", "t_m["] {
            assert!(
                !src.contains(&format!("4, true>(&{per_lane}")),
                "{arch}: {per_lane}: {src}"
            );
        }
        // `out` is never read: streaming; `acc` is read: plain.
        assert!(
            src.contains("tl::vstore<true, false, 4>(&t_out["),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::vstore<false, false, 4>(&t_acc["),
            "{arch}: {src}"
        );
        // `g < N` changes at most once over a chunk: its first and last lanes decide.
        assert!(
            src.contains("const bool __u = ")
                && src.contains("(__b + 3)")
                && src.contains("if (__u) {")
                && !src.contains("bool __u = true;"),
            "{arch}: {src}"
        );
    }
    // Conditions that may change more than once across the lanes (or monotone ones combined
    // against each other's direction) are compared lane by lane; monotone ones in one
    // direction, combined, still at the two ends.
    for (cond, lane_by_lane) in [
        ("if g < N && g % 3 != 1 {", true),
        ("if g < N && g > 5 {", true),
        ("if g == 9 {", true),
        ("if g < N && g + 2 < N {", false),
        ("if !(g >= N) {", false),
        ("if g < N || 2 * g <= N {", false),
    ] {
        let src = hip(&ELEMENTWISE.replace("if g < N {", cond), 0, "sm_90").source;
        let loop_check = src.contains("bool __u = true;")
            && src.contains("for (int __l = 1; __l < 4; ++__l) __u = __u && ");
        let ends = src.contains("const bool __u = ");
        assert!(
            loop_check == lane_by_lane && ends != lane_by_lane,
            "{cond}: {src}"
        );
    }
    // A condition that reads memory cannot be checked up front: the loop stays element-wise.
    let data = hip(
        &ELEMENTWISE.replace("if g < N {", "if g < N && m[g] > 0.0 {"),
        0,
        "sm_90",
    )
    .source;
    assert!(!data.contains("tl::vload("), "{data}");
    assert!(
        data.contains("const unsigned __L = __r * 128 + TL_TID;"),
        "{data}"
    );
    // An extent that is not a whole number of chunks: element-wise too.
    let odd = hip(
        &ELEMENTWISE.replace("BLOCK = 1024", "BLOCK = 1020"),
        0,
        "sm_90",
    )
    .source;
    assert!(!odd.contains("tl::vload("), "{odd}");
}

/// A tail guard `c·BN + j < N` on a tile coordinate `j` is printed as a 32-bit comparison
/// with a bound that does not change across the loop (ptxas kept a 64-bit threshold per
/// unrolled element: online softmax went from 78 to 57 registers); `j < N` alone, or a bound
/// that changes per element, keeps the 64-bit form.
#[test]
fn tail_guards_on_tile_coordinates_compare_in_32_bits() {
    let masked = ROWMAX.replace(
        "        reduce_max(&t, &mut m, 1);",
        "        for (i, j) in parallel(BM, BN) {\n            t[(i, j)] = if_then_else(c * BN + j < N, t[(i, j)], -1.0e30);\n        }\n        reduce_max(&t, &mut m, 1);",
    );
    assert_ne!(masked, ROWMAX);
    let src = hip(&masked, 0, "sm_90").source;
    assert!(
        src.contains("(((int)v")
            && src.contains("< tl::clamp32(tl::sub<tl::index>(n_N, tl::mul<tl::index>(v"),
        "{src}"
    );
    for other in ["j < N", "c * BN + j < N + i"] {
        let k = masked.replace("c * BN + j < N", other);
        let src = hip(&k, 0, "sm_90").source;
        assert!(!src.contains("clamp32"), "{other}: {src}");
    }
}

/// A thread's chunks of a `(L, F)` loop reading a `(7, F)` shared tile of weights at row `t`:
/// the weights' column is the same in every chunk (printed from the thread index alone, so the
/// compiler loads it once for all of them), and the tile's vectors are provably aligned (moved
/// with no run-time test, which would keep the 7-tap loop rolled). A window read at `j + t` is
/// not grouped; a weight read one column off keeps its test.
#[test]
fn chunks_share_invariant_coordinates_and_aligned_shared_vectors() {
    const TAPS: &str = r#"
#[tile_kernel(grid = [L.div_ceil(BL)], threads = 128, configs = [l64(BL = 64, BF = 32)])]
pub fn taps<const BL: usize, const BF: usize>(x: &Tensor<f16, (L,)>, w: &Tensor<f16, (KW, F)>, o: &mut Tensor<f16, (L, F)>) {
    let l0 = block_idx(0) * BL;
    let mut x_s = alloc_shared::<f16>((BL + 8,));
    let mut w_s = alloc_shared::<f32>((8, BF));
    let mut o_f = alloc_fragment::<f32>((BL, BF));
    copy(x.at((l0,)), &mut x_s);
    copy(w.at((0, 0)), &mut w_s);
    for (j, f) in parallel(BL, BF) {
        let mut acc = 0.0f32;
        for t in serial(7) {
            acc += (x_s[j + t] as f32) * w_s[(t, f + OFF)];
        }
        o_f[(j, f)] = acc;
    }
    copy(&o_f, o.at_mut((l0, 0)));
}
"#;
    for arch in ["sm_90", "gfx942"] {
        let src = hip(&TAPS.replace("OFF", "0"), 0, arch).source;
        // 64 x 32 outputs in chunks of 8 (16 bytes of f16) over 128 threads: two a thread,
        // 1024 elements apart, so the column (extent 32) does not change between them.
        assert!(
            src.contains("const unsigned __L = (__k * 128 + TL_TID) * 8;")
                && src.contains("const tl::index __b = (tl::index)(((TL_TID * 8u) / 1) % 32);")
                && src.contains("(tl::index)((__L / 32) % 64)"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::vload<true, 8, false>(&b1_w_s[")
                && !src.contains("tl::vec_aligned<8>(&b1_w_s["),
            "{arch}: {src}"
        );
        // Column f + 1 starts chunks off a vector boundary: tested per chunk.
        let off = hip(&TAPS.replace("OFF", "1"), 0, arch).source;
        assert!(off.contains("tl::vec_aligned<8>(&b1_w_s["), "{arch}: {off}");
    }
}

/// Stores that together fill consecutive elements (unpacking a byte into two halves at `2j`
/// and `2j + 1`) gather into one 16-byte vector per chunk of 4 `j`s, after a 4-byte load of
/// the bytes; a set of stores that leaves gaps, or a buffer the loop also reads, does not.
#[test]
fn unpacking_stores_gather_into_one_vector_per_chunk() {
    const UNPACK: &str = r#"
#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn unpack(bp: &Tensor<u8, (K, NP)>, out: &mut Tensor<f16, (K, N)>) {
    let bx = block_idx(0);
    let mut p_s = alloc_shared::<u8>((32, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    copy(bp.at((0, bx * 32)), &mut p_s);
    for (kk, j) in parallel(32, 32) {
        let p = p_s[(kk, j)];
        b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
        b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
    }
    copy(&b_s, out.at_mut((0, bx * 64)));
}
"#;
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let src = hip(UNPACK, 0, arch).source;
        // The bytes sit in registers here (a chunked fragment: 8 `j`s a thread), so a chunk
        // gathers 16 halves, two adjacent vectors of the unswizzled tile. The two stores are a
        // nibble pair: the chunk's 8 bytes become its 16 halves in one helper.
        for want in [
            "tl::nibbles_to_half<-8, false, 8>(",
            "tl::vstore<false, true, 16>(&b1_b_s[(v1_kk) * 64 + tl::mul<tl::index>(((tl::index)2), (__b + 0))], ",
        ] {
            assert!(src.contains(want), "{arch}: {want}: {src}");
        }
        assert!(!src.contains("[2 * __l + 0] = "), "{arch}: {src}");
    }
    // Nibble pairs in other spellings: the high nibble first, no offset, no conversion.
    let high = UNPACK
        .replace("(((p & 15) as i32) - 8) as f16", "((p >> 4) & 15) as f16")
        .replace("((((p >> 4) & 15) as i32) - 8) as f16", "(15 & p) as f16");
    let plus = UNPACK
        .replace("(((p & 15) as i32) - 8)", "(3 + ((p & 15) as i32))")
        .replace(
            "((((p >> 4) & 15) as i32) - 8)",
            "(((p >> 4) & 15) as i32 + 3)",
        );
    for (case, want) in [(high, "<0, true, 8>"), (plus, "<3, false, 8>")] {
        assert_ne!(case, UNPACK);
        let src = hip(&case, 0, "sm_90").source;
        assert!(
            src.contains(&format!("tl::nibbles_to_half{want}(")),
            "{want}: {src}"
        );
    }
    // Not nibble pairs: a byte subtraction (it wraps), offsets that differ, the same nibble
    // twice, a mask of other bits; each still gathers its stores into one vector.
    let wraps = UNPACK
        .replace("(((p & 15) as i32) - 8)", "((p & 15) - 8)")
        .replace("((((p >> 4) & 15) as i32) - 8)", "(((p >> 4) & 15) - 8)");
    let offsets = UNPACK.replace(
        "((((p >> 4) & 15) as i32) - 8)",
        "((((p >> 4) & 15) as i32) - 7)",
    );
    let twice = UNPACK.replace("((((p >> 4) & 15) as i32) - 8)", "(((p & 15) as i32) - 8)");
    let mask = UNPACK.replace(
        "((((p >> 4) & 15) as i32) - 8)",
        "((((p >> 4) & 7) as i32) - 8)",
    );
    for case in [wraps, offsets, twice, mask] {
        assert_ne!(case, UNPACK);
        let src = hip(&case, 0, "sm_90").source;
        assert!(!src.contains("nibbles_to_half"), "{src}");
        assert!(src.contains("[2 * __l + 1] = "), "{src}");
    }
    // Only the even elements: gaps, so each store stays element by element.
    let gaps = UNPACK.replace(
        "        b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;\n",
        "",
    );
    // The buffer read in the same loop: its elements must be in place statement by statement.
    let read = UNPACK.replace(
        "        b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;",
        "        b_s[(kk, 2 * j + 1)] = b_s[(kk, 2 * j)];",
    );
    for case in [gaps, read] {
        assert_ne!(case, UNPACK);
        let src = hip(&case, 0, "sm_90").source;
        assert!(!src.contains("* __l + "), "{src}");
    }

    // A stride no vector can hold (an out-of-bounds store, reported at run time by the CPU
    // backend) leaves the stores element by element; the candidate search must not size
    // anything by it (a typo of `2` once made it allocate 64 GiB, issue 38).
    for (from, stride) in [
        ("b_s[(kk, 2 * j)]", "4294967295"),
        ("b_s[(kk, 2 * j + 1)]", "2147483647"),
        ("2 * j", "9223372036854775807"),
    ] {
        let huge = UNPACK.replace(from, &from.replace('2', stride));
        assert_ne!(huge, UNPACK);
        for arch in ["sm_90", "gfx1100", "gfx942"] {
            let src = hip(&huge, 0, arch).source;
            assert!(!src.contains("nibbles_to_half"), "{arch}: {src}");
            assert!(
                !src.contains("tl::vstore<false, true, 16>(&b1_b_s["),
                "{arch}: {src}"
            );
            assert!(src.contains(stride), "{arch}: {src}");
        }
    }
}
