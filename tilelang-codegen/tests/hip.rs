//! HIP C++ generation: deterministic, pinned by snapshots for one NVIDIA, one RDNA and one CDNA
//! target, and the decisions the emitter makes (storage, layouts, barriers) on small kernels.
//!
//! After an intended change to the generated code, regenerate the snapshots with
//! `UPDATE_SNAPSHOTS=1 cargo test -p tilelang-codegen --test hip` and review the diff.

use std::path::PathBuf;
use tilelang_codegen::emit_hip::{emit, HipKernel};
use tilelang_codegen::ir::Kernel;
use tilelang_codegen::target::Target;

fn kernel(src: &str) -> Kernel {
    let file = syn::parse_file(src).expect("test source parses");
    let syn::Item::Fn(mut f) = file.items.into_iter().next().unwrap() else { panic!("a function") };
    let i = f.attrs.iter().position(|a| a.path().is_ident("tile_kernel")).unwrap();
    let attr = f.attrs.remove(i);
    let syn::Meta::List(list) = attr.meta else { panic!("attribute list") };
    tilelang_codegen::compile(list.tokens, quote::ToTokens::into_token_stream(f)).unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| d.text()).collect::<Vec<_>>()))
}

fn hip(src: &str, config: usize, arch: &str) -> HipKernel {
    emit(&kernel(src), config, &Target::by_arch(arch).unwrap(), None).unwrap()
}

const GEMM: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = 128, configs = [t64(BM = 64, BN = 64, BK = 32)])]
pub fn gemm<const BM: usize, const BN: usize, const BK: usize>(a: &Tensor<f16, (M, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in pipelined(K.div_ceil(BK), 2) {
        copy(a.at((by * BM, k * BK)), &mut a_s);
        copy(b.at((k * BK, bx * BN)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    for (i, j) in parallel(BM, BN) {
        acc[(i, j)] = max(acc[(i, j)], 0.0);
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
"#;

const ROWMAX: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r4(BM = 4, BN = 256)])]
pub fn rowmax<const BM: usize, const BN: usize>(a: &Tensor<f32, (M, N)>, out: &mut Tensor<f32, (M,)>) {
    let row0 = block_idx(0) * BM;
    let mut t = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut best = alloc_fragment::<f32, (BM,)>();
    fill(&mut best, -1.0e30);
    for c in serial(N.div_ceil(BN)) {
        copy(a.at((row0, c * BN)), &mut t);
        reduce_max(&t, &mut m, 1);
        for i in parallel(BM) {
            best[i] = max(best[i], m[i]);
        }
    }
    copy(&best, out.at_mut((row0,)));
}
"#;

fn snapshot(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1)", path.display()));
    if want != text {
        let line = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(want.lines().count().min(text.lines().count()));
        panic!("{name} differs from its snapshot at line {}:\n--- snapshot: {:?}\n+++ now:      {:?}\n(UPDATE_SNAPSHOTS=1 to accept)", line + 1, want.lines().nth(line), text.lines().nth(line));
    }
}

#[test]
fn snapshots_for_nvidia_rdna_and_cdna() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        snapshot(&format!("gemm.{arch}.cu"), &hip(GEMM, 0, arch).source);
        snapshot(&format!("rowmax.{arch}.cu"), &hip(ROWMAX, 0, arch).source);
    }
}

#[test]
fn emission_is_deterministic() {
    for src in [GEMM, ROWMAX] {
        for arch in ["sm_90", "gfx1100", "gfx90a", "gfx1030"] {
            assert_eq!(hip(src, 0, arch), hip(src, 0, arch));
        }
    }
}

#[test]
fn gemm_uses_tensor_cores_on_nvidia_and_fma_elsewhere_for_now() {
    let nv = hip(GEMM, 0, "sm_90");
    assert!(nv.source.contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2>"), "{}", nv.source);
    // The ReLU epilogue iterates in the accumulator's mma layout, owner-only: no shared memory
    // beyond the two operand tiles.
    assert!(nv.source.contains("tl::mma_coord<64, 64, 2, 2>"));
    assert_eq!(nv.shared_bytes, 64 * 32 * 2 + 32 * 64 * 2);
    let amd = hip(GEMM, 0, "gfx1030");
    assert!(amd.source.contains("tl::gemm_fma<"), "{}", amd.source);
}

#[test]
fn barriers_separate_writers_from_readers_and_nothing_else() {
    let src = hip(GEMM, 0, "sm_90").source;
    let body: Vec<&str> = src.lines().map(str::trim).filter(|l| !l.starts_with("#line")).collect();
    // In the K loop: a barrier before the copies (the previous iteration's gemm read the tiles)
    // and one between the copies and the gemm; none between the two copies.
    let loop_start = body.iter().position(|l| l.starts_with("for (tl::index")).unwrap();
    let seq: Vec<&str> = body[loop_start + 1..loop_start + 6].iter().map(|l| if l.starts_with("tl::sync") { "sync" } else if l.contains("copy_g2s") { "copy" } else if l.contains("gemm_mma") { "gemm" } else { "?" }).collect();
    assert_eq!(seq, ["sync", "copy", "copy", "sync", "gemm"], "{src}");
    // The epilogue and the store touch only registers: no barrier after the loop.
    let after: Vec<&&str> = body[loop_start + 6..].iter().filter(|l| l.starts_with("tl::sync")).collect();
    assert!(after.is_empty(), "{src}");
}

#[test]
fn reductions_use_whole_waves_of_the_target() {
    // 4 rows over 128 threads: 32 lanes per row on a wave-32 target, the same on wave 64
    // (limited by 128 / 4), and the reduced buffers live in shared memory.
    for (arch, g) in [("sm_90", 32), ("gfx1100", 32), ("gfx942", 32)] {
        let src = hip(ROWMAX, 0, arch).source;
        assert!(src.contains(&format!("tl::reduce<tl::Max, float, 4, 256, 1, 128, {g}>")), "{arch}: {src}");
    }
}
